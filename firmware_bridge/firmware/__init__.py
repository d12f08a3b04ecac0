"""Reference MicroPython firmware for the antenna microcontroller.

``bridge_proto`` is importable from CPython (the emulator runs it); ``main`` and
``mfrc522`` need the RP2040's ``machine`` module (``firmware_bridge.sim`` provides a model
of it for the tests).  Copy ``bridge_proto.py``, ``mfrc522.py`` and ``main.py`` (not this
file), and your ``board_config.py`` if you have one, to the board.
"""
