"""Helpers for the browser tests of the web pages (and ``tests/web/screenshots.py``).

* :func:`browser_missing` says why a real browser cannot run (no Playwright, no Chromium);
* :func:`launch_browser` starts Debian's Chromium through Playwright with a fresh profile;
* :class:`Recorder` is a paho MQTT v5 client that records what the broker lets it read;
* :class:`TableFeed` is the daemon's publishing path for real: a :class:`TableService`
  whose outputs go through :class:`Publisher` and :class:`MqttLink` as the ``controller``
  user, exactly as ``controller/app/daemon.py`` publishes them.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.app.publisher import END_OF_HAND, Publisher
from controller.mqtt.broker import Broker
from controller.mqtt.contract import Topics
from controller.mqtt.link import MqttLink, MqttSettings
from controller.rules.events import Event, SeatPlayer, StartHand
from controller.rules.scenario import Scenario
from controller.rules.table import Table
from controller.service import Output, Rejected, TableService
from tests.mqtt_util import ACL, CONF, shipped_broker
from tests.mqtt_util import new_passwords as _new_passwords

REPO = Path(__file__).resolve().parent.parent
WEB = REPO / "web"
ROLES = ("controller", "display", "console", "overlay", "producer")
from controller.app.webserver import CHROMIUM, CHROMIUM_ARGS, launch_chromium  # noqa: E402

ARTIFACTS = REPO / "artifacts" / "screenshots"
CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][hdcs])(?![A-Za-z0-9])")


def wait_until(cond: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.01)


def rig_parts(rig: dict[str, Any]) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
    """The daemon, emulator, page and layout of ``controller.bench.alert.table_rig``, and each
    card's tag uid by its face (``"Kd"``)."""
    uids = {card.face: uid for uid, card in rig["deck"].tags.items()}
    return rig["daemon"], rig["emulator"], rig["page"], rig["layout"], uids


# ---------------------------------------------------------------------- browser


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (pip install playwright)"
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        return f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)"
    return None


def launch_browser(viewport: dict[str, int] | None = None):
    """A Playwright persistent context on Debian's Chromium with a fresh, throwaway profile."""
    return launch_chromium(viewport)


@contextmanager
def browse(url: str, width: int, height: int) -> Iterator[tuple[Any, list[str]]]:
    """A page at ``url`` in a fresh browser of that viewport, with its JavaScript errors collected."""
    with launch_browser({"width": width, "height": height}) as ctx:
        page = ctx.new_page()
        errors = watch_console(page)
        page.goto(url)
        yield page, errors


