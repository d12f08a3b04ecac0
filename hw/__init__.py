"""Device adapters: the only package that imports hardware libraries (gpiozero, nfcpy, OpenCV capture).

One folder per device, each with the same shape (as gpiozero's ``pins/``): its settings and config
section, the real backend, and the fake beside it that the tests and the demo run on:

* :mod:`hw.gpio`: the table's panel (shuffler lines, dealer buttons, alert LED and buzzer) over
  gpiozero; its fake is gpiozero's own ``MockFactory`` pins.
* :mod:`hw.nfc`: NFC reader zones (enrollment pad, muck reader) over nfcpy; its fake is a scripted
  frontend at nfcpy's ``ContactlessFrontend`` boundary.
* :mod:`hw.camera`: cameras over the table through OpenCV; its fake plays frames from a callable.

The antenna board has its own package, :mod:`firmware_bridge` (protocol, link, emulator, firmware).
``controller`` never imports this package: the daemon loads each device's source plug-in by name
(the ``tablectl.sources`` entry points, :mod:`controller.sources`).
"""
