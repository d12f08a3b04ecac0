"""The room's tier on one machine, for the tests and the benchmark (a real room runs the same
configs on three hosts: ``systemd/room/``).

* :class:`NatsCluster`: three Debian ``nats-server`` processes on loopback (JetStream, MQTT
  with TLS, TLS routes) rendered from ``systemd/room/nats-node.conf``, with per-table users
  that may publish only their own table's subjects; ``kill(i)``/``restart(i)`` a node.
* :class:`Postgres`: Debian's PostgreSQL in a temporary folder on a free port (``initdb`` and
  ``pg_ctl``, as the ``postgres`` user when run as root).
* :func:`table_broker`: a table's own Mosquitto with ``systemd/room/mosquitto-bridge.conf``.

Nothing here is needed in production.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import string
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from controller.errors import PokerTableError
from controller.floor.pki import Pki, make_pki
from controller.mqtt.broker import Broker, find_executable, free_port
from controller.processes import stop_process

HOST = "127.0.0.1"
ROOM_CONF = Path(__file__).resolve().parent.parent.parent / "systemd" / "room"
PG_BIN = Path("/usr/lib/postgresql")


class RoomError(PokerTableError, RuntimeError):
    """A server of the room's tier could not start."""


def _wait_port(port: int, timeout: float, proc: subprocess.Popen | None = None, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RoomError(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection((HOST, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RoomError(f"{what} did not listen on {port} within {timeout} s")


def nats_server() -> str:
    for d in ("/usr/sbin", "/usr/bin", "/usr/local/bin"):
        if os.access(f"{d}/nats-server", os.X_OK):
            return f"{d}/nats-server"
    found = shutil.which("nats-server")
    if not found:
        raise RoomError("nats-server not found: sudo apt-get install -y nats-server (scripts/bootstrap does)")
    return found


def table_user(table_id: str) -> str:
    return f"table-{table_id}"


def users_conf(tables: dict[str, str], floor_password: str, base: str = "poker") -> str:
    """The cluster's ``authorization``: the floor (JetStream API, its acks, inboxes, the
    ``<base>.<table>.floor.stored`` reports, its room decisions ``floor.room.>`` and a tournament's new
    level ``<base>.<table>.request.level``) and one user per table that may only publish
    ``<base>.<table>.>`` except its ``floor.>`` (only the floor says what it stored) and its
    ``request.>`` (only the floor asks a level of it over the room), may only read its own
    ``floor.stored``, the floor's level, its own orders ``floor.room.table.<table>`` and its own
    ``request.level``, and only over MQTT (MQTT's own JetStream bookkeeping runs inside the server, not
    under the table's permissions)."""
    b = base.replace("/", ".")
    users = [
        f'{{user: "floor", password: "{floor_password}", permissions: {{'
        f'publish: {{allow: ["$JS.API.>", "$JS.ACK.>", "_INBOX.>", "{b}.*.floor.stored", "floor.room.>", '
        f'"{b}.*.request.level"]}}, '
        f'subscribe: {{allow: ["_INBOX.>", "{b}.>"]}}}}}}'
    ]
    for table_id, password in sorted(tables.items()):
        users.append(f'{{user: "{table_user(table_id)}", password: "{password}", permissions: {{'
                     f'publish: {{allow: ["{b}.{table_id}.>"], '
                     f'deny: ["{b}.{table_id}.floor.>", "{b}.{table_id}.request.>"]}}, '
                     f'subscribe: {{allow: ["{b}.{table_id}.floor.stored", "floor.room.level", '
                     f'"floor.room.table.{table_id}", "{b}.{table_id}.request.level", "$MQTT.sub.>"]}}}}, '
                     f'allowed_connection_types: ["MQTT"]}}')
    return "authorization {\n  users: [\n    " + "\n    ".join(users) + "\n  ]\n}\n"


@dataclass
class NatsNode:
    name: str
    folder: Path
    client_port: int
    route_port: int
    mqtt_port: int
    monitor_port: int
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"tls://{HOST}:{self.client_port}"

    def start(self, binary: str) -> None:
        log = open(self.folder / "nats.log", "ab")  # noqa: SIM115 - the process keeps it
        self.proc = subprocess.Popen([binary, "-c", str(self.folder / "nats.conf")], stdout=log, stderr=log,
                                     start_new_session=True)
        log.close()

    def rss_kb(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return 0
        return _rss_kb(self.proc.pid)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> None:
        if self.proc is None:
            return
        stop_process(self.proc, timeout, sig)
        self.proc = None


class _InFolder:
    """A server run from its own scratch folder: ``stop()`` halts it and removes the folder (unless
    ``cleanup=False``); a context manager that starts and stops it."""

    folder: Path

    def start(self) -> Self:
        raise NotImplementedError

    def _halt(self) -> None:
        raise NotImplementedError

    def stop(self, cleanup: bool = True) -> None:
        self._halt()
        if cleanup:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class NatsCluster(_InFolder):
    """Three nodes on loopback (``size=1``: one node, no cluster); ``tables``: table id -> MQTT password."""

    tables: dict[str, str]
    size: int = 3
    base: str = "poker"
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="poker-room-")))
    floor_password: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    nodes: list[NatsNode] = field(default_factory=list)
    pki: Pki | None = None
    max_file_store: str = "1GB"

    def start(self, timeout: float = 30) -> Self:
        binary = nats_server()
        self.pki = make_pki(self.folder / "pki")
        template = string.Template((ROOM_CONF / "nats-node.conf").read_text())
        used: set[int] = set()

        def port() -> int:
            while True:
                p = free_port()
                if p not in used:
                    used.add(p)
                    return p

        for i in range(self.size):
            d = self.folder / f"n{i + 1}"
            d.mkdir(parents=True, exist_ok=True)
            self.nodes.append(NatsNode(f"n{i + 1}", d, port(), port(), port(), port()))
        (self.folder / "users.conf").write_text(users_conf(self.tables, self.floor_password, self.base))
        for node in self.nodes:
            routes = ", ".join(f"nats-route://{HOST}:{n.route_port}" for n in self.nodes if n is not node)
            conf = template.substitute(
                name=node.name, host=HOST, client_port=node.client_port, monitor_port=node.monitor_port,
                store_dir=node.folder / "js", max_file_store=self.max_file_store, cert=self.pki.cert,
                key=self.pki.key, ca=self.pki.ca, cluster="room", route_port=node.route_port, routes=routes,
                mqtt_port=node.mqtt_port, replicas=min(3, self.size))
            if self.size == 1:  # one node (a quick test): JetStream without a cluster, which needs routes
                conf = re.sub(r"^cluster \{.*?^\}\n", "", conf, flags=re.S | re.M)
            (node.folder / "nats.conf").write_text(conf)
            shutil.copy(self.folder / "users.conf", node.folder / "users.conf")
        for node in self.nodes:
            node.start(binary)
        for node in self.nodes:
            _wait_port(node.mqtt_port, timeout, node.proc, f"nats-server {node.name}")
        self.wait_healthy(timeout)
        return self

    def wait_healthy(self, timeout: float = 30) -> None:
        """Until every running node's JetStream reports healthy (a meta leader is elected)."""
        import urllib.request

        deadline = time.monotonic() + timeout
        pending = [n for n in self.nodes if n.proc is not None]
        while pending:
            node = pending[0]
            try:
                with urllib.request.urlopen(f"http://{HOST}:{node.monitor_port}/healthz?js-enabled-only=true",
                                            timeout=1) as r:
                    if r.status == 200:
                        pending.pop(0)
                        continue
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RoomError(f"nats node {node.name} not healthy within {timeout} s")
            time.sleep(0.2)

    @property
    def servers(self) -> list[str]:
        return [n.url for n in self.nodes]

    @property
    def mqtt_addresses(self) -> list[tuple[str, int]]:
        return [(HOST, n.mqtt_port) for n in self.nodes]

    def kill(self, i: int) -> None:
        """``kill -9`` a node (its disk stays: a restart brings it back)."""
        self.nodes[i].stop(signal.SIGKILL)

    def restart(self, i: int) -> None:
        node = self.nodes[i]
        node.start(nats_server())
        _wait_port(node.mqtt_port, 30, node.proc, f"nats-server {node.name}")

    def rss_kb(self) -> int:
        return sum(n.rss_kb() for n in self.nodes)

    def _halt(self) -> None:
        for node in self.nodes:
            node.stop()


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kb(pid: int | None = None) -> int:
    return _rss_kb(pid or os.getpid())


# ---------------------------------------------------------------------- PostgreSQL
@dataclass
class Postgres(_InFolder):
    """Debian's PostgreSQL in a throwaway cluster: ``url`` for psycopg; ``stop()`` removes it."""

    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="poker-pg-")))
    port: int = 0
    proc_user: str | None = None

    def _bin(self, name: str) -> str:
        found = shutil.which(name)
        if found:
            return found
        versions = sorted(PG_BIN.glob("*/bin"), reverse=True)
        for v in versions:
            if (v / name).exists():
                return str(v / name)
        raise RoomError(f"{name} not found: sudo apt-get install -y postgresql (scripts/bootstrap does)")

    def _run(self, args: list[str]) -> subprocess.CompletedProcess:
        if self.proc_user:
            args = ["runuser", "-u", self.proc_user, "--", *args]
        return subprocess.run(args, capture_output=True, text=True, timeout=120)

    def start(self) -> Self:
        if os.geteuid() == 0:
            self.proc_user = "postgres"  # initdb refuses root
            os.chmod(self.folder, 0o755)
            shutil.chown(self.folder, "postgres")
        self.port = self.port or free_port()
        data = self.folder / "data"
        r = self._run([self._bin("initdb"), "-D", str(data), "-U", "floor", "--auth=trust", "-E", "UTF8",
                       "--no-sync", "-N"] if False else
                      [self._bin("initdb"), "-D", str(data), "-U", "floor", "--auth=trust", "-E", "UTF8", "--no-sync"])
        if r.returncode != 0:
            raise RoomError(f"initdb failed: {r.stderr.strip()[-500:]}")
        opts = (f"-c listen_addresses={HOST} -c port={self.port} -c unix_socket_directories={self.folder} "
                "-c fsync=on -c synchronous_commit=on -c max_connections=50 -c shared_buffers=32MB")
        r = self._run([self._bin("pg_ctl"), "-D", str(data), "-o", opts, "-l", str(self.folder / "pg.log"),
                       "-w", "-t", "60", "start"])
        if r.returncode != 0:
            log = (self.folder / "pg.log").read_text()[-800:] if (self.folder / "pg.log").exists() else ""
            raise RoomError(f"pg_ctl start failed: {r.stderr.strip()[-300:]} {log}")
        return self

    @property
    def url(self) -> str:
        return f"postgresql://floor@{HOST}:{self.port}/postgres"

    def pid(self) -> int | None:
        pidfile = self.folder / "data" / "postmaster.pid"
        try:
            return int(pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def _halt(self) -> None:
        if (self.folder / "data").exists():
            self._run([self._bin("pg_ctl"), "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop"])


# ---------------------------------------------------------------------- a table's Mosquitto
def bridge_conf(table_id: str, password: str, addresses: Iterable[tuple[str, int]], ca: Path,
                base: str = "poker") -> str:
    template = string.Template((ROOM_CONF / "mosquitto-bridge.conf").read_text())
    return template.substitute(addresses=" ".join(f"{h}:{p}" for h, p in addresses), table=table_id,
                               password=password, ca=ca, base=base)


def table_broker(table_id: str, users: dict[str, str], acl_text: str, cluster: NatsCluster | None,
                 room_password: str | None = None, addresses: Iterable[tuple[str, int]] | None = None,
                 **kw: object) -> Broker:
    """A table's own Mosquitto (users, ACL, persistence), bridged to the cluster when given
    (to ``addresses`` instead of the nodes' MQTT listeners: e.g. through a proxy that a test cuts)."""
    extra = ""
    if cluster is not None:
        assert cluster.pki is not None and room_password is not None
        extra = bridge_conf(table_id, room_password, addresses or cluster.mqtt_addresses, cluster.pki.ca,
                            cluster.base)
    return Broker.start(users=users, acl_text=acl_text, extra_config=extra, **kw)  # type: ignore[arg-type]


__all__ = ["NatsCluster", "Postgres", "RoomError", "bridge_conf", "find_executable", "table_broker", "users_conf"]
