"""The chips part of the conformance FORMAT: header keys, the ``put`` step, the chips state
checks and ``final_stacks`` (kept apart from :mod:`controller.rules.scenario` so the card and chip
halves of the loader stay small)."""

from __future__ import annotations

from typing import Any

from controller.rules.chips import ChipsError, Stakes
from controller.rules.events import Put

CHIPS_KEYS = ("stacks", "blinds", "straddle", "ante", "bb_ante", "bring_in", "limits", "raise_cap")
STATE_KEYS = ("pot", "stacks", "to_call", "min_raise", "max_raise")


def stakes_from_header(data: dict[str, Any]) -> Stakes | None:
    """The header's chips keys as :class:`Stakes`; None when ``stacks`` is absent (no chips)."""
    if "stacks" not in data:
        extra = [k for k in CHIPS_KEYS if k in data]
        if extra:
            raise ChipsError(f"{extra} need 'stacks' (chip accounting is on only with stacks)")
        return None
    if not isinstance(data["stacks"], dict):
        raise ChipsError("stacks must map every dealt-in seat to its chips")
    seats = {int(s) for s in data.get("seats") or []}
    given = {int(s) for s in data["stacks"]}
    if given != seats:
        raise ChipsError(f"stacks must give every dealt-in seat and no other: seats {sorted(seats)}, "
                         f"stacks for {sorted(given)}")
    blinds = data.get("blinds")
    if isinstance(blinds, int):
        blinds = [blinds]
    return Stakes.from_dict({k: (blinds if k == "blinds" else data[k]) for k in CHIPS_KEYS
                             if data.get(k) is not None})


def put_event(val: Any) -> Put:
    """``put: {seat, chips: [...], declare: call|raise|bet|all_in|{raise: N}}``"""
    if not isinstance(val, dict) or "seat" not in val or "chips" not in val:
        raise ChipsError("put needs seat and chips")
    chips = val["chips"]
    if not isinstance(chips, list):
        chips = [chips]
    declare = val.get("declare")
    to = None
    if isinstance(declare, dict):
        if len(declare) != 1:
            raise ChipsError(f"declare is a word or one {{word: total}}, got {declare!r}")
        (declare, to), = declare.items()
        to = int(to)
    return Put(int(val["seat"]), tuple(int(c) for c in chips), str(declare) if declare is not None else None, to)


def final_stacks_expected(expect: dict[str, Any]) -> dict[int, int] | None:
    fs = expect.get("final_stacks")
    if fs is None:
        return None
    return {int(s): int(c) for s, c in fs.items()}


def check_chips_state(key: str, want: Any, snap: dict[str, Any], step: int, failures: list[str]) -> bool:
    """Compare one chips state check; False when ``key`` is not a chips key."""
    if key not in STATE_KEYS:
        return False
    chips = snap.get("chips")
    if chips is None:
        failures.append(f"after step {step}: expected {key} {want}, but the hand counts no chips")
        return True
    if key == "stacks":
        got = {int(s): chips["stacks"].get(str(s)) for s in want}
        want = {int(s): v for s, v in want.items()}
    else:
        got = chips.get(key)
    if got != want:
        failures.append(f"after step {step}: expected {key} {want}, got {got}")
    return True


def check_final_stacks(engine: Any, want: dict[int, int], failures: list[str]) -> None:
    if engine.chips is None:
        failures.append("final_stacks expected, but the hand counts no chips")
        return
    settled = engine.settle()
    if settled is None or settled.stacks is None:
        failures.append(f"final_stacks: the hand is not settled (phase {engine.phase.value}; every pot needs "
                        "a single live hand or a showdown with every live hand known)")
        return
    got = dict(settled.stacks)
    if got != want:
        diff = {s: (want.get(s), got.get(s)) for s in sorted(set(want) | set(got)) if want.get(s) != got.get(s)}
        failures.append(f"final_stacks: expected {want}, got {got} (seat: expected, got {diff})")
