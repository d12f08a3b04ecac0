"""Turn the service's outputs into MQTT messages (docs/mqtt.md), with the broadcast delay.

Public topics get everything a display needs and never a face-down card's identity;
``private/holecards`` gets the hole cards at once (only the controller's credential can
read it); the broadcast topics get the overlay's view after the configured delay — a
number of seconds, or ``end_of_hand`` (nothing of a hand leaves before it is over, as
on the electronic tables that keep all data in until the pot is pushed).  A retained
broadcast secret is cleared when its hand ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.mqtt.contract import SCHEMA_VERSION, Topics, card_event, event_payload, state_payload
from controller.mqtt.link import MqttLink
from controller.rules.operations import ActionTaken, CardDealt, HoleCards, StreetStarted
from controller.service import EVENT_OUTPUTS, Output, TableService
from controller.service.results import AlertRaised, AlertsCleared, DelayChanged, HandBegan, HandEnded, Result
from controller.session_stats import SessionStats

END_OF_HAND = "end_of_hand"


@dataclass
class Publisher:
    link: MqttLink
    topics: Topics
    table_id: str
    broadcast_delay: float | str = END_OF_HAND
    clock: Callable[[], float] = time.time
    live_equity: bool = True
    #: Told each event message as it is sent (a table in a room: :meth:`FloorAck.record`).
    on_event: Callable[[str, dict[str, Any]], None] | None = None
    _held: list[tuple[str, dict[str, Any], bool]] = field(default_factory=list)  # end_of_hand buffer
    _equity: Any = None
    _equity_key: tuple | None = None  # what the last equity request was about
    _deferred: tuple[Output, int | None, float] | None = None  # the newest hole cards, sent with the state
    _clear_due: bool = False  # the hand ended: clear broadcast/holecards right after its final state
    stats: SessionStats = field(default_factory=SessionStats)  # broadcast/stats (controller/session_stats.py)
    #: Seals the hole cards for the broadcast chain and commits to them (controller/app/sealer.py).
    sealer: Any = None
    _holding: bool = False  # a switch to the end-of-hand delay holds what was queued until the hand ends
    #: What the producer may set live ([broadcast] min_delay, max_delay), shown on broadcast/delay.
    delay_range: tuple[int, int] = (0, 600)
    #: A republish at start: the public state right after each republished hand's end, by its seq.
    _final_views: Mapping[int, dict[str, Any]] = field(default_factory=dict)

    def close(self) -> None:
        if self._equity is not None:
            self._equity.stop()
            self._equity = None

    @property
    def delay_label(self) -> float | str:
        return "hand_end" if self.broadcast_delay == END_OF_HAND else float(self.broadcast_delay)

    @property
    def _prefix(self) -> str:
        return self.topics.broadcast("state")[:-len("state")]

    def set_delay(self, delay: float | str) -> None:
        """Change the broadcast delay mid-stream: what is held already leaves no sooner than the
        new delay allows, never lost; a shorter one applies to what is queued from now on, which
        still leaves behind what was queued before it (the daemon's ``link.keep_order``)."""
        self.broadcast_delay = END_OF_HAND if delay in (END_OF_HAND, "hand_end") else float(delay)
        self._holding = self._holding or self.broadcast_delay == END_OF_HAND
        self.link.hold_back(self._prefix,
                            float("inf") if self.broadcast_delay == END_OF_HAND else float(self.broadcast_delay))

    def publish_delay(self, seq: int = 0, by: str = "config", previous: float | str | None = None) -> None:
        """``broadcast/delay``: the delay in force, retained and at once (it carries no card), so
        the producer's page and the overlay know it (docs/mqtt.md)."""
        self.link.publish(self.topics.broadcast("delay"), {
            "schema": SCHEMA_VERSION, "seq": seq, "ts": round(self.clock(), 3), "delay": self.delay_label,
            "previous": previous, "by": by, "min_delay": self.delay_range[0], "max_delay": self.delay_range[1]},
            retain=True, seq=seq)

    # ------------------------------------------------------------------ outputs
    def publish(self, outputs: Iterable[Output], service: TableService, state: bool = True,
                hands: Mapping[int, int | None] | None = None,
                final_views: Mapping[int, dict[str, Any]] | None = None) -> None:
        """Publish one batch of outputs (one applied event), then the retained state.

        With ``state`` false the retained snapshot and the hole cards (each a whole-table
        snapshot too) wait for :meth:`publish_state`, which the daemon calls a moment later
        (:data:`controller.app.daemon.STATE_DEBOUNCE`): the card's event leaves first and alone.
        ``hands`` (a republish at start) names the hand of each output's seq, when not the one in play;
        ``final_views`` the public state each republished hand ended in, by the seq of its end."""
        now = round(self.clock(), 3)
        seq = service.seq
        hand_id = service.hand_id if service.engine is not None else None
        self._final_views = final_views or {}
        try:
            for out in outputs:
                seq = out.seq or seq
                its_hand = hands.get(out.seq, hand_id) if hands is not None else hand_id
                if not state and out.secret:
                    self._deferred = (out, its_hand, now)
                    continue
                self._one(out, service, its_hand, now)
        finally:
            self._final_views = {}
        if state:
            self.publish_state(service, seq, now)
        self._request_equity(service, seq)  # a no-op unless the cards, the folds or the draw changed

    def _one(self, out: Output, service: TableService, hand_id: int | None, now: float) -> None:
        r, seq = out.result, out.seq
        t = self.topics
        if isinstance(r, CardDealt):
            msg = card_event(seq=seq, ts=now, hand_id=hand_id or 1, seat=r.seat, face="up" if r.up else "down",
                             card=r.card if r.up else None, source=r.source or "rfid", exposed=r.exposed)
            self._event(t.event("card"), msg, seq)
        elif out.kind in EVENT_OUTPUTS:
            msg = event_payload(out.kind, seq=seq, ts=now, hand_id=hand_id or 1, **r.payload())
            self._event(t.event(out.kind), msg, seq)
            counted = _count(self.stats, r, service)
            if isinstance(r, HandBegan):
                self._held.clear()
                if self.sealer is not None:
                    self.sealer.start(seq)
            elif isinstance(r, HandEnded):
                self._publish_deferred(service)  # before the hand's secrets are cleared
                # What waited for this hand's end (held by a switch to the end-of-hand delay) leaves
                # now, or once the delay now in force has passed since it was queued.
                if self.sealer is not None or self._holding:
                    self._holding = False
                    self.link.release_held(self._prefix, 0.0 if self.broadcast_delay == END_OF_HAND
                                           else float(self.broadcast_delay))
                if self.sealer is not None:
                    self.sealer.hand_end(seq, now, hand_id or 1, self.delay_label)
                self._broadcast("hand_end", msg, retain=False)
                self._end_broadcast(service, hand_id or 1, seq, now)
            if counted:
                self._publish_stats(service, hand_id or 1, seq, now)
        elif isinstance(r, DelayChanged):  # journaled: SetBroadcastDelay
            previous = self.delay_label
            self.set_delay(r.delay)
            self.publish_delay(seq, str(r.by or "producer"), previous)
        elif isinstance(r, AlertRaised):
            alert = r.payload()
            self.link.publish(t.alert, alert, seq=seq)
            ruling = event_payload("ruling", seq=seq, ts=now, hand_id=r.hand_id or hand_id or 1, alert=alert)
            self._event(t.event("ruling"), ruling, seq)
            self._active_alert(service, seq)
        elif isinstance(r, AlertsCleared):
            self._active_alert(service, seq)
        elif isinstance(r, HoleCards):
            seats = r.payload()["seats"]
            secret = {"schema": SCHEMA_VERSION, "seq": seq, "ts": now, "hand_id": hand_id or 1, "seats": seats}
            self.link.publish(t.private_holecards, secret, seq=seq)
            self._broadcast("holecards", dict(secret, delay=self.delay_label), retain=True)
            if self.sealer is not None:  # sealed at once, its key delayed (controller/app/sealer.py)
                self.sealer.holecards(seq, now, hand_id or 1, seats, self.delay_label)

    def _publish_stats(self, service: TableService, hand_id: int, seq: int, now: float) -> None:
        """Session statistics once a hand is counted: with the broadcast delay, retained (the hand
        is over, so the end-of-hand delay holds nothing back)."""
        body = self.stats.payload(_names(service))
        msg = {"schema": SCHEMA_VERSION, "seq": seq, "ts": now, "hand_id": hand_id, **body}
        delay = 0.0 if self.broadcast_delay == END_OF_HAND else float(self.broadcast_delay)
        self.link.publish(self.topics.broadcast("stats"), msg, retain=True, delay=delay, seq=seq)

    def republish_stats(self, service: TableService, seq: int, unsent: list[Output]) -> None:
        """At start: the statistics rebuilt from the journal (:func:`count_published`), at once: they
        count only hands whose own statistics the broker already had, so nothing in them is new.
        Not while a hand's end waits in ``unsent`` (its newer statistics follow it)."""
        if self.stats.hands and not any(isinstance(o.result, HandEnded) for o in unsent):
            in_play = service.engine is not None and not service.engine.over  # not counted yet
            body = self.stats.payload(_names(service))
            self.link.publish(self.topics.broadcast("stats"), {
                "schema": SCHEMA_VERSION, "seq": seq, "ts": round(self.clock(), 3),
                "hand_id": max(service.hand_id - in_play, 1), **body}, retain=True, seq=seq)

    def _event(self, topic: str, msg: dict[str, Any], seq: int) -> None:
        self.link.publish(topic, msg, seq=seq)
        if self.on_event is not None:
            self.on_event(topic, msg)

    def _request_equity(self, service: TableService, seq: int) -> None:
        """Win percentages for the overlay whenever what they depend on changes (off-thread): the
        cards in play, who holds them, the draw.  With the end-of-hand delay nothing of a hand may
        leave before it is over, so no live odds."""
        if not self.live_equity or self.broadcast_delay == END_OF_HAND:
            return
        from controller.equity.worker import EquityWorker, request_for

        req = request_for(service.engine.view() if service.engine is not None else None, service.hand_id, seq)
        if req is None or req.key() == self._equity_key:
            return
        self._equity_key = req.key()
        if self._equity is None:
            self._equity = EquityWorker(lambda payload: self._broadcast("equity", payload, retain=True),
                                        clock=self.clock)
        self._equity.submit(req)

    def _active_alert(self, service: TableService, seq: int) -> None:
        active = service.alerts[0].payload() if service.alerts else None
        self.link.publish(self.topics.alert_active, active if active is not None else b"", retain=True, seq=seq)

    def _publish_deferred(self, service: TableService) -> None:
        if self._deferred is not None:
            out, hand_id, now = self._deferred
            self._deferred = None
            self._one(out, service, hand_id, now)

    def publish_state(self, service: TableService, seq: int | None = None, now: float | None = None) -> None:
        self._publish_deferred(service)
        now = round(self.clock(), 3) if now is None else now
        seq = service.seq if seq is None else seq
        view = service.public_state()
        state = state_payload(seq=seq, ts=now, table_id=self.table_id, table=view["table"], hand_id=view["hand_id"],
                              hand=view["hand"], alert=view["alert"])
        self.link.publish(self.topics.state, state, retain=True, seq=seq)
        self._broadcast("state", state, retain=True)
        if self._clear_due:
            # Delayed as the state and queued behind it: the overlay has the hand's final state
            # (and shows the cards through the showdown) before the clear reaches it.
            self._clear_due = False
            self._clear_secret(seq)

    def _clear_secret(self, seq: int) -> None:
        """The overlay's retained hole cards (and the sealed copy) cleared, with the delay in seconds."""
        self.link.publish(self.topics.broadcast("holecards"), b"", retain=True, delay=float(self.broadcast_delay),
                          seq=seq)
        if self.sealer is not None:
            self.sealer.clear(seq, float(self.broadcast_delay))

    # ------------------------------------------------------------------ broadcast
    def _final_view(self, service: TableService, seq: int) -> dict[str, Any] | None:
        """The public state the hand ending at ``seq`` ended in: the table's own when nothing was
        applied after its end (live); the one the daemon kept while replaying the journal (a
        republish at start, the table having moved on, maybe into the next hand); else none.
        Never the table's state of now for an older hand's end: under the end-of-hand delay that
        put the hand in play on air before it was over (its seats, bets, board)."""
        if service.seq == seq:
            return service.public_state()
        return self._final_views.get(seq)

    def _broadcast(self, name: str, payload: dict[str, Any], retain: bool) -> None:
        # Each broadcast message carries its journal seq, so the delivered cursor waits for it: a
        # crash inside the delay republishes it after the restart instead of losing it.
        seq = int(payload.get("seq") or 0)
        if self.broadcast_delay == END_OF_HAND:
            if payload.get("hand") is None and name == "state":
                # Between hands the overlay may see the table (no hand in it).
                self.link.publish(self.topics.broadcast(name), payload, retain=retain, seq=seq)
            else:
                self._held = [h for h in self._held if h[0] != name] + [(name, payload, retain)]
            return
        self.link.publish(self.topics.broadcast(name), payload, retain=retain, delay=float(self.broadcast_delay),
                          seq=seq)

    def _end_broadcast(self, service: TableService, hand_id: int, seq: int, now: float) -> None:
        """The hand is over: release what was held (end_of_hand), then clear the retained secret."""
        if self.broadcast_delay == END_OF_HAND or self._held:  # _held: held before a switch to seconds
            held = {name: (payload, retain) for name, payload, retain in self._held}
            view = self._final_view(service, seq)
            if view is not None:
                held["state"] = (state_payload(seq=seq, ts=now, table_id=self.table_id, table=view["table"],
                                               hand_id=view["hand_id"], hand=view["hand"], alert=view["alert"]), True)
            for name, (payload, _retain) in held.items():
                # Released after the hand: not retained, so nothing of it lingers on the broker.
                self.link.publish(self.topics.broadcast(name), payload, retain=False, seq=seq)
            self._held.clear()
            # RRoP/TDA aside, the secret's retained copy must not outlive its hand (its seq holds the
            # delivered cursor back until it is out: a crash before then clears it after the restart).
            self.link.publish(self.topics.broadcast("holecards"), b"", retain=True, delay=0.001, seq=seq)
            if self.sealer is not None:
                self.sealer.clear(seq, 0.001)
        elif service.seq == seq:
            self._clear_due = True  # sent by publish_state, after the final state it belongs to
        else:
            # A republished older hand's end (the table has moved on): cleared now, queued behind
            # that hand's own messages; after the batch it would come behind the next hand's hole
            # cards and wipe their retained copy.
            self._clear_secret(seq)


def count_published(stats: SessionStats, service: TableService, upto: int, outputs: list[Output]) -> None:
    """Replaying the journal at start: the session statistics of what was published before (up to
    the delivered cursor ``upto``), counted as :meth:`Publisher._one` counted them; what the broker
    never had is counted as it is published again.  So a restart, even ``kill -9``, goes on from
    the same numbers."""
    for out in outputs:
        if out.seq <= upto:
            _count(stats, out.result, service)


def _count(stats: SessionStats, r: Result, service: TableService) -> bool:
    """Feed one result to the session statistics; True when a hand was just counted."""
    if isinstance(r, HandBegan):
        stats.hand_start(list(r.started.seats), _names(service))
    elif isinstance(r, StreetStarted):
        stats.street()
    elif isinstance(r, ActionTaken):
        stats.action(r.seat, r.action)
    elif isinstance(r, HandEnded):
        return stats.hand_end(r.outcome.result, list(r.winners))
    return False


def _names(service: TableService) -> dict[int, str | None]:
    return {int(k): p.get("name") for k, p in service.table.describe()["players"].items()}
