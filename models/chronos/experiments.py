"""The Chronos paper's experiments, computed by the models: §6's time-slot examples, Table 2
(BvN decomposition time), §8.1 (circuit vs packet switching for MoE all-to-all) and the
reconfiguration break-even of a reconfiguration-aware scheduler. Used by :func:`reproduce`,
the figures and ``make bench``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from aifabric.models.common.records import Record

from . import timeslot as ts
from .bvn import decompose, lower_bound, permutation_bound, quantize
from . import setting as S
from .setting import (ENGINE_BUDGET, LINK_BPS, T_X, engine_cycles, engine_period_s,
                      moe_matrices)

# Table 2 of the paper: single-threaded BvN time on an Apple M1 Max, seconds.
TABLE2 = {"maximum": {16: 0.5e-3, 32: 3e-3, 64: 25e-3, 128: 291e-3, 256: 4.45},
          "maximal": {16: 0.2e-3, 32: 0.8e-3, 64: 4.6e-3, 128: 52e-3, 256: 0.65}}
# Which of our methods answers which row of Table 2.
TABLE2_ROW = {"exact": "maximum", "wavefront": "maximal", "fast": "maximal"}

# BhaVaN (§8): "completes a BvN decomposition in less than 1 us for a 64-port switch".
PAPER_ENGINE_S = 1e-6
# the quantisation study's budgets: the finest is the engine's design point (ENGINE_BUDGET)
QUANT_BUDGETS = (64, 128, 256, ENGINE_BUDGET)
QUANT_NS = (16, 32, 64)


LLAMA3_CONFIGS = [(8_192, 8, 1, 16, 64), (16_384, 8, 1, 16, 128), (16_384, 8, 16, 16, 8)]


def _rec(id_, metric, unit, paper, model, note="", **kw):
    return Record(id_, "chronos", metric, unit, float(paper), float(model), note, **kw)


MB = 1e6   # §6's megabyte: the paper's rates are decimal (400 Gb/s, 800 Gb/s), and its MEMS
#            example (b > 150 MB at 75% with t_x = 1 ms) comes out at 150.15 only in 10^6 bytes


def timeslot_records() -> list[Record]:
    """§6: Llama 3 405B slot time and loss; the 200 m / 400 Gb/s example; MEMS. Each is the
    paper's slot formula (T = 8b/c + t_max + t_x) evaluated on the paper's inputs: a check of
    its arithmetic and units (definitions), not an independent reproduction."""
    b = min(ts.dp_bytes_per_transfer(2.8e9, tp, dp) for _, tp, _, _, dp in LLAMA3_CONFIGS)
    t_max = ts.fibre_latency(2_000)
    bc = 8 * b / LINK_BPS
    loss = 1 - ts.efficiency(b, LINK_BPS, t_max, T_X)
    t200 = ts.fibre_latency(200)
    slot = ts.slot_duration(MB, 400e9, t200, 0.0)
    definition = {"kind": "definition"}
    return [
        _rec("sec6.llama3.min_b_over_c", "lowest b/c over Table 1's configurations", "us",
             109, bc * 1e6, "b = 4 p_l / (TP DP), p_l = 2.8e9, 800 Gb/s", **definition),
        _rec("sec6.llama3.throughput_loss", "throughput lost to t_max + t_x", "%", 8.4,
             100 * loss, "t_max = 10 us (2 km), t_x = 10 ns", **definition),
        _rec("sec6.200m.slot", "slot time T - t_x, 1 MB over 200 m at 400 Gb/s", "us", 22,
             slot * 1e6, "1 MB = 10^6 bytes; 5 ns/m", **definition,
             why=f"{8 * MB / 400e9 * 1e6:.0f} us of transfer + {t200 * 1e6:.0f} us of fibre is "
                 f"{slot * 1e6:.0f} us; the paper's 22 us matches only with 1 MB = 2^20 bytes "
                 f"({ts.slot_duration(2**20, 400e9, t200, 0.0) * 1e6:.2f} us), which its MEMS "
                 f"example (150 MB) rules out"),
        _rec("sec6.200m.efficiency", "efficiency at t_x = 10 ns", "%", 95,
             100 * ts.efficiency(MB, 400e9, t200, 10e-9), "paper: 'exceeds 95%'",
             **definition, bound=">="),
        _rec("sec6.mems.min_bytes", "smallest b for efficiency > 75% with t_x = 1 ms", "MB",
             150, ts.min_bytes_for_efficiency(0.75, 400e9, t200, 1e-3) / MB,
             "paper: 'b > 150 Mbytes'", **definition),
    ]


def time_decompose(matrices: list[np.ndarray], method: str, min_seconds: float = 0.2,
                   max_repeats: int = 50) -> dict:
    """Single-threaded decomposition time of ``method`` per matrix (median over matrices of
    the best of repeated runs), with permutations and makespan / lower bound."""
    decompose(matrices[0][:2, :2], method)           # compile outside the timing
    best = []
    perms, ratio = [], []
    for m in matrices:
        times = []
        start = time.perf_counter()
        while len(times) < max_repeats and (not times or time.perf_counter() - start
                                            < min_seconds / len(matrices)):
            t = time.perf_counter()
            s = decompose(m, method)
            times.append(time.perf_counter() - t)
        best.append(min(times))
        perms.append(len(s))
        ratio.append(s.makespan / lower_bound(m))
    return {"seconds": float(np.median(best)), "seconds_max": float(np.max(best)),
            "permutations": float(np.mean(perms)), "makespan_over_lb": float(np.mean(ratio))}


def table2(ns=(16, 32, 64, 128, 256), methods=("exact", "wavefront", "fast"),
           count: int = 5, progress: bool = True) -> dict:
    """{method: {n: time_decompose(...)}} on ``count`` MoE matrices per N."""
    out: dict = {m: {} for m in methods}
    for n in ns:
        mats = moe_matrices(n, count if n <= 128 else max(1, count // 2))
        for method in methods:
            if progress:
                print(f"  BvN {method:9} N={n:3} ...", end="", file=sys.stderr, flush=True)
            heavy = method == "wavefront" and n >= 128
            out[method][n] = time_decompose(mats[:1] if heavy else mats, method,
                                            max_repeats=1 if heavy else 50)
            if progress:
                print(f" {out[method][n]['seconds'] * 1e3:.3f} ms", file=sys.stderr)
    return out


def quantization_study(ns=QUANT_NS, budgets=QUANT_BUDGETS, count: int = 1000,
                       seed: int = 2026, progress: bool = True) -> dict:
    """The price of slot quantisation on ``count`` MoE byte matrices per N: for each budget,
    the exact schedule's makespan (``used`` slots x unit) and the "wavefront" schedule's
    (its weights x unit) against the byte matrix's lower bound, the permutations "wavefront"
    takes against the 2L - 1 bound, and the engine's cycles (:func:`engine_cycles`).
    Returns ``{n: {budget: {metric: array over matrices}}}``."""
    from tqdm import tqdm
    out: dict = {}
    for n in ns:
        mats = moe_matrices(n, count, seed + n, unit="bytes")
        per = {b: {k: [] for k in ("exact_overhead", "wavefront_overhead", "permutations",
                                   "bound", "cycles", "unit", "max_entry")} for b in budgets}
        for d in tqdm(mats, desc=f"quantised BvN, N={n}", disable=None if progress else True,
                      file=sys.stderr):
            lb = lower_bound(d)
            for b in budgets:
                q = quantize(d, b)
                s = decompose(q.counts, "wavefront")
                r = per[b]
                r["exact_overhead"].append(q.makespan_bytes() / lb - 1)
                r["wavefront_overhead"].append(q.makespan_bytes(s) / lb - 1)
                r["permutations"].append(len(s))
                r["bound"].append(permutation_bound(q.counts))
                r["cycles"].append(engine_cycles(n, len(s)))
                r["unit"].append(q.unit)
                r["max_entry"].append(int(q.counts.max()))
        out[n] = {b: {k: np.array(v) for k, v in r.items()} for b, r in per.items()}
    return out


def quantization_table(res: dict) -> str:
    """Markdown: overhead (mean / worst) and permutations per N and budget."""
    head = ["N", "slots", "unit mean (KB)", "exact BvN overhead mean / worst",
            "wavefront overhead mean / worst", "permutations mean / worst (2L-1 bound)",
            "engine cycles mean / worst", "largest count (bits)"]
    rows = []
    for n, per in res.items():
        for b, r in per.items():
            rows.append([n, b, f"{r['unit'].mean() / 1e3:,.0f}",
                         f"{100 * r['exact_overhead'].mean():.2f}% / "
                         f"{100 * r['exact_overhead'].max():.2f}%",
                         f"{100 * r['wavefront_overhead'].mean():.2f}% / "
                         f"{100 * r['wavefront_overhead'].max():.2f}%",
                         f"{r['permutations'].mean():,.0f} / {r['permutations'].max():,} "
                         f"({r['bound'].max():,})",
                         f"{r['cycles'].mean():,.0f} / {r['cycles'].max():,}",
                         f"{int(r['max_entry'].max())} "
                         f"({int(r['max_entry'].max()).bit_length()})"])
    count = len(next(iter(next(iter(res.values())).values()))["cycles"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return (f"### Slot-quantised BvN on {count:,} MoE matrices per N\n\n"
            "Overhead: makespan of the quantised schedule (slots x unit) over the byte "
            "matrix's lower bound (largest line sum), minus 1. Engine cycles: "
            "`engine_cycles(N, permutations)`, the RTL's documented timing per matrix in a "
            "back-to-back stream (the next matrix loads into the second bank while this one "
            "runs: one cycle for the copy into the residual, one permutation per cycle, one "
            "for the final step to be taken; the N load beats when they are the longer), "
            "asserted by the co-simulation. Largest count: the "
            "widest entry of any quantised matrix (an entry never exceeds the budget, so "
            "W = bits of the budget always suffices).\n\n" + "\n".join(lines) + "\n")


def _library_choice(n: int, fo4: float) -> str:
    """Why the period's FO4 count is IHP SG13G2's, and how far ASAP7's would move it."""
    asap7 = S.ENGINE_PERIOD_FO4_ASAP7.get(n)
    other = (f"; the same RTL on ASAP7 (7 nm predictive) takes {asap7:.1f} FO4 of that "
             f"library, {asap7 / fo4:.2f}x" if asap7 is not None else
             f"; not mapped onto ASAP7 at N = {n}")
    return (f"IHP SG13G2, the library whose FO4 count the other sizes were measured in (a "
            f"real 130 nm process){other}")


