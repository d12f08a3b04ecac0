"""An NFC reader zone (enrollment pad, muck reader) over nfcpy.

One :class:`NfcReader` owns one reader (USB, e.g. ``usb`` or ``usb:072f:2200``; or a
PN532 on the Pi's UART, ``tty:AMA0:pn532`` / ``tty:S0:pn532``) and runs nfcpy's
``clf.connect(rdwr={'on-connect': ...})`` loop in its own thread.  Each tap is
reported once as a :class:`TagRead` (zone, UID as upper-case hex, card code if
the tag carries one).  When the reader fails -- ``IOError``/``OSError``, the
device unplugged, ``connect`` returning ``False`` as nfcpy does after it
swallowed an I/O error -- it is closed and reopened with exponential backoff,
and every change is reported as a :class:`ReaderHealth`.

Once per tap
    The ``on-connect`` callback returns ``True``, so nfcpy waits until the tag
    leaves the field before polling again.  A tag at the edge of the field can
    still drop out and come back; the same UID seen again within
    ``repeat_holdoff`` seconds of its last sighting is the same tap.

Card code in tag memory (the convention)
    A tag may carry its card in an NDEF message: the first NDEF **Text record**
    (well-known type ``T``, any language, UTF-8) whose text is a card code.  A
    card code is ``[card:]FACE[@DECK]`` -- ``card:`` prefix optional and
    case-insensitive, FACE as in :meth:`controller.rules.cards.Card.parse` (``Ah``,
    ``Td``, ``joker``), ``@DECK`` optional.  So ``Ah``, ``card:Ah`` and
    ``card:Ah@A`` are all valid; we write ``card:Ah@A`` (:func:`card_code_record`).
    The code is reported in canonical form: ``Ah`` or ``Ah@A``.  Other records,
    and text that is not a card code, are ignored (:attr:`TagRead.note` says
    why); an unreadable NDEF area never hides the UID.  The UID stays the
    identity: the registry maps UIDs to cards, the code only helps enrollment
    and cross-checks.

Tests and the simulator use :mod:`hw.nfc.fake` (``ScriptedFrontend`` / ``ScriptedOpener``),
which behave like ``nfc.ContactlessFrontend`` at its API boundary (``connect``
invoking ``on-connect``/``on-release`` with tags exposing ``.identifier`` and
``.ndef.records`` made of real ``ndef`` records).
"""

from __future__ import annotations

import errno
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

import ndef

from controller.rules.cards import Card, CardError
from controller.rules.decks import RegistryError, normalise_uid

log = logging.getLogger(__name__)

CARD_CODE_PREFIX = "card:"

# -- card codes in tag memory ------------------------------------------------------------------


def card_code_from_text(text: str) -> str | None:
    """``Ah`` / ``card:Ah`` / ``card:Ah@A`` -> ``Ah`` / ``Ah`` / ``Ah@A``; anything else -> None."""
    if not isinstance(text, str):
        return None
    body = text.strip()
    if body[: len(CARD_CODE_PREFIX)].lower() == CARD_CODE_PREFIX:
        body = body[len(CARD_CODE_PREFIX) :].strip()
    face, _, deck = body.partition("@")
    try:
        card = Card.parse(face)
    except CardError:
        return None
    deck = deck.strip()
    if deck and not deck.replace("-", "").replace("_", "").isalnum():
        return None
    return f"{card.face}@{deck}" if deck else card.face


def card_code_record(card: Card | str, language: str = "en") -> ndef.TextRecord:
    """The NDEF record to write on a tag: ``card:Ah@A`` (a bare ``Ah`` string stays deck-less)."""
    if isinstance(card, Card):
        text = f"{card.face}@{card.deck}"
    else:
        code = card_code_from_text(card)
        if code is None:
            raise ValueError(f"not a card code: {card!r}")
        text = code
    return ndef.TextRecord(CARD_CODE_PREFIX + text, language)


