"""Helpers for the room tests: the rig (``controller.floor.rig``) and a network that can be cut."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from controller.floor.rig import (  # noqa: F401 - re-exported for the tests
    BridgedTable,
    ChildProcess,
    FloorProcess,
    LightTable,
    Recorder,
    event_keys,
    floor_rows,
)


def start_tournament(director: Any, structure: dict[str, Any], players: int, tables: list[Any],
                     **create: Any) -> Any:
    """``tournament.create`` (the structure and ``create``: seed, draw), ``players`` registered as p00, p01...,
    ``tournament.start`` on ``tables``; the director's tournament."""
    director.request("tournament.create", {"structure": structure, **create})
    for i in range(players):
        director.request("tournament.register", {"name": f"p{i:02d}"})
    director.request("tournament.start", {"tables": tables})
    return director.tournament


@contextmanager
def room(tables: dict[str, str]) -> Iterator[tuple[Any, Any, ExitStack]]:
    """The room's servers for one test: a throwaway PostgreSQL and a one-node NATS cluster
    (``tables``: table id -> its MQTT password), with the stack the test puts the stop of each thing
    it starts on them (``stack.callback(x.stop)``): at the end, pass or fail, those stop, the last
    started first, then the cluster, then PostgreSQL."""
    from controller.floor.room import NatsCluster, Postgres

    with ExitStack() as stack:
        pg = stack.enter_context(Postgres())
        cluster = stack.enter_context(NatsCluster(tables, size=1))
        yield pg, cluster, stack


class NetCut:
    """TCP proxies in front of the room's MQTT listeners that can black-hole the table's uplink.

    ``cut()``: nothing gets through any more, in either direction, and nothing is refused
    (packets dropped, as when a cable or a switch goes): bytes wait in the socket buffers,
    new connections are accepted but reach nothing.  ``restore()``: what waited goes through
    (as TCP retransmits it), new connections reach their node.  A peer that gave up meanwhile
    closes its side, as it would on a real network."""

    def __init__(self, targets: list[tuple[str, int]]) -> None:
        self.targets = targets
        self.up = threading.Event()
        self.up.set()
        self._stop = threading.Event()
        self.listeners = []
        for target in targets:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            s.listen(64)
            s.settimeout(0.2)
            self.listeners.append(s)
            threading.Thread(target=self._accept, args=(s, target), daemon=True).start()

    @property
    def addresses(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", s.getsockname()[1]) for s in self.listeners]

    def _accept(self, s: socket.socket, target: tuple[str, int]) -> None:
        while not self._stop.is_set():
            try:
                client, _ = s.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._serve, args=(client, target), daemon=True).start()

    def _serve(self, client: socket.socket, target: tuple[str, int]) -> None:
        while not self.up.wait(0.2):  # the uplink is down: the connection reaches nothing yet
            if self._stop.is_set():
                client.close()
                return
        try:
            upstream = socket.create_connection(target, timeout=2)
        except OSError:
            client.close()
            return
        self._pipe(client, upstream)

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while not self._stop.is_set():
                if not self.up.is_set():
                    time.sleep(0.05)  # black-holed: nothing read, nothing delivered
                    continue
                r, _, _ = select.select([a, b], [], [], 0.2)
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass

    def cut(self) -> None:
        self.up.clear()

    def restore(self) -> None:
        self.up.set()

    def close(self) -> None:
        self._stop.set()
        for s in self.listeners:
            s.close()




class DaemonProcess(ChildProcess):
    """``tablectl run`` for a tournament table as its own process, on ``broker`` with its controller login,
    so a test can ``kill -9`` it mid-hand and start it again on the same journal."""

    def __init__(self, folder, table: str, port: int, password: str, *, size: int = 9,
                 starting_stack: int = 5000) -> None:
        from controller.geometry import ZoneMap
        from controller.rules.decks import DeckRegistry

        self.folder = folder
        self.journal = folder / f"{table}.sqlite"
        (folder / f"{table}.pass").write_text(password)
        DeckRegistry([]).save(folder / "decks.json")
        antennas = "\n".join(f'"{k}" = "{v}"' for k, v in ZoneMap.standard(size).to_dict().items())
        self.config = folder / f"{table}.toml"
        self.config.write_text(f"""
[table]
id = "{table}"
size = {size}
game = "holdem"
rules = "robert"
event = "tournament"

[stakes]
small_blind = 1
big_blind = 2
starting_stack = {starting_stack}

[antennas]
{antennas}

[serial]
enabled = false

[mqtt]
url = "mqtt://127.0.0.1:{port}"
username = "controller"
password_file = "{table}.pass"

[broadcast]
delay = 0

[journal]
path = "{self.journal.name}"

[web]
enabled = false
""")
        self.log = folder / f"{table}.log"
        self.proc = None

    def start(self):
        import os
        import subprocess
        import sys

        env = dict(os.environ, PYTHONUNBUFFERED="1")
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config", str(self.config),
                                          "--registry", str(self.folder / "decks.json"), "--log", "json"],
                                         env=env, stdout=subprocess.DEVNULL, stderr=log, cwd=self.folder)
        return self

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Read the daemon's journal (SQLite, read-only) while it runs."""
        import sqlite3

        if not self.journal.exists():
            return []
        db = sqlite3.connect(f"file:{self.journal}?mode=ro", uri=True, timeout=5)
        try:
            return db.execute(sql, params).fetchall()
        except sqlite3.OperationalError:  # not created yet
            return []
        finally:
            db.close()

    def seats(self) -> dict[int, str]:
        """Who sits where, from the journal's seat and unseat events (what a replay rebuilds)."""
        import json

        out: dict[int, str] = {}
        for kind, data in self.rows("SELECT kind, data FROM events WHERE kind IN ('seat_player', 'unseat_player') "
                                    "ORDER BY seq"):
            d = json.loads(data)
            if kind == "seat_player":
                out[d["seat"]] = d["name"]
            else:
                out.pop(d["seat"], None)
        return out
