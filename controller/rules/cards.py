"""Playing cards and deck identity.

A physical card is a face (rank and suit, or the joker) *and* a back: the deck it
belongs to.  Two ``Ah`` from different decks are different cards; one from a deck
that is not in play is a foreign card and voids the hand (RRoP s3 Irregularities 3).
Text form follows the conformance format: ``Ah``, ``Td``, ``joker``, ``Ah@B``.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.errors import PokerTableError

RANKS = "23456789TJQKA"
SUITS = "cdhs"  # clubs < diamonds < hearts < spades, the order used for bring-ins and odd chips
JOKER = "joker"
DEFAULT_DECK = "A"


class CardError(PokerTableError, ValueError):
    """Raised for text that is not a card."""


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One physical card: face plus the deck (back) it comes from.

    ``rank`` and ``suit`` are ``None`` for the joker.
    """

    rank: str | None
    suit: str | None
    deck: str = DEFAULT_DECK

    @classmethod
    def parse(cls, text: str, default_deck: str = DEFAULT_DECK) -> Card:
        """Parse ``Ah``, ``joker``, ``Ah@B`` (deck ``B``)."""
        if not isinstance(text, str):
            raise CardError(f"not a card: {text!r}")
        face, _, deck = text.strip().partition("@")
        deck = deck or default_deck
        if face.lower() == JOKER:
            return cls(None, None, deck)
        if len(face) != 2 or face[0].upper() not in RANKS or face[1].lower() not in SUITS:
            raise CardError(f"not a card: {text!r} (expected rank {RANKS} and suit {SUITS}, e.g. 'Ah')")
        return cls(face[0].upper(), face[1].lower(), deck)

    @property
    def is_joker(self) -> bool:
        return self.rank is None

    @property
    def face(self) -> str:
        """The face without the deck: ``Ah`` or ``joker``."""
        return JOKER if self.rank is None else f"{self.rank}{self.suit}"

    @property
    def high(self) -> int:
        """Rank value with the ace high: 2..14 (joker 15)."""
        return 15 if self.rank is None else RANKS.index(self.rank) + 2

    @property
    def low(self) -> int:
        """Rank value with the ace low: A=1, 2..13 (joker 0)."""
        if self.rank is None:
            return 0
        return 1 if self.rank == "A" else RANKS.index(self.rank) + 2

    @property
    def suit_order(self) -> int:
        """Bridge order of suits, clubs lowest: used to break ties between equal ranks."""
        return -1 if self.suit is None else SUITS.index(self.suit)

    def label(self, deck_in_play: str = DEFAULT_DECK) -> str:
        """Text form, with ``@deck`` only when it differs from the deck in play."""
        return self.face if self.deck == deck_in_play else f"{self.face}@{self.deck}"

    def __str__(self) -> str:
        return self.label()


def parse_cards(texts, default_deck: str = DEFAULT_DECK) -> list[Card]:
    """Parse a list of card texts (or one space-separated string)."""
    if isinstance(texts, str):
        texts = texts.split()
    return [Card.parse(t, default_deck) for t in texts]


def standard_deck(deck: str = DEFAULT_DECK, jokers: int = 0) -> list[Card]:
    """The 52 cards of one deck in a fixed order (2c 2d 2h 2s 3c ... As), then jokers."""
    cards = [Card(r, s, deck) for r in RANKS for s in SUITS]
    cards += [Card(None, None, deck)] * jokers
    return cards
