"""NfcReader against a frontend scripted at nfcpy's ContactlessFrontend boundary."""

from __future__ import annotations

import errno
import queue
import threading
import time

import ndef
import pytest

from controller.rules.cards import Card
from hw.nfc.fake import FakeTag, ScriptedFrontend, ScriptedOpener
from hw.nfc.reader import (
    NfcReader,
    NfcReaderConfig,
    ReaderHealth,
    TagRead,
    card_code_from_text,
    card_code_record,
    open_frontend,
    read_card_code,
)
from tests.conftest import poll

TIMEOUT = 5.0


def wait_for(predicate, timeout: float = TIMEOUT) -> bool:
    return poll(predicate, timeout, step=0.002)


class Ticker:
    """A clock that moves on by ``step`` every time it is read (thread-safe)."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            self.now += self.step
            return self.now


class Rig:
    def __init__(self, opener, clock=None, **cfg) -> None:
        cfg.setdefault("backoff_initial", 0.001)
        cfg.setdefault("backoff_max", 0.004)
        self.reads: queue.Queue[TagRead] = queue.Queue()
        self.health: list[ReaderHealth] = []
        self.opener = opener
        self.reader = NfcReader(
            NfcReaderConfig("muck", **cfg),
            on_tag=self.reads.put,
            on_health=self.health.append,
            frontend_factory=opener,
            clock=clock or Ticker(1.0),
        )

    def take(self, n: int) -> list[TagRead]:
        return [self.reads.get(timeout=TIMEOUT) for _ in range(n)]

    def idle(self) -> bool:
        """The last opened frontend has used up its script and waits in connect()."""
        return bool(self.opener.opened) and self.opener.opened[-1].idle.is_set()


@pytest.fixture
def make_rig():
    rigs: list[Rig] = []

    def make(*items, clock=None, **cfg) -> Rig:
        rig = Rig(ScriptedOpener(*items), clock, **cfg)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        assert rig.reader.stop(TIMEOUT)


def test_each_tap_reported_once_with_uid(make_rig):
    rig = make_rig([FakeTag("04a1b2c3d4e580"), FakeTag(b"\x04\x11\x22"), FakeTag("04A1B2C3D4E580")])
    rig.reader.start()
    got = rig.take(3)
    assert [r.uid for r in got] == ["04A1B2C3D4E580", "041122", "04A1B2C3D4E580"]
    assert all(r.zone == "muck" and r.card_code is None and r.note is None for r in got)
    assert wait_for(rig.idle)
    assert rig.reads.empty()
    assert rig.reader.health.ok and rig.reader.health.reads == 3


def test_flicker_at_the_edge_of_the_field_is_one_tap(make_rig):
    clock = Ticker(0.01)  # every sighting 10 ms after the last: well inside the hold-off
    rig = make_rig([FakeTag("0401"), FakeTag("0401"), FakeTag("0401"), FakeTag("0402")], clock=clock)
    rig.reader.start()
    assert [r.uid for r in rig.take(2)] == ["0401", "0402"]
    assert wait_for(rig.idle)
    assert rig.reads.empty()


def test_on_connect_keeps_tag_until_removed(make_rig):
    seen = {}

    class Spy(ScriptedFrontend):
        def connect(self, **options):
            seen.update(options["rdwr"])
            seen["terminate"] = options.get("terminate")
            return super().connect(**options)

    rig = make_rig()
    rig.reader = NfcReader(NfcReaderConfig("pad"), frontend_factory=lambda path: Spy([FakeTag("0401")]))
    rig.reader.start()
    assert next(rig.reader.reads(timeout=TIMEOUT)) == ("0401", None)
    # nfcpy contract: on-connect returning True makes connect() wait until the tag leaves
    assert seen["on-connect"](FakeTag("0499")) is True
    assert seen["targets"] == ["106A"] and callable(seen["terminate"])


def test_card_code_read_from_ndef_text_record(make_rig):
    rig = make_rig(
        [
            FakeTag("0401", [ndef.TextRecord("Ah")]),
            FakeTag("0402", [ndef.UriRecord("https://example.org"), ndef.TextRecord("card:Td@B", "de")]),
            FakeTag("0403", [ndef.TextRecord("hello")]),
            FakeTag("0404", []),
            FakeTag("0405", ndef_error=RuntimeError("tag left mid-read")),
            FakeTag("0406", octets=b"\xd1\x01"),  # truncated message in tag memory
            FakeTag("0407", [card_code_record(Card.parse("9c", "A"))]),
        ]
    )
    rig.reader.start()
    got = {r.uid: r for r in rig.take(7)}
    assert got["0401"].card_code == "Ah" and got["0401"].note is None
    assert got["0402"].card_code == "Td@B"
    assert got["0403"].card_code is None and "hello" in got["0403"].note
    assert got["0404"].card_code is None and got["0404"].note is None
    assert got["0405"].card_code is None and "mid-read" in got["0405"].note
    assert got["0406"].card_code is None
    assert got["0407"].card_code == "9c@A"


def test_read_ndef_can_be_turned_off():
    tag = FakeTag("0401", ndef_error=AssertionError("must not read memory"))
    reader = NfcReader(NfcReaderConfig("pad", read_ndef=False), frontend_factory=ScriptedOpener([tag]))
    with reader:
        assert next(reader.reads(timeout=TIMEOUT)) == ("0401", None)


def test_reader_failure_reopens_with_backoff_and_continues(make_rig):
    rig = make_rig(
        [FakeTag("0401"), OSError(errno.EIO, "unplugged")],  # raised from connect()
        OSError(errno.ENODEV, "No such device"),  # not back yet
        OSError(errno.ENODEV, "No such device"),
        [False],  # nfcpy swallowed an IOError inside connect() and returned False
        [FakeTag("0402"), FakeTag("0403")],
    )
    rig.reader.start()
    assert [r.uid for r in rig.take(3)] == ["0401", "0402", "0403"]
    assert wait_for(rig.idle)
    states = [(h.state, h.failures) for h in rig.health]
    assert states == [
        ("ok", 0),
        ("failed", 1),
        ("failed", 2),
        ("failed", 3),
        ("ok", 3),
        ("failed", 4),
        ("ok", 4),
        ("ok", 0),
    ]
    assert "unplugged" in rig.health[1].last_error
    assert rig.reader.health.opens == 3 and rig.reader.health.ok
    assert rig.opener.attempts == 5
    assert all(f.closed for f in rig.opener.opened[:-1])  # each failed reader was closed


def test_callback_errors_do_not_kill_the_reader():
    got: list[str] = []

    def on_tag(read: TagRead) -> None:
        got.append(read.uid)
        if read.uid == "0401":
            raise ValueError("consumer bug")

    reader = NfcReader(
        NfcReaderConfig("pad"),
        on_tag=on_tag,
        frontend_factory=ScriptedOpener([FakeTag("0401"), FakeTag("0402")]),
    )
    with reader:
        assert wait_for(lambda: got == ["0401", "0402"])
        assert reader.health.ok


def test_clean_stop_closes_the_reader(make_rig):
    rig = make_rig([FakeTag("0401")])
    rig.reader.start()
    rig.take(1)
    assert wait_for(rig.idle)
    assert rig.reader.running
    assert rig.reader.stop(TIMEOUT)
    assert not rig.reader.running
    assert rig.opener.opened[0].closed
    assert rig.reader.health.state == "stopped"
    assert rig.health[-1].state == "stopped"
    with pytest.raises(RuntimeError):
        rig.reader.start()


def test_stop_interrupts_a_long_backoff(make_rig):
    rig = make_rig(OSError(errno.ENODEV, "No such device"), backoff_initial=60, backoff_max=60)
    rig.reader.start()
    assert wait_for(lambda: rig.reader.health.state == "failed")
    started = time.monotonic()
    assert rig.reader.stop(TIMEOUT)
    assert time.monotonic() - started < 2.0


def test_reads_iterator_ends_on_stop():
    reader = NfcReader(
        NfcReaderConfig("pad"), frontend_factory=ScriptedOpener([FakeTag("0401", [ndef.TextRecord("Ks")])])
    )
    reader.start()
    it = reader.reads()
    assert next(it) == ("0401", "Ks")
    reader.stop(TIMEOUT)
    assert list(it) == []
    with pytest.raises(RuntimeError):
        next(NfcReader(NfcReaderConfig("x"), on_tag=print).reads())


def test_real_nfcpy_open_without_a_device_fails_as_oserror():
    with pytest.raises(OSError):
        open_frontend("tty:NOSUCHPORT0:pn532")
    health: list[ReaderHealth] = []
    reader = NfcReader(
        NfcReaderConfig("pad", path="tty:NOSUCHPORT0:pn532", backoff_initial=60, backoff_max=60),
        on_health=health.append,
    )
    with reader:
        assert wait_for(lambda: reader.health.state == "failed")
    assert "cannot open" in health[0].last_error


def test_card_code_convention():
    assert card_code_from_text("Ah") == "Ah"
    assert card_code_from_text(" card:ah ") == "Ah"
    assert card_code_from_text("CARD:Td@B") == "Td@B"
    assert card_code_from_text("card:joker@A") == "joker@A"
    for bad in ("", "card:", "hello", "A", "1h", "Ah@B C", 7):
        assert card_code_from_text(bad) is None, bad
    assert card_code_record(Card.parse("Ah", "A")).text == "card:Ah@A"
    assert card_code_record("qs").text == "card:Qs"
    with pytest.raises(ValueError):
        card_code_record("zz")
    assert read_card_code(FakeTag("01", [card_code_record("2c")])) == ("2c", None)
    assert read_card_code(FakeTag("01")) == (None, None)


def test_config_validation():
    with pytest.raises(ValueError):
        NfcReaderConfig("")
    with pytest.raises(ValueError):
        NfcReaderConfig("pad", backoff_initial=2, backoff_max=1)
