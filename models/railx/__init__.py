"""RailX (Feng, Chen, ..., Hoefler, 2025): 2D-mesh nodes and 2D-organised optical circuit
switches wired into rail rings.

- :mod:`.rings`: rail-ring all-to-all, the Hamiltonian decomposition of K*_k (§3.1, A.1).
- :mod:`.system`: the physical system (eq 1), OCS configurations and chip-level graphs of
  2D-Torus, 2D-HyperX, Dragonfly and split high-dimensional topologies (§3.2-3.3, Table 2).
- :mod:`.routing`: minimal (Algorithm 1) and non-minimal adaptive routing, channel dependency
  graphs (§4.1).
- :mod:`.collectives`: All-Reduce time models (eq 6-9, 12-13), Fig 15, Table 4 (§4.2, A.2-3).
- :mod:`.cost`: parts-based cost of Table 6 (§6.2, A.7).
- :mod:`.availability`: Algorithm 2, Fig 17, multi-job packing (§6.6, A.5).
- :mod:`.allocation`: DP/CP split (eq 10-11, Fig 16), dynamic CP/EP reallocation (§5.2).
- :mod:`.fig14`: all-to-all throughput by cycle-level simulation (Fig 14, Table 5).
- :mod:`.experiments`: the paper's numbers and figures from the above.
"""

from __future__ import annotations

from pathlib import Path

from aifabric.models.common.records import Record
from aifabric.paths import BUILD

from .rings import rail_links, rail_rings
from .routing import AdaptiveRouting, MinimalRouting, channel_dependency_graph, route
from .system import Dim, RailX, Topology, dragonfly, hyperx_2d, split, torus_2d

__all__ = ["rail_rings", "rail_links", "RailX", "Topology", "Dim", "torus_2d", "hyperx_2d",
           "dragonfly", "split", "route", "MinimalRouting", "AdaptiveRouting",
           "channel_dependency_graph", "reproduce", "figures"]

_cache: dict = {}


def _cached(key, fn):
    if key not in _cache:
        _cache[key] = fn()
    return _cache[key]


def reproduce(quick: bool = False) -> list[Record]:
    """Records of eq 1, Table 2 on built instances, Algorithm 1's VC and hop bounds, all of
    Table 6, Fig 15's ordering, Fig 16's trends, Fig 17(b)'s 90% claim. ``quick``: rail rings
    up to k = 65 instead of 257 and 20 instead of 100 fault samples."""
    from . import experiments as ex
    k_max = 65 if quick else 257
    records = ex.ring_records(_cached(("rings", quick), lambda: ex.ring_sweep(k_max)), k_max)
    records += ex.system_records()
    records += ex.routing_records()
    records += ex.table6_records()
    records += ex.fig15_records(_cached("fig15", ex.fig15))
    records += ex.allocation_records(_cached("fig16", _fig16))
    records += ex.availability_records(_cached(("avail", quick),
                                               lambda: ex.availability_data(quick)))
    records += fig14_records(quick)
    return records


NETSIM_DIR = BUILD / "netsim"


def _fig14(quick: bool) -> dict:
    from . import fig14
    return _cached(("fig14", quick), lambda: fig14.run(NETSIM_DIR, quick=quick,
                                                       progress=not quick))


def fig14_records(quick: bool = False) -> list[Record]:
    """Fig 14 from cycle-level simulation (:mod:`.fig14`); the full run also computes the
    channel-load bounds of the k = 2 tables over every in-node order (about a minute)."""
    from . import fig14
    bound = None if quick else _cached("fig14_bounds", fig14.bounds)
    return fig14.records(_fig14(quick), bound, quick)


def _fig16():
    from .allocation import fig16
    return fig16()


def figures(out_dir: Path, quick: bool = False) -> list[Path]:
    """railx_fig14a_alltoall.png, railx_fig14b_mesh_bandwidth.png, railx_fig15_allreduce.png,
    railx_fig16_allocation.png, railx_fig17_availability.png."""
    from . import experiments as ex
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    from . import fig14
    curves = _fig14(quick)
    return [
        fig14.plot_a(curves, out_dir / "railx_fig14a_alltoall.png"),
        fig14.plot_b(curves, out_dir / "railx_fig14b_mesh_bandwidth.png"),
        ex.plot_fig15(_cached("fig15", ex.fig15), out_dir / "railx_fig15_allreduce.png"),
        ex.plot_fig16(_cached("fig16", _fig16), out_dir / "railx_fig16_allocation.png"),
        ex.plot_fig17(_cached(("avail", quick), lambda: ex.availability_data(quick)),
                      out_dir / "railx_fig17_availability.png"),
    ]
