"""Issue 24 item 2: the engine's results are typed, and one place says whether an event may apply.

``HandEngine.play`` returns :class:`~controller.rules.operations.Played` (frozen operations, the
rulings, the hole cards when they changed); the service publishes from it, each output kind one
:class:`~controller.service.OutputKind`.  ``HandEngine.refusal`` answers "can this apply now?" for
the service (before journaling) and for the dealer's console (``in_turn``).
"""

from __future__ import annotations

import dataclasses

import pytest

from controller.rules.cards import Card
from controller.rules.chips import Stakes
from controller.rules.engine import HandEngine
from controller.rules.events import Act, BoardCards, Burn, Deal, Discard, HandSetup, StartHand
from controller.rules.operations import (
    ActionTaken,
    BoardShown,
    CardBurned,
    CardDealt,
    DrawDeclared,
    HandOutcome,
    HoleCards,
    PotAwarded,
    Settlement,
    StreetStarted,
    Winner,
)
from controller.rules.table import Table
from controller.service import OutputKind, Rejected, TableService


def c(text: str) -> Card:
    return Card.parse(text)


def _setup(**kw) -> HandSetup:
    return HandSetup(**{"game": "holdem", "rules": "robert", "seats": (1, 2, 3), "button": 3, **kw})


def test_play_returns_typed_frozen_operations_in_order() -> None:
    e = HandEngine(_setup())
    first = e.play(Deal(1, c("Ah"), source="rfid"))
    assert first.operations == (CardDealt(1, False, None, "rfid"),)  # a face-down card is never named
    assert first.hole_cards == HoleCards(((1, ("Ah",)), (2, ()), (3, ())))
    assert first.rulings == () and not first.over
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.operations[0].seat = 2  # type: ignore[misc]
    for i, card in enumerate(["Kd", "Qs", "Jc", "Th", "9d"], start=1):
        played = e.play(Deal(i % 3 + 1, c(card)))
    assert played.operations[-1] == StreetStarted("preflop")  # the street starts after the last card
    first_to_act = e.to_act
    assert first_to_act == 3  # left of the big blind (seat 2)
    call = e.play(Act(3, "call"))
    assert call.operations == (ActionTaken(3, "call", None, False),) and call.hole_cards is None
    e.play(Act(1, "call"))
    assert e.play(Act(2, "check")).operations[-1] == StreetStarted("flop")  # waiting for its cards
    burn = e.play(Burn(c("2c"), source="rfid"))
    assert burn.operations == (CardBurned("rfid"),) and burn.operations[0].payload() == {"count": 1, "source": "rfid"}
    flop = e.play(BoardCards((c("7h"), c("8h"), c("9h"))))
    assert flop.operations == (BoardShown(("7h", "8h", "9h"), "script"),)
    assert [op.kind for op in flop.operations] == ["board"]


def test_a_draw_is_typed() -> None:
    e = HandEngine(HandSetup(game="lowball_a5", rules="robert", seats=(1, 2), button=2))
    cards = iter("Ah 2d 3c 4s 5h 6d 7c 8s 9h Td".split())
    for _ in range(5):
        for seat in (1, 2):
            e.play(Deal(seat, c(next(cards))))
    while e.to_act is not None:
        e.play(Act(e.to_act, "call"))
    assert e.play(Discard(1, 2)).operations[0] == DrawDeclared(1, 2)


def test_the_console_acts_only_in_turn_and_the_reason_is_the_engines() -> None:
    e = HandEngine(_setup())
    assert e.refusal(Act(1, "call"), in_turn=True) == "no betting round is open: seat 1 cannot call now"
    assert e.refusal(Act(1, "call")) is None  # sensed: taken, and ruled on if it is out of turn
    for i, card in enumerate(["Ah", "Kd", "Qs", "Jc", "Th", "9d"]):
        e.play(Deal(i % 3 + 1, c(card)))
    assert e.refusal(Act(2, "call"), in_turn=True) == "seat 2 is out of turn: seat 3 is to act"
    assert e.can_play(Act(3, "call"), in_turn=True) and not e.can_play(Act(2, "call"), in_turn=True)


def test_the_service_refuses_with_the_engines_reason_and_publishes_typed_kinds() -> None:
    svc = TableService(Table(size=6))
    out = svc.submit(StartHand(_setup()))
    assert [o.kind for o in out] == [OutputKind.HAND_START]
    kinds = []
    for i, card in enumerate(["Ah", "Kd", "Qs", "Jc", "Th", "9d"]):
        kinds += [o.kind for o in svc.submit(Deal(i % 3 + 1, c(card)))]
    assert set(kinds) == {OutputKind.CARD, OutputKind.HOLECARDS, OutputKind.STREET}
    assert all(isinstance(k, OutputKind) for k in kinds)
    svc.submit(Act(3, "call"))
    svc.submit(Act(1, "call"))
    svc.submit(Act(2, "check"))
    svc.submit(Burn(c("2c")))
    svc.submit(BoardCards((c("7h"), c("8h"))))  # a dead tag: the flop's third card is not read
    assert svc.engine is not None
    with pytest.raises(Rejected) as exc:
        svc.submit(Act(1, "check"))
    assert str(exc.value) == svc.engine.refusal(Act(1, "check"))


