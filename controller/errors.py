"""The one root of every error the project raises on purpose.

``except PokerTableError`` catches any refusal of ours (a bad card, a broken config, a request the
rules do not allow, a corrupt frame) and nothing else; each subclass also keeps the builtin base
it always had (``ValueError`` for bad input, ``RuntimeError`` for a failing peer), so callers that
catch those still work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


class PokerTableError(Exception):
    """Root of the project's own exceptions."""


class MissingExtra(PokerTableError, ImportError):
    """A command needs a library of an extra the installation left out (``pip install '...[room]'``)."""


def reject_unknown_keys(
    data: Iterable[str], known: Iterable[str], error: Callable[[str], Exception], where: str, *, hint: str = ""
) -> None:
    """Raise ``error("<where>: unknown keys [...]<hint>")`` if ``data`` has a key not in ``known``.

    A mapping read from a file or the wire (a config section, a hand's setup, its stakes, a rule
    override) names only what its reader knows: a misspelt key is an error, never silently dropped.
    """
    extra = set(data) - set(known)
    if extra:
        raise error(f"{where}: unknown keys {sorted(extra)}{hint}")
