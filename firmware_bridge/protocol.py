"""Host side of the bridge wire protocol: typed messages and a resyncing frame decoder.

A frame is ``COBS(header + body + CRC16) 0x00``; header is ``version, type, seq``
(``>BBH``) and the CRC is CRC-16/CCITT-FALSE over header + body, big-endian.  The
full specification, with timings, is ``firmware_bridge/PROTOCOL.md``.

The host uses the PyPI ``cobs`` and ``crc`` packages; the firmware has its own
hand-written copies (MicroPython has neither) and the tests check they agree.
Constants come from the firmware module so the two sides cannot drift apart.

Anything that is not a well-formed frame becomes a :class:`FrameError`, never an
exception and never a message: the decoder drops it and resumes at the next 0x00.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field, fields
from enum import IntEnum
from typing import ClassVar, Self

import crc
from cobs import cobs

from controller.errors import PokerTableError
from firmware_bridge.firmware import bridge_proto as fw

PROTOCOL_VERSION = fw.PROTOCOL_VERSION
MAX_PAYLOAD = fw.MAX_PAYLOAD
MAX_BODY = fw.MAX_BODY
MAX_ENCODED = fw.MAX_ENCODED
MAX_UID_LEN = fw.MAX_UID_LEN
SOURCE_CONTROLLER = fw.SOURCE_CONTROLLER

_CRC = crc.Calculator(crc.Crc16.IBM_3740.value, optimized=True)  # IBM-3740 == CCITT-FALSE
_HEADER = struct.Struct(fw.HEADER_FORMAT)
_CRC_FMT = struct.Struct(">H")


class MessageType(IntEnum):
    HELLO = fw.T_HELLO
    HEARTBEAT = fw.T_HEARTBEAT
    TAG_ARRIVE = fw.T_TAG_ARRIVE
    TAG_LEAVE = fw.T_TAG_LEAVE
    INVENTORY = fw.T_INVENTORY
    FAULT = fw.T_FAULT
    ACK = fw.T_ACK
    HELLO_ACK = fw.T_HELLO_ACK
    CONFIGURE = fw.T_CONFIGURE
    REQUEST_INVENTORY = fw.T_REQUEST_INVENTORY
    REBOOT = fw.T_REBOOT
    EXPECT = fw.T_EXPECT
    REPLAY = fw.T_REPLAY


class AckStatus(IntEnum):
    OK = fw.ACK_OK
    BAD_ARGS = fw.ACK_BAD_ARGS
    UNKNOWN_COMMAND = fw.ACK_UNKNOWN_COMMAND
    NOT_READY = fw.ACK_NOT_READY


class FaultCode(IntEnum):
    READER_NOT_RESPONDING = fw.FAULT_READER_NOT_RESPONDING
    READER_RECOVERED = fw.FAULT_READER_RECOVERED
    TOO_MANY_TAGS = fw.FAULT_TOO_MANY_TAGS
    BAD_HOST_FRAME = fw.FAULT_BAD_HOST_FRAME
    OUTPUT_OVERFLOW = fw.FAULT_OUTPUT_OVERFLOW
    FIRMWARE_ERROR = fw.FAULT_FIRMWARE_ERROR
    SCAN_STALLED = fw.FAULT_SCAN_STALLED


class ProtocolError(PokerTableError, ValueError):
    """A body that does not match its message type (raised inside the codec only)."""


def crc16(data: bytes) -> int:
    return _CRC.checksum(data)


def _uid_entries(body: bytes, count: int | None = None) -> tuple[tuple[int, bytes], ...]:
    entries = []
    i = 0
    while i < len(body):
        if i + 2 > len(body):
            raise ProtocolError("truncated uid entry")
        antenna, n = body[i], body[i + 1]
        if not 1 <= n <= MAX_UID_LEN or i + 2 + n > len(body):
            raise ProtocolError(f"bad uid length {n}")
        entries.append((antenna, bytes(body[i + 2 : i + 2 + n])))
        i += 2 + n
    if count is not None and len(entries) != count:
        raise ProtocolError(f"inventory says {count} entries, has {len(entries)}")
    return tuple(entries)


def _uid_entry(antenna: int, uid: bytes) -> bytes:
    if not 1 <= len(uid) <= MAX_UID_LEN:
        raise ProtocolError(f"uid must be 1..{MAX_UID_LEN} bytes")
    return bytes((antenna, len(uid))) + uid


@dataclass(frozen=True, slots=True)
class Message:
    """Base of all messages; ``seq`` is the sender's 16-bit sequence number."""

    TYPE: ClassVar[MessageType]
    seq: int = field(default=0, kw_only=True)

    def body(self) -> bytes:
        return b""

    @classmethod
    def parse(cls, body: bytes, seq: int, version: int) -> Message:
        if body:
            raise ProtocolError(f"{cls.TYPE.name} has no body")
        return cls(seq=seq)


