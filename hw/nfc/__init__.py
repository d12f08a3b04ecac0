"""NFC reader zones (the enrollment pad, the muck reader) over nfcpy.

* :mod:`hw.nfc.reader`: :class:`~hw.nfc.reader.NfcReader` (one reader in its own thread, reopened
  with backoff), the card-code convention for tag memory, the reader's settings.
* :mod:`hw.nfc.fake`: a scripted frontend at nfcpy's ``ContactlessFrontend`` boundary.
* :mod:`hw.nfc.config`: the ``[nfc]`` config section.
* :mod:`hw.nfc.source`: the daemon's ``nfc`` source plug-in.
"""
