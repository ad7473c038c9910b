"""Chronos (Renganathan & McKeown, NAIC'25): prescheduled circuit switching for LLM training.

- :mod:`.wwfa`: the wrapped wave-front arbiter (the behaviour ``rtl/chronos/wwfa.py`` must have).
- :mod:`.stack`: permutation stacks of a training iteration, Genstack log import, switch-local
  permutations of a leaf/spine circuit fabric.
- :mod:`.timeslot`: slot duration and efficiency (§6).
- :mod:`.slot_switch`, :mod:`.slot_endpoint`, :mod:`.slot_fabric`: time-slot synchronization
  and the scheduled crossbar as times, slots and windows (§6-§7).
- :mod:`.bvn`: Birkhoff-von Neumann decomposition (exact, wavefront, fast, eclipse).
- :mod:`.moe`: MoE all-to-all traffic matrices (§8.1).
- :mod:`.packet`: circuit vs packet switching (fluid DCQCN, max-min fluid) for MoE traffic.
- :mod:`.roce`: a packet-level RoCE switch (PFC, RED/ECN, DCQCN as HPCC's ns-3); :mod:`.sec81`:
  §8.1 on it.
- :mod:`.experiments`: the paper's numbers and figures, computed by the above.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from aifabric.models.common.records import Record

from .bvn import Schedule, decompose
from .wwfa import WavefrontArbiter

__all__ = ["WavefrontArbiter", "Schedule", "decompose", "reproduce", "figures", "tables"]

_QUANT_RUNS = {False: 1000, True: 50}
_cache: dict = {}


def _cached(key, fn):
    if key not in _cache:
        _cache[key] = fn()
    return _cache[key]


def _moe(quick: bool) -> dict:
    from .experiments import moe_comparison
    return _cached(("moe", quick), lambda: moe_comparison(quick))


def _tuned(quick: bool) -> dict:
    from .experiments import tuned_comparison
    return _cached(("tuned", quick), lambda: tuned_comparison(_moe(quick), quick))


def _sweep(quick: bool) -> dict:
    from .experiments import volume_sweep
    return _cached(("sweep", quick), lambda: volume_sweep(quick))


def _quant(quick: bool) -> dict:
    from .experiments import quantization_study
    return _cached(("quant", quick), lambda: quantization_study(count=_QUANT_RUNS[quick]))


def reproduce(quick: bool = False) -> list[Record]:
    """Records of §6 (time slots: the paper's formula evaluated, definitions), §8 (BhaVaN's
    < 1 us for 64 ports, as bounds on the engine's time to result on slot-quantised
    MoE matrices) and §8.1 (circuit vs
    DCQCN on the packet-level RoCE switch, simulated: HPCC ns-3's preset and tuned as the
    paper tuned it). ``quick``: 1 % of the MoE volume on 3 test matrices and a token tuning
    budget (:data:`models.chronos.sec81.BUDGET`), 50 instead of 1,000 quantised matrices
    per N. Table 2's BvN times are measurements on this machine, not reproductions:
    ``make bench`` compares them with the paper's."""
    from .experiments import moe_records, quantization_records, timeslot_records, tuned_records
    return (timeslot_records() + quantization_records(_quant(quick), quick)
            + moe_records(_moe(quick), _tuned(quick)) + tuned_records(_moe(quick), _tuned(quick)))


def tables(quick: bool = False) -> list[str]:
    """Markdown sections of the report: the price of slot quantisation and §8.1 on the
    packet-level switch (presets, tuned, volume sweep)."""
    from .experiments import quantization_table, tuning_table
    return [quantization_table(_quant(quick)),
            tuning_table(_tuned(quick), _moe(quick), _sweep(quick))]


def figures(out_dir: Path, quick: bool = False) -> list[Path]:
    """fig6_moe_completion.png (the paper's Fig 6 on the packet-level switch),
    sec81_volume.png (improvement against the traffic volume), sec81_tuning_budget.png
    (best DCQCN against the tuning trials), bvn_breakeven.png and bvn_quantisation.png
    (overhead and engine cycles against the slot budget)."""
    from .experiments import (breakeven, moe_matrices, plot_breakeven, plot_moe,
                              plot_quantization, plot_tuning_budget, plot_volume)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [plot_moe(_moe(quick), _tuned(quick), out_dir / "fig6_moe_completion.png"),
             plot_volume(_sweep(quick), out_dir / "sec81_volume.png"),
             plot_tuning_budget(_tuned(quick), out_dir / "sec81_tuning_budget.png"),
             plot_quantization(_quant(quick), out_dir / "bvn_quantisation.png")]
    grid = np.logspace(-9, -3, 7 if quick else 19)
    res = breakeven(moe_matrices(16, 1, seed=11, unit="bytes")[0], grid)
    paths.append(plot_breakeven(res, out_dir / "bvn_breakeven.png"))
    return paths
