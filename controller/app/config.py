"""The daemon's configuration: one TOML file, validated before anything starts.

``load_config(path)`` reads the file with :mod:`tomllib`, checks it with pydantic
models (unknown keys are errors) and returns a frozen :class:`Config`, or raises
:class:`ConfigError` listing every problem, one per line, each naming its key::

    table.toml: mqtt.port: Input should be less than or equal to 65535
    table.toml: antennas.7: 'seat:12' is not a zone on a 9-seat table

Loading is a pure function: it opens no device, creates no folder and touches no
journal, so a broken file changes nothing (the daemon keeps running on the old
config, or refuses to start).  Relative file names in the file (journal, TLS files,
password file) are relative to the config file's folder.

Sections (see ``examples/table.toml`` for a commented, complete example):

``[table]``      id (MQTT-safe), size 2..10, game, structure, rules, event, deck
``[stakes]``     small_blind, big_blind, ante, bb_ante, straddle, bring_in, small_bet, big_bet,
                 raise_cap, starting_stack -- the ones the game and structure use are required
                 when the section is given; with starting_stack every seated player's chips are
                 counted (stacks, bets, pots: controller.rules.chips)
``[[levels]]``   a tournament's level schedule: small_blind, big_blind, ante, bb_ante,
                 bring_in, small_bet, big_bet, minutes; a new level takes effect with the next
                 hand once its clock has run out (or on request/level), never mid-hand
``[antennas]``   antenna number -> slot (:mod:`controller.geometry`): ``seat:N/slot``, ``board/K``,
                 ``burn``, ``muck``, ``shoe`` (slots count from 0; ``seat:N:slot`` is read too)
``[serial]``     the antenna controller: port (device path or ``socket://host:port``), baudrate
``[gpio]``       enabled, and ``[gpio.pins]`` (``hw.gpio.config``: the panel's wiring, checked without gpiozero)
``[nfc]``        readers = [{zone, path}, ...], badges = {uid = "dealer"} (dealers sign in by NFC badge)
``[mqtt]``       url (``mqtt://`` or ``mqtts://``), base_topic, credentials, ``[mqtt.tls]``, keepalive
``[broadcast]``  delay: seconds (int >= 0) or ``"end_of_hand"`` for hole cards; min_delay and max_delay:
                 the range the producer may set live (seconds)
``[journal]``    path, sync
``[camera]``     enabled
``[room]``       name, resend_grace: the room this table belongs to (leave it out for a table in no room)
``[web]``        the pages ``tablectl run`` serves: ``[web.display]``, ``[web.overlay]``, ``[web.tracker]``,
                 ``[web.producer]`` (off unless enabled) (host, port,
                 the broker login each page gets), the broker's websockets URL
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    StrictBool,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from controller.app.paths import state_dir
from controller.errors import PokerTableError
from controller.geometry import Slot, ZoneError, ZoneMap
from controller.rules.games import GAMES, STRUCTURES, Family, get_game
from controller.rules.profiles import ProfileError, get_profile
from controller.rules.rotations import ROTATIONS, Rotation, RotationError, rotation_from_mapping
from controller.sources import KeyedProblems, SourcePlugin, in_start_order, plugin, plugin_names

SAFE_ID = r"^[A-Za-z0-9_-]+$"


class ConfigError(PokerTableError, ValueError):
    """The config is unusable; :attr:`problems` has one ``key: problem`` line each."""

    def __init__(self, problems: list[str], source: str | None = None) -> None:
        self.problems = list(problems)
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__("\n".join(prefix + p for p in self.problems))


# ---------------------------------------------------------------------- zones
def _parse_slot(value: Any) -> Slot:
    try:
        return value if isinstance(value, Slot) else Slot.parse(value)
    except ZoneError as exc:
        raise ValueError(str(exc)) from None


#: An antenna's slot in the config: written ``seat:3/1``, ``board/2``, ``burn`` (or ``seat:3:1``).
AntennaSlot = Annotated[Slot, PlainValidator(_parse_slot), PlainSerializer(str, return_type=str)]


# ---------------------------------------------------------------------- sections
class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _resolve(path: Path, info: ValidationInfo) -> Path:
    base = (info.context or {}).get("base_dir")
    path = path.expanduser()
    if base is not None and not path.is_absolute():
        path = Path(base) / path
    return path


def _existing_file(path: Path | None, info: ValidationInfo) -> Path | None:
    if path is None:
        return None
    path = _resolve(path, info)
    if not path.is_file():
        raise ValueError(f"file not found: {path}")
    return path


class TableSection(_Section):
    id: str = Field(pattern=SAFE_ID, max_length=64, description="table id: letters, digits, '_' and '-' (MQTT-safe)")
    size: int = Field(9, ge=2, le=10)
    game: str = "holdem"
    structure: str | None = None  # None: the game's default structure
    rules: str = Field("robert", description="a rule profile's name, or the path of a cardroom's profile file")
    event: Literal["cash", "tournament"] = "cash"
    deck: str = Field("A", pattern=SAFE_ID, max_length=16, description="the deck (back) in play")
    rotation: str | None = Field(None, description="a mixed game's rotation to play from the first deal "
                                 "(a [[rotations]] name or a built-in one: horse, eight_game)")

    @field_validator("game")
    @classmethod
    def _known_game(cls, v: str) -> str:
        if v not in GAMES:
            raise ValueError(f"unknown game {v!r}; expected one of {', '.join(sorted(GAMES))}")
        return v

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, v: str, info: ValidationInfo) -> str:
        """A profile name, or a profile file (TOML over a base profile; a relative path is read
        beside the config file), validated now: an error names the file and the field."""
        if v.endswith(".toml") or "/" in v:
            v = str(_resolve(Path(v), info))
        try:
            get_profile(v)
        except ProfileError as exc:
            raise ValueError(str(exc)) from None
        return v

    @field_validator("structure")
    @classmethod
    def _known_structure(cls, v: str | None) -> str | None:
        if v is not None and v not in STRUCTURES:
            raise ValueError(f"unknown structure {v!r}; expected one of {', '.join(STRUCTURES)}")
        return v

    @property
    def effective_structure(self) -> str:
        return self.structure or get_game(self.game).default_structure


class StakesSection(_Section):
    small_blind: int | None = Field(None, ge=0)
    big_blind: int | None = Field(None, ge=0)
    ante: int = Field(0, ge=0)
    bb_ante: int = Field(0, ge=0)
    straddle: int | None = Field(None, gt=0)
    bring_in: int | None = Field(None, ge=0)
    small_bet: int | None = Field(None, ge=0)
    big_bet: int | None = Field(None, ge=0)
    raise_cap: int | None = Field(None, ge=0)
    starting_stack: int | None = Field(None, gt=0)

    def forced_bets(self) -> dict[str, Any]:
        """The Stakes keys of controller.rules.chips (without stacks)."""
        out: dict[str, Any] = {}
        blinds = [b for b in (self.small_blind, self.big_blind) if b]
        if blinds:
            out["blinds"] = blinds
        if self.small_bet and self.big_bet:
            out["limits"] = [self.small_bet, self.big_bet]
        for key in ("ante", "bb_ante", "straddle", "bring_in", "raise_cap"):
            value = getattr(self, key, None)
            if value:
                out[key] = value
        return out

    def required_for(self, game: str, structure: str) -> list[tuple[str, str]]:
        """Problems for a game and structure: the amounts it uses must be given (key, problem)."""
        fam = get_game(game).family
        need: list[str] = []
        if fam is not Family.STUD:
            need += ["small_blind", "big_blind"]
        else:
            need += ["bring_in"]
        if structure == "limit":
            need += ["small_bet", "big_bet"]
        problems = [(k, f"required for {game} ({structure})") for k in need if getattr(self, k) is None]
        if self.small_blind is not None and self.big_blind is not None and self.small_blind > self.big_blind:
            problems.append(("small_blind", f"{self.small_blind} is more than the big blind {self.big_blind}"))
        if self.small_bet is not None and self.big_bet is not None and self.small_bet > self.big_bet:
            problems.append(("small_bet", f"{self.small_bet} is more than the big bet {self.big_bet}"))
        if self.bring_in is not None and self.small_bet is not None and self.bring_in > self.small_bet:
            problems.append(("bring_in", f"{self.bring_in} is more than the small bet {self.small_bet}"))
        return problems


class LevelSection(StakesSection):
    """One level of a tournament's schedule: its forced bets and how long it lasts."""

    minutes: float | None = Field(None, gt=0)


