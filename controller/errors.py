"""The one root of every error the project raises on purpose.

``except PokerTableError`` catches any refusal of ours (a bad card, a broken config, a request the
rules do not allow, a corrupt frame) and nothing else; each subclass also keeps the builtin base
it always had (``ValueError`` for bad input, ``RuntimeError`` for a failing peer), so callers that
catch those still work.
"""

from __future__ import annotations


class PokerTableError(Exception):
    """Root of the project's own exceptions."""


class MissingExtra(PokerTableError, ImportError):
    """A command needs a library of an extra the installation left out (``pip install '...[room]'``)."""
