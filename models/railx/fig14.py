"""RailX Fig 14: all-to-all (uniform) throughput of ~1.3K-chip RailX topologies, simulated
cycle by cycle (:mod:`models.common.netsim`, RailX's networks from :mod:`.netsim`) with
Table 5's parameters: packets of 4 flits, 16-flit VC buffers, rail links 1 flit/cycle and 10
cycles, mesh links 1 cycle, 5,000 cycles of warm-up and 10,000 measured.

Mesh bandwidth (eq 5): a chip-to-chip mesh link carries n·k flits/cycle (n ports of k times
the port bandwidth; :mod:`.netsim`), so k = 2 on m = 4, n = 2 is 4 lanes per link.

(a) RailX-2D-HyperX m = 4, n = 2 (1,296 chips, 8 ports = 8 flits/cycle/chip injection) with
Algorithm 1's minimal routing at k = 2, beside the RailX 2D-Torus and Dragonfly of the same
1,296 chips; (b) the HyperX at k = 1, 2, 3, 4.

In-node order: Algorithm 1 leaves it open; :data:`.netsim.DEFAULT_ORDER` (y-then-x in the X
phase, x-then-y in the Y phase, y-then-x in the destination node) has the highest
channel-load bound of the 8 orders (:func:`bounds` reports the search).

VCs: the paper gives no VC count. Algorithm 1 needs 3 VC classes (on the HyperX and on this
Dragonfly, whose groups are joined all-to-all along X like a HyperX row); the 2D-Torus routes
with one class per node hop (9). Every topology gets the same ``VCS`` VCs per port (the same
buffer memory), split evenly among its classes: 18, the count where the HyperX's k = 2
throughput stops rising (offered 1.0, Table 5 windows: 3 VCs 0.40, 6 0.72, 12 0.89, 18 0.92,
24 0.93; the next step gains less than the figure's ±0.02). The full run re-measures that scan (``VC_SCAN``) and
reports it beside the record; 3 is the smallest count Algorithm 1 allows.
"""

from __future__ import annotations

from pathlib import Path

from aifabric.models.common.records import Record, record

from . import netsim  # noqa: F401  (registers the RailX topologies with the simulator)

__all__ = ["TOPOLOGIES", "run", "records", "plot_a", "plot_b", "bounds", "VC_SCAN"]

VCS = 18
VC_SCAN = (3, 6, 12, 18, 24)       # VCs of the HyperX k = 2 ablation (full run)
SYSTEM = {"m": 4, "n": 2, "R": 18}
HX = "2D-HyperX 9x9"
# topology -> (spec, VC classes of its routing)
TOPOLOGIES = {
    HX: ({"topology": "hyperx"}, 3),
    "Dragonfly 9x9": ({"topology": "dragonfly", "groups": 9, "group_size": 9}, 3),
    "2D-Torus 9x9": ({"topology": "railx-torus", "side": 9}, 9),
}
KS = (1, 2, 3, 4)
CURVE = tuple(round(0.1 * i, 1) for i in range(1, 11))
# The full run: the HyperX k = 2 curve of Fig 14(a) (the record's), the saturation points of
# the other k (Fig 14(b)) and topologies, and the VC scan, with Table 5's windows (about 20
# CPU-minutes). ``curves="all"``: every curve at every rate (2-3 CPU-hours on this machine).
FULL = {"rates": CURVE, "sat_rates": (0.9, 1.0), "warmup": 5000, "window": 10000,
        "drain": 20000, "scan_rates": (1.0,)}
QUICK = {"rates": (1.0,), "warmup": 500, "window": 1500, "drain": 0}


def spec(name: str, k: int, vcs: int = VCS) -> dict:
    base, classes = TOPOLOGIES[name]
    return {**base, **SYSTEM, "k": k, "vcs": vcs // classes * classes, "buffer": 16,
            "length": 4}


def run(out_dir: Path, quick: bool = False, workers: int | None = None,
        progress: bool = False, only_b: bool = False, curves: str = "record") -> dict:
    """Simulate every point (resuming from ``out_dir``'s logs); returns
    ``{(topology, k): [row per rate]}`` and, in the full run, ``{("vcs", per_class): [rows]}``
    (the HyperX at k = 2, saturation rates). Quick: the HyperX at k = 1, 2, 4, offered 1.0
    (past saturation), short windows. Full (``curves="record"``): the HyperX at k = 2 at
    every rate, the other k and topologies at their saturation rates; ``curves="all"``:
    every curve at every rate. ``only_b``: Fig 14(b)'s curves only."""
    from aifabric.models.common.netsim.sweep import point, sweep
    if curves not in ("record", "all"):
        raise ValueError(f"curves must be 'record' or 'all', not {curves!r}")
    cfg = QUICK if quick else FULL
    every = quick or curves == "all"

    def rates(key):
        return cfg["rates"] if every or key == (HX, 2) else cfg["sat_rates"]
    curves = [((HX, k), spec(HX, k), rates((HX, k))) for k in KS if not quick or k != 3]
    if not quick and not only_b:
        curves += [((name, 2), spec(name, 2), rates((name, 2))) for name in TOPOLOGIES
                   if name != HX]
        curves += [(("vcs", v), spec(HX, 2, v), cfg["scan_rates"]) for v in VC_SCAN
                   if v != VCS]
    points, owner = [], []
    for o, s, rates in curves:
        for rate in rates:
            points.append(point(s, "uniform", rate, 1, warmup=cfg["warmup"],
                                window=cfg["window"], drain=cfg["drain"]))
            owner.append(o)
    log = Path(out_dir) / ("fig14_quick.jsonl" if quick else "fig14.jsonl")
    rows = sweep(points, log, workers=workers, progress=progress)
    out: dict = {}
    for o, row in zip(owner, rows):
        out.setdefault(o, []).append(row)
    if ("vcs", VC_SCAN[0]) in out:
        out[("vcs", VCS)] = [r for r in out[(HX, 2)] if r["rate"] in cfg["scan_rates"]]
    return out


