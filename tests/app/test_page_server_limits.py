"""Issue 26, F2: idle connections to a page port took the daemon down (1,010 held connections:
1,024 file descriptors and 1,018 threads in the daemon, the serial port could not reopen).  The
page server now keeps at most ``MAX_CONNECTIONS`` open (the oldest goes when another comes) and
closes a silent one after ``REQUEST_TIMEOUT``; a page still loads in the middle of the flood."""

from __future__ import annotations

import errno
import os
import socket
import threading
import time
import urllib.request

from controller.app.webserver import DEFAULT_ROOT, MAX_CONNECTIONS, WebServer

HELD = 100


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_held_connections_cost_the_server_a_bounded_number_of_threads_and_descriptors() -> None:
    with WebServer(DEFAULT_ROOT, pages=("display",)) as web:
        fds, threads = _fds(), threading.active_count()
        held = []
        try:
            for _ in range(HELD):
                held.append(socket.create_connection((web.host, web.port), timeout=5))
            time.sleep(0.5)  # the server accepts them all
            assert web.counters["connections"] >= HELD - 5
            assert web.open_connections <= MAX_CONNECTIONS
            # Our own HELD client sockets plus at most the server's cap (and a little slack).
            assert _fds() - fds <= HELD + MAX_CONNECTIONS + 8, _fds() - fds
            assert threading.active_count() - threads <= MAX_CONNECTIONS + 2
            # A page loads in the middle of the flood, at once.
            t0 = time.monotonic()
            with urllib.request.urlopen(web.page_url("display"), timeout=3) as r:
                assert r.status == 200 and b"<html" in r.read().lower()
            assert time.monotonic() - t0 < 1.0
        finally:
            for s in held:
                s.close()


def test_a_silent_connection_is_closed_after_the_timeout() -> None:
    with WebServer(DEFAULT_ROOT, pages=("display",), request_timeout=0.5) as web:
        with socket.create_connection((web.host, web.port), timeout=5) as s:
            t0 = time.monotonic()
            s.sendall(b"GET /display/ HTTP/1.1\r\n")  # the rest of the request never comes
            assert s.recv(100) == b""  # closed by the server
            assert 0.3 < time.monotonic() - t0 < 3.0
        assert web.open_connections == 0


def test_the_unit_sets_an_explicit_file_descriptor_limit() -> None:
    from tests.app.test_systemd import UNIT, _directives

    [limit] = _directives(UNIT)["LimitNOFILE"]
    # Every page server's connections and far more than the daemon's own descriptors.
    assert int(limit) >= 3 * MAX_CONNECTIONS + 1024


def test_a_burst_of_connections_waits_in_the_kernel_queue_not_a_second_per_retry() -> None:
    """The fault bench's flood (105 connections a port) took 15-50 s to open on a loaded host and
    ran into its next hands' kill -9: ``listen()``'s backlog was the stdlib's 5, so while the
    accept loop started threads every sixth SYN was dropped and retried a second later.  A server
    that is not accepting at all (its loop busy) still completes a flood's 100 connections at once."""
    from controller.app.webserver import _Server

    server = _Server(("127.0.0.1", 0), DEFAULT_ROOT, {}, False, ("display",))  # bound, listening, never accepting
    held: list[socket.socket] = []
    try:
        t0 = time.monotonic()
        for _ in range(HELD):
            held.append(socket.create_connection(server.server_address[:2], timeout=0.5))
        assert time.monotonic() - t0 < 2.0  # none waited for a SYN retry (1 s, then 3 s)
    finally:
        for s in held:
            s.close()
        server.server_close()


def test_a_page_whose_port_is_still_held_is_served_once_it_is_free() -> None:
    """A daemon restarted while its page's port is still held (its predecessor letting go, a client
    that took it as its own port) ran without that page until its next restart ("the pages are not
    served").  It now tries again every ``retry_every`` seconds and serves it once the port is free."""
    from controller.app.webserver import PageServers

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    with PageServers(DEFAULT_ROOT, {}, {"display": ("127.0.0.1", port)}, retry_every=0.1) as pages:
        assert pages.waiting == {"display": ("127.0.0.1", port)}
        assert pages.page_url("display") == f"http://127.0.0.1:{port}/display/"
        holder.close()
        deadline = time.monotonic() + 5
        while pages.waiting and time.monotonic() < deadline:
            time.sleep(0.05)
        with urllib.request.urlopen(pages.page_url("display"), timeout=3) as r:
            assert r.status == 200
    # Without retry_every a port in use still raises (``tablectl run`` then says so, loudly).
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        try:
            PageServers(DEFAULT_ROOT, {}, {"display": ("127.0.0.1", held.getsockname()[1])})
        except OSError as exc:
            assert exc.errno == errno.EADDRINUSE
        else:
            raise AssertionError("a port in use was served")
