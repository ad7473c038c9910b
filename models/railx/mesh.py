"""Golden model of ``rtl/railx/mesh.py``: a k x k mesh of RailX chip routers, as the
cycle-level network simulator runs it.

:func:`mesh_network` is ``models.common.netsim.mesh`` (dimension-order routing, links of one
flit per cycle) with as many ports per router as the RTL has (the ports past the mesh are
left unconnected: the rail ports a node wires to its optical circuit switches); the switch
allocator's wave-front arbiter spans every port, so the count matters. :func:`replay` runs a
trace through the simulator and returns what a testbench compares: every injection and
every ejection, by cycle and chip.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aifabric.models.common.netsim import Network, Simulator, Traffic, mesh
from aifabric.models.common.netsim.kernel import EV_INJECT, EV_SWITCH
from aifabric.models.common.netsim.network import LOCAL, NetworkError

from .router import table_entries

__all__ = ["mesh_network", "replay", "Replay", "table_entries", "trace_events"]


def mesh_network(k: int, *, vcs: int, delay: int = 1, ports: int = 5) -> Network:
    """The k x k mesh with ``ports`` ports per router (5: local + 4 mesh)."""
    net = mesh(k, vcs=vcs, delay=delay)
    if ports < net.ports:
        raise NetworkError(f"a mesh router needs at least {net.ports} ports, not {ports}")
    extra = ports - net.ports
    for name, fill in (("nbr", -1), ("nbr_port", -1), ("width", 0), ("delay", 0),
                       ("kind", 0)):
        arr = getattr(net, name)
        setattr(net, name, np.concatenate(
            [arr, np.full((arr.shape[0], extra), fill, arr.dtype)], axis=1))
    return net


@dataclass
class Replay:
    """What the simulator did with a trace: ``injected[(cycle, chip)] = (VC, tag, flit)``
    and ``ejected[(cycle, chip)] = (tag, flit)``, ``tag = src << 32 | k`` (the k-th packet of
    ``src``)."""

    injected: dict
    ejected: dict
    cycles: int


def trace_events(net: Network, rows: np.ndarray, *, buffer: int, cycles: int,
                 allocator: str = "separable", router: str | None = None,
                 budget: int | None = None) -> np.ndarray:
    """The event rows (:meth:`.Simulator.events`) of the trace ``rows`` after ``cycles``
    cycles, invariant checks on (``router="registered"``: the router RTL's registered
    grants, an ejection recorded in the cycle it crosses, a cycle after its grant)."""
    traffic = Traffic.make("trace", net.coords, net.grid, trace=rows)
    if budget is None:
        budget = 2 * (int(rows[:, 3].sum()) + 16) * 3 if len(rows) else 16
    sim = Simulator(net, traffic, buffer=buffer, check=True, log=budget, allocator=allocator,
                    router=router)
    sim.advance(cycles)
    return sim.events()


def replay(net: Network, rows: np.ndarray, *, buffer: int, cycles: int,
           allocator: str = "separable", router: str | None = None) -> Replay:
    """Simulate the trace ``rows`` for ``cycles`` cycles (:func:`trace_events`)."""
    ev = trace_events(net, rows, buffer=buffer, cycles=cycles, allocator=allocator,
                      router=router)
    inj = ev[ev[:, 1] == EV_INJECT]
    ej = ev[(ev[:, 1] == EV_SWITCH) & (ev[:, 5] == LOCAL)]
    return Replay({(int(t), int(r)): (int(v), int(tag), int(f))
                   for t, r, v, tag, f in zip(inj[:, 0], inj[:, 2], inj[:, 4], inj[:, 7],
                                              inj[:, 8])},
                  {(int(t), int(r)): (int(tag), int(f))
                   for t, r, tag, f in zip(ej[:, 0], ej[:, 2], ej[:, 7], ej[:, 8])},
                  cycles)
