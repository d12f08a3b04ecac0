"""The TOML config: the example loads, and every kind of problem names its key."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from controller.app.config import (
    Config,
    ConfigError,
    MqttSection,
    TableSection,
    load_config,
    validate_config,
)
from controller.app.paths import state_dir
from controller.demo.config import demo_config
from controller.geometry import Slot, Zone, ZoneMap

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "table.toml"


def example() -> dict:
    return tomllib.loads(EXAMPLE.read_text())


def problems(data: dict, tmp_path: Path | None = None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        validate_config(data, base_dir=tmp_path, source="table.toml")
    text = str(info.value)
    assert text.splitlines() == [f"table.toml: {p}" for p in info.value.problems]
    return info.value.problems


def test_example_loads() -> None:
    cfg = load_config(EXAMPLE)
    assert isinstance(cfg, Config) and isinstance(cfg.table, TableSection) and isinstance(cfg.mqtt, MqttSection)
    assert (cfg.table.id, cfg.table.size, cfg.table.game, cfg.table.effective_structure) == (
        "table-07", 9, "holdem", "no_limit")
    assert cfg.zone_map() == ZoneMap.standard(9, 2, 5)
    assert cfg.antennas[17] == Slot(Zone("seat", 9), 1) and cfg.antennas[25] == Slot(Zone("shoe"))
    assert cfg.zone_map().to_dict()["17"] == "seat:9/1" and cfg.zone_map().to_dict()["20"] == "board/2"
    assert cfg.stakes is not None and (cfg.stakes.small_blind, cfg.stakes.big_blind) == (1, 2)
    assert cfg.mqtt.secure and cfg.mqtt.host == "broker.local" and cfg.mqtt.effective_port == 8883
    assert cfg.topic == "poker/table-07"
    assert cfg.broadcast.delay == "end_of_hand"
    assert cfg.journal.path == state_dir() / "journal.sqlite"
    assert [r.zone for r in cfg.nfc.readers] == ["enroll", "muck"]
    assert cfg.gpio.enabled and cfg.gpio.panel_config().shuffler_fault.active_high
    assert cfg.table_kwargs()["size"] == 9


def test_minimal_config_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[table]\nid = "t1"\n[journal]\npath = "state/j.sqlite"\n')
    cfg = load_config(path)
    assert cfg.table.size == 9 and cfg.table.rules == "robert" and cfg.stakes is None
    assert cfg.journal.path == tmp_path / "state" / "j.sqlite"  # relative to the config file
    assert not (tmp_path / "state").exists()  # loading creates nothing
    assert cfg.sources_named() == [] and cfg.room is None  # no source section, no room
    assert not any(cfg.source(name).enabled for name in ("serial", "gpio", "camera"))  # their defaults
    assert cfg.mqtt.url == "mqtt://localhost:1883" and cfg.mqtt.effective_port == 1883
    assert cfg.mqtt.base_topic == "poker"


def test_demo_config(tmp_path: Path) -> None:
    cfg = demo_config(journal=tmp_path / "j.sqlite")
    assert cfg.table.id == "demo" and len(cfg.antennas) == 26 and cfg.broadcast.delay == 0
    assert cfg.journal.path == tmp_path / "j.sqlite"
    stud = demo_config("stud-1", size=8, game="stud")
    assert stud.stakes is not None and stud.stakes.bring_in == 2 and len(stud.antennas) == 24


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("mqtt.port", 70000, "Input should be less than or equal to 65535"),
        ("mqtt.url", "http://broker", "'http://broker': expected mqtt://host[:port]"),
        ("mqtt.url", "mqtt://broker:99999", "'mqtt://broker:99999': port must be in 1..65535"),
        ("mqtt.keepalive", 0, "Input should be greater than or equal to 1"),
        ("mqtt.base_topic", "poker/#", "String should match pattern"),
        ("mqtt.password_file", "missing.txt", "file not found: "),
        ("table.id", "table 7", "'table 7': use letters, digits, '_' and '-' only"),
        ("table.size", 11, "Input should be less than or equal to 10"),
        ("table.size", "nine", "Input should be a valid integer"),
        ("table.game", "pinochle", "unknown game 'pinochle'; expected one of"),
        ("table.structure", "spread", "unknown structure 'spread'"),
        ("table.rules", "wsop", "unknown rule profile 'wsop'; expected one of"),
        ("table.event", "home", "Input should be 'cash' or 'tournament'"),
        ("table.colour", "green", "unknown key"),
        ("stakes.ante", -5, "Input should be greater than or equal to 0"),
        ("stakes.big_blind", 2.5, "Input should be a valid integer"),
        ("serial.port", "COM3", "'COM3': expected a device path"),
        ("serial.port", "socket://localhost", "'socket://localhost': expected socket://host:port"),
        ("serial.enabled", "yes", "Input should be a valid boolean"),
        ("broadcast.delay", -1, "expected seconds (an integer >= 0) or \"end_of_hand\""),
        ("broadcast.delay", "later", "expected seconds"),
        ("camera.enabled", 3, "Input should be a valid boolean"),
        ("journal.sync", "off", "Input should be 'full' or 'normal'"),
    ],
)
def test_field_errors_name_their_key(field: str, value: object, error: str, tmp_path: Path) -> None:
    """Each problem is reported as ``section.key: what is wrong``."""
    section, key = field.split(".")
    data = example()
    data[section][key] = value
    if field == "mqtt.port":
        data["mqtt"]["url"] = "mqtt://broker"
    assert any(p.startswith(f"{field}: {error}") for p in problems(data, tmp_path)), problems(data, tmp_path)


def test_antenna_errors() -> None:
    data = example()
    data["antennas"]["7"] = "seat:12"
    assert problems(data) == ["antennas.7: 'seat:12' is not a zone on a 9-seat table"]
    data = example()
    data["antennas"]["30"] = "seat:1:0"
    data["antennas"]["31"] = "table"
    data["antennas"]["32"] = "board:9"
    data["antennas"]["33"] = "seat:0"
    data["antennas"]["34"] = "burn:2"
    assert problems(data) == [
        "antennas.31: 'table': unknown zone 'table'; expected one of seat, board, burn, muck, shoe",
        "antennas.32: 'board:9': board slots are 0..4, got 9",
        "antennas.33: 'seat:0': seats are numbered from 1, got 0",
        "antennas.34: 'burn:2': only a seat has a number; expected 'board/K', 'burn', 'muck' or 'shoe'",
    ]
    data = example()
    data["antennas"]["30"] = "seat:1:0"
    assert problems(data) == ["antennas.30: 'seat:1/0' is already antenna 0"]
    data = example()
    data["antennas"]["07"] = "shoe"  # the same antenna as "7"
    data["antennas"]["-1"] = "shoe"
    assert problems(data) == ["antennas.07: antenna 7 is listed twice (also as '7')",
                              "antennas.-1: antenna numbers are integers >= 0"]


def test_table_size_checks_the_antennas_and_readers() -> None:
    data = example()
    data["table"]["size"] = 8
    data["nfc"]["readers"].append({"zone": "seat:9", "path": "usb:001:009"})
    assert problems(data) == [
        "antennas.16: 'seat:9' is not a zone on a 8-seat table",
        "antennas.17: 'seat:9' is not a zone on a 8-seat table",
        "nfc.readers.2.zone: 'seat:9' is not a zone on a 8-seat table",
    ]


def test_stakes_the_game_needs() -> None:
    data = example()
    data["table"]["structure"] = "limit"
    data["stakes"] = {"small_blind": 5, "big_blind": 2}
    assert problems(data) == [
        "stakes.small_bet: required for holdem (limit)",
        "stakes.big_bet: required for holdem (limit)",
        "stakes.small_blind: 5 is more than the big blind 2",
    ]
    data = example()
    data["table"] |= {"game": "stud", "size": 8, "structure": "limit"}
    data["antennas"] = {"0": "seat:1"}
    data["stakes"] = {"ante": 1, "small_bet": 4, "big_bet": 8}
    assert problems(data) == ["stakes.bring_in: required for stud (limit)"]
    data["stakes"]["bring_in"] = 1
    assert validate_config(data).stakes.bring_in == 1


def test_several_problems_are_all_listed() -> None:
    data = example()
    data["mqtt"]["keepalive"] = -1
    data["table"]["size"] = 1
    data["bogus"] = {}
    got = problems(data)
    assert "mqtt.keepalive: Input should be greater than or equal to 1" in got
    assert "table.size: Input should be greater than or equal to 2" in got
    assert "bogus: unknown key" in got
    assert len(got) == 3


def test_missing_table_section() -> None:
    assert problems({}) == ["table: required"]
    assert problems({"table": {}}) == ["table.id: required"]


def test_mqtt_consistency(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("secret\n")
    (tmp_path / "ca.crt").write_text("x")
    data = example()
    data["mqtt"] |= {"password": "a", "password_file": "pw"}
    assert problems(data, tmp_path) == ["mqtt.password_file: give password or password_file, not both"]
    data = example()
    data["mqtt"] = {"url": "mqtt://b", "tls": {"ca_file": "ca.crt"}, "password_file": "pw"}
    assert problems(data, tmp_path) == ["mqtt.username: required with a password",
                                        "mqtt.tls: TLS settings need an mqtts:// url"]
    data["mqtt"] |= {"url": "mqtts://b", "username": "u"}
    cfg = validate_config(data, base_dir=tmp_path)
    assert cfg.mqtt.tls.ca_file == tmp_path / "ca.crt" and cfg.mqtt.read_password() == "secret"
    data["mqtt"]["tls"] = {"keyfile": "ca.crt", "certfile": "nope.crt"}
    assert problems(data, tmp_path) == [f"mqtt.tls.certfile: file not found: {tmp_path / 'nope.crt'}"]
    data["mqtt"]["tls"] = {"keyfile": "ca.crt"}
    assert problems(data, tmp_path) == ["mqtt.tls.keyfile: a keyfile needs a certfile"]


def test_gpio_pins_go_through_the_panel_config() -> None:
    data = example()
    data["gpio"]["pins"]["buzzer"] = 22
    assert problems(data) == ["gpio.pins: GPIO22 is used by both acknowledge and buzzer"]
    data["gpio"]["pins"] = {"deck_ready": "six"}
    assert problems(data) == ["gpio.pins: deck_ready must be a pin number or a mapping, got 'six'"]
    data["gpio"]["pins"] = {"tilt": 4}
    assert problems(data)[0].startswith("gpio.pins: unknown keys ['tilt']")
    data["gpio"]["pins"] = {"new_hand": 40}
    assert problems(data) == ["gpio.pins: new_hand: BCM pin 40 is not a GPIO pin (0..27)"]


def test_gpio_check_runs_without_gpiozero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gpiozero", None)  # import gpiozero -> ModuleNotFoundError
    data = example()
    data["gpio"]["pins"]["buzzer"] = 22
    assert problems(data) == ["gpio.pins: GPIO22 is used by both acknowledge and buzzer"]


def test_config_module_does_not_import_gpiozero() -> None:
    import subprocess

    code = "import sys, controller.app.config; print('gpiozero' in sys.modules, 'hw.gpio.panel' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[table]\nid = "t"\nsize = \n', "line 3, column 8"),
        ('[table]\nid = "t"\n[table]\n', "line 3, column 7"),
        ('[table\nid = "t"\n', "line 1, column 7"),
        ('[table]\nid = "t\n', "line 2, column 8"),
    ],
)
def test_toml_syntax_errors_name_line_and_column(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "table.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"table.toml: {where}: ")
    assert "TOML syntax" in str(info.value)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope.toml: cannot read"):
        load_config(tmp_path / "nope.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe[table]")
    with pytest.raises(ConfigError, match="bin.toml: not UTF-8"):
        load_config(tmp_path / "bin.toml")


def test_config_is_frozen() -> None:
    cfg = load_config(EXAMPLE)
    with pytest.raises(Exception):  # noqa: B017 - pydantic's ValidationError for a frozen model
        cfg.table.size = 6  # type: ignore[misc]


def test_antennas_accept_both_slot_spellings(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[table]\nid = "t"\n[antennas]\n0 = "seat:3:1"\n1 = "seat:3/0"\n2 = "board:4"\n3 = "burn"\n')
    cfg = load_config(path)
    assert cfg.zone_map().to_dict() == {"0": "seat:3/1", "1": "seat:3/0", "2": "board/4", "3": "burn"}


def test_a_room_section_names_the_room_and_its_resend_grace() -> None:
    cfg = validate_config({"table": {"id": "t1"}, "room": {"name": "main", "resend_grace": 2.5}})
    assert cfg.room is not None and (cfg.room.name, cfg.room.resend_grace) == ("main", 2.5)
    with pytest.raises(ConfigError) as info:
        validate_config({"table": {"id": "t1"}, "room": {"name": "", "resend_grace": 0, "bridge": "x"}})
    text = str(info.value)
    assert "room.name" in text and "room.resend_grace" in text and "room.bridge: unknown key" in text


def test_only_the_source_sections_a_file_names_are_in_its_model() -> None:
    cfg = validate_config({"table": {"id": "t1"}, "camera": {"enabled": False}})
    assert cfg.sources_named() == ["camera"] and not cfg.camera.enabled
    with pytest.raises(ConfigError, match="cameras: unknown key"):
        validate_config({"table": {"id": "t1"}, "cameras": {"enabled": False}})
