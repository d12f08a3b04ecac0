"""Issues 15 and 17 on the application side: `tablectl run` as installed (pages, logins, deck
warning, journal errors), the records (replay, logs), the CLI's conventions, the info topic and
Home Assistant discovery, secrets at showdown, logging that never kills the engine thread."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from controller.app.webserver import PageServers
from controller.cli import build_parser, main
from controller.journal import Journal
from controller.mqtt.broker import free_port
from controller.mqtt.contract import Topics
from controller.rules.cards import Card
from controller.rules.events import Act, Deal, NewHand, SeatPlayer, SetButton
from controller.rules.table import Table
from controller.service import TableService
from tests.conftest import REPO
from tests.journald_util import fake_journald
from tests.mqtt_util import Client, start_daemon, wait_until

T = Topics("poker", "t1")


def c(text: str) -> Card:
    return Card.parse(text)


# ---------------------------------------------------------------------- secrets at showdown
def test_folded_hands_are_never_tabled_at_showdown() -> None:
    """Issue 17.2: hand_end (display-readable) carried every dealt-in seat's cards."""
    svc = TableService(Table(size=6, game="holdem"))
    for seat in (1, 2, 3):
        svc.submit(SeatPlayer(seat, f"p{seat}"))
    svc.submit(SetButton(3))
    svc.submit(NewHand())
    hole = {1: ["Ah", "Kd"], 2: ["Qs", "Jc"], 3: ["7h", "2c"]}
    for r in range(2):
        for seat in (1, 2, 3):
            svc.submit(Deal(seat, c(hole[seat][r]), source="rfid"))
    svc.submit(Act(3, "fold"))  # the button folds preflop
    svc.submit(Act(1, "call"))
    svc.submit(Act(2, "check"))
    from controller.rules.events import BoardCards, Burn

    outs = []
    for street in (("2d", "3d", "4s"), ("9c",), ("Td",)):
        svc.submit(Burn(c("5c" if len(street) == 3 else ("6c" if street == ("9c",) else "8c"))))
        svc.submit(BoardCards(tuple(c(x) for x in street), source="rfid"))
        outs = svc.submit(Act(1, "check")) + svc.submit(Act(2, "check"))
    end = next(o for o in outs if o.kind == "hand_end")
    assert end.payload["result"] == "showdown"
    assert set(end.payload["shown"]) == {"1", "2"}
    text = json.dumps(end.payload)
    assert "7h" not in text and "2c" not in text


