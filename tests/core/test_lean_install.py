"""A table's Pi installs the daemon and its devices only: the room, the benchmarks, PokerKit and the
development tools are extras (pyproject.toml).  These tests install the project WITHOUT extras into
a venv of its own (a real ``pip install``, dependencies resolved; pip's cache makes it quick, and the
venv is kept in ``.venv/lean`` until pyproject.toml's ``[project]`` changes) and look at what the daemon imports."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO

LEAN = REPO / ".venv" / "lean"
EXTRAS_ONLY = ("nats", "psycopg", "pokerkit", "eval7", "treys", "phevaluator", "playwright", "xdist")


def _lean_python() -> Path:
    """The no-extras venv's interpreter, (re)made when the project's metadata changed."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]  # what pip installs
    stamp = hashlib.sha256(json.dumps(project, sort_keys=True).encode()).hexdigest()
    py = LEAN / "bin" / "python"
    if py.exists() and (LEAN / "stamp").is_file() and (LEAN / "stamp").read_text() == stamp:
        return py
    shutil.rmtree(LEAN, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(LEAN)], check=True, timeout=120)
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(REPO)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (LEAN / "stamp").write_text(stamp)
    return py


@pytest.fixture(scope="module")
def lean_python() -> Path:
    return _lean_python()


PROBE = textwrap.dedent("""
    import importlib.util, json, sys
    absent = [m for m in {extras!r} if importlib.util.find_spec(m) is None]
    from controller.app.config import validate_config
    import controller.app.daemon  # noqa: F401
    cfg = validate_config({{"table": {{"id": "t1"}}, "mqtt": {{"url": "mqtt://127.0.0.1:1883"}}}})
    # (cryptography is the daemon's own since the sealed broadcast: controller/mqtt/sealed.py)
    watched = ("cv2", "serial", "gpiozero", "nfc", "vision", "nats", "psycopg", "pokerkit",
               "controller.floor", "controller.bench", "controller.demo", "controller.sim")
    print(json.dumps({{"absent": absent, "loaded": [m for m in watched if m in sys.modules],
                      "sources": cfg.sources_named(), "room": cfg.room is not None}}))
""")


def test_the_daemon_on_a_lean_install_loads_no_camera_room_or_tool_library(lean_python: Path) -> None:
    proc = subprocess.run([str(lean_python), "-c", PROBE.format(extras=EXTRAS_ONLY)], cwd=LEAN,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout)
    assert seen["absent"] == list(EXTRAS_ONLY), "the lean venv has an extra's library installed"
    assert seen == {"absent": list(EXTRAS_ONLY), "loaded": [], "sources": [], "room": False}


def test_export_phh_without_its_extra_names_the_extra(lean_python: Path, tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[table]\nid = "t1"\n')
    tablectl = lean_python.parent / "tablectl"
    proc = subprocess.run([str(tablectl), "export", "--phh", "--config", str(config), "-"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "'phh' extra" in proc.stderr and "poker-table-controller[phh]" in proc.stderr, proc.stderr
