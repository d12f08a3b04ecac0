"""Camera recognition on real cards: real deck artwork, real photos, the deck in play, and the house rules
of the vision package (what the product imports)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.conftest import REPO
from vision.yolo import LabelledCard, parse_class_name, score_photo

DATASET = Path(os.environ.get("POKER_CARDS_DATASET", REPO.parent / "shared" / "datasets" / "poker-cards-4"))
# issue 25's targets on the dev scenes: at least 90 % right, at most 0.3 % wrong; pinned here is what
# the recogniser reaches (tablectl bench vision --real, dev side), each with a margin
# (evidence gate and two-reader check off, thresholds 0.8 / 0.35 as the stated rule picks them on the
# train scenes)
RIGHT_AT_LEAST = 0.79  # measured 0.8124 (775 of 954 cards); the target, 0.90, is not reached
WRONG_AT_MOST = 0.018  # measured 0.0147 (14 of 954); the target, 0.003, is not reached
# the daemon's camera on a real table (Recognizer.two_reader(): two readers and the card's centre, a
# four-index card's corners told apart, one read named per card, as thresholds.json's two_readers_mode
# holds it, 0.5 / 0.25 / 0.5); before the four-index handling and the one-of-each rule (0.5 / 0.55 /
# 0.8) 0.8375 and 4 wrong
# 0.8878 and 4 wrong again with the pip-shape suit reader beside it (opt-in: vision.suit_shape), two of
# the 4 labelling errors of the photo set (test_two_dev_labels_name_a_card_the_photo_does_not_show)
# 0.8931 (852 of 954) with the cards inside outlines around several read from their corners (vision.overlap)
# 0.8899 and 3 wrong with two reads of one card placed where both are (the Kh read as 4c from a weak index
# is still named: the king's own read now lies on it, and a card with a right read scores right)
# 0.8952 (854 of 954) and 3 wrong with both (merged), 0.8973 and 1 wrong with the two labels corrected
# 0.8962 (855 of 954) and the same 3 wrong with a card placed by two of its corners (train 949 -> 950)
# 0.9004 (859 of 954) and 3 wrong with outlines rejected by aspect read where no card was found (detect)
# 0.9036 (862 of 954) and 2 wrong (the two label errors) with two unsure index suits needing the glyph
# reader (the 8s read 8c at a slant is unknown now), CONFIRMED_WHOLE 0.35 and the colour veto's bounds
# re-run by its rule on train: issue 25's dev targets met, pinned at the targets themselves
MODE_RIGHT_AT_LEAST = 0.90  # measured 0.9036 (862 of 954): 3 cards above the target
MODE_WRONG_AT_MOST = 0.003  # measured 0.0021 (2 of 954): at most 2, the target
MODE_FIXED_WRONG_AT_MOST = 0.001  # the two labels corrected: measured 0 of 954: none
# CI has the photos beside the clone: there a missing folder fails the tests, it does not skip them
needs_photos = pytest.mark.skipif(not (DATASET / "valid" / "images").is_dir() and not os.environ.get("CI"),
                                  reason="real photos not beside the repo")


def test_class_names_of_yolo_exports_parse() -> None:
    assert parse_class_name("10 of clubs") == "Tc"
    assert parse_class_name("jack  of clubs") == "Jc"
    assert parse_class_name("ace of spades") == "As"
    assert parse_class_name("queen of hearts") == "Qh"
    assert parse_class_name("Td") == "Td"
    assert parse_class_name("joker") is None


def test_scoring_right_wrong_unknown_and_index_anchor() -> None:
    cards = [LabelledCard("Ah", (0, 0, 100, 140)), LabelledCard("Kd", (60, 20, 100, 140)),
             LabelledCard("2c", (300, 300, 100, 140))]
    found = [
        ("Ah", (2, 0, 98, 140)),  # right
        ("Qd", (62, 22, 96, 136)),  # wrong for Kd
        (None, (300, 300, 100, 140)),  # unknown: no read
        ("9s", (900, 900, 50, 50)),  # belongs to no card
    ]
    verdicts, stray = score_photo(cards, found)
    assert verdicts == [("Ah", "Ah"), ("Kd", "Qd"), ("2c", None)] and stray == 1
    # a read at a corner index counts for a card whose box holds the index, even when its
    # estimated box overlaps a neighbour more
    verdicts, _ = score_photo(cards, [("2c", (250, 250, 100, 140), (310.0, 310.0))])
    assert verdicts[2] == ("2c", "2c")


def test_vision_imports_no_bridge_serial_or_synthetic_generator() -> None:
    code = ("import sys, vision, vision.recognizer, vision.fallback, vision.labels, vision.corners, vision.layout,"
            " vision.source;"
            "bad = [m for m in ('vision.synth', 'vision.decks', 'firmware_bridge', 'serial') if m in sys.modules];"
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr


def test_index_reader_on_held_back_real_decks() -> None:
    """Decks never trained on, rendered on random surfaces with overlaps: never a confident wrong card."""
    from vision.decks import HELD_BACK_DECKS, available, deck_scene
    from vision.recognizer import Recognizer

    decks = available(HELD_BACK_DECKS)
    if not decks:
        pytest.skip("gnome-cards-data not installed")
    rec = Recognizer.stock()
    rng = np.random.default_rng(7_100_000)
    faces = [f"{r}{s}" for r in "A23456789TJQK" for s in "cdhs"]
    right = wrong = n = 0
    for deck in decks:
        for face in rng.choice(faces, 20, replace=False):
            sc = deck_scene(deck, str(face), rng, overlap=0.0)
            if sc is None:
                continue
            n += 1
            reads = {d.card.face for d in rec.recognize(sc.image) if d.card is not None}
            right += face in reads
            wrong += bool(reads - {face})
    assert n >= 40
    assert right / n >= 0.6, (right, n)
    assert wrong / n <= 0.05, (wrong, n)


@pytest.fixture(scope="module")
def dev_bench() -> dict:
    from vision.bench import run_real_bench

    return run_real_bench(DATASET, sides=("dev",))


@needs_photos
@pytest.mark.slow
def test_real_photos_dev_scenes_read_as_measured(dev_bench: dict) -> None:
    """The dev side of the scene split (scenes the thresholds were never calibrated on): what the
    recogniser reaches, pinned with its margin (the daemon's camera at issue 25's targets)."""
    res = dev_bench
    assert res["split"] == "scene" and res["cards"] >= 900, res
    assert res["wrong_rate"] <= WRONG_AT_MOST, res
    assert res["right_rate"] >= RIGHT_AT_LEAST, res
    mode = res["two_readers_mode"]
    assert mode["two_readers"] and mode["centre_check"], mode
    dev = mode["per_split"]["dev"]
    assert dev["cards"] == res["cards"], dev
    assert dev["wrong_rate"] <= MODE_WRONG_AT_MOST, dev
    assert dev["right_rate"] >= MODE_RIGHT_AT_LEAST, dev
    # with the two labels that name a card their photo does not show corrected (vision.bench's
    # LABEL_CORRECTIONS): each turns a wrong read right, nothing else moves
    fixed = mode["label_corrected"]
    assert fixed["labels_corrected"] == 2, fixed
    fdev = fixed["per_split"]["dev"]
    assert fdev["cards"] == dev["cards"] and fdev["unknown"] == dev["unknown"], (fdev, dev)
    assert fdev["right"] == dev["right"] + 2 and fdev["wrong"] == dev["wrong"] - 2, (fdev, dev)
    assert fdev["wrong_rate"] <= MODE_FIXED_WRONG_AT_MOST, fdev


@needs_photos
@pytest.mark.parametrize("photo, label, card", [
    ("IMG_20220316_161439_jpg.rf.5ca058407769f36f16760be8b47e6816", "5c", "Jh"),
    ("IMG_20220316_161523_jpg.rf.05cbc80a45aa39a3372c5a238e2c6f19", "Td", "Th")])
def test_two_dev_labels_name_a_card_the_photo_does_not_show(photo: str, label: str, card: str) -> None:
    """Two of the two-reader camera's 4 wrong cards on the dev scenes are the labels': in two photos of
    all-hearts hands (9h to Kh) the box labelled the five of clubs holds the jack of hearts, the box
    labelled the ten of diamonds the ten of hearts (look at them).  The camera reads them so, and the
    card's centre agrees: the jack's a picture, not rows of pips; the ten's pips red, and by their shape
    (vision.suit_shape) hearts, not diamonds.  The bench counts them wrong, as labelled, and reports
    its figures with these two labels corrected beside (``label_corrected``, vision.bench's
    LABEL_CORRECTIONS)."""
    from vision.bench import REAL_UNSTRETCH
    from vision.detect import warp
    from vision.evidence import read_centre
    from vision.recognizer import Recognizer
    from vision.scenes import recorded_mirrors
    from vision.suit_shape import VETO_OWN, SuitShape
    from vision.yolo import _iou, find_names, load_photo

    path = next(DATASET.glob(f"*/images/{photo}.jpg"))
    ph = load_photo(path, [parse_class_name(n) for n in find_names(path.parent.parent)], REAL_UNSTRETCH,
                    mirrored=recorded_mirrors(DATASET).get(path.name, False))
    assert ph is not None
    box = next(c.box for c in ph.cards if c.face == label)
    assert {c.face for c in ph.cards} - {label} <= {"9h", "Th", "Jh", "Qh", "Kh"}, ph.cards
    reads = [d for d in Recognizer.two_reader().recognize(ph.image, keep_crops=True) if d.card is not None
             and (_iou(d.box, box) > 0.5 or (d.index is not None and box[0] <= d.index[0] <= box[0] + box[2]
                                             and box[1] <= d.index[1] <= box[1] + box[3]))]
    assert [d.card.face for d in reads if d.card is not None] == [card], reads
    c = read_centre(warp(ph.image, reads[0].quad))
    if card[0] == "J":
        assert c.large >= 1 and c.pips < 5, c  # a picture (a few pip-sized marks in it), not rows of pips
    else:
        odds = SuitShape.load().mate_odds("d", c.masks)
        assert c.red > 0.4 and odds is not None and odds >= VETO_OWN, (c, odds)


@needs_photos
@pytest.mark.slow
def test_shipped_thresholds_are_what_the_rule_picks_on_train_scenes() -> None:
    """vision/data/thresholds.json holds what calibrate_real's stated rule picks on the train side
    of the scene split (never the dev side)."""
    from vision.bench import calibrate_real
    from vision.recognizer import shipped_thresholds

    best = calibrate_real(DATASET)  # the recogniser in the shipped mode (gate off unless the file says on)
    shipped = shipped_thresholds()
    for key in ("threshold", "index_threshold", "lone_threshold", "agree", "corners_agree", "two_readers"):
        assert best[key] == shipped[key], (key, {k: v for k, v in best.items() if k != "sweep"}, shipped)


@needs_photos
@pytest.mark.slow
def test_the_daemon_cameras_thresholds_are_what_the_rule_picks_on_train_scenes() -> None:
    """``two_readers_mode`` of vision/data/thresholds.json (the daemon's camera: two readers and the
    card's centre) holds what calibrate_real's stated rule picks on the train side with the naming
    decision as it is now: a new rule of that decision re-runs the calibration, it does not inherit it."""
    from vision.bench import calibrate_real
    from vision.recognizer import Recognizer, shipped_thresholds

    mode = shipped_thresholds()["two_readers_mode"]
    best = calibrate_real(DATASET, Recognizer.stock(two_readers=True, centre_check=mode["centre_check"],
                                                    shape_check=mode["shape_check"]))
    for key in ("threshold", "index_threshold", "lone_threshold"):
        assert best[key] == mode[key], (key, {k: v for k, v in best.items() if k != "sweep"}, mode)
    assert best["wrong_rate"] == mode["wrong_rate"] and abs(best["right_rate"] - mode["right_rate"]) < 1e-4, mode


@needs_photos
@pytest.mark.slow
def test_deck_in_play_calibration_on_train_scenes_measured_on_dev_scenes() -> None:
    """Five labelled cards per rank from the train scenes' photos teach the recogniser the deck;
    measured on the dev scenes, it reads no more wrong (the deck-in-play calibration is itself
    measured on other scenes).  Measured on the dev photos of the valid/ and test/ folders only
    (a fifth of the dev side, both passes), to keep CI quick."""
    from vision.bench import deck_in_play

    res = deck_in_play(DATASET, per_rank=5, folders=("valid", "test"))
    assert res["before"]["cards"] >= 150, res
    assert res["labelled"]["crops"] >= 50
    before, after = res["before"], res["after"]
    assert after["wrong"] <= before["wrong"] + 1, res
    assert after["right"] >= before["right"] - 5, res


@needs_photos
def test_the_mirrored_copies_record_covers_the_set_and_is_what_the_reader_decides() -> None:
    """vision/data/mirrored.json (which flipped export copies the bench turns back) holds every
    copy the scene split reads that may be flipped, and the reader decides as recorded (two
    recorded copies, one each way, read again)."""
    from vision.bench import REAL_UNSTRETCH
    from vision.corners import read_indices
    from vision.recognizer import index_model
    from vision.scenes import recorded_mirrors, scene_split

    known = recorded_mirrors(DATASET)
    maybe = [p for s in scene_split(DATASET) for src in s.photos for _, p, flip in [src.best_file()] if flip]
    assert maybe and {p.name for p in maybe} <= set(known)
    model = index_model()
    for want in (True, False):
        path = next(p for p in maybe if known[p.name] is want)
        img = cv2.imread(str(path))
        img = cv2.resize(img, (round(img.shape[0] * REAL_UNSTRETCH), img.shape[0]), interpolation=cv2.INTER_CUBIC)
        s0, s1 = (sum(r.confidence for r in read_indices(x, model)) for x in (img, cv2.flip(img, 1)))
        assert (s1 > s0) is want, (path.name, s0, s1)
