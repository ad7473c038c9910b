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
        steps = np.arange(s)
        rows = perm >= 0
        onehot = np.zeros((s, n, n), dtype=bool)
        si, ri = np.nonzero(rows)
        onehot[si, ri, perm[si, ri]] = True
        taken = onehot * weight[:, None, None]
        after = self.resid[None] - np.cumsum(taken, axis=0)
        before = after + taken
        empty = ~rows.any(axis=1)
        twice = (onehot.sum(axis=1) > 1).any(axis=1)
        matched_empty = (onehot & (before <= 0)).any(axis=(1, 2))
        big = np.iinfo(np.int64).max
        low = np.where(onehot, before, big).min(axis=(1, 2))
        bad_weight = ~((weight > 0) & (weight <= low))
        free = ~rows[:, :, None] & ~onehot.any(axis=1)[:, None, :]
        not_maximal = (free & (before > 0)).any(axis=(1, 2))
        bad_last = last != ~after.any(axis=(1, 2))
        index = self.count + steps
        known = index < len(self.perms)
        model_perm = self.perms[np.minimum(index, max(len(self.perms) - 1, 0))] \
            if len(self.perms) else np.full((s, n), -2)
        model_weight = self.weights[np.minimum(index, max(len(self.weights) - 1, 0))] \
            if len(self.weights) else np.zeros(s, dtype=np.int64)
        differs = known & ((perm != model_perm).any(axis=1) | (weight != model_weight))
        bad = empty | twice | matched_empty | bad_weight | not_maximal | bad_last | differs
        if bad.any():
            k = int(np.argmax(bad))
            self._fail(k, perm[k], weight[k], last[k], before[k])
        self.resid = after[-1].copy()
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
