"""Benchmarks: each figure beside a baseline measured in the same run, on this machine.

One module per subject (``scripts/bench/<subject>.py``: its docstring says what it measures
and against which baseline, its ``run(args)`` measures, writes ``build/bench/<file>.json``
and returns its section of ``build/bench/summary.md``); this module only parses the
options and runs the subjects in order.

    aifabric bench [--only wwfa|bvn|engine|netsim|fig14b|mesh|hbd|sipac|roce|batch|sta] [--n 64] [--cycles 20000]
    [--roce-baseline REV [--roce-repeat 3]] [--booksim PATH]
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from .._cli import BUILD, Parser, atomic_write, run_main
from ._common import machine
from .bvn import BVN_NS
from .engine import ENGINE_NS

# the subjects in the order a full run reports them
SUBJECTS = ("wwfa", "bvn", "engine", "netsim", "fig14b", "mesh", "hbd", "sipac", "roce",
            "batch", "sta")


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=SUBJECTS, action="append",
                        help="run only this benchmark (repeatable; default: all)")
    parser.add_argument("--n", type=int, default=64, help="arbiter size (default 64)")
    parser.add_argument("--cycles", type=int, default=20_000,
                        help="Verilator cycles to time (default 20000)")
    parser.add_argument("--pysim-cycles", type=int, default=40,
                        help="Amaranth-simulator cycles to time (default 40)")
    parser.add_argument("--bvn-n", type=int, nargs="+", default=list(BVN_NS),
                        help="BvN matrix sizes (default 16 32 64 128 256)")
    parser.add_argument("--bvn-matrices", type=int, default=5,
                        help="MoE matrices per size (default 5)")
    parser.add_argument("--engine-n", type=int, nargs="+", default=list(ENGINE_NS),
                        help="BvN engine sizes (default 16 32 64; 4..64)")
    parser.add_argument("--engine-matrices", type=int, default=20,
                        help="MoE matrices per engine size (default 20)")
    parser.add_argument("--netsim-cycles", type=int, default=10_000,
                        help="measured cycles per network-simulator point (default 10000)")
    parser.add_argument("--netsim-repeat", type=int, default=3,
                        help="runs of each speed-target point, each beside one of the "
                             "baseline; the median is reported (default 3)")
    parser.add_argument("--reference-cycles", type=int, default=100,
                        help="cycles of the reference step to time (default 100)")
    parser.add_argument("--workers", type=int, help="processes for the Fig 14(b) sweep")
    parser.add_argument("--hbd-slice", type=int, default=40,
                        help="trace states the per-GPU reference evaluates (default 40)")
    parser.add_argument("--batch-bvn-steps", type=int, default=12_000,
                        help="BvN step budget of the co-simulation speed comparison "
                             "(default 12000; every quantised matrix is run regardless)")
    parser.add_argument("--batch-mesh-scale", type=float, default=1.0,
                        help="scale of the mesh scenarios' packet-creation cycles in that "
                             "comparison (default 1: the regression's)")
    parser.add_argument("--batch-seed", type=int, default=1,
                        help="co-simulation seed of that comparison (default 1)")
    parser.add_argument("--roce-baseline", metavar="REV",
                        help="also time the RoCE engine of git revision REV (e.g. HEAD~1) "
                             "against this tree's, in turn in one process")
    parser.add_argument("--roce-repeat", type=int, default=3,
                        help="runs of each engine in that comparison (default 3)")
    parser.add_argument("--booksim", metavar="PATH", default=os.environ.get("AIFABRIC_BOOKSIM"),
                        help="a BookSim2 binary (github.com/booksim/booksim2, built outside "
                             "this project): the netsim benchmark also times it at the speed "
                             "targets' mesh points (default: $AIFABRIC_BOOKSIM; none: skipped)")
    args = parser.parse_args(argv)
    if args.booksim is not None:
        exe = Path(args.booksim).expanduser()
        if not exe.is_file() or not os.access(exe, os.X_OK):
            parser.error(f"--booksim: {args.booksim} is not an executable file")
        args.booksim = exe.resolve()
    if args.roce_repeat < 1:
        parser.error("--roce-repeat must be >= 1")
    if args.netsim_repeat < 1:
        parser.error("--netsim-repeat must be >= 1")
    if args.batch_bvn_steps < 1 or args.batch_mesh_scale <= 0:
        parser.error("--batch-bvn-steps must be >= 1 and --batch-mesh-scale > 0")
    if args.netsim_cycles < 100 or args.reference_cycles < 10:
        parser.error("--netsim-cycles must be >= 100 and --reference-cycles >= 10")
    from aifabric.models.chronos.wwfa import _check_n
    try:
        _check_n(args.n)
    except (TypeError, ValueError) as e:
        parser.error(f"--n: {e}")
    if args.cycles < 100 or args.pysim_cycles < 10:
        parser.error("--cycles must be >= 100 and --pysim-cycles >= 10")
    if any(n < 2 or n > 1024 for n in args.bvn_n) or args.bvn_matrices < 1:
        parser.error("--bvn-n values must be in 2..1024 and --bvn-matrices >= 1")
    if any(n < 4 or n > 64 for n in args.engine_n) or args.engine_matrices < 1:
        parser.error("--engine-n values must be in 4..64 and --engine-matrices >= 1")
    if args.hbd_slice < 1:
        parser.error("--hbd-slice must be >= 1")
    sections = [importlib.import_module(f"{__name__}.{name}").run(args)
                for name in args.only or SUBJECTS]
    m = machine()
    text = (f"# Benchmarks\n\nMachine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
            f"{m['system']}.\n\n" + "\n".join(sections))
    atomic_write(BUILD / "bench" / "summary.md", text)
    print("\n" + text)
    return 0


if __name__ == "__main__":
    run_main(main)
