"""wwfa (build/bench/wwfa.json), N = 64 by default:
  - cocotb + Verilator simulation rate (cycles/s): drive-only, and with the golden model and
    scoreboard checking every grant; baseline: Amaranth's Python simulator on the same design.
  - golden model arbitrations/s; baseline: the cell-by-cell reference definition."""

from __future__ import annotations

import time

import numpy as np

from .._cli import BUILD, md_table, write_json
from ._common import machine


def stimulus(n: int, count: int, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    densities = rng.choice([0.05, 0.25, 0.5, 0.9], size=count)
    return [rng.random((n, n)) < d for d in densities]


def rate(fn, items, min_seconds: float = 1.0) -> float:
    """Items per second of ``fn`` over ``items`` (repeated until ``min_seconds`` elapsed)."""
    done, start = 0, time.perf_counter()
    while True:
        for item in items:
            fn(item)
        done += len(items)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return done / elapsed


def bench_model(n: int) -> dict:
    from aifabric.models.chronos.wwfa import WavefrontArbiter, arbitrate_reference
    mats = stimulus(n, 200)
    model = WavefrontArbiter(n)
    fast = rate(model.arbitrate, mats)
    ref_model = WavefrontArbiter(n)

    def reference(m):
        arbitrate_reference(m, ref_model.priority)
        ref_model.priority = (ref_model.priority + 1) % n

    ref = rate(reference, mats[:20])
    return {"model_arbitrations_per_s": round(fast, 1),
            "baseline_reference_arbitrations_per_s": round(ref, 1),
            "speedup_vs_reference": round(fast / ref, 2)}


def bench_pysim(n: int, cycles: int) -> float:
    from amaranth.sim import Simulator

    from aifabric.rtl.chronos.wwfa import WavefrontArbiter
    dut = WavefrontArbiter(n=n)
    words = [sum(1 << int(k) for k in np.flatnonzero(m.ravel())) for m in stimulus(n, 64)]
    elapsed = {}

    async def bench(ctx):
        start = time.perf_counter()
        for t in range(cycles):
            ctx.set(dut.requests, words[t % len(words)])
            await ctx.tick()
            ctx.get(dut.grants)
        elapsed["s"] = time.perf_counter() - start

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return cycles / elapsed["s"]


def bench_cosim(n: int, cycles: int) -> dict:
    from aifabric.cosim.runner import run
    drive = run("wwfa", {"n": n}, test_module="aifabric.cosim.bench_wwfa", testcase="drive_only",
                transactions=cycles)
    if not drive.passed:
        raise RuntimeError(f"drive-only benchmark failed: {drive.describe()}")
    checked = run("wwfa", {"n": n}, testcase="random_requests", transactions=cycles // 2)
    if not checked.passed:
        raise RuntimeError(f"checked co-simulation failed: {checked.describe()}")
    stat = {s["test"]: s for s in drive.stats + checked.stats}
    return {
        "drive_only_cycles_per_s": round(cycles / stat["drive_only"]["seconds"], 1),
        "checked_cycles_per_s": round(stat["random_requests"]["transactions"]
                                      / stat["random_requests"]["seconds"], 1),
    }


def run(args) -> str:
    n = args.n
    print(f"wwfa n={n}: golden model vs reference definition...", flush=True)
    model = bench_model(n)
    print(f"    {model['model_arbitrations_per_s']:,.0f} vs "
          f"{model['baseline_reference_arbitrations_per_s']:,.0f} arbitrations/s", flush=True)
    print(f"wwfa n={n}: Amaranth simulator, {args.pysim_cycles} cycles...", flush=True)
    pysim = bench_pysim(n, args.pysim_cycles)
    print(f"    {pysim:,.1f} cycles/s", flush=True)
    print(f"wwfa n={n}: cocotb + Verilator, {args.cycles} cycles (builds first)...", flush=True)
    cosim = bench_cosim(n, args.cycles)
    print(f"    {cosim['drive_only_cycles_per_s']:,.0f} cycles/s drive-only, "
          f"{cosim['checked_cycles_per_s']:,.0f} cycles/s checked", flush=True)

    result = {
        "name": "wwfa", "params": {"n": n, "cycles": args.cycles,
                                   "pysim_cycles": args.pysim_cycles},
        "machine": machine(),
        "cosim": {**cosim, "baseline_amaranth_pysim_cycles_per_s": round(pysim, 2),
                  "speedup_drive_only_vs_pysim": round(cosim["drive_only_cycles_per_s"] / pysim, 1),
                  "speedup_checked_vs_pysim": round(cosim["checked_cycles_per_s"] / pysim, 1)},
        "model": model,
    }
    write_json(BUILD / "bench" / "wwfa.json", result)
    rows = [
        ["cocotb + Verilator, drive only", f"{cosim['drive_only_cycles_per_s']:,.0f} cycles/s",
         f"{pysim:,.1f} cycles/s (Amaranth simulator)",
         f"{result['cosim']['speedup_drive_only_vs_pysim']:,}x"],
        ["cocotb + Verilator, checked by model + scoreboard",
         f"{cosim['checked_cycles_per_s']:,.0f} cycles/s",
         f"{pysim:,.1f} cycles/s (Amaranth simulator)",
         f"{result['cosim']['speedup_checked_vs_pysim']:,}x"],
        ["golden model", f"{model['model_arbitrations_per_s']:,.0f} arbitrations/s",
         f"{model['baseline_reference_arbitrations_per_s']:,.0f} arbitrations/s "
         "(cell-by-cell reference)", f"{model['speedup_vs_reference']}x"],
    ]
    return (f"## wwfa, N = {n}\n\n"
            + md_table(["what", "figure", "baseline (same run)", "ratio"], rows))
