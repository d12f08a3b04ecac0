"""The deck artwork the corner-index reader is trained on (vision.decks): every training deck is
installed by scripts/bootstrap, draws cards whose index the ground truth finds, and its scenes are
deterministic (the shipped model is rebuilt from them)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from vision import decks


def _installed(names: tuple[str, ...]) -> tuple[str, ...]:
    found = decks.available(names)
    if len(found) < len(names):
        missing = sorted(set(names) - set(found))
        if os.environ.get("CI"):  # CI runs scripts/bootstrap: a missing deck is a failure there
            pytest.fail(f"deck artwork missing: {missing}")
        pytest.skip(f"deck artwork missing (run scripts/bootstrap): {missing}")
    return found


def test_training_and_held_back_decks_are_apart() -> None:
    assert not set(decks.TRAIN_DECKS) & set(decks.HELD_BACK_DECKS)
    # more than one source of artwork: Debian's GNOME and KDE decks and an npm deck
    assert set(decks.KDE_DECKS) <= set(decks.TRAIN_DECKS) and set(decks.NPM_DECKS) <= set(decks.TRAIN_DECKS)


@pytest.mark.parametrize("deck", sorted(set(decks.KDE_DECKS) | set(decks.NPM_DECKS)))
def test_card_by_card_decks_draw_cards_with_an_index(deck: str) -> None:
    """A deck drawn card by card (KDE element, npm file) renders cards with the index where the
    ground truth looks for it: rank above suit in the top-left corner."""
    _installed((deck,))
    for face in ("9h", "Tc", "As"):
        img = decks._render_card(deck, face)
        img = decks._trim(img) if deck in decks.KDE_DECKS else img
        h, w = img.shape[:2]
        assert w >= decks.CARD_WIDTH // 2 and 1.2 < h / w < 1.6, (deck, face, img.shape)
        truth = decks.index_truth(img)
        assert truth is not None, (deck, face)
        assert truth.rank[1] < truth.suit[1] and truth.rank[0] < 0.3 * w, (deck, face, truth)


def test_deck_scenes_are_deterministic() -> None:
    """The same seed gives the same scene, byte for byte (hands, blur and low resolution included)."""
    deck = _installed(("npm_younestouati",))[0]
    for seed in range(6):
        a = decks.deck_scene(deck, "9h", np.random.default_rng(seed))
        b = decks.deck_scene(deck, "9h", np.random.default_rng(seed))
        assert a is not None and b is not None
        assert np.array_equal(a.image, b.image) and np.array_equal(a.M, b.M)


def test_a_hand_covers_part_of_the_table_in_skin_colour() -> None:
    rng = np.random.default_rng(3)
    scene = np.full((200, 200, 3), (40, 120, 40), np.uint8)  # green felt
    decks.hand(scene, (100.0, 100.0), 80.0, rng)
    b, g, r = (scene[..., i].astype(int) for i in range(3))
    skin = (r > g) & (r > b) & (r > 100)
    assert 0.05 < skin.mean() < 0.6
    assert skin[100, 100]  # the palm's centre
