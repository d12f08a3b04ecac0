"""Wire codec: round trips, firmware/host agreement byte for byte, resync, fuzzing."""

from __future__ import annotations

import random

import crc
from cobs import cobs
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge import protocol as p
from firmware_bridge.firmware import bridge_proto as fw

uids = st.binary(min_size=1, max_size=p.MAX_UID_LEN)
seqs = st.integers(0, 0xFFFF)
u8 = st.integers(0, 255)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)

SAMPLES: list[p.Message] = [
    p.Hello((1, 2, 3), 28, 0xDEADBEEF, 1, 500, seq=0),
    p.Heartbeat(0xDEADBEEF, 123456, 789, 12, seq=65535),
    p.TagArrive(3, bytes.fromhex("04A1B2C3D4E5F6"), seq=7),
    p.TagLeave(27, bytes.fromhex("DEADBEEF"), seq=8),
    p.Inventory(42, 9, 1, 2, ((0, b"\x01\x02\x03\x04"), (5, bytes(10))), seq=9),
    p.Inventory(42, 9, 2, 2, (), seq=10),
    p.Fault(p.SOURCE_CONTROLLER, p.FaultCode.READER_NOT_RESPONDING, 3, seq=11),
    p.Ack(100, p.MessageType.CONFIGURE, p.AckStatus.BAD_ARGS, seq=12),
    p.HelloAck(0, seq=1),
    p.HelloAck(0xDEADBEEF, seq=2),
    p.Configure(100, 250, 500, None, seq=3),
    p.Configure(20, 60, 50, (0, 1, 9, 27), seq=4),
    p.RequestInventory(seq=5),
    p.Reboot(seq=6),
    p.Expect((3, 4, 22), seq=13),
    p.Expect((), seq=14),
    p.Replay(65530, seq=15),
]


def test_round_trip_every_message_type() -> None:
    assert {type(m) for m in SAMPLES} == set(p.MESSAGE_CLASSES.values())
    for msg in SAMPLES:
        frame = p.encode(msg)
        assert frame.endswith(b"\x00") and b"\x00" not in frame[:-1]
        assert p.decode_frame(frame[:-1]) == msg


def test_constants_match_firmware() -> None:
    assert p.PROTOCOL_VERSION == fw.PROTOCOL_VERSION
    for t in p.MessageType:
        assert getattr(fw, f"T_{t.name}") == t.value


@given(st.binary(max_size=700))
def test_firmware_cobs_matches_package(data: bytes) -> None:
    encoded = fw.cobs_encode(data)
    assert encoded == cobs.encode(data)
    assert fw.cobs_decode(encoded) == data


@given(st.binary(max_size=300))
def test_firmware_cobs_decode_agrees_on_arbitrary_input(data: bytes) -> None:
    try:
        expected: bytes | None = cobs.decode(data)
    except cobs.DecodeError:
        expected = None
    try:
        got: bytes | None = fw.cobs_decode(data)
    except ValueError:
        got = None
    assert got == expected


@given(st.binary(max_size=600))
def test_firmware_crc_matches_package(data: bytes) -> None:
    calc = crc.Calculator(crc.Crc16.IBM_3740)
    assert fw.crc16(data) == calc.checksum(data) == p.crc16(data)


def test_crc_check_value() -> None:
    assert fw.crc16(b"123456789") == 0x29B1  # the CRC-16/CCITT-FALSE check value


@given(seqs, u8, uids, st.booleans())
def test_firmware_frames_equal_host_frames(seq: int, antenna: int, uid: bytes, arrive: bool) -> None:
    cls = p.TagArrive if arrive else p.TagLeave
    msg = cls(antenna, uid, seq=seq)
    fw_frame = fw.encode_frame(fw.PROTOCOL_VERSION, cls.TYPE, seq, fw.encode_uid_entry(antenna, uid))
    assert fw_frame == p.encode(msg)
    assert fw.decode_frame(fw_frame[:-1]) == (fw.PROTOCOL_VERSION, cls.TYPE, seq, msg.body())


@given(seqs, u16, u16, st.integers(10, 60000), st.none() | st.lists(st.integers(0, 63), max_size=20))
def test_host_commands_decode_on_firmware(seq: int, scan: int, deb: int, hb: int, enabled) -> None:
    msg = p.Configure(scan, deb, hb, None if enabled is None else tuple(sorted(set(enabled))), seq=seq)
    version, mtype, got_seq, body = fw.decode_frame(p.encode(msg)[:-1])
    assert (version, mtype, got_seq) == (p.PROTOCOL_VERSION, p.MessageType.CONFIGURE, seq)
    assert p.Configure.parse(body, seq, version) == msg


