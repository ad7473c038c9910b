"""engine (build/bench/bvn_engine.json): clock cycles per decomposition of the BvN engine RTL
(Verilator) for N = 16, 32, 64 on MoE matrices, in microseconds at the engine's ASIC period
(``models.chronos.setting.engine_period_s``: its period in FO4 x 12 ps) and at the ECP5 Fmax
of the last ``make synth``; baseline: the golden model in software, same matrices. Then the
largest N at W = 10 on MoE byte matrices quantised to 64 .. 512 slots, against the paper's
< 1 us at that period, with one and with four matrix rows per load beat, beside the
unquantised figure of the same run. build/bench/bvn_engine_cycles.png: the distribution of the
cycles to decompose, a histogram per N (and per slot budget of the quantised run)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from aifabric.models.chronos.setting import engine_period_s

from .._cli import BUILD, md_table, write_json
from ._common import machine

ENGINE_NS = (16, 32, 64)
ENGINE_W = 16
PAPER_ENGINE_S = 1e-6   # Chronos §8: BhaVaN decomposes a 64-port matrix in < 1 us (16 nm ASIC)
QUANT_W = 10            # slot counts of budgets up to 1,023 slots
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


def run(args) -> str:
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
               "us_at_asic_mean": float(cyc.mean()) * engine_period_s(n) * 1e6,
               "fmax_mhz": fmax, "fmax_source": fmax_how,
               "us_at_fmax_mean": float(cyc.mean()) / fmax if fmax else None,
               "model_wavefront_us_median": sw * 1e6, "cycles": cyc.tolist()}
        out["results"].append(row)
        print(f"    {row['cycles_mean']:,.0f} cycles mean, {row['cycles_max']:,} max, "
              f"{row['steps_mean']:,.0f} permutations mean", flush=True)
        rows.append([str(n), f"{row['cycles_mean']:,.0f}", f"{row['cycles_max']:,}",
                     f"{row['steps_mean']:,.0f} / {row['steps_max']:,}",
                     ", ".join(map(str, row["cycles_minus_steps"])),
                     f"{row['us_at_asic_mean']:.2f}",
                     (f"{fmax:.1f} MHz ({fmax_how}): {row['us_at_fmax_mean']:,.1f}" if fmax
                      else "(run make synth)"),
                     f"{row['model_wavefront_us_median']:,.0f}",
                     f"< {PAPER_ENGINE_S * 1e6:g}" if n == 64 else "-"])
    qn = max(args.engine_n)
    fmax, fmax_how = synth_fmax(qn, QUANT_W)
    period = engine_period_s(qn)
    target = int(PAPER_ENGINE_S / period)        # the paper's < 1 us in this engine's cycles
    out["quantised"] = {"n": qn, "w": QUANT_W, "fmax_mhz": fmax, "fmax_source": fmax_how,
                        "period_s": period, "target_cycles": target, "results": []}
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
                   "meets_target": bool(cyc.max() <= target),
                   "cycles": cyc.tolist()}
            out["quantised"]["results"].append(row)
            print(f"    {budget} slots: {row['cycles_mean']:,.0f} cycles mean, "
                  f"{row['cycles_max']:,} max", flush=True)
            qrows.append([load_rows, budget, f"{row['cycles_mean']:,.0f}",
                          f"{row['cycles_max']:,}", f"{row['steps_mean']:,.0f}",
                          f"{100 * row['overhead_mean']:.2f}% / "
                          f"{100 * row['overhead_max']:.2f}%",
                          f"{row['cycles_mean'] * period * 1e6:.2f} / "
                          f"{row['cycles_max'] * period * 1e6:.2f}",
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
                        "cycles - permutations", "us at the ASIC period", "us at ECP5 Fmax",
                        "model (software, median) us", "paper us (64 ports, 16 nm)"], rows)
            + f"\n### Slot-quantised, N = {qn}, W = {QUANT_W} (target: < 1 us, <= "
              f"{target:,} cycles of {period * 1e12:,.0f} ps, mean and worst)\n\n"
            + (f"Same run, unquantised (W = {ENGINE_W}, one row per load beat): "
               f"{unq['cycles_mean']:,.0f} cycles mean, {unq['cycles_max']:,} max.\n\n"
               if unq else "") + fmax_note
            + md_table(["rows per load beat", "slots", "cycles mean", "cycles max",
                        "permutations mean", "makespan overhead mean / worst",
                        "us at the ASIC period mean / worst", "us at ECP5 Fmax, mean",
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
