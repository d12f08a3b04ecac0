"""poker-table-controller: the rules core, the table's service, and the application around them.

Where things are (README's "Layout" has the whole map):

* the pure core, a deterministic function of journaled events, importing no hardware library:
  :mod:`controller.rules` (cards, games and rule profiles as data, the engine, the table across
  hands, showdown, rulings), :mod:`controller.geometry` (zones, slots, antennas, camera regions),
  :mod:`controller.equity`, :mod:`controller.journal`, :mod:`controller.service`,
  :mod:`controller.mqtt` (the MQTT contract and link), :mod:`controller.sources` (the source
  plug-in interface), :mod:`controller.errors` (the one exception root);
* the application: :mod:`controller.app` (daemon, config, publisher, web server, logging) and
  :mod:`controller.cli` (``tablectl``);
* tools, out of the core: :mod:`controller.demo`, :mod:`controller.sim` (the dealer simulator),
  :mod:`controller.bench`.

Devices live in ``hw/`` and ``firmware_bridge/``, the camera's recognition in ``vision/``; the
daemon loads them as source plug-ins.  ``tests/core/test_layout.py`` checks the import contracts (``pyproject.toml``).
"""

__version__ = "0.1.0"
