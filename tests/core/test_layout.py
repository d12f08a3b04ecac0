"""The house's boundaries hold: import contracts (pyproject's [tool.importlinter]) and one
exception root."""

from __future__ import annotations

import importlib
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.errors import PokerTableError
from tests.conftest import REPO


def _run_tool(name: str, *args: str) -> str:
    """Run a development tool of the venv (the [dev] extra) in the checkout; its output, once it passed."""
    exe = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if exe is None:
        pytest.fail(f"{name} is not installed (it is in the [dev] extra, which [test] pulls in)")
    proc = subprocess.run([exe, *args], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return proc.stdout


def test_import_contracts_are_kept() -> None:
    assert "0 broken" in _run_tool("lint-imports", "--no-cache")


def _product_modules() -> list[str]:
    names = []
    for pkg in ("controller", "hw", "vision", "firmware_bridge"):
        mod = importlib.import_module(pkg)
        for info in pkgutil.walk_packages(mod.__path__, f"{pkg}."):
            if ".firmware." not in info.name + ".":  # MicroPython code runs on the board, not here
                names.append(info.name)
    return names


def test_every_error_class_of_the_product_derives_from_the_one_root() -> None:
    strays = []
    for name in _product_modules():
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if (isinstance(obj, type) and issubclass(obj, Exception) and obj.__module__ == name
                    and not issubclass(obj, PokerTableError) and not attr.startswith("_")):
                strays.append(f"{name}.{attr}")
    assert not strays, f"exceptions outside PokerTableError: {strays}"


def test_sources_are_plug_ins_the_daemon_does_not_name() -> None:
    from controller.sources import plugins

    assert list(plugins()) == ["serial", "gpio", "nfc", "camera"]
    daemon = (REPO / "controller" / "app" / "daemon.py").read_text()
    for word in ("BridgeLink", "TablePanel", "NfcReader", "OpenCVCamera", "CameraFallback", "_start_bridge"):
        assert word not in daemon, word


def test_every_product_package_type_checks() -> None:
    """mypy over every product package: controller, firmware_bridge, vision and hw (the scope is
    ``[tool.mypy] files`` in pyproject.toml; the MicroPython firmware is excluded, it is not CPython)."""
    _run_tool("mypy", "--no-incremental")
