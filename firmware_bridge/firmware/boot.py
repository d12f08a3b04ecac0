"""Runs before ``main.py``: from here on, 0x03 on the USB line is data, not Ctrl-C.

The host talks binary frames and does not wait for the board: after a REBOOT, a watchdog reset
or a power cycle under a running daemon, its HELLO_ACK retries arrive while ``main.py`` is still
importing (half a second of compiling on the chip).  A COBS code byte 0x03 then raised
KeyboardInterrupt there, and the board sat in the REPL, never scanning, until power-cycled.
Found by running the firmware on the chip's own binary (``firmware_bridge/chip``).  The REPL
sets Ctrl-C again for whatever it runs, so maintenance mode (BOOTSEL) still has it.
"""

import micropython

micropython.kbd_intr(-1)
