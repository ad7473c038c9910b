"""RailX RTL (Feng et al., 2025).

- :mod:`.router`: the chip's input-queued VC router (credits, virtual cut-through, run-time
  routing table), cycle for cycle the router of ``models.common.netsim``.
- :mod:`.mesh`: a k x k mesh of routers with the links between them, for co-simulation.
"""
