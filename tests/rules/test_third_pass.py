"""Issue 22, the rules a file cannot show alone: each test quotes the rule it checks.

The cases a scenario can express are in tests/scenarios (named in each docstring here)."""

from __future__ import annotations

import pytest

from controller.rules.cards import Card
from controller.rules.engine import HandEngine
from controller.rules.events import Act, Burn, Deal, HandSetup
from controller.rules.games import GameError, draw_winner, get_game
from controller.rules.table import Table, TableError


def _c(text: str) -> Card:
    return Card.parse(text)


def _stud(game: str, seats: dict[int, list[str]], bets: dict[int, list[tuple[int, str]]]) -> HandEngine:
    """A seven-card stud-family hand dealt street by street: ``seats`` maps a seat to its seven cards
    (down, down, up, up, up, up, down); ``bets`` maps a street (0-4) to its actions, and a street
    without actions is checked through by the live seats in turn."""
    engine = HandEngine(HandSetup(game=game, rules="robert", seats=tuple(seats), table_size=8))
    burns = iter(["2c", "2d", "2h", "2s"] if game == "razz" else ["Ac", "Ad", "Ah", "As"])
    order = sorted(seats)
    for street, count in enumerate((3, 1, 1, 1, 1)):
        if street:
            engine.apply(Burn(_c(next(burns))))
        first = (0, 1, 2, 3, 4, 5, 6)[3 + street - 1] if street else 0
        for k in range(count):
            for seat in order:
                if seat in engine.active:
                    engine.apply(Deal(seat, _c(seats[seat][first + k])))
        for seat, action in bets.get(street, []):
            engine.apply(Act(seat, action))
        if street not in bets:
            while engine.to_act is not None:
                engine.apply(Act(engine.to_act, "check"))
    return engine


STUD = {
    1: ["Th", "6c", "Kc", "8s", "Qd", "3s", "4d"],
    2: ["Ts", "5h", "3d", "4c", "5c", "6d", "7h"],
    3: ["Ks", "Jc", "9h", "9c", "Td", "Js", "8d"],
}
THIRD = [(2, "bring_in"), (3, "call"), (1, "call")]


def test_stud_no_bet_on_the_last_round_the_high_hand_showing_tables_first() -> None:
    """TDA 15-A: "If there was no bet on the final street, the player who would act first if it were a
    betting round must table first (i.e. ... high hand showing in stud, low hand in razz, etc.)";
    RRoP s3 Showdown 7."""
    engine = _stud("stud", STUD, {0: THIRD})
    assert engine.phase.value == "done" and engine.showdown_reached
    assert engine.to_show == 3  # 9h 9c Td Js showing: the high hand
    assert engine.snapshot()["to_show"] == 3  # the display reads the same field


def test_stud_the_last_aggressor_of_the_final_round_tables_first() -> None:
    """TDA 15-A: "The last aggressive player on the final betting round (final street) must table
    first." RRoP s3 Showdown 7: "the last player to take aggressive action by a bet or raise is the
    first to show the hand"."""
    engine = _stud("stud", STUD, {0: THIRD, 4: [(3, "check"), (1, "bet"), (2, "raise"), (3, "call"),
                                               (1, "call")]})
    assert engine.to_show == 2


def test_razz_no_bet_on_the_last_round_the_low_hand_showing_tables_first() -> None:
    """TDA 15-A: "... low hand in razz"."""
    razz = {
        1: ["Th", "6c", "Kc", "8s", "Qd", "3s", "4d"],
        2: ["Ts", "5h", "3d", "4c", "5c", "6d", "7h"],
        3: ["Ks", "Jc", "Qh", "9c", "Td", "Js", "8d"],
    }
    engine = _stud("razz", razz, {0: [(1, "bring_in"), (2, "call"), (3, "call")]})  # Kc brings it in
    assert engine.showdown_reached
    assert engine.to_show == 2  # 3d 4c 5c 6d showing: the low hand


def test_no_one_tables_while_betting_is_open_or_after_a_fold_to_one() -> None:
    """TDA 15-A governs a showdown; with the betting open, or one hand left, nobody is to show."""
    engine = _stud("stud", STUD, {0: THIRD, 4: [(3, "bet")]})
    assert engine.to_act is not None and engine.to_show is None
    engine.apply(Act(1, "fold"))
    engine.apply(Act(2, "fold"))
    assert engine.winner == 3 and engine.to_show is None


