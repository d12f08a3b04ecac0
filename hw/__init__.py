"""Hardware adapters: the only place that imports hardware libraries.

Each adapter sits behind a narrow interface with a fake beside the real device:

* :mod:`hw.gpio` -- the table's panel (shuffler lines, dealer buttons, alert LED
  and buzzer) over gpiozero; tests use gpiozero's own ``MockFactory`` pin backend.
* :mod:`hw.nfc` -- an NFC reader zone (enrollment pad, muck reader) over nfcpy;
  tests script a frontend at nfcpy's ``ContactlessFrontend`` API boundary.

``controller`` never imports this package; the daemon wires the two together.
Submodules are not imported here so that using one adapter never pulls in the
other's library.
"""
