"""The fusion as the bridge's tests build it: one deck ("A") whose tags are given face -> uid."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from controller.rules.cards import Card
from controller.rules.decks import Deck, DeckRegistry
from firmware_bridge.fusion import Fusion


def deck_of(cards: Mapping[str, str]) -> Deck:
    """Deck "A" with the tag ``uid`` on each card ``face`` of ``cards``."""
    deck = Deck("A")
    for face, uid in cards.items():
        deck.add(uid, Card.parse(face))
    return deck


def fusion_of(
    cards: Mapping[str, str], clock: Callable[[], float] = lambda: 100.0, board_window: float = 1.0
) -> Fusion:
    """A :class:`Fusion` over :func:`deck_of` ``cards`` (at a clock stopped at 100 s unless given)."""
    return Fusion(DeckRegistry([deck_of(cards)]), board_window=board_window, clock=clock)
