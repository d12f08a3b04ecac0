"""Sessions: the table's rules across hands, as property tests and as worked cases.

Random sessions (controller.sim.dealer.legal_session: players sit down waiting or posting, leave,
sit out and come back) must play without a false alarm, and every decision the table makes is
checked here against the blind rules with this file's own reading of them:

* RRoP s4 1(a) moving button: the button never passes over a player who plays on, and going
  heads-up it still moves forward (RRoP s4 3); 1(b) and TDA 30 dead button: the big blind never
  passes over one, nor falls on the same player twice in a row (TDA 32: not even on the way to
  heads-up, the TDA profile's adjustment).
* RRoP s4 3, TDA 32: heads-up the button posts the small blind.
* RRoP s4 7: nobody comes in between the big blind and the button.
* RRoP s4 4-5, 9: a new player posts one big blind or none; a returning player posts exactly the
  blinds that passed his seat while he sat out (the small one dead), or waits for the big blind
  and then owes nothing more: blinds are never skipped or doubled.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.rules.profiles import get_profile
from controller.rules.scenario import Session, apply_change, check_file, run_session
from controller.rules.table import Table
from controller.sim.dealer import PROFILES, legal_session
from tests.conftest import conformance_files, scenario_params

SEEDS = st.integers(min_value=0, max_value=2**63 - 1)


def _between(a: int, b: int, size: int) -> list[int]:
    """Seats strictly between ``a`` and ``b`` going clockwise."""
    out, s = [], a
    for _ in range(size):
        s = s % size + 1
        if s == b:
            break
        out.append(s)
    return out


def _check_decisions(data: dict) -> int:
    """Replay the session's table changes and check every deal's positions; returns deals checked."""
    session = Session.from_dict(data)
    table: Table = session.table()
    size = table.size
    dead = data["event"] in get_profile(data["rules"]).dead_button_events
    adjust = get_profile(data["rules"]).heads_up_button_adjust  # TDA 32
    cash = data["event"] == "cash"
    prev = None  # (setup, sitting-out seats, seated) of the previous deal
    missed: dict[int, set[str]] = {}
    fresh: set[int] = set()
    for n, hand in enumerate(session.hands, 1):
        for key, value in hand.before:
            if key == "seat":
                fresh.add(int(value["seat"]))  # a new player (RRoP s4 4-5), until dealt in
                missed.pop(int(value["seat"]), None)
            elif key == "unseat":
                fresh.discard(int(value))
                missed.pop(int(value), None)
            apply_change(table, key, value)
        sitting = {s for s, p in table.players.items() if p.sitting_out}
        owing = fresh | set(missed)  # new players and players owing blinds: not in between (RRoP s4 7)
        engine = table.start_hand()
        setup, posts = engine.setup, table.posts
        dealt = set(setup.seats)
        where = f"hand {n}: {setup}"
        assert len(dealt) >= 2, where
        bb, sb, button = engine.big_blind, engine.small_blind, setup.button
        if len(dealt) == 2:
            assert sb == button, f"{where}: heads-up the button posts the small blind"
        if not dead:
            assert button in dealt, f"{where}: a moving button is always on a player"
            assert sb in dealt and bb in dealt, where
        if prev is not None:
            p_setup, p_sitting, p_seated = prev
            p_bb = p_setup.big_blind
            if p_bb is not None and bb is not None:
                if p_bb in dealt and (dead or (len(dealt) == 2 and adjust)):  # RRoP s4 1(b); TDA 30, 32
                    assert bb != p_bb, f"{where}: the same big blind twice in a row"
                if not dead and not adjust and len(dealt) == 2 and p_setup.button in dealt:
                    # RRoP s4 1(a), 3: heads-up too, the moving button goes forward to the next player.
                    assert button != p_setup.button, f"{where}: the moving button stood still"
                passed = _between(p_bb, bb, size)
                continuing = (dealt & set(p_setup.seats)) - owing  # the same players, owing nothing
                if dead:  # RRoP s4 1(b), TDA 30: the big blind goes to the player due for it
                    skipped = [s for s in passed if s in continuing]
                    assert not skipped, f"{where}: the big blind passed over {skipped}"
                elif len(dealt) > 2 and len(continuing) >= 3:  # RRoP s4 1(a): the button moves to the next player
                    skipped = [s for s in _between(p_setup.button, button, size) if s in continuing]
                    assert not skipped, f"{where}: the button passed over {skipped}"
                if cash:
                    for s in passed:  # the glossary's missed blind: his turn came while he sat out
                        if s in sitting:
                            missed.setdefault(s, set()).add("big")
                    p_sb = p_setup.small_blind
                    if p_sb is not None and sb is not None and not dead:
                        for s in _between(p_sb, sb, size):
                            if s in sitting:
                                missed.setdefault(s, set()).add("small")
        # who posts besides the blinds
        for s, what in posts.items():
            assert s in dealt and s != bb, where
            assert what in (["big"], ["small"], ["small", "big"]), where
        for s in dealt:
            got = set(posts.get(s, []))
            if s == bb:
                assert not got, f"{where}: seat {s} takes the big blind and owes nothing more"
            elif s in fresh:
                assert got in (set(), {"big"}), f"{where}: a new player posts one big blind or none"
            elif s in missed:
                restart = prev is not None and len(dealt & set(prev[0].seats)) < 3  # RRoP s4 12
                assert got == missed[s] or (restart and not got), f"{where}: seat {s} missed {missed[s]}, posts {got}"
            else:
                assert not got, f"{where}: seat {s} owes nothing and posts {got}"
        if cash and prev is not None and len(dealt & set(prev[0].seats)) >= 3:  # not a restart (RRoP s4 12)
            zone = set(_between(button, bb, size)) if bb is not None else set()
            entered = [s for s in dealt if s not in prev[0].seats and s in owing and s in zone]
            assert not entered, f"{where}: {entered} came in between the button and the big blind"
        for s in dealt:
            missed.pop(s, None)  # dealt in: made up, or took the big blind
            fresh.discard(s)
        prev = (setup, sitting, set(table.players))
    return len(session.hands)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS, rules=st.sampled_from(PROFILES), event=st.sampled_from(("cash", "tournament")))
def test_random_sessions_follow_the_blind_rules_and_raise_nothing(seed: int, rules: str, event: str) -> None:
    data = legal_session(random.Random(seed), hands=14, rules=rules, event=event)
    result = run_session(Session.from_dict(data))
    assert result.passed, "\n".join(result.failures[:5])
    assert _check_decisions(data) == 14


def test_sessions_cover_the_changes() -> None:
    """The generator really seats, unseats, sits out and brings back players, waiting and posting."""
    rng = random.Random(13)
    kinds, posts = set(), set()
    for _ in range(40):
        data = legal_session(rng, hands=14, event="cash")
        for hand in data["hands"]:
            for change in hand.get("before", []):
                (key, value), = change.items()
                kinds.add(key)
                if isinstance(value, dict):
                    posts.add((key, value.get("post")))
        table = Session.from_dict(data).table()
        for hand in Session.from_dict(data).hands:
            for key, value in hand.before:
                apply_change(table, key, value)
            table.start_hand()
            posts.update(("posting", tuple(v)) for v in table.posts.values())
    assert kinds == {"seat", "unseat", "sit_out", "sit_in"}
    assert {("seat", True), ("seat", False), ("sit_in", True), ("sit_in", False)} <= posts
    assert ("posting", ("big",)) in posts and ("posting", ("small", "big")) in posts


SESSIONS = [p for p in conformance_files() if "sessions" in p.parts]


@pytest.mark.parametrize("path", scenario_params(SESSIONS, "session"))
def test_shared_sessions_follow_the_blind_rules(path) -> None:
    """The shared sessions pass, and (those without a game change) meet this file's reading too."""
    import yaml

    assert check_file(path).passed
    data = yaml.safe_load(path.read_text())
    if not any("game" in c for h in data["hands"] for c in h.get("before") or []):
        assert _check_decisions(data) == len(data["hands"])


