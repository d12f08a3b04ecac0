"""NFC reader zones as a daemon source (``[nfc]``): a tag tapped on the muck reader mucks its card,
an unknown tag anywhere is reported for the dealer to identify, a dealer's badge (``badges``) signs
that dealer in.

Backend: a callable ``(zone, path, on_tag) -> reader`` (the tests and the demo build an
:class:`~hw.nfc.reader.NfcReader` on :mod:`hw.nfc.fake`'s scripted frontend).
"""

from __future__ import annotations

import logging
from typing import Any

from controller.rules.decks import RegistryError
from controller.rules.events import DealerSignIn, Muck, UnknownTagRead
from controller.sources import SourceContext, SourcePlugin
from hw.nfc.config import NfcSection, check_against_table

log = logging.getLogger(__name__)


class NfcSource:
    def __init__(self, ctx: SourceContext, section: NfcSection) -> None:
        self.ctx = ctx
        self.section = section
        self.readers: list[Any] = []

    def _on_tag(self, zone: str, read: Any) -> None:
        dealer = self.section.badges.get(str(read.uid).lower())
        if dealer is not None:  # a dealer's badge: a sign-in, journaled like any event
            self.ctx.post(DealerSignIn(dealer, badge=str(read.uid).lower(), source="nfc"), "nfc")
            return
        try:
            ident = self.ctx.registry.lookup(read.uid)
        except RegistryError:
            return
        if ident.card is None:
            self.ctx.post(UnknownTagRead(zone, ident.uid), "nfc")
        elif zone == "muck":
            self.ctx.post(Muck(ident.card, source="rfid"), "nfc")

    def start(self) -> None:
        for r in self.section.readers:
            def on_tag(read: Any, zone: str = r.zone) -> None:
                self._on_tag(zone, read)

            if self.ctx.backend is not None:
                reader = self.ctx.backend(r.zone, r.path, on_tag)
            else:
                from hw.nfc.reader import NfcReader, NfcReaderConfig  # nfcpy: only for real readers

                reader = NfcReader(NfcReaderConfig(r.zone, path=r.path), on_tag)
            reader.start()
            self.readers.append(reader)

    def after(self, outputs: list[Any]) -> None:
        pass

    def stop(self) -> None:
        for reader in self.readers:
            try:
                reader.stop()
            except Exception:
                log.exception("nfc reader stop failed")

    def health(self) -> dict[str, Any]:
        return {r.config.zone: r.health().ok for r in self.readers if hasattr(r, "health")}

    def healthy(self) -> bool:
        return True  # a reader that fails reopens itself with backoff; its health says so


PLUGIN = SourcePlugin(name="nfc", section=NfcSection, build=NfcSource, order=30,
                      enabled=lambda section, backend: bool(section.readers),
                      check=check_against_table)
