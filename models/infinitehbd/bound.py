"""Appendix C: the upper bound of the expected GPU waste ratio of InfiniteHBD, and a
Monte-Carlo check of it.

A node in the middle of a K-hop line is cut from its neighbours on one side when the K nodes
next to it on that side are all faulty; with i.i.d. node faults of probability P_s the
expected number of such breakpoints per node is at most 2 (P_s^K + P_s^2K), each breakpoint
wastes at most R (N_t - R) GPUs of a TP ring of N_t GPUs, so (eq 1, as P_s -> 0)

    E[waste ratio] <= 2 (N_t - R) P_s^K.

A factor-R slip. The appendix charges a breakpoint E_W(B = 1) = N_t R (1 - R / N_t) =
R (N_t - R) GPUs, but a breakpoint leaves at most one partial TP ring of N_t / R - 1 nodes
unused at the end of a sub line: N_t - R GPUs (at N_t = 32, R = 4: 28 GPUs, where the
appendix charges 112, more than three whole rings). With the corrected charge the same
steps give E[waste ratio] <= 2 (N_t - R) P_s^K / R (:func:`corrected_bound`), Table 7
divided by R; the Monte-Carlo check is held against both.

P_s is the R-GPU node fault probability, from the i.i.d. GPU fault probability p:
P_s = 1 - (1 - p)^R; Table 7 takes p from the production trace's p99 faulty 8-GPU node
ratio (7.92 %): p = 1 - (1 - 0.0792)^(1/8) = 1.026 % (the table prints 1.03 %).
"""

from __future__ import annotations

import numpy as np

from .faults import PROD_P99, gpu_fault_prob, node_fault_prob

__all__ = ["waste_bound", "corrected_bound", "table7", "monte_carlo_waste", "TABLE7_TP"]

TABLE7_TP = 32


def waste_bound(R: int, K: int, tp: int, p_gpu: float) -> float:
    """2 (N_t - R) P_s^K with P_s = 1 - (1 - p)^R."""
    return 2 * (tp - R) * node_fault_prob(p_gpu, R) ** K


def corrected_bound(R: int, K: int, tp: int, p_gpu: float) -> float:
    """2 (N_t - R) P_s^K / R: the bound with a breakpoint charged N_t - R GPUs (see above)."""
    return waste_bound(R, K, tp, p_gpu) / R


def table7(p_gpu: float | None = None, tp: int = TABLE7_TP) -> dict:
    """{(R, K): bound} for R in (4, 8), K in (2, 3, 4); p derived from the p99 unless given."""
    p = gpu_fault_prob(PROD_P99, 8) if p_gpu is None else p_gpu
    return {(R, K): waste_bound(R, K, tp, p) for R in (4, 8) for K in (2, 3, 4)}


def monte_carlo_waste(R: int, K: int, tp: int, p_gpu: float, *, gpus: int = 9792,
                      samples: int = 2000, seed: int = 0) -> dict:
    """Mean and standard error of the additional waste ratio of a K-hop InfiniteHBD *line*
    of ``gpus / R`` nodes with i.i.d. node faults of probability P_s: the GPUs the
    breakpoints cost against an ideal pool of the same healthy GPUs (floor(healthy / tp) tp,
    the Big-Switch), over all GPUs -- the quantity the appendix bounds ("the additional
    waste of GPU")."""
    nodes = gpus // R
    ps = node_fault_prob(p_gpu, R)
    rng = np.random.default_rng(seed)
    faulty = rng.random((samples, nodes)) < ps
    healthy = (nodes - faulty.sum(axis=1)) * R
    from .topology import usable_rings
    use = np.array([usable_rings(row, K, tp // R, ring=False) * tp for row in faulty])
    w = (healthy // tp * tp - use) / (nodes * R)
    return {"mean": float(w.mean()), "sem": float(w.std(ddof=1) / np.sqrt(samples)),
            "p_s": ps, "bound": waste_bound(R, K, tp, p_gpu),
            "corrected": corrected_bound(R, K, tp, p_gpu)}
