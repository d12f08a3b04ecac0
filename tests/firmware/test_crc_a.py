"""CRC_A (ISO/IEC 14443-3) in the firmware's MFRC522 driver and in the reader model it runs against:
each is pinned to the standard's CRC (the ``crc`` package's CRC-16/ISO-IEC-14443-3-A) and to
the halt frame every reader sends, so a slip in one cannot hide behind the other."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType

import crc
import pytest

REPO = Path(__file__).resolve().parents[2]
# CRC-16/ISO-IEC-14443-3-A as the CRC catalogue writes it (init is the unreflected 0x6363).
ISO_14443_A = crc.Calculator(crc.Configuration(16, 0x1021, 0xC6C6, 0, True, True))


def _module(name: str, relative: str) -> ModuleType:
    """The MicroPython source loaded as it is under CPython (both files keep to the shared dialect)."""
    spec = importlib.util.spec_from_file_location(name, REPO / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SIDES = {"driver": "firmware_bridge/firmware/mfrc522.py", "model": "firmware_bridge/sim/rc522.py"}


@pytest.mark.parametrize("side", sorted(SIDES))
def test_crc_a_is_the_standards(side: str) -> None:
    crc_a = _module(f"crc_a_{side}", SIDES[side]).crc_a
    assert ISO_14443_A.checksum(b"123456789") == 0xBF05  # the catalogue's check value
    assert crc_a(b"\x50\x00") == b"\x57\xcd"  # HLTA: the halt frame 50 00 57 CD every reader sends
    rng = random.Random(14443)
    for _ in range(500):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 12)))
        assert crc_a(data) == ISO_14443_A.checksum(data).to_bytes(2, "little"), data.hex()
