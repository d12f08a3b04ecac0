"""Sources: what feeds the table's engine, as plug-ins the daemon loads by name.

A source is a device or a service that turns the world into engine events: the antenna board
(``serial``), the dealer's panel (``gpio``), NFC readers (``nfc``), the camera over the table
(``camera``).  Each is a :class:`SourcePlugin` registered under the ``tablectl.sources`` entry
point group (``pyproject.toml``), named like the config section it owns, the way flyte/mqtt-io
loads a driver by name and lets it own its config schema:

* its **section** schema (a pydantic model, importable without the hardware library), which the
  config validates under ``[name]``, and an optional **check** of that section against the table
  (a reader on ``seat:12`` of a 9-seat table);
* **build**, which makes the running :class:`Source` from a :class:`SourceContext`: the daemon's
  narrow offer to its sources (post an event to the owner, apply one in place under the owner's
  lock, the deck registry, the engine, its peers).

The daemon keeps the owner, the journal and the publisher; it builds every enabled source from
this registry, so a new source touches no daemon code.  A test or the demo hands a source a
stand-in device through ``backends={name: ...}`` (an emulator's port, a mock panel factory)
instead of patching the daemon.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from controller.errors import PokerTableError
from controller.rules.decks import DeckRegistry
from controller.rules.engine import HandEngine
from controller.rules.events import Event

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "tablectl.sources"


class SourceError(PokerTableError, RuntimeError):
    """A source plug-in that cannot be loaded or started."""


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, values are frozen once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class KeyedProblems(PokerTableError, ValueError):
    """Problems a section validator found, each under a key below the validated field.

    The config reports them as ``section.field.key: problem``, one line each."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{k}: {m}" for k, m in problems))


class Source(Protocol):
    """A running source.  ``after(outputs)`` sees what each applied event produced (under the
    owner's lock: keep it short); ``health()`` goes into the daemon's health report under the
    source's name; ``healthy()`` is the watchdog's test (the source's loops turn)."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def after(self, outputs: list[Any]) -> None: ...

    def health(self) -> dict[str, Any]: ...

    def healthy(self) -> bool: ...


@dataclass
class SourceContext:
    """What the daemon offers its sources, and nothing more."""

    config: Any  # controller.app.config.Config (typed Any: the config imports this module)
    registry: DeckRegistry
    #: Queue an event to the engine owner's thread (console, panel, NFC, camera).
    post: Callable[[Event, str], None]
    #: Apply an event now, on the caller's thread, under :attr:`owner_lock` (the RFID path).
    apply_now: Callable[[Event, str], None]
    owner_lock: threading.RLock
    #: The hand's engine (None before the journal is replayed).
    engine: Callable[[], HandEngine | None]
    stopping: threading.Event
    #: Sources already started, by name (the camera cooperates with the antennas).
    peers: dict[str, Source] = field(default_factory=dict)
    #: A stand-in for the device given by the demo or a test (its meaning is the plug-in's).
    backend: Any = None

    def thread(self, target: Callable[[], None], name: str) -> threading.Thread:
        """Start a daemon thread for a source's loop."""
        t = threading.Thread(target=target, name=name, daemon=True)
        t.start()
        return t


@dataclass(frozen=True)
class SourcePlugin:
    """One kind of source: its config section and how to build it."""

    name: str
    section: type[BaseModel]
    build: Callable[[SourceContext, Any], Source]
    #: Whether the daemon runs it: by default the section's ``enabled``, or a backend was given.
    enabled: Callable[[Any, Any], bool] = field(
        default=lambda section, backend: backend is not None or bool(getattr(section, "enabled", False)))
    #: The section checked against the ``[table]`` section: ``[(key, problem), ...]``.
    check: Callable[[Any, Any], list[tuple[str, str]]] | None = None
    #: Start order (a source that uses a peer starts after it).
    order: int = 50
    #: The section when the config leaves it out.
    default: Callable[[], BaseModel] | None = None

    def default_section(self) -> BaseModel:
        return self.default() if self.default is not None else self.section()


@cache
def plugin_names() -> tuple[str, ...]:
    """The names of the registered source plug-ins, read from the entry points without loading any
    (a config names the sections it uses; only those plug-ins and their libraries are imported)."""
    names = tuple(sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}))
    if not names:
        raise SourceError(f"no source plug-ins registered under {ENTRY_POINT_GROUP!r}: is the project installed?")
    return names


@cache
def plugin(name: str) -> SourcePlugin:
    """One source plug-in, loaded on first use."""
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not found:
        raise SourceError(f"no source plug-in named {name!r}; known: {list(plugin_names())}")
    ep = found[0]
    try:
        loaded = ep.load()
    except Exception as exc:  # a broken plug-in names itself
        raise SourceError(f"source plug-in {ep.name!r} ({ep.value}) does not load: {exc}") from exc
    if not isinstance(loaded, SourcePlugin) or loaded.name != ep.name:
        raise SourceError(f"entry point {ep.name!r} ({ep.value}) is not a SourcePlugin named {ep.name!r}")
    return loaded


def in_start_order(names: Iterable[str]) -> dict[str, SourcePlugin]:
    """The named plug-ins (loaded), in start order."""
    found = [plugin(n) for n in set(names)]
    return {p.name: p for p in sorted(found, key=lambda p: (p.order, p.name))}


def plugins() -> dict[str, SourcePlugin]:
    """Every registered source plug-in, loaded, in start order (the tools and the layout test; the
    daemon loads only the ones its config or its backends name)."""
    return in_start_order(plugin_names())
