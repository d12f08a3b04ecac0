"""``tablectl demo --console``: a simulated table in the terminal.

A dealer simulator (:mod:`controller.sim.dealer`) deals realistic hands of every game
under both rule profiles and now and then makes a mistake (a card to the wrong seat,
an exposed card, a premature flop...).  Each hand goes through a :class:`TableService`
exactly as the daemon would run it, and the terminal shows what the dealer's display
shows: the next seat to get a card, whose turn it is, the board, and every ruling with
its remedy and citations.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from rich.console import Console
from rich.panel import Panel
from rich.table import Table as RichTable

from controller.hand_result import result_words
from controller.rules.cards import Card
from controller.rules.events import StartHand
from controller.rules.games import GAMES
from controller.rules.scenario import Scenario
from controller.rules.table import Table
from controller.service import TableService
from controller.service.results import AlertRaised, HandEnded
from controller.sim import dealer as dealer_sim

# The games the demo deals in turn: all but 2-7 triple draw (issue 22 added it as game data; the
# demo's emulated dealer is not yet proven on three draws through the antennas under load).
DEMO_GAMES = tuple(g for g in GAMES if g != "triple_draw_27")


@dataclass
class DemoStats:
    hands: int = 0
    events: int = 0
    mistakes: int = 0
    caught: int = 0
    dead_tags: int = 0
    rulings: Counter[str] = field(default_factory=Counter)
    false_alarms: int = 0  # hands dealt with no mistake that raised an alert anyway

    @property
    def ok(self) -> bool:
        """Every mistake caught, and nothing raised where there was none."""
        return self.caught == self.mistakes and self.false_alarms == 0

    def judge(self, mistake: bool, raised: bool) -> None:
        """One hand's verdict, the same for both demos: an alert on a hand dealt with a mistake
        caught it; one on a hand dealt with none is a false alarm."""
        if raised and mistake:
            self.caught += 1
        elif raised:
            self.false_alarms += 1


def _hand_dict(rng: random.Random, game: str, mistake_rate: float, rules: str | None = None) -> tuple[dict, bool]:
    hand = dealer_sim.legal_hand(rng, game=game, rules=rules, chips=True)
    if rng.random() < mistake_rate:
        bad = dealer_sim.corrupt(rng, hand)
        if bad is not None:
            return bad, True
    return hand, False


def _seats_line(svc: TableService) -> str:
    state = svc.public_state()["hand"]
    if state is None:
        return ""
    parts = []
    for seat, info in state["seats"].items():
        mark = ""
        if int(seat) == state["to_act"]:
            mark = "[bold yellow]>[/]"
        elif int(seat) == state["next_seat"]:
            mark = "[bold cyan]*[/]"
        status = "folded" if info["folded"] else ("dead" if info["dead"] else f"{info['cards']}c")
        up = (" " + " ".join(info["up"])) if info["up"] else ""
        parts.append(f"{mark}{seat}:{status}{up}")
    board = " ".join(state["board"]) or "-"
    return f"{state['street']:<8} board {board:<16} " + "  ".join(parts)


def run_console_demo(hands: int = 0, seed: int | None = None, delay: float = 0.15, mistake_rate: float = 0.25,
                     console: Console | None = None, games: list[str] | None = None,
                     rules: str | None = None) -> DemoStats:
    """Deal ``hands`` hands (0: until interrupted); returns what happened."""
    console = console or Console(highlight=False)
    rng = random.Random(seed)
    stats = DemoStats()
    games = games or list(DEMO_GAMES)
    n = 0
    while hands == 0 or n < hands:
        game = games[n % len(games)]
        data, mistake = _hand_dict(rng, game, mistake_rate, rules)
        scenario = Scenario.from_dict(data)
        setup = scenario.setup
        svc = TableService(Table(size=setup.table_size, game=setup.game, rules=setup.rules, event=setup.event))
        svc.submit(StartHand(setup), source="demo")
        n += 1
        stats.hands += 1
        stats.mistakes += mistake
        title = (f"hand {n}: {GAMES[setup.game].title} ({scenario.setup.structure}), "
                 f"{setup.rules} {setup.event}, seats {list(setup.seats)}"
                 + (f", button {setup.button}" if setup.button else ""))
        console.rule(title)
        raised = 0
        for event in scenario.events:
            outputs = svc.submit(event, source="demo")
            stats.events += 1
            for out in outputs:
                if isinstance(out.result, AlertRaised):
                    raised += 1
                    a = out.result
                    stats.rulings[a.reason] += 1
                    body = RichTable.grid(padding=(0, 1))
                    body.add_row("[bold]" + a.message + "[/]")
                    for i, step in enumerate(a.steps, 1):
                        body.add_row(f"{i}. {step}")
                    body.add_row("[dim]" + "; ".join(a.citations) + "[/]")
                    style = "red" if a.severity in ("misdeal", "void") else "yellow"
                    label = a.severity.upper() + ": " + a.reason + (f" -> {a.remedy}" if a.remedy else "")
                    console.print(Panel(body, title=label, border_style=style))
            if delay:
                console.print(f"  [dim]{event.kind:<7}[/] {_seats_line(svc)}")
                time.sleep(delay)
        stats.judge(mistake, raised > 0)
        end = svc.engine.showdown() if svc.engine is not None else None
        if end is not None:
            console.print(f"  [green]{end.describe()}[/]")
    console.rule("demo over")
    console.print(f"{stats.hands} hands, {stats.events} events, {stats.mistakes} dealer mistakes, "
                  f"{stats.caught} caught, {stats.false_alarms} false alarms; rulings: {dict(stats.rulings)}")
    return stats


# ---------------------------------------------------------------------- the whole table
# Seconds a card lies with no tag read before the camera fills it in (a card it cannot read is an
# alert after twice this).
CAMERA_TAG_TIMEOUT = 1.2
RFID_MISTAKES = (
    "first_card_wrong_seat", "card_to_empty_seat", "seat_dealt_out", "extra_card", "two_extra_cards",
    "premature_flop", "premature_river", "four_card_flop",  # a premature turn is set aside: no antenna
)


def run_table_demo(hands: int = 0, seed: int | None = None, pace: float = 0.4, mistake_rate: float = 0.25,
                   ws_port: int = 0, http_port: int = 0, broadcast_delay: int = 5, dead_tags: float = 0.1,
                   console: Console | None = None, games: list[str] | None = None,
                   rules: str | None = None) -> DemoStats:
    """The real daemon on simulated hardware: a Mosquitto it starts, the antenna emulator on a
    pty, a synthetic camera over the board and seats 1-2, a dealer who moves tags on the
    antennas and presses the console's buttons, the web pages.  A share ``dead_tags`` of the
    board cards carry a dead tag: the camera fills them in.  Prints the topics and the display
    URLs, then deals until ``hands`` are done.  SIGTERM and SIGHUP stop it as Ctrl-C does; a
    broker an earlier demo left behind is stopped, and a port still held is a clear error
    (:mod:`controller.demo.lifecycle`)."""
    from controller.demo import lifecycle

    console = console or Console(highlight=False)
    lifecycle.clean_up_after_earlier_demo(say=lambda text: console.print(f"[yellow]{text}[/]"))
    lifecycle.require_free([("the pages' websockets", ws_port), ("the display page", http_port),
                            ("the overlay page", http_port + 1 if http_port else 0),
                            ("the action tracker", http_port + 2 if http_port else 0)])
    with lifecycle.stop_on_signals():
        try:
            return _run_table_demo(hands, seed, pace, mistake_rate, ws_port, http_port, broadcast_delay, dead_tags,
                                   console, games or list(DEMO_GAMES), rules)
        finally:
            lifecycle.forget()


def _run_table_demo(hands: int, seed: int | None, pace: float, mistake_rate: float, ws_port: int, http_port: int,
                    broadcast_delay: int, dead_tags: float, console: Console, games: list[str],
                    rules: str | None) -> DemoStats:
    import secrets
    import tempfile
    from pathlib import Path

    from controller.app.config import validate_config
    from controller.app.daemon import Daemon
    from controller.app.webserver import HOST, PageServers
    from controller.demo import lifecycle
    from controller.demo.dealer import TableDealer
    from controller.mqtt.broker import Broker
    from controller.rules.decks import DeckRegistry
    from controller.rules.events import Acknowledge, ChangeGame, EndHand, SeatPlayer, UnseatPlayer
    from firmware_bridge.emulator import Emulator
    from firmware_bridge.source import RfidSource
    from firmware_bridge.table_sim import TableLayout, TableSim, enroll_deck

    rng = random.Random(seed)
    repo = Path(__file__).resolve().parents[2]
    conf = (repo / "systemd" / "mosquitto" / "poker-table.conf").read_text()
    acl = (repo / "systemd" / "mosquitto" / "acl").read_text()
    passwords = {role: secrets.token_urlsafe(9) for role in ("controller", "display", "console", "overlay",
                                                                     "producer")}
    work = Path(tempfile.mkdtemp(prefix="tablectl-demo-"))
    deck = enroll_deck("A", seed=0)
    ended: list[dict] = []  # hand_end payloads, as the daemon published them
    registry = DeckRegistry([deck])
    layout = TableLayout.for_games(GAMES, seats=10)
    stats = DemoStats()
    with Broker.start(users=passwords, acl_text=acl, websockets_port=ws_port or 0, config_template=conf) as broker:
        lifecycle.record(broker.pid)
        settings = {
            "camera": {"enabled": True, "fps": 6, "tag_timeout": CAMERA_TAG_TIMEOUT},
            "table": {"id": "demo", "size": 10, "game": "holdem"},
            "stakes": {"small_blind": 1, "big_blind": 2, "ante": 0},
            "mqtt": {"url": f"mqtt://127.0.0.1:{broker.port}"},
            "broadcast": {"delay": broadcast_delay},
            "journal": {"path": str(work / "journal.sqlite")},
            "antennas": layout.zone_map.to_dict(),
        }
        config = validate_config(settings)
        # Beside the journal: `tablectl replay` and `tablectl export --phh` need the table's config.
        import tomli_w

        (work / "config.toml").write_text("# written by tablectl demo\n" + tomli_w.dumps(settings), encoding="utf-8")
        emulator = Emulator(layout.antenna_count, link_path=str(work / "ttyEMU")).start()
        card_of = {bytes.fromhex(uid): card for uid, card in deck.tags.items()}
        slot_of = {a: f"{s.zone.kind}/{s.index}" if s.zone.kind == "board" else f"seat:{s.zone.seat}/{s.index}"
                   for a, s in layout.zone_map.antennas.items()
                   if s.zone.kind == "board" or (s.zone.kind == "seat" and s.zone.seat in (1, 2) and s.index < 2)}
        dead: dict[int, Card] = {}  # antenna -> a card lying there whose tag does not read

        def camera_view() -> dict:
            """What the synthetic camera sees: board cards face up, seats 1-2 hole cards face down."""
            view: dict = {}
            for antenna, uids in emulator.table().items():
                if antenna in slot_of and uids:
                    card = card_of.get(next(iter(uids)))
                    if card is not None:
                        view[slot_of[antenna]] = card if slot_of[antenna].startswith("board") else (card, "down")
            for antenna, card in list(dead.items()):
                if antenna in slot_of:
                    view[slot_of[antenna]] = card
            return view

        from controller.demo.camera import SyntheticTableCamera

        daemon = Daemon(config, registry=registry, mqtt_username="controller", mqtt_password=passwords["controller"],
                        backends={"serial": str(work / "ttyEMU"),
                                  "camera": lambda: SyntheticTableCamera(camera_view, seed=rng.randrange(1000))})
        logs = _log_to_file(work / "demo.log")  # the daemon's log (each ruling too) beside the journal, not here
        daemon.listeners.append(
            lambda outputs: ended.extend(o.payload for o in outputs if isinstance(o.result, HandEnded)))
        daemon.start()
        ws = f"ws://127.0.0.1:{broker.websockets_port}"
        # One server per page: the display's port never hands out the overlay's login.
        web = PageServers(repo / "web", config={
            "ws": ws, "table": "demo", "base": "poker",
            "display": {"user": "console", "pass": passwords["console"]},
            "tracker": {"user": "console", "pass": passwords["console"]},
            "overlay": {"user": "overlay", "pass": passwords["overlay"]},
            "producer": {"user": "producer", "pass": passwords["producer"]},
        }, listen={"display": (HOST, http_port), "overlay": (HOST, http_port + 1 if http_port else 0),
                   "tracker": (HOST, http_port + 2 if http_port else 0),
                   "producer": (HOST, http_port + 3 if http_port else 0)})
        try:
            console.rule("poker-table-controller demo")
            console.print(f"broker      mqtt://127.0.0.1:{broker.port}  (websockets {ws})")
            console.print(f"topics      {daemon.topics.root}/#  (state, event/+, alert, alert/active, "
                          "private/holecards, broadcast/+, request/+)")
            console.print(f"users       display/{passwords['display']}  console/{passwords['console']}  "
                          f"overlay/{passwords['overlay']}")
            console.print(f"[bold]dealer display[/]    {web.page_url('display')}")
            console.print(f"[bold]action tracker[/]    {web.page_url('tracker')}")
            console.print(f"[bold]broadcast overlay[/] {web.page_url('overlay')}   (delay {broadcast_delay} s)")
            console.print(f"[bold]producer's control[/] {web.page_url('producer')}")
            console.print(f"journal     {work / 'journal.sqlite'}  (config {work / 'config.toml'}: "
                          f"tablectl export --phh --config {work / 'config.toml'} hands/)")
            console.print(f"log         {work / 'demo.log'}")
            console.print(f"camera      synthetic, over the board and seats 1-2; {dead_tags:.0%} of board tags dead")
            console.print("Ctrl-C stops.")
            sim = TableSim(layout, deck)
            serial = daemon.sources["serial"]
            assert isinstance(serial, RfidSource)
            zones = serial.pipeline.zones  # where the antennas put each tag
            dealer = TableDealer(
                daemon, emulator, where=zones.where, zone_of=lambda a: layout.zone_map.antennas[a].zone,
                kind_of={a: s.zone.kind for a, s in layout.zone_map.antennas.items()}, card_of=card_of,
                dead_slot=lambda a: a in slot_of and slot_of[a].startswith("board"),
                roll=lambda: rng.random() < dead_tags, dead=dead, pace=pace, console=console)

            n = 0
            seated: set[int] = set()
            while hands == 0 or n < hands:
                game = games[n % len(games)]
                data = dealer_sim.legal_hand(rng, game=game, rules=rules, chips=True)
                mistake = rng.random() < mistake_rate
                if mistake:
                    kinds = list(RFID_MISTAKES)
                    rng.shuffle(kinds)
                    bad = next((b for k in kinds if (b := dealer_sim.corrupt(rng, data, kind=k)) is not None), None)
                    if bad is None:
                        mistake = False  # no mistake the antennas can see fits this hand
                    else:
                        data = bad
                try:
                    plan = sim.plan(data)
                except (KeyError, ValueError) as exc:  # a mistake the antennas cannot stage
                    console.print(f"[dim]skipped a hand the antennas cannot stage: {exc}[/]")
                    continue
                setup = plan.setup
                for seat in sorted(seated - set(setup.seats)):
                    daemon.submit(UnseatPlayer(seat))
                for seat in sorted(set(setup.seats) - seated):
                    daemon.submit(SeatPlayer(seat, f"Player {seat}"))
                seated = set(setup.seats)
                daemon.submit(ChangeGame(setup.game, setup.rules, setup.structure, setup.event))
                daemon.submit(StartHand(setup), source="demo")
                dealer.new_hand()
                n += 1
                stats.hands += 1
                stats.mistakes += mistake
                console.rule(f"hand {n}: {GAMES[setup.game].title}, {setup.rules} {setup.event}, "
                             f"seats {list(setup.seats)}" + (f", button {setup.button}" if setup.button else ""))
                before = len(daemon.service.alerts) if daemon.service else 0
                dealer.play(plan, lambda event: daemon.submit(event, source="console"))
                stats.events, stats.dead_tags = dealer.events, dealer.dead_tags
                time.sleep(1.25 * pace)  # (0.5 s at the demo's pace: a person sees the hand end)
                svc = daemon.service
                if svc is not None and svc.engine is not None and not svc.engine.over:
                    daemon.submit(EndHand(), source="console")  # the dealer pushes the pot
                if hands and n == hands:
                    # The camera's verdicts come on its own time-outs (a card with no tag read: twice
                    # the tag time-out); the last hand's are waited for, or the verdict could miss one.
                    time.sleep(2 * CAMERA_TAG_TIMEOUT + 0.5)
                if svc is not None:
                    for alert in list(svc.alerts)[before:]:
                        a = alert.payload()
                        stats.rulings[a["reason"]] += 1
                        label = a["ruling"] or "fault"
                        console.print(f"  [{'red' if label in ('misdeal', 'void') else 'yellow'}]{label}: "
                                      f"{a['message']}[/]  [dim]{'; '.join(a['citations'])}[/]")
                    for result in ended:
                        console.print(f"  [green]result: {result_words(result)}[/]")
                    ended.clear()
                    stats.judge(mistake, len(svc.alerts) > before)
                    if svc.alerts:
                        time.sleep(5 * pace)  # he reads the alert (2 s at the demo's pace), then acknowledges it
                    while svc.alerts:
                        daemon.submit(Acknowledge())
        except KeyboardInterrupt:
            pass
        finally:
            web.stop()
            daemon.stop()
            emulator.stop()
            logs()
    console.rule("demo over")
    console.print(f"{stats.hands} hands, {stats.mistakes} dealer mistakes, {stats.caught} caught, "
                  f"{stats.false_alarms} false alarms, {stats.dead_tags} dead tags filled in by the camera; "
                  f"rulings: {dict(stats.rulings)}")
    return stats


def _log_to_file(path) -> Callable[[], None]:
    """Send the process's log records to ``path`` (errors still reach the terminal); returns the undo."""
    import logging

    root = logging.getLogger()
    to_file = logging.FileHandler(path, encoding="utf-8")
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    errors = logging.StreamHandler()
    errors.setLevel(logging.ERROR)
    level = root.level
    root.addHandler(to_file)
    root.addHandler(errors)
    root.setLevel(logging.INFO)

    def undo() -> None:
        root.removeHandler(to_file)
        root.removeHandler(errors)
        root.setLevel(level)
        to_file.close()

    return undo
