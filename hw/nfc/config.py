"""The ``[nfc]`` config section: reader zones and their nfcpy device paths (no nfcpy needed)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from controller.sources import KeyedProblems, Section


class NfcReaderSection(Section):
    zone: str = Field(pattern=r"^[A-Za-z0-9_:-]+$", description="reader zone name, e.g. 'enroll' or 'muck'")
    path: str = Field(min_length=1, description="nfcpy device path: usb, usb:072f:2200, tty:AMA0 ...")


class NfcSection(Section):
    readers: list[NfcReaderSection] = Field(default_factory=list)
    #: Dealers' badges: UID in hex (any case) -> the name every hand and ruling carries (a badge tapped
    #: on any of the table's readers signs that dealer in).
    badges: dict[str, str] = Field(default_factory=dict)

    @field_validator("badges")
    @classmethod
    def _names(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [(uid, "a dealer's name is 1 to 64 characters") for uid, name in v.items() if not 1 <= len(name) <= 64]
        if bad:
            raise KeyedProblems(bad)
        return {uid.lower(): name for uid, name in v.items()}

    @field_validator("readers")
    @classmethod
    def _unique(cls, v: list[NfcReaderSection]) -> list[NfcReaderSection]:
        problems = []
        zones: dict[str, int] = {}
        paths: dict[str, int] = {}
        for i, r in enumerate(v):
            if r.zone in zones:
                problems.append((f"{i}.zone", f"zone {r.zone!r} is already reader {zones[r.zone]}'s"))
            zones.setdefault(r.zone, i)
            if r.path in paths:
                problems.append((f"{i}.path", f"device {r.path!r} is already reader {paths[r.path]}'s"))
            paths.setdefault(r.path, i)
        if problems:
            raise KeyedProblems(problems)
        return v


def check_against_table(section: NfcSection, table: Any) -> list[tuple[str, str]]:
    """A reader on ``seat:N`` must sit at a seat of the table."""
    problems = []
    for i, r in enumerate(section.readers):
        m = re.fullmatch(r"seat:(\d+)", r.zone)
        if m and not 1 <= int(m.group(1)) <= table.size:
            problems.append((f"readers.{i}.zone", f"'{r.zone}' is not a zone on a {table.size}-seat table"))
    return problems
