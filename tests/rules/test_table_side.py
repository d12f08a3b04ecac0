"""Issue 22, the table side, through the service (journal-first, replayable): sitting out and in, the
draw for the button card by card, a mixed game's rotation, and RRoP s4 10's "looked".

Each test quotes the rule it checks.
"""

from __future__ import annotations

import pytest

from controller.journal import Journal
from controller.rules.cards import Card
from controller.rules.events import (
    Act,
    Deal,
    EndHand,
    Looked,
    NewHand,
    SeatPlayer,
    SetButton,
    SetLevel,
    SitIn,
    SitOut,
    StartDraw,
    UnseatPlayer,
    event_from_dict,
)
from controller.rules.rotations import ROTATIONS, RotationError, rotation_event, rotation_from_mapping
from controller.rules.table import Table
from controller.service import Rejected, TableService

DECK = [f"{r}{s}" for s in "shdc" for r in "AKQJT98765432"]


def _service(tmp_path=None, **table) -> TableService:
    journal = Journal(tmp_path / "journal.sqlite") if tmp_path is not None else None
    return TableService(Table(size=6, **table), journal=journal)


def _replayed(svc: TableService, **table) -> TableService:
    again = TableService(Table(size=6, **table))
    again.replay(svc.journal.entries())
    return again


def _deal_round(svc: TableService) -> None:
    """Every starting card of the hand, to the seat the engine expects."""
    cards = iter(DECK)
    while svc.engine is not None and svc.engine.next_seat is not None and svc.engine.phase.value == "deal":
        svc.submit(Deal(svc.engine.next_seat, Card.parse(next(cards))))


# ---------------------------------------------------------------------- sitting out and in


def test_sit_out_and_back_in_from_the_console_owes_the_missed_blinds(tmp_path) -> None:
    """RRoP s4 9: "A player who misses any or all blinds can resume play by either posting all the
    blinds missed or waiting for the big blind"; sitting out is between hands only."""
    svc = _service(tmp_path)
    for s in range(1, 6):
        svc.submit(SeatPlayer(s, f"p{s}"))
    svc.submit(SetButton(5))
    svc.submit(NewHand())
    with pytest.raises(Rejected, match="between hands"):
        svc.submit(SitOut(3))
    svc.submit(EndHand())
    out = svc.submit(SitOut(3))
    assert out[0].payload == {"change": "sit_out", "seat": 3}
    for _ in range(2):
        svc.submit(NewHand())
        assert 3 not in svc.engine.setup.seats
        svc.submit(EndHand())
    assert sorted(svc.table.players[3].missed) == ["big", "small"]
    with pytest.raises(Rejected, match="not sitting out"):
        svc.submit(SitIn(4))
    svc.submit(SitIn(3, post=True))
    svc.submit(NewHand())
    assert 3 in svc.engine.setup.seats and svc.table.posts == {3: ["small", "big"]}
    again = _replayed(svc)
    assert again.table.players[3] == svc.table.players[3] and again.table.posts == svc.table.posts


# ---------------------------------------------------------------------- RRoP s4 10
# RRoP s4 Rules for Using Blinds 10: "If a player who owes a blind (as a result of a missed blind) is
# dealt in without posting, the hand is dead if the player looks at it before putting up the required
# chips, and has not yet acted. If the player acts on the hand and plays it, putting chips into the
# pot before the error is discovered, the hand is live, and the player is required to post on the
# next deal."

def _owing_hand(tmp_path) -> TableService:
    """Seat 3 missed both blinds, came back posting, and is dealt in on that post (button 4)."""
    svc = _service(tmp_path)
    for s in range(1, 6):
        svc.submit(SeatPlayer(s, f"p{s}"))
    svc.submit(SetButton(5))
    svc.submit(NewHand())
    svc.submit(EndHand())
    svc.submit(SitOut(3))
    for _ in range(2):
        svc.submit(NewHand())
        svc.submit(EndHand())
    svc.submit(SitIn(3, post=True))
    svc.submit(NewHand())
    assert svc.table.owing == {3: ["small", "big"]}
    _deal_round(svc)
    return svc


def test_owing_player_who_looks_before_acting_has_a_dead_hand(tmp_path) -> None:
    """RRoP s4 Rules for Using Blinds 10 (quoted above), its first sentence: looked before acting, dead."""
    svc = _owing_hand(tmp_path)
    with pytest.raises(Rejected, match="no irregularity"):
        svc.submit(Looked(2))  # seat 2 owes nothing
    assert svc.engine.to_act == 2
    out = svc.submit(Looked(3))
    alert = next(o.payload for o in out if o.kind == "alert")
    assert (alert["reason"], alert["remedy"]) == ("owed_blind_looked", "dead_hand")
    assert "RRoP s4 Rules for Using Blinds 10" in alert["citations"]
    snap = svc.engine.snapshot()
    assert snap["seats"]["3"]["dead"] and 3 not in svc.engine.active
    svc.submit(Act(2, "call"))
    assert svc.engine.to_act == 4  # the dead hand is passed over
    with pytest.raises(Rejected):
        svc.submit(Looked(3))  # ruled once
    again = _replayed(svc)
    assert again.engine.snapshot()["seats"]["3"]["dead"] and again.table.owing == {}


