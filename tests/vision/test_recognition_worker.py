"""The camera's recogniser in its own process (vision/recognition_worker.py): the same cards as in
the daemon's process, and a clear error, not a hang, when that process dies."""

from __future__ import annotations

import pytest

from controller.rules.cards import Card
from vision.layout import reference_layout
from vision.recognition_worker import RecognitionWorker, RecognitionWorkerError
from vision.recognizer import Recognizer
from vision.synth import SyntheticCamera


def _cards(found: dict) -> dict[str, list]:
    return {str(zone): [(d.card, d.face, d.slot) for d in ds] for zone, ds in found.items()}


def test_the_worker_finds_what_the_recogniser_finds_in_process() -> None:
    layout = reference_layout("down")
    frame = SyntheticCamera(seed=4).frame({"board/0": Card.parse("As"), "board/1": Card.parse("Td"),
                                           "seat:1/0": (Card.parse("Kh"), "down")}).bgr
    worker = RecognitionWorker(layout, None)
    try:
        assert worker.examples == 0
        got = worker.scan(frame)
        assert worker.scan(frame.copy()).keys() == got.keys()  # a second frame on the same pipe
    finally:
        worker.close()
    want = Recognizer.stock().scan(frame, layout, keep_crops=False)
    assert _cards(got) == _cards(want)
    assert any(d.card == Card.parse("As") for d in got[next(z for z in got if str(z) == "board")])
    with pytest.raises(RecognitionWorkerError):
        worker.scan(frame)  # closed: an error at once


def test_the_worker_in_two_reader_mode_reads_as_the_two_reader_recogniser() -> None:
    """``[camera] two_readers`` (on for a real camera) reaches the worker's recogniser."""
    layout = reference_layout("down")
    frame = SyntheticCamera(seed=5).frame({"board/0": Card.parse("Qs"), "board/1": Card.parse("7d")}).bgr
    worker = RecognitionWorker(layout, None, two_readers=True)
    try:
        got = worker.scan(frame)
    finally:
        worker.close()
    assert _cards(got) == _cards(Recognizer.two_reader().scan(frame, layout, keep_crops=False))


def test_a_dead_worker_is_an_error_not_a_hang() -> None:
    worker = RecognitionWorker(reference_layout("down"), None)
    worker._proc.kill()
    worker._proc.wait(10)
    with pytest.raises(RecognitionWorkerError, match="process ended"):
        worker.scan(SyntheticCamera(seed=1).frame({}).bgr)
    worker.close()
