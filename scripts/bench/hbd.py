"""hbd (build/bench/infinitehbd.json): wall time of InfiniteHBD's Figs 9-12 set (348 days x
9,792 GPUs x 8 architectures x 4 TP sizes, hourly) against the 60 s target; baseline: the
plain per-GPU Python rules on a slice of the same trace."""

from __future__ import annotations

import time

from .._cli import BUILD, md_table, write_json


def run(args) -> str:
    """InfiniteHBD §6.2: the whole Figs 9-12 set (trace generation, every architecture x
    TP-8/16/32/64 over 348 days x 9,792 GPUs hourly, the waiting times, the i.i.d. sweep),
    timed; baseline: the plain per-GPU Python rules on a slice of the same trace."""
    from aifabric.models.infinitehbd import experiments as ex, waste
    start = time.perf_counter()
    ts = ex.trace_study()
    trace_s = time.perf_counter() - start
    for arch in waste.ARCHS:
        for tp in ex.TPS:
            for s in ex.JOB_SCALES:
                ex.waiting_fraction(ts["usable"][(arch, tp)], s * ex.GPUS)
            ex.max_job_scale(ts["usable"][(arch, tp)])
    t = time.perf_counter()
    ex.fault_sweep(samples=200)
    sweep_s = time.perf_counter() - t
    total = time.perf_counter() - start
    states = ts["t4"].states()
    samples = states.shape[0]
    evaluations = samples * len(waste.ARCHS) * len(ex.TPS)
    # reference: per-GPU Python on a slice, same rules, extrapolated per state evaluation
    rows = states[:: max(1, samples // args.hbd_slice)][: args.hbd_slice]
    t = time.perf_counter()
    for row in rows:
        bad = {(int(n), i) for n in row.nonzero()[0] for i in range(4)}
        for arch in waste.ARCHS:
            for tp in ex.TPS:
                waste.usable_reference(arch, bad, states.shape[1], 4, tp)
    ref_per_eval = (time.perf_counter() - t) / (len(rows) * len(waste.ARCHS) * len(ex.TPS))
    waste._SEGMENTS.clear()          # time from a cold memo, as the trace study ran
    t = time.perf_counter()
    for arch in waste.ARCHS:
        for tp in ex.TPS:
            waste.usable(arch, states, tp, 4)
    vec_per_eval = (time.perf_counter() - t) / evaluations
    out = {"samples": samples, "gpus": ex.GPUS, "architectures": len(waste.ARCHS),
           "tp_sizes": list(ex.TPS), "trace_study_s": round(trace_s, 2),
           "fault_sweep_s": round(sweep_s, 2), "total_s": round(total, 2), "target_s": 60,
           "reference_us_per_state": round(ref_per_eval * 1e6, 1),
           "vectorised_us_per_state": round(vec_per_eval * 1e6, 2),
           "speedup": round(ref_per_eval / vec_per_eval, 1),
           "reference_full_trace_s": round(ref_per_eval * evaluations, 1)}
    write_json(BUILD / "bench" / "infinitehbd.json", out)
    return ("## InfiniteHBD waste simulation (build/bench/infinitehbd.json)\n\n"
            + md_table(["measure", "value"], [
                ["Figs 9-12 set (trace generation + 8 architectures x 4 TP sizes x "
                 f"{samples:,} hours x {ex.GPUS:,} GPUs + sweep)", f"{total:.1f} s "
                 f"(target <= 60 s)"],
                ["of which the trace study / the i.i.d. sweep", f"{trace_s:.1f} s / "
                 f"{sweep_s:.1f} s"],
                ["vectorised, per fault state and (architecture, TP)",
                 f"{vec_per_eval * 1e6:.2f} us"],
                [f"per-GPU Python reference (slice of {len(rows)} states)",
                 f"{ref_per_eval * 1e6:.0f} us ({out['reference_full_trace_s']:,.0f} s for "
                 f"the whole trace)"],
                ["speed-up", f"{out['speedup']:,.0f}x"]]))
