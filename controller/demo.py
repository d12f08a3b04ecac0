"""``tablectl demo --console``: a simulated table in the terminal.

A dealer simulator (:mod:`controller.dealer_sim`) deals realistic hands of every game
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
from dataclasses import dataclass

from rich.console import Console
from rich.panel import Panel
from rich.table import Table as RichTable

from controller import dealer_sim
from controller.events import StartHand
from controller.games import GAMES
from controller.scenario import Scenario
from controller.service import TableService
from controller.table import Table


@dataclass
class DemoStats:
    hands: int = 0
    events: int = 0
    mistakes: int = 0
    caught: int = 0
    rulings: Counter | None = None


def _hand_dict(rng: random.Random, game: str, mistake_rate: float) -> tuple[dict, bool]:
    hand = dealer_sim.legal_hand(rng, game=game)
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
                     console: Console | None = None) -> DemoStats:
    """Deal ``hands`` hands (0: until interrupted); returns what happened."""
    console = console or Console(highlight=False)
    rng = random.Random(seed)
    stats = DemoStats(rulings=Counter())
    games = list(GAMES)
    n = 0
    while hands == 0 or n < hands:
        game = games[n % len(games)]
        data, mistake = _hand_dict(rng, game, mistake_rate)
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
                if out.kind == "alert":
                    raised += 1
                    a = out.payload
                    stats.rulings[a["reason"]] += 1
                    body = RichTable.grid(padding=(0, 1))
                    body.add_row("[bold]" + a["message"] + "[/]")
                    for i, step in enumerate(a["steps"], 1):
                        body.add_row(f"{i}. {step}")
                    body.add_row("[dim]" + "; ".join(a["citations"]) + "[/]")
                    style = "red" if a["ruling"] in ("misdeal", "void") else "yellow"
                    label = a["ruling"].upper() + ": " + a["reason"] + (f" -> {a['remedy']}" if a["remedy"] else "")
                    console.print(Panel(body, title=label, border_style=style))
            if delay:
                console.print(f"  [dim]{event.kind:<7}[/] {_seats_line(svc)}")
                time.sleep(delay)
        if mistake and raised:
            stats.caught += 1
        end = svc.engine.showdown() if svc.engine is not None else None
        if end is not None:
            console.print(f"  [green]{end.describe()}[/]")
    console.rule("demo over")
    console.print(f"{stats.hands} hands, {stats.events} events, {stats.mistakes} dealer mistakes, "
                  f"{stats.caught} caught; rulings: {dict(stats.rulings)}")
    return stats
