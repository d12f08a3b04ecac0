"""The table's side of the sealed broadcast (the scheme: controller/mqtt/sealed.py).

At each hole-card snapshot: the public ``commitment`` (the salted hash of every seat whose cards
changed), the sealed snapshot on ``broadcast/sealed`` at once, and its key on ``broadcast/key``
held back by the broadcast delay (the link's heap; ``math.inf`` with the end-of-hand delay, let
go when the hand ends).  After the hand, ``broadcast/reveal`` carries the deal's salt seed, as
delayed as the hand's end.  The seed of each deal is kept in the journal, so a restart that
republishes a hand seals and commits it with the same salts and keys.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.mqtt import sealed
from controller.mqtt.contract import SCHEMA_VERSION, Topics
from controller.mqtt.link import MqttLink


@dataclass
class Sealer:
    link: MqttLink
    topics: Topics
    table_id: str
    journal: Any = None  # controller.journal.Journal; None keeps the seeds in memory (a throwaway table)
    random: Callable[[int], bytes] = os.urandom
    _deal: int | None = None
    _committed: dict[str, list[str]] = field(default_factory=dict)  # seat -> cards last committed, this deal
    _seeds: dict[int, bytes] = field(default_factory=dict)

    def start(self, deal: int) -> None:
        """A deal starts (``hand_start``, journaled at seq ``deal``)."""
        self._deal = deal
        self._committed = {}

    def _seed(self, deal: int, hand_id: int) -> bytes:
        seed = self._seeds.get(deal)
        if seed is None:
            if self.journal is not None:
                seed = self.journal.broadcast_secret(deal, hand_id, lambda: self.random(sealed.SEED_BYTES))
            else:
                seed = self.random(sealed.SEED_BYTES)
            self._seeds = {deal: seed}  # only the deal in play is needed
        return seed

    def _current(self, seq: int) -> int:
        if self._deal is None:  # after a restart, mid-hand: the journal knows where the deal began
            self._deal = self.journal.deal_of(seq) if self.journal is not None else 0
        return self._deal

    def holecards(self, seq: int, ts: float, hand_id: int, seats: dict[str, list[str]], delay: float | str) -> None:
        deal = self._current(seq)
        seed = self._seed(deal, hand_id)
        salts = sealed.salt_seed(seed)
        changed = {s: list(c) for s, c in seats.items() if self._committed.get(s) != list(c)}
        if changed:
            digests = {s: sealed.commitment(sealed.salt(salts, s, seq), self.table_id, deal, s, c)
                       for s, c in changed.items()}
            self.link.publish(self.topics.commitment, {"schema": SCHEMA_VERSION, "seq": seq, "ts": ts,
                                                       "hand_id": hand_id, "deal": deal, "seats": digests}, seq=seq)
            self._committed.update(changed)
        key = sealed.snapshot_key(seed, seq)
        nonce = self.random(sealed.NONCE_BYTES)
        body = {"hand_id": hand_id, "seq": seq, "seats": seats}
        label = "hand_end" if delay == "hand_end" else float(delay)
        self.link.publish(self.topics.broadcast("sealed"), {
            "schema": SCHEMA_VERSION, "seq": seq, "ts": ts, "hand_id": hand_id, "deal": deal, "delay": label,
            "alg": sealed.ALG, "nonce": sealed.b64(nonce),
            "ciphertext": sealed.seal(key, nonce, body, sealed.aad(self.table_id, deal, seq))}, retain=True, seq=seq)
        self.link.publish(self.topics.broadcast("key"), {
            "schema": SCHEMA_VERSION, "seq": seq, "ts": ts, "hand_id": hand_id, "deal": deal, "key": sealed.b64(key)},
            retain=True, seq=seq, delay=_seconds(delay))

    def hand_end(self, seq: int, ts: float, hand_id: int, delay: float | str) -> None:
        """The hand is over: its salts go out as delayed as its end (after its keys: the
        publisher has let go what waited for the end)."""
        deal = self._current(seq)
        seed = self._seed(deal, hand_id)
        self.link.publish(self.topics.broadcast("reveal"), {
            "schema": SCHEMA_VERSION, "seq": seq, "ts": ts, "hand_id": hand_id, "deal": deal,
            "salts": sealed.b64(sealed.salt_seed(seed))}, seq=seq, delay=0.001 if delay == "hand_end" else float(delay))
        self._deal = None

    def clear(self, seq: int, delay: float) -> None:
        """The retained sealed snapshot and key of a finished hand, cleared with its hole cards."""
        for name in ("sealed", "key"):
            self.link.publish(self.topics.broadcast(name), b"", retain=True, delay=delay, seq=seq)


def _seconds(delay: float | str) -> float:
    return math.inf if delay in ("hand_end", "end_of_hand") else float(delay)
