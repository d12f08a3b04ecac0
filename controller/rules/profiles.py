"""Rule profiles as data: where Robert's Rules and the TDA differ, and cash vs tournament.

Every difference the engine honours is a field here, so a house can add a profile
(or a TOML override) without touching the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.errors import PokerTableError


@dataclass(frozen=True, slots=True)
class SubstantialAction:
    """When a misdeal can no longer be called.

    RRoP s3 Misdeals 2: two players (after the blinds/forced bet) have acted.
    TDA 34: any two actions in turn of which one puts chips in, or any three actions.
    """

    players: int | None = None  # distinct seats acting in turn
    actions: int | None = None  # any actions in turn
    chip_actions: tuple[int, int] | None = None  # (actions, of which putting chips in)

    def reached(self, seats: int, actions: int, chips: int) -> bool:
        if self.players is not None and seats >= self.players:
            return True
        if self.actions is not None and actions >= self.actions:
            return True
        if self.chip_actions is not None:
            n, c = self.chip_actions
            return actions >= n and chips >= c
        return False


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    title: str
    substantial: SubstantialAction
    four_card_flop: str  # remedy: RRoP s5 Hold'em 2-3 redeal / TDA 35 scramble
    # TDA 33-B: the button may be dealt two consecutive cards (a skipped button is no misdeal).
    button_consecutive_cards: bool
    # RRoP s3 Misdeals 1(c): two boxed cards anywhere in the deal; TDA 33-A-1: on the initial deal.
    two_boxed_initial_deal_only: bool
    # A stud downcard dealt face up: cash RRoP s8 Seven-Card Stud 5 (next card down / dead hand);
    # tournament RRoP s8 rule 5 last sentence and TDA 33-A-5: misdeal.
    stud_exposed_misdeal_events: tuple[str, ...] = ("tournament",)
    # Button movement: RRoP s4 Blinds 1 allows either; RRoP s15 30 and TDA 30 use a dead button in
    # tournaments.
    dead_button_events: tuple[str, ...] = ("tournament",)


PROFILES: dict[str, Profile] = {
    "robert": Profile(
        "robert",
        "Robert's Rules of Poker v4",
        SubstantialAction(players=2),
        four_card_flop="redeal_flop",
        button_consecutive_cards=False,
        two_boxed_initial_deal_only=False,
    ),
    "tda": Profile(
        "tda",
        "TDA tournament rules",
        SubstantialAction(actions=3, chip_actions=(2, 1)),
        four_card_flop="scramble_flop",
        button_consecutive_cards=True,
        two_boxed_initial_deal_only=True,
        dead_button_events=("cash", "tournament"),
    ),
}


class ProfileError(PokerTableError, ValueError):
    pass


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ProfileError(f"unknown rule profile {name!r}; expected one of {sorted(PROFILES)}") from None
