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

Router and VCs (the headline's setting, :data:`SETTING`): §6.1 simulates "the ideal virtual
cut-through router and the credit-based lossless flow control" (the simulator's ``vct``
router) and gives no VC count; every topology runs with its routing's minimum (Algorithm 1's 3
VC classes on the HyperX and on this Dragonfly, whose groups are joined all-to-all along X like
a HyperX row; one class per node hop, 9, on the 2D-Torus), one VC per class. Links between
chips: eq 5 counts a chip-to-chip connection as n ports of k times the rail bandwidth, the n
ports of a chip edge (Fig 7), so it is n parallel links of k lanes, each carrying one packet at
a time (the ``parallel`` link model). Ablations at the same setting: the pipelined router of
the RTL, and the n·k lanes as one link shared flit by flit.
"""

from __future__ import annotations

from pathlib import Path

from aifabric.models.common.records import Record, range_table, record

from . import netsim  # noqa: F401  (registers the RailX topologies with the simulator)

__all__ = ["TOPOLOGIES", "run", "records", "plot_a", "plot_b", "bounds", "ABLATIONS",
           "SETTING"]

VCS = 1                            # VCs per routing class (Algorithm 1's minimum: 3 in all)
ROUTER, LINKS = "vct", "parallel"
# HyperX k = 2 at the headline's setting but one choice changed (name -> spec keys)
ABLATIONS = {"pipelined": {"router": "pipelined"}, "shared": {"links": "shared"}}
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
# The full run: the saturation points (offered 1.0) of the HyperX at every k (Fig 14(a)'s
# record, Fig 14(b)) and of the ablations, with Table 5's windows (a point is about 70
# CPU-seconds). ``curves="all"``: every curve at every rate of CURVE, Fig 14(a)'s Dragonfly
# and 2D-Torus too.
FULL = {"rates": (1.0,), "sat_rates": (1.0,), "warmup": 5000, "window": 10000,
        "drain": 20000, "scan_rates": (1.0,)}
QUICK = {"rates": (1.0,), "warmup": 500, "window": 1500, "drain": 0, "scan_rates": (1.0,)}
# Where each record's value is expected, quick and full windows: the seed spread measured
# once and committed beside this module (its "how" and each record's "spread")
RANGES = Path(__file__).with_name("expected_ranges.json")


def spec(name: str, k: int, vcs: int = VCS, **over) -> dict:
    """The spec of a topology at internal bandwidth ``k``: ``vcs`` per routing class, the
    headline's router and link model unless ``over`` changes them."""
    base, classes = TOPOLOGIES[name]
    return {**base, **SYSTEM, "k": k, "vcs": vcs * classes, "buffer": 16, "length": 4,
            "router": ROUTER, "links": LINKS, **over}


SETTING = {k: v for k, v in spec(HX, 2).items() if k != "topology"}


def run(out_dir: Path, quick: bool = False, workers: int | None = None,
        progress: bool = False, only_b: bool = False, curves: str = "record") -> dict:
    """Simulate every point (resuming from ``out_dir``'s logs); returns
    ``{(topology, k): [row per rate]}`` and ``{("ablation", name): [rows]}`` (the HyperX at
    k = 2, offered 1.0, one choice of :data:`ABLATIONS` changed). Quick: the HyperX at k = 1,
    2, 4 and the ablations, offered 1.0 (past saturation), short windows. Full
    (``curves="record"``): the HyperX at every k and the ablations offered 1.0;
    ``curves="all"``: every curve at every rate of :data:`CURVE` and Fig 14(a)'s other
    topologies. ``only_b``: Fig 14(b)'s curves only."""
    from aifabric.models.common.netsim.sweep import point, sweep
    if curves not in ("record", "all"):
        raise ValueError(f"curves must be 'record' or 'all', not {curves!r}")
    cfg = QUICK if quick else FULL
    curves_all = not quick and curves == "all"
    every = quick or curves_all

    def rates(key):
        if curves_all:
            return CURVE
        return cfg["rates"] if every or key == (HX, 2) else cfg["sat_rates"]
    curves = [((HX, k), spec(HX, k), rates((HX, k))) for k in KS if not quick or k != 3]
    if not only_b:
        curves += [(("ablation", a), spec(HX, 2, **over), cfg["scan_rates"])
                   for a, over in ABLATIONS.items()]
    if curves_all and not only_b:         # Fig 14(a)'s other topologies: plotted, no record
        curves += [((name, 2), spec(name, 2), rates((name, 2))) for name in TOPOLOGIES
                   if name != HX]
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