@pytest.mark.parametrize(("game", "cards", "winner"), [
    # RRoP s2 Seating 6 and s3 Ties 1: the highest card by suit in high games (spades, hearts,
    # diamonds, clubs): Ks beats Kd.
    ("holdem", {1: "Kd", 3: "Ks", 5: "9h", 7: "2c"}, 3),
    ("stud8", {1: "Ah", 2: "As", 3: "Kc"}, 2),  # high-low games draw high
    # "... to the lowest card by suit for all low games": the ace is low in ace-to-five and razz,
    # the lower suit wins a tie of ranks.
    ("razz", {1: "Ah", 2: "Ac", 3: "2c"}, 2),
    ("lowball_a5", {1: "2d", 2: "Ks", 3: "As"}, 3),
    # deuce-to-seven ranks the ace high: the deuce is the lowest card.
    ("lowball_27", {1: "As", 2: "2h", 3: "2c", 4: "3c"}, 3),
])
def test_the_draw_for_the_button_ranks_cards_as_the_game_does(game: str, cards: dict, winner: int) -> None:
    assert draw_winner(get_game(game), {s: _c(c) for s, c in cards.items()}) == winner


def test_a_draw_for_the_button_places_it_and_is_kept_for_the_journal() -> None:
    """RRoP s2 Seating 6: "When a button game starts, active players will draw a card for the button
    position."  The table keeps the draw's cards and winner so the console can journal them."""
    table = Table(size=9, game="holdem", rules="robert")
    for s in (1, 3, 5, 7):
        table.seat(s, f"p{s}")
    assert table.draw_for_button({1: _c("Kd"), 3: _c("Ks"), 5: _c("9h"), 7: _c("2c")}) == 3
    assert table.last_draw == {"cards": {1: "Kd", 3: "Ks", 5: "9h", 7: "2c"}, "winner": 3}
    setup = table.start_hand().setup
    assert (setup.button, setup.small_blind, setup.big_blind) == (3, 5, 7)


@pytest.mark.parametrize("cards", [
    {1: "Kd", 2: "Ks"},  # seat 2 is empty
    {1: "Kd", 3: "Kd"},  # the same card twice
    {1: "joker", 3: "Ks"},
    {},
])
def test_a_bad_draw_is_a_clear_error_and_changes_nothing(cards: dict) -> None:
    table = Table(size=9, game="holdem", rules="robert")
    for s in (1, 3):
        table.seat(s, f"p{s}")
    table.set_button(1)
    with pytest.raises((TableError, GameError)):
        table.draw_for_button({s: _c(c) for s, c in cards.items()})
    assert table.positions is not None and table.positions.button == 1 and table.last_draw is None


def _five_each_all_check(game: str) -> HandEngine:
    """A three-handed draw game, five cards to each of seats 4, 6 and 2 and the first round checked."""
    engine = HandEngine(HandSetup(game=game, rules="robert", seats=(2, 4, 6), button=2,
                                  small_blind=None, big_blind=None, blinds_given=True))
    cards = iter("2c 3d 4h 5s 6c 7d 8h 9s Tc Jd Qh Ks Ac 2d 3h".split())
    for _ in range(5):
        for seat in (4, 6, 2):
            engine.apply(Deal(seat, _c(next(cards))))
    for seat in (4, 6, 2):
        engine.apply(Act(seat, "check"))
    return engine


def test_jacks_or_better_nobody_opens_the_deal_ends() -> None:
    """RRoP s12 Jacks-or-Better 1: "If no player opens the pot, the button moves forward and each player
    must ante again": no draw, no showdown, no winner (tests/scenarios/
    jacks_or_better_no_opener_button_moves.yaml has the session)."""
    engine = _five_each_all_check("jacks_or_better")
    assert engine.phase.value == "done" and engine.passed_out
    assert engine.winner is None and not engine.showdown_reached and engine.to_show is None


def test_draw_high_nobody_bets_goes_on_to_the_draw() -> None:
    """RRoP s12 Draw High: "Some draw high games allow a player to open on anything": only
    jacks-or-better needs openers; in draw high a checked first round goes on to the draw."""
    engine = _five_each_all_check("draw_high")
    assert engine.phase.value == "draw" and not engine.passed_out


def test_a_tournament_newcomer_in_the_gap_waits_under_tda_only() -> None:
    """TDA 7: "dealt in except between SB and button"; RRoP s15 Tournaments 15: "New players are dealt
    in immediately ... including the small blind or button position" (the sessions
    holdem_tda_tournament_new_player_gap and holdem_robert_tournament_new_player_dealt_in)."""
    dealt = {}
    for rules in ("tda", "robert"):
        table = Table(size=9, game="holdem", rules=rules, event="tournament")
        for s in (1, 3, 5, 7):
            table.seat(s, f"p{s}")
        table.set_button(1)
        table.start_hand()
        table.seat(4, "late")
        dealt[rules] = table.start_hand().setup.seats
    assert 4 not in dealt["tda"] and 4 in dealt["robert"]


