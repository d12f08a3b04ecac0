"""A throwaway real Mosquitto broker for tests and the demo.

``Broker.start()`` writes a config (and, with ``users``, a password file hashed by
``mosquitto_passwd -U``) into a temporary folder, runs ``mosquitto -c`` on 127.0.0.1
with a free port, and returns once the broker accepts TCP connections::

    with Broker.start(users={"controller": "s3cret"}, acl_text=acl) as broker:
        client.connect(broker.host, broker.port)
        broker.restart()          # same port: simulates a broker outage

Nothing here is needed in production, where the system Mosquitto runs with
``systemd/mosquitto/poker-table.conf`` (see ``systemd/INSTALL.md``).

``render_config()`` turns that production config into one a test broker can run
(ports, file paths and the persistence folder replaced), so the tests exercise the
file that ships, not a copy of it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from controller.errors import PokerTableError
from controller.processes import stop_process

HOST = "127.0.0.1"
INSTALL_HINT = "install it with `sudo apt-get install -y mosquitto` (Debian, Ubuntu, Raspberry Pi OS)"
_LISTENER_ONLY = (["listener"], ["protocol"], ["socket_domain"], ["mount_point"], ["http_dir"], ["bind_interface"],
                  ["use_username_as_clientid"])
_SBIN = ("/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin")


class BrokerError(PokerTableError, RuntimeError):
    """Mosquitto is missing, would not start, or did not come up in time (the message says which)."""


class _PortTaken(BrokerError):
    """A port of the broker's was taken by another program between its choice and the bind."""


def find_executable(name: str = "mosquitto") -> str:
    """The path of ``name`` in ``$PATH`` or the usual sbin folders; :class:`BrokerError` when missing."""
    found = shutil.which(name)
    if found:
        return found
    for folder in _SBIN:
        cand = Path(folder) / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    raise BrokerError(f"{name} not found in PATH or /usr/sbin: {INSTALL_HINT}")


def mosquitto_available() -> bool:
    """True when both ``mosquitto`` and ``mosquitto_passwd`` can be found."""
    try:
        find_executable("mosquitto")
        find_executable("mosquitto_passwd")
    except BrokerError:
        return False
    return True