@dataclass(frozen=True, slots=True)
class _Packed(Message):
    """A message whose body is its fields, in their order, packed by ``_FMT``: a fixed length."""

    _FMT: ClassVar[struct.Struct]

    def body(self) -> bytes:
        return self._FMT.pack(*(getattr(self, f.name) for f in fields(self) if f.name != "seq"))

    @classmethod
    def parse(cls, body: bytes, seq: int, version: int) -> Self:
        if len(body) != cls._FMT.size:
            raise ProtocolError(f"bad {cls.TYPE.name} length")
        return cls(*cls._FMT.unpack(body), seq=seq)


@dataclass(frozen=True, slots=True)
class Hello(Message):
    """Device boot / identification.  Its layout is frozen across protocol versions."""

    TYPE: ClassVar[MessageType] = MessageType.HELLO
    firmware_version: tuple[int, int, int]
    antenna_count: int
    boot_id: int
    reset_cause: int = 0
    heartbeat_ms: int = fw.DEFAULT_HEARTBEAT_MS
    protocol_version: int = PROTOCOL_VERSION
    _FMT: ClassVar[struct.Struct] = struct.Struct(">BBBBIBH")

    def body(self) -> bytes:
        a, b, c = self.firmware_version
        return self._FMT.pack(a, b, c, self.antenna_count, self.boot_id, self.reset_cause, self.heartbeat_ms)

    @classmethod
    def parse(cls, body: bytes, seq: int, version: int) -> Hello:
        # Later versions may append fields; only the frozen prefix is read.
        if len(body) < cls._FMT.size or (version == PROTOCOL_VERSION and len(body) != cls._FMT.size):
            raise ProtocolError("bad HELLO length")
        a, b, c, n, boot, cause, hb = cls._FMT.unpack_from(body)
        return cls((a, b, c), n, boot, cause, hb, version, seq=seq)


@dataclass(frozen=True, slots=True)
class Heartbeat(_Packed):
    TYPE: ClassVar[MessageType] = MessageType.HEARTBEAT
    boot_id: int
    uptime_ms: int
    scan_cycles: int
    present: int
    _FMT: ClassVar[struct.Struct] = struct.Struct(">IIIH")


@dataclass(frozen=True, slots=True)
class TagArrive(Message):
    TYPE: ClassVar[MessageType] = MessageType.TAG_ARRIVE
    antenna: int
    uid: bytes

    def body(self) -> bytes:
        return _uid_entry(self.antenna, self.uid)

    @classmethod
    def parse(cls, body: bytes, seq: int, version: int) -> TagArrive:
        entries = _uid_entries(body)
        if len(entries) != 1:
            raise ProtocolError(f"{cls.TYPE.name} carries exactly one uid")
        return cls(entries[0][0], entries[0][1], seq=seq)


@dataclass(frozen=True, slots=True)
class TagLeave(TagArrive):
    TYPE: ClassVar[MessageType] = MessageType.TAG_LEAVE


@dataclass(frozen=True, slots=True)
class Inventory(Message):
    """Part ``part`` of ``parts`` of a full presence snapshot (parts have consecutive seqs)."""

    TYPE: ClassVar[MessageType] = MessageType.INVENTORY
    boot_id: int
    snapshot: int
    part: int
    parts: int
    entries: tuple[tuple[int, bytes], ...] = ()
    _FMT: ClassVar[struct.Struct] = struct.Struct(fw.INVENTORY_HEAD_FORMAT)

    def body(self) -> bytes:
        head = self._FMT.pack(self.boot_id, self.snapshot, self.part, self.parts, len(self.entries))
        return head + b"".join(_uid_entry(a, u) for a, u in self.entries)

    @classmethod
    def parse(cls, body: bytes, seq: int, version: int) -> Inventory:
        if len(body) < cls._FMT.size:
            raise ProtocolError("bad INVENTORY length")
        boot, snap, part, parts, count = cls._FMT.unpack_from(body)
        if not 1 <= part <= parts:
            raise ProtocolError(f"inventory part {part} of {parts}")
        return cls(boot, snap, part, parts, _uid_entries(body[cls._FMT.size :], count), seq=seq)