def quantization_records(res: dict, quick: bool = False) -> list[Record]:
    """BhaVaN's "< 1 us for a 64-port switch" (§8) as two bounds on the engine's time to result
    at its design point (N = 64, :data:`ENGINE_BUDGET` slots): the mean and the worst over
    the quantised MoE matrices, each = the engine's cycles (:func:`engine_cycles`, the RTL's
    timing) x its period from the ASIC flow (:func:`~.setting.engine_period_fo4`, in FO4) at the
    16 nm FO4 of :data:`~.setting.FO4_PS` (range :data:`~.setting.FO4_PS_RANGE`)."""
    from aifabric.models.common.records import range_table
    n = 64
    r = res[n][ENGINE_BUDGET]
    cycles = r["cycles"]
    fo4, measured = S.engine_period_fo4(n)
    period = engine_period_s(n)
    lo_ps, hi_ps = S.FO4_PS_RANGE
    ranges = range_table(Path(__file__).with_name("expected_ranges.json"), quick)
    setting = {"n": n, "w": ENGINE_BUDGET.bit_length(), "slots": ENGINE_BUDGET,
               "matrices": len(cycles), "period_fo4": fo4, "period_measured": measured,
               "library": "sg13g2", "fo4_ps": S.FO4_PS}
    sizes = sorted(S.ENGINE_PERIOD_FO4)
    a, b = sizes[-2:]
    earlier = S.ENGINE_PERIOD_EARLIER.get(n) if measured else None
    of, on = (f" of {earlier}", f" on {earlier}") if earlier else ("", "")
    how = (f"measured on the N = {n} netlist{of} (mapped by ABC without structural choices, "
           f"3-6 % slower than its default mapping at N = 8 to 32)" if measured else
           f"estimated: the N = {n} netlist was not mapped, so the line through the periods "
           f"measured at N = {a} and {b} ({S.ENGINE_PERIOD_FO4[a]:g} and "
           f"{S.ENGINE_PERIOD_FO4[b]:g} FO4)")
    choices = {
        "matrices": "Chronos MoE byte matrices (models/chronos/moe.py) quantised to the slot "
                    "budget; the paper does not say which matrices its < 1 us is over",
        "period_fo4": f"the engine's own RTL mapped onto IHP SG13G2 (typical corner, no "
                      f"wires) and timed by the project's timer, {how}; the paper's engine is "
                      f"a 16 nm design of its own",
        "library": _library_choice(n, fo4),
        "fo4_ps": f"the paper gives no clock or FO4: {S.FO4_PS:g} ps is the middle of the "
                  f"{lo_ps:g}-{hi_ps:g} ps assumed for 16 nm",
    }
    out = []
    for key, count, what in (("mean", float(cycles.mean()), "mean"),
                             ("worst", float(cycles.max()), "worst case")):
        rid = f"sec8.bhavan.time_to_result.{key}"
        us = count * period * 1e6
        span = [count * engine_period_s(n, f) * 1e6 for f in S.FO4_PS_RANGE]
        need = PAPER_ENGINE_S / count / (S.FO4_PS * 1e-12)
        note = (f"{len(cycles):,} MoE matrices quantised to {ENGINE_BUDGET} slots (overhead "
                f"mean {100 * r['exact_overhead'].mean():.1f}%), {what} {count:,.1f} cycles "
                f"of rtl/chronos/bvn.py per matrix (permutations + 2: from its last load beat "
                f"to its final step, alone or in a back-to-back stream, whose next matrix "
                f"loads while it runs) x its period at N = {n}, {fo4:.1f} FO4 "
                f"({'estimated, not measured' if not measured else 'measured' + on}) "
                f"({period * 1e12:,.0f} ps at {S.FO4_PS:g} ps per FO4); {span[0]:.2f}-"
                f"{span[1]:.2f} us at {lo_ps:g}-{hi_ps:g} ps; < 1 us needs at most "
                f"{need:.1f} FO4 per cycle")
        asap7 = S.ENGINE_PERIOD_FO4_ASAP7.get(n)
        if asap7 is not None:
            note += (f"; mapped onto ASAP7 instead, {asap7:.1f} FO4 of that library: "
                     f"{count * asap7 * S.FO4_PS * 1e-6:.2f} us at {S.FO4_PS:g} ps")
        why = ""
        if us > PAPER_ENGINE_S * 1e6:
            why = (f"one step per cycle takes {fo4:.1f} FO4 (the wave over N diagonals, the "
                   f"minimum and the subtraction in one cycle): {fo4 / need:.2f}x the "
                   f"{need:.1f} FO4 that {count:,.1f} cycles in 1 us allow")
        out.append(_rec(rid, f"64-port BvN decomposition, time to result, {what}", "us",
                        PAPER_ENGINE_S * 1e6, us, note, kind="bound", bound="<=", why=why,
                        setting=setting, choices=choices, expected_range=ranges.get(rid)))
    return out


