"""A tournament table follows the floor's orders for it: seats drawn, players moved (docs/room.md).

The floor's director publishes each decision about a table on ``floor/room/table/<table>`` (the
controller's login may read it; only the floor's may write it). A table whose ``[table] event`` is
``tournament`` runs :class:`FloorOrders`, a small MQTT client of its own (the controller's login, a
persistent session, so an order sent while the daemon restarts waits on the broker), and turns the
orders into the table's own journaled events, with no console typing:

* ``move`` from this table (TDA 9, RRoP s15 14): the player gets up once no hand is in progress
  (``UnseatPlayer``); the table publishes ``event/seating`` with his chips, which is how the floor
  learns he left and what he carries;
* ``arrive`` at this table (the floor's answer to that departure): he sits in the seat the floor gave
  him with those chips (``SeatPlayer``) once it is free; the table's ``event/seating`` confirms the
  move to the floor;
* ``seat`` at this table (TDA 6's draw, TDA 7's late entries): he sits down if the seat is free and he
  is not at the table already;
* a redraw's ``seat`` (RRoP s15 17, TDA 10: it names where he sat) is a move: the table he leaves lets
  him go between hands with his chips, and the table he goes to seats him on the floor's ``arrive``,
  once his new seat is free (a swap at one table waits for the other player to get up);

* ``ruling`` ``dead_hand`` at this table (TDA 26: the clock the floor ran out on a player): the table
  journals the report ``clock_expired`` and its engine rules the hand dead, citing the rule;
* ``bust`` at this table, or naming it as the table he was sent to (RRoP s15 20: the floor read from a
  table's hand end that he is out): he gets up once no hand is in progress, and an arrival of his
  not yet seated is called off.

An order that waits (a departure until the hand is over, an arrival until the seat is free) is kept in
the daemon's journal before the broker is told it arrived, and re-armed when the daemon starts again
(``kill -9`` mid-hand included); the event that carries an order out is journaled with the order's
``id`` as its transaction, so an order delivered twice (QoS 1 through the room's bridge, a restart) is
carried out once.

Everything else (levels, halts, breaks, the clock's count) only reaches the dealer's display, which reads
the same topic. A refused order (the seat taken, the player not at the seat named) is logged and changes nothing.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from controller.mqtt.link import MqttSettings, subscriber
from controller.rules.events import Report, SeatPlayer, UnseatPlayer
from controller.service import Output

log = logging.getLogger("controller.floor_orders")

SOURCE = "floor"


def orders_topic(table_id: str) -> str:
    return f"floor/room/table/{table_id}"


class FloorOrders:
    """The floor's orders for one table, applied through the daemon's engine owner (``daemon.post_once``).

    Each order carries the floor's ``id``. An order that waits (a departure until the hand is over, an
    arrival until the seat is free) is kept in the daemon's journal (``Journal.keep_order``) before the
    broker is told it arrived, and re-armed when the daemon starts again; the event that carries it out
    is journaled with the order's id as its transaction, so an order delivered twice (the bridge's QoS 1,
    a restart) is applied once."""

    def __init__(self, daemon: Any, settings: MqttSettings, table_id: str) -> None:
        self.daemon = daemon
        self.settings = settings
        self.table_id = table_id
        self.client: Any = None
        self.connected = threading.Event()
        self._lock = threading.Lock()
        #: players to let go once the hand in progress is over: name -> (the seat the floor named, order id)
        self.departures: dict[str, tuple[int, str | None]] = {}
        #: players to seat once their seat is free: name -> (seat, chips, the order)
        self.arrivals: dict[str, tuple[int, int | None, dict[str, Any]]] = {}
        #: players whose seat is posted to the daemon and not yet journaled (a departure of his waits)
        self.sitting: set[str] = set()
        self.applied: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ orders
    def _done(self, oid: str | None) -> bool:
        """Carried out already: the journal holds the event made under this order's id."""
        journal = getattr(self.daemon, "journal", None)
        if oid is None or journal is None or journal.transaction_seq(oid) is None:
            return False
        journal.drop_order(oid)
        return True

    def _keep(self, order: dict[str, Any]) -> None:
        journal, oid = getattr(self.daemon, "journal", None), order.get("id")
        if journal is not None and isinstance(oid, str):
            journal.keep_order(oid, order, time.time())

    def _drop(self, oid: str | None) -> None:
        journal = getattr(self.daemon, "journal", None)
        if journal is not None and oid is not None:
            journal.drop_order(oid)

    def on_order(self, order: dict[str, Any]) -> None:
        kind, me = order.get("kind"), self.table_id
        name, seat = order.get("player"), order.get("seat")
        oid = order.get("id") if isinstance(order.get("id"), str) else None
        if self._done(oid):
            log.info("the floor's order %s is carried out already", oid, extra={"table_id": me})
            return
        if kind == "ruling" and order.get("ruling") == "dead_hand" and str(order.get("table")) == me:
            self.kill(order)
            return
        if not isinstance(name, str):
            return
        leaves = kind in ("move", "seat") and str(order.get("from_table")) == me \
            and isinstance(order.get("from_seat"), int)
        if kind == "bust" and me in (str(order.get("table")), str(order.get("to_table"))):
            self._bust(name, order, oid)
            return
        if leaves:
            self._keep(order)
            with self._lock:
                self.departures[name] = (order["from_seat"], oid)
            self.let_go()
        if kind == "arrive" and str(order.get("table")) == me and isinstance(seat, int):
            stack = order.get("stack")
            self._keep(order)
            with self._lock:
                self.arrivals[name] = (seat, int(stack) if isinstance(stack, int) else None, order)
            self.let_go()
        elif kind == "seat" and str(order.get("table")) == me and isinstance(seat, int) and "from_table" not in order:
            players = self._players()  # a redraw's seat (from_table) waits for his "arrive" with his chips
            if seat not in players and name not in players.values():
                self._keep(order)
                self._post(SeatPlayer(seat, name), order)

    def _bust(self, name: str, order: dict[str, Any], oid: str | None) -> None:
        """RRoP s15 20: a player out leaves his seat (once the hand is over), wherever he sits at this table
        (he may have come here since he went out: a redraw's seat); one on his way here stays away."""
        with self._lock:
            coming = self.arrivals.pop(name, None)
        if coming is not None:
            self._drop(coming[2].get("id") if isinstance(coming[2].get("id"), str) else None)
        seat = next((s for s, n in self._players().items() if n == name), None)
        if seat is None:
            self._drop(oid)
            return
        self._keep(order)
        with self._lock:
            self.departures[name] = (seat, oid)
        self.let_go()

    def rearm(self) -> int:
        """The orders the journal kept from before a restart wait again (their events not yet journaled)."""
        journal = getattr(self.daemon, "journal", None)
        kept = journal.kept_orders() if journal is not None else []
        for order in kept:
            self.on_order(order)
        if kept:
            log.info("re-armed the floor's orders kept in the journal", extra={"orders": len(kept),
                                                                                "table_id": self.table_id})
        return len(kept)

    def let_go(self, outputs: list[Output] | None = None) -> None:
        """Between hands, the players the floor sent away get up; those it sent here sit down once their
        seat is free (a daemon listener: after each event)."""
        service = self.daemon.service
        if service is None or not (self.departures or self.arrivals):
            return
        players = self._players()
        with self._lock:
            come = [(n, s, st, o) for n, (s, st, o) in self.arrivals.items()
                    if s not in players and n not in players.values()]
            for n, _seat, _stack, order in come:
                del self.arrivals[n]
                if isinstance(order.get("id"), str):  # posted once: journaled in a moment (_finished)
                    self.sitting.add(n)
        for name, seat, stack, order in come:
            self._post(SeatPlayer(seat, name, False, stack), order, sitting=name)
        engine = service.engine
        if engine is not None and not engine.over:
            return  # he plays the hand out; the hand's end calls this again
        with self._lock:
            due = [(n, s, oid) for n, (s, oid) in self.departures.items() if players.get(s) == n]
            # one the floor sends on before he has sat down here (this table broken, the room redrawn while
            # he walked here) gets up once he has: his arrival waits for its seat, or is being journaled
            coming = {n for n in self.departures if n in self.arrivals or n in self.sitting}
            gone = [(n, s, oid) for n, (s, oid) in self.departures.items() if players.get(s) != n and n not in coming]
            self.departures = {n: d for n, d in self.departures.items() if n in coming and players.get(d[0]) != n}
        for n, s, oid in gone:
            log.warning("the floor moved %s from seat %s, who is not there", n, s)
            self._drop(oid)
        for name, seat, oid in due:
            self._post(UnseatPlayer(seat), {"kind": "move", "player": name, "id": oid})

    def kill(self, order: dict[str, Any]) -> None:
        """TDA 26: the clock the floor ran on a player ran out: the table journals the report (source the
        floor) and its engine rules the hand dead with its citation (the seat to act leaves the betting,
        its chips stay in the pot; the ruling's alert goes to the display)."""
        service, seat = self.daemon.service, order.get("seat")
        engine = service.engine if service is not None else None
        if engine is None or engine.over or not isinstance(seat, int) or seat not in engine.view().active:
            log.warning("the floor ruled seat %s's hand dead, but it is not in a hand", seat,
                        extra={"table_id": self.table_id})
            return
        self._post(Report("clock_expired", seat), order)

    def _players(self) -> dict[int, str]:
        service = self.daemon.service
        return {s: p.name for s, p in service.table.players.items()} if service is not None else {}

    def _post(self, event: Any, order: dict[str, Any], sitting: str | None = None) -> None:
        self.applied.append(order)
        log.info("the floor's order: %s %s", order.get("kind"), order.get("player"),
                 extra={"table_id": self.table_id})
        oid = order.get("id")
        if not isinstance(oid, str):  # an order without an id (an older floor): applied as it comes
            self.daemon.post(event, SOURCE)
            return
        done = self.daemon.post_once(event, SOURCE, oid)
        # journaled (or refused, or carried out before): the order no longer waits
        done.add_done_callback(lambda f: self._finished(oid, f, sitting))

    def _finished(self, oid: str, fut: Any, sitting: str | None = None) -> None:
        if fut.exception() is not None:
            log.warning("the floor's order %s refused: %s", oid, fut.exception(), extra={"table_id": self.table_id})
        try:
            self._drop(oid)
        except Exception:  # the journal closed meanwhile (the daemon stopping): kept, re-armed on restart
            log.exception("could not drop the floor's order %s", oid)
        if sitting is not None:
            with self._lock:
                self.sitting.discard(sitting)
                waiting = sitting in self.departures
            if waiting:  # sent on before he sat down here: he gets up now (between hands)
                self.let_go()

    # ------------------------------------------------------------------ the subscriber
    def start(self) -> FloorOrders:
        # The controller's own (secret, stable) client id plus a suffix: its session survives a restart.
        client = subscriber(self.settings, f"{self.settings.client_id}-orders", orders_topic(self.table_id),
                            self._on_message, clean_session=False)
        client.on_subscribe = lambda *a: self.connected.set()
        self.daemon.listeners.append(self.let_go)
        self.rearm()
        client.loop_start()
        self.client = client
        return self

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        try:
            order = json.loads(message.payload)
            if isinstance(order, dict):
                self.on_order(order)
        except Exception:  # a bad order must never stop the subscriber
            log.exception("the floor's order not understood")

    def stop(self) -> None:
        if self.client is not None:
            self.client.disconnect()
            self.client.loop_stop()
            self.client = None