def test_decoder_resyncs_after_garbage_truncation_and_overlong_runs() -> None:
    a, b, c = (p.encode(p.TagArrive(i, b"\x01\x02\x03\x04", seq=i)) for i in range(3))
    overlong = bytes(range(1, 256)) * 3 + b"\x00"
    stream = b"\x13\x37garbage\x00" + a + b[:6] + b"\x00" + overlong + c + b"\x00\x00"
    dec = p.FrameDecoder()
    out = []
    for i in range(0, len(stream), 7):  # arbitrary chunking must not matter
        out += dec.feed(stream[i : i + 7])
    msgs = [m for m in out if isinstance(m, p.Message)]
    assert [m.seq for m in msgs] == [0, 2]
    assert sum(dec.errors.values()) == 3 and dec.errors["length"] == 1


def test_rejections_are_classified() -> None:
    good = p.encode(p.TagArrive(1, b"\xaa\xbb\xcc\xdd"))[:-1]
    raw = bytearray(cobs.decode(good))
    raw[-1] ^= 0x01
    assert p.decode_frame(cobs.encode(bytes(raw))).reason == "crc"
    assert p.decode_frame(b"\x05ab").reason == "cobs"
    assert p.decode_frame(cobs.encode(b"\x01\x02")).reason == "length"

    def framed(version: int, mtype: int, body: bytes) -> bytes:
        return fw.encode_frame(version, mtype, 0, body)[:-1]

    assert p.decode_frame(framed(1, 0x7E, b"")).reason == "type"
    assert p.decode_frame(framed(9, p.MessageType.TAG_ARRIVE, b"\x01\x04abcd")).reason == "version"
    assert p.decode_frame(framed(1, p.MessageType.TAG_ARRIVE, b"\x01\x05abcd")).reason == "body"
    assert p.decode_frame(framed(1, p.MessageType.HEARTBEAT, b"\x00" * 3)).reason == "body"
    # A HELLO from a future version still decodes, so the host can refuse it by name.
    hello = p.Hello((9, 0, 0), 4, 77, seq=0)
    future = p.decode_frame(framed(2, p.MessageType.HELLO, hello.body() + b"more"))
    assert isinstance(future, p.Hello) and future.protocol_version == 2 and future.boot_id == 77


@settings(max_examples=300)
@given(st.lists(st.binary(max_size=300), max_size=8))
def test_fuzz_decoder_never_raises(chunks: list[bytes]) -> None:
    dec = p.FrameDecoder()
    for chunk in chunks:
        for item in dec.feed(chunk):
            assert isinstance(item, p.Message | p.FrameError)
            if isinstance(item, p.Message):  # only possible if the CRC really checks
                frame = p.encode(item, getattr(item, "protocol_version", p.PROTOCOL_VERSION))
                assert p.decode_frame(frame[:-1]) == item


def test_random_noise_yields_no_messages() -> None:
    rng = random.Random(1234)
    dec = p.FrameDecoder()
    noise = rng.randbytes(400_000)
    out = dec.feed(noise)
    assert not [m for m in out if isinstance(m, p.Message)]
    assert sum(dec.errors.values()) > 1000


@given(st.data())
def test_bit_flips_never_turn_into_another_message(data) -> None:
    msg = data.draw(st.sampled_from(SAMPLES))
    frame = bytearray(p.encode(msg))
    i = data.draw(st.integers(0, len(frame) - 2))
    frame[i] ^= 1 << data.draw(st.integers(0, 7))
    out = p.FrameDecoder().feed(bytes(frame) + p.encode(p.Reboot(seq=99)))
    msgs = [m for m in out if isinstance(m, p.Message)]
    assert msgs[-1] == p.Reboot(seq=99)  # the decoder is back in sync for the next frame
    assert all(m == p.Reboot(seq=99) for m in msgs)


def test_large_inventory_splits_into_consecutive_parts() -> None:
    frames: list[bytes] = []
    dev = fw.Device(64, frames.append, boot_id=5)
    dev.debounce_ms = 0
    tags = {a: [bytes([a, i]) + bytes(5) for i in range(3)] for a in range(64)}
    for t in (0, 1):
        for a in range(64):
            dev.observe(a, tags[a], t)
        dev.end_cycle(t)
    out = p.FrameDecoder().feed(b"".join(frames))
    inv = [m for m in out if isinstance(m, p.Inventory)]
    assert len(inv) > 1 and all(m.parts == len(inv) for m in inv)
    assert [m.part for m in inv] == list(range(1, len(inv) + 1))
    assert [m.seq for m in inv] == list(range(inv[0].seq, inv[0].seq + len(inv)))
    got = {(a, u) for m in inv for a, u in m.entries}
    assert got == {(a, u) for a, us in tags.items() for u in us}
    assert all(len(f) <= p.MAX_ENCODED + 1 for f in frames)