class RotationGameSection(_Section):
    """One game of a rotation: its structure and its own stakes (limit hold'em's blinds and bets are
    not stud's bring-in)."""

    game: str
    structure: str | None = None
    stakes: StakesSection | None = None

    @model_validator(mode="after")
    def _stakes_for_game(self) -> RotationGameSection:
        if self.game not in GAMES:
            raise ValueError(f"unknown game {self.game!r}; expected one of {', '.join(sorted(GAMES))}")
        if self.stakes is not None:
            problems = self.stakes.required_for(self.game, self.structure or get_game(self.game).default_structure)
            if problems:
                raise KeyedProblems([(f"stakes.{k}", m) for k, m in problems])
        return self


class RotationSection(_Section):
    """A mixed game (``[[rotations]]``): its games in order, each dealt ``hands`` times, or changing
    with each level (``per_level``, a tournament's)."""

    name: str = Field(pattern=SAFE_ID, max_length=64)
    hands: int = Field(8, ge=1)
    per_level: StrictBool = False
    games: list[RotationGameSection] = Field(min_length=1)

    def rotation(self) -> Rotation:
        return rotation_from_mapping({
            "name": self.name, "hands": self.hands, "per_level": self.per_level,
            "games": [{"game": g.game, **({"structure": g.structure} if g.structure else {}),
                       **({"stakes": g.stakes.forced_bets()} if g.stakes is not None else {})} for g in self.games]},
            f"rotations.{self.name}")


