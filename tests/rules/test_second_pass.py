"""Issue 13, second pass: the four engine bugs and the new stud / turn-order rulings.

Each test states the rule it checks; the hands are built here (not copied from the shared
scenarios) so that a general engine, not one layout, is what passes.
"""

from __future__ import annotations

import pytest

from controller.rules.cards import Card
from controller.rules.engine import HandEngine
from controller.rules.events import Act, BoardCards, Boxed, Burn, Deal, HandSetup, Report, Stub


def c(text: str) -> Card:
    return Card.parse(text)


def _engine(game: str, seats: tuple[int, ...], rules: str = "robert", **kw) -> HandEngine:
    return HandEngine(HandSetup(game=game, rules=rules, seats=seats, **kw))


def _apply(engine: HandEngine, events) -> list[tuple[int, str, str | None]]:
    """Apply events; return (step, reason, remedy) of every ruling raised (1-based steps)."""
    out = []
    for i, ev in enumerate(events, 1):
        for r in engine.apply(ev):
            out.append((i, r.reason, r.remedy))
    return out


def _deal_round(seats, cards, face=None):
    return [Deal(s, c(x), face) for s, x in zip(seats, cards, strict=True)]


STUD3 = ["Qs", "4c", "9h", "9d", "Jd", "5c", "Kh", "6d", "2s"]  # seat 3 shows the 2s: low card


# ---------------------------------------------------------------- bug 1: a different back in the stub
def test_different_back_found_boxed_in_the_stub_lets_the_action_stand() -> None:
    """RRoP s3 Irregularities 3: "If a card with a different color back is discovered in the stub,
    all action stands"; found face up in the deck it is a boxed card, a scrap (Irregularities 7)."""
    e = _engine("holdem", (1, 2, 3, 4), button=4)
    events = _deal_round((1, 2, 3, 4), ["Ah", "Kd", "Qs", "Jc"]) + _deal_round((1, 2, 3, 4), ["Th", "9d", "8s", "7c"])
    events += [Act(3, "call"), Act(4, "call"), Act(1, "call"), Act(2, "check"), Burn(c("2c"))]
    events += [Boxed(Card.parse("5h@B"))]
    got = _apply(e, events)
    assert got == [(len(events), "boxed_card", "scrap")]
    assert not e.over  # the hand goes on
    e.apply(BoardCards((c("5d"), c("6d"), c("7d"))))
    assert e.to_act == 1


def test_different_back_dealt_during_the_hand_still_voids_it() -> None:
    """RRoP s3 Irregularities 3: a different back that "appears during a hand" voids the action."""
    e = _engine("holdem", (1, 2, 3), button=3)
    got = _apply(e, [Deal(1, c("Ah")), Deal(2, Card.parse("Kd@B"))])
    assert got == [(2, "foreign_card", None)]
    assert e.over


# ---------------------------------------------------------------- bug 2: TDA 33-B
def test_tda_two_stuck_cards_on_the_button_then_a_round_that_passes_it() -> None:
    """TDA 33-B: "Players may be dealt 2 consecutive cards on the button."  Both of the button's
    cards in the first round, then a second round that passes it, is two consecutive cards."""
    e = _engine("holdem", (1, 2, 3, 4), rules="tda", event="tournament", button=4)
    events = _deal_round((1, 2, 3, 4), ["9s", "4c", "6h", "Th"]) + [Deal(4, c("Jh"))]
    events += _deal_round((1, 2, 3), ["7h", "8h", "9h"])
    assert _apply(e, events) == []
    assert e.to_act == 3 and all(e.cards_at(s) == 2 for s in (1, 2, 3, 4))


def test_robert_two_cards_in_a_row_on_the_button_is_still_a_misdeal() -> None:
    """RRoP s3 Misdeals 1(f) has no TDA 33-B exception: a card out of sequence is a misdeal."""
    e = _engine("holdem", (1, 2, 3, 4), button=4)
    events = _deal_round((1, 2, 3, 4), ["9s", "4c", "6h", "Th"]) + [Deal(4, c("Jh"))]
    got = _apply(e, events)
    assert got and got[0][0] == 5 and got[0][1] in ("seat_dealt_out", "out_of_sequence")


