"""Birkhoff-von Neumann (BvN) decomposition of a traffic demand matrix into circuit-switch
permutations (Chronos, NAIC'25, §8).

:func:`decompose` turns an N x N non-negative integer demand matrix ``D`` (entry ``(i, j)``:
units of data input ``i`` must send to output ``j``; one unit takes one time unit on a link) into
a :class:`Schedule`: a sequence of (permutation, weight) pairs. A permutation is an int array
``p`` of length N with ``p[i] = j`` when input ``i`` is connected to output ``j`` and ``-1`` when
input ``i`` is idle; it is held for ``weight`` time units and carries ``weight`` units on each of
its connections. Methods:

``"exact"``
    Classic BvN. ``D`` is padded to a matrix whose rows and columns all sum to the maximum line
    sum ``L`` (the lower bound on any schedule's makespan); every residual of that matrix has a
    perfect matching, found incrementally (only inputs whose connection emptied are re-matched,
    by augmenting paths). Makespan = ``L`` exactly. Cells whose real demand is served are idle
    (``-1``) in later permutations, so the weighted sum *covers* ``D`` (it may exceed ``D`` only
    where padding shares a connection with real demand).
``"wavefront"``
    The BhaVaN engine's algorithm, step for step: each step the wrapped wave-front arbiter
    (:class:`~models.chronos.wwfa.WavefrontArbiter`, priority diagonal 0 at the first step, +1
    per step) matches the nonzero entries; the weight is the smallest matched entry; it is
    subtracted from the matched entries. The weighted sum equals ``D`` exactly.
``"fast"``
    Greedy maximal matching, kept incrementally: after a step only the connections that emptied
    are re-matched (each freed input takes the free output where it has the most demand left;
    inputs left unmatched earlier are offered the freed outputs). Weighted sum equals ``D``.
``"eclipse"``
    Reconfiguration-aware (after Eclipse, Bojja Venkatakrishnan et al., SIGMETRICS 2016): each
    step picks the matching and duration ``a`` maximising the demand served per unit time,
    ``sum min(a, D_ij) / (a + reconfig)``; a connection may serve only part of its demand. It
    minimises ``makespan + permutations x reconfig`` greedily rather than the makespan alone.
    ``reconfig`` (the switch's reconfiguration time, in demand units) is required.

All methods run on integers; ``"exact"``, ``"wavefront"`` and ``"fast"`` are compiled with numba.

Slot quantisation and the bound on permutations
-----------------------------------------------
A circuit schedule is played in whole time slots (§6), so a demand finer than one slot buys
nothing. :func:`quantize` turns a byte matrix into integer slot counts (each entry rounded *up*
to whole slots of ``unit`` bytes, so every byte is covered) whose largest line sum fits a slot
budget. On such a matrix the greedy methods are bounded by the budget, not by the demand's
resolution:

**A greedy maximal-matching decomposition of an integer matrix with largest line sum L uses at
most 2L - 1 permutations** (``"wavefront"`` and ``"fast"``: each step's matching is maximal over
the nonzero residual entries and subtracts a weight >= 1 from every matched entry). Proof: take
an entry ``(i, j)`` matched in the last step. It is nonzero in every earlier step, so by
maximality every step matches row ``i`` or column ``j`` (or ``(i, j)`` itself). Let ``a`` steps
match row ``i`` elsewhere, ``b`` steps column ``j`` elsewhere and ``c >= 1`` steps ``(i, j)``.
Each such step removes at least one unit from the line it matches, so ``a + c <= R_i`` and
``b + c <= C_j`` (the row and column sums); the step count is at most
``a + b + c <= R_i + C_j - c <= 2L - 1``. The bound is reached: ``"wavefront"`` decomposes
``[[0, 0, 0], [1, 0, 1], [1, 1, 0]]`` (L = 2) in 3 = 2L - 1 permutations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from scipy.optimize import linear_sum_assignment

from .wwfa import WavefrontArbiter

__all__ = ["METHODS", "Quantized", "Schedule", "check_demand", "decompose", "lower_bound",
           "permutation_bound", "quantize", "wavefront_reference"]

METHODS = ("exact", "wavefront", "fast", "eclipse")


@dataclass(frozen=True, eq=False)
class Schedule:
    """A BvN schedule: ``perms[k]`` (int array of length N, ``-1`` = idle) held for
    ``weights[k]`` (> 0) time units, in order. Iterating yields (permutation, weight) pairs."""

    perms: np.ndarray
    weights: np.ndarray
    method: str

    @property
    def n(self) -> int:
        return self.perms.shape[1]

    def __len__(self) -> int:
        return len(self.weights)

    def __iter__(self):
        for k in range(len(self.weights)):
            yield self.perms[k], int(self.weights[k])

    @property
    def makespan(self) -> int:
        """Sum of the weights: the time the schedule takes without reconfiguration cost."""
        return int(self.weights.sum())

    def cost(self, reconfig: float) -> float:
        """Makespan plus one reconfiguration of ``reconfig`` time units per permutation."""
        return self.makespan + len(self) * float(reconfig)

    def served(self) -> np.ndarray:
        """The N x N matrix of units each (input, output) pair receives."""
        n = self.n
        out = np.zeros((n, n), dtype=np.int64)
        rows = np.broadcast_to(np.arange(n), self.perms.shape)
        active = self.perms >= 0
        np.add.at(out, (rows[active], self.perms[active]),
                  np.broadcast_to(self.weights[:, None], self.perms.shape)[active])
        return out


def check_demand(demand: object, name: str = "demand") -> np.ndarray:
    """``demand`` as a C-contiguous int64 N x N array, or ValueError/TypeError naming the
    problem: not square, empty, negative, NaN/infinite, non-integer values."""
    if isinstance(demand, np.ndarray) and demand.dtype == np.int64 and demand.ndim == 2 \
            and demand.flags.c_contiguous and demand.shape[0] == demand.shape[1] \
            and demand.shape[0] > 0:
        # Fast path (the common case): one compiled pass for the sign and the line sums.
        if _valid_int64(demand, _LINE_SUM_MAX):
            return demand
    try:
        arr = np.asarray(demand)
    except (TypeError, ValueError) as e:
        raise TypeError(f"'{name}' must be an N x N matrix of non-negative integers: {e}") \
            from None
    if arr.dtype == object or arr.dtype.kind not in "iuf":
        raise TypeError(f"'{name}' must hold integers, not {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"'{name}' must be a square N x N matrix, not shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"'{name}' is empty; N must be at least 1")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError(f"'{name}' contains NaN or infinite entries")
        if (arr != np.round(arr)).any():
            i, j = np.argwhere(arr != np.round(arr))[0]
            raise ValueError(f"'{name}' must hold integers; entry ({i}, {j}) is "
                             f"{arr[i, j].item()!r}")
        if np.abs(arr).max(initial=0) >= 2**62:
            raise ValueError(f"'{name}' has entries too large for 64-bit integers")
    if (arr < 0).any():
        i, j = np.argwhere(arr < 0)[0]
        raise ValueError(f"'{name}' must be non-negative; entry ({i}, {j}) is "
                         f"{arr[i, j].item()}")
    if arr.dtype.kind == "u" and arr.max(initial=0) >= 2**63:
        raise ValueError(f"'{name}' has entries too large for 64-bit integers")
    out = np.ascontiguousarray(arr, dtype=np.int64)
    if max(out.sum(axis=1).max(), out.sum(axis=0).max()) >= _LINE_SUM_MAX:
        raise ValueError(f"'{name}' has a row or column sum of 2**60 or more")
    return out


def lower_bound(demand: object) -> int:
    """The largest row or column sum: no schedule of ``demand`` has a smaller makespan."""
    d = check_demand(demand)
    return int(max(d.sum(axis=1).max(), d.sum(axis=0).max()))


# --- compiled kernels ------------------------------------------------------------------------

# Line sums are below 2**60 (check_demand), so a free input's SENTINEL minus all the weights
# subtracted since (at most twice the largest line sum) stays above every real entry.
_LINE_SUM_MAX = 2**60
_SENTINEL = 2**62


@numba.njit(cache=True)
def _valid_int64(d, limit):
    """True when every entry is >= 0 and every row and column sums below ``limit``."""
    n = d.shape[0]
    cols = np.zeros(n, dtype=np.int64)
    for i in range(n):
        row = np.int64(0)
        for j in range(n):
            v = d[i, j]
            if v < 0 or v >= limit:
                return False
            row += v
            cols[j] += v
            if row >= limit or cols[j] >= limit:
                return False
    return True


@numba.njit(cache=True)
def _grow(perms, weights, k):
    if k < len(weights):
        return perms, weights
    new_p = np.full((2 * len(weights), perms.shape[1]), -1, dtype=np.int32)
    new_p[:k] = perms[:k]
    new_w = np.zeros(2 * len(weights), dtype=np.int64)
    new_w[:k] = weights[:k]
    return new_p, new_w


@numba.njit(cache=True)
def _wavefront_kernel(demand):
    n = demand.shape[0]
    r = demand.copy()
    nnz = 0
    for i in range(n):
        for j in range(n):
            if r[i, j] > 0:
                nnz += 1
    cap = max(nnz, 1)
    perms = np.full((min(cap, 4 * n), n), -1, dtype=np.int32)
    weights = np.zeros(min(cap, 4 * n), dtype=np.int64)
    row_free = np.empty(n, dtype=np.bool_)
    col_free = np.empty(n, dtype=np.bool_)
    grant = np.empty(n, dtype=np.int64)
    priority = 0
    k = 0
    while nnz > 0:
        row_free[:] = True
        col_free[:] = True
        grant[:] = -1
        matched = 0
        for step in range(n):
            d = priority + step
            if d >= n:
                d -= n
            for i in range(n):
                j = d - i
                if j < 0:
                    j += n
                if row_free[i] and col_free[j] and r[i, j] > 0:
                    grant[i] = j
                    row_free[i] = False
                    col_free[j] = False
                    matched += 1
            if matched == n:
                break
        priority += 1
        if priority == n:
            priority = 0
        w = np.int64(-1)
        for i in range(n):
            if grant[i] >= 0 and (w < 0 or r[i, grant[i]] < w):
                w = r[i, grant[i]]
        perms, weights = _grow(perms, weights, k)
        for i in range(n):
            perms[k, i] = grant[i]
            if grant[i] >= 0:
                r[i, grant[i]] -= w
                if r[i, grant[i]] == 0:
                    nnz -= 1
        weights[k] = w
        k += 1
    return perms[:k], weights[:k]


@numba.njit(cache=True)
def _free_row_update(r, i, cnt, delta):
    """Input i joins (delta=+1) or leaves (-1) the free inputs: count it in cnt[j], the number
    of free inputs with demand left for output j."""
    n = r.shape[1]
    for j in range(n):
        cnt[j] += delta * (r[i, j] > 0)   # branch-free: vectorises


@numba.njit(cache=True)
def _argmax_masked(r, i, mask):
    """(argmax_j r[i, j] & mask[j], its value); first index on ties. mask[j] is -1 (all ones)
    to include output j and 0 to exclude it. Branch-free, so it vectorises."""
    n = r.shape[1]
    top = np.int64(0)
    for j in range(n):
        top = max(top, r[i, j] & mask[j])
    if top == 0:
        return -1, top
    for j in range(n):
        if r[i, j] & mask[j] == top:
            return j, top
    return -1, top


@numba.njit(cache=True)
def _take_best(r, i, now, match_r, ends, col_mask, free_rows, n_free_rows, cnt):
    """Input i takes the free output where it has the most demand left (its cell then empties
    at now + demand), or joins the unmatched inputs. Returns (1 if matched, n_free_rows)."""
    j, v = _argmax_masked(r, i, col_mask)
    if j >= 0:
        match_r[i] = j
        ends[i] = now + v
        col_mask[j] = 0
        return 1, n_free_rows
    free_rows[n_free_rows] = i
    _free_row_update(r, i, cnt, 1)
    return 0, n_free_rows + 1


@numba.njit(cache=True)
def _fast_kernel(demand):
    n = demand.shape[0]
    r = np.empty_like(demand)
    nnz = 0
    for i in range(n):
        for j in range(n):
            v = demand[i, j]
            r[i, j] = v
            nnz += v > 0
    # Invariant: a cell is untouched (residual = demand) until it is matched and stays matched
    # until it empties. Event-driven: a matched cell empties at time (time it was matched) +
    # its demand; the smallest of these end times gives each step's weight without touching
    # the other cells. r is brought up to date (set to 0) only when a cell empties.
    match_r = np.full(n, -1, dtype=np.int32)
    never = np.int64(2**63 - 1)
    ends = np.full(n, never, dtype=np.int64)   # end time of each input's matched cell
    matched = 0
    col_mask = np.full(n, -1, dtype=np.int64)  # -1 (all ones): output free; 0: matched
    free_rows = np.empty(n, dtype=np.int64)    # inputs the maximal matching leaves unmatched
    n_free_rows = 0
    cnt = np.zeros(n, dtype=np.int64)          # free inputs with demand left, per output
    new_rows = np.empty(n, dtype=np.int64)
    new_cols = np.empty(n, dtype=np.int64)
    now = np.int64(0)
    # Initial greedy matching: inputs with most demand choose first, each taking the free
    # output where it has the most demand.
    order = np.argsort(-r.sum(axis=1), kind="mergesort")
    for idx in range(n):
        got, n_free_rows = _take_best(r, order[idx], now, match_r, ends, col_mask, free_rows,
                                      n_free_rows, cnt)
        matched += got
    # Every step empties at least one cell: at most nnz steps.
    perms = np.empty((max(nnz, 1), n), dtype=np.int32)
    weights = np.empty(max(nnz, 1), dtype=np.int64)
    k = 0
    while matched > 0:
        # A linear, vectorised minimum beats a heap's unpredictable branches at these sizes.
        t_end = never
        for i in range(n):
            t_end = min(t_end, ends[i])
        weights[k] = t_end - now
        now = t_end
        n_new = 0
        for i in range(n):
            perms[k, i] = match_r[i]
            if ends[i] == t_end:
                j = match_r[i]
                r[i, j] = 0
                match_r[i] = -1
                ends[i] = never
                matched -= 1
                col_mask[j] = -1
                new_rows[n_new] = i
                new_cols[n_new] = j
                n_new += 1
        k += 1
        # Freed inputs take the free output with the most demand left.
        for t in range(n_new):
            got, n_free_rows = _take_best(r, new_rows[t], now, match_r, ends, col_mask,
                                          free_rows, n_free_rows, cnt)
            matched += got
        # Inputs unmatched before can only gain an edge to an output freed in this step; the
        # per-output count says whether any such input exists.
        for t in range(n_new):
            j = new_cols[t]
            if cnt[j] == 0 or col_mask[j] == 0:
                continue
            best = 0
            for s in range(1, n_free_rows):
                if r[free_rows[s], j] > r[free_rows[best], j]:
                    best = s
            i = free_rows[best]
            match_r[i] = j
            ends[i] = now + r[i, j]
            matched += 1
            col_mask[j] = 0
            n_free_rows -= 1
            free_rows[best] = free_rows[n_free_rows]
            _free_row_update(r, i, cnt, -1)
    return perms[:k], weights[:k]


@numba.njit(cache=True)
def _pad(demand):
    """Add to ``demand`` until every row and column sums to the maximum line sum L
    (north-west-corner fill over the row and column deficits)."""
    n = demand.shape[0]
    p = demand.copy()
    rs = p.sum(axis=1)
    cs = p.sum(axis=0)
    lb = max(rs.max(), cs.max())
    i = 0
    j = 0
    while i < n and j < n:
        if rs[i] == lb:
            i += 1
            continue
        if cs[j] == lb:
            j += 1
            continue
        add = min(lb - rs[i], lb - cs[j])
        p[i, j] += add
        rs[i] += add
        cs[j] += add
    return p


@numba.njit(cache=True)
def _augment(p, u, match_r, match_c, parent, queue, seen):
    """BFS for an augmenting path from free input ``u`` over the support of ``p``."""
    n = p.shape[0]
    seen[:] = False
    head = 0
    tail = 0
    queue[tail] = u
    tail += 1
    while head < tail:
        x = queue[head]
        head += 1
        for y in range(n):
            if p[x, y] > 0 and not seen[y]:
                seen[y] = True
                parent[y] = x
                if match_c[y] < 0:
                    # Flip the path ending at free output y.
                    while y >= 0:
                        x = parent[y]
                        prev = match_r[x]
                        match_r[x] = y
                        match_c[y] = x
                        y = prev
                    return True
                queue[tail] = match_c[y]
                tail += 1
    return False


@numba.njit(cache=True)
def _exact_kernel(demand):
    n = demand.shape[0]
    p = _pad(demand)
    real = demand.copy()
    match_r = np.full(n, -1, dtype=np.int64)
    match_c = np.full(n, -1, dtype=np.int64)
    parent = np.empty(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    seen = np.empty(n, dtype=np.bool_)
    # Greedy start (largest entry per input), then augment the rest to a perfect matching.
    for i in range(n):
        best = -1
        best_v = np.int64(0)
        for j in range(n):
            if match_c[j] < 0 and p[i, j] > best_v:
                best_v = p[i, j]
                best = j
        if best >= 0:
            match_r[i] = best
            match_c[best] = i
    perms = np.full((4 * n, n), -1, dtype=np.int32)
    weights = np.zeros(4 * n, dtype=np.int64)
    k = 0
    remaining = p.sum()
    if remaining == 0:
        return perms[:0], weights[:0]
    for i in range(n):
        if match_r[i] < 0 and not _augment(p, i, match_r, match_c, parent, queue, seen):
            raise RuntimeError("no perfect matching in a padded matrix")
    while True:
        w = np.int64(-1)
        for i in range(n):
            v = p[i, match_r[i]]
            if w < 0 or v < w:
                w = v
        perms, weights = _grow(perms, weights, k)
        for i in range(n):
            j = match_r[i]
            if real[i, j] > 0:
                perms[k, i] = j
                real[i, j] -= min(w, real[i, j])
            else:
                perms[k, i] = -1
            p[i, j] -= w
        weights[k] = w
        k += 1
        remaining -= w * n
        if remaining == 0:
            break
        for i in range(n):
            j = match_r[i]
            if p[i, j] == 0:
                match_r[i] = -1
                match_c[j] = -1
        for i in range(n):
            if match_r[i] < 0 and not _augment(p, i, match_r, match_c, parent, queue, seen):
                raise RuntimeError("no perfect matching in a padded matrix")
    return perms[:k], weights[:k]


# --- reconfiguration-aware scheduler ---------------------------------------------------------

def _eclipse(demand: np.ndarray, reconfig: float, candidates: int) -> tuple[np.ndarray, np.ndarray]:
    n = demand.shape[0]
    r = demand.copy()
    perms: list[np.ndarray] = []
    weights: list[int] = []
    while r.any():
        values = np.unique(r[r > 0])
        if len(values) > candidates:
            values = np.unique(np.quantile(values, np.linspace(0, 1, candidates),
                                           method="nearest"))
        best = None
        for a in values:
            served = np.minimum(r, a)
            rows, cols = linear_sum_assignment(served, maximize=True)
            utility = served[rows, cols].sum() / (a + reconfig)
            if best is None or utility > best[0]:
                best = (utility, int(a), rows, cols)
        _, a, rows, cols = best
        perm = np.full(n, -1, dtype=np.int32)
        live = r[rows, cols] > 0
        perm[rows[live]] = cols[live]
        r[rows[live], cols[live]] -= np.minimum(r[rows[live], cols[live]], a)
        perms.append(perm)
        weights.append(a)
    if not perms:
        return np.empty((0, n), dtype=np.int32), np.empty(0, dtype=np.int64)
    return np.array(perms, dtype=np.int32), np.array(weights, dtype=np.int64)


def decompose(demand: object, method: str = "fast", *, reconfig: float | None = None,
              candidates: int = 48) -> Schedule:
    """Decompose ``demand`` (N x N, non-negative integers) into a :class:`Schedule`.

    ``method`` is one of :data:`METHODS` (see the module docstring). ``reconfig`` is the
    reconfiguration time in demand units, required by (and only used by) ``"eclipse"``;
    ``candidates`` bounds how many hold durations ``"eclipse"`` tries per step.
    """
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"unknown BvN method {method!r}; allowed: {', '.join(METHODS)}")
    d = check_demand(demand)
    if method == "eclipse":
        if reconfig is None or isinstance(reconfig, bool) \
                or not isinstance(reconfig, (int, float, np.integer, np.floating)) \
                or not np.isfinite(reconfig) or reconfig < 0:
            raise ValueError(f"method 'eclipse' needs reconfig >= 0 (time units), "
                             f"not {reconfig!r}")
        if not isinstance(candidates, int) or candidates < 2:
            raise ValueError(f"'candidates' must be an int >= 2, not {candidates!r}")
        perms, weights = _eclipse(d, float(reconfig), candidates)
    elif reconfig is not None:
        raise ValueError(f"'reconfig' applies to method 'eclipse' only, not {method!r}")
    else:
        kernel = {"exact": _exact_kernel, "wavefront": _wavefront_kernel,
                  "fast": _fast_kernel}[method]
        perms, weights = kernel(d)
    return Schedule(np.ascontiguousarray(perms), np.ascontiguousarray(weights), method)


def wavefront_reference(demand: object) -> Schedule:
    """``"wavefront"`` written directly on the WWFA golden model, one
    :meth:`~models.chronos.wwfa.WavefrontArbiter.arbitrate` call per step: the independent
    definition the compiled kernel is tested against (N <= 128)."""
    r = check_demand(demand).copy()
    n = r.shape[0]
    if n < 2:
        raise ValueError("the wave-front arbiter needs N >= 2")
    arbiter = WavefrontArbiter(n)
    perms, weights = [], []
    while r.any():
        grants = arbiter.arbitrate(r > 0)
        rows, cols = np.nonzero(grants)
        w = int(r[rows, cols].min())
        r[rows, cols] -= w
        perm = np.full(n, -1, dtype=np.int32)
        perm[rows] = cols
        perms.append(perm)
        weights.append(w)
    if not perms:
        return Schedule(np.empty((0, n), dtype=np.int32), np.empty(0, dtype=np.int64),
                        "wavefront")
    return Schedule(np.array(perms, dtype=np.int32), np.array(weights, dtype=np.int64),
                    "wavefront")


# --- slot quantisation -----------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Quantized:
    """A demand in whole slots: ``counts[i, j]`` slots of ``unit`` bytes each
    (``counts * unit >= demand`` entry by entry), for a budget of ``slots`` slots."""

    counts: np.ndarray
    unit: int
    slots: int

    @property
    def used(self) -> int:
        """Largest line sum of ``counts``: the slots an exact BvN schedule takes (<= ``slots``)."""
        return lower_bound(self.counts)

    def makespan_bytes(self, schedule: Schedule | None = None) -> int:
        """Byte-times the quantised schedule takes: its makespan in slots times ``unit``
        (``schedule`` None: the exact BvN schedule, ``used`` slots)."""
        return (self.used if schedule is None else schedule.makespan) * self.unit


def _check_count(name: str, value: object, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"'{name}' must be an int >= {low}, not {value!r}")
    if value < low:
        raise ValueError(f"'{name}' must be >= {low}, not {value}")
    return int(value)


def _line_max(counts: np.ndarray) -> int:
    return int(max(counts.sum(axis=1).max(), counts.sum(axis=0).max()))


def _ceil_div(d: np.ndarray, unit: int) -> np.ndarray:
    return -(-d // unit)


def quantize(demand: object, slots: int, *, unit: int | None = None) -> Quantized:
    """Round ``demand`` (bytes, N x N non-negative integers) up to whole slots so that its
    largest line sum fits the budget ``slots``.

    ``unit`` (bytes per slot) is the smallest integer for which ``ceil(demand / unit)`` fits
    the budget; the line sums of ``ceil(demand / u)`` never grow with ``u``, so it is found by
    bisection between ``ceil(L / slots)`` (L: the demand's largest line sum) and the largest
    entry. Given ``unit`` explicitly, that unit is used and checked.

    When it cannot fit, nothing is scaled silently: ValueError. A line with more nonzero
    entries than ``slots`` cannot fit at any unit (each nonzero entry needs at least one slot;
    the error names the line), and an explicit ``unit`` that needs more slots than the budget
    is refused with the count it needs.
    """
    d = check_demand(demand)
    slots = _check_count("slots", slots)
    if unit is not None:
        unit = _check_count("unit", unit)
        counts = _ceil_div(d, unit)
        need = _line_max(counts)
        if need > slots:
            raise ValueError(f"unit {unit} bytes needs {need} slots on the busiest line, more "
                             f"than the budget of {slots}; use a unit of at least "
                             f"{_smallest_unit(d, slots)} bytes" if _fits_at_all(d, slots)
                             else f"unit {unit} bytes needs {need} slots, more than the budget "
                                  f"of {slots}, and no unit fits: "
                                  f"{_crowded_line(d, slots)}")
        return Quantized(counts, unit, slots)
    if not _fits_at_all(d, slots):
        raise ValueError(f"demand cannot fit {slots} slots at any unit: "
                         f"{_crowded_line(d, slots)}")
    unit = _smallest_unit(d, slots)
    return Quantized(_ceil_div(d, unit), unit, slots)


def _fits_at_all(d: np.ndarray, slots: int) -> bool:
    nz = d > 0
    return max(nz.sum(axis=1).max(), nz.sum(axis=0).max()) <= slots


def _crowded_line(d: np.ndarray, slots: int) -> str:
    nz = d > 0
    rows, cols = nz.sum(axis=1), nz.sum(axis=0)
    if rows.max() >= cols.max():
        i = int(rows.argmax())
        return f"row {i} has {rows[i]} nonzero entries (one slot each at least), limit {slots}"
    j = int(cols.argmax())
    return f"column {j} has {cols[j]} nonzero entries (one slot each at least), limit {slots}"


def _smallest_unit(d: np.ndarray, slots: int) -> int:
    """Smallest integer unit with max line sum of ceil(d / unit) <= slots (it exists)."""
    total = _line_max(d)
    if total == 0:
        return 1
    lo = max(1, -(-total // slots))          # no smaller unit can fit: sum d / u <= sum ceil
    hi = max(lo, int(d.max()))              # every nonzero entry is one slot: fits
    while lo < hi:
        mid = (lo + hi) // 2
        if _line_max(_ceil_div(d, mid)) <= slots:
            hi = mid
        else:
            lo = mid + 1
    return lo


def permutation_bound(demand: object) -> int:
    """2L - 1 (0 for an all-zero matrix): the most permutations a greedy maximal-matching
    decomposition (``"wavefront"``, ``"fast"``) of an integer matrix with largest line sum L
    can use (proof in the module docstring)."""
    return max(0, 2 * lower_bound(demand) - 1)
