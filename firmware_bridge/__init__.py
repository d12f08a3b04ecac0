"""Hardware bridge: the serial link to the antenna microcontroller.

Pipeline, one module per step so each can be tested alone:

* ``protocol``  - frames on the wire (COBS + CRC-16), typed messages, a resyncing decoder;
* ``link``      - host side: port, handshake, sequence/gap/reset recovery, presence changes;
* ``zones``     - antenna -> zone map and presence debounce -> zone changes;
* ``fusion``    - zone changes -> engine events (``controller.rules.events``);
* ``emulator``  - a software microcontroller on a pty or TCP, with fault injection;
* ``firmware/`` - the reference MicroPython firmware (its protocol core also runs the emulator);
* ``sim/``      - test tooling: a register-level MFRC522/ISO 14443-A model and RP2040 stubs that run
  the firmware's own ``main.py`` under CPython and MicroPython (``tablectl bench table`` uses it);
* ``chip/``     - the firmware on the RP2040's own MicroPython binary (rp2040js), its SPI answered by
  the ``sim`` model, its USB on a pty (``tablectl bench table --chip``, ``tests/firmware/test_chip.py``);
* ``table_sim`` - a physical table on the emulated antennas: hands played as card movements;
* ``bench``     - decode throughput and end-to-end latency.

``controller/`` never imports this package's hardware code; this package may import pyserial.
"""