def test_tda_two_cards_on_a_seat_that_is_not_the_button_is_a_misdeal() -> None:
    """TDA 33-B speaks of the button only; any other seat dealt out is TDA 33-A-4."""
    e = _engine("holdem", (1, 2, 3, 4), rules="tda", event="tournament", button=4)
    got = _apply(e, _deal_round((1, 2), ["9s", "4c"]) + [Deal(2, c("6h"))])
    assert got == [(3, "seat_dealt_out", None)]


# ---------------------------------------------------------------- bug 3: stud substantial action
def _stud_third_street(rules: str = "robert") -> HandEngine:
    e = _engine("stud", (1, 2, 3, 4), rules=rules)
    for ev in _deal_round((1, 2, 3, 4), STUD3[:4]) + _deal_round((1, 2, 3, 4), STUD3[4:8]) + [
        Deal(1, c("Ah")), Deal(2, c("Kc")), Deal(3, c("2s")), Deal(4, c("Td"))
    ]:
        assert not e.apply(ev)
    assert e.to_act == 3
    return e


def test_stud_low_card_completing_is_still_the_forced_bet() -> None:
    """RRoP s8 Seven-Card Stud 2-3: the low card may open for a full bet, and that is still the
    forced bet; RRoP s3 Misdeals 2 counts two players acting *after* the forced bet.  A complete
    by the low card and one call is one player: a misdeal cause found now is still a misdeal."""
    e = _stud_third_street()
    e.apply(Act(3, "complete"))
    e.apply(Act(4, "call"))
    assert not e.substantial_action
    assert [(r.ruling, r.reason) for r in e.apply(Report("wrong_card_count"))] == [("misdeal", "wrong_card_count")]


def test_stud_two_players_after_the_forced_bet_is_substantial() -> None:
    e = _stud_third_street()
    for ev in (Act(3, "bring_in"), Act(4, "complete"), Act(1, "call")):
        e.apply(ev)
    assert e.substantial_action
    assert [(r.reason, r.remedy) for r in e.apply(Report("wrong_card_count"))] == [("misdeal_too_late", "play_on")]


# ---------------------------------------------------------------- bug 4: running out of cards in stud
def _stud_to_seventh(seats: tuple[int, ...], cards: list[str]) -> HandEngine:
    """Deal third to sixth street with everyone checking/calling; cards in dealing order."""
    e = _engine("stud", seats, table_size=8)
    it = iter(cards)
    for _ in range(3):
        for s in seats:
            assert not e.apply(Deal(s, c(next(it))))
    while e.street_i < 4:
        if e.phase.value == "deal":
            assert not e.apply(Burn(c(next(it))))
            for s in seats:
                assert not e.apply(Deal(s, c(next(it))))
        while e.phase.value == "bet":
            seat = e.to_act
            action = "bring_in" if e.bring_in() == seat and e.street_i == 0 and not e.any_action else (
                "call" if e.bet.level else "check")
            assert not e.apply(Act(seat, action)), (seat, action)
    return e


