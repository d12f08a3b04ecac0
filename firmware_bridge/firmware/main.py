"""The board's entry point: MicroPython runs this at boot; the loop is ``scan_loop.py``.

Kept this small because ``main.py`` is compiled from source at every boot, while ``scan_loop``
(like ``bridge_proto``, ``mfrc522`` and ``rp2fast``) can be copied precompiled as ``.mpy``.
"""

import micropython

micropython.kbd_intr(-1)  # the line is binary: 0x03 is data (boot.py did this already; see there)

import scan_loop  # noqa: E402,F401 - runs the scan loop (unless BOOTSEL is held: maintenance)
