"""Cards speak: pot splitting, hi-lo, quartered pots and odd chips under each profile."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.cards import Card, parse_cards, standard_deck
from controller.rules.showdown import Award, ShowdownError, award_pot

OMAHA8 = ("omaha_high", "omaha_low_a5_8")
STUD8 = ("high", "low_a5_8")


def hands_of(**seats: str) -> dict[int, list[Card]]:
    """``hands_of(s1="Ah Kh", s3="...")`` -> {1: [...], 3: [...]}."""
    return {int(key[1:]): parse_cards(text) for key, text in seats.items()}


def board_game(showdown, hands, board: str, pot: int, *, profile="tda", button=1, table_size=9) -> Award:
    return award_pot(
        showdown,
        hands,
        parse_cards(board),
        pot,
        profile=profile,
        button=button,
        table_size=table_size,
        stud=False,
    )


def stud_game(showdown, hands, pot: int, *, profile="tda") -> Award:
    return award_pot(showdown, hands, [], pot, profile=profile, button=None, table_size=8, stud=True)


# ---------------------------------------------------------------- one winner, plain ties


def test_best_hand_takes_the_pot() -> None:
    award = board_game(("high",), hands_of(s2="Ah Kh", s5="Qc Qd"), "Qh Jh Th 2c 3d", 100)
    assert award.shares == {2: 100}
    assert award.describe() == "Seat 2 wins the pot with a Royal Flush"
    assert award.parts[0].winners == (2,) and award.parts[0].odd_chips == ()


@pytest.mark.parametrize("profile", ["tda", "robert"])
@pytest.mark.parametrize(
    ("button", "tied", "first"),
    [
        (1, (2, 7), 2),  # first seat left of the button
        (5, (2, 7), 7),  # clockwise from the button wraps around
        (8, (9, 2), 9),
        (9, (1, 5), 1),
        (2, (2, 6), 6),  # the button itself is the last seat clockwise from the button
    ],
)
def test_board_game_odd_chip_left_of_button(
    profile: str, button: int, tied: tuple[int, int], first: int
) -> None:
    # TDA 18-A / RRoP s3 Ties 5(a): two queen-high straights tie, seat 4 loses.
    hands = {tied[0]: parse_cards("9c 8d"), tied[1]: parse_cards("9h 8s"), 4: parse_cards("2c 2d")}
    award = board_game(("high",), hands, "Ts Jh Qd 4c 4s", 101, profile=profile, button=button)
    assert award.shares == {first: 51, (set(tied) - {first}).pop(): 50}
    assert award.parts[0].odd_chips == (first,)
    assert any(("TDA 18-A" if profile == "tda" else "RRoP s3 Ties 5(a)") in note for note in award.notes)


def test_three_way_tie_gives_at_most_one_odd_chip_each() -> None:
    # RRoP s3 Ties 4: two odd chips among three players go to the first two left of the button.
    hands = hands_of(s1="2c 3d", s4="2h 4d", s8="2s 4c")
    award = board_game(("high",), hands, "Ts Jh Qd Kc Ac", 101, button=4)
    assert award.shares == {8: 34, 1: 34, 4: 33}
    assert award.parts[0].odd_chips == (8, 1)
    assert award.describe() == "Seats 1, 4, 8 split the pot with a Straight, Ace high"


def test_even_split_needs_no_button() -> None:
    award = board_game(("high",), hands_of(s1="2c 3d", s4="2h 4d"), "Ts Jh Qd Kc Ac", 100, button=None)
    assert award.shares == {1: 50, 4: 50}


def test_odd_chip_in_a_button_game_needs_the_button() -> None:
    with pytest.raises(ShowdownError, match="button"):
        board_game(("high",), hands_of(s1="2c 3d", s4="2h 4d"), "Ts Jh Qd Kc Ac", 101, button=None)


# ---------------------------------------------------------------- high-low split


def test_omaha8_split_high_and_low() -> None:
    hands = hands_of(s3="Ah Kh Qc Jd", s5="Ac 2c 9s 9d")
    award = board_game(OMAHA8, hands, "7h 5h 3h Ts 8d", 101)
    # TDA 18-C: the odd chip of the total pot goes to the high side.
    assert award.shares == {3: 51, 5: 50}
    assert award.describe() == "Seat 3 wins high with a Flush, Ace high; seat 5 wins low with 7-5-3-2-A low"
    assert [p.part for p in award.parts] == ["high", "low"]
    assert any("TDA 18-C" in note for note in award.notes)


def test_no_qualifying_low_high_scoops() -> None:
    hands = hands_of(s3="Ah Kh Qc Jd", s5="Ac 2c 9s 9d")
    award = board_game(OMAHA8, hands, "7h 9h 3h Ts Kd", 101)
    assert award.shares == {3: 101}
    assert [p.part for p in award.parts] == ["high"]
    assert any("Omaha High-Low 2" in note for note in award.notes)


def test_one_player_scoops_high_and_low() -> None:
    hands = hands_of(s3="Ah 2h Qc Jd", s5="Kc Ks 9s 9d")
    award = board_game(OMAHA8, hands, "4h 5h 3h Ts Kd", 101)
    assert award.shares == {3: 101}
    assert award.describe() == (
        "Seat 3 wins high with a Straight Flush, Five high; seat 3 wins low with 5-4-3-2-A low"
    )


def test_quartered_pot() -> None:
    # Seat 1 has the nut flush and a wheel; seat 2 has the same wheel: seat 2 gets a quarter.
    hands = hands_of(s1="Ah 2h Kc Kd", s2="Ac 2d Qs Qd", s6="Js Jc 9d 9c")
    award = board_game(OMAHA8, hands, "3h 4h 5c 9h Kh", 100, button=6)
    assert award.shares == {1: 75, 2: 25}
    high, low = award.parts
    assert high.winners == (1,) and low.winners == (1, 2) and low.shares == {1: 25, 2: 25}


def test_quartered_pot_with_odd_chips() -> None:
    hands = hands_of(s1="Ah 2h Kc Kd", s2="Ac 2d Qs Qd")
    # 103: high 52 (TDA 18-C), low 51 split 26/25 with the odd chip left of the button.
    award = board_game(OMAHA8, hands, "3h 4h 5c 9h Kh", 103, button=1)
    assert award.shares == {1: 52 + 25, 2: 26}
    award = board_game(OMAHA8, hands, "3h 4h 5c 9h Kh", 103, button=2)
    assert award.shares == {1: 52 + 26, 2: 25}


def test_split_high_and_scooped_low() -> None:
    # Both make aces and kings with an eight; only seat 1 has a low: 3/4 to seat 1.
    hands = hands_of(s1="Ah Kh 2c 4d", s2="As Ks Jc Jd")
    award = board_game(OMAHA8, hands, "Ad Kc 7h 8s 3c", 100, button=9)
    assert award.shares == {1: 75, 2: 25}
    assert award.describe() == (
        "Seats 1, 2 split high with Two Pair, Aces and Kings; seat 1 wins low with 7-4-3-2-A low"
    )


@pytest.mark.parametrize(("button", "odd_to"), [(9, "A"), (1, "B")])
def test_tda_18_d_identical_wheels_split_evenly(button: int, odd_to: str) -> None:
    # TDA 18 Example 1: A and B both have 2-3-4-5-6 for high and low; 66 chips: 33 each,
    # not 33/33 by halves with both odd chips to one player.
    hands = {1: parse_cards("2s 6s Kd Kc"), 2: parse_cards("2c 6c Qd Qc")}
    award = board_game(OMAHA8, hands, "3h 4d 5s Jh Td", 66, button=button)
    assert award.shares == {1: 33, 2: 33} and award.scoop_split
    award = board_game(OMAHA8, hands, "3h 4d 5s Jh Td", 67, button=button)
    expected = {1: 34, 2: 33} if odd_to == "A" else {1: 33, 2: 34}
    assert award.shares == expected
    assert any("TDA 18-D" in note for note in award.notes)


# ---------------------------------------------------------------- stud odd chips


def test_tda_18_example_2_stud8_identical_hands() -> None:
    # A has 2-3-4-5-6 with the six of spades, B with the six of clubs.
    hands = hands_of(s1="2s 3h 4d 5s 6s Kd Qc", s2="2c 3c 4s 5c 6c Kh Jd")
    assert stud_game(STUD8, hands, 66).shares == {1: 33, 2: 33}
    assert stud_game(STUD8, hands, 67).shares == {1: 34, 2: 33}


# Both make a nine-high straight flush; seat 1's 9h outranks seat 2's 9d in the best five,
# but seat 2 holds the ace of spades among all seven cards.
SF_TIE = {"s1": "9h 8h 7h 6h 5h Kc 2c", "s2": "9d 8d 7d 6d 5d As 2d"}


def test_stud_tda_high_card_by_suit_in_best_five() -> None:
    # TDA 18-B.
    award = stud_game(("high",), hands_of(**SF_TIE), 101, profile="tda")
    assert award.shares == {1: 51, 2: 50}
    assert any("TDA 18-B" in note for note in award.notes)


def test_stud_robert_high_card_by_suit_all_cards() -> None:
    # RRoP s3 Ties 5(b): "all cards are used, not just the five cards".
    award = stud_game(("high",), hands_of(**SF_TIE), 101, profile="robert")
    assert award.shares == {1: 50, 2: 51}
    assert any("RRoP s3 Ties 5(b)" in note for note in award.notes)


# Both have 7-5-4-2-A.  Seat 1's seven is the 7c, seat 2's the 7d; seat 1 has the Ac.
RAZZ_TIE = {"s1": "7c 5d 4h 2s Ac Kd Qh", "s2": "7d 5c 4s 2h Ad Kc Qs"}


def test_razz_tda_high_card_of_the_low_five() -> None:
    # TDA 18-B: the high card by suit of the best five-card (low) hand, aces low: 7d > 7c.
    award = stud_game(("low_a5",), hands_of(**RAZZ_TIE), 101, profile="tda")
    assert award.shares == {1: 50, 2: 51}


def test_razz_robert_lowest_card_by_suit() -> None:
    # RRoP s3 Ties 5(b): "to the lowest card by suit in all low games": the Ac.
    award = stud_game(("low_a5",), hands_of(**RAZZ_TIE), 101, profile="robert")
    assert award.shares == {1: 51, 2: 50}


def test_stud8_robert_tied_lows_odd_chip_to_low_card_by_suit() -> None:
    # RRoP s10 Seven-Card Stud High-Low 9-10: seat 3 takes high (and the pot's odd chip);
    # seats 1 and 2 tie for low and the low half's odd chip goes to the low card by suit.
    hands = hands_of(s1="7c 5d 4h 2s Ac Kd Qh", s2="7d 5c 4s 2h Ad Kc Qs", s3="Js Jh Jd Jc 9s 9h 3s")
    award = stud_game(STUD8, hands, 103, profile="robert")
    # high 52 to seat 3; low 51 split 26/25, the Ac (seat 1) is the lowest card by suit.
    assert award.shares == {3: 52, 1: 26, 2: 25}
    award = stud_game(STUD8, hands, 103, profile="tda")
    # TDA 18-B: the high card by suit in the best five (the sevens): 7d, seat 2.
    assert award.shares == {3: 52, 1: 25, 2: 26}


def test_stud8_robert_identical_hands_highest_card_gets_odd_chip() -> None:
    # RRoP s10 Seven-Card Stud High-Low 9: split as evenly as possible, the highest card by
    # suit among all cards receives the odd chip: seat 2's Kh beats seat 1's Kd.
    hands = hands_of(s1="2s 3h 4d 5s 6s Kd Qc", s2="2c 3c 4s 5c 6c Kh Jd")
    award = stud_game(STUD8, hands, 67, profile="robert")
    assert award.shares == {1: 33, 2: 34} and award.scoop_split


# ---------------------------------------------------------------- draw games


def test_ace_to_five_lowball_with_the_joker() -> None:
    hands = hands_of(s2="joker 2c 3d 4h 7s", s6="Ac 2d 3h 4s 8c")
    award = board_game(("low_a5",), hands, "", 60, button=6, table_size=6)
    assert award.shares == {2: 60}
    assert award.describe() == "Seat 2 wins the pot with 7-4-3-2-A low"


def test_deuce_to_seven_wheel_is_ace_high() -> None:
    hands = hands_of(s1="Ac 5d 4h 3s 2c", s2="Kc 8d 6h 4s 2d")
    assert board_game(("low_27",), hands, "", 60).shares == {2: 60}


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"profile": "wsop"}, "profile"),
        ({"showdown": ("badugi",)}, "badugi"),
        ({"showdown": ("high", "low_a5_8", "low_27")}, "one evaluator"),
        ({"hands": {}}, "no hands"),
        ({"pot": -1}, "negative"),
    ],
)
def test_invalid_showdowns(kwargs: dict, message: str) -> None:
    args = {
        "showdown": ("high",),
        "hands": hands_of(s1="Ac Kd"),
        "profile": "tda",
        "pot": 10,
    } | kwargs
    with pytest.raises(ShowdownError, match=message):
        award_pot(
            args["showdown"],
            args["hands"],
            parse_cards("2c 3d 4h 9s Ts"),
            args["pot"],
            profile=args["profile"],
            button=1,
            table_size=9,
            stud=False,
        )


def test_single_low_game_with_no_qualifier_is_an_error() -> None:
    with pytest.raises(ShowdownError, match="qualifies"):
        stud_game(("low_a5_8",), hands_of(s1="Kc Kd Qs Qh Jc Jd 9s"), 10)


# ---------------------------------------------------------------- properties


DECK = standard_deck()


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 8),
    pot=st.integers(0, 10_000),
    button=st.integers(1, 9),
    profile=st.sampled_from(["tda", "robert"]),
    game=st.sampled_from(
        [
            (("high",), 2, 5, False),
            (OMAHA8, 4, 5, False),
            (("omaha_high",), 4, 5, False),
            (STUD8, 7, 0, True),
            (("low_a5",), 7, 0, True),
            (("low_27",), 5, 0, False),
        ]
    ),
)
def test_chips_are_conserved_and_go_to_winners(seed, players, pot, button, profile, game) -> None:
    showdown, n_hole, n_board, stud = game
    players = min(players, 7) if stud else players
    rng = random.Random(seed)
    cards = rng.sample(DECK, players * n_hole + n_board)
    seats = rng.sample(range(1, 10), players)
    hands = {seat: cards[i * n_hole : (i + 1) * n_hole] for i, seat in enumerate(seats)}
    board = cards[players * n_hole :]
    award = award_pot(showdown, hands, board, pot, profile=profile, button=button, table_size=9, stud=stud)
    assert sum(award.shares.values()) == pot == award.total
    assert all(chips >= 0 for chips in award.shares.values())
    winners = {seat for part in award.parts for seat in part.winners}
    assert set(award.shares) <= winners <= set(hands)
    if not award.scoop_split:
        for part in award.parts:
            assert sum(part.shares.values()) == part.amount
            assert max(part.shares.values()) - min(part.shares.values()) <= 1
    if len(award.parts) == 2:
        assert award.parts[0].amount - award.parts[1].amount == pot % 2  # odd chip to high
