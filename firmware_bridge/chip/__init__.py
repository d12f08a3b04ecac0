"""The firmware on an emulated RP2040 (rp2040js), its SPI0 answered by the MFRC522 model."""
