"""The cash room's lists (RRoP s2 Seating): waiting lists, seat offers, must-move games, changes.

Pure decisions over journaled inputs, like the tournament's seating: who is offered an open seat,
who must move from a must-move game into the game it protects, and when a seat or table change is
allowed. The rules applied, each cited in the decision that applies it:

* RRoP s2 Seating 1: "You must be present to add your name to a waiting list."
* RRoP s2 Seating 3: with several games of the same stakes and form and no must-move, "A new player
  will be sent to the game most in need of an additional player. A transfer to a similar game is not
  allowed if the game being left will then have fewer players than the game being entered."
* RRoP s2 Seating 4: "A player may not hold a seat in more than one game."
* RRoP s2 Seating 9: "The must-move list is maintained in the same order as the original waiting
  list. If a player refuses to move into the main game, that player will be forced to quit, and may
  not play in the must-move game or get on that list for one hour."
* RRoP s2 Seating 12: "A player who is already in the game has precedence over a new player for any
  seat when it becomes available. [...] For players already in the game, the one who asks the
  earliest has preference for a seat change."

A chain of must-move games feeds the main game: a seat in the main game goes to the first player of
the first must-move game (in list order), the seat he leaves to the next must-move game's first
player, and the last seat of the chain to the waiting list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.errors import PokerTableError
from controller.floor.decision import Decision, replay_entries

BARRED_SECONDS = 3600.0  # RRoP s2 Seating 9: "for one hour"


class CashRoomError(PokerTableError, ValueError):
    """A request the room cannot honour: an unknown game, a player not present, a full table."""


@dataclass
class Game:
    """One table of a game: its form and stakes, seats, and the game it feeds if it is a must-move."""

    table: str
    form: str
    stakes: str
    seats: int = 9
    players: dict[int, str] = field(default_factory=dict)
    #: the table this must-move game feeds (None: a main game)
    feeds: str | None = None
    #: seats held for a player told to move here, until he answers
    reserved: dict[int, str] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.form, self.stakes)

    def open_seats(self) -> list[int]:
        return [s for s in range(1, self.seats + 1) if s not in self.players and s not in self.reserved]


class CashRoom:
    """The room's games and lists; every call journals its input in ``events``."""

    def __init__(self) -> None:
        self.games: dict[str, Game] = {}
        self.lists: dict[tuple[str, str], list[str]] = {}
        self.seat_changes: list[tuple[str, str, int | None]] = []  # (player, table, wanted seat or any)
        self.barred: dict[str, float] = {}
        #: when each player first joined a list: a must-move list keeps that order (s2 Seating 9)
        self.tickets: dict[str, int] = {}
        self.decisions: list[Decision] = []
        self.events: list[dict[str, Any]] = []
        self._ticket = 0

    def _decide(self, kind: str, text: str, cites: tuple[str, ...], **data: Any) -> Decision:
        d = Decision(kind, text, cites, dict(data))
        self.decisions.append(d)
        return d

    def where(self, player: str) -> tuple[str, int] | None:
        for g in self.games.values():
            for s, p in g.players.items():
                if p == player:
                    return (g.table, s)
        return None

    def open_game(self, table: str, form: str, stakes: str, seats: int = 9, feeds: str | None = None) -> None:
        self.events.append({"op": "open_game", "table": table, "form": form, "stakes": stakes, "seats": seats,
                            "feeds": feeds})
        if table in self.games:
            raise CashRoomError(f"table {table} already has a game")
        if feeds is not None:
            main = self.games.get(feeds)
            if main is None or main.key != (form, stakes):
                raise CashRoomError(f"a must-move game feeds a game of the same form and stakes; {feeds} is not one")
        self.games[table] = Game(table, form, stakes, seats, feeds=feeds)
        self.lists.setdefault((form, stakes), [])

    def join_list(self, player: str, form: str, stakes: str, present: bool, t: float = 0.0) -> Decision:
        """RRoP s2 Seating 1: a name goes on the list only with its player present."""
        self.events.append({"op": "join_list", "player": player, "form": form, "stakes": stakes,
                            "present": present, "t": t})
        key = (form, stakes)
        if key not in self.lists:
            raise CashRoomError(f"no {stakes} {form} game in the room")
        if not present:
            raise CashRoomError(f"{player} must be present to go on the list (RRoP s2 Seating 1)")
        if self.barred.get(player, float("-inf")) > t:
            raise CashRoomError(f"{player} refused a must-move and may not go on the list for one hour "
                                "(RRoP s2 Seating 9)")
        if player in self.lists[key]:
            raise CashRoomError(f"{player} is already on the {stakes} {form} list")
        self.lists[key].append(player)
        self._ticket += 1
        self.tickets.setdefault(player, self._ticket)
        return self._decide("list", f"{player} is number {len(self.lists[key])} on the {stakes} {form} list",
                            ("RRoP s2 Seating 1",), player=player)

    def request_seat_change(self, player: str, seat: int | None = None) -> None:
        """A player in a game asks for another seat there (RRoP s2 Seating 12: the earliest asks first)."""
        self.events.append({"op": "seat_change", "player": player, "seat": seat})
        where = self.where(player)
        if where is None:
            raise CashRoomError(f"{player} is not seated")
        self.seat_changes.append((player, where[0], seat))

    def _chain(self, table: str) -> list[Game]:
        """The must-move games that feed ``table``, nearest first."""
        chain: list[Game] = []
        cur = table
        while True:
            nxt = next((g for g in self.games.values() if g.feeds == cur), None)
            if nxt is None:
                return chain
            chain.append(nxt)
            cur = nxt.table

    def seat_opens(self, table: str, seat: int) -> list[Decision]:
        """A seat is free at ``table``: say who takes it, and what that frees in turn."""
        self.events.append({"op": "seat_opens", "table": table, "seat": seat})
        game = self.games.get(table)
        if game is None:
            raise CashRoomError(f"no game at table {table}")
        gone = game.players.pop(seat, None)
        out = []
        if gone:
            out.append(self._decide("leave", f"{gone} leaves table {table}, seat {seat}", (), player=gone))
        return out + self._fill(game, seat)

    def _fill(self, game: Game, seat: int) -> list[Decision]:
        # RRoP s2 Seating 12: a player already in the game first, the earliest request first.
        for i, (player, table, wanted) in enumerate(self.seat_changes):
            if table == game.table and wanted in (None, seat) and self.where(player):
                old = self.where(player)
                assert old is not None
                del self.seat_changes[i]
                del game.players[old[1]]
                game.players[seat] = player
                out = [self._decide("seat_change", f"{player} changes to seat {seat} at table {game.table}",
                                    ("RRoP s2 Seating 12",), player=player, table=game.table, seat=seat)]
                return out + self._fill(game, old[1])
        # A must-move game feeds this one: its first player in list order moves (RRoP s2 Seating 9).
        chain = self._chain(game.table)
        pending = {r for g in self.games.values() for r in g.reserved.values()}
        movers = [p for p in chain[0].players.values() if p not in pending] if chain else []
        if movers:
            mm = chain[0]
            player = min(movers, key=lambda p: self.tickets.get(p, 1 << 30))
            old_seat = next(s for s, p in mm.players.items() if p == player)
            game.reserved[seat] = player
            return [self._decide("must_move", f"{player} must move from table {mm.table} to table {game.table}, "
                                 f"seat {seat} (the must-move list keeps the waiting list's order)",
                                 ("RRoP s2 Seating 9", "RRoP s2 Seating 11"), player=player, table=game.table,
                                 seat=seat, from_table=mm.table, from_seat=old_seat)]
        return self._offer_from_list(game, seat)

    def _offer_from_list(self, game: Game, seat: int) -> list[Decision]:
        names = self.lists[game.key]
        for player in list(names):
            if self.where(player):  # RRoP s2 Seating 4: one seat per player
                continue
            names.remove(player)
            game.players[seat] = player
            return [self._decide("seat", f"{player} from the {game.stakes} {game.form} list: table {game.table}, "
                                 f"seat {seat}", ("RRoP s2 Seating 3",), player=player, table=game.table, seat=seat)]
        return []

    def answer_move(self, player: str, accept: bool, t: float = 0.0) -> list[Decision]:
        """The must-move player takes the seat or refuses (then quits, barred for an hour: s2 Seating 9)."""
        self.events.append({"op": "answer_move", "player": player, "accept": accept, "t": t})
        pending = next((d for d in reversed(self.decisions) if d.kind == "must_move" and d.data["player"] == player),
                       None)
        if pending is None or self.games[pending.data["table"]].reserved.get(pending.data["seat"]) != player:
            raise CashRoomError(f"{player} has no must-move to answer")
        mm = self.games[pending.data["from_table"]]
        main = self.games[pending.data["table"]]
        del mm.players[pending.data["from_seat"]]
        del main.reserved[pending.data["seat"]]
        out: list[Decision] = []
        if accept:
            main.players[pending.data["seat"]] = player
            out.append(self._decide("moved", f"{player} takes table {main.table}, seat {pending.data['seat']}",
                                    ("RRoP s2 Seating 9",), player=player, table=main.table))
        else:
            self.barred[player] = t + BARRED_SECONDS
            for names in self.lists.values():
                if player in names:
                    names.remove(player)
            out.append(self._decide("forced_quit", f"{player} refused the move: he quits, and may not play in the "
                                    "must-move game or join its list for one hour", ("RRoP s2 Seating 9",),
                                    player=player))
            out += self._fill(main, pending.data["seat"])
        return out + self._fill(mm, pending.data["from_seat"])

    def seat_new_player(self, form: str, stakes: str) -> list[Decision]:
        """With several games of a kind and no must-move, the list's first goes where most needed (s2 3)."""
        self.events.append({"op": "seat_new_player", "form": form, "stakes": stakes})
        games = [g for g in self.games.values() if g.key == (form, stakes) and g.open_seats()]
        if not games:
            return []
        game = min(games, key=lambda g: (len(g.players), g.table))
        return self._offer_from_list(game, game.open_seats()[0])

    def request_table_change(self, player: str, to_table: str) -> Decision:
        """RRoP s2 Seating 3: no transfer that leaves the old game shorter than the new one."""
        self.events.append({"op": "table_change", "player": player, "to": to_table})
        where = self.where(player)
        target = self.games.get(to_table)
        if where is None or target is None:
            raise CashRoomError(f"{player} is not seated or table {to_table} has no game")
        source = self.games[where[0]]
        if target.key == source.key and len(source.players) - 1 < len(target.players) + 1:
            return self._decide("refused", f"{player} may not move to table {to_table}: table {source.table} "
                                f"would have {len(source.players) - 1} players and table {to_table} "
                                f"{len(target.players) + 1}", ("RRoP s2 Seating 3",), player=player)
        if not target.open_seats():
            raise CashRoomError(f"table {to_table} is full: join its list")
        seat = target.open_seats()[0]
        del source.players[where[1]]
        target.players[seat] = player
        return self._decide("table_change", f"{player} moves to table {to_table}, seat {seat}",
                            ("RRoP s2 Seating 3",), player=player, table=to_table, seat=seat)

    def describe(self) -> dict[str, Any]:
        """What the floor page shows: each game's seats, the lists and who is next."""
        return {"games": {g.table: {"form": g.form, "stakes": g.stakes, "players": g.players, "feeds": g.feeds,
                                    "open": g.open_seats(), "held": g.reserved,
                                    "seats": g.seats} for g in self.games.values()},
                "lists": {f"{k[1]} {k[0]}": list(v) for k, v in self.lists.items()},
                "next": {f"{k[1]} {k[0]}": (v[0] if v else None) for k, v in self.lists.items()}}

    @classmethod
    def replay(cls, events: list[dict[str, Any]]) -> CashRoom:
        """Rebuild the room, decisions included, from its journaled inputs."""
        room = cls()
        calls = {
            "open_game": lambda e: room.open_game(e["table"], e["form"], e["stakes"], e["seats"], e["feeds"]),
            "join_list": lambda e: room.join_list(e["player"], e["form"], e["stakes"], e["present"], e["t"]),
            "seat_change": lambda e: room.request_seat_change(e["player"], e["seat"]),
            "seat_opens": lambda e: room.seat_opens(e["table"], e["seat"]),
            "answer_move": lambda e: room.answer_move(e["player"], e["accept"], e["t"]),
            "seat_new_player": lambda e: room.seat_new_player(e["form"], e["stakes"]),
            "table_change": lambda e: room.request_table_change(e["player"], e["to"]),
        }
        replay_entries(events, calls, CashRoomError, "cash-room")
        return room
