"""REPLAY's ring (bridge_proto.Device, 1.7.0): the last RING_FRAMES frames in one preallocated byte
ring of RING_BYTES, wrapping round; what it sends back is byte for byte what was sent."""

from __future__ import annotations

from firmware_bridge.firmware import bridge_proto as fw


def _device() -> tuple[fw.Device, list[bytes]]:
    out: list[bytes] = []
    return fw.Device(4, out.append, 7), out


def test_the_ring_gives_back_the_last_frames_byte_for_byte_across_its_wrap() -> None:
    d, out = _device()
    for i in range(300):  # small frames, and every 37th a large one (an inventory's size)
        d._send(fw.T_FAULT, bytes((i & 0xFF,)) * (200 if i % 37 == 0 else 4))
    sent = {fw.decode_frame(f[:-1])[2]: f for f in out}
    kept = [d._ring_seq[(d._ring_first + i) % fw.RING_FRAMES] for i in range(d._ring_count)]
    assert 0 < len(kept) <= fw.RING_FRAMES and d._ring_used <= fw.RING_BYTES
    assert kept == list(range(300 - len(kept), 300))  # the newest, in order, none skipped
    out.clear()
    d._replay(9, kept[3])
    assert out[:-1] == [sent[s] for s in kept[3:]]
    ack = fw.decode_frame(out[-1][:-1])
    assert ack[1] == fw.T_ACK and ack[3][-1] == fw.ACK_OK


def test_a_frame_no_longer_kept_gets_the_whole_ring_then_not_ready() -> None:
    d, out = _device()
    for i in range(200):
        d._send(fw.T_FAULT, bytes((i & 0xFF,)) * 4)
    assert d._ring_count == fw.RING_FRAMES  # a dealt table's small frames: all 128 fit
    out.clear()
    d._replay(9, 5)  # long gone
    assert len(out) == fw.RING_FRAMES + 1
    assert fw.decode_frame(out[0][:-1])[2] == 200 - fw.RING_FRAMES
    assert fw.decode_frame(out[-1][:-1])[3][-1] == fw.ACK_NOT_READY
