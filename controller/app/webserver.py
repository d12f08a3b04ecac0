"""A tiny static web server for the dealer's display, the action tracker and the broadcast overlay.

``WebServer(root, port=0, config={...})`` serves ``web/`` on 127.0.0.1 (a free port by
default) from a background thread:

* ``/display/``, ``/tracker/``, ``/overlay/``, ``/common/``, ``/vendor/``: the pages, their shared
  modules, mqtt.js;
* ``/config.json``: the *shared* part of ``config`` (everything except the per-page
  sections ``display``, ``tracker`` and ``overlay``), e.g. ``{"ws": "ws://127.0.0.1:9001", "table": "t1"}``;
* ``/display/config.json``, ``/tracker/config.json``, ``/overlay/config.json``: the shared part merged with that
  page's section, e.g. ``{"display": {"user": "console", "pass": "..."}}`` gives the
  display page its credential and never the overlay's (and the other way round).

``WebServer(..., pages=("display",))`` serves only the display page and its config: give
each page its own server (``tablectl run`` does), and the display's port can never hand
out the overlay's login.

Nothing else under ``root`` is served (no directory listings, no ``..``).

The server runs inside the daemon, so a client can cost it only so much: at most
``MAX_CONNECTIONS`` connections (one thread each) are open at once per server; when another
arrives the oldest is shut down (a page's request takes milliseconds, so the oldest is an idle
or trickling one), and a connection that sends nothing for ``REQUEST_TIMEOUT`` seconds is
closed.  A thousand idle connections cost a thousand accepts, not a thousand threads and file
descriptors (issue 26, F2: they used to take the serial port's and the broker's descriptors).  The config
may hold a broker password: keep the server on loopback (the default) or on the table's
own network, and give each page the least-privileged broker user it needs (``display``
or ``console`` for the table, ``overlay`` for the booth).

    with WebServer(REPO / "web", config={"ws": broker_ws_url, "table": "t1",
                                         "display": {"user": "console", "pass": pw}}) as web:
        print(web.url + "/display/")
"""

from __future__ import annotations

import errno
import json
import logging
import mimetypes
import os
import posixpath
import shutil
import socket
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self, TypeVar, cast
from urllib.parse import unquote, urlencode, urlsplit

HOST = "127.0.0.1"
log = logging.getLogger("controller.web")
DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "web"
PAGES = ("display", "overlay", "tracker", "producer")
SERVED = ("display", "overlay", "tracker", "producer", "common", "vendor")
#: Content-Security-Policy of every response: the pages load nothing from elsewhere and talk
#: only to the broker over WebSockets.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self' ws: wss:; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; "
       "frame-ancestors 'self'")

#: Connections one server keeps open at once (each has a thread); the oldest goes when another comes.
MAX_CONNECTIONS = 32
#: Seconds a connection may stay silent (while the request is read or the response is written).
REQUEST_TIMEOUT = 5.0
#: Connections the kernel completes and queues before the server accepts them (``listen()``'s
#: backlog; the stdlib's default is 5).  With 5, a burst of connections (a flood, or a few browsers
#: reloading at once) overflowed the queue on a loaded host: every sixth connection's SYN was dropped
#: and retried a second later, and 105 connections took 15 s to open.  The cap above, not this
#: queue, bounds what a client costs; the queue only lets the accept loop catch up.
LISTEN_BACKLOG = 128

_S = TypeVar("_S", bound=ThreadingHTTPServer)


def _page_url(base: str, page: str, query: Mapping[str, Any]) -> str:
    """``<base>/<page>/`` plus the query's set values (``ws=..., table=..., user=..., pass=...``)."""
    q = urlencode({k: v for k, v in query.items() if v is not None})
    return f"{base}/{page}/" + (f"?{q}" if q else "")

mimetypes.add_type("text/javascript", ".js")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("image/svg+xml", ".svg")


def page_config(config: Mapping[str, Any], page: str | None) -> dict[str, Any]:
    """What ``/config.json`` (``page`` None) or ``/<page>/config.json`` returns."""
    shared = {k: v for k, v in config.items() if k not in PAGES}
    if page is not None:
        section = config.get(page)
        if isinstance(section, Mapping):
            shared.update(section)
    return shared