def plot_quantization(res: dict, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for n, per in res.items():
        budgets = list(per)
        mean = [100 * per[x]["wavefront_overhead"].mean() for x in budgets]
        worst = [100 * per[x]["wavefront_overhead"].max() for x in budgets]
        line, = a.plot(budgets, mean, marker="o", label=f"N = {n}, mean")
        a.plot(budgets, worst, marker="^", ls="--", color=line.get_color(),
               label=f"N = {n}, worst")
        cyc_mean = [per[x]["cycles"].mean() for x in budgets]
        cyc_max = [per[x]["cycles"].max() for x in budgets]
        b.plot(budgets, cyc_mean, marker="o", color=line.get_color(), label=f"N = {n}, mean")
        b.plot(budgets, cyc_max, marker="^", ls="--", color=line.get_color(),
               label=f"N = {n}, worst")
    b.plot(budgets, [2 * x - 1 + 2 for x in budgets], color="grey", ls=":",
           label="2L - 1 bound + 2")
    b.axhline(PAPER_ENGINE_S / engine_period_s(64), color="red", lw=0.8,
              label=f"paper: < 1 us at the N = 64 engine's period "
                    f"({engine_period_s(64) * 1e12:,.0f} ps at FO4 {S.FO4_PS:g} ps)")
    for ax in (a, b):
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets, [str(x) for x in budgets])
        ax.set_xlabel("slot budget (slots per decomposition)")
        ax.grid(alpha=0.3)
    a.set_ylabel("makespan overhead vs lower bound (%)")
    a.set_title("price of quantisation (wavefront schedule)", fontsize=10)
    b.set_ylabel("engine cycles per matrix (permutations + 2)")
    b.set_title("BvN engine cycles per decomposition", fontsize=10)
    a.legend(fontsize=7)
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def moe_comparison(quick: bool = False, progress: bool = True) -> dict:
    """§8.1 on the packet-level RoCE switch (:mod:`.sec81`): the test matrices on the circuit
    (slot-quantised BvN + the engine's decomposition time; exact unquantised as ablation),
    the max-min fluid bound and HPCC ns-3's two DCQCN presets."""
    from .sec81 import untuned
    return untuned(quick, progress)


