"""The circuit switch both of the paper's studies evaluate: the link rate, the reconfiguration
time, the BvN engine's clock, slot budget and cycle count, and the MoE traffic matrices.
:mod:`.experiments` (§6, Table 2, the quantisation study) and :mod:`.sec81` (the packet-level
comparison) both read them here, so neither imports the other for them."""

from __future__ import annotations

import numpy as np

from .moe import moe_traffic_matrix

__all__ = ["LINK_BPS", "T_X", "ENGINE_HZ", "ENGINE_BUDGET", "engine_cycles", "moe_matrices"]

LINK_BPS = 800e9
T_X = 10e-9

ENGINE_HZ = 1e9            # an assumed 1 GHz clock for the paper's 16 nm ASIC (not stated)
# The slot budget the engine's design point uses at N = 64: the finest of the quantisation
# study's budgets (its counts fit W = 10 bits: an entry is at most its line sum, so at most
# the budget).
ENGINE_BUDGET = 512


def engine_cycles(n: int, permutations: int) -> int:
    """Clock cycles of one decomposition on ``rtl/chronos/bvn.py`` with the output always
    ready, from the first load beat to the last step, both included: N load beats, one cycle
    into RUN, then one permutation per cycle (the RTL's documented timing, measured by
    ``make bench``)."""
    return n + 1 + permutations if permutations else n + 1


def moe_matrices(n: int, count: int, seed: int = 2025, unit: str = "tokens") -> list[np.ndarray]:
    """``count`` n x n MoE traffic matrices drawn from one generator seeded ``seed``."""
    rng = np.random.default_rng(seed)
    return [moe_traffic_matrix(n, rng, unit=unit) for _ in range(count)]