def test_the_hands_start_and_end_are_typed() -> None:
    e = HandEngine(_setup())
    started = e.started()
    assert (started.game, started.button, started.small_blind, started.big_blind, started.seats) == \
        ("holdem", 3, 1, 2, (1, 2, 3))
    assert started.payload("ann")["dealer"] == "ann" and "stakes" not in started.payload(None)
    for i, card in enumerate(["Ah", "Kd", "Qs", "Jc", "Th", "9d"]):
        e.play(Deal(i % 3 + 1, c(card)))
    e.play(Act(3, "fold"))
    e.play(Act(1, "fold"))
    outcome = e.outcome()
    assert outcome == HandOutcome("uncontested", (Winner(2, "pot", None, None),), None, None, misdeal=False)
    assert outcome.payload()["winners"] == [{"seat": 2, "part": "pot", "share": None}]
    dead = HandEngine(_setup())
    dead.play(Deal(2, c("Ah")))  # the first card to the wrong seat: a misdeal, the next deal a redeal
    assert dead.outcome().result == "misdeal" and dead.outcome().misdeal


def _chips_hand() -> HandEngine:
    """Hold'em, three seats with chips (1/2 blinds), the hole cards dealt: seat 3 to act."""
    e = HandEngine(_setup(chips=Stakes(stacks={1: 100, 2: 100, 3: 30}, blinds=(1, 2))))
    for i, card in enumerate(["Ah", "Kd", "Qs", "Jc", "Th", "9d"]):
        e.play(Deal(i % 3 + 1, c(card)))
    return e


def test_per_operation_checks_answer_as_refusal_does() -> None:
    e = _chips_hand()
    assert e.can_act(3, "call") and e.can_act(3, "fold") and e.can_act(3, "raise", 30)
    assert not e.can_act(1, "call")  # out of turn for the console...
    assert e.can_act(1, "call", in_turn=False)  # ...a sensed action is taken and ruled on
    assert not e.can_act(3, "raise", 31) and e.refusal(Act(3, "raise", False, 31)) is not None  # over the stack
    assert e.can_put(3, (5,)) and not HandEngine(_setup()).can_put(1, (5,))  # no chips: a push means nothing


def test_the_settlement_is_typed_and_frozen() -> None:
    e = _chips_hand()
    assert e.settle() is None and e.settlement() is not None and not e.settlement().awarded  # not over
    e.play(Act(3, "raise", False, 10))
    e.play(Act(1, "fold"))
    e.play(Act(2, "fold"))
    settled = e.settle()
    assert isinstance(settled, Settlement) and settled.awarded and not settled.void
    assert settled.returned == (3, 8)  # the raise nobody called goes back
    assert settled.won(3) == 5 and settled.paid()[3] == 13  # the blinds and the called 2 won; 8 back
    assert dict(settled.stacks or ()) == {1: 99, 2: 98, 3: 33}
    assert settled.pots == (PotAwarded(5, (3,), (3,)),)
    assert settled.payload()["returned"] == {"seat": 3, "amount": 8}
    with pytest.raises(dataclasses.FrozenInstanceError):
        settled.awarded = False  # type: ignore[misc]
    dead = HandEngine(_setup(chips=Stakes(stacks={1: 100, 2: 100, 3: 30}, blinds=(1, 2))))
    dead.play(Deal(2, c("Ah")))  # a misdeal: every chip back
    void = dead.settlement()
    assert void is not None and void.void and not void.awarded and dict(void.stacks or ()) == {1: 100, 2: 100, 3: 30}
    assert void.payload()["payouts"] is None


def test_a_hand_view_is_a_frozen_copy() -> None:
    e = _chips_hand()
    view = e.view()
    assert view.phase == "bet" and not view.over and view.cards(1) == (c("Ah"), c("Jc"))
    assert view.small_blind == 1 and view.big_blind == 2 and view.where(c("Ah")) == "seat:1"
    e.play(Act(3, "fold"))
    assert 3 in e.view().folded and 3 not in view.folded  # the copy did not change
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.over = True  # type: ignore[misc]


def test_a_hand_view_holds_what_readers_outside_the_rules_read() -> None:
    """The antenna board's hints, the PHH export, the demo and the benches read the hand through the
    view only: who is dealt to and who acts next, the chips of the round, what lies on the felt."""
    e = HandEngine(_setup(chips=Stakes(stacks={1: 100, 2: 100, 3: 30}, blinds=(1, 2))))
    e.play(Deal(1, c("Ah")))
    view = e.view()
    assert view.order == (1, 2, 3) and view.next_seat == 2 and view.to_act is None and view.street == 0
    assert view.lying(1) == 1 and view.lying(2) == 0 and view.setup.seats == (1, 2, 3)
    assert view.chips is not None and view.chips.bet(2) == 2 and view.chips.top == 2 and view.chips.straddle is None
    e = _chips_hand()
    assert e.view().to_act == 3 and e.view().next_seat is None
    out_of_turn = e.play(Act(1, "call"))  # binding: counted once the turn reaches seat 1
    assert [r.reason for r in out_of_turn.rulings] == ["action_out_of_turn"]
    assert [r.reason for r in e.view().rulings] == ["action_out_of_turn"]
    fold, call = e.play(Act(3, "fold")).operations  # seat 3's fold, then seat 1's call, each its own seat
    assert fold == ActionTaken(3, "fold", None, False, counted=True, text="Seat 3 folds")
    assert call == ActionTaken(1, "call", 2, False, counted=True, text="Seat 1 calls 2")
    e.play(Act(2, "check"))
    board = e.view()
    assert board.phase == "board" and board.missing_board == {"street": "flop", "have": 0, "need": 3,
                                                              "missing": [1, 2, 3]}
    e.play(Burn(c("2c")))
    e.play(BoardCards((c("7h"), c("8h"), c("9h"))))
    assert e.view().board == e.view().board_dealt == (c("7h"), c("8h"), c("9h"))
