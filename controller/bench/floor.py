"""``tablectl bench floor``: a room of N tables dealing into a 3-node NATS JetStream cluster, the
floor service consuming into PostgreSQL, the floor page open in Chromium.

A few tables are full: their own Mosquitto bridged to the room (``systemd/room/``), the daemon's
own service, publisher and MQTT link dealing on it.  The rest are lightweight: the same service
and publisher, straight on the cluster's MQTT listeners with their own credentials (the topics a
bridge forwards).  Every table deals random legal hands with the occasional dealer mistake
(:mod:`controller.sim.dealer`) at ``pace`` seconds a move.  Mid-run a node is killed (and later
restarted) and the floor service is ``kill -9``-ed and restarted.

Reports: hands and events per second ingested (steady and while catching up after the floor's
restart), table-to-floor-page alert latency (the alert's timestamp at the table to the moment the
page in Chromium receives it) p50/p99, the memory of the cluster, the floor service, PostgreSQL and
the simulated tables, what reaches the room per table (messages/s, bytes/s; apart, the floor's
``floor.stored`` reports back to it) and the storage per hand, and what the node kill and the floor
restart cost: hands/events lost or doubled (must be 0) and how many events the tables resent.
All figures are measured on simulated tables (the daemon's publishing path, dealer_sim's hands).
"""

from __future__ import annotations

import asyncio
import secrets
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.floor.rig import BridgedTable, FloorProcess, LightTable, floor_rows, tally
from controller.floor.room import NatsCluster, Postgres, rss_kb
from controller.floor.sources import STREAM, NatsSettings, connect_nats, wait_for


def _pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    k = min(len(values) - 1, max(0, round(p / 100 * (len(values) - 1))))
    return round(values[k], 1)


