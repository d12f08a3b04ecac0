"""Two rules of the two-reader camera's naming decision (quick: no photo is read): two corners read
alike by the index reader need one of them sure of the suit; a card read whole that the index reader
confirms is named at a lower confidence."""

from __future__ import annotations

from dataclasses import replace
from unittest import mock

import numpy as np

from vision import recognizer as R
from vision.corners import IndexRead, merge_reads


def _read(face: str, conf: float, origin: tuple[float, float], down: tuple[float, float], suit_p: float) -> IndexRead:
    o, d = np.array(origin, np.float32), np.array(down, np.float32)
    rt = np.array([d[1], -d[0]], np.float32)
    quad = np.array([o + x * rt + y * d for x, y in ((-0.5, -1), (6, -1), (6, 8.5), (-0.5, 8.5))], np.float32)
    return IndexRead(face, conf, quad, o, d, 0.9, suit_p=suit_p)


def test_two_corners_merged_keep_the_surer_corners_suit_probability() -> None:
    top = _read("8c", 0.45, (100, 100), (0, 10), 0.29)  # a card's top-left index, 10 px to the suit
    bottom = _read("8c", 0.5, (155, 175), (0, -10), 0.54)  # its bottom-right index, upside down
    (one,) = merge_reads([top, bottom])
    assert one.corners == 2 and one.suit_p == 0.54
    assert IndexRead("8c", 0.5, top.quad, top.origin, top.down, 0.9).suit_p == 1.0  # unknown: no doubt cast


def test_two_corners_unsure_of_the_suit_need_the_other_reader() -> None:
    """Both corners of a card seen at a slant read clubs, neither surely (a spade squeezed across looks
    like a club to the index reader, and to both its corners alike): the card is not named on the
    index reader's word alone; the glyph reader (which reads nothing on this blank frame) must agree."""
    frame = np.full((400, 600, 3), 235, np.uint8)  # no card outline, no glyphs: the glyph reader reads nothing
    rec = R.Recognizer.stock(threshold=0.5, index_threshold=0.25, lone_threshold=0.5, two_readers=True)
    rec.suit_sure = 0.6
    read = replace(_read("8c", 0.72, (100, 100), (0, 10), 0.54), corners=2)
    for suit_p, named in ((0.54, False), (0.6, True), (0.99, True)):
        with mock.patch.object(R, "read_indices", return_value=[replace(read, suit_p=suit_p)]):
            dets = rec.recognize(frame)
        assert [d.card.face if d.card else None for d in dets] == (["8c"] if named else [None]), suit_p
    # a card read at one corner is the lone threshold's, as before: its suit's probability is not asked
    with mock.patch.object(R, "read_indices", return_value=[replace(read, corners=1, suit_p=0.3)]):
        assert [d.card.face for d in rec.recognize(frame) if d.card] == ["8c"]
    # the default recogniser does not ask
    assert R.Recognizer.stock().suit_sure == 0.0


def test_a_card_read_whole_below_the_threshold_is_named_when_the_index_reader_confirms_it() -> None:
    """The two-reader camera names a card read whole at ``CONFIRMED_WHOLE`` when the index reader reads
    one of its corners as the same card (two readers), at its whole threshold otherwise."""
    from controller.rules.cards import Card

    rec = R.Recognizer.two_reader()
    assert rec.confirmed_threshold == min(rec.threshold, R.CONFIRMED_WHOLE) < rec.threshold
    assert R.Recognizer.stock().confirmed_threshold == R.Recognizer.stock().threshold  # the default: unchanged
    card = Card.parse("9d", "A")
    blank = np.full((R.WARP_H, R.WARP_W, 3), 235, np.uint8)  # a centre that neither backs nor rules out a nine
    for readers, conf, named in ((2, 0.4, True), (2, 0.3, False), (1, 0.4, False)):
        ev = R.Evidence(0, False, None, readers, pooled=True)
        with mock.patch.object(R.Recognizer, "_second_reads", return_value=(ev, None)):
            rd = rec._whole_with_centre(blank, card, conf)
        assert (rd.card == card) is named and rd.best == card, (readers, conf)