def bounds(k: int = 2) -> dict:
    """Channel-load bounds (flits/cycle/chip) of the HyperX tables at ``k``: every in-node
    order (:func:`.netsim.order_search`), and the old x-then-y tables with k-lane links (the
    convention before eq 5 was followed) for comparison."""
    from .netsim import order_search
    from .system import RailX, hyperx_2d
    topo = hyperx_2d(RailX(SYSTEM["m"], SYSTEM["n"], SYSTEM["R"]))
    return {"orders": order_search(topo, k=k),
            "k_lanes": order_search(topo, mesh_width=k)}


def _sat(rows) -> float:
    return max(r["accepted"] for r in rows)


def vc_scan(curves: dict) -> dict[int, float]:
    """VCs (total) -> saturation throughput of the HyperX at k = 2 (full run)."""
    return {v: _sat(curves[("vcs", v)]) for v in VC_SCAN if ("vcs", v) in curves}


def records(curves: dict, bound: dict | None = None) -> list[Record]:
    hx = {k: _sat(curves[(HX, k)]) for k in KS if (HX, k) in curves}
    max_thr = curves[(HX, 2)][0]["max_throughput"]
    vcs = VCS
    scan = vc_scan(curves)
    scan_txt = ("; saturation by VC count (3 = Algorithm 1's minimum): " +
                ", ".join(f"{v} VCs {t:.3f}" for v, t in scan.items())) if scan else ""
    bound_txt = ""
    if bound:
        best = bound["orders"][0]
        xy = next(r for r in bound["k_lanes"] if r["order"] == "xy,xy,xy")
        bound_txt = (f"; channel-load bound of the tables {best['bound']:.3f} (rails; mesh "
                     f"{best['mesh']:.2f}), order {best['order']}; with k-lane links and x-then-y "
                     f"it was {xy['bound']:.3f}")
    out = [
        record("railx", "fig14a.hyperx.throughput", "2D-HyperX m=4 n=2 (1,296 chips) "
               "all-to-all saturation throughput, k = 2", "flits/cycle/chip", 0.8, hx[2],
               kind="value", simulated=True, expect="differ",
               note=f"cycle-level simulation, Table 5 parameters, eq 5 mesh links (n·k = 4 "
                    f"lanes), Algorithm 1 with {vcs} VCs and in-node order "
                    f"{','.join(netsim.DEFAULT_ORDER)}; the figure's plotting precision is "
                    f"about ±0.02" + scan_txt + bound_txt,
               why="the paper does not print its VC count, and the VC count is what moves "
                   "this value: at k = 2 our HyperX saturates at 0.40 with Algorithm 1's "
                   "minimum of 3 VCs, 0.72 with 6, 0.89 with 12, 0.92 with 18 and 0.93 with 24 "
                   "(Table 5 windows, offered 1.0; 18 is where it stops rising, 24 adds less "
                   "than the figure's ±0.02; the rail bound is 1.0), so the paper's 0.8 lies "
                   "between 6 and 12 VCs; reading k as the lanes of one chip-to-chip link (k, "
                   "not eq 5's n·k) gives 0.71 at 18 VCs (our k = 1 point)"),
        record("railx", "fig14a.hyperx.max", "2D-HyperX m=4 n=2 theoretical all-to-all "
               "maximum", "flits/cycle/chip", 1, max_thr, kind="value",
               note="2B_c/N from the built graph's bisection (eq 2-4); 9 nodes per row "
                    "cannot be halved: the X bisection cuts 4 | 5 nodes, which gives 1.11 "
                    "(Table 2's 2(r+1)/m^2 gives 1.125), within half a unit of the printed 1"),
    ]
    if all(k in hx for k in (1, 2, 4)):
        out.append(record(
            "railx", "fig14b.k2_over_k1", "Fig 14(b): saturation throughput k = 2 over k = 1 "
            "('significantly improved')", "ratio", 1, hx[2] / hx[1],
            kind="bound", bound=">=", simulated=True, formula="T(2)/T(1) > 1",
            note="simulated: " + ", ".join(f"k = {k} {t:.3f}" for k, t in sorted(hx.items()))))
        out.append(record(
            "railx", "fig14b.gain_beyond_k2", "Fig 14(b): gain from k = 2 to 4 over the gain "
            "from k = 1 to 2 ('higher internal bandwidths do not bring significant "
            "improvement')", "ratio", 1, (hx[4] - hx[2]) / (hx[2] - hx[1]),
            kind="bound", bound="<=", simulated=True,
            formula="(T(4) - T(2)) / (T(2) - T(1)) <= 1", note="simulated"))
    return out


def _plot(curves: dict, keys: list, labels: list, title: str, path: Path) -> Path:
    from aifabric.models.common.netsim.plot import latency_curves
    return latency_curves({label: curves[key] for key, label in zip(keys, labels)}, path, title)


def plot_a(curves: dict, path: Path) -> Path:
    keys = [(name, 2) for name in TOPOLOGIES if (name, 2) in curves]
    return _plot(curves, keys, [k[0] for k in keys],
                 "RailX Fig 14(a): all-to-all, ~1.3K chips, k = 2", path)


def plot_b(curves: dict, path: Path) -> Path:
    keys = [(HX, k) for k in KS if (HX, k) in curves]
    return _plot(curves, keys, [f"k = {k[1]}" for k in keys],
                 "RailX Fig 14(b): 2D-HyperX m=4 n=2, mesh bandwidth k (n·k lanes; k != 2 "
                 "at saturation only unless curves='all')", path)
