"""RailX Fig 14: all-to-all (uniform) throughput of ~1.3K-chip RailX topologies, simulated
cycle by cycle (:mod:`models.common.netsim`) with Table 5's parameters: packets of 4 flits,
16-flit VC buffers, rail links 1 flit/cycle and 10 cycles, mesh links k flits/cycle and 1
cycle, 5,000 cycles of warm-up and 10,000 measured.

(a) RailX-2D-HyperX m = 4, n = 2 (1,296 chips, 8 ports = 8 flits/cycle/chip injection) with
Algorithm 1's minimal routing at k = 2, beside the RailX 2D-Torus and Dragonfly of the same
1,296 chips; (b) the HyperX at k = 1, 2, 3, 4.

VCs: the paper gives no VC count. Algorithm 1 needs 3 VC classes (on the HyperX and on this
Dragonfly, whose groups are joined all-to-all along X like a HyperX row); the 2D-Torus routes
with one class per node hop (9). Each class gets ``VCS_PER_CLASS`` VCs here.
"""

from __future__ import annotations

from pathlib import Path

from models.common.records import Record

from . import netsim  # noqa: F401  (registers the RailX topologies with the simulator)

__all__ = ["TOPOLOGIES", "run", "records", "plot_a", "plot_b"]

VCS_PER_CLASS = 2
SYSTEM = {"m": 4, "n": 2, "R": 18}
# topology -> (spec, VC classes of its routing)
TOPOLOGIES = {
    "2D-HyperX 9x9": ({"topology": "hyperx"}, 3),
    "Dragonfly 9x9": ({"topology": "dragonfly", "groups": 9, "group_size": 9}, 3),
    "2D-Torus 9x9": ({"topology": "railx-torus", "side": 9}, 9),
}
KS = (1, 2, 3, 4)
FULL = {"rates": tuple(round(0.1 * i, 1) for i in range(1, 11)), "warmup": 5000,
        "window": 10000, "drain": 20000}
QUICK = {"rates": (0.6, 1.0), "warmup": 500, "window": 1500, "drain": 0}


def spec(name: str, k: int) -> dict:
    base, classes = TOPOLOGIES[name]
    return {**base, **SYSTEM, "k": k, "vcs": classes * VCS_PER_CLASS, "buffer": 16,
            "length": 4}


def run(out_dir: Path, quick: bool = False, workers: int | None = None,
        progress: bool = False, only_b: bool = False) -> dict:
    """Simulate every point (resuming from ``out_dir``'s logs); returns
    ``{(topology, k): [row per rate]}``. Quick: the HyperX only, two rates, short windows.
    ``only_b``: Fig 14(b)'s curves only."""
    from models.common.netsim.sweep import point, sweep
    cfg = QUICK if quick else FULL
    curves = [("2D-HyperX 9x9", k) for k in KS if not quick or k != 3]
    if not quick and not only_b:
        curves += [(name, 2) for name in TOPOLOGIES if name != "2D-HyperX 9x9"]
    points, owner = [], []
    for name, k in curves:
        for rate in cfg["rates"]:
            points.append(point(spec(name, k), "uniform", rate, 1, warmup=cfg["warmup"],
                                window=cfg["window"], drain=cfg["drain"]))
            owner.append((name, k))
    log = Path(out_dir) / ("fig14_quick.jsonl" if quick else "fig14.jsonl")
    rows = sweep(points, log, workers=workers, progress=progress)
    out: dict = {}
    for o, row in zip(owner, rows):
        out.setdefault(o, []).append(row)
    return out


def _sat(rows) -> float:
    return max(r["accepted"] for r in rows)


def records(curves: dict, bound_k2: float | None = None) -> list[Record]:
    hx = {k: _sat(curves[("2D-HyperX 9x9", k)]) for k in KS if ("2D-HyperX 9x9", k) in curves}
    max_thr = curves[("2D-HyperX 9x9", 2)][0]["max_throughput"]
    vcs = 3 * VCS_PER_CLASS
    bound = f"; the channel-load bound of these tables at k = 2 is {bound_k2:.2f}" \
        if bound_k2 else ""
    out = [
        Record("fig14a.hyperx.throughput", "railx", "2D-HyperX m=4 n=2 (1,296 chips) "
               "all-to-all saturation throughput, k = 2", "flits/cycle/chip", 0.8, hx[2],
               f"cycle-level simulation, Table 5 parameters, Algorithm 1 with {vcs} VCs",
               why="our Algorithm 1 tables send a packet to the nearest chip with a link to "
                   "the next node, which loads the on-package mesh unevenly" + bound +
                   "; the paper states neither its VC count nor how it picks among the "
                   "node's links"),
        Record("fig14a.hyperx.max", "railx", "2D-HyperX m=4 n=2 theoretical all-to-all "
               "maximum", "flits/cycle/chip", 1.0, max_thr,
               "2B_c/N from the built graph's bisection (eq 2-4)",
               why="9 nodes per row cannot be halved: the X bisection cuts 4 | 5 nodes, "
                   "which gives 2B_c/N = 1.11 (Table 2's formula 2(r+1)/m^2 gives 1.125); the "
                   "paper quotes 1"),
    ]
    if all(k in hx for k in (1, 2, 4)):
        out.append(Record(
            "fig14b.k2_over_k1", "railx", "Fig 14(b): saturation throughput k = 2 over k = 1 "
            "('significantly improved')", "ratio", 1.0, hx[2] / hx[1],
            "simulated; the claim is that doubling the mesh bandwidth raises throughput",
            kind="bound", bound=">=", formula="T(2)/T(1) > 1"))
        out.append(Record(
            "fig14b.gain_beyond_k2", "railx", "Fig 14(b): gain from k = 2 to 4 over the gain "
            "from k = 1 to 2 ('higher internal bandwidths do not bring significant "
            "improvement')", "ratio", 1.0, (hx[4] - hx[2]) / (hx[2] - hx[1]),
            "simulated", kind="bound", bound="<=",
            formula="(T(4) - T(2)) / (T(2) - T(1)) <= 1"))
    return out


def _plot(curves: dict, keys: list, labels: list, title: str, path: Path) -> Path:
    from models.common.netsim.plot import latency_curves
    return latency_curves({label: curves[key] for key, label in zip(keys, labels)}, path, title)


def plot_a(curves: dict, path: Path) -> Path:
    keys = [(name, 2) for name in TOPOLOGIES if (name, 2) in curves]
    return _plot(curves, keys, [k[0] for k in keys],
                 "RailX Fig 14(a): all-to-all, ~1.3K chips, k = 2", path)


def plot_b(curves: dict, path: Path) -> Path:
    keys = [("2D-HyperX 9x9", k) for k in KS if ("2D-HyperX 9x9", k) in curves]
    return _plot(curves, keys, [f"k = {k[1]}" for k in keys],
                 "RailX Fig 14(b): 2D-HyperX m=4 n=2, mesh bandwidth k", path)