def test_stud_common_card_opens_seventh_street_and_decides_who_is_high() -> None:
    """RRoP s8 Seven-Card Stud 15: with not enough cards the dealer turns one common card that
    "plays in everyone's hand", and "the player who is now high using the common card initiates
    the action for the last round"."""
    seats = (1, 2, 3, 4, 5, 6, 7, 8)
    # 8 players x 6 cards + 4 burns = 52 cards exactly: nothing left for seventh street.
    deck = [f"{r}{s}" for s in "cdhs" for r in "23456789TJQKA"]
    order = []
    # third street: downs then the door cards; seat 8 gets the 2c door (low: brings it in).
    downs = ["Ac", "Ad", "Kc", "Kd", "Qc", "Qd", "Jc", "Jd", "Tc", "Td", "9c", "9d", "8c", "8d", "7c", "7d"]
    doors = ["Ah", "Kh", "Qh", "Jh", "Th", "9h", "8h", "2c"]
    order += downs[0::2] + downs[1::2] + doors
    rest = [x for x in deck if x not in order]
    order += rest
    assert len(order) == 52
    e = _stud_to_seventh(seats, order)
    assert e.street.name == "seventh" and e.phase.value == "deal"
    # the burns are gathered and mixed with the stub; the dealer burns and turns a common card
    burns = list(e.burns)
    assert not e.apply(Stub(tuple(burns)))
    assert not e.apply(Burn(burns[0]))
    common = burns[1]
    assert not e.apply(BoardCards((common,)))
    assert e.phase.value == "bet", "seventh-street betting opens on the common card"
    boards = e._boards()
    assert all(common in b for b in boards.values())
    from controller.rules.upcards import first_showing_seat

    assert e.to_act == first_showing_seat("high", boards, e.order)


def test_stud_common_card_pairs_a_board_and_moves_the_first_action() -> None:
    """The common card can change who is high: a board it pairs now acts first."""
    e = _engine("stud", (1, 2), table_size=8)
    events = _deal_round((1, 2), ["2c", "3c"]) + _deal_round((1, 2), ["4c", "5c"]) + _deal_round((1, 2), ["Ah", "8d"])
    events += [Act(2, "bring_in"), Act(1, "call"), Act(2, "check")]
    for up in (("Kh", "9d"), ("Qh", "Td"), ("Jh", "7s")):
        events += [Burn(c({"Kh": "2d", "Qh": "3d", "Jh": "4d"}[up[0]]))]
        events += _deal_round((1, 2), list(up))
        events += [Act(1, "check"), Act(2, "check")]
    for ev in events:
        assert not e.apply(ev), ev
    assert e.street.name == "seventh"
    # seat 1 shows A-K-Q-J, seat 2 8-9-T-7; a common 8 pairs seat 2's board: seat 2 is high.
    assert not e.apply(Burn(c("5d")))
    assert not e.apply(BoardCards((c("8s"),)))
    assert e.phase.value == "bet" and e.to_act == 2


# ---------------------------------------------------------------- premature stud card
def _premature(rules: str, event: str = "cash") -> tuple[HandEngine, list]:
    e = _stud_third_street(rules) if event == "cash" else None
    if e is None:
        e = _engine("stud", (1, 2, 3, 4), rules=rules, event=event)
        for ev in _deal_round((1, 2, 3, 4), STUD3[:4]) + _deal_round((1, 2, 3, 4), STUD3[4:8]) + [
            Deal(1, c("Ah")), Deal(2, c("Kc")), Deal(3, c("2s")), Deal(4, c("Td"))
        ]:
            e.apply(ev)
    e.apply(Act(3, "bring_in"))
    e.apply(Act(4, "call"))
    got = [(r.reason, r.remedy) for r in e.apply(Burn(c("8c"))) + e.apply(Deal(2, c("7s")))]
    return e, got


def test_premature_stud_card_robert_eliminates_a_round() -> None:
    """RRoP s8 Seven-Card Stud 14: a card dealt before the round of betting is complete is
    eliminated from play (not a misdeal, not a card of the hand)."""
    e, got = _premature("robert")
    assert got == [("premature_card", "eliminate_round")]
    assert e.to_act == 1 and e.cards_at(2) == 3
    assert not e.apply(Act(1, "call")) and not e.apply(Act(2, "call"))
    assert e.street.name == "fourth"


def test_premature_stud_card_tda_sets_a_round_aside() -> None:
    """TDA RP-5 D: the premature card and a round for the other live players are set aside."""
    e, got = _premature("tda", "tournament")
    assert got == [("premature_card", "set_aside_round")]


