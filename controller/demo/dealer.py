"""The whole-table demo's dealer: he moves tags on the emulated antennas and presses the console's
buttons, and before each move he waits for what that move acts on, never for a fixed time.

* Before he places the next card, the antennas have read the last one he placed (to its zone), and
  before he lifts or covers it, too: a dealer's hand is never faster than the board's scan.  The
  emulated board shares this machine's CPU: starved for a scan gap, it stalls (a microcontroller
  under the table never does for the Pi's load), and two cards placed within one stall reach the
  table in an unknown order (the daemon rightly asks the dealer about them).
* Before he presses a console button (an action, a discard, a showdown), the engine has every card
  he pitched before it (each event applied, :attr:`Daemon.applied`): a card whose tag is dead once
  the camera filled it in.  The display shows what the table has; the dealer acts on it.
* Before the next street's burn, and before he lifts a card whose tag is dead, the camera has
  filled in every dead card (in a run-out there is no button between streets to wait at).
* Before he pushes the pot, the engine has every card of the hand (a mistake's last card included).
* Cards pitched to the muck are not waited for: the antenna reads a pile's top card, and a card
  covered by the next a moment later is never read, which is no fault.

``pace`` is what a person watching needs on top (seconds before each move; the pause between hands
and the time to read an alert scale with it); at ``pace=0`` the dealer is as fast as the table
acknowledges him, which is what the tests run.  Once the hand is over (a misdeal too) or an alert is
up (the table asks him something this dealer does not answer), he waits for no more cards.  A wait
that outlasts :data:`PATIENCE` (a board that never comes back) is given up with a line saying so,
and the hand goes on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console as RichConsole

from controller.rules.cards import Card
from controller.rules.events import Event
from controller.service import Rejected
from firmware_bridge.table_sim import Console as ConsoleStep
from firmware_bridge.table_sim import HandPlan, Movement

#: Console steps (no card moves): the dealer waits for the table before pressing them.
CONSOLE_KINDS = frozenset({"act", "discard", "report", "expose"})
#: Cards the dealer does not wait for before the next move: a card pushed into the muck under the
#: next one a moment later is never read (the antenna reads the top card), and that is no fault.
UNGATED = frozenset({"muck"})
#: Seconds the dealer waits for the table before he gives up and deals on (saying so).  Generous:
#: under emulation on a loaded host the camera took 52 s to fill in a dead tag
#: (tests/rules/test_missing_board_daemon.py); a dealer who stops waiting too soon makes a false alarm.
PATIENCE = 60.0

Key = tuple[str, Card]  # (the event's kind, the card): "deal", "burn", "board" or "stub"


def card_keys(events: Iterable[Any]) -> set[Key]:
    """The cards the engine must have once ``events`` (a plan's expected events) were applied: every
    card event's cards, but the muck's (:data:`UNGATED`) and the console's."""
    keys: set[Key] = set()
    for event in events:
        kind = getattr(event, "kind", "")
        if kind in CONSOLE_KINDS or kind in UNGATED:
            continue
        cards = getattr(event, "cards", None)
        card = getattr(event, "card", None)
        keys.update((kind, c) for c in (cards if cards is not None else (card,) if card is not None else ()))
    return keys


@dataclass
class TableDealer:
    """Plays one hand's plan (:meth:`firmware_bridge.table_sim.TableSim.plan`) on the table.

    ``daemon``: the running daemon (its ``applied`` hooks tell the dealer what the engine has);
    ``emulator``: the antenna board the tags lie on; ``where(uid_hex)``: the zone the antennas put
    a tag in now; ``zone_of(antenna)``: an antenna's zone; ``kind_of``: each antenna's zone kind;
    ``dead_slot(antenna)``: whether a card placed there may carry a dead tag (``roll()`` decides);
    ``dead``: antenna -> the card lying there whose tag does not read (the camera's view reads it)."""

    daemon: Any
    emulator: Any
    where: Callable[[str], Any]
    zone_of: Callable[[int], Any]
    kind_of: dict[int, str]
    card_of: dict[bytes, Card]
    dead_slot: Callable[[int], bool]
    roll: Callable[[], bool]
    dead: dict[int, Card]
    pace: float = 0.0
    patience: float = PATIENCE
    console: RichConsole | None = None
    dead_tags: int = 0  # cards dealt with a dead tag so far (only the camera can name them)
    events: int = 0  # moves and console presses so far
    _got: set[Key] = field(default_factory=set)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _last_placed: list[tuple[bytes, int]] = field(default_factory=list)
    _alerts_at_start: int = 0

    def __post_init__(self) -> None:
        self.daemon.applied.append(self._applied)

    # -- what the engine has ------------------------------------------------------------
    def _applied(self, event: Event, source: str) -> None:
        """Every event the daemon applied (its thread, under the engine owner's lock)."""
        keys = card_keys([event])
        with self._cond:
            self._got |= keys
            self._cond.notify_all()

    def _nothing_to_wait_for(self) -> bool:
        """The hand is over (a misdeal too), or an alert is up: the table asks the dealer something
        (the order of cards a rebooted board found, say) that this dealer does not answer."""
        service = self.daemon.service
        if service is None or service.engine is None or service.engine.over:
            return True
        return len(service.alerts) > self._alerts_at_start

    def wait_applied(self, keys: set[Key], what: str) -> None:
        """Wait until the engine has every card in ``keys`` (or nothing is to be waited for)."""
        deadline = time.monotonic() + self.patience
        with self._cond:
            while not keys <= self._got and not self._nothing_to_wait_for():
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = ", ".join(sorted(f"{k} {c.label()}" for k, c in keys - self._got))
                    self._say(f"waited {self.patience:g} s for {what} ({missing}); dealing on")
                    return
                self._cond.wait(min(left, 0.25))  # (each applied event wakes it: an alert, the hand's end)

    def _dead_keys(self) -> set[Key]:
        return {("board", card) for card in self.dead.values()}

    def antennas_read(self) -> None:
        """Before the next card: the antennas reported the last one placed, to its zone."""
        if not self._last_placed:
            return
        uid, antenna = self._last_placed.pop()
        key, zone = uid.hex().upper(), self.zone_of(antenna)
        deadline = time.monotonic() + self.patience
        while self.where(key) != zone:
            if time.monotonic() > deadline:
                self._say(f"waited {self.patience:g} s for the antennas to read {self.card_of[uid].label()}; "
                          "dealing on")
                return
            time.sleep(0.005)

    def _say(self, text: str) -> None:
        if self.console is not None:
            self.console.print(f"[yellow]dealer: {text}[/]")

    # -- a hand ---------------------------------------------------------------------------
    def new_hand(self) -> None:
        """Call once the hand's StartHand is applied (the last hand's cards are forgotten)."""
        with self._cond:
            self._got.clear()
        self._last_placed.clear()
        service = self.daemon.service
        self._alerts_at_start = len(service.alerts) if service is not None else 0

    def play(self, plan: HandPlan, submit: Callable[[Event], Any]) -> None:
        """Play ``plan``'s actions; ``submit`` presses a console button (a refusal, :class:`Rejected`,
        is a button that did nothing).  Returns once the engine has every card of the hand."""
        for action in plan.actions:
            if self.pace:
                time.sleep(self.pace)  # a person watches: the dealer's hand at a person's pace
            if isinstance(action, Movement):
                self._move(action)
                self.events += 1
            elif isinstance(action, ConsoleStep):
                self.wait_applied(card_keys(plan.expected[: action.index]), f"the cards before {action.event.kind}")
                try:
                    submit(action.event)
                except Rejected:
                    continue
                self.events += 1
        self.wait_applied(card_keys(plan.expected), "the hand's last cards")

    def _move(self, action: Movement) -> None:
        lifts_dead = any(antenna in self.dead for antenna, _ in action.removes)
        if lifts_dead or any(self.kind_of.get(a) == "burn" for a, _ in action.places):
            self.wait_applied(self._dead_keys(), "the camera to fill in a dead tag")
        for antenna, uid in action.removes:
            if self._last_placed and self._last_placed[0][0] == uid:
                self.antennas_read()  # read before it is lifted (or covered, on a pile)
            self.emulator.remove(antenna, uid)
            self.dead.pop(antenna, None)
        for antenna, uid in action.places:
            if self.dead_slot(antenna) and self.roll():
                self.dead[antenna] = self.card_of[uid]  # a dead tag: only the camera sees this card
                self.dead_tags += 1
            else:
                self.antennas_read()  # the card placed before this one
                self.emulator.place(antenna, uid)
                self._last_placed[:] = [(uid, antenna)]