def test_heads_up_the_moving_button_goes_forward_but_tda_adjusts() -> None:
    """RRoP s4 Rules for Using Blinds 1(a): "The button always moves forward to the next player and the
    blinds adjust accordingly"; 3: "the small blind is on the button".  TDA 32: "the button may need to
    be adjusted to ensure no player has the big blind twice in a row" (highland, TDA-based, keeps a
    moving button in cash games and TDA 32's adjustment)."""
    got = {}
    for rules in ("robert", "highland"):
        table = Table(size=9, game="holdem", rules=rules, event="cash")
        for s in (2, 5, 8):
            table.seat(s, f"p{s}")
        table.set_button(2)
        table.start_hand()
        table.unseat(2)
        setup = table.start_hand().setup
        got[rules] = (setup.button, setup.small_blind, setup.big_blind)
    assert got["robert"] == (5, 5, 8)
    assert got["highland"] == (8, 8, 5)


def _stud_to_fifth() -> HandEngine:
    """The deal of the shared stud_two_burns_corrected up to the end of the fourth-street betting."""
    engine = HandEngine(HandSetup(game="stud", rules="robert", seats=(1, 2, 5), table_size=8))
    for seat, card in [(1, "Th"), (2, "3s"), (5, "Ah"), (1, "6c"), (2, "9s"), (5, "Kd"), (1, "8d"), (2, "2c"),
                       (5, "Jh")]:
        engine.apply(Deal(seat, _c(card)))
    for seat, action in [(2, "bring_in"), (5, "call"), (1, "complete"), (2, "call"), (5, "call")]:
        engine.apply(Act(seat, action))
    engine.apply(Burn(_c("7s")))
    for seat, card in [(1, "Qc"), (2, "4h"), (5, "5d")]:
        engine.apply(Deal(seat, _c(card)))
    for seat, action in [(1, "check"), (2, "bet"), (5, "call"), (1, "call")]:
        engine.apply(Act(seat, action))
    return engine


def test_a_street_dealt_without_a_burn_is_corrected_after_the_whole_street() -> None:
    """RRoP s8 Seven-Card Stud 13: "If the dealer ... fails to burn a card, the cards will be corrected,
    if at all possible, to their proper positions."  The whole street went out unburned; before any
    action the dealer makes the first card the burn and moves each card one seat back, the last seat
    getting a fresh card (FORMAT.md correct_positions: "a card already out that a burn or deal step
    names again moves there from where it lies")."""
    engine = _stud_to_fifth()
    ruled = engine.apply(Deal(1, _c("3c")))
    assert [(r.reason, r.remedy) for r in ruled] == [("burn_error", "correct_positions")]
    engine.apply(Deal(2, _c("6h")))
    engine.apply(Deal(5, _c("Kh")))
    assert engine.to_act is not None  # the street looked complete
    moves = [Burn(_c("3c")), Deal(1, _c("6h")), Deal(2, _c("Kh")), Deal(5, _c("2d"))]
    for event in moves:
        assert engine.apply(event) == [], event
    assert [h.card.face for h in engine.hands[1] if h.up] == ["8d", "Qc", "6h"]
    assert [h.card.face for h in engine.hands[5] if h.up] == ["Jh", "5d", "2d"]
    assert engine.to_act == 2  # the king showing
    assert engine.placements()[_c("3c")] == "burn"


def test_a_card_of_an_earlier_street_named_again_is_still_a_duplicate() -> None:
    """The correction moves only this street's cards; RRoP s3 Irregularities 4 (two cards of the same
    rank and suit) still voids the hand for any other card."""
    engine = _stud_to_fifth()
    engine.apply(Burn(_c("3c")))
    engine.apply(Burn(_c("6h")))  # burn_error, correct_positions
    ruled = engine.apply(Deal(1, _c("Qc")))  # seat 1's fourth-street card
    assert [r.reason for r in ruled] == ["duplicate_card"]


def test_the_button_is_frozen_through_stud_rounds() -> None:
    """TDA 9-A: "after the last hold'em hand the button moves to the position it would be if the next
    hand was hold'em and is frozen there during stud. ... Shifting to hold'em the button starts where it
    was frozen." (tests/scenarios/holdem_stud_holdem_button_frozen_tda.yaml has the session.)"""
    table = Table(size=8, game="holdem", rules="tda", event="tournament", structure="limit")
    for s in (1, 3, 4, 6):
        table.seat(s, f"p{s}")
    table.set_button(6)
    assert [table.start_hand().setup.button for _ in range(2)] == [6, 1]
    table.change_game("stud", structure="limit")
    for _ in range(3):
        table.start_hand()
        assert table.describe()["button"] == 3 and table.frozen  # where hold'em's next deal would have it
    table.change_game("holdem", structure="limit")
    setup = table.start_hand().setup
    assert (setup.button, setup.small_blind, setup.big_blind) == (3, 4, 6) and not table.frozen