class TlsSection(_Section):
    ca_file: Path | None = None
    certfile: Path | None = None
    keyfile: Path | None = None

    @field_validator("ca_file", "certfile", "keyfile")
    @classmethod
    def _exists(cls, v: Path | None, info: ValidationInfo) -> Path | None:
        return _existing_file(v, info)

    @model_validator(mode="after")
    def _pair(self) -> TlsSection:
        if self.keyfile is not None and self.certfile is None:
            raise KeyedProblems([("keyfile", "a keyfile needs a certfile")])
        return self


class MqttSection(_Section):
    url: str = "mqtt://localhost:1883"
    port: int | None = Field(None, ge=1, le=65535, description="overrides the url's port")
    base_topic: str = Field("poker", pattern=r"^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$")
    username: str | None = None
    password: str | None = None
    password_file: Path | None = None
    tls: TlsSection | None = None
    keepalive: int = Field(60, ge=1, le=65535)
    # Home Assistant MQTT discovery of the public entities (online, active alert, game, hand number).
    discovery: StrictBool = True
    discovery_prefix: str = Field("homeassistant", pattern=r"^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$")

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        parts = urlsplit(v)
        if parts.scheme not in ("mqtt", "mqtts"):
            raise ValueError(f"{v!r}: expected mqtt://host[:port] or mqtts://host[:port]")
        if not parts.hostname:
            raise ValueError(f"{v!r}: no host")
        try:
            port = parts.port
        except ValueError:
            port = -1
        if port is not None and not 1 <= port <= 65535:
            raise ValueError(f"{v!r}: port must be in 1..65535")
        if parts.username or parts.password:
            raise ValueError(f"{v!r}: put credentials in mqtt.username / mqtt.password_file, not in the url")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError(f"{v!r}: the url is only scheme://host[:port]; the topic goes in mqtt.base_topic")
        return v

    @field_validator("password_file")
    @classmethod
    def _password_file(cls, v: Path | None, info: ValidationInfo) -> Path | None:
        return _existing_file(v, info)

    @model_validator(mode="after")
    def _consistent(self) -> MqttSection:
        problems = []
        if self.password is not None and self.password_file is not None:
            problems.append(("password_file", "give password or password_file, not both"))
        if (self.password is not None or self.password_file is not None) and not self.username:
            problems.append(("username", "required with a password"))
        if self.port is not None and urlsplit(self.url).port is not None:
            problems.append(("port", "the url already has a port"))
        if self.tls is not None and not self.secure:
            problems.append(("tls", "TLS settings need an mqtts:// url"))
        if problems:
            raise KeyedProblems(problems)
        return self

    @property
    def secure(self) -> bool:
        return urlsplit(self.url).scheme == "mqtts"

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or "localhost"

    @property
    def effective_port(self) -> int:
        return self.port or urlsplit(self.url).port or (8883 if self.secure else 1883)

    def read_password(self) -> str | None:
        if self.password_file is not None:
            return self.password_file.read_text(encoding="utf-8").strip()
        return self.password