# ------------------------------------------------------------------ worked cases (RRoP s4 9-10)
def _cash(seats: range, button: int) -> Table:
    t = Table(size=9, event="cash")
    for s in seats:
        t.seat(s, f"p{s}")
    t.set_button(button)
    return t


def test_player_who_missed_only_the_big_blind_posts_only_it() -> None:
    """RRoP s4 9: "posting all the blinds missed": the big blind passed him, the small one not yet."""
    t = _cash(range(1, 7), 6)
    t.start_hand()  # button 6, blinds 1, 2
    t.sit_out(3)
    s = t.start_hand().setup  # button 1, small 2, big 4: seat 3's big blind is missed
    assert (s.button, s.small_blind, s.big_blind) == (1, 2, 4)
    t.sit_in(3, post=True)
    s = t.start_hand().setup  # button 2, blinds 4 and 5: seat 3 sits between button and big blind
    assert 3 not in s.seats and t.posts == {}
    s = t.start_hand().setup  # button 4: seat 3 is out of the zone and makes up the big blind
    assert 3 in s.seats and t.posts == {3: ["big"]}
    assert t.start_hand() and t.posts == {}  # paid: nothing more owed


def test_sitting_out_in_a_tournament_misses_nothing_to_make_up() -> None:
    """The missed-blind rules of RRoP s4 9 are cash-game rules (tournament players post every
    blind, RRoP s15 30): a tournament player coming back is dealt in without a make-up post."""
    t = Table(size=9, rules="tda", event="tournament")
    for s in range(1, 7):
        t.seat(s, f"p{s}")
    t.set_button(6)
    t.start_hand()
    t.sit_out(3)
    t.start_hand()
    t.start_hand()
    t.sit_in(3, post=True)
    s = t.start_hand().setup
    assert 3 in s.seats and t.posts == {}


def test_new_player_joining_heads_up_waits_for_the_big_blind() -> None:
    """RRoP s4 3-4: heads-up the button posts the small blind; a new player who waits for the big
    blind gets it when the button moves on, not a free hand at once."""
    t = Table(size=9, event="cash")
    for s in (1, 5):
        t.seat(s, f"p{s}")
    t.set_button(1)
    s = t.start_hand().setup
    assert (s.button, s.small_blind, s.big_blind, s.seats) == (1, 1, 5, (1, 5))
    t.seat(7, "new")  # sits between the big blind (5) and the button (1)
    s = t.start_hand().setup
    assert (s.button, s.small_blind, s.big_blind, s.seats) == (5, 5, 1, (1, 5)) and t.waiting() == [7]
    s = t.start_hand().setup
    assert (s.button, s.small_blind, s.big_blind) == (1, 5, 7) and s.seats == (1, 5, 7) and t.posts == {}