def test_premature_card_then_one_burn_for_the_street_is_no_burn_error() -> None:
    """The burn that went with the premature card is not the street's: one new burn is right."""
    e, _ = _premature("robert")
    from controller.rules.events import Aside

    for ev in (Aside(c("7s")), Act(1, "call"), Act(2, "call"), Aside(c("Qd")), Aside(c("5s")), Aside(c("8d"))):
        assert not e.apply(ev)
    assert not e.apply(Burn(c("6h")))
    for seat, card in zip((1, 2, 3, 4), ("7c", "8h", "2h", "Jc"), strict=True):
        assert not e.apply(Deal(seat, c(card)))
    assert e.to_act == 3  # the open deuces


# ---------------------------------------------------------------- burn errors
def _stud_fourth_open() -> HandEngine:
    e = _stud_third_street()
    for ev in (Act(3, "bring_in"), Act(4, "call"), Act(1, "call"), Act(2, "call"), Act(3, "call")):
        assert not e.apply(ev)
    assert e.street.name == "fourth" and e.phase.value == "deal"
    return e


def test_two_burns_for_one_stud_round() -> None:
    """RRoP s8 Seven-Card Stud 13: "If the dealer burns two cards for one round or fails to burn a
    card, the cards will be corrected, if at all possible, to their proper positions"."""
    e = _stud_fourth_open()
    assert not e.apply(Burn(c("3c")))
    assert [(r.reason, r.remedy) for r in e.apply(Burn(c("6h")))] == [("burn_error", "correct_positions")]


def test_no_burn_for_a_stud_round() -> None:
    e = _stud_fourth_open()
    assert [(r.reason, r.remedy) for r in e.apply(Deal(1, c("3c")))] == [("burn_error", "correct_positions")]
    assert not e.apply(Deal(2, c("4h")))  # one ruling for the round, not one per card


# ---------------------------------------------------------------- last stud card face up
def _stud_heads_up_to_seventh(all_in_seat: int | None = None) -> HandEngine:
    e = _engine("stud", (1, 2), table_size=8)
    events = _deal_round((1, 2), ["2c", "3c"]) + _deal_round((1, 2), ["4c", "5c"]) + _deal_round((1, 2), ["Ah", "8d"])
    events += [Act(2, "bring_in"), Act(1, "call"), Act(2, "check")]
    for burn, up in (("2d", ("Kh", "9d")), ("3d", ("Qh", "Td")), ("4d", ("Jh", "7s"))):
        events += [Burn(c(burn))] + _deal_round((1, 2), list(up))
        events += [Act(1, "check"), Act(2, "check")]
    for ev in events:
        assert not e.apply(ev), ev
    e.apply(Burn(c("5d")))
    return e


def test_last_card_up_heads_up_both_up() -> None:
    """RRoP s8 Seven-Card Stud 17(b): two players, the first's final downcard dealt face up: the
    second's is dealt face up as well (no ruling for it), and the high board acts first."""
    e = _stud_heads_up_to_seventh()
    assert [(r.reason, r.remedy) for r in e.apply(Deal(1, c("6s"), "up"))] == [("last_card_exposed", "both_up")]
    assert not e.apply(Deal(2, c("8s"), "up"))
    assert e.to_act == 2  # eights showing


def test_last_card_up_to_an_all_in_player_keeps_the_card() -> None:
    """RRoP s8 Seven-Card Stud 16: an all-in player keeps a final card dealt face up."""
    e = _engine("stud", (1, 2, 3), table_size=8)
    events = _deal_round((1, 2, 3), ["2c", "3c", "4c"]) + _deal_round((1, 2, 3), ["5c", "6c", "7c"])
    events += _deal_round((1, 2, 3), ["Ah", "Kd", "8d"])
    events += [Act(3, "bring_in"), Act(1, "complete", True), Act(2, "call"), Act(3, "call")]
    for ev in events:
        assert not e.apply(ev), ev
    for burn, up in (("2d", ("Kh", "9d", "Td")), ("3d", ("Qh", "Jd", "9s")), ("4d", ("Jh", "7s", "6s"))):
        for ev in [Burn(c(burn))] + _deal_round((1, 2, 3), list(up)):
            assert not e.apply(ev), ev
        while e.phase.value == "bet":
            assert not e.apply(Act(e.to_act, "check"))
    e.apply(Burn(c("5d")))
    assert [(r.reason, r.remedy) for r in e.apply(Deal(1, c("2h"), "up"))] == [("last_card_exposed", "keep_card")]
    assert not e.apply(Deal(2, c("3h")))