class BroadcastSection(_Section):
    # Hole cards on the protected topic: held back this many seconds, or until the hand ends.
    delay: int | Literal["end_of_hand"] = "end_of_hand"
    # What the producer may set live (producer/broadcast_delay): no fewer seconds than min_delay (the
    # shortest delay the production accepts), no more than max_delay (what the table holds in memory).
    min_delay: int = Field(default=0, ge=0)
    max_delay: int = Field(default=600, ge=0, le=86400)

    @field_validator("delay", mode="before")
    @classmethod
    def _delay(cls, v: Any) -> Any:
        if isinstance(v, bool) or not (isinstance(v, int) and v >= 0 or v == "end_of_hand"):
            raise ValueError(f"expected seconds (an integer >= 0) or \"end_of_hand\", got {v!r}")
        return v

    @model_validator(mode="after")
    def _range(self) -> BroadcastSection:
        if self.min_delay > self.max_delay:
            raise ValueError(f"min_delay ({self.min_delay}) is more than max_delay ({self.max_delay})")
        if self.delay != "end_of_hand" and not self.min_delay <= self.delay <= self.max_delay:
            raise ValueError(f"delay {self.delay} is outside min_delay..max_delay ({self.min_delay}..{self.max_delay})")
        return self

    def refusal(self, delay: Any) -> str | None:
        """Why a live change to ``delay`` is refused (None: it is taken)."""
        if delay in ("end_of_hand", "hand_end"):
            return None
        if isinstance(delay, bool) or not isinstance(delay, int | float) or delay != delay:
            return f"delay must be seconds (a number) or \"end_of_hand\", got {delay!r}"
        if delay < 0:
            return f"delay must not be negative, got {delay}"
        if delay < self.min_delay:
            return f"delay {delay} s is under this table's floor ([broadcast] min_delay = {self.min_delay} s)"
        if delay > self.max_delay:
            return f"delay {delay} s is over this table's maximum ([broadcast] max_delay = {self.max_delay} s)"
        return None


class JournalSection(_Section):
    path: Path = Field(default_factory=lambda: state_dir() / "journal.sqlite")
    # "full": each event is on disk before it is applied (survives a power cut); "normal": each
    # event is committed to SQLite's WAL first (survives a crash or kill -9 of the daemon, not a
    # power cut), which saves a disk flush per card.  See controller.journal.SYNC_MODES.
    sync: Literal["full", "normal"] = "full"

    @field_validator("path")
    @classmethod
    def _relative(cls, v: Path, info: ValidationInfo) -> Path:
        v = _resolve(v, info)
        if v.exists() and v.is_dir():
            raise ValueError(f"{v} is a folder; give the journal file's name")
        return v


class RoomSection(_Section):
    """The room the table belongs to (``[room]``, docs/scale.md): its floor stores the table's events
    through the table's Mosquitto bridge and reports what it stored; the daemon resends what the floor
    lacks (:class:`~controller.app.floor_ack.FloorAck`).  A table in no room leaves the section out and
    runs none of it."""

    #: The room's name (the daemon logs it when it starts the room's acknowledgement).
    name: str = Field(min_length=1)
    #: Seconds the floor's newest stored event may stand still before what it lacks is resent.
    resend_grace: float = Field(5.0, gt=0)


