"""Issue 26, the 200-hand fault run (hand 46): a corruption burst during the scoop of hand 45 held
its burn card's move to the muck until hand 46 had begun; the table mucked it in hand 46, and when
the same card was dealt to a seat later in that hand it read as a second copy: a false
``duplicate_card`` void.  A card of the last hand reaching the muck before this hand placed it is
no card of this hand."""

from __future__ import annotations

from controller.geometry import Zone
from controller.rules.cards import Card
from controller.rules.events import Burn, Deal, Muck
from firmware_bridge.zones import ZoneChange
from tests.bridge.fusion_util import fusion_of

CARDS = {"Ad": "01", "3s": "02"}


def _to(face: str, zone: Zone) -> ZoneChange:
    return ZoneChange(CARDS[face], zone, True, 0, 100.0)


def test_the_last_hands_card_reaching_the_muck_late_is_not_mucked_in_this_hand() -> None:
    f = fusion_of(CARDS)
    ad = Card.parse("Ad")
    assert f.feed(_to("Ad", Zone("burn"))) == [Burn(ad, source="rfid")]  # hand 45's burn
    f.new_hand()
    assert f.feed(_to("Ad", Zone("muck"))) == []  # its scoop, read late: nothing in hand 46
    assert f.late_mucks == 1
    assert f.feed(_to("Ad", Zone("seat", 4))) == [Deal(4, ad, source="rfid")]  # dealt in hand 46
    assert f.feed(_to("Ad", Zone("muck"))) == [Muck(ad, source="rfid")]  # and folded: mucked
    # A card the last hand never had still goes to the muck as ever.
    assert f.feed(_to("3s", Zone("muck"))) == [Muck(Card.parse("3s"), source="rfid")]
