"""The BvN engine's step checks in batches: the RTL's steps of one matrix, recorded as the
``steps`` payload's bit string and the cycle each was taken, are decoded and checked in
numpy every few hundred steps.

Checks (those of ``cosim.test_bvn``'s per-step code, which this replaces in the loop):
against the golden model, step k's permutation and weight equal the model's step k; on the
RTL's steps alone (the invariants of ``StepChecker``), each permutation is a non-empty
partial matching with no output twice, over entries of the residual still nonzero, maximal
over them; the weight is positive and no larger than any matched entry; ``last`` is on the
final step only (the residual is zero exactly after it). The first step that fails is
re-checked by the per-step code itself (``StepChecker.check``, then the comparison with the
model), so the message is the per-step one; the cycle the step was taken is put in front:
``cycle 1234: random matrix, step 17: RTL [...] x5, model [...] x4``.
"""

from __future__ import annotations

import numba
import numpy as np

from aifabric.cosim.batch import BatchFailure, bits_to_array, field_values
from aifabric.cosim.codec import dest_bits, step_bits

__all__ = ["StepBatch", "decode_steps"]


def decode_steps(bits: np.ndarray, n: int, w: int):
    """Bit rows of step payloads -> (perm (S, n) with -1 where idle, weight (S,), last (S,))."""
    b = dest_bits(n)
    s = len(bits)
    dest = field_values(bits[:, :b * n].reshape(s * n, b), 0, b).reshape(s, n)
    conn = bits[:, b * n:b * n + n].astype(bool)
    perm = np.where(conn, dest, -1)
    weight = field_values(bits, b * n + n, w)
    last = bits[:, b * n + n + w].astype(bool)
    return perm, weight, last


@numba.njit(cache=True)
def _first_bad_step(resid, perm, weight, last, bad):
    """Apply the steps to ``resid`` (n x n, in place) in order and return the index of the
    first that breaks an invariant on the residual (-1 if none): a matched entry empty or
    below the weight, a nonzero entry left in a free row and a free column (not maximal),
    ``last`` not equal to "the residual is zero after this step". ``bad[k]`` marks a step
    already found wrong without the residual (empty, an output twice, weight <= 0, not the
    model's, an output >= n). On a return k >= 0, ``resid`` is the residual before step
    k."""
    n = resid.shape[0]
    nonzero = 0
    for i in range(n):
        for j in range(n):
            if resid[i, j] != 0:
                nonzero += 1
    used = np.zeros(n, dtype=np.bool_)
    for k in range(perm.shape[0]):
        if bad[k]:
            return k
        w = weight[k]
        used[:] = False
        zeroed = 0
        for i in range(n):
            p = perm[k, i]
            if p >= 0:
                used[p] = True
                if resid[i, p] <= 0 or resid[i, p] < w:
                    return k
                if resid[i, p] == w:
                    zeroed += 1
        for i in range(n):
            if perm[k, i] < 0:
                for j in range(n):
                    if not used[j] and resid[i, j] > 0:
                        return k
        if last[k] != (nonzero == zeroed):
            return k
        for i in range(n):
            p = perm[k, i]
            if p >= 0:
                resid[i, p] -= w
        nonzero -= zeroed
    return -1


class StepBatch:
    """The steps of one matrix: ``add(cycle, bits)`` per step taken, ``check()`` every
    ``every`` steps (by ``add``) and at the end of the frame (``finish``).

    ``label`` names the frame in messages ("random matrix"), ``expect`` is the model's
    decomposition (``perms``, ``weights``). ``checker`` builds the per-step checker that
    gives the message of a failing step (``cosim.test_bvn.StepChecker``).
    """

    def __init__(self, matrix: np.ndarray, expect, n: int, w: int, *, label: str,
                 checker, every: int = 256) -> None:
        self.n, self.w, self.label, self.every = n, w, label, every
        self.resid = np.asarray(matrix, dtype=np.int64).copy()
        self.perms = np.asarray(expect.perms, dtype=np.int64).reshape(-1, n)
        self.weights = np.asarray(expect.weights, dtype=np.int64)
        self.make_checker = checker
        self.width = step_bits(n, w)
        self.pending: list[str] = []
        self.cycles: list[int] = []
        self.count = 0                    # steps checked
        self.last_cycle = None

    def add(self, cycle: int, bits: str) -> None:
        self.pending.append(bits)
        self.cycles.append(cycle)
        self.last_cycle = cycle
        if len(self.pending) >= self.every:
            self.check()

    def _fail(self, k: int, perm, weight, last, resid) -> None:
        """Re-check step ``k`` of the batch with the per-step code and raise its message."""
        cycle = self.cycles[k]
        index = self.count + k
        checker = self.make_checker(self.resid)
        checker.resid = resid.copy()
        checker.count = index
        p, wt, lst = [int(x) for x in perm], int(weight), bool(last)
        try:
            checker.check(p, wt, lst)
            if index < len(self.perms):
                mp, mw = self.perms[index].tolist(), int(self.weights[index])
                assert p == mp and wt == mw, (
                    f"{self.label}, step {index}: RTL {p} x{wt}, model {mp} x{mw}")
        except AssertionError as e:
            raise BatchFailure(f"cycle {cycle}: {e}") from None
        raise BatchFailure(f"cycle {cycle}: {self.label}, step {index}: the batch check "
                             f"failed where the per-step check passes")  # never expected

    def check(self) -> None:
        if not self.pending:
            return
        n = self.n
        bits = bits_to_array(self.pending, self.width)
        perm, weight, last = decode_steps(bits, n, self.w)
        s = len(perm)
        rows = perm >= 0
        empty = ~rows.any(axis=1)
        # an output twice: equal neighbours among a row's sorted outputs (idle inputs get
        # distinct negative stand-ins)
        outs = np.sort(np.where(rows, perm, -1 - np.arange(n)[None, :]), axis=1)
        twice = (outs[:, 1:] == outs[:, :-1]).any(axis=1)
        index = self.count + np.arange(s)
        known = index < len(self.perms)
        model_perm = self.perms[np.minimum(index, max(len(self.perms) - 1, 0))] \
            if len(self.perms) else np.full((s, n), -2)
        model_weight = self.weights[np.minimum(index, max(len(self.weights) - 1, 0))] \
            if len(self.weights) else np.zeros(s, dtype=np.int64)
        differs = known & ((perm != model_perm).any(axis=1) | (weight != model_weight))
        outside = (perm >= n).any(axis=1)       # a destination field holding no output
        bad = empty | twice | outside | (weight <= 0) | differs
        resid = self.resid.copy()
        k = _first_bad_step(resid, np.ascontiguousarray(perm, dtype=np.int64),
                            np.ascontiguousarray(weight, dtype=np.int64),
                            np.ascontiguousarray(last), bad)
        if k >= 0:
            self._fail(k, perm[k], weight[k], last[k], resid)
        self.resid = resid
        self.count += s
        self.pending, self.cycles = [], []

    def finish(self, cycle: int) -> None:
        """The frame is over (``done``): check what is left, then the step count and the sum
        (per-step messages, the frame's last cycle in front)."""
        self.check()
        try:
            assert self.count == len(self.perms), (
                f"{self.label.split()[0]}: {self.count} steps, model {len(self.perms)}")
            assert not self.resid.any(), "steps do not sum to the loaded matrix"
        except AssertionError as e:
            raise BatchFailure(f"cycle {cycle}: {e}") from None