class WebPageSection(_Section):
    """One page served by ``tablectl run``: where it listens and the broker login it hands out.
    Each page has its own server, so the display's port never serves the overlay's login."""

    enabled: StrictBool = True
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    user: str | None = None  # the broker login the page uses (display/console, overlay)
    password_file: Path | None = None  # that login's password, for the page's config.json

    @field_validator("password_file")
    @classmethod
    def _password_file(cls, v: Path | None, info: ValidationInfo) -> Path | None:
        return _existing_file(v, info)

    def read_password(self) -> str | None:
        return self.password_file.read_text(encoding="utf-8").strip() if self.password_file else None


class WebSection(_Section):
    """The dealer display and the broadcast overlay, served by ``tablectl run``."""

    enabled: StrictBool = True
    # The broker's websockets URL as the browser sees it; default ws://<the page's host>:9001.
    ws: str | None = Field(None, pattern=r"^wss?://[^\s/]+(:\d+)?(/\S*)?$")
    root: Path | None = None  # the web/ folder; default: the one beside the installed source
    display: WebPageSection = Field(default_factory=lambda: WebPageSection(port=8080, user="console"))
    overlay: WebPageSection = Field(default_factory=lambda: WebPageSection(port=8081, user="overlay"))
    tracker: WebPageSection = Field(default_factory=lambda: WebPageSection(port=8082, user="console"))
    # The producer's control page (web/producer/): shows and hides the overlay's graphics live, and
    # changes the broadcast delay (within [broadcast] min_delay..max_delay).
    producer: WebPageSection = Field(default_factory=lambda: WebPageSection(enabled=False, port=8083, user="producer"))

    def pages(self) -> dict[str, WebPageSection]:
        """The enabled pages by name (each gets its own server and port)."""
        pages = {"display": self.display, "overlay": self.overlay, "tracker": self.tracker, "producer": self.producer}
        return {name: page for name, page in pages.items() if page.enabled} if self.enabled else {}

    @field_validator("root")
    @classmethod
    def _root(cls, v: Path | None, info: ValidationInfo) -> Path | None:
        if v is None:
            return None
        v = _resolve(v, info)
        if not (v / "display" / "index.html").is_file():
            raise ValueError(f"{v} is not the web/ folder (no display/index.html)")
        return v

    @model_validator(mode="after")
    def _ports(self) -> WebSection:
        ports = [(name, page.port) for name, page in self.pages().items() if page.port]
        for i, (name, port) in enumerate(ports):
            if any(port == other for _, other in ports[:i]):
                raise KeyedProblems([(f"{name}.port", "each page needs its own port (a page's server serves only it)")])
        return self


