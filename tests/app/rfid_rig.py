"""A real daemon fed by the emulated antenna board on a pty (the RFID pipeline as on the table),
for the fault tests of issue 26: four seats, hold'em, the reference antenna wiring."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from controller.app.daemon import Daemon
from controller.demo.config import demo_config
from controller.mqtt.broker import Broker
from controller.rules.cards import standard_deck
from controller.rules.decks import Deck, DeckRegistry
from controller.rules.events import NewHand, SeatPlayer, SetButton
from tests.mqtt_util import wait_until

FACES = ["Ah", "Kd", "Qs", "Jc", "Th", "9d", "8s", "7c"]


@dataclass
class Rig:
    daemon: Daemon
    emulator: object
    uids: dict[str, str]
    slots: list[tuple[int, int]]  # (seat, round) in dealing order
    start: Callable[[], Daemon] | None = None  # a new daemon on the same journal and board

    def restart(self, down: Callable[[], None] = lambda: None) -> None:
        """Stop the daemon (as a kill would, but for its own threads), run ``down`` while there is
        none, and start a new one on the same journal and board, in sync with it."""
        assert self.start is not None
        self.daemon.stop()
        down()
        self.daemon = self.start()

    def place(self, n: int) -> None:
        """The n-th hole card of the hand (0-based) lands on its seat's antenna."""
        seat, rnd = self.slots[n]
        self.emulator.place((seat - 1) * 2 + rnd, self.uids[FACES[n]])  # type: ignore[attr-defined]

    def dealt(self) -> int:
        assert self.daemon.journal is not None
        return sum(1 for e in self.daemon.journal.entries() if e.event.kind == "deal")

    def deal(self, n: int) -> None:
        self.place(n)
        wait_until(lambda: self.dealt() >= n + 1, timeout=10, what=f"card {n + 1} journaled")


@contextlib.contextmanager
def rfid_table(broker: Broker, journal: Path, tty: Path, heartbeat_ms: int = 50) -> Iterator[Rig]:
    """A started daemon with a new hand open (seats 1-4, button 4); ``heartbeat_ms``: the board's."""
    from firmware_bridge.emulator import Emulator

    deck = Deck("A")
    uids = {}
    for i, card in enumerate(standard_deck()):
        uids[card.face] = f"04{i:02X}66BB"
        deck.add(uids[card.face], card)
    emu = Emulator(antenna_count=24, link_path=str(tty), heartbeat_ms=heartbeat_ms).start()
    cfg = demo_config("t1", size=4, journal=journal, mqtt_url=broker.url, broadcast_delay=0)

    def start() -> Daemon:
        d = Daemon(cfg, registry=DeckRegistry([deck]), backends={"serial": str(tty)}).start()
        assert d.link is not None and d.link.connected_event.wait(10)
        assert d.sources["serial"].bridge.wait_synced(20)  # type: ignore[attr-defined]
        return d

    rig = None
    d = start()
    try:
        for seat in (1, 2, 3, 4):
            d.submit(SeatPlayer(seat, f"p{seat}"))
        d.submit(SetButton(4))
        d.submit(NewHand())
        assert d.service is not None and d.service.engine is not None
        order = list(d.service.engine.order)
        rig = Rig(d, emu, uids, [(seat, rnd) for rnd in (0, 1) for seat in order], start)
        yield rig
    finally:
        (rig.daemon if rig is not None else d).stop()
        emu.stop()