def test_a_horse_rotation_changes_game_every_n_deals_with_the_button_frozen_in_stud() -> None:
    """Mixed games as data (controller.rules.rotations): HORSE deals hold'em, Omaha hi-lo, razz, stud
    and stud hi-lo in turn; the button is frozen through the stud games (TDA 9-A) and a misdeal's redeal
    is the same deal of the rotation (TDA 33-C)."""
    from controller.rules.rotations import Rotation, RotationGame, get_rotation

    horse = get_rotation("horse")
    table = Table(size=8, game="holdem", rules="tda", event="tournament", structure="limit")
    table.rotation = Rotation("horse", horse.games, hands=2)
    for s in (1, 3, 4, 6):
        table.seat(s, f"p{s}")
    table.set_button(6)
    games, buttons = [], []
    for n in range(11):
        engine = table.start_hand(redeal=n == 1)  # the second deal is the first one's redeal
        games.append(engine.game.name)
        buttons.append(engine.setup.button)
        if n == 0:
            assert table.rotation_state() == {
                "name": "horse", "current": RotationGame("holdem", "limit").describe(),
                "next": RotationGame("omaha8", "limit").describe(), "deals_left": 2, "per_level": False}
    assert games == ["holdem", "holdem", "holdem", "omaha8", "omaha8", "razz", "razz", "stud", "stud",
                     "stud8", "stud8"]
    assert buttons[:5] == [6, 6, 1, 3, 4]
    assert buttons[5:] == [None] * 6 and table.describe()["button"] == 6  # frozen where hold'em would be
    engine = table.start_hand()
    assert engine.game.name == "holdem" and engine.setup.button == 6  # starts where it was frozen
    assert table.start_hand().setup.button == 1


@pytest.mark.parametrize("data", [
    {"name": "x", "games": []},
    {"name": "x", "games": [{"game": "triple_draw"}]},
    {"name": "x", "games": ["holdem"], "hands": 0},
    {"name": "x", "games": [{"game": "holdem", "structure": "spread"}]},
    {"name": "x", "games": ["holdem"], "every": 3},
])
def test_a_bad_rotation_is_a_clear_error(data: dict) -> None:
    from controller.rules.rotations import RotationError, get_rotation

    with pytest.raises(RotationError):
        get_rotation(data)


@pytest.mark.parametrize("skip_last", [False, True])
def test_a_dealer_who_passes_over_a_hand_folded_with_no_wager_makes_no_error(skip_last: bool) -> None:
    """RRoP s8 Seven-Card Stud 7: "If a hand is folded when there is no wager, that seat will continue
    to receive cards until the hand is killed as a result of a bet."  Dealing to it is right
    (tests/scenarios/stud_fold_no_wager_keeps_receiving_cards.yaml); a dealer who treats the folded
    hand as dead and passes over it has not dealt anyone out of turn either: the hand is killed."""
    cards = {1: ["Th", "6c", "Kc", "8s"], 2: ["2s", "5h", "3d", "4c"], 3: ["Ad", "Jc", "9h", "9c"]}
    if skip_last:  # seat 3 folds, the last seat of the deal
        cards = {1: ["Ad", "Jc", "9h", "9c"], 2: ["2s", "5h", "3d", "4c"], 3: ["Th", "6c", "Kc", "8s"]}
    engine = HandEngine(HandSetup(game="stud", rules="robert", seats=(1, 2, 3), table_size=8))
    for k in range(3):
        for seat in (1, 2, 3):
            engine.apply(Deal(seat, _c(cards[seat][k])))
    engine.apply(Act(2, "bring_in"))
    engine.apply(Act(3, "call"))
    engine.apply(Act(1, "call"))
    engine.apply(Burn(_c("7d")))
    for seat in (1, 2, 3):
        engine.apply(Deal(seat, _c(cards[seat][3])))
    high, folder = (3, 1) if not skip_last else (1, 3)
    assert engine.to_act == high  # the pair of nines
    while engine.to_act is not None:  # checked round, the folder folding with no wager to him
        engine.apply(Act(engine.to_act, "fold" if engine.to_act == folder else "check"))
    assert folder in engine.dealt_folded
    engine.apply(Burn(_c("2c")))
    live = [s for s in (1, 2, 3) if s != folder]
    for seat, card in zip(live, ["Qd", "Ts"], strict=True):
        engine.apply(Deal(seat, _c(card)))
    engine.apply(Act(engine.to_act or 0, "check"))
    assert engine.rulings == [] and folder not in engine.dealt_folded
    assert engine.to_act in live
