"""Cycle-level network simulation from the command line: one topology, a sweep of injection
rates (and seeds, and internal bandwidths k), latency-throughput curves.

    aifabric netsim --topology hyperx --m 4 --n 2 --R 18 --k 2 --vcs 18 \\
        --traffic uniform --rates 0.1:1.0:0.1 --seed 1
    aifabric netsim --topology mesh --side 8 --vcs 2 --rates 0.05,0.2,0.4
    aifabric netsim ... --router vct --links parallel   # RailX §6.1's ideal VCT router
    aifabric netsim ... --workers 2                    # local processes (default)
    aifabric netsim ... --scheduler tcp://host:8786    # an existing Dask cluster

A simulation that stops (the deadlock watchdog under --force, a failed invariant) prints one
line and exits with 1; bad input exits with 2 before anything is written.

Results: build/netsim/<name>.jsonl (one line per finished point; a rerun resumes),
<name>.json (the curves and saturation points) and <name>.png (latency vs accepted).
``--k`` takes several values (``--k 1,2,3,4``): one curve each.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

from ._cli import (BUILD, Parser, UsageError, atomic_write, md_table, output_dir, run_main,
                   write_json)

OUT = BUILD / "netsim"


def parse_list(text: str, kind, what: str) -> list:
    """``a:b:step`` (inclusive) or ``a,b,c``."""
    try:
        if ":" in text:
            a, b, step = (float(x) for x in text.split(":"))
            if step <= 0 or b < a:
                raise ValueError
            n = int(math.floor((b - a) / step + 1e-9)) + 1
            return [kind(round(a + i * step, 9)) for i in range(n)]
        return [kind(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--{what} {text!r}: expected a:b:step or a comma list of numbers") \
            from None


def spec_of(args, k: int | None) -> dict:
    from aifabric.models.common.netsim.registry import KINDS, default_name
    if args.topology in ("mesh", "torus"):
        spec = {"topology": args.topology, "k": 8 if args.side is None else args.side,
                "vcs": 2 if args.vcs is None else args.vcs,
                "inject": 1 if args.inject is None else args.inject}
        if k is not None:
            spec["width"] = k
    else:
        spec = {"topology": args.topology, "m": args.m, "n": args.n, "R": args.R}
        for name in ("side", "groups", "group_size", "vcs", "inject", "order"):
            if getattr(args, name) is not None:
                spec[name] = getattr(args, name)
        if k is not None:
            spec["k"] = k
    spec.update(buffer=args.buffer, length=args.length)
    if args.trace:
        spec["trace"] = str(Path(args.trace).resolve())
    if args.force:
        spec["force"] = True
    if args.routing is not None:
        spec["routing"] = args.routing
    for kind in KINDS:                  # only what differs from the registered default
        if getattr(args, kind) != default_name(kind):
            spec[kind] = getattr(args, kind)
    return spec


FIRST_CALL = ("The first run after installing compiles the simulator (numba, about 20 s); the "
              "compiled code is cached on disk, so later runs start in about a second. 'make' "
              "compiles it ahead (aifabric warm).")


def main(argv=None) -> int:
    from aifabric.models.common.netsim import DeadlockError, InvariantError, NetworkError, TrafficError
    from aifabric.models.common.netsim.plot import latency_curves
    from aifabric.models.common.netsim.sweep import point, saturation, simulator, sweep, topologies
    from aifabric.models.common.netsim.traffic import PATTERNS
    from aifabric.models.railx import netsim as _railx_netsim  # noqa: F401  (registers RailX's)

    ap = Parser(prog="aifabric netsim", description=__doc__.split("\n\n")[0],
                epilog=FIRST_CALL)
    ap.add_argument("--topology", choices=topologies(), default="hyperx",
                    help="The network: a registered topology (default hyperx, RailX's).")
    ap.add_argument("--side", type=int, help="mesh/torus: k x k routers; RailX: nodes per "
                                            "row/column (default: the largest that fits)")
    ap.add_argument("--m", type=int, default=4, help="RailX: m x m chips per node")
    ap.add_argument("--n", type=int, default=2, help="RailX: ports per chip edge")
    ap.add_argument("--R", type=int, default=18, help="RailX: OCS radix")
    ap.add_argument("--groups", type=int, help="dragonfly groups")
    ap.add_argument("--group-size", dest="group_size", type=int, help="dragonfly group size")
    ap.add_argument("--k", default=None, help="mesh/torus: link width in flits/cycle; RailX: "
                                              "internal bandwidth k of eq 5 (a chip-to-chip "
                                              "link is n·k flits/cycle); a comma list gives "
                                              "one curve per value")
    ap.add_argument("--order", help="RailX: in-node dimension order per Algorithm 1 phase, "
                                    "e.g. yx,xy,yx (default: the channel-load-bound choice)")
    ap.add_argument("--vcs", type=int, help="VCs per port (default: what the routing needs)")
    ap.add_argument("--inject", type=int, help="injection width (default: RailX 4n, mesh 1)")
    ap.add_argument("--buffer", type=int, default=16, help="flits per VC (Table 5: 16)")
    ap.add_argument("--length", type=int, default=4, help="flits per packet (Table 5: 4)")
    from aifabric.models.common.netsim import registry
    for kind in registry.KINDS:                  # options, names and defaults from the registry
        names = registry.choices(kind)
        ap.add_argument(f"--{kind}", choices=names, default=registry.default_name(kind),
                        help=f"the {kind} (default {registry.default_name(kind)}): " + "; ".join(
                            f"{n}: {registry.choice(kind, n).doc}" for n in names))
    ap.add_argument("--routing", choices=registry.routings(),
                    help="routing function (default: the topology's): " + "; ".join(
                        f"{n}: {registry.routing(n).doc}" for n in registry.routings()))
    ap.add_argument("--traffic", choices=PATTERNS, default="uniform",
                    help="The traffic pattern (default uniform).")
    ap.add_argument("--trace", help="CSV trace (cycle,src,dst,flits) for --traffic trace")
    ap.add_argument("--rates", default="0.1:1.0:0.1", help="flits/cycle/chip: a:b:step or list")
    ap.add_argument("--seeds", default="1", help="seeds (comma list); --seed is one")
    ap.add_argument("--seed", type=int, help="one seed")
    ap.add_argument("--warmup", type=int, default=5000,
                    help="Cycles before the measurement window (default 5000).")
    ap.add_argument("--window", type=int, default=10000,
                    help="Cycles of the measurement window (default 10000).")
    ap.add_argument("--drain", type=int, default=20000,
                    help="Cycles allowed after the window for measured packets to arrive "
                         "(default 20000).")
    ap.add_argument("--workers", type=int, help="local processes (default: cores)")
    ap.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786")
    ap.add_argument("--force", action="store_true",
                    help="simulate a routing that can deadlock (the watchdog reports it)")
    ap.add_argument("--name", help="output name under build/netsim (default from the options)")
    ap.add_argument("--out", type=Path, default=OUT, help="output directory")
    ap.add_argument("--quiet", action="store_true", help="no progress bar or banner")
    args = ap.parse_args(argv)
    if args.name is not None and (not args.name.strip() or args.name in (".", "..") or any(
            sep in args.name for sep in {os.sep, os.altsep or os.sep, "/"})):
        raise UsageError(f"--name {args.name!r}: a file name under --out, without a path "
                         f"separator (give the folder with --out)")

    ks = parse_list(args.k, int, "k") if args.k else [None]
    rates = [1.0] if args.traffic == "trace" else parse_list(args.rates, float, "rates")
    seeds = [args.seed] if args.seed is not None else parse_list(args.seeds, int, "seeds")
    for name in ("warmup", "window", "drain"):
        if getattr(args, name) < (1 if name == "window" else 0):
            raise UsageError(f"--{name} must be >= {1 if name == 'window' else 0}")
    if args.traffic == "trace" and not args.trace:
        raise UsageError("--traffic trace needs --trace FILE")
    measure = {"warmup": args.warmup, "window": args.window, "drain": args.drain}
    points, labels = [], {}
    for k in ks:
        spec = spec_of(args, k)
        for seed in seeds:
            for rate in rates:
                p = point(spec, args.traffic, rate, seed, **measure)
                points.append(p)
                labels[id(p)] = (f"k={k}" if k is not None else args.topology) + \
                    (f" seed {seed}" if len(seeds) > 1 else "")
    try:                       # validate every point before anything is written
        nets = {}
        for p in points:
            sim = simulator(p)
            nets[labels[id(p)]] = sim.net
    except (NetworkError, TrafficError) as e:
        raise UsageError(str(e)) from None
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be >= 1")
    net0 = next(iter(nets.values()))
    name = args.name or "_".join(
        [args.topology, f"{net0.routers}chips", args.traffic] +
        ([f"k{','.join(map(str, ks))}"] if ks != [None] else []) +
        ([f"vcs{net0.vcs}"]))
    out = output_dir(Path(args.out))
    if not args.quiet:
        print(f"{net0.name}: {net0.routers} chips, {net0.vcs} VCs, routing {net0.routing}; "
              f"{len(points)} points -> {out / name}.jsonl", file=sys.stderr)
    try:
        rows = sweep(points, out / f"{name}.jsonl", workers=args.workers,
                     scheduler=args.scheduler, progress=not args.quiet)
    except (DeadlockError, InvariantError) as e:       # the simulation stopped: say why
        print(f"error: {e}", file=sys.stderr)
        return 1
    curves: dict[str, list[dict]] = {}
    for p, row in zip(points, rows):
        curves.setdefault(labels[id(p)], []).append(row)
    summary = {"network": net0.name, "routing": net0.routing, "traffic": args.traffic,
               "max_throughput": net0.max_throughput, "curves": {}}
    table = []
    for label, rs in curves.items():
        sat = saturation(rs)
        summary["curves"][label] = {"saturation": sat, "points": rs}
        for r in rs:
            table.append([label, r["rate"], f"{r['offered']:.3f}", f"{r['accepted']:.3f}",
                          f"{r['latency_mean']:.1f}", f"{r['latency_p50']:.0f}",
                          f"{r['latency_p99']:.0f}", "yes" if r["saturated"] else "",
                          f"{r['router_cycles_per_s'] / 1e6:.2f}"])
        table.append([label, "saturation", "", f"{sat['throughput']:.3f}", "", "", "",
                      f"last stable rate {sat['rate']}", ""])
    write_json(out / f"{name}.json", summary)
    png = latency_curves({k: v["points"] for k, v in summary["curves"].items()},
                         out / f"{name}.png", f"{net0.name}, {args.traffic} (theoretical "
                         f"maximum {net0.max_throughput:.2f} flits/cycle/chip)")
    text = md_table(["curve", "rate", "offered", "accepted", "mean lat", "p50", "p99",
                     "unstable", "M router-cycles/s"], table)
    atomic_write(out / f"{name}.md", text)
    print(text + f"\n{out / name}.json, {png}")
    return 0


if __name__ == "__main__":
    run_main(main)