def tuned_comparison(base: dict, quick: bool = False, progress: bool = True) -> dict:
    """§8.1 as the paper ran it: DCQCN's six parameters tuned (Optuna TPE) on training
    matrices, then run on the test matrices of ``base`` (:func:`moe_comparison`)."""
    from .sec81 import tuned
    return tuned(quick, base, progress)


def volume_sweep(quick: bool = False, progress: bool = True) -> dict:
    """§8.1's improvement against the traffic volume, per HPCC preset."""
    from .sec81 import volume_sweep as sweep
    return sweep(quick, progress)


def moe_records(res: dict, tuned: dict) -> list[Record]:
    """§8.1 untuned (HPCC's dcqcn preset): improvement mean and max, packet mean."""
    from .sec81 import records
    return records(res, tuned)[:3]


def tuned_records(res: dict, tuned: dict) -> list[Record]:
    """§8.1 tuned: improvement mean and max, packet mean, packet/circuit ratio."""
    from .sec81 import records
    return records(res, tuned)[3:]


def tuning_table(tuned: dict, untuned: dict, sweep: dict | None = None) -> str:
    from .sec81 import table
    return table(untuned, tuned, sweep)


def breakeven(matrix: np.ndarray, t_x_grid: np.ndarray, link_bps: float = LINK_BPS) -> dict:
    """Completion time of exact BvN and of the reconfiguration-aware scheduler on ``matrix``
    (bytes) for each reconfiguration time in ``t_x_grid``; the break-even t_x above which
    the reconfiguration-aware schedule is faster (NaN if it never is)."""
    per_byte = 8 / link_bps
    bvn = decompose(matrix, "exact")
    bvn_s = np.array([bvn.makespan * per_byte + len(bvn) * t for t in t_x_grid])
    ecl_s, ecl_perms = [], []
    for t in t_x_grid:
        s = decompose(matrix, "eclipse", reconfig=t / per_byte)
        ecl_s.append(s.makespan * per_byte + len(s) * t)
        ecl_perms.append(len(s))
    ecl_s = np.array(ecl_s)
    better = np.flatnonzero(ecl_s < bvn_s * (1 - 1e-9))
    cross = float("nan")
    if len(better):
        k = better[0]
        if k == 0:
            cross = float(t_x_grid[0])
        else:   # interpolate the sign change of (bvn - eclipse) in log t_x
            a, b = bvn_s[k - 1] - ecl_s[k - 1], bvn_s[k] - ecl_s[k]
            x0, x1 = np.log(t_x_grid[k - 1]), np.log(t_x_grid[k])
            cross = float(np.exp(x0 + (x1 - x0) * (0 - a) / (b - a))) if b != a \
                else float(t_x_grid[k])
    return {"t_x": np.asarray(t_x_grid), "bvn_s": bvn_s, "eclipse_s": ecl_s,
            "bvn_perms": len(bvn), "eclipse_perms": np.array(ecl_perms), "breakeven_s": cross}


