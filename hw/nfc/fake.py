"""The NFC reader's fake: a scripted frontend at nfcpy's ``ContactlessFrontend`` API boundary.

:class:`hw.nfc.reader.NfcReader` runs unchanged on it: ``connect`` invokes ``on-connect`` and
``on-release`` with tags exposing ``.identifier`` and ``.ndef.records`` made of real ``ndef``
records, and an opener that fails or unplugs on cue.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterable
from typing import Any

import ndef


class FakeNdef:
    """Like nfcpy's ``tag.ndef``: the message octets, decoded on demand by ndeflib."""

    def __init__(self, records: Iterable[ndef.Record] = (), octets: bytes | None = None) -> None:
        self.octets = octets if octets is not None else b"".join(ndef.message_encoder(list(records)))

    @property
    def records(self) -> list[ndef.Record]:
        return list(ndef.message_decoder(self.octets, errors="relax"))


class FakeTag:
    """A tag as nfcpy hands it to ``on-connect``: ``.identifier`` bytes, ``.ndef`` or None."""

    def __init__(
        self,
        identifier: bytes | str,
        records: Iterable[ndef.Record] | None = None,
        *,
        octets: bytes | None = None,
        ndef_error: Exception | None = None,
    ) -> None:
        self.identifier = bytes.fromhex(identifier) if isinstance(identifier, str) else bytes(identifier)
        self._ndef = None if records is None and octets is None else FakeNdef(records or (), octets)
        self._ndef_error = ndef_error

    @property
    def ndef(self) -> FakeNdef | None:
        if self._ndef_error is not None:
            raise self._ndef_error
        return self._ndef

    def __repr__(self) -> str:
        return f"FakeTag({self.identifier.hex().upper()})"


class ScriptedFrontend:
    """Behaves like ``nfc.ContactlessFrontend`` for :class:`NfcReader`.

    Each ``connect()`` call takes the next script step:

    * a tag -- ``on-connect(tag)``; if it returns true the tag is then removed and
      ``connect`` returns ``on-release(tag)``, else it returns the tag (as nfcpy);
    * ``False`` -- returned as is: what nfcpy does after swallowing an ``IOError``;
    * an exception -- raised (``OSError`` for a dropped reader);
    * script exhausted -- wait until ``terminate()`` is true, then return ``None``.

    After ``close()``, ``connect`` raises ``OSError(ENODEV)`` like nfcpy.
    """

    def __init__(self, script: Iterable[Any] = (), path: str = "usb") -> None:
        self.path = path
        self._script = list(script)
        self.closed = False
        self.connects = 0
        self.idle = threading.Event()  # set once the script is used up and connect() waits
        self._closed_event = threading.Event()

    def connect(self, **options: Any) -> Any:
        if self.closed:
            raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))
        self.connects += 1
        rdwr = dict(options.get("rdwr") or {})
        terminate = options.get("terminate", lambda: False)
        if not self._script:
            self.idle.set()
            while not terminate() and not self._closed_event.wait(0.005):
                pass
            return None
        step = self._script.pop(0)
        if isinstance(step, BaseException):
            raise step
        if step is False:
            return False
        on_connect = rdwr.get("on-connect", lambda tag: True)
        on_release = rdwr.get("on-release", lambda tag: True)
        if on_connect(step):
            return on_release(step)
        return step

    def close(self) -> None:
        self.closed = True
        self._closed_event.set()


class ScriptedOpener:
    """A ``frontend_factory``: each open takes the next item -- a script (list of steps)
    becomes a :class:`ScriptedFrontend`, an exception is raised (no device).  When the
    items run out every open fails with ``OSError(ENODEV)``."""

    def __init__(self, *items: Iterable[Any] | BaseException) -> None:
        self._items = list(items)
        self.opened: list[ScriptedFrontend] = []
        self.attempts = 0

    def __call__(self, path: str) -> ScriptedFrontend:
        self.attempts += 1
        if not self._items:
            raise OSError(errno.ENODEV, f"{os.strerror(errno.ENODEV)}: {path}")
        item = self._items.pop(0)
        if isinstance(item, BaseException):
            raise item
        frontend = ScriptedFrontend(item, path)
        self.opened.append(frontend)
        return frontend


