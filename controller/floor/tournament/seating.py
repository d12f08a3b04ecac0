"""Seating a tournament by the rulebook: drawn, balanced, broken, halted, down to the final table.

The rules applied, each cited in the decision that applies it:

* TDA 6 / RRoP s15 2: seats are assigned at random.
* TDA 7: late entries and alternates are seated at random "and dealt in except between SB and
  button"; TDA 9: the same for players from a broken table.
* RRoP s15 16: "With more than six tables, table size will be kept within two players. With six
  tables or less, table size will be kept within one player."
* RRoP s15 14 (TDA 9-B's predetermined procedure): "the player due for the big blind will be
  automatically selected to move, and will be given the earliest seat due for the big blind if
  more than one seat is open."
* TDA 9-C: "Full-table play will halt on tables 3 or more players short of the table with the most
  players."
* RRoP s15 12: tables are broken in a pre-set order; TDA 9 and its Recommended Procedure: players
  from a broken table get new seats by a 2-step random process (seat cards scrambled face down; one
  playing card dealt face up to each player; the first seat card goes to the highest card by suit).
* RRoP s15 17: a redraw for seating at three tables (not in events of four or five starting
  tables), two tables and one; TDA 10: nine players at the final table (``Structure.final_table``).
* Hand-for-hand near the money (the Highland house rules): busts in the same hand at different
  tables tie; at one table the player who began the hand with more chips finishes higher.

The state is a deterministic function of the inputs kept in ``events`` (the seed, registrations,
busts, the tables' blind positions, confirmed moves and the cards read for a draw): ``replay``
rebuilds it, decisions included.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller.errors import PokerTableError
from controller.floor.decision import Decision, replay_entries
from controller.floor.tournament.structure import Structure
from controller.rules.cards import Card, standard_deck

#: a table's name in the room: the number on its felt or the id it publishes under ("t7")
TableId = int | str


class SeatingError(PokerTableError, ValueError):
    """A request the seating cannot honour (unknown player, no open seat, a bad card read)."""


@dataclass
class Player:
    name: str
    stack: int
    table: TableId | None = None
    seat: int | None = None
    #: where the floor has sent him; he is still at ``table``/``seat`` until the move is confirmed
    moving_to: tuple[TableId, int] | None = None
    #: the table that let him go on his move (:meth:`Tournament.departed`); ``table``/``seat`` are then
    #: the seat he walks to, until he sits down there
    left_from: TableId | None = None
    place: int | None = None
    tied: bool = False

    @property
    def active(self) -> bool:
        return self.place is None


@dataclass
class TableSeats:
    number: TableId
    size: int
    #: seats of the current hand's button and big blind, as the table reports them
    button: int | None = None
    big_blind: int | None = None
    small_blind: int | None = None
    open: bool = True
    halted: bool = False


def _clockwise(start: int, size: int) -> list[int]:
    """Seats after ``start`` going clockwise, ``start`` last."""
    return [(start + i - 1) % size + 1 for i in range(1, size + 1)]


def _best_card(card: Card) -> tuple[int, int]:
    return (card.high, card.suit_order)


class Tournament:
    """The floor's picture of one tournament's seating; every call journals its input."""

    def __init__(self, structure: Structure, seed: int, draw: str = "random") -> None:
        if draw not in ("random", "antennas"):
            raise SeatingError(f"a draw is dealt by 'random' or 'antennas', not {draw!r}")
        self.structure = structure
        self.seed = seed
        #: who deals a break's face-up cards: the journaled random source, or the table's antennas
        self.draw = draw
        self.pending_breaks: dict[TableId, tuple[list[str], list[tuple[TableId, int]]]] = {}
        self.rng = random.Random(seed)
        self.players: dict[str, Player] = {}
        self.tables: dict[TableId, TableSeats] = {}
        self.break_order: list[TableId] = []
        self.starting_tables = 0
        self.hand_for_hand = False
        #: hands whose end the floor has read, by (table, hand id): a redelivered or replayed hand
        #: counts once
        self.hands_read: set[tuple[str, int]] = set()
        #: the last hand each table began (its ``event/hand_start``)
        self.started: dict[TableId, int] = {}
        #: hand-for-hand: each table's first hand of the hand-for-hand play (the hand in progress when
        #: it was called completes first), and the hands read, in order, not yet in a completed round
        self.h4h_from: dict[TableId, int] = {}
        self.h4h_pending: dict[TableId, list[dict[str, Any]]] = {}
        self.decisions: list[Decision] = []
        self.events: list[dict[str, Any]] = [{"op": "create", "seed": seed, "draw": draw}]

    # ------------------------------------------------------------------ views
    def active(self) -> list[Player]:
        return [p for p in self.players.values() if p.active]

    def open_tables(self) -> list[TableSeats]:
        return [t for t in self.tables.values() if t.open]

    def planned(self, table: TableId) -> dict[int, str]:
        """Seat -> player at ``table`` once every move the floor ordered is done."""
        seats = {}
        for p in self.active():
            where = p.moving_to or (p.table, p.seat)
            if where[0] == table and where[1] is not None:
                seats[where[1]] = p.name
        return seats

    def present(self, table: TableId) -> dict[int, str]:
        """Seat -> player physically at ``table`` now (moves not yet confirmed keep him here)."""
        return {p.seat: p.name for p in self.active() if p.table == table and p.seat is not None}

    def _taken(self, table: TableId) -> set[int]:
        """Seats with a player, sent or seated, or held by a seat card of a break still being drawn."""
        held = {s for _, cards in self.pending_breaks.values() for n, s in cards if n == table}
        return set(self.planned(table)) | held

    def counts(self) -> dict[TableId, int]:
        return {t.number: len(self._taken(t.number)) for t in self.open_tables()}

    def describe(self) -> dict[str, Any]:
        return {"players_left": len(self.active()), "hand_for_hand": self.hand_for_hand,
                "tables": {t.number: {"seats": self.planned(t.number), "halted": t.halted, "size": t.size}
                           for t in self.open_tables()}}

    # ------------------------------------------------------------------ decisions
    def _decide(self, kind: str, text: str, citations: Sequence[str], **data: Any) -> Decision:
        d = Decision(kind, text, tuple(citations), dict(data))
        self.decisions.append(d)
        return d

    def register(self, name: str) -> None:
        self.events.append({"op": "register", "name": name})
        if name in self.players:
            raise SeatingError(f"{name} is already registered")
        self.players[name] = Player(name, self.structure.starting_stack)

    def start(self, tables: Sequence[TableId]) -> list[Decision]:
        """Seat everybody registered at random (TDA 6) on as few of ``tables`` as hold them."""
        self.events.append({"op": "start", "tables": list(tables)})
        size = self.structure.table_size
        needed = -(-len(self.players) // size)
        if needed > len(tables):
            raise SeatingError(f"{len(self.players)} players need {needed} tables of {size}; {len(tables)} given")
        use = list(tables)[:needed]
        for n in use:
            self.tables[n] = TableSeats(n, size)
        # Tables are broken from the last opened to the first (RRoP s15 12: a pre-set order).
        self.break_order = list(reversed(use))
        self.starting_tables = len(use)
        out = self._draw(sorted(self.players), use, "seat", ("TDA 6", "RRoP s15 2"))
        for t in self.tables.values():
            self._default_positions(t)
        return out

    def _draw(self, names: Sequence[str], tables: Sequence[TableId], kind: str, cites: Sequence[str]) -> list[Decision]:
        """Random seats for ``names`` spread evenly over ``tables`` (shares differ by one at most)."""
        per = {n: 0 for n in tables}
        for i in range(len(names)):
            per[tables[i % len(tables)]] += 1
        slots = [(t, s) for t in tables for s in self.rng.sample(range(1, self.structure.table_size + 1), per[t])]
        self.rng.shuffle(slots)
        out = []
        for name, (t, s) in zip(names, slots, strict=True):
            p = self.players[name]
            # a redraw names where the player sat, so that table hears he goes too
            was = {"from_table": p.table, "from_seat": p.seat} if p.table is not None else {}
            p.table, p.seat, p.moving_to, p.left_from = t, s, None, None
            out.append(self._decide(kind, f"{name}: table {t}, seat {s}", cites, player=name, table=t, seat=s,
                                    **was))
        return out

    def _default_positions(self, t: TableSeats) -> None:
        """Until the table reports its blinds, the button is on its lowest occupied seat."""
        occupied = sorted(self.planned(t.number))
        if occupied:
            self._set_positions(t, occupied[0])

    def _set_positions(self, t: TableSeats, button: int) -> None:
        occupied = set(self.planned(t.number)) | set(self.present(t.number))
        after = [s for s in _clockwise(button, t.size) if s in occupied and s != button]
        t.button = button
        if len(after) == 1:  # heads-up: the button is the small blind (RRoP s4, TDA 32 heads-up)
            t.small_blind, t.big_blind = button, after[0]
        elif after:
            t.small_blind, t.big_blind = after[0], after[1]

    def positions(self, table: TableId, button: int, small_blind: int | None, big_blind: int,
                  hand_id: int | None = None) -> None:
        """The table reports where the button and blinds are for the hand it is dealing."""
        self.events.append({"op": "positions", "table": table, "button": button, "small_blind": small_blind,
                            "big_blind": big_blind, "hand_id": hand_id})
        t = self._table(table)
        t.button, t.small_blind, t.big_blind = button, small_blind, big_blind
        if hand_id is not None:
            self.started[table] = max(int(hand_id), self.started.get(table, 0))

    def _table(self, table: TableId) -> TableSeats:
        t = self.tables.get(table)
        if t is None or not t.open:
            raise SeatingError(f"table {table} is not in play")
        return t

    def _between_sb_and_button(self, t: TableSeats, seat: int) -> bool:
        """TDA 7, 9: a new player in a seat after the button and before the small blind waits."""
        if t.button is None or t.small_blind is None or t.small_blind == t.button:
            return False
        gap = []
        for s in _clockwise(t.button, t.size):
            if s == t.small_blind:
                break
            gap.append(s)
        return seat in gap

    def late_entry(self, name: str) -> list[Decision]:
        """An alternate or late entry: a full stack, a random seat at a table short of players (TDA 7)."""
        self.events.append({"op": "late_entry", "name": name})
        if name in self.players:
            raise SeatingError(f"{name} is already registered")
        counts = self.counts()
        room = [n for n, c in counts.items() if c < self.structure.table_size]
        if not room:
            raise SeatingError("no open seat: open a table first")
        fewest = min(counts[n] for n in room)
        table = self.rng.choice(sorted(n for n in room if counts[n] == fewest))
        t = self.tables[table]
        free = [s for s in range(1, t.size + 1) if s not in self._taken(table)]
        seat = self.rng.choice(free)
        self.players[name] = Player(name, self.structure.starting_stack, table, seat)
        waits = self._between_sb_and_button(t, seat)
        text = f"{name} (late entry): table {table}, seat {seat}" + (
            ", waits for the button to pass (between the small blind and the button)" if waits else
            ", dealt in at once")
        return [self._decide("seat", text, ("TDA 7",), player=name, table=table, seat=seat, waits=waits)]

    def confirm_move(self, name: str) -> list[Decision]:
        """The player has taken the seat he was sent to."""
        self.events.append({"op": "confirm_move", "name": name})
        p = self._player(name)
        if p.moving_to is None:
            raise SeatingError(f"{name} has no move to confirm")
        was = p.left_from if p.left_from is not None else p.table
        p.table, p.seat = p.moving_to
        p.moving_to, p.left_from = None, None
        arrived = self._decide("seated", f"{name} has taken table {p.table}, seat {p.seat}", (), player=name,
                               table=p.table, seat=p.seat, from_table=was)
        return [arrived, *self._halts()]

    def departed(self, name: str, table: TableId) -> None:
        """The table a moving player was sent away from let him go: from now on he belongs to the seat he
        walks to. An order that sends him elsewhere before he sits down there (that table broken, the
        room redrawn) names that table and seat, which will have him once its ``arrive`` is carried out:
        the table he left has no one to let go any more, and would never answer."""
        self.events.append({"op": "departed", "name": name, "table": table})
        p = self._player(name)
        if p.moving_to is None or str(p.table) != str(table):
            raise SeatingError(f"{name} has no move from table {table}")
        p.left_from = p.table
        p.table, p.seat = p.moving_to

    def _player(self, name: str) -> Player:
        p = self.players.get(name)
        if p is None or not p.active:
            raise SeatingError(f"{name} is not playing")
        return p

    # ------------------------------------------------------------------ busts and places
    def bust(self, hand: Sequence[Mapping[str, Any]], journal: bool = True) -> list[Decision]:
        """Players out in one hand: ``[{"table": 3, "players": {"ann": 1200, ...}}, ...]``.

        The numbers are each player's chips when the hand began. Reports of several tables in one
        call are one hand-for-hand hand: those busts tie across tables; at one table the player who
        began with more chips finishes higher.
        """
        if journal:
            self.events.append({"op": "bust", "hand": [{"table": r["table"], "players": dict(r["players"]),
                                                        **({"seats": dict(r["seats"])} if r.get("seats") else {})}
                                                       for r in hand]})
        left = len(self.active())
        out: list[Decision] = []
        busted = [(name, r["table"], chips) for r in hand for name, chips in r["players"].items()]
        # where each was when he went out (the seat the table read him in, when it says)
        where = {name: (r["table"], (r.get("seats") or {}).get(name)) for r in hand for name in r["players"]}
        if len(busted) >= left:
            raise SeatingError("a hand cannot bust every player left")
        for name, _t, _c in busted:
            self._player(name)
        # RRoP s15 35: at one table the player who began the hand with more chips finishes higher;
        # hand-for-hand (Highland): busts at different tables in the same hand tie.
        rank = {name: sum(1 for _n, t2, c2 in busted if t2 == t and c2 > c) for name, t, c in busted}
        place = left - len(busted) + 1
        for r in sorted(set(rank.values())):
            same = sorted(n for n in rank if rank[n] == r)
            for name in same:
                p = self.players[name]
                # where the floor has sent him, should he have left the table he went out at meanwhile
                bound = p.moving_to[0] if p.moving_to else p.table
                p.place, p.tied, p.moving_to = place, len(same) > 1, None
                cites: tuple[str, ...] = ("RRoP s15 35",) if len(busted) > 1 else ()
                if len(hand) > 1:
                    cites += ("Highland Hand-for-Hand",)
                # RRoP s15 20: he leaves his seat at once (his table lets him go once the hand is over)
                table, seat = where[name]
                if seat is None:
                    seat = p.seat if p.table == table else None
                sent = {"to_table": bound} if bound is not None and bound != table else {}
                out.append(self._decide("bust", f"{name} finishes {place}" + (" (tied)" if p.tied else ""),
                                        (*cites, "RRoP s15 20"), player=name, place=place, tied=p.tied,
                                        table=table, seat=seat, **sent))
            place += len(same)
        out += self.rebalance()
        return out

    def hand_end(self, table: TableId, hand_id: int, started: Mapping[str, int],
                 stacks: Mapping[str, int], names: Mapping[str, str] | None = None) -> list[Decision]:
        """A table's hand is over: ``started`` and ``stacks`` are each dealt-in seat's chips when it began
        and once the pot was pushed, and ``names`` who sat in each, as the table published them (its
        ``event/hand_end``). Without names, the seats are read as the floor has them (a redraw's players
        are in their new seats at once for the floor, but still at their old ones for the table until
        they leave: the table's names are the ones to trust).

        A seat that began with chips and ended with none is out. The players out in one hand at one
        table finish by their chips when the hand began (RRoP s15 35: "the player starting the hand with
        the larger amount of money finishes in the higher tournament place"). During hand-for-hand
        (Highland's rules, "Upon nearing the Money") the hand each table deals is one hand of the room:
        its busts wait until every table in play has finished its hand, then busts at different tables
        tie and at one table the chips at the start decide. The hand in progress when hand-for-hand is
        called completes first and counts on its own. A hand read twice (the message redelivered, the
        table's journal replayed) changes nothing the second time.
        """
        self.events.append({"op": "hand_end", "table": table, "hand_id": hand_id, "started": dict(started),
                            "stacks": dict(stacks), "names": dict(names) if names is not None else None})
        key = (str(table), int(hand_id))
        if table not in self.tables:
            raise SeatingError(f"table {table} is not in this tournament")
        if key in self.hands_read:
            return []
        self.hands_read.add(key)
        self.started[table] = max(int(hand_id), self.started.get(table, 0))
        seats = {int(s): n for s, n in names.items()} if names is not None else self.present(table)
        gone = {int(s) for s, left in stacks.items() if left == 0 and int(started.get(s, 0)) > 0}
        at = {seats[s]: s for s in gone if s in seats and seats[s] in self.players and self.players[seats[s]].active}
        report = {"table": table, "players": {n: int(started[str(s)]) for n, s in at.items()}, "seats": at}
        if self.hand_for_hand and int(hand_id) >= self.h4h_from.get(table, 0):
            self.h4h_pending.setdefault(table, []).append(report)
            return self._hand_for_hand_rounds()
        return self.bust([report], journal=False) if at else []

    def _hand_for_hand_rounds(self) -> list[Decision]:
        """Every round of hand-for-hand that each table in play has finished: its busts, placed together."""
        decisions: list[Decision] = []
        while self.hand_for_hand and all(self.h4h_pending.get(t.number) for t in self.open_tables()):
            hand = [self.h4h_pending[t.number].pop(0) for t in self.open_tables()]
            hand = [r for r in hand if r["players"]]
            if hand:
                decisions += self.bust(hand, journal=False)
        if not self.hand_for_hand:  # the money is reached: hands read meanwhile count one by one
            for _table, reports in sorted(self.h4h_pending.items(), key=lambda kv: str(kv[0])):
                for r in reports:
                    live = {n: c for n, c in r["players"].items() if self.players[n].active}
                    if live:
                        decisions += self.bust([dict(r, players=live)], journal=False)
            self.h4h_pending.clear()
        return decisions

    # ------------------------------------------------------------------ balancing and breaking
    def _tolerance(self) -> int:
        return 2 if len(self.open_tables()) > 6 else 1  # RRoP s15 16

    def rebalance(self) -> list[Decision]:
        """Break what can be broken, balance the rest, halt tables too short, say hand-for-hand."""
        out: list[Decision] = []
        while True:
            n_open = len(self.open_tables())
            left = len(self.active())
            size = self.structure.table_size
            target = n_open - 1
            fits = left <= target * size and (target > 1 or left <= self.structure.final_table)
            if n_open < 2 or not fits:
                break
            redraw = target <= 2 or (target == 3 and self.starting_tables > 5)
            out += self._redraw(target) if redraw else self._break(self.break_order[0])
        out += self._balance()
        out += self._halts()
        paid = self.structure.paid_places
        h4h = bool(paid) and paid < len(self.active()) <= paid + self.structure.hand_for_hand_margin
        if h4h != self.hand_for_hand:
            self.hand_for_hand = h4h
            # the hand each table is dealing now completes first; hand-for-hand starts with the next
            self.h4h_from = {t.number: self.started.get(t.number, 0) + 1 for t in self.open_tables()} if h4h else {}
            text = ("Hand-for-hand: every table finishes its hand, then deals one hand at a time" if h4h else
                    "Hand-for-hand ends: the money is reached")
            out.append(self._decide("hand_for_hand", text, ("Highland Hand-for-Hand",), on=h4h))
        return out

    def _redraw(self, tables: int) -> list[Decision]:
        """RRoP s15 17: a redraw for seating at three, two and one tables (TDA 10 at the final table)."""
        closing = self.break_order[: len(self.break_order) - tables]
        for n in closing:
            self.tables[n].open = False
        self.break_order = [n for n in self.break_order if n not in closing]
        keep = sorted(self.break_order)
        cites = ("RRoP s15 17", "TDA 10") if tables == 1 else ("RRoP s15 17",)
        what = "the final table" if tables == 1 else f"{tables} tables"
        out = [self._decide("redraw", f"Redraw for seats at {what}: {len(self.active())} players",
                            cites, tables=keep)]
        names = sorted(p.name for p in self.active())
        for p in self.active():
            p.moving_to = None
        out += self._draw(names, keep, "seat", cites)
        for n in keep:
            t = self.tables[n]
            t.button = t.big_blind = t.small_blind = None
            self._default_positions(t)
        return out

    def _break(self, table: TableId) -> list[Decision]:
        """Break ``table`` by the 2-step random process (TDA 9 and its Recommended Procedure).

        Step 1 here: seat cards for open seats that keep the tables even, scrambled face down.
        Step 2 is the dealer's: one card face up to each player. With ``draw="antennas"`` the break
        waits for the cards the table's antennas read (:meth:`break_cards`); a simulation draws them.
        """
        t = self.tables[table]
        movers = sorted(self.planned(table).values())
        t.open = False
        self.break_order.remove(table)
        counts = self.counts()
        seat_cards: list[tuple[TableId, int]] = []
        free = {n: [s for s in range(1, self.tables[n].size + 1) if s not in self._taken(n)] for n in counts}
        for _ in movers:  # the seat cards: open seats that keep the tables even
            n = min((c, -self.break_order.index(k), k)
                    for k, c in counts.items() if free[k])[2]
            s = self.rng.choice(free[n])
            free[n].remove(s)
            counts[n] += 1
            seat_cards.append((n, s))
        self.rng.shuffle(seat_cards)  # step 1: scrambled face down
        out = [self._decide("break", f"Break table {table}: deal one card face up to each of its "
                            f"{len(movers)} players; the highest card by suit takes the first seat card",
                            ("TDA 9", "TDA RP Rule 9", "RRoP s15 12"), table=table, players=movers,
                            seat_cards=[list(sc) for sc in seat_cards])]
        self.pending_breaks[table] = (movers, seat_cards)
        if self.draw == "random":  # a simulation: the journaled random source deals the cards
            deck = [c.face for c in standard_deck()]
            out += self.break_cards(table, dict(zip(movers, self.rng.sample(deck, len(movers)), strict=True)),
                                    journal=False)
        return out

    def break_cards(self, table: TableId, cards: Mapping[str, str], journal: bool = True) -> list[Decision]:
        """Step 2 of a break: the card each player of ``table`` got face up; the seat cards go out."""
        if journal:
            self.events.append({"op": "break_cards", "table": table, "cards": dict(cards)})
        if table not in self.pending_breaks:
            raise SeatingError(f"table {table} is not being broken")
        movers, seat_cards = self.pending_breaks[table]
        if sorted(cards) != movers:
            raise SeatingError(f"table {table}'s draw needs one card for each of {movers}; got {sorted(cards)}")
        parsed = {m: Card.parse(cards[m]) for m in movers}
        if len({c.face for c in parsed.values()}) != len(parsed):
            raise SeatingError(f"table {table}'s draw has the same card twice: deal it again")
        del self.pending_breaks[table]
        order = sorted(movers, key=lambda m: _best_card(parsed[m]), reverse=True)
        out = []
        for name, (n, s) in zip(order, seat_cards, strict=True):
            p = self.players[name]
            p.moving_to = (n, s)
            waits = self._between_sb_and_button(self.tables[n], s)
            out.append(self._decide("move", f"{name} ({cards[name]}): table {table} -> table {n}, seat {s}"
                                    + (", waits for the button to pass" if waits else ""),
                                    ("TDA 9",), player=name, table=n, seat=s, waits=waits, card=cards[name],
                                    from_table=p.table, from_seat=p.seat))
        return out + self._halts()

    def _balance(self) -> list[Decision]:
        out: list[Decision] = []
        while True:
            counts = self.counts()
            if len(counts) < 2:
                return out
            hi = max(counts.values())
            lo = min(counts.values())
            if hi - lo <= self._tolerance():
                return out
            # the giving table: most players, the next to break first; the taker: fewest, the last to break
            give = max((c, -self.break_order.index(n), n) for n, c in counts.items())[2]
            take = min((c, -self.break_order.index(n), n) for n, c in counts.items())[2]
            out.append(self._move_for_balance(give, take))

    def _move_for_balance(self, give: TableId, take: TableId) -> Decision:
        """RRoP s15 14: the player due for the big blind moves to the earliest seat due for it."""
        g, t = self.tables[give], self.tables[take]
        seats = self.planned(give)
        after_bb = _clockwise(g.big_blind, g.size) if g.big_blind else sorted(seats)
        mover = next(seats[s] for s in after_bb if s in seats and self.players[seats[s]].moving_to is None)
        taken = self._taken(take)
        order = _clockwise(t.big_blind, t.size) if t.big_blind else list(range(1, t.size + 1))
        open_seats = [s for s in order if s not in taken]
        seat = next((s for s in open_seats if not self._between_sb_and_button(t, s)), open_seats[0])
        p = self.players[mover]
        p.moving_to = (take, seat)
        return self._decide("move", f"Balance: {mover} (due for the big blind) table {give} -> table {take}, "
                            f"seat {seat}", ("RRoP s15 14", "RRoP s15 16", "TDA 9-B"),
                            player=mover, table=take, seat=seat, waits=self._between_sb_and_button(t, seat),
                            from_table=p.table, from_seat=p.seat)

    def _halts(self) -> list[Decision]:
        """TDA 9-C: halt full-table play at a table 3 or more short of the fullest; resume when not."""
        out: list[Decision] = []
        tables = self.open_tables()
        if len(tables) < 2:
            for t in tables:
                t.halted = False
            return out
        # counted as the players sit now: one on his way still sits where he was until he arrives
        present = {t.number: len(self.present(t.number)) for t in tables}
        most = max(present.values())
        for t in tables:
            short = most - present[t.number] >= 3
            if short != t.halted:
                t.halted = short
                text = (f"Halt play at table {t.number}: {most - present[t.number]} players short until players "
                        "arrive" if short else f"Table {t.number} resumes play")
                out.append(self._decide("halt" if short else "resume", text, ("TDA 9-C",), table=t.number))
        return out

    # ------------------------------------------------------------------ replay
    @classmethod
    def replay(cls, structure: Structure, events: Iterable[Mapping[str, Any]]) -> Tournament:
        """Rebuild a tournament, decisions included, from its journaled inputs."""
        it = iter(events)
        first = next(it)
        if first.get("op") != "create":
            raise SeatingError("a tournament journal starts with its seed")
        tour = cls(structure, int(first["seed"]), first.get("draw", "random"))
        calls: dict[str, Any] = {
            "register": lambda e: tour.register(e["name"]),
            "start": lambda e: tour.start(e["tables"]),
            "late_entry": lambda e: tour.late_entry(e["name"]),
            "positions": lambda e: tour.positions(e["table"], e["button"], e["small_blind"], e["big_blind"],
                                                  e.get("hand_id")),
            "hand_end": lambda e: tour.hand_end(e["table"], e["hand_id"], e["started"], e["stacks"], e.get("names")),
            "confirm_move": lambda e: tour.confirm_move(e["name"]),
            "departed": lambda e: tour.departed(e["name"], e["table"]),
            "bust": lambda e: tour.bust(e["hand"]),
            "break_cards": lambda e: tour.break_cards(e["table"], e["cards"]),
        }
        replay_entries(it, calls, SeatingError, "tournament")
        return tour
