"""Golden models of the circuit-switched AI-training fabrics aifabric implements.

One package per system: ``chronos`` and ``railx`` today, ``infinitehbd``, ``railonly`` and
``flexsipac`` as their issues land; ``common`` holds what several systems share (the
reproduction :class:`~models.common.records.Record`). Plain Python + numpy/scipy/networkx:
this package never imports amaranth, ``rtl`` or ``cosim``.
"""