class _Handler(SimpleHTTPRequestHandler):
    server: _Server
    server_root: Path = DEFAULT_ROOT  # set per server (the handler is built before it knows its server)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(self.server_root), **kwargs)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        if self.server.verbose:
            super().log_message(format, *args)

    def end_headers(self) -> None:
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def list_directory(self, path: str | Path) -> None:  # type: ignore[override]
        self.send_error(HTTPStatus.NOT_FOUND, "no directory listings")
        return None

    def _route(self) -> tuple[str, Any] | None:
        """('json', payload), ('file', None), ('redirect', location) or None (404)."""
        # Route on the path exactly as translate_path() will see it (unquoted, then normalised),
        # so "%2e%2e" cannot step out of the served folders.
        raw = unquote(urlsplit(self.path).path)
        if "\\" in raw or "\0" in raw:
            return None
        path = posixpath.normpath(raw)
        pages = self.server.pages
        if path in ("/", "/."):
            return "redirect", f"/{pages[0]}/"
        parts = [p for p in path.split("/") if p]
        if parts == ["config.json"]:
            return "json", page_config(self.server.config, None)
        if len(parts) == 2 and parts[0] in pages and parts[1] == "config.json":
            return "json", page_config(self.server.config, parts[0])
        served = tuple(pages) + tuple(d for d in SERVED if d not in PAGES)
        if not parts or parts[0] not in served or ".." in parts or any(p.startswith(".") for p in parts):
            return None
        if len(parts) == 1 and not raw.endswith("/"):
            return "redirect", f"/{parts[0]}/"
        return "file", None

    def _serve(self, head: bool) -> None:
        route = self._route()
        if route is None:
            self.send_error(HTTPStatus.NOT_FOUND, "not found")
            return
        kind, value = route
        if kind == "redirect":
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", value)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if kind == "json":
            body = json.dumps(value).encode()
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)
            return
        if head:
            super().do_HEAD()
        else:
            super().do_GET()

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self._serve(head=False)

    def do_HEAD(self) -> None:  # noqa: N802 - the stdlib's name
        self._serve(head=True)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], root: Path, config: Mapping[str, Any], verbose: bool,
                 pages: tuple[str, ...] = PAGES, max_connections: int = MAX_CONNECTIONS,
                 request_timeout: float = REQUEST_TIMEOUT) -> None:
        self.root = root
        self.pages = pages
        self.config = {k: v for k, v in config.items() if k not in PAGES or k in pages}
        self.verbose = verbose
        self.max_connections = max(1, int(max_connections))
        self._open: OrderedDict[Any, None] = OrderedDict()  # open connections, oldest first
        self._open_lock = threading.Lock()
        self.counters = {"connections": 0, "evicted": 0}
        handler = type("Handler", (_Handler,), {"server_root": root, "timeout": request_timeout})
        super().__init__(address, handler)

    @property
    def open_connections(self) -> int:
        return len(self._open)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for this connection, after shutting the oldest down if the server is full
        (its thread then sees the end of its stream and exits)."""
        with self._open_lock:
            self.counters["connections"] += 1
            while len(self._open) >= self.max_connections:
                oldest, _ = self._open.popitem(last=False)
                self.counters["evicted"] += 1
                try:
                    oldest.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._open[request] = None
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.pop(request, None)
        super().shutdown_request(request)


class ServerThread:
    """An HTTP server answering from a background thread (the pages' here, the floor's in
    :mod:`controller.floor.server`): ``host``, ``port``, ``url``, ``stop()``, a context manager."""

    _server: ThreadingHTTPServer

    def _serve(self, server: _S, name: str, poll_interval: float) -> _S:
        """Serve ``server`` from a daemon thread called ``name``; return it."""
        self._server = server
        bound_host, bound_port = server.server_address[:2]
        self.host, self.port = str(bound_host), int(bound_port)
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": poll_interval},
                                        name=name, daemon=True)
        self._thread.start()
        return server

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(5)
        self._server.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class WebServer(ServerThread):
    """Serve ``root`` (``web/``) and a generated ``config.json`` from a background thread."""

    def __init__(self, root: str | Path = DEFAULT_ROOT, port: int = 0, config: Mapping[str, Any] | None = None,
                 host: str = HOST, verbose: bool = False, pages: tuple[str, ...] = PAGES,
                 max_connections: int = MAX_CONNECTIONS, request_timeout: float = REQUEST_TIMEOUT) -> None:
        self.root = Path(root).resolve()
        if not (self.root / "display" / "index.html").is_file():
            raise FileNotFoundError(f"{self.root} does not look like the web/ folder (no display/index.html)")
        unknown = [p for p in pages if p not in PAGES]
        if unknown or not pages:
            raise ValueError(f"pages must be some of {PAGES}, got {pages!r}")
        self.pages = tuple(pages)
        self._server: _Server = self._serve(
            _Server((host, port), self.root, config or {}, verbose, self.pages, max_connections, request_timeout),
            "webserver", poll_interval=0.1)

    @property
    def config(self) -> dict[str, Any]:
        return self._server.config

    @config.setter
    def config(self, value: Mapping[str, Any]) -> None:
        self._server.config = {k: v for k, v in value.items() if k not in PAGES or k in self.pages}

    @property
    def open_connections(self) -> int:
        """Connections open right now (at most ``max_connections``)."""
        return self._server.open_connections

    @property
    def counters(self) -> dict[str, int]:
        return dict(self._server.counters)

    def page_url(self, page: str, **query: Any) -> str:
        """``http://host:port/<page>/`` plus a query (``ws=..., table=..., user=..., pass=...``)."""
        if page not in self.pages:
            raise ValueError(f"page {page!r} is not served here; this server serves {self.pages}")
        return _page_url(self.url, page, query)

    def __repr__(self) -> str:
        return f"<WebServer {self.url} root={self.root}>"


