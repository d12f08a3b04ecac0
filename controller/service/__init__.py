"""The one owner of table state: :class:`TableService` (journal first, then apply) and what it
hands the publisher, typed (:mod:`controller.service.results`).

Its modules, by concern: ``results`` (the typed outputs), ``state`` (what the service keeps and
the steps every part takes), ``table_side`` (sitting out and in, the draw for the button, a
rotation), ``views`` (the retained state) and ``table_service`` (the events, in and out).  The
old import path works as it did when the service was one module: ``from controller.service import
TableService, Output, OutputKind, Rejected``.
"""

from controller.service.results import EVENT_OUTPUTS, Output, OutputKind
from controller.service.state import Alert, Rejected
from controller.service.table_service import HAND_EVENTS, TableService

__all__ = ["EVENT_OUTPUTS", "HAND_EVENTS", "Alert", "Output", "OutputKind", "Rejected", "TableService"]
