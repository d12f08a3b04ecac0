"""Rule profiles as data: the highland house rules over tda, and a cardroom's own file."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from controller.app.config import ConfigError, validate_config
from controller.rules.catalog import PROFILES as CATALOG_PROFILES
from controller.rules.engine import HandEngine
from controller.rules.events import HandSetup
from controller.rules.profiles import PROFILES, ProfileError, chain, get_profile, load_profile_file, names
from controller.rules.table import Table
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "table.toml"


def test_one_list_of_profiles_from_the_data() -> None:
    assert names()[:3] == ["robert", "tda", "highland"]
    assert CATALOG_PROFILES == tuple(names()[: len(CATALOG_PROFILES)])
    assert chain("highland") == ["highland", "tda"]


def test_highland_overrides_tda_field_by_field() -> None:
    """House rules (Highland) Button: Dead Button ("Tournament play will use a dead button") and
    Betting: First Round of Betting (a straddle "in non-tournament games"); the rest is the TDA's."""
    tda, highland = get_profile("tda"), get_profile("highland")
    assert highland.base == "tda" and highland.source.endswith("highland.toml")
    assert highland.dead_button_events == ("tournament",) and tda.dead_button_events == ("cash", "tournament")
    assert highland.straddle_events == ("cash",) and tda.straddle_events == ()
    same = [f for f in ("substantial", "four_card_flop", "button_consecutive_cards", "two_boxed_initial_deal_only",
                        "stud_exposed_misdeal_events", "stud_premature_card", "oot_changed_by")]
    assert all(getattr(highland, f) == getattr(tda, f) for f in same)


def test_highland_cash_game_moves_the_button() -> None:
    """Under highland a cash table keeps the moving button; tda's dead button would leave a dead
    small blind when the big blind's player leaves."""
    def positions(rules: str) -> tuple:
        t = Table(size=6, rules=rules, event="cash")
        for s in range(1, 7):
            t.seat(s, f"p{s}")
        t.set_button(1)
        t.start_hand()
        t.unseat(3)
        setup = t.start_hand().setup
        return setup.button, setup.small_blind, setup.big_blind

    assert positions("highland") == (2, 4, 5)
    assert positions("tda") == (2, None, 4)


def test_highland_hand_rulings_cite_the_house_rules() -> None:
    e = HandEngine(HandSetup(game="holdem", rules="highland", seats=(1, 2, 3), button=3))
    from controller.rules.cards import Card
    from controller.rules.events import Act, Deal

    for i, card in enumerate(["Ah", "Kd", "Qs", "Jc", "Th", "9d"]):
        e.apply(Deal(i % 3 + 1, Card.parse(card)))
    (r,) = e.apply(Act(2, "call"))
    assert r.reason == "action_out_of_turn" and r.citations[0].startswith("House rules (Highland)")


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "house.toml"
    p.write_text(text)
    return p


def test_cardroom_file_loads_and_plays(tmp_path: Path) -> None:
    path = _write(tmp_path, 'name = "oakroom"\nbase = "robert"\nfour_card_flop = "scramble_flop"\n'
                            'substantial = {actions = 3}\n')
    profile = get_profile(str(path))
    try:
        assert profile.name == "oakroom" and profile.four_card_flop == "scramble_flop"
        assert profile.substantial.actions == 3 and profile.substantial.players is None
        assert get_profile(str(path)) is profile  # loaded once
        e = HandEngine(HandSetup(game="holdem", rules=str(path), seats=(1, 2, 3), button=3))
        assert e.profile.name == "oakroom"
    finally:
        PROFILES.pop("oakroom", None)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('base = "tda"\n', "field 'name' is required"),
        ('name = "x"\nbase = "wsop"\n', "field 'base': unknown profile 'wsop'"),
        ('name = "x"\nbase = "tda"\nfour_card_flop = "burn_it"\n', "field 'four_card_flop': 'burn_it' is not one of"),
        ('name = "x"\nbase = "tda"\ndead_button_events = ["home"]\n', "field 'dead_button_events': unknown ['home']"),
        ('name = "x"\nbase = "tda"\nbutton_consecutive_cards = 1\n', "field 'button_consecutive_cards': expected"),
        ('name = "x"\nbase = "tda"\nsubstantial = {players = 0}\n', "field 'substantial'.players: expected a whole"),
        ('name = "x"\nbase = "tda"\ncolour = "green"\n', "unknown field 'colour'"),
        ('name = "Bad Name"\nbase = "tda"\n', "field 'name': 'Bad Name' must be"),
        ('name = "tda"\nbase = "tda"\n', "field 'name': profile 'tda' already exists"),
        ("name = \n", "not valid TOML"),
    ],
)
def test_profile_file_errors_name_the_field(tmp_path: Path, text: str, error: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ProfileError) as info:
        load_profile_file(path)
    assert str(path) in str(info.value) and error in str(info.value), str(info.value)


