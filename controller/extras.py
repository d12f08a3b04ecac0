"""The optional parts of the installation, by extra (``pyproject.toml``'s optional dependencies).

A table's Pi installs the daemon and its devices only; the room's server (``[room]``), PokerKit's
hand histories (``[phh]``), the benchmarks (``[bench]``) and the development tools (``[dev]``) are
extras.  Code that needs one imports its library late, through :func:`require`, so a missing extra
is a clear error naming the extra and the command, not an ``ImportError`` from deep inside.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from controller.errors import MissingExtra

#: The distribution, as ``pip install`` spells it.
DIST = "poker-table-controller"


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module`` (a library of ``extra``) for ``what`` (the command), or raise :class:`MissingExtra`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(f"{what} needs {module!r}, which comes with the {extra!r} extra: "
                           f"pip install '{DIST}[{extra}]' (or '.[{extra}]' in a checkout)") from exc
