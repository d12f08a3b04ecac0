"""The daemon's camera path on real parts, for the tests that need a dead tag on the flop.

Emulator (pty) -> link -> zones -> fusion -> engine for the tags that read; a synthetic camera over
the board renders what really lies there, so the fallback can identify the card whose tag never
reported.  :func:`camera_table` deals a two-seat hold'em hand up to the flop's burn; :meth:`CameraTable.flop`
lays the flop with one tag dead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from controller.app.config import validate_config
from controller.app.daemon import Daemon
from controller.demo.camera import SyntheticTableCamera
from controller.mqtt.broker import Broker
from controller.rules.cards import Card
from controller.rules.decks import DeckRegistry
from controller.rules.engine import HandEngine
from controller.rules.events import Act, Burn, NewHand, SeatPlayer, SetButton
from firmware_bridge.emulator import Emulator
from firmware_bridge.table_sim import TableLayout, enroll_deck
from tests.mqtt_util import wait_until


@dataclass
class CameraTable:
    daemon: Daemon
    emu: Emulator
    layout: TableLayout
    uids: dict[str, str]
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: What physically lies on the table's slots (read by the camera, tags or not).
    lies: dict[str, object] = field(default_factory=dict)

    def view(self) -> dict:
        with self.lock:
            return dict(self.lies)

    @property
    def engine(self) -> HandEngine:
        assert self.daemon.service is not None and self.daemon.service.engine is not None
        return self.daemon.service.engine

    def deal_to_the_flop(self) -> list[int]:
        """Seat two, deal their hole cards by tag, call and check, burn: returns the seats in order."""
        d = self.daemon
        d.submit(SeatPlayer(1, "Ann"))
        d.submit(SeatPlayer(2, "Bob"))
        d.submit(SetButton(2))
        d.submit(NewHand())
        order = list(self.engine.order)
        for rnd, cards in enumerate((("Qs", "Jh"), ("Qd", "Jc"))):
            for seat, face in zip(order, cards, strict=True):
                self.emu.place(self.layout.seat_antenna(seat, rnd), self.uids[face])
                with self.lock:
                    self.lies[f"seat:{seat}/{rnd}"] = (Card.parse(face), "down")
                wait_until(lambda s=seat, r=rnd: len(self.engine.hands[s]) > r, timeout=20,
                           what=f"hole card {rnd} at {seat}")
        d.submit(Act(order[1], "call"))
        d.submit(Act(order[0], "check"))
        d.submit(Burn(Card.parse("2c")))
        return order

    def flop(self, faces: tuple[str, str, str], dead: str) -> None:
        """Lay the flop; the ``dead`` card's tag never reads (only the camera sees it)."""
        for i, face in enumerate(faces):
            with self.lock:
                self.lies[f"board/{i}"] = Card.parse(face)
            if face != dead:
                self.emu.place(self.layout.board_antenna(i), self.uids[face])
            time.sleep(0.1)

    def flop_complete(self) -> Callable[[], bool]:
        return lambda: len([c for c in self.engine.board if c not in self.engine.premature]) == 3


@contextmanager
def camera_table(work: Path, *, tag_timeout: float) -> Iterator[CameraTable]:
    deck = enroll_deck("A")
    layout = TableLayout(seats=2, hole_slots=2)
    with Broker.start() as broker:
        config = validate_config({
            "table": {"id": "cam", "size": 2, "game": "holdem"},
            "mqtt": {"url": f"mqtt://127.0.0.1:{broker.port}"},
            "journal": {"path": str(work / "journal.sqlite")},
            "antennas": layout.zone_map.to_dict(),
            "camera": {"enabled": True, "fps": 10, "tag_timeout": tag_timeout},
        })
        emu = Emulator(layout.antenna_count, link_path=str(work / "ttyEMU")).start()
        table: CameraTable | None = None
        daemon = Daemon(config, registry=DeckRegistry([deck]),
                        backends={"serial": str(work / "ttyEMU"),
                                  "camera": lambda: SyntheticTableCamera(table.view if table else dict, seed=5)})
        table = CameraTable(daemon, emu, layout, {card.face: uid for uid, card in deck.tags.items()})
        daemon.start()
        try:
            daemon.sources["serial"].bridge.wait_synced(10)
            yield table
        finally:
            daemon.stop()
            emu.stop()
