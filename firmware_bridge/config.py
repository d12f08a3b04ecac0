"""The ``[serial]`` config section: where the antenna board is (this driver owns its schema)."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field, StrictBool, field_validator

from controller.sources import Section


class SerialSection(Section):
    enabled: StrictBool = True
    port: str = "/dev/ttyACM0"
    baudrate: int = Field(115200, gt=0, le=4_000_000)
    # Seconds without a HEARTBEAT before the host reboots the board; None: four of the board's
    # periods (2 s).  A board slower than real time (the emulated RP2040 in tests) needs more.
    heartbeat_timeout: float | None = Field(None, gt=0, le=600)
    # The board's seconds per wall second: 1 for a real board; the emulated RP2040 (the chip bench)
    # runs ~0.1 (firmware_bridge.link.LinkConfig.device_time_scale).
    device_time_scale: float = Field(1.0, gt=0, le=1)

    @field_validator("port")
    @classmethod
    def _port(cls, v: str) -> str:
        if v.startswith("socket://"):
            parts = urlsplit(v)
            try:
                port = parts.port
            except ValueError:
                port = None
            if not parts.hostname or port is None or not 1 <= port <= 65535:
                raise ValueError(f"{v!r}: expected socket://host:port with a port in 1..65535")
            return v
        if v.startswith("/"):
            return v
        raise ValueError(f"{v!r}: expected a device path (/dev/ttyACM0) or socket://host:port")