def watch_console(page: Any) -> list[str]:
    """Collect the page's JavaScript errors (a test asserts there are none)."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on("console", lambda msg: errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None)
    return errors


# ---------------------------------------------------------------------- broker


def start_broker(passwords: dict[str, str]) -> Broker:
    """The shipped config and ACL on a real Mosquitto, with a websockets listener for the pages."""
    return shipped_broker(passwords)


def new_passwords() -> dict[str, str]:
    return _new_passwords(ROLES)


class Recorder:
    """A paho MQTT v5 client (TCP) recording every message the broker lets it read."""

    def __init__(self, broker: Broker, user: str, password: str, subscribe: Iterable[str] = ()) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.c = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5,
                             client_id=f"rec-{user}-{secrets.token_hex(3)}")
        self.c.username_pw_set(user, password)
        self.lock = threading.Lock()
        self.messages: list[Any] = []
        self.subacks: dict[int, Any] = {}
        self.connected = threading.Event()
        self.c.on_connect = lambda c, u, f, rc, p: self.connected.set() if not rc.is_failure else None
        self.c.on_message = self._on_message
        self.c.on_subscribe = lambda c, u, mid, rcs, p: self._suback(mid, rcs)
        self.c.connect(broker.host, broker.port, keepalive=10)
        self.c.loop_start()
        if not self.connected.wait(5):
            raise AssertionError(f"{user} could not connect to the broker")
        for topic in subscribe:
            self.subscribe(topic)

    def _on_message(self, client, userdata, message) -> None:
        with self.lock:
            self.messages.append(message)

    def _suback(self, mid, rcs) -> None:
        with self.lock:
            self.subacks[mid] = rcs

    def subscribe(self, topic: str) -> None:
        _, mid = self.c.subscribe(topic, qos=1)
        wait_until(lambda: mid in self.subacks, 5, f"SUBACK for {topic}")

    def on(self, topic: str) -> list[Any]:
        with self.lock:
            return [m for m in self.messages if m.topic == topic]

    def all(self) -> list[Any]:
        with self.lock:
            return list(self.messages)

    def close(self) -> None:
        self.c.disconnect()
        self.c.loop_stop()


# ---------------------------------------------------------------------- the daemon's publishing path


@dataclass
class TableFeed:
    """TableService -> Publisher -> MqttLink (as ``controller``), as the daemon runs them."""

    broker: Broker
    password: str
    table_id: str
    size: int = 9
    game: str = "holdem"
    broadcast_delay: float | str = END_OF_HAND
    debounce: float | None = None  # as the daemon: the state follows each event's outputs this much later
    table_kw: dict[str, Any] = field(default_factory=dict)  # chips: stakes, starting_stack, levels (Table's fields)
    service: TableService = field(init=False)
    link: MqttLink = field(init=False)
    publisher: Publisher = field(init=False)

    def __post_init__(self) -> None:
        self.topics = Topics("poker", self.table_id)
        self.service = TableService(Table(size=self.size, game=self.game, **self.table_kw))
        self.link = MqttLink(MqttSettings(url=self.broker.url, username="controller", password=self.password,
                                          client_id=f"controller-{self.table_id}-{secrets.token_hex(3)}"),
                             availability_topic=self.topics.availability)
        self.link.start()
        if not self.link.connected_event.wait(5):
            raise AssertionError("the controller link did not connect")
        self.publisher = Publisher(self.link, self.topics, self.table_id, broadcast_delay=self.broadcast_delay)
        self.publisher.publish_state(self.service)

    def submit(self, event: Event) -> list[Output]:
        outputs = self.service.submit(event, source="test")
        if self.debounce is None:
            self.publisher.publish(outputs, self.service)
        else:  # the daemon's path (controller/app/daemon.py STATE_DEBOUNCE): events first, the state a moment later
            self.publisher.publish(outputs, self.service, state=False)
            time.sleep(self.debounce)
            self.publisher.publish_state(self.service)
        return outputs

    def seat(self, players: dict[int, str]) -> None:
        for seat, name in players.items():
            self.submit(SeatPlayer(seat, name))

    @property
    def hand(self) -> dict[str, Any] | None:
        return self.service.public_state()["hand"]

    def idle(self, timeout: float = 5.0) -> None:
        if not self.link.wait_idle(timeout):
            raise AssertionError("the controller's outbox did not drain")

    def close(self) -> None:
        self.link.stop()


def play_scenario(feed: TableFeed, hand: dict[str, Any], *, upto: int | None = None,
                  after: Callable[[Event, list[Output]], None] | None = None) -> Scenario:
    """Feed a dealer_sim hand (a FORMAT dict) through the feed: StartHand, then its events."""
    scenario = Scenario.from_dict(hand)
    feed.submit(StartHand(scenario.setup))
    for i, event in enumerate(scenario.events):
        if upto is not None and i >= upto:
            break
        try:
            outputs = feed.submit(event)
        except Rejected:
            continue
        if after is not None:
            after(event, outputs)
    return scenario


def submit_hand(svc: TableService, scenario: Scenario, *, skip_rejected: bool = False,
                until: Callable[[], bool] | None = None) -> list[Output]:
    """A scenario's hand through a service: its StartHand, then its events until one is rejected
    (or past the rejected ones, ``skip_rejected``) or ``until()`` holds; every output, in order."""
    outputs = list(svc.submit(StartHand(scenario.setup)))
    for event in scenario.events:
        try:
            outputs += svc.submit(event)
        except Rejected:
            if not skip_rejected:
                break
        if until is not None and until():
            break
    return outputs


def showdown_holdem(seed_from: int = 1, tries: int = 400) -> dict[str, Any]:
    """A legal hold'em hand that reaches a showdown with a full board (for the overlay)."""
    from controller.sim import dealer as dealer_sim

    for seed in range(seed_from, seed_from + tries):
        hand = dealer_sim.legal_hand(random.Random(seed), game="holdem", rules="robert", event="cash")
        scenario = Scenario.from_dict(hand)
        if len(scenario.setup.seats) > 6:
            continue
        svc = TableService(Table(size=scenario.setup.table_size))
        submit_hand(svc, scenario)
        engine = svc.engine
        if engine is not None and engine.showdown() is not None and len(engine.board) == 5 and len(engine.active) >= 2:
            return hand
    raise AssertionError("no showdown hand found")


