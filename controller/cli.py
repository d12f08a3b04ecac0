"""``tablectl``: the command line of poker-table-controller.

Subcommands import their heavy parts lazily so ``tablectl scenario`` starts fast and
``controller`` itself never imports a hardware library.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from controller.app.logs import LEVELS as LOG_LEVELS
from controller.errors import MissingExtra

DEFAULT_CONFORMANCE = Path(__file__).resolve().parents[2] / "shared" / "conformance"


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True)


# ---------------------------------------------------------------------- scenario
def cmd_scenario(args: argparse.Namespace) -> int:
    from controller.rules.scenario import check_file, find_scenarios

    paths = args.paths or [str(DEFAULT_CONFORMANCE)]
    files = list(find_scenarios(paths))
    out = _console()
    err = _console(stderr=True)
    passed = failed = 0
    for path in files:
        result = check_file(path)
        if result.passed:
            passed += 1
        else:
            failed += 1
        if args.json:
            print(json.dumps(result.to_dict()), flush=True)
            continue
        if result.passed:
            if args.verbose:
                out.print(f"[green]PASS[/green] {result.name}")
            continue
        out.print(f"[red]FAIL[/red] {result.name} ({path})")
        if result.error:
            out.print(f"    error: {result.error}")
        for line in result.failures:
            out.print(f"    {line}")
    summary = f"{passed} passed, {failed} failed"
    if args.json:
        err.print(summary)
    else:
        out.print(summary)
    if not files:
        err.print("no scenario files found in " + ", ".join(paths))
        return 2
    return 1 if failed else 0


# ---------------------------------------------------------------------- bench
def cmd_bench(args: argparse.Namespace) -> int:
    runners: dict[str, Callable[[argparse.Namespace], dict]] = {
        "engine": _bench_engine,
        "bridge": _bench_bridge,
        "latency": _bench_latency,
        "alert": _bench_alert,
        "equity": _bench_equity,
        "vision": _bench_vision,
        "faults": _bench_faults,
        "table": _bench_table,
        "floor": _bench_floor,
        "budget": _bench_budget,
    }
    with _console(stderr=True).status(f"tablectl bench {args.what}: measuring (the JSON follows on stdout)"):
        result = runners[args.what](args)
    if args.json:
        print(json.dumps(result, indent=None if args.compact else 2))
    else:
        _console().print_json(json.dumps(result))
    return 0


def _bench_engine(args: argparse.Namespace) -> dict:
    from controller.bench.engine import run_bench

    return run_bench(hands=args.hands or 2000, seed=args.seed)


def _bench_bridge(args: argparse.Namespace) -> dict:
    from firmware_bridge.bench import run_bench

    return run_bench(cards=args.cards or 10000)


def _bench_latency(args: argparse.Namespace) -> dict:
    from controller.bench.latency import run_bench

    err = _console(stderr=True)
    return run_bench(cards=args.cards or 10000, progress=lambda msg: err.print(f"[dim]bench latency: {msg}[/dim]"))


def _bench_alert(args: argparse.Namespace) -> dict:
    from controller.bench.alert import run_bench

    return run_bench(runs=args.runs or 30)


def _bench_budget(args: argparse.Namespace) -> dict:
    from controller.bench.budget import run_bench

    err = _console(stderr=True)
    return run_bench(hands=args.hands or 2, seed=args.seed,
                     progress=lambda msg: err.print(f"[dim]bench budget: {msg}[/dim]"))


def _bench_equity(args: argparse.Namespace) -> dict:
    from controller.bench.equity import run_bench

    return run_bench()


def _bench_faults(args: argparse.Namespace) -> dict:
    from controller.bench.faults import run_bench

    err = _console(stderr=True)
    schedule = [f for f in (args.schedule or "").split(",") if f] or None
    return run_bench(hands=args.hands or 60, seed=args.seed, schedule=schedule,
                     progress=lambda msg: err.print(f"[dim]bench faults: {msg}[/dim]"))


def _bench_floor(args: argparse.Namespace) -> dict:
    from controller.bench.floor import run_bench

    return run_bench(tables=args.tables or 50)


def _bench_table(args: argparse.Namespace) -> dict:
    from controller.bench.table import run_bench

    err = _console(stderr=True)
    if args.chip:  # the firmware on the chip's own binary (rp2040js), in the chip's time
        from controller.bench.table_chip import run_bench as run_chip_bench

        return run_chip_bench(hands=3 if args.hands is None else args.hands, fw_dir=args.firmware,
                              compiled=args.mpy, board=args.board_config or "", seed=args.seed,
                              minutes=args.minutes, session_only=args.session_only,
                              own_session=not args.emulator_beside_host, pace=args.dealer_pace,
                              progress=lambda msg: err.print(f"[dim]bench table: {msg}[/dim]"))
    if args.host:  # the host's part alone, stage by stage (the protocol emulator as the board)
        from controller.bench.table_host import run_bench as run_host_bench

        return run_host_bench(hands=args.hands or 12, seed=args.seed,
                              progress=lambda msg: err.print(f"[dim]bench table: {msg}[/dim]"))
    return run_bench(hands=args.hands or 12, seed=args.seed, fw_dir=args.firmware,
                     progress=lambda msg: err.print(f"[dim]bench table: {msg}[/dim]"))


def _bench_vision(args: argparse.Namespace) -> dict:
    if args.real:  # real photos labelled in YOLO format: right / unknown / wrong per card
        from vision.bench import run_real_bench

        return run_real_bench(args.real)
    from vision import run_bench

    return run_bench()


# ---------------------------------------------------------------------- camera
def cmd_recognize(args: argparse.Namespace) -> int:
    """One JSON line per card found: {"file", "card", "confidence", "box"}; card null when unknown."""
    from vision import recognize_files

    worst = 0
    for found in recognize_files(args.images):
        if "error" in found:
            worst = 1
        if args.json:
            print(json.dumps(found), flush=True)
        else:
            card = found["card"] or "unknown"
            _console().print(f"{found['file']}: {card} ({found['confidence']:.2f}) {found.get('box')}")
    return worst


def cmd_calibrate_camera(args: argparse.Namespace) -> int:
    """Reference images of the deck in play: lay each card face up under the camera (or take
    labelled crops from photos of the deck, ``--photos``); then teach the recogniser the deck."""
    from vision import LabelStore, Recognizer, capture_reference
    from vision.labels import default_label_dir

    store = LabelStore(args.store or default_label_dir())  # where the camera source finds the deck in play
    console = _console()
    if args.photos:
        from vision.labels import import_yolo

        got = import_yolo(args.photos, store, per_rank=args.per_rank)
        console.print(f"stored {got['crops']} labelled crops from {got['photos']} photos: {got['per_rank']}")
        report = store.refine(Recognizer.stock())
        report.pop("recognizer", None)
        console.print_json(json.dumps(report, default=str))
        return 0 if got["crops"] else 1
    from hw.camera.opencv import OpenCVCamera

    camera = OpenCVCamera(args.device)

    def prompt(card) -> None:
        console.print(f"Lay [bold]{card.face}[/] face up under the camera, then press Enter.")
        if not args.no_wait:
            input()

    try:
        result = capture_reference(camera.grab, store, prompt=prompt, shots=args.shots)
    finally:
        camera.close()
    console.print(f"captured {sum(result['captured'].values())} crops; missing: {result['missing'] or 'none'}")
    report = store.refine(Recognizer.stock())
    console.print_json(json.dumps(report, default=str))
    return 0 if not result["missing"] else 1


# ---------------------------------------------------------------------- enroll
def cmd_enroll(args: argparse.Namespace) -> int:
    """Register an RFID deck: 52 cards in a fixed order on one reader (RRoP s3 Irregularities 3:
    the engine must know every back in play)."""
    from controller.app.enrollment import enroll_cli, line_reads
    from controller.app.paths import registry_path

    args.registry = args.registry or str(registry_path())
    console = _console()
    if args.nfc:
        from hw.nfc.reader import NfcReader, NfcReaderConfig

        with NfcReader(NfcReaderConfig("enroll", path=args.nfc)) as reader:
            return enroll_cli(args, reader.reads(), console)
    if args.serial:
        from firmware_bridge.link import BridgeLink

        with BridgeLink(args.serial) as link:
            if not link.wait_synced(10):
                console.print(f"[red]error:[/red] no antenna controller answered on {args.serial}")
                return 2
            console.print(f"Tap each card on antenna {args.antenna}, then lift it.")
            return enroll_cli(args, _antenna_reads(link, args.antenna), console)
    console.print("Reading tag UIDs from standard input, one per line (a keyboard-wedge reader, or typed).")
    return enroll_cli(args, line_reads(sys.stdin), console)


# ---------------------------------------------------------------------- run
def cmd_run(args: argparse.Namespace) -> int:
    """The daemon (systemd runs this): config, registry and journal errors name the problem,
    print no traceback and change nothing."""
    from controller.app.config import ConfigError, load_config
    from controller.app.logs import setup_logging

    setup_logging(args.log, args.log_level)
    err = _console(stderr=True)
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        err.print(f"[red]configuration error[/red]\n{exc}")
        return 2
    from controller.app.daemon import Daemon
    from controller.app.paths import registry_path
    from controller.errors import PokerTableError
    from controller.journal import JournalError
    from controller.rules.decks import DeckRegistry, RegistryError

    try:
        registry = DeckRegistry.load(args.registry or registry_path())
    except RegistryError as exc:
        err.print(f"[red]deck registry error[/red]: {exc}")
        return 2
    if not registry.decks:
        err.print("[bold red]warning: no deck enrolled[/bold red]: every tag will read as unknown; "
                  "enrol one with `tablectl enroll --deck A ...` (INSTALL.md step 2)")
    backends = {"serial": args.serial} if args.serial else None
    daemon = Daemon(config, registry=registry, backends=backends)
    try:
        daemon.start()
    except JournalError as exc:
        daemon.stop()
        err.print(f"[red]journal error[/red]: {exc}\n(the journal is {config.journal.path}; "
                  "check its folder is writable by the daemon, or move a damaged file aside)")
        return 2
    except PokerTableError as exc:  # a device that cannot start (e.g. no GPIO pin factory): say why, no traceback
        daemon.stop()
        from rich.markup import escape

        err.print(f"[red]cannot start[/red]: {escape(str(exc))}")
        return 2
    web = None
    try:
        web = _serve_pages(config, err)
        return daemon.run_forever()
    finally:
        if web is not None:
            web.stop()


def _serve_pages(config, err: Console):
    """The display and the overlay, each on its own port with its own login (config [web])."""
    import logging

    from controller.app.webserver import DEFAULT_ROOT, PageServers

    w = config.web
    pages = w.pages()
    if not pages:
        return None
    page_cfg: dict = {"table": config.table.id, "base": config.mqtt.base_topic}
    if w.ws:
        page_cfg["ws"] = w.ws
    for name, page in pages.items():
        login = {"user": page.user} if page.user else {}
        password = page.read_password()
        if password:
            login["pass"] = password
        page_cfg[name] = login
    try:
        # A port still held (a restart while its predecessor lets go of it) is tried again, every second.
        servers = PageServers(w.root or DEFAULT_ROOT, page_cfg, {n: (p.host, p.port) for n, p in pages.items()},
                              retry_every=1.0)
    except (OSError, ValueError) as exc:
        # The table runs without its pages rather than not at all; loudly.
        logging.getLogger("controller.web").error("the pages are not served: %s", exc)
        err.print(f"[bold red]the pages are not served[/bold red]: {exc}")
        return None
    for name in pages:
        if name not in servers.waiting:
            logging.getLogger("controller.web").info("serving the %s page on %s", name, servers.page_url(name),
                                                     extra={"page": name, "url": servers.page_url(name)})
    return servers


def cmd_check_config(args: argparse.Namespace) -> int:
    """Load and check a config file the way ``run`` does, start nothing, print a summary."""
    from controller.app.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        _console(stderr=True).print(f"[red]configuration error[/red]\n{exc}")
        return 2
    out = _console()
    t = config.table
    out.print(f"{args.config}: ok")
    out.print(f"table {t.id}: {t.size} seats, {t.game} ({t.effective_structure}), rules {t.rules}, {t.event}, "
              f"deck {t.deck}")
    out.print(f"mqtt {config.mqtt.url} as {config.mqtt.username or '(anonymous)'}, topics "
              f"{config.mqtt.base_topic}/{t.id}/..., broadcast delay {config.broadcast.delay}")
    out.print(f"journal {config.journal.path} (sync {config.journal.sync}); {len(config.antennas)} antennas; "
              f"serial {serial.port if (serial := config.source('serial')).enabled else 'off'}; "
              f"gpio {'on' if config.source('gpio').enabled else 'off'}; "
              f"camera {'on' if config.source('camera').enabled else 'off'}")
    for name, page in config.web.pages().items():
        out.print(f"{name} page on http://{page.host}:{page.port}/{name}/ as {page.user or '(no login)'}")
    from rich.markup import escape

    for warning in _config_warnings(config):
        out.print(f"[yellow]warning[/yellow]: {escape(warning)}")
    return 0


def _config_warnings(config) -> list[str]:
    """What loads but will not work with the shipped Mosquitto config (passwords required, no
    anonymous login): a missing MQTT password, a page with no login or no password."""
    out = []
    m = config.mqtt
    if not m.username:
        out.append("no MQTT login ([mqtt] username): the shipped Mosquitto config refuses anonymous clients")
    elif m.password is None and m.password_file is None:
        out.append(f"no MQTT password for {m.username} ([mqtt] password_file): the broker will refuse the controller")
    for name, page in config.web.pages().items():
        if not page.user:
            out.append(f"the {name} page has no broker login ([web.{name}] user): it can only show what an "
                       "anonymous client may read, nothing with the shipped ACL")
        elif page.password_file is None:
            out.append(f"the {name} page has no password for {page.user} ([web.{name}] password_file): "
                       "its users must type it in the page's address (?pass=...)")
    return out


# ---------------------------------------------------------------------- replay / export
def _load_config_or_exit(path: str):
    from controller.app.config import ConfigError, load_config

    try:
        return load_config(path)
    except ConfigError as exc:
        _console(stderr=True).print(f"[red]configuration error[/red]\n{exc}")
        raise SystemExit(2) from None


def cmd_replay(args: argparse.Namespace) -> int:
    """Rebuild the table from its journal, exactly as a restart does, and show the hands."""
    from controller.journal import Journal, JournalError
    from controller.rules.table import Table
    from controller.service import TableService
    from controller.service.results import AlertRaised

    config = _load_config_or_exit(args.config)
    path = Path(args.journal or config.journal.path)
    err = _console(stderr=True)
    if not path.is_file():
        # Never create one: a replay of nothing is a mistake (a wrong --journal or config).
        err.print(f"[red]journal error[/red]: no journal at {path}")
        return 2
    try:
        journal = Journal(path)
    except JournalError as exc:
        err.print(f"[red]journal error[/red]: {exc}")
        return 2
    with journal:
        service = TableService(Table(**config.table_kwargs()))
        alerts: list[AlertRaised] = []
        try:
            for output in service.replay(journal.entries()):
                if isinstance(output.result, AlertRaised):
                    alerts.append(output.result)
        except JournalError as exc:
            err.print(f"[red]journal error[/red]: {exc}")
            return 2
        hands = journal.hands()
        chain = journal.verify_chain()  # tamper evidence: where the hash chain breaks, if it does
        status = 0 if chain.ok else 1
        if args.json:
            print(json.dumps({"events": journal.last_seq, "hands": [
                {"hand_id": h.hand_id, "game": h.setup.game, "rules": h.setup.rules, "seq": [h.first_seq, h.last_seq],
                 "outcome": h.outcome} for h in hands], "state": service.public_state(),
                "chain": chain.to_dict()}, default=str))
            return status
        out = _console()
        if chain.ok:
            unchained = f" ({chain.unchained} older entries predate the chain)" if chain.unchained else ""
            out.print(f"hash chain verified: {chain.chained} entries{unchained}; head {chain.head or '-'}")
        else:
            err.print(f"[bold red]hash chain BROKEN at seq {chain.broken_at}[/bold red]: {chain.reason} "
                      f"({chain.chained} entries before it verified)")
        out.print(f"{journal.last_seq} events, {len(hands)} completed hands, {len(alerts)} rulings")
        from rich.markup import escape

        from controller.hand_result import result_words

        for h in hands:
            rulings = ", ".join(r["reason"] for r in h.outcome.get("rulings", [])) or "clean"
            out.print(f"hand {h.hand_id:>4}  {h.setup.game:<16} {h.outcome.get('result', '?'):<12} {rulings}"
                      f"  {escape(result_words(h.outcome))}")
        state = service.public_state()
        if state["hand"] is not None and state["hand"]["phase"] not in ("done", "dead"):
            out.print(f"in progress: hand {state['hand_id']}, street {state['hand']['street']}, "
                      f"next card to seat {state['hand']['next_seat']}, to act {state['hand']['to_act']}")
    return status


def cmd_export(args: argparse.Namespace) -> int:
    from controller.extras import require
    from controller.journal import Journal
    from controller.phh import export_phh

    require("pokerkit", "phh", "tablectl export --phh")

    config = _load_config_or_exit(args.config)
    path = Path(args.journal or config.journal.path)
    if not path.is_file():
        _console(stderr=True).print(f"[red]journal error[/red]: no journal at {path}")
        return 2
    with Journal(path) as journal:
        target = sys.stdout if args.output == "-" else args.output
        result = export_phh(journal, target, table=config.table.id)
    err = _console(stderr=True)
    err.print(f"{len(result.exported)} hands exported, {len(result.skipped)} skipped")
    for hand_id, reason in result.skipped:
        err.print(f"  hand {hand_id}: {reason}")
    return 0


# ---------------------------------------------------------------------- demo
def cmd_demo(args: argparse.Namespace) -> int:
    from controller.demo.table import run_console_demo, run_table_demo
    from controller.mqtt.broker import mosquitto_available

    if args.console or not mosquitto_available():
        if not args.console:
            _console(stderr=True).print("mosquitto is not installed (scripts/bootstrap installs it): "
                                        "running the terminal demo without broker and displays")
        stats = run_console_demo(hands=args.hands, seed=args.seed, delay=args.delay, mistake_rate=args.mistakes,
                                 games=args.game, rules=args.rules)
    else:
        from controller.demo.lifecycle import DemoError

        try:
            stats = run_table_demo(hands=args.hands, seed=args.seed, pace=args.pace, mistake_rate=args.mistakes,
                                   ws_port=args.ws_port, http_port=args.http_port,
                                   broadcast_delay=args.broadcast_delay, dead_tags=args.dead_tags,
                                   games=args.game, rules=args.rules)
        except DemoError as exc:
            _console(stderr=True).print(f"[red]the demo cannot start[/red]: {exc}")
            return 2
    return 0 if stats.ok else 1


def _antenna_reads(link, antenna: int):
    """Tag UIDs arriving on one antenna of the bridge, one per tap (until Ctrl-C)."""
    import queue

    while True:
        try:
            change = link.changes.get(timeout=0.5)
        except queue.Empty:
            continue
        if change.arrived and change.antenna == antenna:
            yield change.uid


# ---------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    from controller import __version__

    parser = argparse.ArgumentParser(prog="tablectl", description="poker-table-controller command line")
    parser.add_argument("--version", action="version", version=f"tablectl {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("scenario", help="check the engine against conformance scenarios")
    p.add_argument("--check", action="store_true", help="replay and compare (the default and only mode)")
    p.add_argument("--json", action="store_true", help="one JSON object per scenario on stdout")
    p.add_argument("-v", "--verbose", action="store_true", help="also list passing scenarios")
    p.add_argument("paths", nargs="*", help="scenario files or folders (recursive)")
    p.set_defaults(func=cmd_scenario)

    p = sub.add_parser("bench", help="benchmarks printing JSON")
    p.add_argument("what", choices=["engine", "bridge", "latency", "alert", "equity", "vision", "table", "faults",
                                    "floor", "budget"], help="which benchmark to run")
    p.add_argument("--tables", type=int, default=None, help="floor: tables in the room (default 50)")
    p.add_argument("--json", action="store_true", help="plain JSON on stdout")
    p.add_argument("--compact", action="store_true", help="one-line JSON")
    p.add_argument("--hands", type=int, default=None,
                   help="engine, faults, table: hands to deal (table --chip: 3); budget: hands at the shuffler's pace")
    p.add_argument("--cards", type=int, default=None, help="bridge: cards to move")
    p.add_argument("--runs", type=int, default=None, help="alert: repeated runs")
    p.add_argument("--real", default=None, metavar="DIR", help="vision: score real photos of a YOLO-labelled folder")
    p.add_argument("--seed", type=int, default=1, help="random seed (the same seed replays the same run)")
    p.add_argument("--schedule", default=None, help="faults: the hands' faults in turn, e.g. stall,corrupt,retained")
    p.add_argument("--firmware", default=None, help="table: the firmware folder to run (default: the shipped one)")
    p.add_argument("--chip", action="store_true", help="table: on the RP2040's own binary (rp2040js), in chip time")
    p.add_argument("--host", action="store_true", help="table: the host's part alone, per stage (no firmware)")
    p.add_argument("--mpy", action="store_true", help="table --chip: the modules precompiled with mpy-cross")
    p.add_argument("--board-config", default=None, help="table --chip: lines for board_config.py ('PIPELINE = 5')")
    p.add_argument("--minutes", type=float, default=None,
                   help="table --chip: deal no new hand after this many wall minutes (the session is scored)")
    p.add_argument("--session-only", action="store_true",
                   help="table --chip: the dealt session without the micro-measures")
    p.add_argument("--emulator-beside-host", action="store_true",
                   help="table --chip: the emulator in the bench's scheduling group (faster where Linux groups by "
                        "session; the host's part then waits behind it)")
    p.add_argument("--dealer-pace", type=float, default=1.0,
                   help="table --chip: the dealer's pauses times this in chip time (0.5: twice as quick; the "
                        "settles that let the flop and the leaves be read stay), for a long run's hands")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("recognize", help="read the cards in image files (camera fallback)")
    p.add_argument("images", nargs="+", help="image files (PNG, JPEG ...)")
    p.add_argument("--json", action="store_true", help="one JSON line per card found")
    p.set_defaults(func=cmd_recognize)

    p = sub.add_parser("calibrate-camera", help="capture reference images of the deck in play")
    p.add_argument("--device", default="0", help="camera index or /dev/videoN")
    p.add_argument("--store", default=None, help="label store folder (default: the camera's, in the cache folder)")
    p.add_argument("--shots", type=int, default=3, help="crops captured per card")
    p.add_argument("--no-wait", action="store_true", help="do not wait for Enter between cards")
    p.add_argument("--photos", default=None, metavar="DIR", help="labelled photos of the deck (YOLO folder), no camera")
    p.add_argument("--per-rank", type=int, default=5, help="with --photos: labelled cards per rank to take")
    p.set_defaults(func=cmd_calibrate_camera)

    p = sub.add_parser("run", help="the daemon: serve the table from a config file")
    p.add_argument("--config", required=True, help="the table's TOML config")
    p.add_argument("--registry", default=None, help="deck registry (default: the state directory's decks.json)")
    p.add_argument("--serial", default=None, help="override the serial port (e.g. socket://127.0.0.1:7000)")
    p.add_argument("--log", default="auto", choices=["auto", "journald", "json", "console"],
                   help="where logs go (auto: journald under systemd, a console on a terminal, else JSON lines)")
    p.add_argument("--log-level", default="info", choices=LOG_LEVELS, help="the least severe level logged")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("check-config", help="check a config file as run would, start nothing")
    p.add_argument("--config", required=True, help="the table's TOML config")
    p.set_defaults(func=cmd_check_config)

    p = sub.add_parser("replay", help="rebuild the table from its journal, verify its hash chain (exit 1 where it "
                                      "breaks) and list the hands")
    p.add_argument("--config", required=True, help="the table's TOML config")
    p.add_argument("--journal", default=None, help="default: the config's journal path")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("export", help="export completed hands as hand histories")
    p.add_argument("--phh", action="store_true", required=True, help="PHH format (PokerKit reads it)")
    p.add_argument("--config", required=True, help="the table's TOML config")
    p.add_argument("--journal", default=None, help="default: the config's journal path")
    p.add_argument("output", help="a folder (one .phh per hand; made if missing), a .phhs file, or - for stdout")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("demo", help="a simulated table: realistic hands with the occasional dealer mistake")
    p.add_argument("--hands", type=int, default=0, help="hands to deal (0: until Ctrl-C)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: a new one each run)")
    p.add_argument("--mistakes", type=float, default=0.25, help="share of hands with a dealer mistake")
    p.add_argument("--pace", type=float, default=0.4,
                   help="seconds before each of the dealer's moves, on top of waiting for the table to take the "
                   "last (the pause between hands and the time to read an alert scale with it)")
    p.add_argument("--ws-port", type=int, default=9001, help="the broker's websockets port for the pages (0: any)")
    p.add_argument("--http-port", type=int, default=8080,
                   help="the display page's port; the overlay's is the next one (0: any)")
    p.add_argument("--broadcast-delay", type=int, default=5, help="seconds before the overlay may show a hand")
    p.add_argument("--dead-tags", type=float, default=0.1,
                   help="share of board cards whose tag does not read (the camera fills them in)")
    from controller.rules.games import GAMES
    from controller.sim.dealer import PROFILES

    p.add_argument("--game", action="append", choices=list(GAMES), default=None, metavar="GAME",
                   help=f"deal only this game (repeat for several; default: every game in turn): {', '.join(GAMES)}")
    p.add_argument("--rules", choices=list(PROFILES), default=None,
                   help="deal under this rule profile only (default: a different one each hand)")
    p.add_argument("--console", action="store_true", help="terminal only: the engine without broker or pages")
    p.add_argument("--delay", type=float, default=0.15, help="--console: seconds between events")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("enroll", help="register an RFID deck by scanning its 52 cards in order")
    p.add_argument("--deck", required=True, help="deck id (its back), e.g. A")
    p.add_argument("--back", default="", help="a description of the back, e.g. 'red Copag'")
    p.add_argument("--registry", default=None, help="deck registry file (default: the state directory)")
    p.add_argument("--replace", action="store_true", help="re-enroll a deck that is already registered")
    p.add_argument("--nfc", metavar="PATH", default=None, help="nfcpy reader path, e.g. usb or tty:USB0:pn532")
    p.add_argument("--serial", metavar="PORT", default=None, help="the antenna controller's port (or socket://)")
    p.add_argument("--antenna", type=int, default=0, help="with --serial: the antenna to tap the cards on")
    p.set_defaults(func=cmd_enroll)

    __import__("controller.floor.cli", fromlist=["add_parser"]).add_parser(sub)  # tablectl floor (issue 18)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:  # bare `tablectl`: say what it can do
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except MissingExtra as exc:
        _console(stderr=True).print(f"[red]not installed[/red]: {escape(str(exc))}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
