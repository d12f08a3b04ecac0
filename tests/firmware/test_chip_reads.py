"""The chip's own read paths (rp2fast, firmware 1.4.0), on the RP2040's binary without a host.

rp2040js runs MicroPython v1.22.0 with the firmware precompiled as installed; the MFRC522 model
answers SPI0.  What only the RP2040 runs is followed here: an empty slot read in one viper call,
the presence check of a known card as one viper SELECT per cascade level (4- and 7-byte UIDs),
a reader found dead by that same call, a card lifted and reported gone, and a card that stays
never reported gone.
"""

from __future__ import annotations

import os

import pytest

from firmware_bridge.chip.harness import Chip, firmware_files, missing
from firmware_bridge.firmware import bridge_proto as fw
from firmware_bridge.sim.rc522 import Tag

if missing():
    if os.environ.get("CI"):
        pytest.fail(f"the chip emulation is required in CI: {missing()}", pytrace=False)
    pytest.skip(missing() or "", allow_module_level=True)

UID7 = bytes.fromhex("04A1B2C3D4E5F6")
UID4 = bytes.fromhex("DEADBEEF")


def test_reads_presence_checks_a_dead_reader_and_a_leave_on_the_chip() -> None:
    chip = Chip(readers=8, mux=False, files=firmware_files(compiled=True))

    def kill() -> None:
        chip.readers[6].dead = 0xFF

    chip.clock.at(600_000, lambda: chip.table.place(2, Tag(UID7)))
    chip.clock.at(600_000, lambda: chip.table.place(5, Tag(UID4)))
    chip.clock.at(650_000, kill)
    chip.clock.at(800_000, lambda: chip.table.remove(2, UID7))
    counts: list[tuple[int, int]] = []  # antenna 5 (its card there throughout): transceives, REQAs

    def count() -> None:
        r = chip.readers[5]
        counts.append((r.transceives, r.commands.get(0x26, 0)))

    chip.clock.at(700_000, count)
    chip.clock.at(1_200_000, count)
    chip.run(1_250_000)
    reader = fw.FrameReader()
    frames = [(mtype, body) for _v, mtype, _s, body in reader.feed(chip.output())]
    hello = next(body for mtype, body in frames if mtype == fw.T_HELLO)
    assert tuple(hello[:3]) == fw.FIRMWARE_VERSION and hello[3] == 8
    arrived = [bytes(body) for mtype, body in frames if mtype == fw.T_TAG_ARRIVE]
    left = [bytes(body) for mtype, body in frames if mtype == fw.T_TAG_LEAVE]
    faults = [tuple(body[:2]) for mtype, body in frames if mtype == fw.T_FAULT]
    assert sorted(arrived) == sorted([fw.encode_uid_entry(2, UID7), fw.encode_uid_entry(5, UID4)])
    assert left == [fw.encode_uid_entry(2, UID7)]  # the 4-byte card stayed: every presence check saw it
    assert faults == [(6, fw.FAULT_READER_NOT_RESPONDING)]
    (t0, r0), (t1, r1) = counts
    reads = r1 - r0
    # A presence check is REQA + SELECT (2 frames), every FULL_EVERY-th (4th) read REQA + ANTICOLLISION
    # + SELECT (3): 2.25 a read.  A failing presence check adds a full anticollision to the same read.
    assert reads > 10 and (t1 - t0) / reads < 2.4, (t1 - t0, reads)


def test_what_the_emulator_is_told_miso_will_read_is_what_the_model_answers() -> None:
    """The emulator skips the round trip for the bytes whose MISO the model says it knows
    (``Chip._known_miso``: a register write's later bytes, a transaction's first byte under the
    same chip selects); over random transactions, reads and writes, one reader dead, two
    selected at once, every such claim is what the model then answers."""
    import random

    from firmware_bridge.chip.harness import PIN_RST

    chip = Chip(readers=4, mux=False, files={})
    chip.readers[3].dead = 0xFF
    rng = random.Random(5)
    idle = sum(1 << pin for pin in chip.cs_pins) | 1 << PIN_RST
    firsts: dict[int, int] = {}
    checked = {"first": 0, "rest": 0}
    for _ in range(400):
        selected = rng.choice([[], [0], [1], [2], [3], [0, 3], [1, 2]])
        levels = idle & ~sum(1 << chip.cs_pins[i] for i in selected)
        chip._gpio(levels)
        rest = None
        for k in range(rng.randint(1, 5)):
            mosi = rng.choice([0x88, 0x8C, 0xEE, 0x02, 0x12, 0x28, rng.randrange(256)])
            miso = chip._spi(mosi)
            if k == 0 and levels in firsts:
                assert miso == firsts[levels]
                checked["first"] += 1
            if rest is not None:
                assert miso == rest
                checked["rest"] += 1
            rest, first = chip._known_miso()
            if first is not None:
                firsts[levels] = first
        chip._gpio(idle)
    assert checked["first"] > 300 and checked["rest"] > 150, checked