def read_card_code(tag: Any) -> tuple[str | None, str | None]:
    """The card code in a tag's NDEF memory, and a note when there is none or it failed.

    Never raises: an unreadable NDEF area is a note, the UID is still good.
    """
    try:
        data = tag.ndef
        if data is None:
            return None, None
        records = list(data.records)
    except Exception as exc:  # nfc.tag.TagCommandError, ndef.DecodeError, tag gone mid-read
        return None, f"ndef unreadable: {exc}"
    texts = [r.text for r in records if isinstance(r, ndef.TextRecord)]
    for text in texts:
        code = card_code_from_text(text)
        if code is not None:
            return code, None
    if texts:
        return None, f"no card code in text record(s) {texts!r}"
    return None, None


# -- reports -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TagRead:
    """One tap: ``uid`` upper-case hex (:func:`controller.rules.decks.normalise_uid`)."""

    zone: str
    uid: str
    card_code: str | None
    at: float
    note: str | None = None


HealthState = Literal["starting", "ok", "failed", "stopped"]


@dataclass(frozen=True, slots=True)
class ReaderHealth:
    """The reader's state.

    ``state`` is ``ok`` while the reader is open.  ``failures`` counts consecutive
    failures to open or use it since a tap last went through; the backoff before the
    next attempt grows with it (``backoff_initial * 2**(failures-1)``, capped).
    """

    zone: str
    path: str
    state: HealthState
    failures: int = 0
    opens: int = 0
    reads: int = 0
    last_error: str | None = None
    at: float = 0.0

    @property
    def ok(self) -> bool:
        return self.state == "ok"


@dataclass(frozen=True, slots=True)
class NfcReaderConfig:
    """One reader zone.  ``path`` is an nfcpy device path (``usb``, ``usb:054c:06c3``,
    ``tty:AMA0:pn532``).  ``targets`` are nfcpy bitrate/type strings; card inlays
    are ISO 14443A (NTAG21x, MIFARE Ultralight), hence ``106A``."""

    zone: str
    path: str = "usb"
    targets: tuple[str, ...] = ("106A",)
    poll_interval: float = 0.1
    repeat_holdoff: float = 0.5
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    read_ndef: bool = True
    beep: bool = True

    def __post_init__(self) -> None:
        if not self.zone:
            raise ValueError("nfc reader: zone name required")
        if self.backoff_initial <= 0 or self.backoff_max < self.backoff_initial:
            raise ValueError("nfc reader: need 0 < backoff_initial <= backoff_max")


# -- the nfcpy boundary ------------------------------------------------------------------------


class Frontend(Protocol):
    """The part of ``nfc.ContactlessFrontend`` the reader uses."""

    def connect(self, **options: Any) -> Any: ...

    def close(self) -> None: ...


def open_frontend(path: str) -> Frontend:
    """Open the real reader; raises ``OSError`` (``ENODEV`` etc.) when there is none."""
    import nfc  # imported here: only a real reader needs libusb/pyserial behind it

    return nfc.ContactlessFrontend(path)


