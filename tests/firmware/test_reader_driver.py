"""mfrc522.py, unmodified, against the register-level MFRC522 / ISO 14443-A model."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_bridge.sim.board import Board, load_firmware_module
from firmware_bridge.sim.rc522 import Tag

FW = Path(__file__).resolve().parents[2] / "firmware_bridge" / "firmware"
UID4 = bytes.fromhex("DEADBEEF")
UID7 = bytes.fromhex("04A1B2C3D4E5F6")
UID10 = bytes.fromhex("04112233445566778899")


def reader(*tags: Tag, version: int = 0x92, dead: int | None = None, baud: int = 4000000,
           cost: dict | None = None):
    board = Board(readers=1, fw_dir=str(FW), mux=False, versions={0: version}, spi_baud=baud,
                  dead={0: dead} if dead is not None else None, cost=cost)
    for tag in tags:
        board.table.place(0, tag)
    mfrc = load_firmware_module(board, "mfrc522")
    machine = board.stubs["machine"]
    r = mfrc.MFRC522(machine.SPI(0, baudrate=baud), machine.Pin(17, 1, value=1))
    return board, mfrc, r


@pytest.mark.parametrize("uid", [UID4, UID7, UID10])
def test_reads_every_uid_size(uid: bytes) -> None:
    _, _, r = reader(Tag(uid))
    assert r.init()
    assert r.scan() == [uid]


@pytest.mark.parametrize("powerup_us", [3000, 4500])
def test_slow_tags_get_the_iso_settle_time(powerup_us: int) -> None:
    # ISO/IEC 14443-3 5.2.1: 5 ms of field before the first command; 2.5 ms missed these tags.
    _, _, r = reader(Tag(UID7, powerup_us=powerup_us))
    r.init()
    assert r.scan() == [UID7]


def test_two_tags_on_one_antenna_are_both_found() -> None:
    _, _, r = reader(Tag(UID7), Tag(bytes.fromhex("04A1B2C3D4E5F7")))
    r.init()
    assert sorted(r.scan()) == sorted([UID7, bytes.fromhex("04A1B2C3D4E5F7")])
    assert r.collisions >= 1


def test_a_corrupted_select_acknowledge_is_no_uid() -> None:
    _, _, r = reader(Tag(UID4, crc_error=1.0))
    r.init()
    assert r.scan() == []


def test_a_cascade_bit_contradicting_the_cascade_tag_is_no_uid() -> None:
    _, _, r = reader(Tag(UID4, bad_cascade=True))  # SAK says "UID not complete" after a full 4-byte UID
    r.init()
    assert r.scan() == []


def test_a_truncated_answer_is_no_uid() -> None:
    _, _, r = reader(Tag(UID4, truncate=1.0))
    r.init()
    assert r.scan() == []


def test_no_halt_before_field_off() -> None:
    board, _, r = reader(Tag(UID7))
    r.init()
    r.scan()
    assert board.readers[0].commands.get(0x50, 0) == 0  # HLTA costs 1.4 ms and the field goes off anyway


def test_fast_spi_does_not_cut_a_7_byte_select_short() -> None:
    # The wait loop must be bounded by time, not by a count of register reads.
    cheap = {"spi_call": 1, "pin": 0.5, "ticks": 0.5}
    _, _, r = reader(Tag(UID7), baud=10000000, cost=cheap)
    r.init()
    assert r.scan() == [UID7]


@pytest.mark.parametrize("version", [0x12, 0x82, 0x88, 0xB2, 0x91, 0x92])
def test_clones_are_accepted(version: int) -> None:
    _, _, r = reader(Tag(UID4), version=version)
    assert r.init()
    assert r.scan() == [UID4]


def test_rf_cfg_reserved_bits_are_kept() -> None:
    board, _, r = reader()
    r.init()
    assert board.readers[0].reserved_violations == 0
    assert board.readers[0].regs[0x26] & 0x70 == 0x50


@pytest.mark.parametrize("stuck", [0x00, 0xFF])
def test_a_dead_reader_raises_instead_of_reading_empty(stuck: int) -> None:
    board, mfrc, r = reader(Tag(UID4))
    assert r.init()
    board.readers[0].dead = stuck
    with pytest.raises(OSError):
        r.scan()


def test_known_tag_presence_check_is_cheaper_than_a_full_read() -> None:
    board, _, r = reader(Tag(UID7))
    r.init()
    t0 = board.clock.now
    assert r.scan() == [UID7]
    full = board.clock.now - t0
    t0 = board.clock.now
    assert r.scan(known=[UID7]) == [UID7]
    check = board.clock.now - t0
    assert check < full
    board.table.remove(0, UID7)
    board.table.place(0, Tag(UID4))
    assert r.scan(known=[UID7]) == [UID4]  # the known one is gone: a full read finds the newcomer


def test_a_scan_is_timed_at_its_request_not_its_end() -> None:
    """``read_ms`` is when the scan's first REQA went, after the settle: the loop gives the protocol
    that time, so CONFIRM_MS lies between two reads' REQAs and a full anticollision (the longest
    read) is not added to every arrival (firmware 1.4.0)."""
    board, _, r = reader(Tag(UID7))
    r.init()
    reqa_at: list[float] = []
    real = board.readers[0].write_reg

    def write_reg(reg: int, value: int) -> None:
        if reg == 0x0D and value & 0x80 and not reqa_at:  # BitFramingReg StartSend: the first frame
            reqa_at.append(board.clock.now)
        real(reg, value)

    board.readers[0].write_reg = write_reg
    started = board.clock.now
    assert r.scan() == [UID7]
    assert board.clock.now - started > 5_000  # the settle, then REQA and two cascade levels
    assert abs(r.read_ms * 1000 - reqa_at[0]) < 1_000  # ticks_ms at the REQA, not at the end


def test_two_answers_to_the_select_of_one_uid_are_no_uid() -> None:
    """A SELECT answered by a collision (two tags with one UID: clones) is not a select: the read
    says nothing is there rather than raising out of the scan (the loop would take the reader for
    dead)."""
    _, mfrc, r = reader(Tag(UID7))
    r.init()
    real = r._transceive

    def transceive(data, last_bits=0, align=0):
        if len(data) == 9 and data[1] == 0x70:  # a SELECT (NVB 0x70, CRC_A)
            raise mfrc._Collision(b"\x08", 0x01)
        return real(data, last_bits, align)

    r._transceive = transceive
    assert r.scan() == []
