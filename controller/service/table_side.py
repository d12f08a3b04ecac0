"""The table side (issue 22): sitting out and in, the draw for the button read by the antennas,
a mixed game's rotation, and RRoP s4 10's "looked".

Console inputs journaled like the rest, so a replay rebuilds them; each is checked before it is
journaled (:meth:`TableSide._precheck_table_side`) and applied by the service's handlers
(:class:`controller.service.table_service.TableService`).
"""

from __future__ import annotations

from controller.rules.events import Deal, Event, Looked, SetRotation, SitIn, SitOut, StartDraw
from controller.rules.games import get_game
from controller.rules.owed_blinds import owed_blind_looked
from controller.rules.rotations import Rotation, RotationError, rotation_from_mapping
from controller.service.results import ButtonDrawn, ButtonMoved, Output, RotationSet, SatIn, SatOut
from controller.service.state import Rejected, ServiceState


class TableSide(ServiceState):
    """The table-side inputs of :class:`~controller.service.table_service.TableService`."""

    def _between_hands(self, what: str) -> None:
        if self.engine is not None and not self.engine.over:
            raise Rejected(f"{what} between hands only (hand {self.hand_id} is in progress)")

    def _draw_open(self) -> bool:
        return self.drawing is not None and (self.engine is None or self.engine.over)

    def _precheck_table_side(self, event: Event) -> None:
        if isinstance(event, SitOut):
            self._between_hands("a player sits out")
            self._stays_for_the_draw(event.seat, "sit out")
            self._try(lambda t: t.sit_out(event.seat))
        elif isinstance(event, SitIn):
            self._between_hands("a player sits in")
            self._try(lambda t: t.sit_in(event.seat, event.post))
        elif isinstance(event, StartDraw):
            self._between_hands("the draw for the button comes")
            if event.cancel and self.drawing is None:
                raise Rejected("no draw for the button to cancel")
            if not event.cancel and len(self.table._live()) < 2:
                raise Rejected("a draw for the button needs at least two players")
        elif isinstance(event, SetRotation):
            self._between_hands("the game changes")
            rotation = _rotation_of(event)
            self._try(lambda t: t.set_rotation(rotation))
        elif isinstance(event, Looked):
            self._owed_blind_check(event.seat)
        elif isinstance(event, Deal):
            assert self.drawing is not None
            seat = event.seat
            player = self.table.players.get(seat)
            if player is None or player.sitting_out:
                raise Rejected(f"seat {seat} has no player in the draw for the button")
            if seat in self.drawing:
                raise Rejected(f"seat {seat} already drew {self.drawing[seat].face} for the button")
            if event.card.is_joker:
                raise Rejected("a joker cannot be drawn for the button: deal seat another card")
            if any(c == event.card for c in self.drawing.values()):
                raise Rejected(f"{event.card.face} was drawn already: a card cannot come twice")
            drawn = {**self.drawing, seat: event.card}
            if all(s in drawn for s in self.table._live()):  # the last card: the draw is decided on a copy first
                self._try(lambda t: t.draw_for_button(drawn))

    def _stays_for_the_draw(self, seat: int, what: str) -> None:
        """A player who drew for the button stays in the draw until it is decided or cancelled: his
        card counts (RRoP s2 Seating 6), and a draw with a card from an empty or sitting-out seat
        could not be decided (it would be journaled, then refused on every replay)."""
        if self.drawing is not None and seat in self.drawing:
            raise Rejected(f"seat {seat} drew for the button: the player cannot {what} until the draw is decided "
                           "(or cancelled)")

    def _apply_sit_out(self, ev: SitOut, out: list[Output], at: float) -> None:
        self.table.sit_out(ev.seat)
        out.append(Output(SatOut(ev.seat)))

    def _apply_sit_in(self, ev: SitIn, out: list[Output], at: float) -> None:
        self.table.sit_in(ev.seat, ev.post)
        out.append(Output(SatIn(ev.seat, ev.post)))

    def _apply_start_draw(self, ev: StartDraw, out: list[Output], at: float) -> None:
        """RRoP s2 Seating 6: "When a button game starts, active players will draw a card for the
        button position"; RRoP s3 Ties 1-2: suits break a tie of ranks ("Drawing a card is used to
        determine things like who gets the button in a new game").  The next card at each seat is its
        card for the draw; once every player has one the winner has the button."""
        self.drawing = None if ev.cancel else {}
        self.last_hand_misdeal = False
        out.append(Output(self._button_drawn(cancelled=ev.cancel)))

    def _draw_card(self, ev: Deal, out: list[Output], at: float) -> None:
        assert self.drawing is not None
        self.drawing[ev.seat] = ev.card
        waiting = [s for s in self.table._live() if s not in self.drawing]
        winner = None
        if not waiting:
            cards, self.drawing = self.drawing, None
            winner = self.table.draw_for_button(cards)
            out.append(Output(ButtonMoved(winner, by_draw=True)))
        out.append(Output(self._button_drawn(winner=winner)))

    def _button_drawn(self, winner: int | None = None, cancelled: bool = False) -> ButtonDrawn:
        deck = self.table.deck
        if winner is not None and self.table.last_draw is not None:
            cards = tuple(self.table.last_draw["cards"].items())
        else:
            cards = tuple((s, c.label(deck)) for s, c in sorted((self.drawing or {}).items()))
        waiting = () if winner is not None or cancelled else tuple(s for s in self.table._live()
                                                                    if s not in (self.drawing or {}))
        name = self.table.players[winner].name if winner is not None and winner in self.table.players else None
        high = get_game(self.table.game).button_draw
        order = "high" if high == "high" else "low"
        return ButtonDrawn(cards, waiting, winner, name, cancelled, self.table.game, order)

    def _apply_set_rotation(self, ev: SetRotation, out: list[Output], at: float) -> None:
        self.table.set_rotation(_rotation_of(ev))
        self.last_hand_misdeal = False
        out.append(Output(RotationSet(ev.name)))

    # RRoP s4 10: "If a player who owes a blind (as a result of a missed blind) is dealt in without
    # posting, the hand is dead if the player looks at it before putting up the required chips, and
    # has not yet acted. If the player acts on the hand and plays it, putting chips into the pot
    # before the error is discovered, the hand is live, and the player is required to post on the
    # next deal."
    def _owed_blind_check(self, seat: int) -> None:
        engine = self.engine
        if engine is None or engine.over:
            raise Rejected("no hand in progress: 'looked' is said of a player dealt in this hand")
        if seat not in engine.view().setup.seats:
            raise Rejected(f"seat {seat} is not dealt in this hand")
        if seat not in self.table.owing:
            raise Rejected(f"seat {seat} was not dealt in on owing a missed blind (or was ruled on already): "
                           "looking at his cards is no irregularity")

    def _apply_looked(self, ev: Looked, out: list[Output], at: float) -> None:
        engine = self.engine
        if engine is None or engine.over or ev.seat not in self.table.owing:
            return
        owed = self.table.owing.pop(ev.seat)
        ruling = owed_blind_looked(engine, ev.seat, owed)
        if ruling.remedy == "post_next_deal":
            self.table.owe_again(ev.seat, owed)
        self._alert(ruling, out, at)
        if engine.over:
            self._close_hand(out)


def _rotation_of(ev: SetRotation) -> Rotation | None:
    """The rotation a SetRotation journaled (None: the rotation ends)."""
    if ev.name is None:
        return None
    try:
        return rotation_from_mapping({"name": ev.name, "hands": ev.hands, "per_level": ev.per_level,
                                      "games": list(ev.games)})
    except RotationError as exc:
        raise Rejected(str(exc)) from exc
