"""The floor page and its JSON API, served by the floor service (stdlib HTTP server, one thread
per request; loopback by default).

* ``/floor/``: the page (``web/floor/``); ``/common/``: the shared card styles;
* ``GET /api/tables``: every table at a glance, with its oldest unacknowledged alert and its readers
  (the latest ``diagnostics``: readers not answering, misses, collisions, the scan cycle);
* ``GET /api/alerts?limit=``: the room's alert feed; ``POST /api/alerts/<table>/<id>/ack``;
* ``GET /api/hands?table=&dealer=&result=&limit=&before=``: the hand history;
* ``GET /api/hands/<table>/<hand>/<start_seq>``: one hand and its events, for the replay;
* ``GET /api/report?hours=`` (or ``since``/``until``), ``GET /api/report.csv``: the dealer report;
* ``GET /api/stream``: server-sent events (new alerts, table changes) so the page hears of a
  misdeal without polling;
* ``GET /api/health``: the ingest counters;
* ``GET /api/room``: the tournament (clock, seats, decisions), the cash room's games and lists, the
  action clocks; ``POST /api/room/<family>/<request>`` with a JSON body: a request to the director
  (:mod:`.director`: ``tournament/register``, ``tournament/bust``, ``cash/join_list``,
  ``clock/call`` ...), answered with the decisions it made; ``/floor/clock.html``: the tournament
  clock for a TV in the room.
"""

from __future__ import annotations

import json
import mimetypes
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from controller.app.webserver import ServerThread
from controller.errors import PokerTableError
from controller.floor.director import Director
from controller.floor.report import dealer_report, report_csv
from controller.floor.sources import Hub, Ingestor
from controller.floor.store import Store

WEB = Path(__file__).resolve().parent.parent.parent / "web"
STATIC = ("floor", "common")
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'self'")
_JSON_FIELDS = ("seats", "winners", "shown", "payouts", "holecards", "citations", "payload")


def _loads(row: dict[str, Any]) -> dict[str, Any]:
    for k in _JSON_FIELDS:
        if isinstance(row.get(k), str):
            row[k] = json.loads(row[k])
    return row


