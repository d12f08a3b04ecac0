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
  journals the report ``clock_expired`` and its engine rules the hand dead, citing the rule.

Everything else (levels, halts, breaks, the clock's count) only reaches the dealer's display, which reads
the same topic. A refused order (the seat taken, the player not at the seat named) is logged and changes nothing.
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
from typing import Any

from controller.mqtt.link import MqttSettings
from controller.rules.events import Report, SeatPlayer, UnseatPlayer
from controller.service import Output

log = logging.getLogger("controller.floor_orders")

SOURCE = "floor"


def orders_topic(table_id: str) -> str:
    return f"floor/room/table/{table_id}"


class FloorOrders:
    """The floor's orders for one table, applied through the daemon's engine owner (``daemon.post``)."""

    def __init__(self, daemon: Any, settings: MqttSettings, table_id: str) -> None:
        self.daemon = daemon
        self.settings = settings
        self.table_id = table_id
        self.client: Any = None
        self.connected = threading.Event()
        self._lock = threading.Lock()
        #: players to let go once the hand in progress is over: name -> the seat the floor named
        self.departures: dict[str, int] = {}
        #: players to seat once their seat is free: name -> (seat, chips, the order)
        self.arrivals: dict[str, tuple[int, int | None, dict[str, Any]]] = {}
        self.applied: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ orders
    def on_order(self, order: dict[str, Any]) -> None:
        kind, me = order.get("kind"), self.table_id
        name, seat = order.get("player"), order.get("seat")
        if kind == "ruling" and order.get("ruling") == "dead_hand" and str(order.get("table")) == me:
            self.kill(order)
            return
        if not isinstance(name, str):
            return
        if kind in ("move", "seat") and str(order.get("from_table")) == me and isinstance(order.get("from_seat"), int):
            with self._lock:
                self.departures[name] = order["from_seat"]
            self.let_go()
        if kind == "arrive" and str(order.get("table")) == me and isinstance(seat, int):
            stack = order.get("stack")
            with self._lock:
                self.arrivals[name] = (seat, int(stack) if isinstance(stack, int) else None, order)
            self.let_go()
        elif kind == "seat" and str(order.get("table")) == me and isinstance(seat, int) and "from_table" not in order:
            players = self._players()  # a redraw's seat (from_table) waits for his "arrive" with his chips
            if seat not in players and name not in players.values():
                self._post(SeatPlayer(seat, name), order)

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
            for n, *_ in come:
                del self.arrivals[n]
        for name, seat, stack, order in come:
            self._post(SeatPlayer(seat, name, False, stack), order)
        engine = service.engine
        if engine is not None and not engine.over:
            return  # he plays the hand out; the hand's end calls this again
        with self._lock:
            due = [(n, s) for n, s in self.departures.items() if players.get(s) == n]
            for n in [n for n, s in self.departures.items() if players.get(s) != n]:
                log.warning("the floor moved %s from seat %s, who is not there", n, self.departures[n])
            self.departures.clear()
        for name, seat in due:
            self._post(UnseatPlayer(seat), {"kind": "move", "player": name})

    def kill(self, order: dict[str, Any]) -> None:
        """TDA 26: the clock the floor ran on a player ran out: the table journals the report (source the
        floor) and its engine rules the hand dead with its citation (the seat to act leaves the betting,
        its chips stay in the pot; the ruling's alert goes to the display)."""
        service, seat = self.daemon.service, order.get("seat")
        engine = service.engine if service is not None else None
        if engine is None or engine.over or not isinstance(seat, int) or seat not in engine.active:
            log.warning("the floor ruled seat %s's hand dead, but it is not in a hand", seat,
                        extra={"table_id": self.table_id})
            return
        self._post(Report("clock_expired", seat), order)

    def _players(self) -> dict[int, str]:
        service = self.daemon.service
        return {s: p.name for s, p in service.table.players.items()} if service is not None else {}

    def _post(self, event: Any, order: dict[str, Any]) -> None:
        self.applied.append(order)
        log.info("the floor's order: %s %s", order.get("kind"), order.get("player"),
                 extra={"table_id": self.table_id})
        self.daemon.post(event, SOURCE)

    # ------------------------------------------------------------------ the subscriber
    def start(self) -> FloorOrders:
        import paho.mqtt.client as mqtt

        s = self.settings
        # The controller's own (secret, stable) client id plus a suffix: its session survives a restart.
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"{s.client_id}-orders",
                             clean_session=False, protocol=mqtt.MQTTv311)
        if s.username:
            client.username_pw_set(s.username, s.password)
        host, port, tls = s.host_port
        if tls:
            client.tls_set(ca_certs=s.ca_file, certfile=s.certfile, keyfile=s.keyfile, cert_reqs=ssl.CERT_REQUIRED)
        topic = orders_topic(self.table_id)

        def on_connect(c: Any, u: Any, f: Any, rc: Any, p: Any = None) -> None:
            if not rc.is_failure:
                c.subscribe(topic, qos=1)

        client.on_connect = on_connect
        client.on_subscribe = lambda *a: self.connected.set()
        client.on_message = self._on_message
        client.reconnect_delay_set(0.5, 10)  # type: ignore[arg-type]  # paho takes float seconds
        client.connect_async(host, port, keepalive=30)
        client.loop_start()
        self.client = client
        self.daemon.listeners.append(self.let_go)
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