# ---------------------------------------------------------------- action out of turn
def _holdem_preflop(rules: str = "robert") -> HandEngine:
    e = _engine("holdem", (1, 2, 3, 4, 5, 6), rules=rules, button=6)
    cards = ["7s", "Kc", "4d", "Qh", "Jh", "9d", "2c", "Tc", "8s", "Qs", "Jd", "3h"]
    for ev in _deal_round((1, 2, 3, 4, 5, 6), cards[:6]) + _deal_round((1, 2, 3, 4, 5, 6), cards[6:]):
        assert not e.apply(ev)
    return e


def test_out_of_turn_call_binds_when_nothing_changes() -> None:
    """TDA 39-A: binding "if action to the OOT player does not change. A check, call or fold by the
    rightful player does not change action."  The OOT action is not in turn: no substantial action."""
    e = _holdem_preflop("tda")
    assert [(r.reason, r.remedy) for r in e.apply(Act(5, "call"))] == [("action_out_of_turn", "binding_if_unchanged")]
    assert e.to_act == 3 and e.actions == 0
    assert not e.apply(Act(3, "call"))
    assert not e.apply(Act(4, "fold"))
    assert e.to_act == 6  # seat 5's call bound when the turn reached it
    assert not e.apply(Act(5, "call"))  # the console repeating the bound call is no new ruling
    assert e.to_act == 6


@pytest.mark.parametrize(("rules", "intervening"), [
    ("tda", "raise"),  # TDA 39-A: "If action changes, the OOT action is not binding ... only a call or fold"
    # RRoP s3 Betting and Raising 10: binding "if there is no bet, call, or raise by an intervening
    # player acting after the infraction": under Robert's rules an intervening call unbinds too.
    ("robert", "call"),
])
def test_an_intervening_action_unbinds_the_out_of_turn_call(rules: str, intervening: str) -> None:
    e = _holdem_preflop(rules)
    e.apply(Act(5, "call"))
    assert not e.apply(Act(3, intervening))
    assert not e.apply(Act(4, "fold"))
    assert e.to_act == 5 and 5 in e.call_or_fold


def test_out_of_turn_fold_binds_at_once() -> None:
    """TDA 39-A: "An OOT fold is binding"."""
    e = _holdem_preflop("tda")
    e.apply(Act(5, "fold"))
    assert 5 in e.folded
    for seat in (3, 4):
        assert not e.apply(Act(seat, "call"))
    assert e.to_act == 6


def test_out_of_turn_actions_are_not_substantial() -> None:
    """RRoP s3 Misdeals 2 counts players who acted *in turn*: out-of-turn actions do not."""
    e = _holdem_preflop("robert")
    e.apply(Act(5, "call"))
    e.apply(Act(6, "call"))
    assert not e.substantial_action
    assert [(r.ruling, r.reason) for r in e.apply(Report("wrong_card_count"))] == [("misdeal", "wrong_card_count")]


def test_a_whole_premature_round_is_one_ruling() -> None:
    """RRoP s8 Seven-Card Stud 14 speaks of "one or more cards" dealt early: one error, one ruling."""
    e, got = _premature("robert")
    assert got == [("premature_card", "eliminate_round")]
    assert not e.apply(Deal(3, c("8h"))) and not e.apply(Deal(4, c("8d")))
    assert e.to_act == 1 and all(e.cards_at(s) == 3 for s in (1, 2, 3, 4))
