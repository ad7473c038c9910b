"""Golden models of the circuit-switched AI-training fabrics aifabric implements.

One package per system (``chronos``, and later ``railx``, ``infinitehbd``, ``railonly``,
``flexsipac``); ``common`` holds what several systems share. Plain Python + numpy/scipy/networkx:
this package never imports amaranth, ``rtl`` or ``cosim``.
"""
