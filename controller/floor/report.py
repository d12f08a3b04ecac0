"""The numbers that run a room, per dealer: hands per hour over the shift, misdeals and
irregularities per 100 hands by reason, mean hand duration.  Computed from the store (hands
and rulings, each carrying the dealer signed in when it happened)."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from typing import Any

from controller.floor.store import Store

UNKNOWN = "(no dealer)"


def dealer_report(store: Store, since: float, until: float) -> dict[str, Any]:
    hands = store.query("SELECT dealer, started, ended FROM hands WHERE started >= ? AND started < ?",
                        (since, until))
    rulings = store.query("SELECT dealer, ruling, reason, severity FROM rulings WHERE ts >= ? AND ts < ?",
                          (since, until))
    per: dict[str, dict[str, Any]] = defaultdict(lambda: {"hands": 0, "durations": [], "hourly": defaultdict(int),
                                                          "misdeals": defaultdict(int),
                                                          "irregularities": defaultdict(int)})
    for h in hands:
        d = per[h["dealer"] or UNKNOWN]
        d["hands"] += 1
        d["hourly"][int(h["started"] // 3600 * 3600)] += 1
        if h["ended"] is not None:
            d["durations"].append(float(h["ended"]) - float(h["started"]))
    for r in rulings:
        d = per[r["dealer"] or UNKNOWN]
        if r["ruling"] == "misdeal":
            d["misdeals"][r["reason"]] += 1
        elif r["ruling"] == "irregularity" or r["severity"] == "fault":
            d["irregularities"][r["reason"]] += 1
    hours = list(range(int(since // 3600 * 3600), int(until), 3600))
    dealers = []
    for name in sorted(per):
        d = per[name]
        n = d["hands"]

        def per100(counts: dict[str, int], n: int = n) -> dict[str, float | None]:
            return {k: round(100.0 * v / n, 2) if n else None for k, v in sorted(counts.items())}

        dealers.append({
            "dealer": name,
            "hands": n,
            "hands_per_hour": [{"hour": h, "hands": d["hourly"].get(h, 0)} for h in hours],
            "misdeals": dict(sorted(d["misdeals"].items())),
            "irregularities": dict(sorted(d["irregularities"].items())),
            "misdeals_per_100": per100(d["misdeals"]),
            "irregularities_per_100": per100(d["irregularities"]),
            "mean_hand_seconds": round(sum(d["durations"]) / len(d["durations"]), 1) if d["durations"] else None,
        })
    return {"since": since, "until": until, "hours": hours, "dealers": dealers}


def report_csv(report: dict[str, Any]) -> str:
    """One row per dealer and reason (and one per dealer for the totals), for a spreadsheet."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["dealer", "metric", "reason", "value"])
    for d in report["dealers"]:
        w.writerow([d["dealer"], "hands", "", d["hands"]])
        w.writerow([d["dealer"], "mean_hand_seconds", "", "" if d["mean_hand_seconds"] is None
                    else d["mean_hand_seconds"]])
        for h in d["hands_per_hour"]:
            w.writerow([d["dealer"], "hands_in_hour", h["hour"], h["hands"]])
        for reason, v in d["misdeals_per_100"].items():
            w.writerow([d["dealer"], "misdeals_per_100", reason, v])
        for reason, v in d["irregularities_per_100"].items():
            w.writerow([d["dealer"], "irregularities_per_100", reason, v])
    return out.getvalue()