class CoreConfig(_Section):
    """The whole file but the sources' sections.  Field order matters: ``table`` validates first,
    the later sections are checked against it (seat numbers, the stakes a game needs).

    :data:`Config` adds one section per source plug-in (``[serial]``, ``[gpio]``, ``[nfc]``,
    ``[camera]``, ...), each validated by the schema its driver owns."""

    table: TableSection
    stakes: StakesSection | None = None
    levels: list[LevelSection] = Field(default_factory=list)
    rotations: list[RotationSection] = Field(default_factory=list)
    antennas: dict[int, AntennaSlot] = Field(default_factory=dict)
    mqtt: MqttSection = Field(default_factory=lambda: MqttSection.model_validate({}))
    broadcast: BroadcastSection = Field(default_factory=BroadcastSection)
    journal: JournalSection = Field(default_factory=JournalSection)
    web: WebSection = Field(default_factory=lambda: WebSection.model_validate({}))
    room: RoomSection | None = None

    def source(self, name: str) -> Any:
        """A source plug-in's section (``config.source("gpio")`` is ``config.gpio``); for a section the
        file leaves out, the plug-in's default (which loads the plug-in)."""
        if name in type(self).model_fields:
            return getattr(self, name)
        return plugin(name).default_section()

    def sources_named(self) -> list[str]:
        """The source sections this file names (their plug-ins are loaded)."""
        return [name for name in type(self).model_fields if name in plugin_names()]

    @field_validator("stakes", "levels")
    @classmethod
    def _required_for_game(cls, v: Any, info: ValidationInfo) -> Any:
        """The stakes, and each level (keyed by its index), carry what the table's game and structure need."""
        table = info.data.get("table")
        if v is None or table is None:
            return v
        sections = [("", v)] if isinstance(v, StakesSection) else [(f"{i}.", lv) for i, lv in enumerate(v)]
        problems = [(f"{at}{key}", msg) for at, section in sections
                    for key, msg in section.required_for(table.game, table.effective_structure)]
        if problems:
            raise KeyedProblems(problems)
        return v

    @field_validator("rotations")
    @classmethod
    def _rotations_valid(cls, v: list[RotationSection], info: ValidationInfo) -> list[RotationSection]:
        problems = []
        names: set[str] = set()
        for i, r in enumerate(v):
            if r.name in names:
                problems.append((f"{i}.name", f"rotation {r.name!r} is listed twice"))
            names.add(r.name)
            if r.per_level and not info.data.get("levels"):
                problems.append((f"{i}.per_level", "a rotation per level needs [[levels]]"))
            try:
                r.rotation()
            except RotationError as exc:
                problems.append((f"{i}", str(exc)))
        table = info.data.get("table")
        if table is not None and table.rotation is not None and table.rotation not in names | set(ROTATIONS):
            problems.append(("table.rotation", f"no rotation {table.rotation!r}; known: "
                             f"{', '.join(sorted(names | set(ROTATIONS)))}"))
        if problems:
            raise KeyedProblems(problems)
        return v

    def available_rotations(self) -> dict[str, Rotation]:
        """The rotations the console may start: the built-in ones and the config's (which win)."""
        return dict(ROTATIONS) | {r.name: r.rotation() for r in self.rotations}

    @field_validator("antennas", mode="before")
    @classmethod
    def _antenna_numbers(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        problems = []
        seen: dict[int, str] = {}
        for key in v:
            try:
                n = int(key)
            except (TypeError, ValueError):
                problems.append((str(key), "antenna numbers are integers >= 0"))
                continue
            if n < 0:
                problems.append((str(key), "antenna numbers are integers >= 0"))
            elif n in seen:
                problems.append((str(key), f"antenna {n} is listed twice (also as {seen[n]!r})"))
            seen.setdefault(n, str(key))
        if problems:
            raise KeyedProblems(problems)
        return v

    @field_validator("antennas")
    @classmethod
    def _antenna_zones(cls, v: dict[int, Slot], info: ValidationInfo) -> dict[int, Slot]:
        table = info.data.get("table")
        problems = []
        slots: dict[Slot, int] = {}
        for antenna, zone in sorted(v.items()):
            seat = zone.zone.seat
            if table is not None and seat is not None and seat > table.size:
                problems.append((str(antenna), f"'{zone.zone}' is not a zone on a {table.size}-seat table"))
            elif zone in slots:
                problems.append((str(antenna), f"'{zone}' is already antenna {slots[zone]}"))
            slots.setdefault(zone, antenna)
        if problems:
            raise KeyedProblems(problems)
        return dict(sorted(v.items()))

    # ------------------------------------------------------------------ helpers
    def zone_map(self) -> ZoneMap:
        """Which antenna is which slot (``[antennas]``)."""
        return ZoneMap(self.antennas)

    def table_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`controller.rules.table.Table`."""
        t = self.table
        out: dict[str, Any] = {"size": t.size, "game": t.game, "rules": t.rules, "event": t.event,
                               "structure": t.structure, "deck": t.deck}
        if self.stakes is not None:
            out["stakes"] = self.stakes.forced_bets()
            out["starting_stack"] = self.stakes.starting_stack
        if self.levels:
            out["levels"] = [lv.forced_bets() | {"minutes": lv.minutes} for lv in self.levels]
        out["rotations"] = self.available_rotations()
        if t.rotation is not None:
            out["rotation"] = out["rotations"][t.rotation]
        return out

    @property
    def topic(self) -> str:
        """The table's MQTT topic root: ``<base_topic>/<table id>``."""
        return f"{self.mqtt.base_topic}/{self.table.id}"


# ---------------------------------------------------------------------- loading
def _format_loc(loc: tuple) -> str:
    parts = []
    for p in loc:
        if p in ("[key]",):
            continue
        parts.append(str(p))
    return ".".join(parts)


def _problems(exc: ValidationError) -> list[str]:
    out: list[str] = []
    for err in exc.errors(include_url=False):
        loc = _format_loc(err["loc"])
        error = (err.get("ctx") or {}).get("error")
        if isinstance(error, KeyedProblems):
            for key, msg in error.problems:
                out.append(f"{loc}.{key}: {msg}" if loc else f"{key}: {msg}")
            continue
        msg = err["msg"]
        if err["type"] == "value_error":
            msg = msg.removeprefix("Value error, ")
        elif err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif err["type"] == "missing":
            msg = "required"
        elif err["type"] == "string_pattern_mismatch" and loc.endswith("id"):
            msg = f"{err['input']!r}: use letters, digits, '_' and '-' only (it is part of MQTT topics)"
        out.append(f"{loc}: {msg}" if loc else msg)
    return out


def _table_check(plugin: SourcePlugin) -> Any:
    """A field validator running a plug-in's check of its section against ``[table]``."""
    assert plugin.check is not None
    check = plugin.check

    def _fits_the_table(cls: Any, v: Any, info: ValidationInfo) -> Any:  # noqa: ARG001
        table = info.data.get("table")
        problems = check(v, table) if table is not None else []
        if problems:
            raise KeyedProblems(problems)
        return v

    return field_validator(plugin.name)(classmethod(_fits_the_table))


@cache
def config_model(sources: frozenset[str] = frozenset()) -> type[CoreConfig]:
    """The config model for a file naming these source sections: :class:`CoreConfig` plus one section
    per named plug-in, so only the plug-ins a table uses (and their libraries) are imported."""
    named = in_start_order(sources)
    fields: dict[str, Any] = {name: (p.section, Field(default_factory=p.default_section))
                              for name, p in named.items()}
    checks = {f"_{name}_fits_the_table": _table_check(p) for name, p in named.items() if p.check is not None}
    return create_model("Config", __base__=CoreConfig, __doc__="A table's whole config (``examples/table.toml``).",
                        __validators__=checks, **fields)


def __getattr__(name: str) -> Any:
    # ``Config``: the model with every registered plug-in's section (built, and the plug-ins loaded, on use).
    if name == "Config":
        return config_model(frozenset(plugin_names()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def validate_config(data: dict[str, Any], *, base_dir: str | Path | None = None,
                    source: str | None = None) -> CoreConfig:
    """Validate already-parsed data (a TOML document as a dict)."""
    try:
        model = config_model(frozenset(k for k in data if k in plugin_names()))
        return model.model_validate(data, context={"base_dir": Path(base_dir) if base_dir else None})
    except ValidationError as exc:
        raise ConfigError(_problems(exc), source) from None


def load_config(path: str | Path) -> CoreConfig:
    """Read and validate a TOML config file; :class:`ConfigError` lists every problem."""
    path = Path(path)
    name = path.name
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError([f"cannot read: {exc.strerror or exc}"], name) from None
    except UnicodeDecodeError as exc:
        raise ConfigError([f"not UTF-8 text: {exc}"], name) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([_toml_problem(str(exc))], name) from None
    return validate_config(data, base_dir=path.resolve().parent, source=name)


def _toml_problem(message: str) -> str:
    """``Invalid value (at line 3, column 9)`` -> ``line 3, column 9: invalid value (TOML syntax)``."""
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if m:
        return f"line {m.group(1)}, column {m.group(2)}: {message[: m.start()]} (TOML syntax)"
    m = re.search(r"\s*\(at end of document\)$", message)
    if m:
        return f"end of file: {message[: m.start()]} (TOML syntax)"
    return f"{message} (TOML syntax)"


__all__ = [
    "AntennaSlot",
    "BroadcastSection",
    "CoreConfig",
    "ConfigError",
    "JournalSection",
    "MqttSection",
    "RoomSection",
    "StakesSection",
    "TableSection",
    "TlsSection",
    "config_model",
    "load_config",
    "validate_config",
]