# ---------------------------------------------------------------------- CLI conventions
def test_version_and_bare_tablectl_prints_help(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("tablectl ")
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "usage: tablectl" in out and "check-config" in out


def test_every_option_has_help() -> None:
    import argparse

    missing = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:  # noqa: SLF001 - argparse has no public walk
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                for name, sub in action.choices.items():
                    walk(sub, [*path, name])
            elif action.dest != "help" and not action.help:
                missing.append((path, action.dest))

    walk(build_parser(), [])
    assert missing == []


def test_check_config(capsys, tmp_path) -> None:
    assert main(["check-config", "--config", str(REPO / "examples" / "table.toml")]) == 0
    assert "table-07" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text('[table]\nid = "t1"\nsize = 12\n')
    assert main(["check-config", "--config", str(bad)]) == 2
    assert "table.size" in capsys.readouterr().err


# ---------------------------------------------------------------------- records
def _config_file(tmp_path: Path, size: int, journal: Path, extra: str = "") -> Path:
    cfg = tmp_path / f"table{size}.toml"
    cfg.write_text(f'[table]\nid = "t1"\nsize = {size}\ngame = "holdem"\n\n[journal]\npath = "{journal}"\n'
                   f'\n[web]\nenabled = false\n{extra}')
    return cfg


def test_replay_with_fewer_seats_than_the_journal_is_a_clear_error(tmp_path, capsys) -> None:
    journal = tmp_path / "j.sqlite"
    with Journal(journal) as j:
        svc = TableService(Table(size=9), journal=j)
        svc.submit(SeatPlayer(8, "Hal"))
    assert main(["replay", "--config", str(_config_file(tmp_path, 6, journal))]) == 2
    err = capsys.readouterr().err
    assert "journal error" in err and "seq 1" in err and "Traceback" not in err


def test_replay_without_a_journal_never_creates_one(tmp_path, capsys) -> None:
    journal = tmp_path / "none" / "j.sqlite"
    assert main(["replay", "--config", str(_config_file(tmp_path, 6, journal))]) == 2
    assert "no journal" in capsys.readouterr().err
    assert not journal.exists() and not journal.parent.exists()


@pytest.mark.parametrize("damage", ["corrupt", "unwritable"])
def test_a_bad_journal_is_a_config_style_error(tmp_path, damage: str) -> None:
    """Issue 17.10: a traceback before."""
    if damage == "corrupt":
        journal = tmp_path / "j.sqlite"
        journal.write_bytes(b"this is not a database" * 100)
    else:
        if os.geteuid() == 0:
            journal = Path("/proc/tablectl-journal/j.sqlite")  # root can write anywhere else
        else:
            folder = tmp_path / "ro"
            folder.mkdir(mode=0o500)
            journal = folder / "j.sqlite"
    cfg = _config_file(tmp_path, 6, journal, '\n[mqtt]\nurl = "mqtt://127.0.0.1:9"\n')
    registry = tmp_path / "decks.json"
    registry.write_text('{"version": 1, "decks": []}')
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config", str(cfg), "--registry",
                           str(registry), "--log", "json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "journal error" in proc.stderr and "Traceback" not in proc.stderr


# ---------------------------------------------------------------------- logging
def test_logs_carry_the_identifier_and_fields_install_md_names(tmp_path) -> None:
    unit = (REPO / "systemd" / "poker-table-controller.service").read_text()
    install = (REPO / "systemd" / "INSTALL.md").read_text()
    assert "SyslogIdentifier=tablectl" in unit and "journalctl -t tablectl" in install
    from controller.app.logs import IDENTIFIER

    assert IDENTIFIER == "tablectl"


@pytest.mark.journald
def test_a_lone_surrogate_under_journald_never_kills_the_engine_thread(tmp_path, broker, passwords) -> None:
    """Issue 17.4: a player named with a lone surrogate, logged to journald, killed the owner thread."""
    from controller.app.logs import setup_logging

    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    with fake_journald() as journald:
        setup_logging("journald")
        d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
        console = Client(broker, "console", passwords["console"], name="console").connected()
        console.subscribe(T.response + "/#")
        try:
            # JSON's \ud800 escape decodes to a lone surrogate.
            console.c.publish(T.request("seat"), b'{"seat": 1, "name": "bad\\ud800name", "transaction": "s1"}', qos=1)
            console.c.publish(T.request("seat"), b'{"seat": 2, "name": "Bo", "transaction": "s2"}', qos=1)
            wait_until(lambda: len(console.json(T.response + "/seat")) == 2, what="both answered")
            assert all(r["ok"] for r in console.json(T.response + "/seat"))
            assert d._owner.is_alive()  # noqa: SLF001
            wait_until(lambda: journald.find(SYSLOG_IDENTIFIER="tablectl", SEQ="1"), what="the seat logged")
            assert "\\ud800" in journald.find(SEQ="1")[0]["MESSAGE"]
        finally:
            console.close()
            d.stop()
            for h in list(root.handlers):
                root.removeHandler(h)
            for h in saved[0]:
                root.addHandler(h)
            root.setLevel(saved[1])


def test_the_owner_loop_survives_any_exception(tmp_path, broker, passwords) -> None:
    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
    try:
        def explode(outputs):
            raise SystemExit("a listener that exits")

        d.listeners.append(explode)
        with pytest.raises(BaseException):  # noqa: B017 - whatever escaped reaches the caller
            d.submit(SeatPlayer(1, "A"))
        d.listeners.remove(explode)
        assert d.submit(SeatPlayer(2, "B"))
        assert d._owner.is_alive() and d.counters["owner_errors"] == 1  # noqa: SLF001
    finally:
        d.stop()


# ---------------------------------------------------------------------- info and discovery
def test_info_topic_and_home_assistant_discovery(tmp_path, broker, passwords) -> None:
    ha = Client(broker, "homeassistant", passwords["homeassistant"], name="ha").connected()
    ha.subscribe("homeassistant/#")
    display = Client(broker, "display", passwords["display"], name="display").connected()
    display.subscribe(T.root + "/info")
    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
    try:
        wait_until(lambda: display.json(T.root + "/info"), what="info")
        info = display.json(T.root + "/info")[-1]
        assert info["version"] and info["config"]["size"] == 6 and info["health"]["owner_alive"]
        assert "password" not in json.dumps(info)
        wait_until(lambda: len(ha.topics()) == 4, what="four discovery configs")
        configs = {m.topic: json.loads(m.payload) for m in ha.messages}
        late = Client(broker, "homeassistant", passwords["homeassistant"], name="ha-late").connected()
        late.subscribe("homeassistant/#")
        wait_until(lambda: len(late.topics()) == 4, what="the configs retained")
        late.close()
        states = {c["state_topic"] for c in configs.values()}
        assert states == {T.availability, T.state}  # public topics only (the alert sensor reads the state)
        hand = next(c for t, c in configs.items() if t.endswith("/hand_number/config"))
        assert hand["value_template"] == "{{ value_json.table.hand_number }}"
    finally:
        d.stop()
        ha.close()
        display.close()


# ---------------------------------------------------------------------- pages
def test_each_page_server_hands_out_only_its_own_login() -> None:
    """Issue 17.10: the demo's one server gave anyone who could load the display the overlay's password."""
    cfg = {"table": "t1", "display": {"user": "console", "pass": "dpass"},
           "overlay": {"user": "overlay", "pass": "opass"}}
    with PageServers(REPO / "web", cfg, {"display": ("127.0.0.1", 0), "overlay": ("127.0.0.1", 0)}) as web:
        d_url = web.servers["display"].url
        o_url = web.servers["overlay"].url
        got = json.loads(urllib.request.urlopen(d_url + "/display/config.json", timeout=5).read())
        assert got["pass"] == "dpass"
        for path in ("/overlay/config.json", "/overlay/", "/config.json"):
            try:
                body = urllib.request.urlopen(d_url + path, timeout=5).read()
            except urllib.error.HTTPError as exc:
                assert exc.code == 404
                continue
            assert b"opass" not in body
        assert json.loads(urllib.request.urlopen(o_url + "/overlay/config.json", timeout=5).read())["pass"] == "opass"


def test_run_serves_both_pages_with_their_logins_and_warns_without_a_deck(tmp_path, broker, passwords) -> None:
    """Issue 15.4: the daemon itself serves the pages (not only the demo)."""
    (tmp_path / "mqtt.pass").write_text(passwords["controller"])
    (tmp_path / "console.pass").write_text(passwords["console"])
    (tmp_path / "overlay.pass").write_text(passwords["overlay"])
    dport, oport = free_port(), free_port()
    cfg = tmp_path / "table.toml"
    cfg.write_text(f"""
[table]
id = "t1"
size = 6

[mqtt]
url = "mqtt://127.0.0.1:{broker.port}"
username = "controller"
password_file = "mqtt.pass"

[journal]
path = "journal.sqlite"

[web]
ws = "ws://127.0.0.1:{broker.websockets_port}"

[web.display]
port = {dport}
user = "console"
password_file = "console.pass"

[web.overlay]
port = {oport}
user = "overlay"
password_file = "overlay.pass"

[web.tracker]
port = {free_port()}
""")
    registry = tmp_path / "decks.json"
    registry.write_text('{"version": 1, "decks": []}')
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config", str(cfg), "--registry",
                             str(registry), "--log", "json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        def page(port: int, path: str) -> bytes:
            return urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2).read()

        def up() -> bool:
            try:
                return b"<html" in page(dport, "/display/").lower() and bool(page(oport, "/overlay/"))
            except OSError:
                return False

        wait_until(up, timeout=30, what="both pages served")
        d = json.loads(page(dport, "/display/config.json"))
        o = json.loads(page(oport, "/overlay/config.json"))
        assert (d["user"], d["pass"], d["table"]) == ("console", passwords["console"], "t1")
        assert (o["user"], o["pass"]) == ("overlay", passwords["overlay"])
        assert passwords["overlay"].encode() not in page(dport, "/display/config.json")
        # The login works on the broker's websockets listener the page is told about.
        ws = Client(broker, d["user"], d["pass"], name=f"page-{uuid.uuid4().hex[:4]}", transport="websockets",
                    port=broker.websockets_port).connected()
        ws.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert "NO DECK ENROLLED" in err and "no deck enrolled" in err


def test_check_config_warns_of_missing_passwords(capsys, tmp_path) -> None:
    """Issue 27: a config with no MQTT or page passwords loads, but says it will not log in."""
    assert main(["check-config", "--config", str(REPO / "examples" / "table.toml")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "warning: no MQTT password for table-07 ([mqtt] password_file)" in out
    assert "warning: the overlay page has no password for overlay ([web.overlay] password_file)" in out
    secret = tmp_path / "pass"
    secret.write_text("s3cret\n")
    good = tmp_path / "good.toml"
    good.write_text(f'[table]\nid = "t1"\nsize = 6\n[mqtt]\nurl = "mqtt://127.0.0.1:1883"\nusername = "controller"\n'
                    f'password_file = "{secret}"\n[web]\nenabled = false\n')
    assert main(["check-config", "--config", str(good)]) == 0
    assert "warning" not in capsys.readouterr().out
