"""Deck registry: which RFID tag is which card of which deck.

The hardware bridge reads tag UIDs; only this registry turns a UID into a card.  A
UID it does not know is reported as such (``TagIdentity.card is None``) and never
guessed.  A UID enrolled to another deck resolves to that deck's card, so the
engine sees a foreign back and voids the hand (RRoP s3 Irregularities 3).

Stored as one JSON file (atomically replaced) so a cardroom can keep several
RFID decks enrolled and switch the deck in play between sessions.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from controller.errors import PokerTableError
from controller.rules.cards import Card, CardError


class RegistryError(PokerTableError, ValueError):
    """Raised for an invalid enrollment or a corrupt registry file."""


def normalise_uid(uid: str | bytes) -> str:
    """Tag UIDs are compared as upper-case hex without separators."""
    if isinstance(uid, bytes | bytearray):
        uid = uid.hex()
    text = "".join(ch for ch in str(uid) if ch not in ":- ").upper()
    try:
        bytes.fromhex(text)
    except ValueError as exc:
        raise RegistryError(f"tag uid {uid!r} is not hex") from exc
    if not text:
        raise RegistryError("empty tag uid")
    return text


@dataclass(frozen=True, slots=True)
class TagIdentity:
    """What a tag UID means: a card (with its deck) or unknown."""

    uid: str
    card: Card | None

    @property
    def known(self) -> bool:
        return self.card is not None


@dataclass(slots=True)
class Deck:
    """One enrolled RFID deck: its id (the back) and its tags."""

    id: str
    back: str = ""
    tags: dict[str, Card] = field(default_factory=dict)

    def add(self, uid: str | bytes, card: Card) -> None:
        key = normalise_uid(uid)
        if key in self.tags:
            raise RegistryError(f"tag {key} is already enrolled as {self.tags[key].face} in deck {self.id}")
        if card in self.tags.values():
            raise RegistryError(f"{card.face} already has a tag in deck {self.id}")
        self.tags[key] = Card(card.rank, card.suit, self.id)


class DeckRegistry:
    """All enrolled decks, indexed by tag UID."""

    def __init__(self, decks: list[Deck] | None = None) -> None:
        self._decks: dict[str, Deck] = {}
        self._by_uid: dict[str, Card] = {}
        for deck in decks or []:
            self.add_deck(deck)

    @property
    def decks(self) -> dict[str, Deck]:
        return dict(self._decks)

    def add_deck(self, deck: Deck, replace: bool = False) -> None:
        """Register a deck; a UID may belong to one deck only."""
        if deck.id in self._decks and not replace:
            raise RegistryError(f"deck {deck.id} is already enrolled")
        others = {u: c for u, c in self._by_uid.items() if c.deck != deck.id}
        clash = sorted(set(deck.tags) & set(others))
        if clash:
            raise RegistryError(f"tag {clash[0]} already belongs to deck {others[clash[0]].deck}")
        self._decks[deck.id] = deck
        self._by_uid = others | dict(deck.tags)

    def lookup(self, uid: str | bytes) -> TagIdentity:
        key = normalise_uid(uid)
        return TagIdentity(key, self._by_uid.get(key))

    def to_json(self) -> dict:
        return {
            "version": 1,
            "decks": [
                {"id": d.id, "back": d.back, "tags": {u: c.face for u, c in sorted(d.tags.items())}}
                for d in self._decks.values()
            ],
        }

    @classmethod
    def from_json(cls, data: dict) -> DeckRegistry:
        if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("decks"), list):
            raise RegistryError("deck registry: expected {'version': 1, 'decks': [...]}")
        decks = []
        for i, raw in enumerate(data["decks"]):
            try:
                deck = Deck(str(raw["id"]), str(raw.get("back", "")))
                for uid, face in raw["tags"].items():
                    deck.add(uid, Card.parse(face, deck.id))
            except (KeyError, TypeError, AttributeError, CardError) as exc:
                raise RegistryError(f"deck registry: decks[{i}] is malformed: {exc}") from exc
            decks.append(deck)
        return cls(decks)

    @classmethod
    def load(cls, path: str | os.PathLike) -> DeckRegistry:
        p = Path(path)
        if not p.exists():
            return cls()
        try:
            data = json.loads(p.read_text())
        except json.JSONDecodeError as exc:
            raise RegistryError(f"{p}: not valid JSON: {exc}") from exc
        return cls.from_json(data)

    def save(self, path: str | os.PathLike) -> None:
        """Write atomically (temp file, fsync, rename) so a power cut never leaves half a file."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=p.name, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(self.to_json(), fh, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
