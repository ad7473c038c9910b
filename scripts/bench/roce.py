"""roce (build/bench/roce.json): Chronos §8.1's packet-level RoCE switch, compiled engine against
the plain-Python reference on 1% of a 16-host MoE all-to-all (same events), and the engine on
the whole matrix under both HPCC presets; with ``--roce-baseline REV``, also against the engine
of git revision REV on the whole matrix, the two run in turn in this one process."""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from .._cli import BUILD, UsageError, atomic_write, md_table, write_json
from ._common import machine

ENGINE = "models/chronos/_roce_engine.py"


def baseline_engine(rev: str):
    """(commit, module): the RoCE engine of git revision ``rev`` of this checkout, imported
    beside this tree's. Its file is kept in build/bench/baseline/<commit>/ so that numba's
    cache of it survives from one run to the next."""
    from aifabric.models.chronos import _roce_engine
    root = Path(_roce_engine.__file__).resolve().parents[2]
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "--quiet",
                              f"{rev}^{{commit}}"], capture_output=True, text=True,
                             check=True).stdout.strip()
        text = subprocess.run(["git", "-C", str(root), "show", f"{sha}:{ENGINE}"],
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raise UsageError(f"--roce-baseline {rev!r}: no revision of {root} with "
                         f"{ENGINE}") from None
    path = BUILD / "bench" / "baseline" / sha[:12] / "_roce_engine.py"
    if not path.is_file() or path.read_text() != text:
        atomic_write(path, text)
    name = f"aifabric.models.chronos._roce_engine_{sha[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return sha, module


def _same(a, b) -> bool:
    """Two results equal to the last digit."""
    return ((a.events, a.marks, a.cnps, a.pauses, a.peak_buffer)
            == (b.events, b.marks, b.cnps, b.pauses, b.peak_buffer)
            and np.array_equal(a.finish_s, b.finish_s)
            and np.array_equal(a.delivered, b.delivered))


def against_baseline(sha: str, base, repeat: int, d, cfg) -> dict:
    """This tree's engine and ``base`` (the engine module of commit ``sha``) on the whole
    matrix, in turn (the order flipped every round), ``repeat`` runs each: CPU and wall
    seconds, min and median, the load average before and after, and whether every run gave
    the same result."""
    from aifabric.models.chronos import _roce_engine
    from aifabric.models.chronos.roce import _simulate_with
    engines = {"this tree": _roce_engine.run, sha[:12]: base.run}
    for run in engines.values():                               # compile outside the timing
        _simulate_with(run, np.round(d[:3, :3] * 0.01), cfg, 0, None, 0, None, 10.0)
    times = {name: {"cpu_s": [], "wall_s": []} for name in engines}
    first, same = None, True
    load_before = os.getloadavg()[0]
    for r in range(repeat):
        for name in (list(engines) if r % 2 == 0 else list(engines)[::-1]):
            t, cpu = time.perf_counter(), time.process_time()
            res = _simulate_with(engines[name], d, cfg, 0, None, 0, None, 10.0)
            times[name]["cpu_s"].append(round(time.process_time() - cpu, 3))
            times[name]["wall_s"].append(round(time.perf_counter() - t, 3))
            if first is None:
                first = res
            same = same and _same(first, res)
    for v in times.values():
        for k in ("cpu_s", "wall_s"):
            v[k.replace("_s", "_min_s")] = min(v[k])
            v[k.replace("_s", "_median_s")] = statistics.median(v[k])
    return {"revision": sha, "repeat": repeat, "identical": same, "times": times,
            "load_average_before": round(load_before, 2),
            "load_average_after": round(os.getloadavg()[0], 2)}


def run(args) -> str:
    """Chronos §8.1's packet-level RoCE switch: the compiled engine and the plain-Python
    reference on the same 16-host MoE all-to-all (scaled to 1% of the volume so the reference
    finishes; identical events checked), then the engine alone on the full matrix (the
    paper's volume) under both HPCC presets."""
    baseline = baseline_engine(args.roce_baseline) if args.roce_baseline else None
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
    if baseline:
        out["baseline"] = against_baseline(*baseline, args.roce_repeat, d, cfg)
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
    if baseline:
        b = out["baseline"]
        now, then = b["times"]["this tree"], b["times"][b["revision"][:12]]
        rows.append([f"whole matrix, HPCC preset dcqcn: this engine against "
                     f"{b['revision'][:12]}'s, {b['repeat']} runs each in turn",
                     f"CPU-s min {now['cpu_min_s']:.2f} / "
                     f"median {now['cpu_median_s']:.2f} against {then['cpu_min_s']:.2f} / "
                     f"{then['cpu_median_s']:.2f}; wall min {now['wall_min_s']:.2f} / "
                     f"{now['wall_median_s']:.2f} against {then['wall_min_s']:.2f} / "
                     f"{then['wall_median_s']:.2f}; load average {b['load_average_before']} "
                     f"to {b['load_average_after']}; results "
                     f"{'identical' if b['identical'] else 'DIFFERENT'}"])
    la = os.getloadavg()
    return ("## Chronos packet-level RoCE switch (build/bench/roce.json)\n\n"
            f"Load average {la[0]:.2f} on {os.cpu_count()} cores at the end (wall time "
            f"grows with it; the CPU-seconds of this process do not).\n\n"
            + md_table(["measure", "value"], rows))
