"""Chronos (Renganathan & McKeown, NAIC'25): prescheduled circuit switching for LLM training.

- :mod:`.wwfa`: the wrapped wave-front arbiter (the behaviour ``rtl/chronos/wwfa.py`` must have).
- :mod:`.stack`: permutation stacks of a training iteration, Genstack log import, switch-local
  permutations of a leaf/spine circuit fabric.
- :mod:`.timeslot`: slot duration and efficiency (§6).
- :mod:`.slot_switch`, :mod:`.slot_endpoint`, :mod:`.slot_fabric`: time-slot synchronization
  and the scheduled crossbar as times, slots and windows (§6-§7).
- :mod:`.bvn`: Birkhoff-von Neumann decomposition (exact, wavefront, fast, eclipse).
- :mod:`.moe`: MoE all-to-all traffic matrices (§8.1).
- :mod:`.packet`: circuit vs packet switching (DCQCN, max-min fluid) for MoE traffic.
- :mod:`.experiments`: the paper's numbers and figures, computed by the above.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from models.common.records import Record

from .bvn import Schedule, decompose
from .wwfa import WavefrontArbiter

__all__ = ["WavefrontArbiter", "Schedule", "decompose", "reproduce", "figures"]

_RUNS = {False: 1000, True: 60}
_cache: dict = {}


def _moe(quick: bool) -> dict:
    from .experiments import moe_comparison
    if quick not in _cache:
        _cache[quick] = moe_comparison(_RUNS[quick])
    return _cache[quick]


def reproduce(quick: bool = False) -> list[Record]:
    """Records of §6 (time slots: the paper's formula evaluated, definitions) and §8.1
    (circuit vs DCQCN, simulated). ``quick``: 60 instead of 1,000 MoE runs. Table 2's BvN
    times are measurements on this machine, not reproductions: ``make bench`` compares them
    with the paper's."""
    from .experiments import moe_records, timeslot_records
    return timeslot_records() + moe_records(_moe(quick))


def figures(out_dir: Path, quick: bool = False) -> list[Path]:
    """fig6_moe_completion.png (the paper's Fig 6) and bvn_breakeven.png."""
    from .experiments import breakeven, moe_matrices, plot_breakeven, plot_moe
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [plot_moe(_moe(quick), out_dir / "fig6_moe_completion.png")]
    grid = np.logspace(-9, -3, 7 if quick else 19)
    res = breakeven(moe_matrices(16, 1, seed=11, unit="bytes")[0], grid)
    paths.append(plot_breakeven(res, out_dir / "bvn_breakeven.png"))
    return paths
