"""Live equities for the broadcast overlay, computed off the engine's thread.

Whenever the hole cards or the board change, the publisher hands the worker the latest
picture of the hand; the worker computes (exact where it fits, Monte Carlo with a stated
standard error otherwise, current hand strength for draw games before the draw) and
publishes ``broadcast/equity`` with the broadcast delay.  Only the newest request counts:
a card landing while the previous one is computed supersedes it, so the overlay is never
behind by more than one computation and the engine never waits.

What the overlay shows is only what the server knows: before a draw there is no equity
(``win``/``tie``/``equity`` are null, the hand's current strength is named); a draw hand whose
discards no sensor identified is not named at all (which of its cards it kept is unknown);
high-low games carry each half's share and both hand names.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.mqtt.contract import SCHEMA_VERSION
from controller.rules.cards import Card
from controller.rules.operations import HandView

log = logging.getLogger("controller.equity.odds")


@dataclass(frozen=True, slots=True)
class EquityRequest:
    hand_id: int
    seq: int
    game: str
    hands: dict[int, tuple[Card, ...]]
    board: tuple[Card, ...]
    dead: tuple[Card, ...]
    after_draw: bool
    unknown: frozenset[int] = frozenset()  # draw games: seats holding discards no sensor identified

    def key(self) -> tuple:
        """What the equities depend on (not the seq): an unchanged key needs no new computation."""
        return (self.hand_id, self.game, tuple(sorted(self.hands.items())), self.board, self.dead, self.after_draw,
                self.unknown)


def request_for(hand: HandView | None, hand_id: int, seq: int) -> EquityRequest | None:
    """The equity question a hand asks now (None mid-deal or once it is over): the live seats'
    cards, the settled board and the folded hands' cards (dead)."""
    if hand is None or hand.over or hand.phase not in ("bet", "board"):
        return None

    def cards(seat: int) -> tuple[Card, ...]:
        return tuple(c for c in hand.cards(seat) if not c.is_joker)

    live = {s: cards(s) for s in sorted(hand.active) if cards(s)}
    dead = tuple(c for s in sorted(hand.folded) for c in cards(s))
    board = tuple(c for c in hand.board if not c.is_joker)
    unknown = frozenset(s for s in live if hand.unknown(s) > 0)
    return EquityRequest(hand_id, seq, hand.game, live, board, dead, after_draw=hand.drawing, unknown=unknown)


def _named(game: str, cards: tuple[Card, ...], board: tuple[Card, ...], entry: dict[str, Any]) -> None:
    """Add the hand's name(s) as the server's evaluator calls them (both halves in high-low games)."""
    from controller.equity.odds import EquityError, hand_strength
    from controller.rules.games import Family, GameError, get_game

    if len(cards) + len(board) < 5:
        return
    try:
        spec = get_game(game)
    except GameError:
        return
    if spec.family is Family.BOARD and len(cards) != spec.hole_cards:
        return  # a hand short of a hole card (held back, a desync): its name would change with that card
    try:
        strength = hand_strength(game, cards, board)
        entry["hand"] = strength.name
        if strength.percentile is not None:
            entry["percentile"] = round(strength.percentile, 4)
        if len(spec.showdown) == 2:
            entry["low_hand"] = hand_strength(game, cards, board, part=1).name
    except EquityError:
        pass


def _add_outs(req: EquityRequest, seats: dict[str, dict[str, Any]]) -> None:
    """The cards that win, for each seat behind (controller/equity/outs.py)."""
    from controller.equity.outs import outs

    for seat, cards in outs(req.game, req.hands, req.board, req.dead).items():
        seats[str(seat)]["outs"] = [str(c) for c in cards]


def equity_payload(req: EquityRequest, now: float) -> dict[str, Any] | None:
    """The ``broadcast/equity`` payload for one request (None when there is nothing to show)."""
    from controller.equity.odds import EquityError, equity

    if len(req.hands) < 1:
        return None
    seats: dict[str, dict[str, Any]] = {}
    try:
        if req.unknown:
            # A draw hand still holds cards it threw away (unidentified discards): no showdown
            # can be computed, and only the hands known exactly are named.
            for seat, cards in req.hands.items():
                entry: dict[str, Any] = {"win": None, "tie": None, "equity": None}
                if seat not in req.unknown:
                    _named(req.game, cards, req.board, entry)
                seats[str(seat)] = entry
            method, stderr = "hand_strength", 0.0
        elif len(req.hands) == 1:
            (seat, cards), = req.hands.items()
            seats[str(seat)] = {"win": 1.0, "tie": 0.0, "equity": 1.0}
            _named(req.game, cards, req.board, seats[str(seat)])
            method, stderr = "uncontested", 0.0
        else:
            result = equity(req.game, {s: list(c) for s, c in req.hands.items()}, list(req.board), list(req.dead),
                            samples=20_000, seed=req.seq, after_draw=req.after_draw)
            method = result.method
            stderr = max(result.stderr.values(), default=0.0)
            for seat in req.hands:
                if method == "hand_strength":  # before the draw: how good each hand is, no odds yet
                    entry = {"win": None, "tie": None, "equity": None}
                else:
                    entry = {"win": round(result.win.get(seat, 0.0), 4), "tie": round(result.tie.get(seat, 0.0), 4),
                             "equity": round(result.equity.get(seat, 0.0), 4)}
                _named(req.game, req.hands[seat], req.board, entry)
                if result.hilo:
                    entry["high"] = round(result.high.get(seat, 0.0), 4)
                    entry["low"] = round(result.low.get(seat, 0.0), 4)
                seats[str(seat)] = entry
            if method != "hand_strength":
                _add_outs(req, seats)
    except EquityError as exc:
        log.info("no equity for hand %s: %s", req.hand_id, exc)
        return None
    return {"schema": SCHEMA_VERSION, "seq": req.seq, "ts": now, "hand_id": req.hand_id, "game": req.game,
            "method": method, "stderr": round(stderr, 5), "seats": seats}


class EquityWorker:
    """One background thread; ``submit`` replaces any request not yet started."""

    def __init__(self, publish: Callable[[dict[str, Any]], None], clock: Callable[[], float] = time.time) -> None:
        self.publish = publish
        self.clock = clock
        self._cond = threading.Condition()
        self._pending: EquityRequest | None = None
        self._stop = False
        self.computed = 0
        self.superseded = 0
        self._thread = threading.Thread(target=self._run, name="equity", daemon=True)
        self._thread.start()

    def submit(self, req: EquityRequest) -> None:
        with self._cond:
            if self._pending is not None:
                self.superseded += 1
            self._pending = req
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify()
        self._thread.join(5)

    def idle(self, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._cond:
                if self._pending is None and not self._busy:
                    return True
            time.sleep(0.01)
        return False

    _busy = False

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                req, self._pending = self._pending, None
                assert req is not None  # the wait ends on a request or on stop
                self._busy = True
            try:
                payload = equity_payload(req, round(self.clock(), 3))
                if payload is not None:
                    self.publish(payload)
                    self.computed += 1
            except Exception:  # an equity bug must never take the broadcast down
                log.exception("equity failed for hand %s", req.hand_id)
            finally:
                with self._cond:
                    self._busy = False
