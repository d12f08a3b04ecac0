"""Every journaled event type has the table service's handler, and a hand's play (the events
module's ``HAND_PLAY_EVENTS``) goes to the hand's engine, but for the hand's end."""

from __future__ import annotations

from controller.rules.events import EVENT_TYPES, HAND_PLAY_EVENTS, EndHand
from controller.service.table_service import _HANDLERS, TableService


def test_every_event_type_has_a_handler_and_a_hands_play_goes_to_its_engine() -> None:
    assert set(_HANDLERS) == set(EVENT_TYPES.values())
    engine = {cls for cls, handler in _HANDLERS.items() if handler is TableService._hand_event}
    assert engine == set(HAND_PLAY_EVENTS) - {EndHand}
    assert _HANDLERS[EndHand] is TableService._apply_end_hand
