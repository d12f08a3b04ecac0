"""The antenna board as a daemon source (``[serial]``): link -> zones -> fusion -> engine.

Presence changes go through zones, fusion and the engine on the link's own thread, under the
engine owner's lock (no hand-off on the path a dealer waits on); a small timer thread closes
debounce windows and board groups.  After a restart the board re-reports every tag on the table:
the cards the journal already placed are remembered, never dealt twice.

Backend: a serial URL (an emulator's pty or ``socket://``) in place of ``[serial] port``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from controller.rules.events import CameraReport, UnknownTagRead
from controller.rules.operations import BoardShown, CardBurned, CardDealt
from controller.service.results import ButtonDrawn, HandBegan
from controller.sources import SourceContext, SourcePlugin
from firmware_bridge.config import SerialSection
from firmware_bridge.diagnostics import ReaderDiagnostics
from firmware_bridge.fusion import Fusion, OrderUnknown, RfidPipeline, UnknownTag
from firmware_bridge.link import BridgeLink, LinkConfig
from firmware_bridge.zones import ZoneTracker

log = logging.getLogger(__name__)


class RfidSource:
    """The antenna board's link and the pipeline that turns its presence changes into events."""

    def __init__(self, ctx: SourceContext, section: SerialSection) -> None:
        self.ctx = ctx
        self.url = str(ctx.backend) if ctx.backend is not None else section.port
        self.baudrate = section.baudrate
        self.heartbeat_timeout = section.heartbeat_timeout
        self.device_time_scale = section.device_time_scale
        #: Called with every event the antennas produce, before it is applied, and with each
        #: OrderUnknown (tags read, their order asked of the dealer): the camera's cross-check.
        self.observers: list[Callable[[Any], None]] = []
        # Arrivals commit at once: the firmware confirms each with a second read (see zones.py).
        self.pipeline = RfidPipeline(ZoneTracker(ctx.config.zone_map(), arrive_debounce=0.0), Fusion(ctx.registry),
                                     self._sink, lock=ctx.owner_lock)
        self.bridge: BridgeLink | None = None
        self._timer: Any = None
        #: Reads, misses, collisions, dead readers, the scan cycle (the ``diagnostics`` topic).
        self.diagnostics = ReaderDiagnostics(ctx.config.zone_map())

    def _sink(self, item: Any) -> None:
        # Runs under the owner lock (the pipeline's lock is the owner's): apply in place.
        if isinstance(item, UnknownTag):
            self.ctx.apply_now(UnknownTagRead(str(item.zone), item.uid), "rfid")
            return
        if isinstance(item, OrderUnknown):  # never dealt in a guessed order: the dealer confirms them
            for observe in self.observers:  # (their tags were read: the camera hears of them)
                observe(item)
            # (request/confirm; the arrivals after them wait meanwhile: Fusion.confirmed)
            cards = ", ".join(f"{z.name} {c.label()}" for z, c in item.cards)
            self.ctx.apply_now(CameraReport("order_unknown", item.cards[0][0].name,
                                            detail=f"order unknown (reconnect or stall), confirm: {cards}"), "rfid")
            return
        for observe in self.observers:
            observe(item)
        self.ctx.apply_now(item, "rfid")

    def start(self) -> None:
        engine = self.ctx.engine()
        if engine is not None and not engine.over:
            self.pipeline.remember(engine.placements())
        config = LinkConfig(baudrate=self.baudrate, heartbeat_timeout=self.heartbeat_timeout,
                            device_time_scale=self.device_time_scale)
        self.bridge = BridgeLink(self.url, config, on_change=lambda change: self.pipeline.feed(change),
                                 diagnostics=self.diagnostics).start()
        self._timer = self.ctx.thread(self._poll, "rfid-timer")

    def _poll(self) -> None:
        while not self.ctx.stopping.wait(0.02):
            try:
                if self.bridge is not None:
                    health = self.bridge.health()
                    if not health.synced and not health.down:  # cards may still come (a replay)
                        self.pipeline.hold()
                self.pipeline.poll()
                if self.bridge is not None:  # where the next cards should land: the board reads there first
                    self.bridge.expect(self.pipeline.expected_antennas(self.ctx.engine()))
            except Exception:
                log.exception("rfid pipeline poll failed")

    def after(self, outputs: list[Any]) -> None:
        """A new hand starts the pipeline afresh (the last hand's tags are forgotten), and so does a
        draw for the button (the card a seat had last hand may be its card in the draw)."""
        if any(isinstance(out.result, HandBegan) or (isinstance(out.result, ButtonDrawn) and out.result.started)
               for out in outputs):
            self.pipeline.new_hand()
        elif self.pipeline.fusion.awaiting:  # the dealer may just have confirmed them (request/confirm)
            engine = self.ctx.engine()
            if engine is not None:
                self.pipeline.confirmed(engine.placements())
        elif any(isinstance(out.result, CardDealt | CardBurned | BoardShown) and out.result.source == "dealer"
                 for out in outputs):
            # The dealer entered cards the table never heard of (request/confirm, unasked): a late
            # report of one of their tags is that card where he put it, not a second deal.
            engine = self.ctx.engine()
            if engine is not None:
                self.pipeline.remember(engine.placements())

    def stop(self) -> None:
        if self.bridge is not None:
            self.bridge.stop()

    def health(self) -> dict[str, Any]:
        out = self.bridge.health().to_dict() if self.bridge is not None else {}
        out["timer_alive"] = bool(self._timer and self._timer.is_alive())
        return out

    def camera_missed(self, zone: str) -> None:
        """The camera saw a card in ``zone`` that no tag reported (a miss, per antenna when it can tell)."""
        self.diagnostics.miss(zone, self.bridge.presence() if self.bridge is not None else {})

    def diagnostics_payload(self) -> dict[str, Any]:
        """What the ``diagnostics`` topic says of the antenna board: the link's state and the counters."""
        health = self.bridge.health() if self.bridge is not None else None
        link = {"state": health.state if health else "stopped", "synced": bool(health and health.synced),
                "firmware_version": health.firmware_version if health else None,
                "last_heartbeat_age": None if health is None or health.last_heartbeat_age is None
                else round(health.last_heartbeat_age, 2),
                "corrupt_frames": health.counters.get("corrupt_frames", 0) if health else 0}
        return {"link": link, **self.diagnostics.snapshot()}

    def healthy(self) -> bool:
        """The timer turns and the link is not down (thread dead, device refused, or none in sync
        for ``LinkConfig.down_after``): otherwise the daemon's watchdog stops being fed."""
        link_up = self.bridge is not None and not self.bridge.health().down
        return bool(self._timer and self._timer.is_alive()) and link_up


PLUGIN = SourcePlugin(name="serial", section=SerialSection, build=RfidSource, order=10,
                      default=lambda: SerialSection(enabled=False))