def card_tokens(payload: bytes) -> set[str]:
    """Every card-like token (``Ah``, ``Td``) anywhere in a payload, deck suffixes ignored."""
    return set(CARD_TOKEN.findall(payload.decode("utf-8", "replace")))


def save_screenshot(page: Any, name: str, also: Path | None = None) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    if also is not None:
        also.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, also)
    return path


def json_of(message: Any) -> Any:
    return json.loads(message.payload) if message.payload else None


# ---------------------------------------------------------------------- pytest fixtures for tests/web/
# tests/web/conftest.py offers them to every module there.

TIMEOUT_MS = 8000


def needs_browser() -> None:
    import os

    import pytest

    missing = browser_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests need Playwright and Chromium in CI: {missing}", pytrace=False)
        pytest.skip(missing)


try:
    import pytest as _pytest
except ImportError:  # pragma: no cover - the helpers are also used by tests/web/screenshots.py
    _pytest = None

if _pytest is not None:

    @_pytest.fixture(scope="module")
    def web_passwords() -> dict[str, str]:
        return new_passwords()

    @_pytest.fixture(scope="module")
    def web_broker(web_passwords):
        from tests.mqtt_util import require_mosquitto

        require_mosquitto()
        b = start_broker(web_passwords)
        try:
            yield b
        finally:
            b.stop()

    @_pytest.fixture(scope="module")
    def web_server(web_broker, web_passwords):
        from controller.app.webserver import WebServer

        config = {"ws": f"ws://127.0.0.1:{web_broker.websockets_port}", "table": "t1",
                  "overlay": {"user": "overlay", "pass": web_passwords["overlay"]},
                  "producer": {"user": "producer", "pass": web_passwords["producer"]}}
        with WebServer(WEB, config=config) as server:
            yield server

    @_pytest.fixture(scope="module")
    def web_browser():
        needs_browser()
        with launch_browser() as context:
            yield context

    @_pytest.fixture
    def web_feed(web_broker, web_passwords):
        feeds: list[TableFeed] = []

        def make(table_id: str, **kw) -> TableFeed:
            f = TableFeed(web_broker, web_passwords["controller"], table_id, **kw)
            feeds.append(f)
            return f

        yield make
        for f in feeds:
            f.close()


def open_page(browser: Any, url: str, size: tuple[int, int] = (1920, 1080)) -> tuple[Any, list[str]]:
    """A new page at ``url`` once it is online, with its JavaScript errors collected."""
    page = browser.new_page()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    errors = watch_console(page)
    page.goto(url)
    page.wait_for_selector('body[data-conn="online"]', timeout=TIMEOUT_MS)
    return page, errors


__all__ = ["TIMEOUT_MS", "needs_browser", "open_page", "web_passwords", "web_broker", "web_server", "web_browser",
           "web_feed",
           "ACL", "ARTIFACTS", "CHROMIUM", "CHROMIUM_ARGS", "CONF", "REPO", "ROLES", "WEB", "Recorder", "TableFeed",
           "browse", "browser_missing", "card_tokens", "json_of", "launch_browser", "new_passwords", "play_scenario",
           "rig_parts", "save_screenshot", "showdown_holdem", "start_broker", "submit_hand", "wait_until",
           "watch_console"]
