"""Reference MicroPython firmware for the antenna microcontroller.

``bridge_proto`` is importable from CPython (the emulator runs it); ``main`` and
``mfrc522`` need the RP2040's ``machine`` module.  Copy ``bridge_proto.py``,
``mfrc522.py`` and ``main.py`` (not this file) to the board.
"""
