"""The circuit switch both of the paper's studies evaluate: the link rate, the reconfiguration
time, the BvN engine's clock, slot budget and cycle count, and the MoE traffic matrices.
:mod:`.experiments` (§6, Table 2, the quantisation study) and :mod:`.sec81` (the packet-level
comparison) both read them here, so neither imports the other for them."""

from __future__ import annotations

import numpy as np

from .moe import moe_traffic_matrix

__all__ = ["LINK_BPS", "T_X", "ENGINE_PERIOD_FO4", "ENGINE_PERIOD_FO4_ASAP7",
           "ENGINE_PERIOD_EARLIER", "FO4_PS",
           "FO4_PS_RANGE", "ENGINE_BUDGET", "engine_cycles", "engine_latency", "engine_period_fo4",
           "engine_period_s", "engine_seconds", "moe_matrices"]

LINK_BPS = 800e9
T_X = 10e-9

# The BvN engine's clock period, measured rather than assumed: rtl/chronos/bvn.py at N ports
# (W = 10) mapped onto IHP SG13G2 by the ASIC flow (`aifabric asic --block bvn --param n=N
# --param w=10 --library sg13g2`), its worst path in FO4 of that library's own inverter
# (docs/figures.md, "ASIC estimate"). A period moves between processes only in FO4. N = 64
# with `--mapping fast` (ABC without structural choices), whose period is 3-6 % longer than
# the default mapping's at N = 8, 16 and 32: the default did not finish there. N = 64 is of
# this version of the engine (with its second bank).
ENGINE_PERIOD_FO4 = {8: 102.4, 16: 133.4, 32: 191.2, 64: 283.4}
# The same engine mapped onto ASAP7 (7 nm predictive; `... --library asap7`, N = 32 and 64
# with `--mapping fast`), in FO4 of that library: the period in FO4 depends on the library
# the RTL is mapped onto, and the records say by how much (results/asic.json).
ENGINE_PERIOD_FO4_ASAP7 = {16: 149.2, 32: 250.7, 64: 426.9}
# The sizes last measured on an earlier form of the engine, and which: N = 8, 16 and 32 are
# of the engine before its second bank. N = 32 was not mapped again after it was added; N = 8
# and 16 were (docs/figures.md: 105.6 and 146.9 FO4), but the §8.1 records (N = 16) were run
# at these and are kept at them until they are run again.
ENGINE_PERIOD_EARLIER = {k: "the engine before its second bank" for k in (8, 16, 32)}
# The FO4 delay of the paper's 16 nm process, which the paper does not state: the middle of
# the range assumed for 16 nm (FO4_PS_RANGE), in ps.
FO4_PS = 12.0
FO4_PS_RANGE = (10.0, 16.0)
# The slot budget the engine's design point uses at N = 64: the finest of the quantisation
# study's budgets (its counts fit W = 10 bits: an entry is at most its line sum, so at most
# the budget).
ENGINE_BUDGET = 512


def engine_cycles(n: int, permutations: int, rows: int = 1) -> int:
    """Clock cycles of one decomposition on ``rtl/chronos/bvn.py`` per matrix in a
    back-to-back stream, with the output always ready: from the cycle its frame is copied
    from the second bank into the residual to the cycle the next frame is. That is one cycle
    for the copy, one permutation per cycle, and one cycle for the final step to be taken
    before the next copy; the next frame loads into the second bank meanwhile (``n / rows``
    beats), so the load is paid only when it is the longer. When ``permutations + 2 >=
    n / rows`` this is also the cycles from the previous matrix's final step to this one's,
    and an isolated matrix's from its last load beat to its final step (the RTL's
    documented timing, measured by ``make bench`` and asserted by the co-simulation)."""
    return max(permutations + 2, n // rows)


def engine_latency(n: int, permutations: int, rows: int = 1) -> int:
    """Clock cycles of ``rtl/chronos/bvn.py`` for one matrix given alone, from its first load
    beat to its final step (the output always ready): ``n / rows`` beats into the second
    bank, then :func:`engine_cycles`' S + 2 from the last beat. §8.1's circuit learns each
    all-to-all's matrix when it is due, so nothing hides its load there."""
    return n // rows - 1 + permutations + 2


def moe_matrices(n: int, count: int, seed: int = 2025, unit: str = "tokens") -> list[np.ndarray]:
    """``count`` n x n MoE traffic matrices drawn from one generator seeded ``seed``."""
    rng = np.random.default_rng(seed)
    return [moe_traffic_matrix(n, rng, unit=unit) for _ in range(count)]


def engine_period_fo4(n: int) -> tuple[float, bool]:
    """The engine's period in FO4 at ``n`` ports and whether it was measured: the measured
    period (:data:`ENGINE_PERIOD_FO4`) of the smallest measured size of at least ``n`` ports
    (the step's path grows with N, so a larger engine's period bounds a smaller one's); above
    the largest measured size, an estimate: the line through the two largest measured sizes
    (the wave crosses one more diagonal per port), marked not measured."""
    sizes = sorted(ENGINE_PERIOD_FO4)
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    above = [k for k in sizes if k >= n]
    if above:
        return ENGINE_PERIOD_FO4[above[0]], True
    a, b = sizes[-2:]
    pa, pb = ENGINE_PERIOD_FO4[a], ENGINE_PERIOD_FO4[b]
    return pb + (n - b) * (pb - pa) / (b - a), False


def engine_period_s(n: int, fo4_ps: float | None = None) -> float:
    """The engine's clock period (s) at ``n`` ports (:func:`engine_period_fo4`) in a process
    of FO4 ``fo4_ps`` ps (default :data:`FO4_PS`)."""
    return engine_period_fo4(n)[0] * (FO4_PS if fo4_ps is None else fo4_ps) * 1e-12


def engine_seconds(n: int, permutations: int, fo4_ps: float | None = None) -> float:
    """Time to result of one matrix given alone: :func:`engine_latency` x
    :func:`engine_period_s`."""
    return engine_latency(n, permutations) * engine_period_s(n, fo4_ps)
