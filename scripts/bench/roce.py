"""roce (build/bench/roce.json): Chronos §8.1's packet-level RoCE switch, compiled engine against
the plain-Python reference on 1% of a 16-host MoE all-to-all (same events), and the engine on
the whole matrix under both HPCC presets."""

from __future__ import annotations

import os
import time

import numpy as np

from .._cli import BUILD, md_table, write_json
from ._common import machine


def run(args) -> str:
    """Chronos §8.1's packet-level RoCE switch: the compiled engine and the plain-Python
    reference on the same 16-host MoE all-to-all (scaled to 1% of the volume so the reference
    finishes; identical events checked), then the engine alone on the full matrix (the
    paper's volume) under both HPCC presets."""
    from aifabric.models.chronos.experiments import moe_matrices
    from aifabric.models.chronos.roce import hpcc_dcqcn, hpcc_dcqcn_paper, simulate, simulate_reference
    d = moe_matrices(16, 1, 7, unit="bytes")[0]
    small = np.round(d * 0.01)
    cfg = hpcc_dcqcn()
    simulate(small[:3, :3], cfg)                               # compile outside the timing
    t = time.perf_counter()
    fast = simulate(small, cfg)
    fast_s = time.perf_counter() - t
    t = time.perf_counter()
    ref = simulate_reference(small, cfg)
    ref_s = time.perf_counter() - t
    assert (fast.events, fast.marks, fast.pauses) == (ref.events, ref.marks, ref.pauses) \
        and (fast.finish_s == ref.finish_s).all(), "compiled engine and reference disagree"
    full = {}
    for name, c in (("dcqcn", cfg), ("dcqcn_paper", hpcc_dcqcn_paper())):
        t, cpu = time.perf_counter(), time.process_time()
        r = simulate(d, c)
        full[name] = {"seconds": round(time.perf_counter() - t, 2),
                      "cpu_seconds": round(time.process_time() - cpu, 2), "events": r.events,
                      "packets": r.packets, "completion_ms": round(r.completion_s * 1e3, 3)}
    out = {"matrix_gb": round(float(d.sum()) / 1e9, 3), "small_events": fast.events,
           "small_compiled_s": round(fast_s, 3), "small_reference_s": round(ref_s, 2),
           "speedup": round(ref_s / fast_s, 1), "full": full, "machine": machine()}
    write_json(BUILD / "bench" / "roce.json", out)
    rows = [["1% of one MoE matrix: events", f"{fast.events:,}"],
            ["compiled engine", f"{fast_s:.3f} s "
             f"({fast.events / fast_s / 1e6:.2f} M events/s)"],
            ["plain-Python reference, same events and finish times", f"{ref_s:.2f} s "
             f"({ref.events / ref_s / 1e6:.2f} M events/s)"],
            ["speed-up", f"{ref_s / fast_s:.0f}x"]]
    for name, f in full.items():
        rows.append([f"whole matrix ({out['matrix_gb']} GB, {f['packets']:,} packets), "
                     f"HPCC preset {name}", f"{f['seconds']} s wall, {f['cpu_seconds']} CPU-s, "
                     f"{f['events']:,} events ({f['events'] / f['cpu_seconds'] / 1e6:.2f} M "
                     f"events per CPU-second), completion {f['completion_ms']} ms"])
    la = os.getloadavg()
    return ("## Chronos packet-level RoCE switch (build/bench/roce.json)\n\n"
            f"Load average {la[0]:.2f} on {os.cpu_count()} cores at the end (wall time "
            f"grows with it; the CPU-seconds of this process do not).\n\n"
            + md_table(["measure", "value"], rows))
