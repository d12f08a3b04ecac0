"""Rulings: what the engine decides, in words a dealer and a floor person can use.

A ruling is a ``misdeal``, a ``void`` or an ``irregularity``; it carries a reason
code and (irregularities) a remedy code from the conformance contract, the rule
citations for the active profile, a one-line message and the remedy as steps.
The words and citations live in ``controller/rules/data/rulings.toml`` (see
:mod:`controller.rules.catalog`); this module only assembles them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from controller.rules import catalog as catalog

MISDEAL = "misdeal"
VOID = "void"
IRREGULARITY = "irregularity"


@dataclass(frozen=True, slots=True)
class Ruling:
    ruling: str
    reason: str
    remedy: str | None
    citations: tuple[str, ...]
    message: str
    steps: tuple[str, ...] = ()
    seat: int | None = None
    card: str | None = None
    context: dict[str, Any] = field(default_factory=dict)

    @property
    def ends_hand(self) -> bool:
        return self.ruling in (MISDEAL, VOID)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["citations"] = list(self.citations)
        out["steps"] = list(self.steps)
        return out


def make_ruling(
    kind: str,
    reason: str,
    remedy: str | None,
    *,
    profile: str,
    game: str,
    seat: int | None = None,
    card: str | None = None,
    **context: Any,
) -> Ruling:
    """Build a ruling with its citations and words for ``profile``."""
    ctx: dict[str, Any] = {k: v for k, v in context.items() if v is not None}
    if seat is not None:
        ctx.setdefault("seat", seat)
    if card is not None:
        ctx.setdefault("card", card)
    ctx.setdefault("game", game)
    remedy_words: str | None
    if kind != IRREGULARITY:
        # A misdeal is remedied by a redeal (TDA 33-C: an exact replay); a void returns the chips.
        remedy_words = "redeal" if kind == MISDEAL else "void_hand"
    else:
        remedy_words = remedy
    return Ruling(
        ruling=kind,
        reason=reason,
        remedy=remedy if kind == IRREGULARITY else None,
        citations=catalog.citations(reason, remedy_words, profile, game),
        message=catalog.message(reason, **ctx),
        steps=tuple(catalog.remedy_steps(remedy_words, **ctx)) if remedy_words else (),
        seat=seat,
        card=card,
        context=ctx,
    )


def kind_of(reason: str) -> str:
    return catalog.ruling_kind(reason)
