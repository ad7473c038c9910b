"""Compile every numba engine once, on a tiny case, so the first real call is fast.

numba compiles a function on its first call and caches the machine code on disk
(``__pycache__``, ``cache=True``): the first call of an engine takes up to ~17 s, every
later one (in any process) loads it in well under a second. ``make`` runs this script, so a
user's first simulation does not pay that cost.

    aifabric warm             # every engine; prints what each took
    aifabric warm --list      # the engines it warms
"""

from __future__ import annotations

import time

import numpy as np

from ._cli import Parser, UsageError, run_main


def _netsim():
    from aifabric.models.common.netsim import mesh
    from aifabric.models.common.netsim.sim import simulate
    simulate(mesh(2), "uniform", 0.1, warmup=10, window=20, drain=50)
    # a network of SHAPED_MIN_ROUTERS chips or more runs on a kernel compiled for its shape
    # and router: the 16x16 mesh's (2 VCs, the default router), the speed targets' network
    simulate(mesh(16, vcs=2), "uniform", 0.1, warmup=0, window=10, drain=0)


def _bvn():
    from aifabric.models.chronos.bvn import decompose
    d = np.array([[0, 2, 1], [1, 0, 2], [2, 1, 0]], dtype=np.int64)
    for method in ("exact", "wavefront", "fast"):
        decompose(d, method)


def _packet():
    from aifabric.models.chronos.packet import dcqcn_completion, fluid_completion
    d = np.array([[0, 10_000], [0, 0]], dtype=np.int64)
    fluid_completion(d, 1e11)
    dcqcn_completion(d, 1e11)


def _roce():
    from aifabric.models.chronos.sec81 import compile_engine
    compile_engine()


def _packetsim():
    from aifabric.models.flexsipac.experiments import compile_engines
    compile_engines()


ENGINES = {
    "netsim": (_netsim, "the cycle-level network simulator (make netsim, RailX figures), "
                        "generic and for the 16x16 mesh"),
    "bvn": (_bvn, "Chronos' BvN decompositions: exact, wavefront, fast"),
    "packet": (_packet, "Chronos' fluid and DCQCN packet baselines"),
    "roce": (_roce, "the RoCE (HPCC/DCQCN) packet simulator"),
    "packetsim": (_packetsim, "FlexSiPAC's packet simulator and its DCTCP window transport"),
}


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", action="append", metavar="NAME",
                        help=f"engine(s) to compile (default: all: {', '.join(ENGINES)})")
    parser.add_argument("--list", action="store_true", help="list the engines and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, (_, what) in ENGINES.items():
            print(f"{name:10s} {what}")
        return 0
    names = args.engine or list(ENGINES)
    for name in names:
        if name not in ENGINES:
            raise UsageError(f"--engine {name!r}: unknown; engines are {', '.join(ENGINES)}")
    for name in names:
        t = time.perf_counter()
        ENGINES[name][0]()
        print(f"warm: {name} ready ({time.perf_counter() - t:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    run_main(main)