class NfcReader:
    """A reader zone in its own thread.

    ``on_tag`` and ``on_health`` are called from the reader thread; keep them short.
    Without ``on_tag``, reads are queued for :meth:`reads`.
    """

    def __init__(
        self,
        config: NfcReaderConfig,
        on_tag: Callable[[TagRead], None] | None = None,
        on_health: Callable[[ReaderHealth], None] | None = None,
        *,
        frontend_factory: Callable[[str], Frontend] = open_frontend,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self._on_tag = on_tag
        self._on_health = on_health
        self._factory = frontend_factory
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._clf: Frontend | None = None
        self._queue: queue.Queue[TagRead | None] = queue.Queue()
        self._last_uid: str | None = None
        self._last_seen = float("-inf")
        self._health = ReaderHealth(config.zone, config.path, "starting", at=clock())
        self._health_lock = threading.Lock()

    # -- public -------------------------------------------------------------------------------

    @property
    def health(self) -> ReaderHealth:
        return self._health

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> NfcReader:
        if self._thread is not None:
            raise RuntimeError(f"nfc reader {self.config.zone}: already started")
        self._thread = threading.Thread(target=self._run, name=f"nfc-{self.config.zone}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop the thread; True once it has ended (the reader is closed)."""
        self._stop.set()
        self._queue.put(None)
        if self._thread is None:
            self._set_health(state="stopped")
            return True
        self._thread.join(timeout)
        if self._thread.is_alive():  # stuck inside the driver: closing the device breaks it out
            self._close_clf()
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def reads(self, timeout: float | None = None) -> Iterator[tuple[str, str | None]]:
        """``(uid, card_code)`` per tap until the reader stops (or nothing came for ``timeout`` s).

        Only when the reader was built without ``on_tag``; this is what
        ``controller.enrollment.run_enrollment`` consumes.
        """
        if self._on_tag is not None:
            raise RuntimeError("reads() needs a reader built without on_tag")
        while True:
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                return
            if item is None:
                return
            yield item.uid, item.card_code

    def __enter__(self) -> NfcReader:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- thread -------------------------------------------------------------------------------

    def _run(self) -> None:
        cfg = self.config
        failures = 0
        while not self._stop.is_set():
            try:
                clf = self._factory(cfg.path)
            except Exception as exc:  # OSError(ENODEV), EACCES, EBUSY, usb1 errors
                failures += 1
                self._fail(failures, f"cannot open {cfg.path}: {exc}")
                self._backoff(failures)
                continue
            self._clf = clf
            self._set_health(state="ok", opens=self._health.opens + 1)
            try:
                while not self._stop.is_set():
                    result = clf.connect(rdwr=self._rdwr_options(), terminate=self._stop.is_set)
                    if self._stop.is_set():
                        break
                    if result is False or result is None:
                        # nfcpy logs and swallows IOError inside connect() and returns False
                        raise OSError(errno.EIO, f"reader stopped responding (connect returned {result})")
                    if failures:  # a full tap went through: the backoff starts afresh
                        failures = 0
                        self._set_health(failures=0)
            except Exception as exc:
                if not self._stop.is_set():
                    failures += 1
                    self._fail(failures, f"{type(exc).__name__}: {exc}")
            finally:
                self._close_clf()
            if not self._stop.is_set():
                self._backoff(failures)
        self._set_health(state="stopped")

    def _rdwr_options(self) -> dict[str, Any]:
        return {
            "targets": list(self.config.targets),
            "on-connect": self._on_connect,
            "on-release": self._on_release,
            "iterations": 1,
            "interval": self.config.poll_interval,
            "beep-on-connect": self.config.beep,
        }

    def _on_connect(self, tag: Any) -> bool:
        now = self._clock()
        try:
            uid = normalise_uid(bytes(tag.identifier))
        except (RegistryError, TypeError, AttributeError) as exc:
            log.warning("nfc %s: tag without a usable identifier: %s", self.config.zone, exc)
            return True
        if uid == self._last_uid and now - self._last_seen < self.config.repeat_holdoff:
            self._last_seen = now
            return True  # the same tap flickering at the edge of the field
        self._last_uid, self._last_seen = uid, now
        code, note = read_card_code(tag) if self.config.read_ndef else (None, None)
        read = TagRead(self.config.zone, uid, code, now, note)
        self._set_health(reads=self._health.reads + 1)
        if self._on_tag is None:
            self._queue.put(read)
        else:
            try:
                self._on_tag(read)
            except Exception:
                log.exception("nfc %s: on_tag callback failed for %s", self.config.zone, uid)
        return True  # nfcpy waits for the tag to leave the field: one report per tap

    def _on_release(self, tag: Any) -> bool:
        self._last_seen = self._clock()
        return True

    def _fail(self, failures: int, error: str) -> None:
        log.warning("nfc %s: %s (failure %d)", self.config.zone, error, failures)
        self._set_health(state="failed", failures=failures, last_error=error)

    def _backoff(self, failures: int) -> None:
        cfg = self.config
        delay = min(cfg.backoff_initial * 2 ** max(failures - 1, 0), cfg.backoff_max)
        self._stop.wait(delay)

    def _close_clf(self) -> None:
        clf, self._clf = self._clf, None
        if clf is not None:
            try:
                clf.close()
            except Exception as exc:
                log.debug("nfc %s: close failed: %s", self.config.zone, exc)

    def _set_health(self, **changes: Any) -> None:
        with self._health_lock:
            new = replace(self._health, at=self._clock(), **changes)
            changed = (new.state, new.failures, new.opens) != (
                self._health.state,
                self._health.failures,
                self._health.opens,
            )
            self._health = new
        if changed and self._on_health is not None:
            try:
                self._on_health(new)
            except Exception:
                log.exception("nfc %s: on_health callback failed", self.config.zone)
