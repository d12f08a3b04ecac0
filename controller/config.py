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
``[stakes]``     small_blind, big_blind, ante, bring_in, small_bet, big_bet -- the ones the
                 game and structure use are required when the section is given
``[antennas]``   antenna number -> zone: ``seat:N``, ``seat:N:slot``, ``board:K``, ``burn``,
                 ``muck``, ``shoe`` (slots count from 0)
``[serial]``     the antenna controller: port (device path or ``socket://host:port``), baudrate
``[gpio]``       enabled, and ``[gpio.pins]`` handed to ``hw.gpio.PanelConfig.from_mapping``
``[nfc]``        readers = [{zone, path}, ...]
``[mqtt]``       url (``mqtt://`` or ``mqtts://``), base_topic, credentials, ``[mqtt.tls]``, keepalive
``[broadcast]``  delay: seconds (int >= 0) or ``"end_of_hand"`` for hole cards
``[journal]``    path, sync
``[camera]``     enabled
``[dealers]``    badges: NFC badge UID (hex) -> dealer name, for signing in on the table's NFC pad
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
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
    field_validator,
    model_validator,
)

from controller.games import GAMES, STRUCTURES, Family, get_game
from controller.paths import state_dir
from controller.profiles import PROFILES

SAFE_ID = r"^[A-Za-z0-9_-]+$"
MAX_SEAT_SLOTS = 7  # seven-card stud
MAX_BOARD_SLOTS = 5
ZONE_KINDS = ("seat", "board", "burn", "muck", "shoe")


class ConfigError(ValueError):
    """The config is unusable; :attr:`problems` has one ``key: problem`` line each."""

    def __init__(self, problems: list[str], source: str | None = None) -> None:
        self.problems = list(problems)
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__("\n".join(prefix + p for p in self.problems))


class _Keyed(ValueError):
    """Problems found by a validator, each under a key below the validated field."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{k}: {m}" for k, m in problems))


# ---------------------------------------------------------------------- zones
@dataclass(frozen=True, slots=True, order=True)
class AntennaZone:
    """Where an antenna sits: ``seat:3:1`` is seat 3's second hole-card slot."""

    kind: str
    seat: int | None = None
    slot: int = 0

    @classmethod
    def parse(cls, text: Any) -> AntennaZone:
        if not isinstance(text, str):
            raise ValueError(f"a zone is a string such as 'seat:3:0' or 'burn', got {text!r}")
        parts = text.strip().split(":")
        kind = parts[0]
        if kind not in ZONE_KINDS:
            raise ValueError(f"{text!r}: unknown zone {kind!r}; expected one of {', '.join(ZONE_KINDS)}")
        try:
            numbers = [int(p) for p in parts[1:]]
        except ValueError:
            raise ValueError(f"{text!r}: zone numbers must be integers") from None
        if kind == "seat":
            if len(numbers) not in (1, 2):
                raise ValueError(f"{text!r}: a seat zone is 'seat:N' or 'seat:N:slot'")
            seat, slot = numbers[0], (numbers[1] if len(numbers) == 2 else 0)
            if seat < 1:
                raise ValueError(f"{text!r}: seats are numbered from 1")
            if not 0 <= slot < MAX_SEAT_SLOTS:
                raise ValueError(f"{text!r}: seat slots are 0..{MAX_SEAT_SLOTS - 1}")
            return cls("seat", seat, slot)
        if len(numbers) > 1 or (numbers and kind != "board"):
            raise ValueError(f"{text!r}: expected 'board:K', 'burn', 'muck' or 'shoe'")
        slot = numbers[0] if numbers else 0
        if not 0 <= slot < MAX_BOARD_SLOTS:
            raise ValueError(f"{text!r}: board slots are 0..{MAX_BOARD_SLOTS - 1}")
        return cls(kind, None, slot)

    def __str__(self) -> str:
        if self.kind == "seat":
            return f"seat:{self.seat}:{self.slot}"
        return f"board:{self.slot}" if self.kind == "board" else self.kind

    @property
    def zone(self) -> str:
        """The zone without the slot (``seat:3``, ``board``, ``burn`` ...), as events name zones."""
        return f"seat:{self.seat}" if self.kind == "seat" else self.kind

    @property
    def bridge_slot(self) -> str:
        """The slot in ``firmware_bridge.zones`` notation (``seat:3/1``, ``board/2``, ``burn/0``)."""
        return f"{self.zone}/{self.slot}"


def _parse_zone(value: Any) -> AntennaZone:
    return value if isinstance(value, AntennaZone) else AntennaZone.parse(value)


Zone = Annotated[AntennaZone, PlainValidator(_parse_zone), PlainSerializer(str, return_type=str)]


def standard_antennas(seats: int = 9, hole_slots: int = 2, board_slots: int = 5) -> dict[int, AntennaZone]:
    """The reference layout: seats first (``hole_slots`` each), then the board, burn, muck, shoe."""
    out: dict[int, AntennaZone] = {}
    n = 0
    for seat in range(1, seats + 1):
        for slot in range(hole_slots):
            out[n] = AntennaZone("seat", seat, slot)
            n += 1
    for slot in range(board_slots):
        out[n] = AntennaZone("board", None, slot)
        n += 1
    for kind in ("burn", "muck", "shoe"):
        out[n] = AntennaZone(kind)
        n += 1
    return out


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
    rules: Literal["robert", "tda"] = "robert"
    event: Literal["cash", "tournament"] = "cash"
    deck: str = Field("A", pattern=SAFE_ID, max_length=16, description="the deck (back) in play")

    @field_validator("game")
    @classmethod
    def _known_game(cls, v: str) -> str:
        if v not in GAMES:
            raise ValueError(f"unknown game {v!r}; expected one of {', '.join(sorted(GAMES))}")
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


assert set(PROFILES) == {"robert", "tda"}  # keep the Literal above in step with the profiles


class StakesSection(_Section):
    small_blind: int | None = Field(None, ge=0)
    big_blind: int | None = Field(None, ge=0)
    ante: int = Field(0, ge=0)
    bring_in: int | None = Field(None, ge=0)
    small_bet: int | None = Field(None, ge=0)
    big_bet: int | None = Field(None, ge=0)

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


class SerialSection(_Section):
    enabled: StrictBool = True
    port: str = "/dev/ttyACM0"
    baudrate: int = Field(115200, gt=0, le=4_000_000)

    @field_validator("port")
    @classmethod
    def _port(cls, v: str) -> str:
        if v.startswith("socket://"):
            parts = urlsplit(v)
            try:
                port = parts.port
            except ValueError:
                port = None
            if not parts.hostname or port is None or not 1 <= port <= 65535:
                raise ValueError(f"{v!r}: expected socket://host:port with a port in 1..65535")
            return v
        if v.startswith("/"):
            return v
        raise ValueError(f"{v!r}: expected a device path (/dev/ttyACM0) or socket://host:port")


class GpioSection(_Section):
    enabled: StrictBool = False
    pins: dict[str, Any] = Field(default_factory=dict)

    @field_validator("pins")
    @classmethod
    def _panel(cls, v: dict[str, Any]) -> dict[str, Any]:
        try:
            from hw.gpio import PanelConfig  # lazily: controller/ never imports gpiozero at import time
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] == "gpiozero":
                return v  # no gpiozero on this machine: the panel cannot run here, nothing to check against
            raise
        try:
            panel = PanelConfig.from_mapping(v)
        except (ValueError, TypeError) as exc:
            raise ValueError(str(exc).removeprefix("panel config: ")) from None
        used: dict[int, str] = {}
        problems = []
        for name in ("shuffle_started", "deck_ready", "shuffler_fault", "new_hand", "call_misdeal", "acknowledge",
                     "alert_led", "buzzer"):
            line = getattr(panel, name)
            if line is None:
                continue
            if not 0 <= line.pin <= 27:
                problems.append((name, f"BCM pin {line.pin} is not a GPIO pin (0..27)"))
            elif line.pin in used:
                problems.append((name, f"BCM pin {line.pin} is already used by {used[line.pin]}"))
            else:
                used[line.pin] = name
        if problems:
            raise _Keyed(problems)
        return v

    def panel_config(self):
        """The :class:`hw.gpio.PanelConfig` (imports gpiozero)."""
        from hw.gpio import PanelConfig

        return PanelConfig.from_mapping(self.pins)


