"""poker-table-controller core: cards, games as data, the rules engine, the table and its journal.

Nothing in this package imports a hardware library; adapters live in ``hw/`` and
``firmware_bridge/`` and only turn what they sense into :mod:`controller.events`.
"""

__version__ = "0.1.0"