def plot_moe(res: dict, tuned: dict, path: Path) -> Path:
    """Fig 6 on the packet-level switch: packet (presets, tuned) and circuit per matrix."""
    from .sec81 import plot_fig6
    return plot_fig6(res, tuned, path)


def plot_volume(sweep: dict, path: Path) -> Path:
    from .sec81 import plot_volume as plot
    return plot(sweep, path)


def plot_tuning_budget(tuned: dict, path: Path) -> Path:
    from .sec81 import plot_budget
    return plot_budget(tuned, path)


def plot_breakeven(res: dict, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.loglog(res["t_x"], 1e3 * res["bvn_s"], marker="o", ms=3,
              label=f"BvN exact ({res['bvn_perms']} permutations)")
    ax.loglog(res["t_x"], 1e3 * res["eclipse_s"], marker="s", ms=3,
              label="reconfiguration-aware (Eclipse-style)")
    if np.isfinite(res["breakeven_s"]):
        ax.axvline(res["breakeven_s"], color="grey", ls=":",
                   label=f"break-even t_x = {res['breakeven_s'] * 1e6:.3g} us")
    ax.set_xlabel("reconfiguration time t_x (s)")
    ax.set_ylabel("completion = makespan + permutations x t_x (ms)")
    ax.set_title("16 x 16 MoE all-to-all at 800 Gb/s")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
