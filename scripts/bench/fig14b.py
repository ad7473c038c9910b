"""fig14b (build/bench/fig14b.json): wall time of the full Fig 14(b) sweep on local processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

from .._cli import BUILD, write_json


def run(args) -> str:
    """Wall time of the full Fig 14(b) sweep (4 k x 10 rates, 15,000 cycles each plus the
    drain of stable points) on local processes, into a fresh log."""
    import tempfile

    from aifabric.models.railx import fig14
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        points = fig14.run(Path(tmp), quick=False, workers=args.workers, progress=True,
                           only_b=True)
        wall = time.perf_counter() - start
    n = sum(len(v) for v in points.values())
    cycles = sum(r["cycles"] for v in points.values() for r in v)
    chips = next(iter(points.values()))[0]["chips"]
    cpu = sum(r.get("cpu_seconds", 0.0) for v in points.values() for r in v)
    out = {"points": n, "seconds": round(wall, 1), "workers": args.workers or os.cpu_count(),
           "router_cycles": cycles * chips,
           "router_cycles_per_s": round(cycles * chips / wall, 1),
           "cpu_seconds": round(cpu, 1),
           "router_cycles_per_cpu_s": round(cycles * chips / cpu, 1) if cpu else 0.0,
           "load_average": [round(x, 2) for x in os.getloadavg()]}
    write_json(BUILD / "bench" / "fig14b.json", out)
    return ("## Fig 14(b) sweep (build/bench/fig14b.json)\n\n"
            f"{n} points (k = 1..4 x 10 rates) of the 1,296-chip 2D-HyperX, 15,000 cycles each "
            f"plus drains: {wall / 60:.1f} minutes on {out['workers']} processes "
            f"({out['router_cycles_per_s'] / 1e6:.2f} M router-cycles/s in all, wall; "
            f"{cpu / 60:.1f} CPU-minutes in the simulations, "
            f"{out['router_cycles_per_cpu_s'] / 1e6:.2f} M router-cycles per CPU-second; load "
            f"average {out['load_average'][0]:.2f} at the end; idle routers count).\n")
