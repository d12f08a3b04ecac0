"""The one owner of table state: :class:`TableService` (journal first, then apply) and what it
hands the publisher, typed (:mod:`controller.service.results`).

The package keeps the old import path: ``from controller.service import TableService, Output,
OutputKind, Rejected`` works as it did when the service was one module.
"""

from controller.service.results import EVENT_OUTPUTS, Output, OutputKind
from controller.service.table_service import HAND_EVENTS, Alert, Rejected, TableService

__all__ = ["EVENT_OUTPUTS", "HAND_EVENTS", "Alert", "Output", "OutputKind", "Rejected", "TableService"]
