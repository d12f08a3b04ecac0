"""Sealed hole cards: a commitment per hand, a key per snapshot, and the verifier that reads them.

Why: the broadcast delay is only as good as the machine that holds the cards back.  Here the
broadcast chain gets the hole cards at once but sealed (AES-256-GCM, an authenticated cipher:
a ciphertext cannot be altered or read without its key), and the key only once the delay has
passed; the table commits on a public topic, at the deal, to what each seat holds (a salted
SHA-256), and reveals the salts after the hand.  Anyone holding the public and broadcast
streams can then check, without trusting the table's word, that every card that went on air is
a card that was dealt and committed to before anyone could see it, and that no key left before
its delay (:class:`BroadcastVerifier`).

Derivation (all from one random 32-byte seed per deal, kept in the journal, HKDF-SHA256 from the
``cryptography`` library):

* the key of the snapshot journaled at seq ``s``: ``HKDF(seed, info="key/<s>")`` -- one key per
  snapshot, not one per hand: a hand's key released after the delay would open the cards dealt
  after that moment (stud's later streets, a draw) at once;
* the salt seed: ``HKDF(seed, info="salts")``, published once the hand is over;
* the salt of seat ``n``'s commitment made at seq ``s``: ``HMAC-SHA256(salt seed, "<n>/<s>")``;
* a commitment: ``SHA-256(salt || compact JSON [table_id, deal, seat, cards])``, upper-case hex.

Revealing the salt seed reveals every salt of the deal and nothing of the keys (independent HKDF
outputs).  The salts go to the broadcast chain, not to a public topic: with a salt, the 1,326
two-card hands are a moment's search, so a folded hand would be shown to the room.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

ALG = "AES-256-GCM"
SEED_BYTES = 32
NONCE_BYTES = 12


def _hkdf(seed: bytes, info: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info.encode()).derive(seed)


def snapshot_key(seed: bytes, seq: int) -> bytes:
    """The AES-256 key of the hole-card snapshot journaled at ``seq``."""
    return _hkdf(seed, f"key/{int(seq)}")


def salt_seed(seed: bytes) -> bytes:
    return _hkdf(seed, "salts")


def salt(salts: bytes, seat: int | str, seq: int) -> bytes:
    return hmac.new(salts, f"{int(seat)}/{int(seq)}".encode(), hashlib.sha256).digest()


def commitment(salt_bytes: bytes, table_id: str, deal: int, seat: int | str, cards: list[str]) -> str:
    """Upper-case hex: no lowercase letter, so a public digest never reads as a card (``9d``)."""
    body = json.dumps([table_id, int(deal), int(seat), list(cards)], separators=(",", ":")).encode()
    return hashlib.sha256(salt_bytes + body).hexdigest().upper()


def aad(table_id: str, deal: int, seq: int) -> bytes:
    """What each ciphertext is bound to: a sealed snapshot cannot be replayed as another one."""
    return f"{table_id}/{int(deal)}/{int(seq)}".encode()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unb64(text: str) -> bytes:
    return base64.b64decode(text.encode(), validate=True)


def seal(key: bytes, nonce: bytes, plaintext: dict[str, Any], associated: bytes) -> str:
    body = json.dumps(plaintext, separators=(",", ":"), sort_keys=True).encode()
    return b64(AESGCM(key).encrypt(nonce, body, associated))


def unseal(key: bytes, nonce: bytes, ciphertext: str, associated: bytes) -> dict[str, Any]:
    """The snapshot, or :class:`cryptography.exceptions.InvalidTag` if anything was altered."""
    return json.loads(AESGCM(key).decrypt(nonce, unb64(ciphertext), associated))


# --------------------------------------------------------------------------- the verifier
@dataclass
class BroadcastVerifier:
    """Reads only the public and broadcast topics of one table (relative topic names, payloads
    and the moment each was received) and checks the sealed hole cards.  Feed it every message
    in the order received; :meth:`report` says what holds.

    * every sealed snapshot was opened by its key, untampered (GCM's tag);
    * no key was received before its snapshot's delay had passed since the snapshot itself
      (``hand_end``: before the hand's public ``event/hand_end``), with ``tolerance`` seconds
      for the clocks of two messages received by one reader;
    * every seat's cards in every opened snapshot match a commitment received on the public
      ``commitment`` topic before the snapshot, once the salts are revealed;
    * no key was received before the delay of an earlier snapshot of its deal had passed: a later
      snapshot holds the earlier one's cards, so a shortened delay must not open them sooner.
    """

    table_id: str
    tolerance: float = 0.05
    #: (deal, seat, seq) -> (digest, received)
    commitments: dict[tuple[int, int, int], tuple[str, float]] = field(default_factory=dict)
    sealed: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)  # (deal, seq) -> payload + rx
    keys: dict[tuple[int, int], tuple[bytes, float]] = field(default_factory=dict)
    salts: dict[int, bytes] = field(default_factory=dict)
    hand_ends: dict[int, float] = field(default_factory=dict)  # hand_id -> received

    def feed(self, topic: str, payload: bytes, received: float) -> None:
        if not payload or topic not in ("commitment", "broadcast/sealed", "broadcast/key", "broadcast/reveal",
                                        "event/hand_end"):
            return
        msg = json.loads(payload)
        if topic == "commitment":
            for seat, digest in msg["seats"].items():
                self.commitments.setdefault((int(msg["deal"]), int(seat), int(msg["seq"])), (digest, received))
        elif topic == "broadcast/sealed":
            self.sealed.setdefault((int(msg["deal"]), int(msg["seq"])), dict(msg, _rx=received))
        elif topic == "broadcast/key":
            self.keys.setdefault((int(msg["deal"]), int(msg["seq"])), (unb64(msg["key"]), received))
        elif topic == "broadcast/reveal":
            self.salts[int(msg["deal"])] = unb64(msg["salts"])
        elif topic == "event/hand_end":
            self.hand_ends.setdefault(int(msg["hand_id"]), received)

    def report(self) -> dict[str, Any]:
        opened = tampered = early = missing_key = verified = mismatched = uncommitted = unrevealed = 0
        problems: list[str] = []
        shown: dict[int, dict[str, list[str]]] = {}
        promised: dict[int, tuple[float, int]] = {}  # deal -> (latest promise of its snapshots so far, whose seq)
        for (deal, seq), msg in sorted(self.sealed.items()):
            delay = msg["delay"]
            due = (self.hand_ends.get(int(msg["hand_id"]), math.inf) if delay == "hand_end"
                   else msg["_rx"] + float(delay))
            before, by = promised.get(deal, (-math.inf, seq))
            promised[deal] = (due, seq) if due >= before else (before, by)
            key = self.keys.get((deal, seq))
            if key is None:
                missing_key += 1
                problems.append(f"deal {deal} seq {seq}: no key")
                continue
            secret, key_rx = key
            if delay == "hand_end":
                if key_rx + self.tolerance < due:
                    early += 1
                    problems.append(f"deal {deal} seq {seq}: key before the hand's end")
            elif key_rx + self.tolerance < due:
                early += 1
                problems.append(f"deal {deal} seq {seq}: key {key_rx - msg['_rx']:.3f} s after, delay {delay}")
            elif key_rx + self.tolerance < before:
                early += 1
                problems.append(f"deal {deal} seq {seq}: key opens seq {by}'s cards {before - key_rx:.3f} s early")
            try:
                snap = unseal(secret, unb64(msg["nonce"]), msg["ciphertext"], aad(self.table_id, deal, seq))
            except (InvalidTag, ValueError):
                tampered += 1
                problems.append(f"deal {deal} seq {seq}: does not open (altered, or the wrong key)")
                continue
            opened += 1
            shown[int(msg["hand_id"])] = snap["seats"]  # sorted by deal and seq: the hand's last wins
            salts = self.salts.get(deal)
            if salts is None:
                unrevealed += 1
                continue
            for seat, cards in snap["seats"].items():
                made = [s for (d, st, s) in self.commitments if d == deal and st == int(seat) and s <= seq]
                if not made:
                    uncommitted += 1
                    problems.append(f"deal {deal} seq {seq} seat {seat}: no commitment")
                    continue
                at = max(made)
                digest, committed = self.commitments[(deal, int(seat), at)]
                if committed > msg["_rx"] + self.tolerance:
                    uncommitted += 1
                    problems.append(f"deal {deal} seq {seq} seat {seat}: committed after it went on air")
                elif commitment(salt(salts, seat, at), self.table_id, deal, seat, cards) == digest:
                    verified += 1
                else:
                    mismatched += 1
                    problems.append(f"deal {deal} seq {seq} seat {seat}: cards differ from the commitment")
        ok = not (tampered or early or missing_key or mismatched or uncommitted or unrevealed)
        return {"ok": ok and opened > 0, "deals": len({d for d, _ in self.sealed}), "snapshots": len(self.sealed),
                "opened": opened, "seats_verified": verified, "commitments": len(self.commitments),
                "tampered": tampered, "keys_early": early, "keys_missing": missing_key, "mismatched": mismatched,
                "uncommitted": uncommitted, "unrevealed": unrevealed, "problems": problems[:20],
                "last_shown": shown}


__all__ = ["ALG", "BroadcastVerifier", "NONCE_BYTES", "SEED_BYTES", "aad", "b64", "commitment", "salt",
           "salt_seed", "seal", "snapshot_key", "unb64", "unseal"]
