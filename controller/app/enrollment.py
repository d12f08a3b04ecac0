"""Deck enrollment: teach the registry which RFID tag is which card of a deck.

Pure logic (no hardware import): :class:`Enrollment` is fed tag reads -- from one
antenna, an NFC pad (``hw.nfc``), a keyboard-wedge reader, a script -- and
answers each with an :class:`EnrollStep`.

How cards are matched to tags
    The dealer taps the cards in the fixed order of :func:`controller.rules.cards.standard_deck`
    (``2c 2d 2h 2s 3c ... As``); a tag **without** a card code becomes
    :attr:`Enrollment.expected`, the first card of that order not enrolled yet.
    A tag that **carries** a card code in its memory (see ``hw.nfc``: ``Ah`` or
    ``card:Ah@A``) is enrolled as that card wherever it comes: with codes, order
    does not matter, and the two kinds can be mixed (an uncoded tag always fills
    the first gap).  A code for another deck (``Ah@B`` while enrolling ``A``), for
    a card not in the order, or for a card that already has a tag is rejected.

What is rejected (nothing changes; the step says why in plain words)
    * an unreadable or empty UID;
    * a tag already enrolled in this session -- except a repeat of the **last**
      accepted tag, which is taken silently as a re-read (``status="repeat"``);
    * a stray tag that the registry knows as a card of **another** deck (tags of
      the deck being re-enrolled are fine: they are being replaced);
    * anything after the 52nd card (``undo`` first).

Nothing is written until :meth:`Enrollment.finish`, which needs every card, adds
the deck to the registry and saves the registry file atomically.  Re-enrolling a
deck that is already in the registry must be confirmed up front (``replace=True``,
``tablectl enroll --replace``) so a dealer never taps 52 cards for nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from controller.rules.cards import Card, CardError, standard_deck
from controller.rules.decks import Deck, DeckRegistry, RegistryError, normalise_uid

DEFAULT_REGISTRY = Path("decks.json")

StepStatus = Literal["enrolled", "repeat", "rejected", "undone"]
RejectReason = Literal[
    "unreadable",
    "duplicate",
    "stray",
    "bad_code",
    "wrong_deck",
    "unknown_card",
    "card_taken",
    "complete",
    "empty",
]


class EnrollmentError(RegistryError):
    """Enrollment cannot go on or finish (deck exists, incomplete, bad order)."""


class _Undo:
    def __repr__(self) -> str:
        return "UNDO"


UNDO: Any = _Undo()
"""Put this in a read stream to undo the last card (the CLI's 'u' key)."""


@dataclass(frozen=True, slots=True)
class EnrollStep:
    """The answer to one read (or undo): what happened and where the enrollment stands."""

    status: StepStatus
    uid: str | None
    card: Card | None
    message: str
    done: int
    total: int
    expected: Card | None
    reason: RejectReason | None = None

    @property
    def ok(self) -> bool:
        return self.status != "rejected"

    @property
    def complete(self) -> bool:
        return self.done == self.total


class Enrollment:
    """One deck's enrollment session; see the module docstring for the rules."""

    def __init__(
        self,
        deck_id: str,
        registry: DeckRegistry,
        order: Sequence[Card] | None = None,
        back: str = "",
        *,
        replace: bool = False,
    ) -> None:
        deck_id = str(deck_id).strip()
        if not deck_id or "@" in deck_id or any(ch.isspace() for ch in deck_id):
            raise EnrollmentError(f"deck id must be a non-empty word without '@', got {deck_id!r}")
        if deck_id in registry.decks and not replace:
            raise EnrollmentError(
                f"deck {deck_id} is already enrolled; to enroll it again: "
                f"tablectl enroll --deck {deck_id} --replace"
            )
        cards = [Card(c.rank, c.suit, deck_id) for c in (standard_deck(deck_id) if order is None else order)]
        if not cards:
            raise EnrollmentError("enrollment order is empty")
        seen: set[Card] = set()
        for card in cards:
            if card in seen:
                raise EnrollmentError(f"enrollment order lists {card.face} twice")
            seen.add(card)
        self.deck_id = deck_id
        self.back = back
        self.registry = registry
        self.replace = replace
        self.order: tuple[Card, ...] = tuple(cards)
        self._by_uid: dict[str, Card] = {}  # insertion order = scan order
        self._by_card: dict[Card, str] = {}
        self.finished = False

    # -- state --------------------------------------------------------------------------------

    @property
    def progress(self) -> tuple[int, int]:
        """(cards enrolled, cards in the deck)."""
        return len(self._by_uid), len(self.order)

    @property
    def complete(self) -> bool:
        return len(self._by_uid) == len(self.order)

    @property
    def expected(self) -> Card | None:
        """The card an uncoded tag becomes next (first gap in the order); None when complete."""
        return next((c for c in self.order if c not in self._by_card), None)

    @property
    def last(self) -> tuple[str, Card] | None:
        return next(reversed(self._by_uid.items()), None)

    # -- feeding ------------------------------------------------------------------------------

    def feed(self, uid: str | bytes | None, card_code: str | None = None) -> EnrollStep:
        """One tag read: its UID and, when its memory holds one, its card code."""
        if self.finished:
            raise EnrollmentError(f"enrollment of deck {self.deck_id} is already finished")
        try:
            if uid is None:
                raise RegistryError("no tag uid")
            key = normalise_uid(uid)
            if not key:
                raise RegistryError("empty tag uid")
        except RegistryError as exc:
            return self._reject(None, "unreadable", f"unreadable tag ({exc}); tap it again")

        last = self.last
        if last is not None and last[0] == key:
            return self._step(
                "repeat", key, last[1], f"{last[1].face} again (re-read of the last tag), ignored"
            )
        if key in self._by_uid:
            n = list(self._by_uid).index(key) + 1
            face = self._by_uid[key].face
            return self._reject(
                key, "duplicate", f"tag {key} is already enrolled as {face} (card {n}); put it aside"
            )
        known = self.registry.lookup(key).card
        if known is not None and known.deck != self.deck_id:
            return self._reject(
                key,
                "stray",
                f"stray card: tag {key} belongs to deck {known.deck} ({known.label(self.deck_id)})",
            )
        if self.complete:
            return self._reject(key, "complete", f"deck {self.deck_id} is complete; finish, or undo first")

        if card_code is None or str(card_code).strip() == "":
            card = self.expected
            assert card is not None  # not complete
        else:
            code = str(card_code).strip()
            if code[:5].lower() == "card:":  # the tag-memory form, see hw.nfc
                code = code[5:]
            try:
                card = Card.parse(code, self.deck_id)
            except CardError:
                return self._reject(key, "bad_code", f"tag {key} carries {card_code!r}, which is not a card")
            if card.deck != self.deck_id:
                return self._reject(
                    key,
                    "wrong_deck",
                    f"tag {key} says {card_code} (deck {card.deck}) but this is deck {self.deck_id}",
                )
            if card not in self.order:
                return self._reject(
                    key, "unknown_card", f"tag {key} says {card.face}, not a card of this deck"
                )
            if card in self._by_card:
                return self._reject(
                    key,
                    "card_taken",
                    f"tag {key} says {card.face} but {card.face} is already enrolled "
                    f"(tag {self._by_card[card]}); undo it or check the tags",
                )
        self._by_uid[key] = card
        self._by_card[card] = key
        return self._step("enrolled", key, card, f"{card.face} <- {key}")

    def undo(self) -> EnrollStep:
        """Forget the last accepted card (its tag may be tapped again)."""
        if self.finished:
            raise EnrollmentError(f"enrollment of deck {self.deck_id} is already finished")
        last = self.last
        if last is None:
            return self._reject(None, "empty", "nothing to undo")
        uid, card = last
        del self._by_uid[uid]
        del self._by_card[card]
        return self._step("undone", uid, card, f"undid {card.face} (tag {uid})")

    # -- finishing ----------------------------------------------------------------------------

    def deck(self) -> Deck:
        """The deck as enrolled so far."""
        deck = Deck(self.deck_id, self.back)
        for uid, card in self._by_uid.items():
            deck.add(uid, card)
        return deck

    def finish(self, path: str | os.PathLike | None = None) -> Deck:
        """Add the complete deck to the registry and, with ``path``, save it atomically.

        The registry in memory only changes once the file has been written.
        """
        if self.finished:
            raise EnrollmentError(f"enrollment of deck {self.deck_id} is already finished")
        if not self.complete:
            done, total = self.progress
            raise EnrollmentError(
                f"deck {self.deck_id} is incomplete ({done}/{total}); next expected {self.expected}"
            )
        deck = self.deck()
        staged = DeckRegistry.from_json(self.registry.to_json())
        staged.add_deck(deck, replace=self.replace)
        if path is not None:
            staged.save(path)
        self.registry.add_deck(deck, replace=self.replace)
        self.finished = True
        return deck

    # -- helpers ------------------------------------------------------------------------------

    def _step(self, status: StepStatus, uid: str | None, card: Card | None, message: str) -> EnrollStep:
        done, total = self.progress
        return EnrollStep(status, uid, card, message, done, total, self.expected)

    def _reject(self, uid: str | None, reason: RejectReason, message: str) -> EnrollStep:
        done, total = self.progress
        return EnrollStep("rejected", uid, None, message, done, total, self.expected, reason)


# -- glue for the CLI -----------------------------------------------------------------------------


def run_enrollment(
    reads: Iterable[Any],
    enrollment: Enrollment,
    on_step: Callable[[EnrollStep], None] | None = None,
    *,
    stop_when_complete: bool = True,
) -> list[EnrollStep]:
    """Feed reads until the deck is complete (or the reads run out); return every step.

    A read is ``(uid, card_code)``, a bare uid, an object with ``.uid`` (and
    ``.card_code``, like ``hw.nfc.reader.TagRead``), or :data:`UNDO`.
    """
    steps: list[EnrollStep] = []
    if stop_when_complete and enrollment.complete:
        return steps
    for read in reads:
        if read is UNDO:
            step = enrollment.undo()
        else:
            uid, code = _split_read(read)
            step = enrollment.feed(uid, code)
        steps.append(step)
        if on_step is not None:
            on_step(step)
        if stop_when_complete and enrollment.complete:
            break
    return steps


def _split_read(read: Any) -> tuple[Any, str | None]:
    if isinstance(read, tuple | list):
        if len(read) == 1:
            return read[0], None
        if len(read) == 2:
            return read[0], read[1]
        raise ValueError(f"a read is (uid, card_code), got {read!r}")
    if hasattr(read, "uid"):
        return read.uid, getattr(read, "card_code", None)
    return read, None


def parse_read_line(line: str) -> Any:
    """A typed or piped read: ``04A1B2C3`` / ``04:A1:B2:C3 Ah`` / ``undo``; None for a blank line.

    Keyboard-wedge RFID readers type the UID and Enter, so ``sys.stdin`` lines work as reads.
    """
    words = line.split()
    if not words:
        return None
    if len(words) == 1 and words[0].lower() in ("u", "undo"):
        return UNDO
    return (words[0], words[1] if len(words) > 1 else None)


def line_reads(lines: Iterable[str]) -> Iterable[Any]:
    """Reads from text lines (stdin), skipping blanks."""
    for line in lines:
        read = parse_read_line(line)
        if read is not None:
            yield read


def enroll_cli(args: Any, reads: Iterable[Any], console: Any = None) -> int:
    """``tablectl enroll --deck A [--registry decks.json] [--back red] [--replace]``.

    ``args`` needs ``deck``; ``registry`` (path, default ``decks.json``), ``back`` and
    ``replace`` are optional.  ``reads`` is any read stream (see :func:`run_enrollment`),
    e.g. ``hw.nfc.reader.NfcReader(...).reads()`` or ``line_reads(sys.stdin)``; ``console`` a
    rich Console.  Returns the exit code: 0 saved, 1 reads ended before the deck was
    complete (nothing saved), 2 registry or deck error, 130 interrupted.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = console or Console(highlight=False)
    deck_id = str(getattr(args, "deck", "") or "")
    path = Path(getattr(args, "registry", None) or DEFAULT_REGISTRY)
    try:
        registry = DeckRegistry.load(path)
        enrollment = Enrollment(
            deck_id,
            registry,
            back=str(getattr(args, "back", "") or ""),
            replace=bool(getattr(args, "replace", False)),
        )
    except RegistryError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return 2

    total = enrollment.progress[1]
    first, last = enrollment.order[0].face, enrollment.order[-1].face
    console.print(
        f"Enrolling deck [bold]{escape(deck_id)}[/bold] into {escape(str(path))}: tap the {total} cards "
        f"in order {first} ... {last} (tags with a card code may come in any order). "
        "Nothing is saved until every card is read."
    )
    with Progress(
        TextColumn("deck {task.fields[deck]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("next: [bold]{task.fields[next]}[/bold]"),
        console=console,
    ) as progress:
        task = progress.add_task("enroll", total=total, deck=escape(deck_id), next=first)

        def on_step(step: EnrollStep) -> None:
            nxt = step.expected.face if step.expected is not None else "-"
            progress.update(task, completed=step.done, next=nxt)
            if step.status == "rejected":
                progress.console.print(f"[red]rejected[/red] {escape(step.message)}")
            elif step.status == "undone":
                progress.console.print(f"[yellow]{escape(step.message)}[/yellow]")

        try:
            steps = run_enrollment(reads, enrollment, on_step)
        except KeyboardInterrupt:
            console.print("[yellow]interrupted; nothing saved[/yellow]")
            return 130

    rejected = sum(1 for s in steps if s.status == "rejected")
    done, total = enrollment.progress
    if not enrollment.complete:
        console.print(
            f"[red]incomplete:[/red] {done}/{total} cards, next expected {enrollment.expected}; nothing saved"
        )
        return 1
    try:
        enrollment.finish(path)
    except RegistryError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}; nothing saved")
        return 2
    console.print(
        f"[green]deck {escape(deck_id)} enrolled:[/green] {total} tags saved to {escape(str(path))}"
        + (f" ({rejected} reads rejected)" if rejected else "")
    )
    return 0


__all__ = [
    "DEFAULT_REGISTRY",
    "UNDO",
    "EnrollStep",
    "Enrollment",
    "EnrollmentError",
    "enroll_cli",
    "line_reads",
    "parse_read_line",
    "run_enrollment",
]