@dataclass(frozen=True, slots=True)
class Fault(_Packed):
    """A reader or the controller reports trouble; ``source`` is an antenna or 0xFF."""

    TYPE: ClassVar[MessageType] = MessageType.FAULT
    source: int
    code: int
    detail: int = 0
    _FMT: ClassVar[struct.Struct] = struct.Struct(">BBH")


@dataclass(frozen=True, slots=True)
class Ack(_Packed):
    TYPE: ClassVar[MessageType] = MessageType.ACK
    cmd_seq: int
    cmd_type: int
    status: int = AckStatus.OK
    _FMT: ClassVar[struct.Struct] = struct.Struct(">HBB")


@dataclass(frozen=True, slots=True)
class HelloAck(_Packed):
    """Host handshake: ``boot_id`` 0 asks the device to identify itself and send an inventory."""

    TYPE: ClassVar[MessageType] = MessageType.HELLO_ACK
    boot_id: int = 0
    _FMT: ClassVar[struct.Struct] = struct.Struct(">I")


@dataclass(frozen=True, slots=True)
class Configure(Message):
    """Scan timing and which antennas are scanned (``None`` = all)."""

    TYPE: ClassVar[MessageType] = MessageType.CONFIGURE
    scan_period_ms: int = fw.DEFAULT_SCAN_PERIOD_MS
    debounce_ms: int = fw.DEFAULT_DEBOUNCE_MS
    heartbeat_ms: int = fw.DEFAULT_HEARTBEAT_MS
    enabled: tuple[int, ...] | None = None

    def body(self) -> bytes:
        mask = b""
        if self.enabled is not None:
            bits = bytearray((max(self.enabled, default=-1) // 8) + 1 if self.enabled else 1)
            for a in self.enabled:
                bits[a // 8] |= 1 << (a % 8)
            mask = bytes(bits)
        head = struct.pack(">HHHB", self.scan_period_ms, self.debounce_ms, self.heartbeat_ms, len(mask))
        return head + mask

    @classmethod
    def parse(cls, body: bytes, seq: int, version: int) -> Configure:
        if len(body) < 7 or len(body) != 7 + body[6]:
            raise ProtocolError("bad CONFIGURE length")
        scan, deb, hb, n = struct.unpack_from(">HHHB", body)
        enabled = None if n == 0 else tuple(a for a in range(8 * n) if body[7 + a // 8] >> (a % 8) & 1)
        return cls(scan, deb, hb, enabled, seq=seq)


@dataclass(frozen=True, slots=True)
class RequestInventory(Message):
    TYPE: ClassVar[MessageType] = MessageType.REQUEST_INVENTORY


@dataclass(frozen=True, slots=True)
class Reboot(Message):
    TYPE: ClassVar[MessageType] = MessageType.REBOOT


@dataclass(frozen=True, slots=True)
class Expect(Message):
    """Host hint: the antennas the next cards are expected on (read first and often).  No answer."""

    TYPE: ClassVar[MessageType] = MessageType.EXPECT
    antennas: tuple[int, ...] = ()

    def body(self) -> bytes:
        return bytes((len(self.antennas), *self.antennas))

    @classmethod
    def parse(cls, body: bytes, seq: int, version: int) -> Expect:
        if not body or len(body) != 1 + body[0] or body[0] > fw.MAX_EXPECT:
            raise ProtocolError("bad EXPECT body")
        return cls(tuple(body[1:]), seq=seq)


@dataclass(frozen=True, slots=True)
class Replay(_Packed):
    """Ask the device to send again its frames from ``first`` on (ACK OK; NOT_READY if gone)."""

    TYPE: ClassVar[MessageType] = MessageType.REPLAY
    first: int = 0
    _FMT: ClassVar[struct.Struct] = struct.Struct(">H")


MESSAGE_CLASSES: dict[int, type[Message]] = {
    cls.TYPE: cls
    for cls in (Hello, Heartbeat, TagArrive, TagLeave, Inventory, Fault, Ack, HelloAck, Configure,
                RequestInventory, Reboot, Expect, Replay)
}


@dataclass(frozen=True, slots=True)
class FrameError:
    """A frame that was dropped, and why (``cobs``, ``crc``, ``length``, ``version``, ``type``, ``body``)."""

    reason: str
    size: int
    detail: str = ""


def encode(msg: Message, version: int = PROTOCOL_VERSION) -> bytes:
    """One message -> one delimited frame, ready for the wire."""
    payload = _HEADER.pack(version, msg.TYPE, msg.seq & 0xFFFF) + msg.body()
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    return cobs.encode(payload + _CRC_FMT.pack(crc16(payload))) + b"\x00"


def decode_frame(frame: bytes) -> Message | FrameError:
    """One frame without its 0x00 delimiter -> a message, or the reason it was rejected."""
    size = len(frame)
    if size > MAX_ENCODED:
        return FrameError("length", size, "frame too long")
    try:
        raw = cobs.decode(frame)
    except cobs.DecodeError as exc:
        return FrameError("cobs", size, str(exc))
    if len(raw) < _HEADER.size + 2:
        return FrameError("length", size, "frame too short")
    payload, check = raw[:-2], raw[-2:]
    if crc16(payload) != _CRC_FMT.unpack(check)[0]:
        return FrameError("crc", size)
    version, mtype, seq = _HEADER.unpack_from(payload)
    cls = MESSAGE_CLASSES.get(mtype)
    if cls is None:
        return FrameError("type", size, f"unknown message type 0x{mtype:02x}")
    if version != PROTOCOL_VERSION and cls is not Hello:
        return FrameError("version", size, f"protocol version {version}")
    try:
        return cls.parse(payload[_HEADER.size :], seq, version)
    except (ProtocolError, struct.error) as exc:
        return FrameError("body", size, str(exc))


class FrameDecoder:
    """Turns a byte stream into messages; resynchronises at every 0x00.

    Garbage, truncated frames and frames longer than any valid one are counted in
    ``errors`` (by reason) and skipped; bytes after an over-long run are discarded
    until the next delimiter so one lost 0x00 costs at most two frames.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._discarding = False
        self.frames = 0
        self.errors: Counter[str] = Counter()

    def reset(self) -> None:
        self._buf.clear()
        self._discarding = False

    def feed(self, data: bytes) -> list[Message | FrameError]:
        out: list[Message | FrameError] = []
        if not data:
            return out
        chunks = bytes(data).split(b"\x00")
        tail = chunks.pop()  # bytes after the last delimiter: an incomplete frame
        for i, chunk in enumerate(chunks):
            if i == 0:
                if self._discarding:
                    size = len(self._buf) + len(chunk)
                    out.append(self._error(FrameError("length", size, "frame too long")))
                    self._buf.clear()
                    self._discarding = False
                    continue
                if self._buf:
                    self._buf += chunk
                    chunk = bytes(self._buf)
                    self._buf.clear()
            if not chunk:
                continue  # empty frames (repeated delimiters) are a legal way to flush the line
            result = decode_frame(chunk)
            if isinstance(result, FrameError):
                self._error(result)
            else:
                self.frames += 1
            out.append(result)
        if chunks:
            self._buf.clear()
        if not self._discarding:
            self._buf += tail
            if len(self._buf) > MAX_ENCODED:
                self._discarding = True
        return out

    def _error(self, err: FrameError) -> FrameError:
        self.errors[err.reason] += 1
        return err


__all__ = [
    "MAX_PAYLOAD",
    "PROTOCOL_VERSION",
    "Ack",
    "AckStatus",
    "Configure",
    "Fault",
    "FaultCode",
    "FrameDecoder",
    "FrameError",
    "Hello",
    "HelloAck",
    "Heartbeat",
    "Inventory",
    "Message",
    "MessageType",
    "ProtocolError",
    "Reboot",
    "RequestInventory",
    "TagArrive",
    "TagLeave",
    "crc16",
    "decode_frame",
    "encode",
]