def records(curves: dict, bound: dict | None = None, quick: bool = False) -> list[Record]:
    hx = {k: _sat(curves[(HX, k)]) for k in KS if (HX, k) in curves}
    max_thr = curves[(HX, 2)][0]["max_throughput"]
    abl = {a: _sat(curves[("ablation", a)]) for a in ABLATIONS}
    ranges = range_table(RANGES, quick)
    windows = QUICK if quick else FULL
    setting = {**SETTING, "order": ",".join(netsim.DEFAULT_ORDER),
               "warmup": windows["warmup"], "window": windows["window"], "seed": 1}
    choices = {"vcs": "not printed; one VC per class of Algorithm 1, its minimum (Table 5 "
                      "gives none)",
               "order": "Algorithm 1 leaves the in-node order open; ours has the highest "
                        "channel-load bound of the 8 orders",
               "links": "eq 5 and Fig 7: a chip-to-chip connection is the n ports of a chip "
                        "edge, so n parallel links of k lanes, each held by one packet"}
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
               kind="value", simulated=True, expect="differ", setting=setting,
               choices=choices, expected_range=ranges.get("fig14a.hyperx.throughput"),
               note=f"cycle-level simulation, Table 5 parameters, the ideal virtual "
                    f"cut-through router ({ROUTER}), eq 5 mesh connections as n parallel "
                    f"links of k lanes, Algorithm 1 with one VC per class and in-node order "
                    f"{','.join(netsim.DEFAULT_ORDER)}; k = 1, 2, 4: " +
                    ", ".join(f"{k} {t:.3f}" for k, t in sorted(hx.items())) + bound_txt,
               why=f"at one VC per Algorithm 1 class the router blocks before the links "
                   f"do: the pipelined router of the RTL delivers {abl['pipelined']:.3f} at "
                   f"the same setting and the n·k lanes shared flit by flit "
                   f"{abl['shared']:.3f}, and k moves it little (k = 1 {hx.get(1, 0):.3f}, "
                   f"k = 4 {hx.get(4, 0):.3f}), so the mesh is not the limit; the "
                   f"authors' simulator gives its input buffers one packet at a time and "
                   f"each of a connection's n links its own VCs, which ours share"),
        record("railx", "fig14a.hyperx.pipelined", "2D-HyperX m=4 n=2 all-to-all saturation "
               "throughput, k = 2, with the pipelined router of the RTL (ablation)",
               "flits/cycle/chip", 0.8, abl["pipelined"], kind="ablation",
               setting={**setting, **ABLATIONS["pipelined"]},
               expected_range=ranges["fig14a.hyperx.pipelined"],
               note="what the router RTL's pipeline (VC then switch allocation, credits "
                    "over the link) would deliver at the headline's setting; offered 1.0"),
        record("railx", "fig14a.hyperx.shared_links", "2D-HyperX m=4 n=2 all-to-all "
               "saturation throughput, k = 2, chip-to-chip lanes shared flit by flit "
               "(ablation)", "flits/cycle/chip", 0.8, abl["shared"], kind="ablation",
               setting={**setting, **ABLATIONS["shared"]},
               expected_range=ranges["fig14a.hyperx.shared_links"],
               note="eq 5's n·k lanes as one link every packet shares flit by flit, "
                    "instead of n links held per packet; offered 1.0"),
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
            setting=setting, choices=choices, expected_range=ranges.get("fig14b.k2_over_k1"),
            note="simulated: " + ", ".join(f"k = {k} {t:.3f}" for k, t in sorted(hx.items()))))
        out.append(record(
            "railx", "fig14b.gain_beyond_k2", "Fig 14(b): gain from k = 2 to 4 over the gain "
            "from k = 1 to 2 ('higher internal bandwidths do not bring significant "
            "improvement')", "ratio", 1, (hx[4] - hx[2]) / (hx[2] - hx[1]),
            kind="bound", bound="<=", simulated=True, setting=setting, choices=choices,
            expected_range=ranges.get("fig14b.gain_beyond_k2"),
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
