"""Test tooling: the antenna firmware run against a register-level model of its readers.

``rc522`` models MFRC522 readers on a shared SPI bus and ISO/IEC 14443-A tags on a table,
on a virtual microsecond clock; ``board`` provides the stub ``machine``/``rp2``/``time``/
``select``/``sys`` modules (with a cost model for the RP2040's MicroPython) that let the
firmware's own, unmodified ``main.py`` (its ``scan_loop``) and ``mfrc522.py`` run against it (their
portable paths: ``rp2fast.py`` runs only on an RP2040, see ``firmware_bridge/chip``).  They are
written in the dialect MicroPython and CPython share, so the same simulation runs under
CPython (fast tests) and under the official MicroPython WebAssembly port (``mpy.py``).

Figures measured here are measured on this model, not on hardware; its cost model charges
a few microseconds per SPI call and pin write and nothing for the Python between them: with
firmware 1.1.0 the chip (``firmware_bridge/chip``) took 19.5 ms for a full read of a 7-byte tag
behind the decoders, where this model's floor for one read, settle included, is 10.3 ms.
"""