def test_owing_player_who_acted_plays_and_posts_on_the_next_deal(tmp_path) -> None:
    """RRoP s4 Rules for Using Blinds 10 (quoted above), its second sentence: acted first, live, posts next deal."""
    svc = _owing_hand(tmp_path)
    svc.submit(Act(2, "call"))
    svc.submit(Act(3, "call"))  # chips in the pot before the error is discovered
    out = svc.submit(Looked(3))
    alert = next(o.payload for o in out if o.kind == "alert")
    assert (alert["reason"], alert["remedy"]) == ("owed_blind_acted", "post_next_deal")
    assert 3 in svc.engine.active and not svc.engine.snapshot()["seats"]["3"]["dead"]
    svc.submit(EndHand())
    svc.submit(NewHand())
    assert svc.table.posts.get(3) == ["small", "big"] and 3 in svc.engine.setup.seats  # posts on the next deal


def test_looked_is_for_a_hand_in_progress() -> None:
    svc = _service()
    for s in (1, 2):
        svc.submit(SeatPlayer(s, f"p{s}"))
    with pytest.raises(Rejected, match="no hand in progress"):
        svc.submit(Looked(1))


# ---------------------------------------------------------------------- the draw for the button


def test_the_draw_takes_one_card_a_player_and_the_highest_by_suit_wins(tmp_path) -> None:
    """RRoP s2 Seating 6: "When a button game starts, active players will draw a card for the button
    position. The button will be awarded to the highest card by suit for all high and high-low
    games"; RRoP s3 Ties 1: "The ranking of suits from highest to lowest is spades, hearts, diamonds,
    clubs. ... Suits are used to break a tie between cards of the same rank".  A card the draw
    cannot take (a second card, a card seen twice, a seat with no player in it, the joker) is refused
    and changes nothing."""
    svc = _service(tmp_path)
    for s in (1, 2, 4, 5):
        svc.submit(SeatPlayer(s, f"p{s}"))
    svc.submit(SitOut(5))
    with pytest.raises(Rejected, match="no draw"):
        svc.submit(StartDraw(cancel=True))
    svc.submit(StartDraw())
    with pytest.raises(Rejected, match="under way"):
        svc.submit(NewHand())
    svc.submit(Deal(1, Card.parse("Kd")))
    for bad, why in ((Deal(1, Card.parse("2c")), "already drew"), (Deal(2, Card.parse("Kd")), "drawn already"),
                     (Deal(3, Card.parse("2c")), "no player"), (Deal(5, Card.parse("2c")), "no player"),
                     (Deal(2, Card.parse("joker")), "joker")):
        with pytest.raises(Rejected, match=why):
            svc.submit(bad)
    out = svc.submit(Deal(2, Card.parse("Ks")))
    assert out[-1].kind == "button_draw" and out[-1].payload["waiting"] == [4]
    assert svc.public_state()["table"]["draw"] == {"cards": {"1": "Kd", "2": "Ks"}, "waiting": [4], "winner": None}
    out = svc.submit(Deal(4, Card.parse("Qh")))
    end = out[-1].payload
    assert (end["winner"], end["name"], end["order"]) == (2, "p2", "high")
    assert svc.table.positions.button == 2
    svc.submit(NewHand())
    assert svc.engine.setup.button == 2
    assert _replayed(svc).table.last_draw == {"cards": {1: "Kd", 2: "Ks", 4: "Qh"}, "winner": 2}


def test_a_player_who_drew_stays_in_the_draw_and_the_journal_replays(tmp_path) -> None:
    """Found by the issue-24 byte capture: a player who drew for the button sat out (or got up), and
    the last card then failed to apply after it was journaled, so the journal could not be replayed
    (the daemon would not restart).  Now he stays until the draw is decided or cancelled; a player
    who has not drawn yet may still leave, and the draw goes on without him."""
    svc = _service(tmp_path)
    for s in (1, 2, 3, 4):
        svc.submit(SeatPlayer(s, f"p{s}"))
    svc.submit(StartDraw())
    svc.submit(Deal(1, Card.parse("As")))
    for bad in (SitOut(1), UnseatPlayer(1)):
        with pytest.raises(Rejected, match="seat 1 drew for the button"):
            svc.submit(bad)
    svc.submit(SitOut(4))  # no card yet: he leaves the draw
    svc.submit(Deal(2, Card.parse("Kd")))
    out = svc.submit(Deal(3, Card.parse("Qd")))
    assert out[-1].payload["winner"] == 1
    assert _replayed(svc).table.positions.button == 1


def test_a_draw_in_a_low_game_goes_to_the_lowest_card() -> None:
    """RRoP s2 Seating 6: the button goes "to the lowest card by suit for all low games" (ace low at
    ace-to-five): of two aces, the club (RRoP s3 Ties 1: "spades, hearts, diamonds, clubs")."""
    svc = _service(game="lowball_a5")
    for s in (1, 2, 3):
        svc.submit(SeatPlayer(s, f"p{s}"))
    svc.submit(StartDraw())
    for seat, card in ((1, "Ad"), (2, "Ac"), (3, "2s")):
        out = svc.submit(Deal(seat, Card.parse(card)))
    assert out[-1].payload["winner"] == 2 and out[-1].payload["order"] == "low"


