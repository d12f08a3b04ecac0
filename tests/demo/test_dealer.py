"""The whole-table demo's dealer waits for what each move acts on, not for a clock
(:mod:`controller.demo.dealer`), on a real :class:`TableService` applying the events."""

from __future__ import annotations

import io
import random
import threading
import time
from typing import Any

from rich.console import Console

from controller.demo.dealer import TableDealer, card_keys
from controller.rules.events import BoardCards, Deal, Event, Muck, StartHand
from controller.rules.scenario import Scenario
from controller.rules.table import Table
from controller.service import TableService
from controller.sim import dealer as dealer_sim


class _Table:
    """What the dealer reads of the daemon: its service and the hooks it calls on each event it
    applied (as :meth:`Daemon._apply` does, after the service took it)."""

    def __init__(self, seed: int = 1) -> None:
        hand = dealer_sim.legal_hand(random.Random(seed), game="holdem", chips=True)
        self.scenario = Scenario.from_dict(hand)
        setup = self.scenario.setup
        self.service = TableService(Table(size=setup.table_size, game=setup.game, rules=setup.rules,
                                          event=setup.event))
        self.applied: list[Any] = []
        self.submit(StartHand(setup))

    def submit(self, event: Event) -> None:
        self.service.submit(event, source="rfid")
        for hook in self.applied:
            hook(event, "rfid")


def _dealer(table: _Table, patience: float = 10.0) -> tuple[TableDealer, io.StringIO]:
    said = io.StringIO()
    dealer = TableDealer(table, emulator=None, where=lambda key: None, zone_of=lambda a: None, kind_of={},
                         card_of={}, dead_slot=lambda a: False, roll=lambda: False, dead={}, patience=patience,
                         console=Console(file=said, width=300))
    dealer.new_hand()
    return dealer, said


def test_the_cards_a_button_waits_for_are_the_dealt_burnt_and_board_ones_not_the_muck() -> None:
    table = _Table()
    first, second = (e.card for e in table.scenario.events[:2])
    board = (first, second)
    keys = card_keys([Deal(1, first), Muck(second), BoardCards(board), table.scenario.events[0]])
    assert keys == {("deal", first), ("board", first), ("board", second)}


def test_the_dealer_presses_once_the_engine_has_the_cards_not_after_a_set_time() -> None:
    table = _Table()
    dealer, said = _dealer(table)
    deals = [e for e in table.scenario.events if e.kind == "deal"][:2]
    t0 = time.monotonic()
    late = threading.Timer(0.3, lambda: [table.submit(e) for e in deals])  # the antennas' reads, late
    late.start()
    dealer.wait_applied(card_keys(deals), "the first two cards")
    waited = time.monotonic() - t0
    late.join()
    assert 0.3 <= waited < 3.0, waited
    assert not said.getvalue()
    t0 = time.monotonic()
    dealer.wait_applied(card_keys(deals), "the first two cards")  # had: no wait at all
    assert time.monotonic() - t0 < 0.05


def test_an_alert_or_the_hands_end_stops_the_wait_and_a_board_that_never_answers_is_given_up() -> None:
    table = _Table()
    dealer, said = _dealer(table, patience=0.3)
    never = card_keys([[e for e in table.scenario.events if e.kind == "deal"][-1]])
    t0 = time.monotonic()
    dealer.wait_applied(never, "a card the table never gets")
    assert 0.3 <= time.monotonic() - t0 < 2.0
    assert "waited 0.3 s for a card the table never gets (deal " in " ".join(said.getvalue().split())
    dealer.patience = 30.0
    empty = next(s for s in range(1, table.scenario.setup.table_size + 1) if s not in table.scenario.setup.seats)
    table.submit(Deal(empty, table.scenario.events[0].card))  # the first card to an empty seat: a misdeal
    assert table.service.alerts
    t0 = time.monotonic()
    dealer.wait_applied(never | {("deal", table.scenario.events[1].card)}, "cards after a ruling")
    assert time.monotonic() - t0 < 0.5