def free_port(host: str = HOST, avoid: tuple[int, ...] = ()) -> int:
    """A TCP port nobody listens on right now (none of ``avoid``: ports picked already and not yet
    listened on, which the kernel may hand out again)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        if port not in avoid:
            return port


def _accepts(host: str, port: int, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def write_password_file(path: Path, users: Mapping[str, str]) -> None:
    """Write ``user:password`` lines and hash them in place with ``mosquitto_passwd -U``."""
    for name, password in users.items():
        if not name or ":" in name or "\n" in name or "\n" in password:
            raise BrokerError(f"invalid broker user name or password for {name!r}")
    path.write_text("".join(f"{u}:{p}\n" for u, p in users.items()))
    os.chmod(path, 0o600)
    proc = subprocess.run([find_executable("mosquitto_passwd"), "-U", str(path)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BrokerError(f"mosquitto_passwd -U failed: {proc.stderr.strip() or proc.stdout.strip()}")


def render_config(
    template: str,
    *,
    port: int,
    password_file: Path | None,
    acl_file: Path | None,
    state_dir: Path,
    websockets_port: int | None = None,
    host: str = HOST,
) -> str:
    """Rewrite a production Mosquitto config for a throwaway broker.

    The first plain listener becomes ``listener <port> <host>``; a websockets listener
    becomes ``listener <websockets_port> <host>`` or is dropped (with its ``protocol``
    line) when ``websockets_port`` is None; ``password_file``, ``acl_file`` and
    ``persistence_location`` point into the temporary folder; ``log_dest`` goes to stderr;
    ``include_dir``, ``pid_file`` and TLS file options are dropped.  Everything else
    (``allow_anonymous``, ``persistence``, ...) is kept as written.
    """
    blocks: list[list[str]] = [[]]
    for raw in template.splitlines():
        if raw.split()[:1] == ["listener"]:
            blocks.append([])
        blocks[-1].append(raw)
    out: list[str] = []
    plain_done = False
    for block in blocks:
        words = [ln.split() for ln in block]
        is_listener = bool(words and words[0][:1] == ["listener"])
        websockets = is_listener and any(w[:2] == ["protocol", "websockets"] for w in words)
        if is_listener:
            if websockets:
                if websockets_port is None:
                    block = [ln for ln in block if ln.split()[:1] not in _LISTENER_ONLY]
                else:
                    # Mosquitto 2.0.11's websockets listener (libwebsockets) ignores an address and
                    # listens everywhere; it takes an interface name: loopback is "lo".
                    ws_host = "lo" if host in ("127.0.0.1", "localhost") and sys.platform.startswith("linux") else host
                    block = [f"listener {websockets_port} {ws_host}"] + block[1:]
            elif plain_done:
                # A second plain listener (e.g. a TLS one) is not needed in a test.
                block = [ln for ln in block if ln.split()[:1] not in _LISTENER_ONLY]
            else:
                plain_done = True
                block = [f"listener {port} {host}"] + block[1:]
        for ln in block:
            key = ln.split()[0] if ln.split() else ""
            if key in ("include_dir", "pid_file", "log_dest", "cafile", "certfile", "keyfile", "capath"):
                continue
            if key == "password_file":
                if password_file is not None:
                    out.append(f"password_file {password_file}")
                continue
            if key == "acl_file":
                if acl_file is not None:
                    out.append(f"acl_file {acl_file}")
                continue
            if key == "persistence_location":
                continue
            out.append(ln)
    if not plain_done:
        out.insert(0, f"listener {port} {host}")
    out += [f"persistence_location {state_dir}/", "log_dest stderr"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Run as root, mosquitto would switch to the "mosquitto" user, who cannot read our temp folder.
        out = [ln for ln in out if ln.split()[:1] != ["user"]] + ["user root"]
    return "\n".join(out) + "\n"


def _logs_notices(config: str) -> bool:
    """Whether a broker of this config logs notices (its "running" line among them): Mosquitto's
    default, or a ``log_type`` of ``notice`` or ``all``."""
    types = [ln.split()[1] for ln in config.splitlines() if ln.split()[:1] == ["log_type"] and len(ln.split()) > 1]
    return not types or bool({"notice", "all"} & set(types))


def default_config(*, allow_anonymous: bool, websockets: bool) -> str:
    """The config a plain ``Broker.start()`` uses, before :func:`render_config` fills it in."""
    lines = [
        "listener 1883 127.0.0.1",
        f"allow_anonymous {'true' if allow_anonymous else 'false'}",
        "password_file PASSWD",
        "acl_file ACL",
        "persistence true",
        "set_tcp_nodelay true",  # as the shipped config: a card's event is not held back by Nagle's algorithm
    ]
    if websockets:
        lines += ["listener 9001 127.0.0.1", "protocol websockets"]
    return "\n".join(lines) + "\n"


class Broker:
    """A running throwaway Mosquitto; use :meth:`start`, then :meth:`stop` (or ``with``)."""

    def __init__(self, workdir: Path, port: int, websockets_port: int | None, config: str,
                 host: str = HOST, timeout: float = 10.0) -> None:
        self.workdir = workdir
        self.host = host
        self.port = port
        self.websockets_port = websockets_port
        self.config_path = workdir / "mosquitto.conf"
        self.log_path = workdir / "mosquitto.log"
        self.config_path.write_text(config)
        self.timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def start(
        cls,
        port: int | None = None,
        users: Mapping[str, str] | None = None,
        acl_text: str | None = None,
        websockets_port: int | None = None,
        *,
        config_template: str | None = None,
        extra_config: str = "",
        timeout: float = 10.0,
    ) -> Broker:
        """Start Mosquitto on 127.0.0.1 and wait until it accepts connections.

        ``users`` (name -> password) turns authentication on (``allow_anonymous false``);
        without users the broker is anonymous.  ``acl_text`` is written as the ACL file.
        ``websockets_port`` adds a websockets listener (``0`` picks a free port).
        ``config_template`` is a production config (e.g. ``systemd/mosquitto/poker-table.conf``)
        to run instead of the default one; see :func:`render_config`.  ``extra_config`` is appended
        as it is (e.g. a bridge to the room, ``systemd/room/mosquitto-bridge.conf``).
        """
        find_executable("mosquitto")
        workdir = Path(tempfile.mkdtemp(prefix="tablectl-mosquitto-"))
        try:
            password_file = acl_file = None
            if users:
                password_file = workdir / "passwd"
                write_password_file(password_file, users)
            if acl_text is not None:
                acl_file = workdir / "acl"
                acl_file.write_text(acl_text)
                os.chmod(acl_file, 0o600)
            state = workdir / "state"
            state.mkdir()
            template = config_template or default_config(allow_anonymous=not users, websockets=bool(websockets_port))
            # A port picked free here may be taken before Mosquitto binds it (another test's broker on
            # the other worker picked the same one): then the broker exits at start, and it is tried
            # again on newly picked ports.  Ports the caller chose are never changed.
            picked = port is None or websockets_port == 0
            for attempt in range(1, 6):
                chosen = port or free_port()
                ws = free_port(avoid=(chosen,)) if websockets_port == 0 else websockets_port
                config = render_config(template, port=chosen, password_file=password_file, acl_file=acl_file,
                                       state_dir=state, websockets_port=ws)
                if extra_config:
                    config = config.rstrip("\n") + "\n\n" + extra_config
                broker = cls(workdir, chosen, ws, config, timeout=timeout)
                try:
                    broker._spawn()
                except _PortTaken:
                    if not picked or attempt == 5:
                        raise
                    continue
                return broker
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        raise AssertionError("unreachable")  # (the loop returns or raises)

    def _spawn(self) -> None:
        ports = [self.port] + ([self.websockets_port] if self.websockets_port else [])
        for p in ports:
            if _accepts(self.host, p):
                raise _PortTaken(f"port {p} on {self.host} is already in use")
        start = len(self.log())  # (a restart appends to the log)
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self._proc = subprocess.Popen([find_executable("mosquitto"), "-c", str(self.config_path)],
                                      stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.timeout
        # Ready once it says it runs (it has bound every listener then): a port that accepts may be
        # another program's, bound between the port's choice and ours, and this broker about to
        # exit for it (slow to start, as under emulation, it is still alive when the port answers).
        said_running = _logs_notices(self.config_path.read_text())
        while True:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                self._close_log()
                self._proc = None
                text = self.log()
                taken = "Address already in use" in text[start:]
                raise (_PortTaken if taken else BrokerError)(f"mosquitto exited with code {code} at start:\n{text}")
            if (not said_running or " running" in self.log()[start:]) and all(_accepts(self.host, p) for p in ports):
                return
            if time.monotonic() > deadline:
                self.stop(cleanup=False)
                raise BrokerError(f"mosquitto did not accept connections on {ports} within {self.timeout}s:\n"
                                  f"{self.log()}")
            time.sleep(0.02)

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def describe(self) -> str:
        """Its state for a failure message: running, or the exit code; and its log so far."""
        code = self._proc.poll() if self._proc is not None else None
        state = ("running" if code is None else f"exited with code {code}") if self._proc is not None else "stopped"
        return f"mosquitto on {self.host}:{self.port} {state}; its log:\n{self.log() or '(empty)'}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def stop(self, cleanup: bool = True) -> None:
        """Stop the broker (SIGTERM, then SIGKILL after 5 s); ``cleanup`` removes the temp folder."""
        proc, self._proc = self._proc, None
        if proc is not None:
            stop_process(proc, 5)
        self._close_log()
        if cleanup:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def restart(self, down_for: float = 0.0) -> None:
        """Stop and start again on the same port (clients see an outage; retained state persists
        when the config has ``persistence true``).  ``down_for`` keeps it down that many seconds."""
        self.stop(cleanup=False)
        deadline = time.monotonic() + self.timeout
        while _accepts(self.host, self.port):  # the old process must really be gone
            if time.monotonic() > deadline:
                raise BrokerError(f"port {self.port} still accepting after the broker stopped")
            time.sleep(0.02)
        if down_for > 0:
            time.sleep(down_for)
        self._spawn()

    def log(self) -> str:
        """What the broker has written to its log so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    def __enter__(self) -> Broker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<Broker {self.host}:{self.port} {state}>"


__all__ = ["Broker", "BrokerError", "find_executable", "free_port", "mosquitto_available", "render_config",
           "write_password_file", "INSTALL_HINT"]
