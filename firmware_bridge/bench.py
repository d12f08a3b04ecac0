"""Bridge benchmark: host decode throughput and frame-to-change latency over a pty.

``run_bench(cards)`` returns a JSON-serialisable dict (the lead wires it as
``tablectl bench bridge --json``):

* ``decode``: frames/s the host :class:`~firmware_bridge.protocol.FrameDecoder`
  handles on a pre-encoded stream (one arrive + one leave per card, heartbeats mixed
  in) - pure decoding, no I/O;
* ``latency_ms``: for each TAG frame, the time from the emulator writing it on the pty
  to the link delivering the presence change (p50/p90/p99/max).  Emulator and link run
  in the same process here, so they share the GIL: on the real table the device is a
  separate microcontroller and the figure is an upper bound.
"""

from __future__ import annotations

import platform
import statistics
import threading
import time

from firmware_bridge import protocol as p
from firmware_bridge.emulator import Emulator
from firmware_bridge.link import BridgeLink, LinkConfig, PresenceChange


def _uid(i: int) -> bytes:
    return b"\x04" + i.to_bytes(4, "big") + b"\xa1\xb2"


def decode_throughput(cards: int) -> dict:
    frames = []
    seq = 0
    for i in range(cards):
        for cls in (p.TagArrive, p.TagLeave):
            frames.append(p.encode(cls(i % 28, _uid(i), seq=seq)))
            seq = (seq + 1) % 0x10000
        if i % 25 == 0:
            frames.append(p.encode(p.Heartbeat(1, i, i, 3, seq=seq)))
            seq = (seq + 1) % 0x10000
    stream = b"".join(frames)
    dec = p.FrameDecoder()
    t0 = time.perf_counter()
    decoded = 0
    for i in range(0, len(stream), 4096):
        decoded += len(dec.feed(stream[i : i + 4096]))
    elapsed = time.perf_counter() - t0
    assert decoded == len(frames) and not dec.errors, (decoded, len(frames), dec.errors)
    return {
        "frames": len(frames),
        "bytes": len(stream),
        "seconds": round(elapsed, 4),
        "frames_per_s": round(len(frames) / elapsed),
        "mbytes_per_s": round(len(stream) / elapsed / 1e6, 3),
    }


def pty_latency(cards: int, antennas: int = 16, timeout: float = 120.0) -> dict:
    written: dict[int, float] = {}
    latencies: list[float] = []
    delivered = 0
    cond = threading.Condition()

    def on_frame(seq: int, t: float) -> None:
        written[seq] = t

    def on_change(change: PresenceChange) -> None:
        nonlocal delivered
        now = time.monotonic()
        if change.seq is not None and change.seq in written:
            latencies.append(now - written.pop(change.seq))
        with cond:
            delivered += 1
            cond.notify_all()

    config = LinkConfig(heartbeat_timeout=5.0, poll_interval=0.05)
    emu = Emulator(
        antennas, scan_period_ms=2, debounce_ms=0, heartbeat_ms=200, tick=0.0005, on_frame=on_frame
    )
    t0 = time.monotonic()
    with emu, BridgeLink(emu.url, config, on_change=on_change) as link:
        if not link.wait_synced(10):
            raise RuntimeError("bench: link did not synchronise with the emulator")
        expected = 0
        on_table: list[tuple[int, bytes]] = []
        start = time.monotonic()
        for base in range(0, cards, antennas):
            batch = [(i % antennas, _uid(i)) for i in range(base, min(base + antennas, cards))]
            for antenna, uid in on_table:
                emu.remove(antenna, uid)
            for antenna, uid in batch:
                emu.place(antenna, uid)
            expected += len(on_table) + len(batch)
            on_table = batch
            def caught_up(e: int = expected) -> bool:
                return delivered >= e

            with cond:
                if not cond.wait_for(caught_up, timeout):
                    raise RuntimeError(f"bench: only {delivered} of {expected} changes after {timeout}s")
        for antenna, uid in on_table:
            emu.remove(antenna, uid)
        expected += len(on_table)
        with cond:
            cond.wait_for(lambda: delivered >= expected, timeout)
        elapsed = time.monotonic() - start
        health = link.health()
    ms = sorted(x * 1000 for x in latencies)

    def pct(q: float) -> float:
        return round(ms[min(len(ms) - 1, int(q * len(ms)))], 3) if ms else 0.0

    return {
        "changes": delivered,
        "measured": len(ms),
        "seconds": round(elapsed, 3),
        "changes_per_s": round(delivered / elapsed) if elapsed else 0,
        "p50": pct(0.50),
        "p90": pct(0.90),
        "p99": pct(0.99),
        "max": round(ms[-1], 3) if ms else 0.0,
        "mean": round(statistics.fmean(ms), 3) if ms else 0.0,
        "setup_seconds": round(time.monotonic() - t0 - elapsed, 3),
        "link_counters": health.counters,
    }


def run_bench(cards: int = 10000) -> dict:
    """Decode throughput and pty latency for ``cards`` cards (each placed, then removed)."""
    if cards < 1:
        raise ValueError("cards must be >= 1")
    return {
        "bench": "bridge",
        "cards": cards,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "decode": decode_throughput(cards),
        "latency_ms": pty_latency(cards),
    }


if __name__ == "__main__":  # python -m firmware_bridge.bench [cards]
    import json
    import sys

    print(json.dumps(run_bench(int(sys.argv[1]) if len(sys.argv) > 1 else 10000), indent=1))
