"""Games described as data (after PokerKit): streets, faces, burns, who acts first.

The engine has no per-game if-chains: everything it needs to know about a game is
here.  Sources: Robert's Rules of Poker v4 (RRoP) s5-s12.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from controller.errors import PokerTableError
from controller.rules.cards import Card


class Family(StrEnum):
    BOARD = "board"  # button games with community cards (hold'em, Omaha)
    STUD = "stud"  # no button; cards start at seat 1, the house dealer sits between the last seat and 1
    DRAW = "draw"  # button games with a draw


class FirstToAct(StrEnum):
    BLINDS = "blinds"  # left of the big blind (or of the button when there are no blinds)
    BUTTON = "button"  # first active seat left of the button
    BRING_IN = "bring_in"  # stud third street: the forced bet by the lowest/highest upcard
    SHOWING = "showing"  # stud later streets: best hand on board
    OPENER = "opener"  # draw high after the draw: the opener (RRoP s12 introduction)


@dataclass(frozen=True, slots=True)
class Street:
    """One round of cards followed by a round of betting."""

    name: str
    hole: tuple[str, ...] = ()  # faces of the cards each live seat receives, in deal rounds
    board: int = 0  # community cards turned on this street
    burn: bool = False  # a burn card precedes the street's cards
    draw: bool = False  # the street's cards come through a draw
    first: FirstToAct = FirstToAct.BUTTON


@dataclass(frozen=True, slots=True)
class ExposurePolicy:
    """What happens to one downcard exposed by the dealer before the draw/flop.

    ``take`` maps a structure (``*`` for any) to the ranks the player must keep; any
    other rank is replaced with remedy ``replace_remedy``.
    """

    take: dict[str, frozenset[str]] = field(default_factory=dict)
    replace_remedy: str = "replace_after_deal"

    def remedy(self, structure: str, rank: str | None) -> str:
        ranks = self.take.get(structure, self.take.get("*", frozenset()))
        return "must_take" if rank is not None and rank in ranks else self.replace_remedy


ALL_RANKS = frozenset("23456789TJQKA")


@dataclass(frozen=True, slots=True)
class Game:
    """A poker variant as data."""

    name: str
    title: str
    family: Family
    streets: tuple[Street, ...]
    default_structure: str
    showdown: tuple[str, ...]  # evaluator names in controller.rules.evaluate
    bring_in: str | None = None  # 'low' (lowest upcard, ace high) or 'high' (highest upcard, ace low)
    showing: str | None = None  # how later stud streets rank the board: 'high' or 'low_a5'
    uses_joker: bool = False
    exposure: ExposurePolicy = field(default_factory=ExposurePolicy)
    rules: str = ""  # the rulebook section
    # Limit: an open pair on fourth street lets any player bet the upper limit (RRoP s8 Seven-Card
    # Stud 4; not in razz, s9 Razz 4, nor stud high-low, s10 Seven-Card Stud High-Low 7).
    open_pair_option: bool = False
    # The draw for the button (RRoP s2 Seating 6; s3 Ties 1-2): the highest card wins it in high and
    # high-low games, the lowest in low games, ranked as the game ranks cards: 'high' (ace high),
    # 'low_a5' (ace low: ace-to-five, razz) or 'low_27' (ace high: deuce-to-seven).
    button_draw: str = "high"
    # RRoP s12 Jacks-or-Better 1: "A pair of jacks or better is required to open the pot. If no
    # player opens the pot, the button moves forward": a first round with no bet ends the deal.
    openers_required: bool = False
    # Limit: the betting round from which the big bet applies (None: the family's, after the draw in
    # draw games, from stud's fifth street and the turn).  2-7 triple draw bets the small bet before
    # the draw and after the first, the big bet after the second and third.
    big_bet_round: int | None = None

    @property
    def big_bet_from(self) -> int:
        """The first betting round (0 is the first) played at the big bet in a limit game."""
        if self.big_bet_round is not None:
            return self.big_bet_round
        return 1 if self.family is Family.DRAW else 2

    @property
    def button(self) -> bool:
        return self.family is not Family.STUD

    @property
    def hole_cards(self) -> int:
        return sum(len(s.hole) for s in self.streets if not s.draw)

    @property
    def board_cards(self) -> int:
        return sum(s.board for s in self.streets)


def _flop_streets(down: int) -> tuple[Street, ...]:
    return (
        Street("preflop", hole=("down",) * down, first=FirstToAct.BLINDS),
        Street("flop", board=3, burn=True),
        Street("turn", board=1, burn=True),
        Street("river", board=1, burn=True),
    )


_STUD_STREETS = (
    Street("third", hole=("down", "down", "up"), first=FirstToAct.BRING_IN),
    Street("fourth", hole=("up",), burn=True, first=FirstToAct.SHOWING),
    Street("fifth", hole=("up",), burn=True, first=FirstToAct.SHOWING),
    Street("sixth", hole=("up",), burn=True, first=FirstToAct.SHOWING),
    Street("seventh", hole=("down",), burn=True, first=FirstToAct.SHOWING),
)


def _draw_streets(after_draw: FirstToAct) -> tuple[Street, ...]:
    return (
        Street("predraw", hole=("down",) * 5, first=FirstToAct.BLINDS),
        Street("draw", burn=True, draw=True, first=after_draw),
    )


# Triple draw: three draws, each followed by a betting round led by the first player left of the button.
_TRIPLE_DRAW_STREETS = (
    Street("predraw", hole=("down",) * 5, first=FirstToAct.BLINDS),
    Street("draw", burn=True, draw=True, first=FirstToAct.BUTTON),
    Street("second_draw", burn=True, draw=True, first=FirstToAct.BUTTON),
    Street("third_draw", burn=True, draw=True, first=FirstToAct.BUTTON),
)


# RRoP s5 Hold'em 1: any holecard but the first two exposed is replaced after the deal.
_BOARD_EXPOSURE = ExposurePolicy({}, "replace_after_deal")

GAMES: dict[str, Game] = {
    g.name: g
    for g in (
        Game("holdem", "Texas hold'em", Family.BOARD, _flop_streets(2), "no_limit", ("high",),
             exposure=_BOARD_EXPOSURE, rules="RRoP s5"),
        Game("omaha", "Omaha", Family.BOARD, _flop_streets(4), "no_limit", ("omaha_high",),
             exposure=_BOARD_EXPOSURE, rules="RRoP s6"),
        Game("omaha8", "Omaha hi-lo 8 or better", Family.BOARD, _flop_streets(4), "no_limit",
             ("omaha_high", "omaha_low_a5_8"), exposure=_BOARD_EXPOSURE, rules="RRoP s7"),
        # RRoP s8 rule 1: lowest upcard by suit brings it in; high hand on board acts first after.
        Game("stud", "Seven-card stud", Family.STUD, _STUD_STREETS, "limit", ("high",),
             bring_in="low", showing="high", rules="RRoP s8", open_pair_option=True),
        # RRoP s9 rule 3: highest card by suit (aces low) brings it in; the low hand acts first after.
        Game("razz", "Razz", Family.STUD, _STUD_STREETS, "limit", ("low_a5",),
             bring_in="high", showing="low_a5", rules="RRoP s9", button_draw="low_a5"),
        # RRoP s10 rule 4: the low card by suit (ace high) brings it in; the high hand acts first after.
        Game("stud8", "Seven-card stud hi-lo 8 or better", Family.STUD, _STUD_STREETS, "limit",
             ("high", "low_a5_8"), bring_in="low", showing="high", rules="RRoP s10"),
        # RRoP s11 Ace-to-Five 1: the joker is assumed in use.  Exposed cards before the draw:
        # limit: 7 or under taken (A-5 rule 3); no-limit/pot-limit: A-5 taken (NL lowball 2(a)).
        Game("lowball_a5", "Ace-to-five lowball", Family.DRAW, _draw_streets(FirstToAct.BUTTON), "limit",
             ("low_a5",), uses_joker=True,
             exposure=ExposurePolicy({"limit": frozenset("A234567"), "no_limit": frozenset("A2345"),
                                      "pot_limit": frozenset("A2345")}, "replace"), rules="RRoP s11",
             button_draw="low_a5"),
        # RRoP s11 Deuce-to-Seven 2 and NL lowball 2(b): 2, 3, 4, 5, 7 taken; anything else, 6 too, replaced.
        Game("lowball_27", "Deuce-to-seven lowball", Family.DRAW, _draw_streets(FirstToAct.BUTTON), "limit",
             ("low_27",), exposure=ExposurePolicy({"*": frozenset("23457")}, "replace"), rules="RRoP s11",
             button_draw="low_27"),
        # RRoP s12 Draw High 3: any card exposed before the draw must be kept; action after the
        # draw starts with the opener.
        # 2-7 triple draw (eight-game's draw game): deuce-to-seven lowball with three draws.  No
        # rulebook here covers it; it plays as RRoP s11 Deuce-to-Seven (exposed cards, the low
        # hand) and bets limit as cardrooms deal it: small bets to the second draw, big bets after.
        Game("triple_draw_27", "2-7 triple draw", Family.DRAW, _TRIPLE_DRAW_STREETS, "limit", ("low_27",),
             exposure=ExposurePolicy({"*": frozenset("23457")}, "replace"), rules="RRoP s11 Deuce-to-Seven",
             button_draw="low_27", big_bet_round=2),
        Game("draw_high", "Five-card draw high", Family.DRAW, _draw_streets(FirstToAct.OPENER), "limit",
             ("high",), exposure=ExposurePolicy({"*": ALL_RANKS}, "replace"), rules="RRoP s12"),
        Game("jacks_or_better", "Jacks or better", Family.DRAW, _draw_streets(FirstToAct.OPENER), "limit",
             ("high",), exposure=ExposurePolicy({"*": ALL_RANKS}, "replace"), rules="RRoP s12 Jacks-or-Better",
             openers_required=True),
    )
}

STRUCTURES = ("no_limit", "pot_limit", "limit")


def draw_winner(game: Game, cards: dict[int, Card]) -> int:
    """The seat a draw for the button goes to (RRoP s2 Seating 6; s3 Ties 1-2): the highest card
    by rank and then suit (spades, hearts, diamonds, clubs) in high games; in low games the lowest,
    the lower suit winning a tie of ranks."""
    if not cards:
        raise GameError("a draw for the button needs a card for each player")
    if any(c.is_joker for c in cards.values()):
        raise GameError("a joker cannot be drawn for the button")
    if game.button_draw == "high":
        return max(cards, key=lambda s: (cards[s].high, cards[s].suit_order))
    rank = (lambda c: c.low) if game.button_draw == "low_a5" else (lambda c: c.high)
    return min(cards, key=lambda s: (rank(cards[s]), cards[s].suit_order))


class GameError(PokerTableError, ValueError):
    pass


def get_game(name: str) -> Game:
    try:
        return GAMES[name]
    except KeyError:
        raise GameError(f"unknown game {name!r}; expected one of {sorted(GAMES)}") from None
