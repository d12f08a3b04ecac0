"""Scenarios on the model, in the dialect both interpreters run (see ``mpy.py``).

``run("script", ...)`` plays a script of card movements and host bytes on a board and returns
a plain dict (what the host received, with times), so a test can run it under CPython and
under MicroPython and compare the two byte for byte.
"""

import binascii

from firmware_bridge.sim.board import Board
from firmware_bridge.sim.rc522 import Tag


def _hex(data):
    return binascii.hexlify(data).decode()


def build(readers=28, fw_dir="/fw", spi_baud=4000000, dead=None, versions=None, moves=(), host=(), seed=1,
          cost=None):
    """A board with ``moves`` ([t_us, "place"|"remove", antenna, uid hex, powerup_us]) and ``host``
    ([t_us, hex bytes]) scheduled."""
    dead_map = {}
    for a, v in (dead or {}).items():
        dead_map[int(a)] = v
    ver_map = {}
    for a, v in (versions or {}).items():
        ver_map[int(a)] = v
    board = Board(readers=readers, fw_dir=fw_dir, spi_baud=spi_baud, dead=dead_map, versions=ver_map, seed=seed,
                  cost=cost)
    for move in moves:
        t, what, antenna, uid = move[0], move[1], move[2], binascii.unhexlify(move[3])
        powerup = move[4] if len(move) > 4 else 1500
        if what == "place":
            tag = Tag(uid, powerup_us=powerup)
            if t <= 0:
                board.table.place(antenna, tag)
            else:
                board.clock.at(t, _placer(board, antenna, tag))
        else:
            board.clock.at(t, _remover(board, antenna, uid))
    for t, data in host:
        board.host_send(binascii.unhexlify(data), at_us=t)
    return board


def _placer(board, antenna, tag):
    return lambda: board.table.place(antenna, tag)


def _remover(board, antenna, uid):
    return lambda: board.table.remove(antenna, uid)


def result(board):
    return {
        "out": _hex(board.output()),
        "chunks": [[int(t), len(c)] for t, c in board.received],
        "boots": [[int(t), c] for t, c in board.boots],
        "crashes": [[int(t), c] for t, c in board.crashes],
        "dropped": board.dropped_bytes,
        "reserved": sum(r.reserved_violations for r in board.readers),
        "transceives": sum(r.transceives for r in board.readers),
        "idle_us": int(board.idle_us),
    }


def run(name, **params):
    if name != "script":
        raise ValueError("unknown scenario " + name)
    until = params.pop("until_us")
    board = build(**params)
    board.run(until)
    return result(board)
