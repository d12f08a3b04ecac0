"""The camera over the table as a daemon source (``[camera]``), the fallback for what tags miss.

A card with no tag read in time is identified by the camera (and handed to the antenna
pipeline as if its tag had been read); a tag and the camera disagreeing is an alert; a face-up
card where a face-down one belongs is an exposed card for the engine.  The camera cross-checks
every tag it can see, so it starts after the ``serial`` source and watches its events.

Backend: a callable ``() -> FrameSource`` (the demo's synthetic camera, a test's frames).

Recognition runs in a process of its own (:mod:`vision.recognition_worker`): the camera's thread
here grabs, skips unchanged scenes and waits on a pipe for the cards, so neither the daemon's loop
nor its other threads wait for a frame's recognition (nor for the interpreter it would hold).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from controller.rules.events import CameraReport
from controller.service.results import OutputKind
from controller.sources import SourceContext, SourcePlugin
from hw.camera.config import CameraSection
from vision.fallback import CameraCard, CameraFallback, CameraMismatch, ExposedCard, UnreadCard
from vision.recognition_worker import RecognitionWorker, RecognitionWorkerError
from vision.recognizer import CameraLayout

log = logging.getLogger(__name__)


class CameraSource:
    def __init__(self, ctx: SourceContext, section: CameraSection) -> None:
        self.ctx = ctx
        self.section = section
        self.camera: Any = None
        self.layout = CameraLayout.from_dict(section.rois) if section.rois else None
        self.fallback: CameraFallback | None = None
        self._lock = threading.Lock()
        self._pending: list[Any] = []
        self._loop: threading.Thread | None = None
        self.rfid: Any = None
        self.worker: RecognitionWorker | None = None

    def start(self) -> None:
        if self.layout is None:
            from vision.layout import reference_layout  # no regions configured: the reference table's

            self.layout = reference_layout("down")
        if self.ctx.backend is not None:
            self.camera = self.ctx.backend()
        else:
            from hw.camera.opencv import OpenCVCamera

            self.camera = OpenCVCamera(self.section.device)
        self.fallback = CameraFallback(self.layout, tag_timeout=self.section.tag_timeout)
        self.rfid = self.ctx.peers.get("serial")
        if self.rfid is not None:
            self.rfid.observers.append(self._note)
        from vision.labels import default_label_dir

        # The deck in play, as `tablectl calibrate-camera` stored it, is learnt by the worker.
        two_readers = self.section.two_readers if self.section.two_readers is not None else self.ctx.backend is None
        self.worker = RecognitionWorker(self.layout, default_label_dir(), two_readers=two_readers)
        if self.worker.examples:
            log.info("camera learns the deck in play", extra={"examples": self.worker.examples})
        worker = self.worker
        self._loop = self.ctx.thread(lambda: self._run(worker, 1.0 / self.section.fps), "camera")

    def _note(self, event: Any) -> None:
        # Called inside the antenna pipeline's lock: only note; act on the camera thread.
        if (getattr(event, "source", "") == "rfid" or getattr(event, "kind", "") == "order_unknown") \
                and self.fallback is not None:
            with self._lock:
                self._pending.extend(self.fallback.note_events([event]))

    def _run(self, worker: RecognitionWorker, period: float) -> None:
        assert self.fallback is not None and self.layout is not None
        gate = SceneGate()
        found: Any = None
        while not self.ctx.stopping.wait(period):
            try:
                captured = time.monotonic()  # what the frame shows is the table at this moment
                frame = self.camera.grab()
                if frame is None:
                    continue
                with self._lock:
                    wanted = self.fallback.wants_look()  # a card waits for the camera's verdict
                looked = found is None or gate.changed(frame) or wanted
                if looked:
                    found = None  # (a frame the recogniser fails on is not reused)
                    found = worker.scan(frame)  # in the worker's process; this thread waits on its pipe
                # else: the table looks as it did when last recognised; its cards are those, seen
                # again now, but not looked at again (no vote, no chance to read: CameraFallback.observe)
                held = antennas_hold_tags(self.rfid)  # (not under our lock: the link's is taken)
                with self._lock:
                    if held:
                        self.fallback.tags_held()
                    outs = (self._pending + self.fallback.observe(found, now=captured, looked=looked)
                            + self.fallback.poll())
                    self._pending = []
                self._act(outs)
            except RecognitionWorkerError as exc:
                if not self.ctx.stopping.is_set():  # (at a stop the worker is closed under it)
                    log.error("camera stopped: its recogniser process failed: %s", exc)
                return  # health() reports the camera's loop dead
            except Exception:
                log.exception("camera loop failed")

    def _act(self, outs: list[Any]) -> None:
        for out in outs:
            if isinstance(out, CameraCard):
                log.info("camera filled in a card no tag reported", extra={"zone": str(out.zone)})
                if self.rfid is not None:
                    self.rfid.camera_missed(str(out.zone))
                    self.rfid.pipeline.camera_identified(out.zone, out.card)
            elif isinstance(out, CameraMismatch):
                self.ctx.post(CameraReport("camera_mismatch", str(out.zone), out.camera.label(),
                                           f"tag read {out.rfid.label()}"), "camera")
            elif isinstance(out, ExposedCard):
                self.ctx.post(out.to_event(), "camera")
            elif isinstance(out, UnreadCard):
                if self.rfid is not None:  # seen, named by nothing: a miss of the antennas too
                    self.rfid.camera_missed(str(out.zone))
                self.ctx.post(CameraReport("card_unread", str(out.zone)), "camera")

    def after(self, outputs: list[Any]) -> None:
        if self.fallback is not None and any(out.kind == OutputKind.HAND_START for out in outputs):
            with self._lock:
                self.fallback.new_hand()

    def stop(self) -> None:
        if self.camera is not None:
            self.camera.close()
        if self.worker is not None:
            self.worker.close()

    def health(self) -> dict[str, Any]:
        return {"loop_alive": bool(self._loop and self._loop.is_alive()),
                "failures": getattr(self.camera, "failures", 0)}

    def healthy(self) -> bool:
        return bool(self._loop and self._loop.is_alive())


def antennas_hold_tags(rfid: Any) -> bool:
    """Whether the antenna board holds tags back now: its link is out of sync (a reboot, a
    replay of its inventory, unplugged), or cards of unknown order wait for the dealer's answer
    and the arrivals after them with them (``Fusion.awaiting``).  A face-down card untagged
    meanwhile is no card the camera failed on: :meth:`CameraFallback.tags_held`.  No antennas
    (``rfid`` None): nothing is held."""
    if rfid is None:
        return False
    bridge = getattr(rfid, "bridge", None)
    if bridge is not None and not bridge.health().synced:
        return True
    return bool(rfid.pipeline.fusion.awaiting)


class SceneGate:
    """Whether a frame differs from the last one recognised: the table lies still most of the time
    (between a live dealer's moves, seconds), and recognising an unchanged scene again gives the
    same cards at the cost of the whole recogniser.  Compared on a 160x90 grey thumbnail (area
    averaging takes out the sensor's noise): changed when more than ``pixels`` of its pixels moved
    by more than ``level``.  A card is hundreds of thumbnail pixels; the comparison is against the
    last frame recognised, so a slow drift is caught once it adds up.  The camera loop still
    recognises an unchanged scene while a card waits for the camera's verdict
    (:meth:`CameraFallback.wants_look`): cards handed on from the last recognition are no new look."""

    def __init__(self, size: tuple[int, int] = (160, 90), level: int = 24, pixels: int = 12) -> None:
        self.size, self.level, self.pixels = size, level, pixels
        self._last: Any = None

    def changed(self, frame: Any) -> bool:
        import cv2
        import numpy as np

        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
        small = cv2.resize(grey, self.size, interpolation=cv2.INTER_AREA)
        moved = self._last is None or int(np.count_nonzero(cv2.absdiff(small, self._last) > self.level)) > self.pixels
        if moved:
            self._last = small
        return moved


PLUGIN = SourcePlugin(name="camera", section=CameraSection, build=CameraSource, order=40)