def _pg_rss_kb(pg: Postgres) -> int:
    """The postmaster and its children."""
    pid = pg.pid()
    if pid is None:
        return 0
    total = rss_kb(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    for child in children:
        total += rss_kb(int(child))
    return total


class RoomTap:
    """A core NATS subscription to everything the tables send the room: messages and bytes per table;
    apart, the floor's ``floor.stored`` reports back to the tables."""

    def __init__(self, cluster: NatsCluster) -> None:
        self.msgs: dict[str, int] = defaultdict(int)
        self.bytes: dict[str, int] = defaultdict(int)
        self.reports = 0
        self.report_bytes = 0
        self._stop = threading.Event()
        self.stream: dict[str, Any] = {}
        self.cluster = cluster
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self._thread.start()

    def _settings(self) -> NatsSettings:
        assert self.cluster.pki is not None
        return NatsSettings(self.cluster.servers, "floor", self.cluster.floor_password, ca=str(self.cluster.pki.ca))

    async def _main(self) -> None:
        nc = await connect_nats(self._settings(), name="bench-tap")

        async def cb(m: Any) -> None:
            if m.subject.endswith(".floor.stored"):
                self.reports += 1
                self.report_bytes += len(m.data) + len(m.subject)
                return
            table = m.subject.split(".")[1]
            self.msgs[table] += 1
            self.bytes[table] += len(m.data) + len(m.subject)

        await nc.subscribe("poker.>", cb=cb)
        while not self._stop.is_set():
            await asyncio.sleep(0.2)
        try:
            info = await nc.jetstream().stream_info(STREAM)
            self.stream = {"messages": info.state.messages, "bytes": info.state.bytes}
        except Exception as exc:  # the report says so rather than failing the run
            self.stream = {"error": str(exc)}
        await nc.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(15)


def run_bench(tables: int = 50, full: int = 3, pace: float = 1.5, gap: float = 5.0, seconds: float = 150.0,
              progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    from controller.app.webserver import launch_chromium

    say = progress or (lambda msg: None)
    full = min(full, tables)
    folder = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    ids = [f"t{i:03d}" for i in range(1, tables + 1)]
    passwords = {t: secrets.token_urlsafe(10) for t in ids}
    timeline: dict[str, float] = {}
    samples: dict[str, list[int]] = defaultdict(list)
    say("starting PostgreSQL and a 3-node NATS cluster")
    pg = Postgres().start()
    cluster = NatsCluster(passwords).start()
    floor = FloorProcess(cluster, pg.url, folder).start()
    room = RoomTap(cluster)
    db_bytes_start = int(floor_rows(pg.url, "SELECT pg_database_size(current_database()) AS n")[0]["n"])
    rigs: list[Any] = []
    result: dict[str, Any] = {"tables": tables, "full_tables": full, "light_tables": tables - full,
                              "pace_s_per_move": pace, "gap_s_between_hands": gap, "run_s": seconds}
    try:
        say(f"starting {full} bridged tables and {tables - full} lightweight tables")
        for i, t in enumerate(ids):
            if i < full:
                rigs.append(BridgedTable(t, cluster, passwords[t], pace=pace, seed=i).start())
            else:
                rigs.append(LightTable(t, cluster, passwords[t], pace=pace, seed=i).start())
            rigs[-1].dealer.gap = gap
        with launch_chromium({"width": 1200, "height": 800}) as ctx:
            page = ctx.new_page()
            page.goto(floor.url + "/floor/")
            page.wait_for_function("() => document.querySelector('#live').classList.contains('up')", timeout=20000)
            t0 = time.time()
            timeline["start"] = t0
            for r in rigs:
                r.deal()
            seen: dict[str, float] = {}

            def events_stored() -> int:
                return int(floor_rows(pg.url, "SELECT COUNT(*) AS n FROM events")[0]["n"])

            def hands_stored() -> int:
                return int(floor_rows(pg.url, "SELECT COUNT(*) AS n FROM hands")[0]["n"])

            marks: dict[str, tuple[float, int, int]] = {}
            plan = [(0.15, "steady_from"), (0.40, "steady_to"), (0.40, "kill_node"), (0.50, "restart_node"),
                    (0.58, "kill_floor"), (0.66, "restart_floor"), (1.0, "stop")]
            for frac, what in plan:
                while time.time() < t0 + frac * seconds:
                    time.sleep(1)
                    seen.update(page.evaluate("() => window.floorAlertsSeen"))
                    samples["cluster_kb"].append(cluster.rss_kb())
                    samples["floor_kb"].append(rss_kb(floor.proc.pid) if floor.proc else 0)
                    samples["postgres_kb"].append(_pg_rss_kb(pg))
                    samples["tables_kb"].append(rss_kb())
                timeline[what] = time.time()
                say(f"{what} at {timeline[what] - t0:.0f} s")
                if what in ("steady_from", "steady_to"):
                    marks[what] = (time.time(), events_stored(), hands_stored())
                elif what == "kill_node":
                    cluster.kill(0)
                elif what == "restart_node":
                    cluster.restart(0)
                elif what == "kill_floor":
                    floor.kill()
                elif what == "restart_floor":
                    before = events_stored()
                    marks["restart"] = (time.time(), before, hands_stored())
                    floor.start()
                    page.wait_for_function("() => document.querySelector('#live').classList.contains('up')",
                                           timeout=30000)
                    timeline["floor_up"] = time.time()
            say("stopping the tables and waiting for the floor to settle")
            for r in rigs:
                r.dealer.stop()
            for r in rigs:
                r.finish()
            published_hands = sum(r.script.hand_starts for r in rigs)
            published_events = sum(r.script.events_published for r in rigs)
            try:
                wait_for(lambda: hands_stored() >= published_hands and events_stored() >= published_events, 120,
                         "every hand on the floor")
            except TimeoutError:
                say("the floor did not get everything within 120 s")
            seen.update(page.evaluate("() => window.floorAlertsSeen"))
        room.stop()
        # ---------------------------------------------------------------- figures
        (a_t, a_e, a_h), (b_t, b_e, b_h) = marks["steady_from"], marks["steady_to"]
        steady = b_t - a_t
        result["ingest"] = {"events_per_s": round((b_e - a_e) / steady, 1),
                            "hands_per_s": round((b_h - a_h) / steady, 2), "window_s": round(steady, 1)}
        # Catch-up: the backlog the floor's absence left, drained after its restart (the rate from the
        # first event the restarted floor stored to the last of the backlog).
        r_t, r_e, _ = marks["restart"]
        backlog_end = _drained_at(pg.url, r_t)
        if backlog_end is not None and backlog_end[0] > backlog_end[2]:
            drained_at, held, first = backlog_end
            result["ingest"]["catch_up_events_per_s"] = round((held - r_e) / (drained_at - first), 1)
            result["ingest"]["catch_up_s"] = round(backlog_end[0] - timeline["restart_floor"], 1)
        rulings = floor_rows(pg.url, "SELECT table_id, alert_id, ts, ruling FROM rulings")
        # Steady state, and the two outages apart: a table's reconnection to another node (the entry node
        # killed) and the floor's absence delay what they catch, by design.
        windows = {"node_outage": (timeline["kill_node"], timeline["restart_node"] + 5),
                   "floor_outage": (timeline["kill_floor"], timeline["floor_up"] + 2)}
        lat: dict[str, list[float]] = {"steady": [], "node_outage": [], "floor_outage": []}
        lat_misdeal: list[float] = []
        for r in rulings:
            key = f"{r['table_id']}/{r['alert_id']}"
            if key not in seen:
                continue
            ms = seen[key] - float(r["ts"]) * 1000
            where = next((w for w, (a, b) in windows.items() if a <= float(r["ts"]) <= b), "steady")
            lat[where].append(ms)
            if where == "steady" and r["ruling"] == "misdeal":
                lat_misdeal.append(ms)
        result["alert_latency_ms"] = {
            "p50": _pct(lat["steady"], 50), "p99": _pct(lat["steady"], 99), "max": _pct(lat["steady"], 100),
            "alerts": len(lat["steady"]), "misdeals_p99": _pct(lat_misdeal, 99), "misdeals": len(lat_misdeal),
            **{f"during_{w}": {"p50": _pct(v, 50), "p99": _pct(v, 99), "alerts": len(v)}
               for w, v in lat.items() if w != "steady"},
            "alerts_raised": len(rulings), "alerts_seen_by_page": len(seen)}
        result["memory_mb"] = {k.removesuffix("_kb"): round(max(v) / 1024, 1) for k, v in samples.items() if v}
        result["memory_mb"]["note"] = "peak RSS: cluster = 3 nats-server; tables = this process (all simulated tables)"
        # Nothing lost, nothing doubled: every table against what it published.
        totals: dict[str, int] = defaultdict(int)
        for r in rigs:
            published = r.truth.all() if isinstance(r, BridgedTable) else r.sent
            for k, v in tally(pg.url, r.table_id, published).items():
                if isinstance(v, int):
                    totals[k] += v
                elif v:
                    result.setdefault("missing_sample", {})[r.table_id] = v
        # Resent: events a table sent again because the floor's report lacked them (lost with the
        # node, or only late); the store's idempotence keeps the copies out.
        resent = sum((r.ack.resender if isinstance(r, BridgedTable) else r.link.resender).resent for r in rigs)
        result["node_kill_and_floor_restart"] = dict(totals, lost=totals["missing"],
                                                     doubled=totals["doubled"] + totals["extra"], resent=resent)
        run_s = timeline["stop"] - t0
        hands = totals["hands_published"]
        db_bytes = int(floor_rows(pg.url, "SELECT pg_database_size(current_database()) AS n")[0]["n"])
        result["per_table"] = {
            "messages_per_s": round(sum(room.msgs.values()) / tables / run_s, 2),
            "bytes_per_s": round(sum(room.bytes.values()) / tables / run_s, 1),
            "floor_reports_per_s": round(room.reports / tables / run_s, 2),
            "floor_report_bytes_per_s": round(room.report_bytes / tables / run_s, 1),
            "hands_per_hour": round(hands / tables / run_s * 3600, 1),
            "events_per_hand": round(totals["published"] / max(1, hands), 1),
            "room_bytes_per_hand": round(sum(room.bytes.values()) / max(1, hands)),
            "postgres_bytes_per_hand": round((db_bytes - db_bytes_start) / max(1, hands)),
            "jetstream_bytes_per_hand": round(room.stream.get("bytes", 0) / max(1, hands)) if room.stream else None,
        }
        result["totals"] = {"hands": hands, "events": totals["published"], "rulings": len(rulings),
                            "postgres_bytes": db_bytes, "stream": room.stream}
        result["timeline_s"] = {k: round(v - t0, 1) for k, v in timeline.items() if k != "start"}
        result["source"] = "simulated tables (the daemon's TableService/Publisher, dealer_sim hands); real servers"
        return result
    finally:
        for r in rigs:
            try:
                r.stop()
            except Exception:  # a rig that failed to start: the rest still stop
                pass
        floor.stop()
        cluster.stop()
        pg.stop()


def _drained_at(db: str, since: float) -> tuple[float, int, float] | None:
    """When the floor caught up after its restart (``since``: just before it): the newest ``received``
    of the events that were published before the restart (their backlog), how many events it held
    then, and when the restarted floor stored its first event."""
    rows = floor_rows(db, "SELECT MAX(received) AS r FROM events WHERE ts < ? AND received >= ?", (since, since))
    if not rows or rows[0]["r"] is None:
        return None
    at = float(rows[0]["r"])
    n = floor_rows(db, "SELECT COUNT(*) AS n FROM events WHERE received <= ?", (at,))[0]["n"]
    first = floor_rows(db, "SELECT MIN(received) AS r FROM events WHERE received >= ?", (since,))[0]["r"]
    return at, int(n), float(first)


__all__ = ["run_bench"]

if __name__ == "__main__":  # pragma: no cover
    import json
    import sys

    print(json.dumps(run_bench(tables=int(sys.argv[1]) if len(sys.argv) > 1 else 50, progress=print), indent=2))