class NfcReaderSection(_Section):
    zone: str = Field(pattern=r"^[A-Za-z0-9_:-]+$", description="reader zone name, e.g. 'enroll' or 'muck'")
    path: str = Field(min_length=1, description="nfcpy device path: usb, usb:072f:2200, tty:AMA0 ...")


class NfcSection(_Section):
    readers: list[NfcReaderSection] = Field(default_factory=list)

    @field_validator("readers")
    @classmethod
    def _unique(cls, v: list[NfcReaderSection]) -> list[NfcReaderSection]:
        problems = []
        zones: dict[str, int] = {}
        paths: dict[str, int] = {}
        for i, r in enumerate(v):
            if r.zone in zones:
                problems.append((f"{i}.zone", f"zone {r.zone!r} is already reader {zones[r.zone]}'s"))
            zones.setdefault(r.zone, i)
            if r.path in paths:
                problems.append((f"{i}.path", f"device {r.path!r} is already reader {paths[r.path]}'s"))
            paths.setdefault(r.path, i)
        if problems:
            raise _Keyed(problems)
        return v


class DealersSection(_Section):
    """Dealers' NFC badges (UID in hex, any case) -> the name every hand and ruling carries."""

    badges: dict[str, str] = Field(default_factory=dict)

    @field_validator("badges")
    @classmethod
    def _names(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [(uid, "a dealer's name is 1 to 64 characters") for uid, name in v.items() if not 1 <= len(name) <= 64]
        if bad:
            raise _Keyed(bad)
        return {uid.lower(): name for uid, name in v.items()}


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
            raise _Keyed([("keyfile", "a keyfile needs a certfile")])
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
            raise _Keyed(problems)
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

    @field_validator("delay", mode="before")
    @classmethod
    def _delay(cls, v: Any) -> Any:
        if isinstance(v, bool) or not (isinstance(v, int) and v >= 0 or v == "end_of_hand"):
            raise ValueError(f"expected seconds (an integer >= 0) or \"end_of_hand\", got {v!r}")
        return v


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


class CameraSection(_Section):
    enabled: StrictBool = False
    device: str = "0"  # camera index or /dev/videoN
    fps: float = Field(8.0, gt=0, le=60)
    tag_timeout: float = Field(1.5, gt=0, le=30, description="seconds a card may wait for its tag")
    # Regions of interest: slot name ("board/0", "seat:3") -> [x, y, w, h] in the frame; empty:
    # the synthetic camera's layout (board slots, seats 1 and 2).
    rois: dict[str, list[int]] = Field(default_factory=dict)


class Config(_Section):
    """The whole file.  Field order matters: ``table`` validates first, the later sections
    are checked against it (seat numbers, the stakes a game needs)."""

    table: TableSection
    stakes: StakesSection | None = None
    antennas: dict[int, Zone] = Field(default_factory=dict)
    serial: SerialSection = Field(default_factory=lambda: SerialSection(enabled=False))
    gpio: GpioSection = Field(default_factory=GpioSection)
    nfc: NfcSection = Field(default_factory=NfcSection)
    mqtt: MqttSection = Field(default_factory=MqttSection)
    broadcast: BroadcastSection = Field(default_factory=BroadcastSection)
    journal: JournalSection = Field(default_factory=JournalSection)
    camera: CameraSection = Field(default_factory=CameraSection)
    dealers: DealersSection = Field(default_factory=DealersSection)

    @field_validator("stakes")
    @classmethod
    def _stakes_for_game(cls, v: StakesSection | None, info: ValidationInfo) -> StakesSection | None:
        table = info.data.get("table")
        if v is not None and table is not None:
            problems = v.required_for(table.game, table.effective_structure)
            if problems:
                raise _Keyed(problems)
        return v

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
            raise _Keyed(problems)
        return v

    @field_validator("antennas")
    @classmethod
    def _antenna_zones(cls, v: dict[int, AntennaZone], info: ValidationInfo) -> dict[int, AntennaZone]:
        table = info.data.get("table")
        problems = []
        slots: dict[AntennaZone, int] = {}
        for antenna, zone in sorted(v.items()):
            if table is not None and zone.kind == "seat" and zone.seat > table.size:  # type: ignore[operator]
                problems.append((str(antenna), f"'{zone.zone}' is not a zone on a {table.size}-seat table"))
            elif zone in slots:
                problems.append((str(antenna), f"'{zone}' is already antenna {slots[zone]}"))
            slots.setdefault(zone, antenna)
        if problems:
            raise _Keyed(problems)
        return dict(sorted(v.items()))

    @field_validator("nfc")
    @classmethod
    def _nfc_zones(cls, v: NfcSection, info: ValidationInfo) -> NfcSection:
        table = info.data.get("table")
        problems = []
        for i, r in enumerate(v.readers):
            m = re.fullmatch(r"seat:(\d+)", r.zone)
            if table is not None and m and not 1 <= int(m.group(1)) <= table.size:
                problems.append((f"readers.{i}.zone", f"'{r.zone}' is not a zone on a {table.size}-seat table"))
        if problems:
            raise _Keyed(problems)
        return v

    # ------------------------------------------------------------------ helpers
    def zone_map(self) -> dict[str, str]:
        """``antennas`` for ``firmware_bridge.zones.ZoneMap.from_dict``."""
        return {str(a): z.bridge_slot for a, z in self.antennas.items()}

    def table_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`controller.table.Table`."""
        t = self.table
        return {"size": t.size, "game": t.game, "rules": t.rules, "event": t.event, "structure": t.structure,
                "deck": t.deck}

    @property
    def topic(self) -> str:
        """The table's MQTT topic root: ``<base_topic>/<table id>``."""
        return f"{self.mqtt.base_topic}/{self.table.id}"

    @classmethod
    def default_demo(cls, table_id: str = "demo", *, size: int = 9, game: str = "holdem", rules: str = "robert",
                     journal: str | Path | None = None, mqtt_url: str = "mqtt://localhost:1883",
                     broadcast_delay: int | str = 0, journal_sync: str = "full") -> Config:
        """A self-contained config for the demo: no serial link, panel or NFC; reference antennas."""
        fam = get_game(game).family
        stakes: dict[str, int] = {"ante": 0}
        if fam is Family.STUD:
            stakes |= {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}
        else:
            stakes |= {"small_blind": 1, "big_blind": 2, "small_bet": 2, "big_bet": 4}
        data: dict[str, Any] = {
            "table": {"id": table_id, "size": size, "game": game, "rules": rules},
            "stakes": stakes,
            "antennas": {str(a): str(z) for a, z in standard_antennas(size).items()},
            "serial": {"enabled": False},
            "mqtt": {"url": mqtt_url},
            "broadcast": {"delay": broadcast_delay},
        }
        data["journal"] = {"sync": journal_sync}
        if journal is not None:
            data["journal"]["path"] = str(journal)
        return validate_config(data)


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
        if isinstance(error, _Keyed):
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


def validate_config(data: dict[str, Any], *, base_dir: str | Path | None = None, source: str | None = None) -> Config:
    """Validate already-parsed data (a TOML document as a dict)."""
    try:
        return Config.model_validate(data, context={"base_dir": Path(base_dir) if base_dir else None})
    except ValidationError as exc:
        raise ConfigError(_problems(exc), source) from None


def load_config(path: str | Path) -> Config:
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
    "AntennaZone",
    "BroadcastSection",
    "CameraSection",
    "Config",
    "ConfigError",
    "GpioSection",
    "JournalSection",
    "MqttSection",
    "NfcReaderSection",
    "NfcSection",
    "SerialSection",
    "StakesSection",
    "TableSection",
    "TlsSection",
    "load_config",
    "standard_antennas",
    "validate_config",
]
