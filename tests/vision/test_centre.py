"""The centre of a card on real photos (vision.evidence.read_centre) and the veto it gives the
two-reader camera: a named card whose centre contradicts it is unknown (issue 25, item 1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import REPO
from vision.evidence import CentreRead, centre_contradicts, centre_supports

DATASET = Path(os.environ.get("POKER_CARDS_DATASET", REPO.parent / "shared" / "datasets" / "poker-cards-4"))
needs_photos = pytest.mark.skipif(not (DATASET / "train" / "images").is_dir() and not os.environ.get("CI"),
                                  reason="real photos not beside the repo")
NAN = float("nan")


def _centre(pips: int, large: int = 0, largest: float = 0.03, red: float = NAN) -> CentreRead:
    return CentreRead(pips, large, largest, red, NAN if not pips else 0.9)


def test_the_centre_rules_out_the_confusions_both_readers_make() -> None:
    """The dev scenes' confusions that both readers made alike, each ruled out by what the true
    card's centre shows (its pips or its picture)."""
    seven, five, two, four, ten = (_centre(n, red=0.0) for n in (7, 5, 2, 4, 10))
    assert centre_contradicts("5s", seven) == "more pips than the rank"  # a seven read as a five
    assert centre_contradicts("Ah", _centre(2, red=0.7)) == "a row of pips on an ace"  # a two read as an ace
    assert centre_contradicts("2h", _centre(4, red=0.7)) == "more pips than the rank"  # a four read as a two
    assert centre_contradicts("Jh", five) == "rows of pips on a court card"  # a five read as a jack
    assert centre_contradicts("Kc", ten) == "rows of pips on a court card"  # a ten read as a king
    assert centre_contradicts("4c", _centre(0, 1, 0.25)) == "a picture on a number card"
    assert centre_contradicts("Qs", _centre(0)) == "no picture on a court card"
    # and the true cards stand
    for face, c in (("7s", seven), ("5s", five), ("2h", two), ("4h", four), ("Tc", ten)):
        assert centre_contradicts(face, c) is None, face
    assert centre_contradicts("Kc", _centre(4, 1, 0.3, red=0.0)) is None  # a king's picture holds 4 pip-sized marks
    assert centre_contradicts("As", _centre(0, 1, 0.11)) is None  # the ace of spades' ornate pip
    # covers hide pips, nothing adds them: fewer pips than the rank is no contradiction
    assert centre_contradicts("8s", _centre(5, red=0.0)) is None


def test_the_pips_colour_rules_out_the_other_colour_and_needs_pips() -> None:
    assert centre_contradicts("7h", _centre(7, red=-0.1)) == "pips of the other colour"
    assert centre_contradicts("7s", _centre(7, red=0.6)) == "pips of the other colour"
    assert centre_contradicts("7s", _centre(7, red=0.3)) is None  # within black pips' spread on the train scenes
    assert centre_contradicts("7h", _centre(0)) is None
    # a centre that may not be the card's own (placed from an index): only the colour counts
    assert centre_contradicts("5s", _centre(7, red=0.0), count=False) is None
    assert centre_contradicts("5s", _centre(7, red=0.7), count=False) == "pips of the other colour"


def test_an_exact_pip_count_names_the_rank_and_nothing_else_does() -> None:
    assert centre_supports("7c", _centre(7))
    assert not centre_supports("7c", _centre(6))
    assert not centre_supports("7c", _centre(7, 1, 0.2))  # a picture beside the pips: not a clean centre
    assert not centre_supports("As", _centre(1)) and not centre_supports("Kc", _centre(4, 1, 0.3))


@needs_photos
@pytest.mark.parametrize("photo", ["IMG_20220316_165709", "IMG_20220316_171634", "IMG_20220316_135021"])
def test_read_centre_counts_the_pips_of_real_cards_read_whole(photo: str) -> None:
    """Train-scene photos (never dev): every card read whole shows its rank's pips, a court card
    a picture with fewer than five pip-sized marks, the ace of spades one large blob."""
    from vision.bench import REAL_UNSTRETCH
    from vision.evidence import read_centre
    from vision.recognizer import Recognizer
    from vision.yolo import _iou, find_names, load_photo, parse_class_name

    path = sorted(DATASET.glob(f"*/images/{photo}_jpg.rf.*"))[0]  # (the labels go with the copy, flipped or not)
    names = [parse_class_name(n) for n in find_names(path.parent.parent)]
    ph = load_photo(path, names, REAL_UNSTRETCH, mirrored=False)
    assert ph is not None
    rec = Recognizer.stock()
    whole = [d for d in rec.recognize(ph.image, keep_crops=True) if d.index is None and d.crop is not None]
    seen = 0
    for d in whole:
        iou, truth = max((_iou(d.box, card.box), card.face) for card in ph.cards)
        assert iou > 0.5, (d.box, ph.cards)
        c = read_centre(d.crop)
        rank = truth[0]
        if rank in "23456789T":
            assert c.pips == (10 if rank == "T" else int(rank)) and c.large == 0, (truth, c)
            assert (c.red > 0.4) == (truth[1] in "dh"), (truth, c)
        elif rank == "A":
            assert c.pips == 0 and c.large == 1, (truth, c)
        else:
            assert c.large >= 1 and c.pips < 5, (truth, c)
        assert centre_contradicts(truth, c) is None, (truth, c)
        seen += 1
    assert seen >= 4