class FloorApi:
    """The queries behind the page (usable without HTTP, e.g. by the tests and the benchmark)."""

    def __init__(self, store: Store, ingestor: Ingestor | None = None, source: Any = None,
                 director: Director | None = None) -> None:
        self.store = store
        self.ingestor = ingestor
        self.source = source  # for /api/health: is the floor reading its tables
        self.director = director

    def tables(self) -> list[dict[str, Any]]:
        rows = self.store.query("SELECT * FROM tables ORDER BY table_id")
        active = self.store.query("SELECT table_id, alert_id, ts, ruling, reason, severity, message FROM rulings "
                                  "WHERE acked IS NULL ORDER BY ts")
        first: dict[str, dict[str, Any]] = {}
        for a in active:
            first.setdefault(a["table_id"], a)
        now = time.time()
        for r in rows:
            got = first.get(r["table_id"])
            r["alert"] = dict(got, age=round(now - float(got["ts"]), 1)) if got else None
            r["readers"] = self.ingestor.readers.get(r["table_id"]) if self.ingestor else None
        return rows

    def alerts(self, limit: int = 100) -> list[dict[str, Any]]:
        rows = self.store.query("SELECT table_id, alert_id, hand_id, seq, ts, received, dealer, ruling, reason, "
                                "severity, message, citations, acked, acked_by FROM rulings ORDER BY ts DESC LIMIT ?",
                                (limit,))
        return [_loads(r) for r in rows]

    def hands(self, table: str | None = None, dealer: str | None = None, result: str | None = None,
              limit: int = 50, before: float | None = None) -> list[dict[str, Any]]:
        where: list[str] = []
        params: list[Any] = []
        for col, val in (("table_id", table), ("dealer", dealer), ("result", result)):
            if val:
                where.append(f"{col} = ?")
                params.append(val)
        if before is not None:
            where.append("started < ?")
            params.append(before)
        sql = ("SELECT table_id, hand_id, start_seq, end_seq, started, ended, game, rules, structure, stakes, "
               "dealer, result, summary FROM hands")
        if where:
            sql += " WHERE " + " AND ".join(where)
        return self.store.query(sql + " ORDER BY started DESC LIMIT ?", (*params, limit))

    def hand(self, table: str, hand_id: int, start_seq: int) -> dict[str, Any] | None:
        rows = self.store.query("SELECT * FROM hands WHERE table_id = ? AND hand_id = ? AND start_seq = ?",
                                (table, hand_id, start_seq))
        if not rows:
            return None
        hand = _loads(rows[0])
        end = hand["end_seq"] if hand["end_seq"] is not None else 2**62
        events = self.store.query("SELECT seq, kind, ts, payload FROM events WHERE table_id = ? AND hand_id = ? "
                                  "AND seq >= ? AND seq <= ? ORDER BY seq, id", (table, hand_id, start_seq, end))
        hand["events"] = [_loads(e) for e in events]
        return hand


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Cache-Control", "no-store")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, value: Any, status: int = 200) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json({"error": message}, status)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        url = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query).items()}
        api = self.server.api
        parts = [unquote(p) for p in url.path.split("/") if p]
        try:
            if not parts:
                self._send(302, b"", "text/plain", {"Location": "/floor/"})
            elif parts == ["favicon.ico"]:
                self._send(204, b"", "image/x-icon")
            elif parts[0] != "api":
                self._static(parts)
            elif parts[1:] == ["tables"]:
                self._json(api.tables())
            elif parts[1:] == ["alerts"]:
                self._json(api.alerts(int(q.get("limit", 100))))
            elif parts[1:] == ["hands"]:
                self._json(api.hands(q.get("table"), q.get("dealer"), q.get("result"), int(q.get("limit", 50)),
                                     float(q["before"]) if "before" in q else None))
            elif len(parts) == 5 and parts[1] == "hands":
                hand = api.hand(parts[2], int(parts[3]), int(parts[4]))
                self._json(hand) if hand else self._error(404, "no such hand")
            elif parts[1:] in (["report"], ["report.csv"]):
                until = float(q.get("until", time.time()))
                since = float(q.get("since", until - 3600 * float(q.get("hours", 8))))
                report = dealer_report(api.store, since, until)
                if parts[1] == "report.csv":
                    self._send(200, report_csv(report).encode(), "text/csv; charset=utf-8",
                               {"Content-Disposition": 'attachment; filename="dealer-report.csv"'})
                else:
                    self._json(report)
            elif parts[1:] == ["stream"]:
                self._stream()
            elif parts[1:] == ["room"] and api.director is not None:
                self._json(api.director.state())
            elif parts[1:] == ["health"]:
                c = api.ingestor.counters if api.ingestor else None
                source = getattr(api, "source", None)
                connected = bool(source is not None and source.connected.is_set())
                self._json({"connected": connected, "counters": c.__dict__ if c else None,
                            "store": api.store.counts()})
            else:
                self._error(404, "not found")
        except (ValueError, KeyError) as exc:
            self._error(400, f"bad request: {exc}")

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        parts = [unquote(p) for p in urlsplit(self.path).path.split("/") if p]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        director = self.server.api.director
        if len(parts) == 4 and parts[:2] == ["api", "room"] and director is not None:
            try:
                request = json.loads(body or b"{}")
                if not isinstance(request, dict):
                    raise ValueError("the body must be a JSON object")
                decisions = director.request(f"{parts[2]}.{parts[3]}", request)
            except (ValueError, PokerTableError) as exc:
                return self._error(400, str(exc))
            return self._json({"decisions": decisions})
        if len(parts) == 5 and parts[:2] == ["api", "alerts"] and parts[4] == "ack":
            who = "floor"
            if body:
                try:
                    who = str(json.loads(body).get("by") or "floor")[:64]
                except (ValueError, AttributeError):
                    return self._error(400, "body must be a JSON object")
            ok = self.server.api.store.acknowledge(parts[2], parts[3], who)
            if ok:
                self.server.hub.publish({"type": "ack", "table_id": parts[2], "alert_id": parts[3]})
            return self._json({"ok": ok}, 200 if ok else 404)
        return self._error(404, "not found")

    def _static(self, parts: list[str]) -> None:
        if parts[0] not in STATIC or any(p in ("..", ".") or p.startswith(".") for p in parts):
            return self._error(404, "not found")
        path = WEB.joinpath(*parts)
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            return self._error(404, "not found")
        ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if ctype in ("application/javascript", "text/javascript"):
            ctype = "text/javascript"
        self._send(200, path.read_bytes(), ctype)

    def _stream(self) -> None:
        hub = self.server.hub
        q = hub.subscribe()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"retry: 500\n\n")
            self.wfile.flush()
            while not self.server.stopping.is_set():
                try:
                    note = q.get(timeout=15)
                except queue.Empty:
                    self.wfile.write(b": ping\n\n")
                else:
                    self.wfile.write(f"data: {json.dumps(note)}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            hub.unsubscribe(q)
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], api: FloorApi, hub: Hub) -> None:
        super().__init__(address, _Handler)
        self.api = api
        self.hub = hub
        self.stopping = threading.Event()


class FloorServer(ServerThread):
    """``FloorServer(api, hub, port=0)``: serves in a background thread; ``.url``, ``.stop()``."""

    def __init__(self, api: FloorApi, hub: Hub, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server: _Server = self._serve(_Server((host, port), api, hub), "floor-http", poll_interval=0.2)

    def stop(self) -> None:
        self._server.stopping.set()  # the open /api/stream responses see it and end
        super().stop()
