"""Run model scenarios under real MicroPython: the official WebAssembly port, under Node.

``scripts/bootstrap`` installs the npm package ``@micropython/micropython-webassembly-pyscript``
into ``.venv/micropython``; ``MICROPYTHON_WASM`` may point at another ``micropython.mjs``.
The firmware files and the model are copied into the port's filesystem, and
:func:`firmware_bridge.sim.scenarios.run` runs there exactly as it does under CPython.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "@micropython/micropython-webassembly-pyscript"
HEAP = 192 * 1024 * 1024  # the model shares the heap with the firmware; the RP2040's is ~190 KB


def wasm_module() -> Path | None:
    env = os.environ.get("MICROPYTHON_WASM")
    candidates = [Path(env)] if env else []
    candidates.append(ROOT / ".venv" / "micropython" / "node_modules" / PACKAGE / "micropython.mjs")
    return next((c for c in candidates if c.is_file()), None)


def available() -> bool:
    return shutil.which("node") is not None and wasm_module() is not None


def run_scenario(name: str, timeout: float = 600, **params: Any) -> dict[str, Any]:
    """``scenarios.run(name, **params)`` under MicroPython; returns its result dict."""
    module = wasm_module()
    if module is None or shutil.which("node") is None:
        raise RuntimeError(f"MicroPython WebAssembly port not installed (npm {PACKAGE}); run scripts/bootstrap")
    here = Path(__file__).resolve().parent
    fw = here.parent / "firmware"
    trees = [
        f"/lib/firmware_bridge/__init__.py={here / 'empty.py'}",
        f"/lib/firmware_bridge/sim/__init__.py={here / 'empty.py'}",
    ]
    for f in ("rc522.py", "board.py", "scenarios.py"):
        trees.append(f"/lib/firmware_bridge/sim/{f}={here / f}")
    for f in ("main.py", "scan_loop.py", "mfrc522.py", "bridge_proto.py"):
        trees.append(f"/fw/{f}={fw / f}")
    script = (
        "import sys, json\nsys.path.append('/lib')\nsys.path.append('/fw')\n"
        "from firmware_bridge.sim import scenarios\n"
        f"r = scenarios.run({name!r}, **json.loads({json.dumps(json.dumps(params))}))\n"
        "print('RESULT ' + json.dumps(r))\n"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as tmp:
        tmp.write(script)
    try:
        proc = subprocess.run(
            ["node", str(here / "mpy_run.mjs"), str(module), str(HEAP), tmp.name, *trees],
            capture_output=True, text=True, timeout=timeout,
        )
    finally:
        os.unlink(tmp.name)
    if proc.returncode != 0:
        raise RuntimeError(f"MicroPython run failed: {proc.stderr[-2000:]}")
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])