# ---------------------------------------------------------------------- rotations


def test_each_game_of_a_rotation_plays_its_own_stakes() -> None:
    """Mixed games as data: limit hold'em's blinds and bets, then stud's ante and bring-in; TDA 9-A:
    the button is frozen through the stud game and starts again where it was frozen."""
    mix = rotation_from_mapping({"name": "hs", "hands": 2, "games": [
        {"game": "holdem", "structure": "limit", "stakes": {"blinds": [1, 2], "limits": [2, 4]}},
        {"game": "stud", "structure": "limit", "stakes": {"ante": 1, "bring_in": 1, "limits": [2, 4]}}]})
    svc = _service(starting_stack=100, rotations={"hs": mix})
    for s in (1, 2, 3):
        svc.submit(SeatPlayer(s, f"p{s}"))
    svc.submit(SetButton(3))
    svc.submit(rotation_event("hs", svc.table.rotations))
    seen = []
    for _ in range(5):
        svc.submit(NewHand())
        e = svc.engine
        seen.append((e.game.name, e.setup.button, e.setup.chips.ante, e.setup.chips.blinds, e.setup.chips.bring_in))
        svc.submit(EndHand())
    assert seen == [("holdem", 3, 0, (1, 2), None), ("holdem", 1, 0, (1, 2), None),
                    ("stud", None, 1, (), 1), ("stud", None, 1, (), 1), ("holdem", 2, 0, (1, 2), None)]


def test_a_rotation_per_level_changes_the_game_with_the_level() -> None:
    mix = rotation_from_mapping({"name": "lv", "per_level": True, "games": ["holdem", "omaha"]})
    svc = _service(levels=[{"blinds": [1, 2]}, {"blinds": [2, 4]}], event="tournament", starting_stack=500)
    for s in (1, 2, 3):
        svc.submit(SeatPlayer(s, f"p{s}"))
    svc.submit(SetButton(3))
    svc.submit(rotation_event("lv", {"lv": mix}))
    svc.submit(NewHand())
    assert svc.engine.game.name == "holdem"
    state = svc.public_state()["table"]["rotation"]
    assert (state["current"]["game"], state["next"]["game"], state["deals_left"], state["per_level"]) == \
        ("holdem", "omaha", None, True)
    svc.submit(EndHand())
    svc.submit(SetLevel(advance=True))
    svc.submit(NewHand())
    assert svc.engine.game.name == "omaha"
    with pytest.raises(Rejected, match="level schedule"):
        _service().submit(rotation_event("lv", {"lv": mix}))


def test_a_rotation_is_journaled_whole_and_checked() -> None:
    ev = rotation_event("horse", ROTATIONS)
    assert event_from_dict(ev.to_dict()) == ev  # a replay needs no config to know the games
    with pytest.raises(RotationError, match="no rotation"):
        rotation_event("nope", ROTATIONS)
    with pytest.raises(RotationError, match="limit game needs limits"):
        rotation_from_mapping({"name": "x", "games": [{"game": "stud", "stakes": {"ante": 1}}]})
    with pytest.raises(RotationError, match="unknown keys"):
        rotation_from_mapping({"name": "x", "games": ["holdem"], "hand": 3})


def test_eight_game_rotates_through_triple_draw_and_freezes_the_button_in_stud() -> None:
    """Eight-game: 2-7 triple draw, limit hold'em, Omaha hi-lo, razz, stud, stud hi-lo, no-limit
    hold'em, pot-limit Omaha, eight deals each.  TDA 9-A: "when the game shifts from hold'em to stud,
    after the last hold'em hand the button moves to the position it would be if the next hand was
    hold'em and is frozen there during stud ... Shifting to hold'em the button starts where it was
    frozen."""
    table = Table(size=6, rotation=ROTATIONS["eight_game"])
    for s in (1, 2, 3, 4):
        table.seat(s, f"p{s}")
    table.set_button(4)
    deals = [table.start_hand() for _ in range(65)]
    games = [(e.game.name, e.structure) for e in deals[::8]]
    assert games == [("triple_draw_27", "limit"), ("holdem", "limit"), ("omaha8", "limit"), ("razz", "limit"),
                     ("stud", "limit"), ("stud8", "limit"), ("holdem", "no_limit"), ("omaha", "pot_limit"),
                     ("triple_draw_27", "limit")]
    buttons = [e.setup.button for e in deals]
    assert buttons[:24] == [4, 1, 2, 3] * 6  # the button moves every deal of the button games
    assert buttons[24:48] == [None] * 24  # razz, stud and stud hi-lo have no button
    assert table.describe()["button"] is not None
    assert buttons[48] == 4  # frozen where hold'em's next deal would have had it (after seat 3's), resumed there
    assert deals[48].game.name == "holdem" and deals[0].setup.chips is None
