"""The same firmware on real MicroPython (the official WebAssembly port under Node): byte for byte
what CPython's run of the model gives, on scenarios covering the driver and the loop's fixes."""

from __future__ import annotations

import binascii
from pathlib import Path

import pytest

from firmware_bridge import protocol as p
from firmware_bridge.sim import mpy, scenarios

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not mpy.available(), reason="MicroPython WebAssembly port not installed (scripts/bootstrap)"),
]

FW = str(Path(__file__).resolve().parents[2] / "firmware_bridge" / "firmware")
S = 1_000_000

SCENARIOS = {
    # slow tags, two tags on one antenna, 4/7/10-byte UIDs, a dead reader, a clone
    "cards": dict(
        moves=[[0, "place", 3, "04A1B2C3D4E5F6"], [1_500_000, "place", 5, "DEADBEEF", 4000],
               [1_600_000, "place", 5, "04A1B2C3D4E5F7"], [1_700_000, "place", 20, "04112233445566778899"],
               [2_000_000, "remove", 3, "04A1B2C3D4E5F6"]],
        dead={"7": 255}, versions={"9": 0x12}, until_us=3 * S),
    # a host REBOOT (ACK first, reported as a host request), a late HELLO_ACK(0) learning the dead reader
    "host": dict(
        dead={"2": 0}, until_us=3 * S,
        host=[[1_000_000, binascii.hexlify(p.encode(p.HelloAck(0, seq=1))).decode()],
              [1_500_000, binascii.hexlify(p.encode(p.Reboot(seq=2))).decode()]]),
}


def messages(out_hex: str) -> list[p.Message]:
    return [m for m in p.FrameDecoder().feed(binascii.unhexlify(out_hex)) if isinstance(m, p.Message)]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_micropython_runs_the_firmware_byte_for_byte_as_cpython(name: str) -> None:
    params = SCENARIOS[name]
    under_mpy = mpy.run_scenario("script", **params)
    under_cpython = scenarios.run("script", fw_dir=FW, **params)
    assert under_mpy["crashes"] == [] and under_cpython["crashes"] == []
    assert under_mpy == under_cpython
    msgs = messages(under_mpy["out"])
    if name == "cards":
        arrived = {(m.antenna, m.uid.hex().upper()) for m in msgs
                   if isinstance(m, p.TagArrive) and not isinstance(m, p.TagLeave)}
        assert arrived == {(5, "DEADBEEF"), (5, "04A1B2C3D4E5F7"), (20, "04112233445566778899")}
        assert [(m.antenna, m.uid.hex().upper()) for m in msgs if isinstance(m, p.TagLeave)] == [
            (3, "04A1B2C3D4E5F6")]
        assert [(f.source, f.code) for f in msgs if isinstance(f, p.Fault)] == [(7, 1)]
    else:
        hellos = [m for m in msgs if isinstance(m, p.Hello)]
        assert hellos[-1].reset_cause == 2 and len(under_mpy["boots"]) == 2
        assert sum(1 for m in msgs if isinstance(m, p.Fault) and m.source == 2) >= 2
