"""Chronos RTL (Renganathan & McKeown, NAIC'25).

- :mod:`.wwfa`: wrapped wave-front arbiter.
- :mod:`.bvn`: BhaVaN-style Birkhoff-von Neumann engine built on it.
- :mod:`.slot_switch`, :mod:`.slot_endpoint`: time-slot synchronization and the scheduled
  crossbar; :mod:`.slot_fabric` joins them over fibres of run-time delay for co-simulation.
"""