class PageServers:
    """One :class:`WebServer` per page (display, overlay), each handing out only its own login.

    With ``retry_every`` (seconds), a page whose port is in use (a daemon restarted while its
    predecessor, or anything else, still holds it) is served as soon as the port is free, tried
    again every ``retry_every`` seconds: the table does not run without that page until its next
    restart.  Any other failure to serve a page raises, as without it."""

    def __init__(self, root: str | Path, config: Mapping[str, Any], listen: Mapping[str, tuple[str, int]],
                 verbose: bool = False, retry_every: float | None = None) -> None:
        self.servers: dict[str, WebServer] = {}
        #: Pages whose port was in use, still to be served: page -> (host, port).
        self.waiting: dict[str, tuple[str, int]] = {}
        self._make = lambda page, host, port: WebServer(root, port=port, config=config, host=host, verbose=verbose,
                                                        pages=(page,))
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        try:
            for page, (host, port) in listen.items():
                try:
                    self.servers[page] = self._make(page, host, port)
                except OSError as exc:
                    if retry_every is None or exc.errno != errno.EADDRINUSE:
                        raise
                    log.error("the %s page is not served yet: port %s is in use; trying again every %s s",
                              page, port, retry_every, extra={"page": page, "port": port})
                    self.waiting[page] = (host, port)
        except BaseException:
            self.stop()
            raise
        if self.waiting:
            assert retry_every is not None  # only then is a page left waiting
            threading.Thread(target=self._retry, args=(retry_every,), name="page-retry", daemon=True).start()

    def _retry(self, every: float) -> None:
        while self.waiting and not self._stopped.wait(every):
            for page, (host, port) in list(self.waiting.items()):
                try:
                    server = self._make(page, host, port)
                except OSError:
                    continue
                with self._lock:
                    if self._stopped.is_set():
                        server.stop()
                        return
                    self.servers[page] = server
                    del self.waiting[page]
                log.info("serving the %s page on %s (its port is free now)", page, server.page_url(page),
                         extra={"page": page, "url": server.page_url(page)})

    def page_url(self, page: str, **query: Any) -> str:
        if page in self.waiting:  # not served yet: where it will be
            host, port = self.waiting[page]
            return _page_url(f"http://{host}:{port}", page, query)
        return self.servers[page].page_url(page, **query)

    def stop(self) -> None:
        with self._lock:
            self._stopped.set()
            servers = list(self.servers.values())
        for server in servers:
            server.stop()

    def __enter__(self) -> PageServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["CSP", "DEFAULT_ROOT", "PageServers", "ServerThread", "WebServer", "page_config"]


# ---------------------------------------------------------------------- a real browser
#: Debian's Chromium, headless, with nothing that reaches out to the network on its own.
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@contextmanager
def launch_chromium(viewport: dict[str, int] | None = None) -> Iterator[Any]:
    """A Playwright persistent context on Debian's Chromium with a fresh, throwaway profile
    (the page tests, the screenshots and ``tablectl bench alert`` share it)."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="tablectl-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
                viewport=cast(Any, viewport or {"width": 800, "height": 480}), service_workers="block",
            )
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