def test_config_takes_a_profile_file_and_names_the_field_on_error(tmp_path: Path) -> None:
    data = tomllib.loads(EXAMPLE.read_text())
    good = _write(tmp_path, 'name = "cfgroom"\nbase = "highland"\nstud_premature_card = "eliminate_round"\n')
    data["table"]["rules"] = str(good)
    try:
        cfg = validate_config(data, base_dir=tmp_path, source="table.toml")
        assert cfg.table.rules == str(good) and get_profile(str(good)).stud_premature_card == "eliminate_round"
    finally:
        PROFILES.pop("cfgroom", None)
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "badroom"\nbase = "tda"\nstud_premature_card = "misdeal"\n')
    data["table"]["rules"] = str(bad)
    with pytest.raises(ConfigError) as info:
        validate_config(data, base_dir=tmp_path, source="table.toml")
    assert any(p.startswith("table.rules: ") and "field 'stud_premature_card'" in p for p in info.value.problems)
    (tmp_path / "rel.toml").write_text('name = "relroom"\nbase = "robert"\n')
    data["table"]["rules"] = "rel.toml"  # beside the config file
    try:
        assert validate_config(data, base_dir=tmp_path, source="table.toml").table.rules == str(tmp_path / "rel.toml")
    finally:
        PROFILES.pop("relroom", None)
    data["table"]["rules"] = str(tmp_path / "missing.toml")
    with pytest.raises(ConfigError) as info:
        validate_config(data, base_dir=tmp_path, source="table.toml")
    assert any("cannot read the profile" in p for p in info.value.problems)


def test_a_table_on_a_profile_file_publishes_the_profile_name(tmp_path: Path) -> None:
    """The MQTT contract carries a profile's name (common.schema.json), never the file's path."""
    from controller.mqtt import contract as mc
    from controller.rules.events import NewHand, SeatPlayer, SetButton
    from controller.service import TableService

    path = _write(tmp_path, 'name = "pubroom"\nbase = "highland"\n')
    try:
        svc = TableService(Table(size=6, rules=str(path)))
        for ev in (SeatPlayer(1, "Ann"), SeatPlayer(2, "Bob"), SeatPlayer(3, "Cy"), SetButton(1)):
            svc.submit(ev)
        out = svc.submit(NewHand())
        start = next(o for o in out if o.kind == "hand_start")
        assert start.payload["rules"] == "pubroom"
        state = svc.public_state()
        assert state["table"]["rules"] == "pubroom" and state["hand"]["rules"] == "pubroom"
        payload = mc.state_payload(seq=1, ts=0.0, table_id="t1", table=state["table"], hand_id=1, hand=state["hand"])
        assert not mc.errors("state", payload)
    finally:
        PROFILES.pop("pubroom", None)


def test_highland_showdown_splits_by_the_tda_odd_chip_rule() -> None:
    """Odd chips: the house rules are silent, so the TDA's rule (TDA 18) of their base applies."""
    from controller.rules.cards import Card
    from controller.rules.events import Act, BoardCards, Burn, Deal

    e = HandEngine(HandSetup(game="holdem", rules="highland", seats=(1, 2), button=2))
    for seat, card in ((1, "2c"), (2, "3d"), (1, "2h"), (2, "3s")):
        e.apply(Deal(seat, Card.parse(card)))
    e.apply(Act(2, "call"))
    e.apply(Act(1, "check"))
    for burn, board in (("4c", ("Ah", "Kh", "Qh")), ("5c", ("Jh",)), ("6c", ("Th",))):
        e.apply(Burn(Card.parse(burn)))
        e.apply(BoardCards(tuple(Card.parse(x) for x in board)))
        e.apply(Act(1, "check"))
        e.apply(Act(2, "check"))
    award = e.showdown(pot=3)  # both play the royal flush on the board
    assert award is not None and not e.rulings
    assert award.shares == {1: 2, 2: 1}  # the odd chip left of the button
    assert any("TDA 18-A" in note for note in award.notes), award.notes
