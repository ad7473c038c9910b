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

Router and VCs (the headline's setting, :data:`SETTING`): §6.1 and A.6 simulate "the ideal
virtual cut-through router and the credit-based lossless flow control" in the authors'
simulator (CNSim, its ``railx`` branch); the paper's router is declared as that simulator's,
each of its behaviours a registered switch of ours (:data:`PAPER_ROUTER`): the ``vct`` router
(route, allocate and cross in one cycle, credits the next cycle), ``perlink`` links (eq 5 and
Fig 7 make a chip-to-chip connection the n ports of a chip edge, n links of k lanes, each
held by one packet; CNSim gives each its own input buffer and VCs), the ``age`` allocator
(CNSim updates packets oldest first, and the first to claim a VC or link gets it) and the
``open`` source (CNSim's source keeps no FIFO: every queued packet routes and allocates on its
own). Three of CNSim's behaviours are not built: credits usable in the cycle a tail leaves
(ours: the next cycle), ejection without a port limit (ours: the local port's 4n lanes) and
a head that loses a VC to an older one taking another link's VC in the same cycle (ours: it
asks again the next cycle).
The paper gives no VC count; every topology runs with its routing's minimum (Algorithm 1's 3
VC classes on the HyperX and on this Dragonfly, whose groups are joined all-to-all along X like
a HyperX row; one class per node hop, 9, on the 2D-Torus), one VC per class (per link).
Ablations at the same setting (:data:`ABLATIONS`): each switch of the paper's router undone
alone, the lanes of a connection as one link shared flit by flit, the ``vct`` router as it
was before the switches (parallel links sharing a port's VCs, round robin, a FIFO source) and
the pipelined router of the RTL with those same choices.
"""

from __future__ import annotations

from pathlib import Path

from aifabric.models.common.records import Record, range_table, record

from . import netsim  # noqa: F401  (registers the RailX topologies with the simulator)

__all__ = ["TOPOLOGIES", "run", "records", "plot_a", "plot_b", "bounds", "ABLATIONS",
           "SETTING"]

VCS = 1                            # VCs per routing class (Algorithm 1's minimum: 3 in all)
# the paper's router, declared before the runs: CNSim's ideal VCT router, switch by switch
PAPER_ROUTER = {"router": "vct", "links": "perlink", "allocator": "age", "source": "open"}
ROUTER = PAPER_ROUTER["router"]
_BEFORE = {"links": "parallel", "allocator": "separable", "source": "fifo"}
# HyperX k = 2 at the headline's setting but choices changed (name -> spec keys)
ABLATIONS = {"fifo_source": {"source": "fifo"}, "shared_vcs": {"links": "parallel"},
             "round_robin": {"allocator": "separable"}, "shared": {"links": "shared"},
             "vct_before": _BEFORE, "pipelined": {"router": "pipelined", **_BEFORE}}
# ablation -> (record id, what it changes)
ABLATION_RECORDS = {
    "fifo_source": ("fig14a.hyperx.fifo_source", "a FIFO source per chip into the local "
                    "port's VCs instead of every queued packet competing on its own"),
    "shared_vcs": ("fig14a.hyperx.shared_vcs", "a connection's n links sharing one port's "
                   "VCs instead of each link its own input buffer and VCs"),
    "round_robin": ("fig14a.hyperx.round_robin", "round-robin VC and switch allocation "
                    "instead of oldest first"),
    "shared": ("fig14a.hyperx.shared_links", "eq 5's n·k lanes as one link every packet "
               "shares flit by flit, with one buffer of V VCs, instead of n links"),
    "vct_before": ("fig14a.hyperx.vct_fifo", "the vct router without the paper's switches: "
                   "parallel links sharing a port's VCs, round robin, a FIFO source"),
    "pipelined": ("fig14a.hyperx.pipelined", "the textbook pipelined router, the RTL's "
                  "contract before its switch grants were registered (VC then switch "
                  "allocation, credits over the link), with the choices the RTL has: "
                  "parallel links sharing a port's VCs, round robin, a FIFO source"),
}
SYSTEM = {"m": 4, "n": 2, "R": 18}
HX = "2D-HyperX 9x9"
# topology -> (spec, VC classes of its routing)
TOPOLOGIES = {
    HX: ({"topology": "hyperx"}, 3),
    "Dragonfly 9x9": ({"topology": "dragonfly", "groups": 9, "group_size": 9}, 3),
    "2D-Torus 9x9": ({"topology": "railx-torus", "side": 9}, 9),
}
KS = (1, 2, 4)                     # the records' k; curves="all" adds k = 3
CURVE = tuple(round(0.1 * i, 1) for i in range(1, 11))
# The full run: the saturation points (offered 1.0) of the HyperX at k = 1, 2, 4 (Fig 14(a)'s
# record, Fig 14(b)) with Table 5's windows (a point of the paper's router is about 70
# CPU-seconds), and the ablations at 1,000 + 2,000 cycles (a budget choice, declared in each
# ablation's setting: six points at Table 5's windows cost as much as the rest of the
# reproduction). ``curves="all"``: every curve at every rate of CURVE, k = 3, Fig 14(a)'s
# Dragonfly and 2D-Torus too.
FULL = {"rates": (1.0,), "sat_rates": (1.0,), "warmup": 5000, "window": 10000,
        "drain": 20000, "scan_rates": (1.0,), "ablation_warmup": 1000,
        "ablation_window": 2000}
QUICK = {"rates": (1.0,), "warmup": 500, "window": 1500, "drain": 0, "scan_rates": (1.0,)}
# Where each record's value is expected, quick and full windows: the seed spread measured
# once and committed beside this module (its "how" and each record's "spread")
RANGES = Path(__file__).with_name("expected_ranges.json")


def spec(name: str, k: int, vcs: int = VCS, **over) -> dict:
    """The spec of a topology at internal bandwidth ``k``: ``vcs`` per routing class, the
    headline's router and link model unless ``over`` changes them."""
    base, classes = TOPOLOGIES[name]
    return {**base, **SYSTEM, "k": k, "vcs": vcs * classes, "buffer": 16, "length": 4,
            **PAPER_ROUTER, **over}


SETTING = {k: v for k, v in spec(HX, 2).items() if k != "topology"}


def run(out_dir: Path, quick: bool = False, workers: int | None = None,
        progress: bool = False, only_b: bool = False, curves: str = "record",
        seed: int = 1) -> dict:
    """Simulate every point (resuming from ``out_dir``'s logs); returns
    ``{(topology, k): [row per rate]}`` and ``{("ablation", name): [rows]}`` (the HyperX at
    k = 2, offered 1.0, one choice of :data:`ABLATIONS` changed). Quick: the HyperX at k = 1,
    2, 4 and the ablations, offered 1.0 (past saturation), short windows. Full
    (``curves="record"``): the HyperX at every k and the ablations offered 1.0;
    ``curves="all"``: every curve at every rate of :data:`CURVE` and Fig 14(a)'s other
    topologies. ``only_b``: Fig 14(b)'s curves only. ``seed``: the traffic seed (the
    records' run: 1; 2-5 measure the spread the expected ranges come from)."""
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
    curves = [((HX, k), spec(HX, k), rates((HX, k)))
              for k in ((1, 2, 3, 4) if curves_all else KS)]
    if not only_b:
        curves += [(("ablation", a), spec(HX, 2, **over), cfg["scan_rates"])
                   for a, over in ABLATIONS.items()]
        if _windows(cfg, True) != _windows(cfg, False):   # the headline at their windows
            curves.append((("ablation", "base"), spec(HX, 2), cfg["scan_rates"]))
    if curves_all and not only_b:         # Fig 14(a)'s other topologies: plotted, no record
        curves += [((name, 2), spec(name, 2), rates((name, 2))) for name in TOPOLOGIES
                   if name != HX]
    points, owner = [], []
    for o, s, rates in curves:
        warmup, window = _windows(cfg, o[0] == "ablation")
        for rate in rates:
            points.append(point(s, "uniform", rate, seed, warmup=warmup,
                                window=window, drain=cfg["drain"]))
            owner.append(o)
    log = Path(out_dir) / (("fig14_quick" if quick else "fig14") +
                           (f"_seed{seed}" if seed != 1 else "") + ".jsonl")
    rows = sweep(points, log, workers=workers, progress=progress)
    out: dict = {}
    for o, row in zip(owner, rows):
        out.setdefault(o, []).append(row)
    return out


def _windows(cfg: dict, ablation: bool) -> tuple[int, int]:
    """(warm-up, measured cycles) of a point of the run ``cfg``."""
    if ablation:
        return cfg.get("ablation_warmup", cfg["warmup"]), cfg.get("ablation_window",
                                                                   cfg["window"])
    return cfg["warmup"], cfg["window"]


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
    # the paper's router at the ablations' windows, what each ablation is compared with
    base = _sat(curves[("ablation", "base")]) if ("ablation", "base") in curves else hx[2]
    ranges = range_table(RANGES, quick)
    windows = QUICK if quick else FULL
    setting = {**SETTING, "order": ",".join(netsim.DEFAULT_ORDER),
               "warmup": windows["warmup"], "window": windows["window"], "seed": 1}
    ablation_windows = dict(zip(("warmup", "window"), _windows(windows, True)))
    choices = {"vcs": "not printed; one VC per class of Algorithm 1, its minimum (Table 5 "
                      "gives none)",
               "order": "Algorithm 1 leaves the in-node order open; ours has the highest "
                        "channel-load bound of the 8 orders",
               "links": "eq 5 and Fig 7: a chip-to-chip connection is the n ports of a chip "
                        "edge, so n links of k lanes, each held by one packet; each with its "
                        "own input buffer and VCs as in the authors' simulator",
               "router": "§6.1's ideal virtual cut-through router with the authors' "
                         "simulator's allocation (oldest first) and source (no FIFO); "
                         "credits the next cycle and a local port of 4n lanes are ours"}
    bound_txt = ""
    if bound:
        best = bound["orders"][0]
        xy = next(r for r in bound["k_lanes"] if r["order"] == "xy,xy,xy")
        bound_txt = (f"; channel-load bound of the tables {best['bound']:.3f} (rails; mesh "
                     f"{best['mesh']:.2f}), order {best['order']}; with k-lane links and x-then-y "
                     f"it was {xy['bound']:.3f}")
    gap = ", ".join(f"{name} {abl[name]:.3f} ({abl[name] - base:+.3f})"
                    for name in ("fifo_source", "shared_vcs", "round_robin"))
    out = [
        record("railx", "fig14a.hyperx.throughput", "2D-HyperX m=4 n=2 (1,296 chips) "
               "all-to-all saturation throughput, k = 2", "flits/cycle/chip", 0.8, hx[2],
               kind="value", simulated=True, expect="match", setting=setting,
               choices=choices, expected_range=ranges.get("fig14a.hyperx.throughput"),
               note=f"cycle-level simulation, Table 5 parameters, the paper's router as the "
                    f"authors' simulator builds it ({', '.join(PAPER_ROUTER.values())}: one "
                    f"cycle per router, each of a connection's n links its own VCs, oldest "
                    f"packet first, no source FIFO), Algorithm 1 with one VC per class and "
                    f"in-node order {','.join(netsim.DEFAULT_ORDER)}; k = 1, 2, 4: " +
                    ", ".join(f"{k} {t:.3f}" for k, t in sorted(hx.items())) +
                    f"; at the ablations' windows ({ablation_windows['warmup']} + "
                    f"{ablation_windows['window']} cycles) it gives {base:.3f} and with each "
                    f"switch undone alone: {gap}; the vct router before them "
                    f"{abl['vct_before']:.3f}, the textbook pipelined router "
                    f"{abl['pipelined']:.3f}" + bound_txt),
    ]
    for name, (rid, what) in ABLATION_RECORDS.items():
        out.append(record("railx", rid, "2D-HyperX m=4 n=2 all-to-all saturation throughput, "
                          f"k = 2, {name} (ablation)", "flits/cycle/chip", 0.8, abl[name],
                          kind="ablation", setting={**setting, **ABLATIONS[name],
                                                    **ablation_windows},
                          expected_range=ranges.get(rid),
                          note=f"{what}; offered 1.0; the paper's router at the same "
                               f"windows {base:.3f}, this {abl[name] - base:+.3f}"))
    out += [
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
    keys = [(HX, k) for k in (1, 2, 3, 4) if (HX, k) in curves]
    return _plot(curves, keys, [f"k = {k[1]}" for k in keys],
                 "RailX Fig 14(b): 2D-HyperX m=4 n=2, mesh bandwidth k (n·k lanes; k != 2 "
                 "at saturation only unless curves='all')", path)


# margin added to the seed spread of a throughput record (flits/cycle/chip)
MARGIN = 0.01


def _record_values(curves: dict) -> tuple[dict, dict]:
    """Every Fig 14 record with a range, from one run's curves (id -> value), and the
    HyperX throughput per k."""
    hx = {k: _sat(curves[(HX, k)]) for k in (1, 2, 4)}
    out = {"fig14a.hyperx.throughput": hx[2],
           "fig14b.k2_over_k1": hx[2] / hx[1],
           "fig14b.gain_beyond_k2": (hx[4] - hx[2]) / (hx[2] - hx[1])}
    for name, (rid, _) in ABLATION_RECORDS.items():
        out[rid] = _sat(curves[("ablation", name)])
    return out, hx


def _ratio_margins(hx: dict) -> dict[str, float]:
    """:data:`MARGIN` on each throughput carried to first order through Fig 14(b)'s ratios."""
    t1, t2, t4 = hx[1], hx[2], hx[4]
    d = t2 - t1
    return {"fig14b.k2_over_k1": MARGIN * (1 / t1 + t2 / t1 ** 2),
            "fig14b.gain_beyond_k2": MARGIN * (1 / d + 2 * abs(t4 - t2) / d ** 2 + 1 / d)}


def spread(out_dir: Path, seeds=(1, 2, 3, 4, 5), workers: int | None = None) -> dict:
    """The quick run at traffic seeds ``seeds``, and the range of every record: the seeds'
    min to max plus :data:`MARGIN` (through the ratios to first order, at seed 1's values),
    rounded outward to 3 decimals. Returns ``{id: {"values": {seed: v}, "range": [lo, hi],
    "margin": m}}``; :data:`RANGES` holds what it gave, for the quick run and (its windows'
    spread is smaller, so the quick spread bounds it) the full one."""
    import math
    values: dict = {}
    margins: dict = {}
    for seed in seeds:
        vals, hx = _record_values(run(out_dir, quick=True, workers=workers, seed=seed))
        if not margins:
            margins = {rid: _ratio_margins(hx).get(rid, MARGIN) for rid in vals}
        for rid, v in vals.items():
            values.setdefault(rid, {})[seed] = v
    return {rid: {"values": v, "margin": margins[rid],
                  "range": [math.floor((min(v.values()) - margins[rid]) * 1000) / 1000,
                            math.ceil((max(v.values()) + margins[rid]) * 1000) / 1000]}
            for rid, v in values.items()}
