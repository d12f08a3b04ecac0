"""The README stays true: its commands, its rulings table."""

from __future__ import annotations

import re
import subprocess
import sys

from controller.rules import catalog as rulings_catalog
from tests.conftest import REPO


def test_readme_rulings_table_is_current() -> None:
    text = (REPO / "README.md").read_text()
    block = re.search(r"<!-- rulings:start.*?-->\n(.*?)\n<!-- rulings:end -->", text, re.S)
    assert block, "README lost its rulings block"
    assert block.group(1).strip() == rulings_catalog.markdown_table().strip()


def test_ci_runs_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    commands = re.findall(r"```sh\n(.*?)\n```", readme, re.S)
    test_cmd = next(c for c in commands if "pytest" in c)
    assert test_cmd.strip() in ci
    assert any("tablectl demo" in c for c in commands)


def test_ruff_clean() -> None:
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", str(REPO)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_controller_imports_no_hardware_library() -> None:
    """The design card: ``controller/`` holds the core and never imports a hardware library."""
    code = (
        "import importlib, pkgutil, sys, controller\n"
        "for m in pkgutil.iter_modules(controller.__path__):\n"
        "    importlib.import_module('controller.' + m.name)\n"
        "bad = [n for n in ('serial', 'gpiozero', 'nfc', 'cv2', 'playwright') if n in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"controller imported {proc.stdout.strip()}"
