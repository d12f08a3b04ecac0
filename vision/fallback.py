"""The camera as fallback and cross-check for RFID: a pure component with an injectable clock.

The daemon feeds it two streams and acts on what it returns:

* ``observe(detections)`` -- the recogniser's cards per zone for one frame
  (:meth:`vision.recognizer.Recognizer.scan`);
* ``tag_read(zone, card)`` -- a tag was read in ``zone`` (or ``note_events`` with the
  Fusion outputs: ``Deal``/``BoardCards``/``Burn``/``Muck`` of source ``rfid``);
* ``poll()`` -- on a tick, for the time-outs.

Outputs:

=====================  ==============================================================
:class:`CameraCard`     a card lay in a zone for ``tag_timeout`` with no tag read and the
                        camera read it: call ``Fusion.camera_identified(zone, card)``
:class:`CameraMismatch` RFID and camera disagree about one card (a tag and a card the camera
                        names otherwise waited ``tag_timeout`` for each other in vain): alert
                        (a mis-enrolled tag, or a card of another deck whose tag reads as ours)
:class:`ExposedCard`    a face-up card where a face-down one belongs: ``to_event()`` gives
                        ``Expose(seat, card)`` (the card was dealt) or ``Deal(face="up")``
:class:`UnreadCard`     a card lay in a zone with no tag read and the camera cannot read it
                        either (face down, or unknown): alert
=====================  ==============================================================

A physical card is followed from frame to frame as a *track* (same zone, centre within
``match_radius`` pixels).

Time-outs are the camera's chance, not only the clock's: a camera that needs longer per frame
than the tags need to arrive (a loaded Pi Zero, or the Pi's userland under emulation) has not
seen a card just because its tag waited ``tag_timeout``.  So a tag counts as waiting in vain only
once ``min_votes`` frames *captured after it was read* were observed (``observe(..., now=)`` takes
the frame's capture time), and a card counts as unreadable only once the camera looked at it in
``2 * min_votes`` frames.  On a camera that keeps up this changes nothing: by ``tag_timeout`` it
has shown many frames.  A camera identity needs ``min_votes`` confident readings that
agree.  A track is dropped once it was missing for ``lost_after`` seconds *and* from
``lost_frames`` frames looked at in a row: one frame that misses a card is no card gone.  (The
recogniser now and then finds one outline around a seat's two hole cards; on a camera slower
than ``lost_after`` a frame, that one frame dropped both cards' tracks, their tags with them, and
the same cards seen again were untagged: a false ``card_unread``, the arm64 proof's demo.)  For
the same reason a tag is given to a card the camera cannot name only once the camera saw that
card in ``min_votes`` looks: an outline found once on the felt would take the tag away with it.

A card's tag can also be late for the antennas' own reasons: the board reboots or replays its
inventory, or it stalled while two cards arrived and the dealer is asked for their order (the
cards, and every arrival after them, wait for his answer).  A face-down card then lies untagged
for seconds although its tag was read or soon will be.  The daemon says so with
:meth:`CameraFallback.tags_held`: a card counts as unreadable only after ``2 * tag_timeout`` and
``2 * min_votes`` frames with the antennas not holding tags back.  The alert becomes the
``card_unread`` irregularity (RRoP s3 Irregularities 3, as ``controller/rules/data/rulings.toml``
cites it): the dealer must identify the card, and a hand whose cards the table then lacks ends in
a misdeal for the wrong number of cards (RRoP s3 Misdeals 1(e)).  Neither may come of a tag the
antennas read and held.  When a tag and a readable
crop meet on one track, the crop is stored as a labelled example of the deck in play
(``labels``), which is how the recogniser learns the real deck and how its accuracy on
it is measured.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from controller.geometry import Zone
from controller.rules.cards import Card
from controller.rules.events import BoardCards, Burn, Deal, Expose, Muck

from .recognizer import CameraLayout, Detection


class _LabelSink(Protocol):
    def add_labeled(self, frame_or_crop: np.ndarray, card: Card) -> bool: ...


@dataclass(frozen=True)
class CameraCard:
    """The camera identified a card that no tag reported: feed ``Fusion.camera_identified``."""

    kind: ClassVar[str] = "camera_card"
    zone: Zone
    card: Card
    confidence: float
    t: float = 0.0


@dataclass(frozen=True)
class CameraMismatch:
    """RFID says ``rfid``, the camera sees ``camera``: an alert, never a ruling."""

    kind: ClassVar[str] = "camera_mismatch"
    zone: Zone
    rfid: Card
    camera: Card
    confidence: float
    t: float = 0.0


@dataclass(frozen=True)
class ExposedCard:
    """A face-up card at a seat where cards lie face down."""

    kind: ClassVar[str] = "exposed_card"
    seat: int
    card: Card
    dealt: bool  # the card reached the seat before (a tag read it, or the camera did)
    confidence: float
    t: float = 0.0

    def to_event(self) -> Expose | Deal:
        """``Expose(seat, card)`` for a dealt card; ``Deal(seat, card, face="up")`` for one that
        arrives face up with no tag read."""
        if self.dealt:
            return Expose(seat=self.seat, card=self.card, source="camera")
        return Deal(seat=self.seat, card=self.card, face="up", source="camera")


@dataclass(frozen=True)
class UnreadCard:
    """A card lies in ``zone`` with no tag read, and the camera cannot name it."""

    kind: ClassVar[str] = "unread_card"
    zone: Zone
    face: str
    t: float = 0.0


FallbackOutput = CameraCard | CameraMismatch | ExposedCard | UnreadCard


@dataclass
class _Track:
    id: int
    zone: Zone
    center: tuple[float, float]
    first_seen: float
    last_seen: float
    votes: Counter[Card] = field(default_factory=Counter)
    conf: dict[Card, float] = field(default_factory=dict)
    faces: deque[str] = field(default_factory=lambda: deque(maxlen=8))  # recent frames, newest last
    frames: int = 0  # frames the camera saw this card in (since the antennas last held tags back)
    missed: int = 0  # frames looked at since it was last seen
    looks: int = 0  # frames it was seen in
    crop: np.ndarray | None = None
    tag: Card | None = None
    tag_at: float = 0.0  # when the tag was read
    tentative: bool = False  # the tag was given before the camera could name the card
    sent: Card | None = None  # what the camera reported for it (CameraCard / exposure deal)
    resolved: bool = False
    mismatch: bool = False
    exposed: bool = False
    labelled: bool = False


class CameraFallback:
    """Camera fallback and cross-check (see the module doc).  Pure: no I/O but ``labels``."""

    def __init__(
        self,
        layout: CameraLayout | Iterable[Zone | str],
        tag_timeout: float = 1.5,
        min_votes: int = 2,
        lost_after: float = 1.0,
        lost_frames: int = 2,
        match_radius: float = 80.0,
        clock: Callable[[], float] = time.monotonic,
        labels: _LabelSink | None = None,
        expect_face: Mapping[Zone | str, str | None] | None = None,
        deck: str = "A",
    ) -> None:
        if isinstance(layout, CameraLayout):
            self.zones = set(layout.zones)
            faces = {z: layout.expect_face(z) for z in self.zones}
        else:
            self.zones = {Zone.parse(z) if isinstance(z, str) else z for z in layout}
            faces = {}
        for z, f in (expect_face or {}).items():
            faces[Zone.parse(z) if isinstance(z, str) else z] = f
        self.expect_face: dict[Zone, str | None] = faces
        self.tag_timeout = tag_timeout
        self.min_votes = min_votes
        self.lost_after = lost_after
        self.lost_frames = lost_frames
        self.match_radius = match_radius
        self.labels = labels
        self.deck = deck
        self._clock = clock
        self._tracks: list[_Track] = []
        self._pending: dict[Zone, list[tuple[Card, float]]] = {}
        self._next_id = 1
        self.labelled = 0
        self._captured: deque[float] = deque(maxlen=64)  # capture times of the frames observed
        self._held_at = float("-inf")  # when the antennas last held tags back (tags_held)

    # ------------------------------------------------------------------ inputs
    def observe(self, detections: Mapping[Zone, Sequence[Detection]] | Sequence[Detection],
                now: float | None = None, looked: bool = True) -> list[FallbackOutput]:
        """One frame's cards.  A mapping lists every zone the frame covered (even empty ones);
        a plain sequence uses each detection's ``zone``.  ``now``: when the frame was captured
        (default: the clock now), which may be well before it was recognised.  ``looked=False``:
        the recogniser did not look at this frame (the scene gate found it unchanged and gave
        the last frame's cards): its cards are still there, but it is no vote, no face and no
        chance to read them, or one recognition repeated would count as several."""
        now = self._clock() if now is None else now
        if not looked:
            return self._still_there(detections, now) + self.poll(now)
        self._captured.append(now)
        if not isinstance(detections, Mapping):
            grouped: dict[Zone, list[Detection]] = {}
            for d in detections:
                if d.zone is not None:
                    grouped.setdefault(d.zone, []).append(d)
            detections = grouped
        out: list[FallbackOutput] = []
        for t in self._tracks:
            t.missed += 1  # (until a detection of this frame matches it)
        for zone, dets in detections.items():
            if zone not in self.zones:
                continue
            free = [t for t in self._tracks if t.zone == zone]
            for d in dets:
                track = self._match(free, d.center)
                if track is None:
                    track = self._new_track(zone, d.center, now)
                else:
                    free.remove(track)
                track.center, track.last_seen, track.missed = d.center, now, 0
                track.looks += 1
                track.faces.append(d.face)
                track.frames += int(now > self._held_at)  # (a frame from before a hold is no chance)
                if d.face == "up" and d.card is not None:
                    card = Card(d.card.rank, d.card.suit, self.deck)
                    track.votes[card] += 1
                    track.conf[card] = max(track.conf.get(card, 0.0), float(d.confidence))
                if d.face == "up" and d.crop is not None:
                    track.crop = d.crop
            out += self._settle(zone, now)
        self._tracks = [t for t in self._tracks if now - t.last_seen <= self.lost_after or t.missed < self.lost_frames]
        return out + self.poll(now)

    def _still_there(self, detections: Mapping[Zone, Sequence[Detection]] | Sequence[Detection],
                     now: float) -> list[FallbackOutput]:
        """An unchanged scene: the cards the last recognition found are seen again now."""
        dets = [d for ds in detections.values() for d in ds] if isinstance(detections, Mapping) else detections
        for d in dets:
            track = self._match([t for t in self._tracks if t.zone == d.zone], d.center)
            if track is not None:
                track.last_seen = now
        return []

    def wants_look(self) -> bool:
        """Whether a card still waits for the camera's verdict (no tag, not yet named or called
        unread), or was missing from the last look (gone, or missed once: only looks tell, and a
        look repeated by the scene gate would repeat the miss): then the next frame is worth
        recognising even when the scene looks unchanged."""
        return any((t.tag is None and not t.resolved) or t.missed for t in self._tracks)

    def tag_read(self, zone: Zone | str, card: Card, now: float | None = None) -> list[FallbackOutput]:
        """A tag reported ``card`` in ``zone``.  The tag goes to the card the camera names the
        same; failing that, for now, to a card the camera cannot name yet; failing that, it
        waits (the camera may not have seen its card yet: see :meth:`poll`)."""
        now = self._clock() if now is None else now
        zone = Zone.parse(zone) if isinstance(zone, str) else zone
        if zone not in self.zones:
            return []
        self._pending.setdefault(zone, []).append((card, now))
        return self._settle(zone, now) + self.poll(now)

    def note_events(self, events: Iterable[Any], now: float | None = None) -> list[FallbackOutput]:
        """Fusion outputs from RFID: each card's arrival becomes a ``tag_read``, and so does each
        card of an ``OrderUnknown`` (the antennas read those tags; only their order goes to the
        dealer, whose answer reaches the engine from the console, never here)."""
        out: list[FallbackOutput] = []
        for ev in events:
            if getattr(ev, "kind", None) == "order_unknown":  # tags read, their order for the dealer
                for zone, card in ev.cards:  # (asked again: the same cards, already here)
                    if not self._has_tag(zone, card):
                        out += self.tag_read(zone, card, now)
                continue
            if getattr(ev, "source", None) != "rfid":
                continue
            if isinstance(ev, Deal):
                out += self.tag_read(Zone("seat", ev.seat), ev.card, now)
            elif isinstance(ev, BoardCards):
                for c in ev.cards:
                    out += self.tag_read(Zone("board"), c, now)
            elif isinstance(ev, Burn):
                out += self.tag_read(Zone("burn"), ev.card, now)
            elif isinstance(ev, Muck):
                out += self.tag_read(Zone("muck"), ev.card, now)
        return out

    def poll(self, now: float | None = None) -> list[FallbackOutput]:
        """Time-outs.  A card that waited ``tag_timeout`` for a tag in vain is the camera's to
        report (or unreadable, after twice that and ``2 * min_votes`` frames) -- unless a tag of
        its zone waited in vain too: then the tag and the camera disagree about that card.  A tag
        waits in vain when ``tag_timeout`` passed and the camera observed ``min_votes`` frames
        captured after it was read (:meth:`_seen_since`): it is then placed on an untagged card
        the camera named otherwise (a mismatch), or dropped when there is none (the camera does
        not see the card).  A tag the camera has not yet had its chance at holds both back, and a
        card missing from the camera's last look waits for the next (it may be gone)."""
        now = self._clock() if now is None else now
        out: list[FallbackOutput] = []
        for t in self._tracks:
            if t.tag is not None or t.resolved or t.missed or now - t.first_seen < self.tag_timeout:
                continue  # (missing from the last look: gone, or missed once; the next look tells)
            ident = self._identity(t)
            face = self._face(t)
            pend = self._pending.get(t.zone)
            if ident is not None and pend:
                if self._seen_since(pend[0][1]) < self.min_votes:
                    continue  # the camera may not have seen that tag's card yet: wait for it
                out += self._mismatch(t, self._take_oldest(t.zone), now)
            elif ident is not None:
                card = Card.parse(ident, self.deck)
                t.resolved, t.sent = True, card
                if face == "up" and self._down_zone(t.zone):
                    assert t.zone.seat is not None
                    t.exposed = True
                    out.append(ExposedCard(t.zone.seat, card, False, t.conf.get(card, 0.0), now))
                else:
                    out.append(CameraCard(t.zone, card, t.conf.get(card, 0.0), now))
            elif (now - max(t.first_seen, self._held_at) >= 2 * self.tag_timeout
                  and t.frames >= 2 * self.min_votes):
                t.resolved = True
                out.append(UnreadCard(t.zone, face or "up", now))
        for zone in list(self._pending):
            waiting = []
            young = self._unsettled(zone)
            for card, at in self._pending[zone]:
                if not self._in_vain((card, at), now) or young:
                    waiting.append((card, at))
                    continue
                # (not a card the camera named and reported already: a dead tag's card, filled
                # in; a tag whose own card went before the camera saw it is not its tag)
                named = [t for t in self._tracks
                         if t.zone == zone and t.tag is None and t.sent is None and not t.missed and self._identity(t)]
                if named:
                    out += self._mismatch(min(named, key=lambda t: t.first_seen), (card, at), now)
            if waiting:
                self._pending[zone] = waiting
            else:
                del self._pending[zone]
        return out

    def tags_held(self, now: float | None = None) -> None:
        """The antennas hold tags back now (the link is out of sync: a reboot, a replay; or cards
        of unknown order wait for the dealer, and the arrivals after them with them): no card
        is unreadable for want of a tag until ``2 * tag_timeout`` and ``2 * min_votes`` frames
        after the hold ends.  Filling in a card the camera names is not held back."""
        self._held_at = self._clock() if now is None else now
        for t in self._tracks:
            t.frames = 0

    def _unsettled(self, zone: Zone) -> bool:
        """Whether the zone holds an untagged card the camera cannot name that may yet take a
        waiting tag: seen in fewer than ``min_votes`` looks, or missing from the last look (the
        tag goes only to a card seen in ``min_votes`` looks, :meth:`_settle`).  A tag does not wait
        in vain while such a card is there: on a slow camera a new hole card seen once, then missed
        by one look, had its tag dropped as unplaced and was called unread seconds later (the arm64
        proof's draw hand).  The wait ends: the card is seen again and takes the tag, or it is
        forgotten (``lost_after`` and ``lost_frames``) and the tag waits in vain as before."""
        return any(t.zone == zone and t.tag is None and t.sent is None and not t.resolved
                   and (t.looks < self.min_votes or t.missed) and self._identity(t) is None
                   for t in self._tracks)

    def _has_tag(self, zone: Zone, card: Card) -> bool:
        return (any(t.tag == card for t in self._tracks if t.zone == zone)
                or any(c == card for c, _ in self._pending.get(zone, [])))

    def _seen_since(self, at: float) -> int:
        """Frames observed that were captured after ``at``."""
        return sum(1 for c in self._captured if c > at)

    def _in_vain(self, card_at: tuple[Card, float], now: float) -> bool:
        """A pending tag waited for its card in vain: ``tag_timeout`` passed and the camera had
        ``min_votes`` frames' chance (captured after the tag was read) to see the card."""
        at = card_at[1]
        return now - at > self.tag_timeout and self._seen_since(at) >= self.min_votes

    def new_hand(self) -> None:
        """Forget the tracks and pending tags (the daemon calls this at StartHand)."""
        self._tracks.clear()
        self._pending.clear()

    # ------------------------------------------------------------------ internals
    def _match(self, tracks: list[_Track], center: tuple[float, float]) -> _Track | None:
        best, best_d = None, self.match_radius
        for t in tracks:
            d = float(np.hypot(t.center[0] - center[0], t.center[1] - center[1]))
            if d <= best_d:
                best, best_d = t, d
        return best

    def _new_track(self, zone: Zone, center: tuple[float, float], now: float) -> _Track:
        t = _Track(self._next_id, zone, center, now, now)
        self._next_id += 1
        self._tracks.append(t)
        return t

    def _identity(self, t: _Track) -> str | None:
        """The face the camera agrees on, or None."""
        if not t.votes:
            return None
        (best, n), *rest = t.votes.most_common(2) + [(None, 0)]
        runner = rest[0][1]
        if best is not None and n >= self.min_votes and n >= 2 * runner:
            return best.face
        return None

    def _face(self, t: _Track) -> str | None:
        """The face the last ``min_votes`` frames agree on (a card can be turned over)."""
        last = list(t.faces)[-self.min_votes:]
        return last[-1] if len(last) >= self.min_votes and len(set(last)) == 1 else None

    def _down_zone(self, zone: Zone) -> bool:
        return zone.kind == "seat" and self.expect_face.get(zone) == "down"

    def _settle(self, zone: Zone, now: float) -> list[FallbackOutput]:
        """Place the zone's waiting tags on its cards, then check every card of the zone.

        A zone can hold several cards (the board, a seat's hole cards, the muck), so which tag
        belongs to which card is decided by the camera where it can name the card: a tag given
        to a card before the camera named it is *tentative*, and goes back to wait when the
        camera names that card otherwise (the tag's own card may simply not have been seen
        yet: cards come down together, the camera lags the tags).  A disagreement is only
        called when a tag and a named card have waited for each other in vain (:meth:`poll`).
        """
        tracks = [t for t in self._tracks if t.zone == zone]
        pend = self._pending.setdefault(zone, [])
        for t in tracks:  # tentative tags the camera now contradicts go back to wait
            ident = self._identity(t)
            if t.tag is not None and ident is not None:
                if ident == t.tag.face:
                    t.tentative = False
                elif t.tentative:
                    pend.append((t.tag, t.tag_at))
                    t.tag, t.tentative = None, False
        pend.sort(key=lambda p: p[1])
        for t in tracks:  # named cards take the tag that names them, even from an unnamed card
            ident = self._identity(t)
            if t.tag is not None or ident is None:
                continue
            i = next((i for i, (c, _) in enumerate(pend) if c.face == ident), None)
            if i is not None:
                self._give(t, *pend.pop(i), tentative=False)
                continue
            holder = next((o for o in tracks if o.tentative and o.tag is not None and o.tag.face == ident), None)
            if holder is not None:
                assert holder.tag is not None
                self._give(t, holder.tag, holder.tag_at, tentative=False)
                holder.tag, holder.tentative = None, False
        # The rest, oldest first, to unnamed cards seen in ``min_votes`` looks: not to an outline
        # the recogniser found once where no card lies (it would take the tag when it goes).
        for t in sorted(tracks, key=lambda t: t.first_seen):
            if not pend:
                break
            if t.tag is None and self._identity(t) is None and t.looks >= self.min_votes:
                self._give(t, *pend.pop(0), tentative=True)
        if not pend:
            del self._pending[zone]
        out: list[FallbackOutput] = []
        for t in tracks:
            out += self._check(t, now)
        return out

    @staticmethod
    def _give(t: _Track, card: Card, at: float, tentative: bool) -> None:
        t.tag, t.tag_at, t.tentative = card, at, tentative

    def _take_oldest(self, zone: Zone) -> tuple[Card, float]:
        pend = self._pending[zone]
        card_at = pend.pop(0)
        if not pend:
            del self._pending[zone]
        return card_at

    def _mismatch(self, t: _Track, card_at: tuple[Card, float], now: float) -> list[FallbackOutput]:
        """The tag ``card_at`` and the card the camera names on ``t`` disagree: one alert."""
        self._give(t, *card_at, tentative=False)
        ident = self._identity(t)
        assert t.tag is not None and ident is not None
        t.mismatch = True
        cam = Card.parse(ident, self.deck)
        return [CameraMismatch(t.zone, t.tag, cam, t.conf.get(cam, 0.0), now)]

    def _check(self, t: _Track, now: float) -> list[FallbackOutput]:
        out: list[FallbackOutput] = []
        ident = self._identity(t)
        known = t.tag or t.sent
        if (t.tag is not None and ident is not None and ident != t.tag.face and not t.tentative
                and not t.mismatch):  # a firm tag whose card the camera now names otherwise
            t.mismatch = True
            cam = Card.parse(ident, self.deck)
            out.append(CameraMismatch(t.zone, t.tag, cam, t.conf.get(cam, 0.0), now))
        if (t.tag is not None and not t.labelled and t.crop is not None and self.labels is not None
                and (ident is None or ident == t.tag.face)):
            t.labelled = self.labels.add_labeled(t.crop, t.tag)
            self.labelled += int(t.labelled)
        # An exposure is a misdeal or a ruling: only a card the camera saw face up *and read as the
        # card its tag names* (a glance at paper is no exposure: an outline around a seat's two face-
        # down cards, their white borders in its corners, looked face up in two looks of a slow
        # camera on the arm64 proof's demo and misdealt the hand).
        if (known is not None and not t.exposed and self._down_zone(t.zone) and self._face(t) == "up"
                and ident == known.face):
            assert t.zone.seat is not None
            t.exposed = True
            out.append(ExposedCard(t.zone.seat, known, True, t.conf.get(Card.parse(ident, self.deck), 1.0), now))
        return out
