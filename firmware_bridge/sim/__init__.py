"""Test tooling: the antenna firmware run against a register-level model of its readers.

``rc522`` models MFRC522 readers on a shared SPI bus and ISO/IEC 14443-A tags on a table,
on a virtual microsecond clock; ``board`` provides the stub ``machine``/``rp2``/``time``/
``select``/``sys`` modules (with a cost model for the RP2040's MicroPython) that let the
firmware's own, unmodified ``main.py`` (its ``scan_loop``) and ``mfrc522.py`` run against it (their
portable paths: ``rp2fast.py`` runs only on an RP2040, see ``firmware_bridge/chip``).  They are
written in the dialect MicroPython and CPython share, so the same simulation runs under
CPython (fast tests) and under the official MicroPython WebAssembly port (``mpy.py``).

Figures measured here are measured on this model, not on hardware; its cost model charges
nothing for running Python, and the chip (``firmware_bridge/chip``) measured the firmware two to
four times slower than it.
"""
