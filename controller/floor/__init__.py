"""The floor (issue 18): every table's alerts in one place, every hand kept and searchable.

* :mod:`.store` keeps hands, events, rulings and dealer sign-ins in SQLite (one machine) or
  PostgreSQL (a room), idempotent on table/hand/sequence so a redelivery is never a duplicate;
* :mod:`.ingest` turns a table's MQTT messages (or their NATS subjects) into store rows;
* :mod:`.sources` reads them from one Mosquitto (paho) or a JetStream durable consumer (nats-py);
* :mod:`.stored` tells each table of a room what the store holds (``floor/stored``), so the table
  resends what a lost node dropped;
* :mod:`.server` serves the floor page (``web/floor/``) and its JSON API;
* :mod:`.service` wires them together for ``tablectl floor``;
* :mod:`.room` starts the room's tier for the tests and the benchmark: a 3-node NATS cluster
  with TLS and per-table credentials, PostgreSQL, Mosquitto bridges; :mod:`.pki` a throwaway CA;
* :mod:`.sim` a lightweight table that speaks the MQTT contract, for the benchmark.
"""
