"""A tournament run by the rulebook on the floor (issue 23): pure decisions, journaled inputs.

Everything here is a deterministic function of what the floor journals: the structure (data), the
seed of the random source, registrations, busts and the cards the tables' antennas read for a draw.
Each decision is a typed record that cites the rule it applies, so the floor can show it to the
dealers as an instruction and replay it later.

* :mod:`.structure`: levels, breaks and colour-ups as data; which level a hand plays (TDA 21);
* :mod:`.clock`: the action clock a player is put on (TDA 26);
* :mod:`.chiprace`: colour-ups and the chip race (TDA 22, RRoP s15 8);
* :mod:`.seating`: random seating, late entries, balancing, breaking tables by the 2-step random
  process, halting short tables, the final table and hand-for-hand (TDA 6-10, RRoP s15 12-17).
"""
