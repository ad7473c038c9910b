"""SiP-OCS bandwidth steering: SiP-ML's circuit ILP (Khani et al., SIGCOMM 2021), as Flex-SiPAC
§6.A.2 runs it on every job of its SiP-OCS baseline.

SiP-OCS has Q optical circuit switches; every CU has one port (one transmitter, one receiver)
on each. A job of s CUs with traffic matrix ``T`` (s x s, ``T[i, j]`` bytes from CU i to CU j)
gets integer circuit counts ``x[i, j]`` and routes its traffic over them, multi-hop, to
*maximise the minimum inverse completion time*: the largest ``lam`` such that ``lam * T`` is
routable when every circuit carries ``capacity`` (maximum concurrent flow).

**The ILP** (:func:`steer_exact`, any ``T``)::

    max  lam
    s.t. x[i, j] in {0, 1, ..., Q}                       i != j      circuits i -> j
         sum_j x[i, j] <= Q,  sum_i x[i, j] <= Q         every i     one port per OCS
         f[k, i, j] >= 0                                 flow of source k's traffic on i -> j
         sum_i f[k, i, v] - sum_j f[k, v, j] = lam T[k, v]   v != k  (no flow into k)
         sum_k f[k, i, j] <= capacity x[i, j]
         sum f >= lam sum_k H_k                          Moore cut (below), valid, only speeds up

The multi-commodity flow is aggregated per source (one commodity per CU, not per pair: a
flow from one source to many sinks decomposes into paths, so nothing is lost). H_k is the
least hop-weighted demand a source can have with out-degree Q: at most Q^m CUs lie m circuits
away, so sorting row k decreasingly and charging the first Q entries 1 hop, the next Q^2 2
hops, ... bounds sum_j T[k, j] dist(k, j) from below; every unit of flow to j uses at least
dist(k, j) circuits, so total flow >= lam sum_k H_k. With sum f <= capacity s Q this also gives
the *Moore bound* lam <= capacity s Q / sum_k H_k (:func:`moore_bound`).

**Per-OCS matchings.** The ILP constrains degrees only, not which OCS carries a circuit. That
suffices: an OCS connects each input port to at most one output port, so an OCS's circuits are
a matching of the bipartite graph (transmitters, receivers). Directed circuits with out- and
in-degree <= Q form a bipartite multigraph of maximum degree Q, and by Koenig's edge-colouring
theorem its edges split into Q matchings -- one per OCS -- so the degree constraints are
exact, no per-OCS variables needed. :func:`ocs_matchings` builds the split (pad to Q-regular,
peel off Q perfect matchings, which a regular bipartite multigraph always has) and the tests
check it; for circulant sets it holds by construction (below).

**Circulant restriction** (:func:`steer`, jobs whose ``T[i, j]`` depends only on (j - i) mod s,
e.g. the uniform all-to-all of a mesh all-reduce, the traffic the paper estimates for every
job). Circuits are restricted to circulant sets: ``x[o]`` circuits from every CU i to
i + o (mod s), sum_o x[o] <= Q -- which is also how the Q OCSs are set, OCS q realising the
permutation i -> i + o_q. By rotational symmetry (averaging any flow over the s rotations keeps
it feasible and optimal) one commodity, from CU 0, suffices, and the load of every circuit of
offset o is the sum of that commodity's flow over all s edges of offset o. The restricted
problem is then an ILP in s - 1 integers and s (s - 1) flow variables (plus the abelian
Moore cut below), solved exactly by :func:`_circulant_milp` -- but with Q = 64 HiGHS needs
25 s at s = 64 and leaves a 1 % gap at s = 128 after a minute. For *uniform* traffic
(unit traffic and capacity below) two certificates solve it exactly, in under a second for
every job size of the experiments (s <= 512), using that the units u of Z_s map a circulant {o: x[o]} to the equally good
{u o: x[o]}, and that a unit of flow sent d hops uses d circuits:

- ``s - 1 <= Q`` (*dense*; Q = k (s - 1) + r, 0 <= r < s - 1): a circulant with some
  x[d] < k has lam s <= Q + x[d] (every offset's demand takes >= 1 hop, the part of d's
  beyond its x[d] direct circuits >= 2, and all flow fits in Q circuits), so
  lam <= k + (r - 1) / s. With r = 0 all-k reaches the bound Q / (s - 1); with r = 1 every
  other circulant is all-k plus one extra circuit, whose offset e matters only through
  gcd(e, s) -- one LP per divisor of s finds the best. (r >= 2: the MILP.)
- ``s - 1 > Q`` (*sparse*): at most C(Q + m, m) - 1 CUs lie within m circuits of a circulant
  (sums of at most m of its Q generators), which caps lam (the abelian Moore bound). Q
  distinct offsets from a seeded search (random, then swaps until every other offset is a
  sum of two of them) whose two-hop path LP reaches that bound are optimal (fewer paths can
  only lower lam, so reaching the bound proves it). When s - 1 <= Q + Q (Q + 1) / 2 -- every
  job of the experiments -- the bound equals the general Moore bound above, so such a
  circulant is optimal for the unrestricted ILP too.

Every result records a proven upper bound and whether it is optimal. A case no certificate
covers falls back to the restricted MILP (up to ``milp_max`` CUs, ``time_limit``); beyond
that it returns the best circulant found (or evenly spread offsets) with ``optimal=False``.
Traffic that is not circulant goes to :func:`steer_exact` (up to ``exact_max`` CUs).

**Routes.** A simulator flow has one path, so :func:`steer` also picks one path of offsets
per destination offset (rotated to every source, so all circuits of an offset carry the same
load) minimising the worst circuit load, by a small assignment MILP over the optimum's paths
(every two-hop path of two different offsets when sparse, the optimal flow's paths
otherwise); ``lam_routed`` is what those unsplit paths achieve (<= ``lam``: at 512 CUs,
Q = 64, 15 pairs per circuit instead of the optimum's 14.97). A path's offsets are put in
increasing order (any order reaches the same CU over the same circuits' offsets), and an
offset is used twice only when nothing else reaches that destination: a packet holding a
buffer of an offset-a circuit then only ever waits for an offset-b circuit with b > a, so
the credit-based simulator cannot deadlock (the sparse certificates' search admits only
sums of two different offsets for this reason).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from math import comb

import numpy as np

__all__ = ["Steering", "steer", "steer_exact", "ocs_matchings", "max_concurrent_flow",
           "moore_bound", "circulant_demand"]

_TOL = 1e-7


@dataclass
class Steering:
    circuits: np.ndarray          # (s, s) ints: circuits from CU i to CU j
    lam: float                    # lam * T is routable (maximum concurrent flow)
    bound: float                  # proven upper bound on the problem solved (circulant for
    optimal: bool                 # steer), == lam when optimal
    method: str                   # how it was solved or certified
    seconds: float
    offsets: dict | None = None   # circulant: {offset: circuits from every CU}
    paths: dict | None = None     # circulant: {destination offset: tuple of offsets}
    lam_routed: float | None = None   # circulant: lam of the single paths


# ------------------------------------------------------------------ input checks --------

def _check(T, Q, capacity) -> tuple[np.ndarray, int, float]:
    T = np.asarray(T, dtype=float)
    if T.ndim != 2 or T.shape[0] != T.shape[1]:
        raise ValueError(f"T must be a square matrix, not of shape {T.shape}")
    if not np.isfinite(T).all() or (T < 0).any():
        raise ValueError("T must be finite and nonnegative")
    if np.diag(T).any():
        raise ValueError("T must have a zero diagonal (a CU sends nothing to itself)")
    if T.shape[0] >= 2 and not T.any():
        raise ValueError("T has no traffic: lam is unbounded")
    try:
        ok = not isinstance(Q, bool) and int(Q) == Q and Q >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"Q (OCSs, i.e. ports per CU) must be an integer >= 1, not {Q!r}")
    try:
        ok = bool(np.isfinite(capacity) and capacity > 0)
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"capacity must be a number > 0, not {capacity!r}")
    return T, int(Q), float(capacity)


def circulant_demand(T) -> np.ndarray | None:
    """``g`` with ``T[i, j] == g[(j - i) % s]`` for all i, j, or None if T is not circulant."""
    T = np.asarray(T, dtype=float)
    s = T.shape[0]
    g = T[0].copy()
    idx = (np.arange(s)[None, :] - np.arange(s)[:, None]) % s
    return g if np.allclose(T, g[idx], rtol=1e-12, atol=0) else None


# ------------------------------------------------------------------ bounds ----------------

def _hops(n: int, Q: int, abelian: bool) -> np.ndarray:
    """Least hop counts of the n other CUs, closest first: at most Q^m CUs exactly m circuits
    away (any digraph of out-degree Q), or at most C(Q + m, m) - 1 within m (circulants)."""
    h, m, within = [], 1, 0
    while len(h) < n:
        within = comb(Q + m, m) - 1 if abelian else within + Q ** m
        h += [m] * (min(within, n) - len(h))
        m += 1
    return np.array(h, dtype=float)


def _moore_sum(row: np.ndarray, Q: int, abelian: bool) -> float:
    """The least sum_j row[j] dist(j): the largest demands on the closest CUs."""
    d = np.sort(np.asarray(row, dtype=float))[::-1]
    return float((d * _hops(len(d), Q, abelian)).sum())


def moore_bound(T, Q: int, capacity: float = 1.0, *, circulant: bool = False) -> float:
    """The hop-count upper bound on lam (see the module docstring); ``circulant``: the
    tighter abelian one, valid for circulant circuit sets only."""
    T, Q, capacity = _check(T, Q, capacity)
    s = T.shape[0]
    need = sum(_moore_sum(np.delete(T[k], k), Q, circulant) for k in range(s))
    return capacity * s * Q / need


# ------------------------------------------------------------------ the general ILP -------

def _flow_rows(s, edges, T, cap, x_cols, lam_col, f0, ncol):
    """Conservation and capacity rows of the per-source multi-commodity flow.
    edges: list of (i, j); flow variable of source k on edge e at f0 + k * E + e."""
    from scipy import sparse
    E = len(edges)
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0
    out_of = [[] for _ in range(s)]
    into = [[] for _ in range(s)]
    for e, (i, j) in enumerate(edges):
        out_of[i].append(e)
        into[j].append(e)
    for k in range(s):
        if not T[k].any():
            continue
        for v in range(s):
            if v == k:
                continue
            for e in into[v]:
                rows.append(r); cols.append(f0 + k * E + e); vals.append(1.0)
            for e in out_of[v]:
                rows.append(r); cols.append(f0 + k * E + e); vals.append(-1.0)
            rows.append(r); cols.append(lam_col); vals.append(-T[k, v])
            lo.append(0.0); hi.append(0.0)
            r += 1
    for e in range(E):
        for k in range(s):
            if T[k].any():
                rows.append(r); cols.append(f0 + k * E + e); vals.append(1.0)
        if x_cols is None:
            hi.append(cap[e])
        else:
            rows.append(r); cols.append(x_cols[e]); vals.append(-cap)
            hi.append(0.0)
        lo.append(-np.inf)
        r += 1
    return sparse.csr_array((vals, (rows, cols)), shape=(r, ncol)), lo, hi


def _maximise(A, lo, hi, ub, *, integers: int, objective: int, time_limit: float):
    """Maximise column ``objective`` subject to lo <= A x <= hi, 0 <= x <= ub, the first
    ``integers`` columns integral (HiGHS through scipy, solved to a zero gap)."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    ncol = A.shape[1]
    c = np.zeros(ncol)
    c[objective] = -1
    integ = np.zeros(ncol)
    integ[:integers] = 1
    return milp(c, constraints=LinearConstraint(A, lo, hi), integrality=integ,
                bounds=Bounds(0, ub), options={"time_limit": time_limit, "mip_rel_gap": 0})


def steer_exact(T, Q: int, capacity: float = 1.0, *, time_limit: float = 60.0) -> Steering:
    """SiP-ML's ILP for one job (any traffic ``T``), solved by HiGHS (scipy.optimize.milp).
    Practical to ~8 CUs."""
    from scipy import sparse
    t0 = time.perf_counter()
    T, Q, capacity = _check(T, Q, capacity)
    s = T.shape[0]
    if s < 2:
        return Steering(np.zeros((s, s), int), np.inf, np.inf, True, "trivial", 0.0)
    edges = [(i, j) for i in range(s) for j in range(s) if i != j]
    E = len(edges)
    f0, lam_col = E, E + s * E
    ncol = lam_col + 1
    A, lo, hi = _flow_rows(s, edges, T, capacity, list(range(E)), lam_col, f0, ncol)
    deg = sparse.lil_array((2 * s + 1, ncol))
    for e, (i, j) in enumerate(edges):
        deg[i, e] = 1
        deg[s + j, e] = 1
    moore = sum(_moore_sum(np.delete(T[k], k), Q, False) for k in range(s))
    for k in range(s):
        if T[k].any():
            deg[2 * s, f0 + k * E: f0 + (k + 1) * E] = 1
    deg[2 * s, lam_col] = -moore
    A = sparse.vstack([A, deg.tocsr()])
    lo += [0.0] * (2 * s) + [0.0]
    hi += [float(Q)] * (2 * s) + [np.inf]
    ub = np.full(ncol, np.inf)
    ub[:E] = Q
    for k in range(s):                                  # no flow into its own source
        for e, (i, j) in enumerate(edges):
            if j == k or not T[k].any():
                ub[f0 + k * E + e] = 0
    res = _maximise(A, lo, hi, ub, integers=E, objective=lam_col, time_limit=time_limit)
    if res.x is None:
        raise RuntimeError(f"the ILP found no solution within {time_limit} s ({res.message})")
    x = np.zeros((s, s), dtype=int)
    for e, (i, j) in enumerate(edges):
        x[i, j] = int(round(res.x[e]))
    lam = float(res.x[lam_col])
    bound = -float(res.mip_dual_bound) if res.mip_dual_bound is not None else np.inf
    return Steering(x, lam, max(bound, lam), res.status == 0, "milp",
                    time.perf_counter() - t0)


# ------------------------------------------------------------------ checks ----------------

def max_concurrent_flow(circuits, T, capacity: float = 1.0, *, per_pair: bool = False) -> float:
    """The largest lam with lam * T routable over ``circuits`` (an LP), independently of the
    ILPs: one commodity per source, or with ``per_pair`` one per (source, destination)."""
    from scipy.optimize import linprog
    from scipy import sparse
    x = np.asarray(circuits)
    T = np.asarray(T, dtype=float)
    s = T.shape[0]
    edges = [(int(i), int(j)) for i, j in np.argwhere(x > 0)]
    E = len(edges)
    comms = [(k, None) for k in range(s) if T[k].any()] if not per_pair else \
        [(k, d) for k in range(s) for d in range(s) if T[k, d] > 0]
    ncol = len(comms) * E + 1
    lam = ncol - 1
    r, rows, cols, vals, beq = 0, [], [], [], []
    for q, (k, d) in enumerate(comms):
        for v in range(s):
            if v == k:
                continue
            for e, (i, j) in enumerate(edges):
                if j == v:
                    rows.append(r); cols.append(q * E + e); vals.append(1.0)
                if i == v:
                    rows.append(r); cols.append(q * E + e); vals.append(-1.0)
            dem = T[k, v] if d is None else (T[k, v] if v == d else 0.0)
            rows.append(r); cols.append(lam); vals.append(-dem)
            beq.append(0.0)
            r += 1
    Aeq = sparse.csr_array((vals, (rows, cols)), shape=(r, ncol))
    rows, cols, vals = [], [], []
    for e in range(E):
        for q in range(len(comms)):
            rows.append(e); cols.append(q * E + e); vals.append(1.0)
    Aub = sparse.csr_array((vals, (rows, cols)), shape=(E, ncol))
    bub = np.array([capacity * x[i, j] for i, j in edges], dtype=float)
    c = np.zeros(ncol)
    c[lam] = -1
    res = linprog(c, A_ub=Aub, b_ub=bub, A_eq=Aeq, b_eq=beq, bounds=(0, None), method="highs")
    if res.status == 2:
        return 0.0
    if res.status != 0:
        raise RuntimeError(f"max-concurrent-flow LP: {res.message}")
    return float(-res.fun)


def ocs_matchings(circuits, Q: int) -> list[list[tuple[int, int]]]:
    """Split ``circuits`` (out- and in-degree <= Q) into Q matchings, one per OCS (Koenig):
    pad the bipartite multigraph to Q-regular with dummy edges, then remove Q perfect
    matchings one after another (a k-regular bipartite multigraph always has one)."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_bipartite_matching
    real = np.array(circuits, dtype=int)
    s = real.shape[0]
    if (real < 0).any() or (real.sum(1) > Q).any() or (real.sum(0) > Q).any():
        raise ValueError(f"circuits must be nonnegative with out- and in-degree <= Q = {Q}")
    dummy = np.zeros_like(real)
    a, b = Q - real.sum(1), Q - real.sum(0)
    i = j = 0
    while i < s and j < s:                        # pair the deficits greedily
        if a[i] == 0:
            i += 1
            continue
        if b[j] == 0:
            j += 1
            continue
        m = min(a[i], b[j])
        dummy[i, j] += m
        a[i] -= m
        b[j] -= m
    out = []
    for _ in range(Q):
        tot = real + dummy
        match = maximum_bipartite_matching(csr_array(tot > 0), perm_type="column")
        if (match < 0).any():
            raise AssertionError("no perfect matching in a regular bipartite multigraph")
        ocs = []
        for u, v in enumerate(match):
            if real[u, v] > 0:
                real[u, v] -= 1
                ocs.append((u, int(v)))
            else:
                dummy[u, v] -= 1
        out.append(ocs)
    assert not real.any()
    return out


# ------------------------------------------------------------------ circulants ------------

def _offsets_matrix(s: int, x: dict) -> np.ndarray:
    m = np.zeros((s, s), dtype=int)
    i = np.arange(s)
    for o, n in x.items():
        m[i, (i + o) % s] += n
    return m


def _circulant_lp(s: int, x: dict, g: np.ndarray, capacity: float):
    """lam of the circulant with x[o] circuits per offset: one commodity from CU 0, flow
    f[v, o] on the edge v -> v + o; every edge of offset o carries sum_v f[v, o]."""
    from scipy.optimize import linprog
    from scipy import sparse
    offs = sorted(o for o, n in x.items() if n > 0)
    K = len(offs)
    ncol = s * K + 1
    lam = ncol - 1
    rows, cols, vals = [], [], []
    for v in range(1, s):
        for q, o in enumerate(offs):
            u = (v - o) % s
            rows.append(v - 1); cols.append(u * K + q); vals.append(1.0)
            rows.append(v - 1); cols.append(v * K + q); vals.append(-1.0)
        rows.append(v - 1); cols.append(lam); vals.append(-g[v])
    Aeq = sparse.csr_array((vals, (rows, cols)), shape=(s - 1, ncol))
    rows = [q for v in range(s) for q in range(K)]
    cols = [v * K + q for v in range(s) for q in range(K)]
    Aub = sparse.csr_array((np.ones(len(rows)), (rows, cols)), shape=(K, ncol))
    ub = np.full(ncol, np.inf)
    for q, o in enumerate(offs):
        ub[((-o) % s) * K + q] = 0                     # nothing back into CU 0
    c = np.zeros(ncol)
    c[lam] = -1
    res = linprog(c, A_ub=Aub, b_ub=[capacity * x[o] for o in offs], A_eq=Aeq,
                  b_eq=np.zeros(s - 1), bounds=list(zip(np.zeros(ncol), ub)), method="highs")
    if res.status == 2:
        return 0.0, None
    if res.status != 0:
        raise RuntimeError(f"circulant LP: {res.message}")
    f = {(v, o): res.x[v * K + q] for v in range(s) for q, o in enumerate(offs)
         if res.x[v * K + q] > _TOL}
    return float(-res.fun), f


def _circulant_milp(s, g, Q, capacity, time_limit):
    """The restricted ILP itself: integer x[o] and the one-commodity flow, with the abelian
    Moore cut."""
    from scipy import sparse
    n = s - 1
    nf = s * n
    lam = n + nf
    ncol = lam + 1
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0
    for v in range(1, s):
        for o in range(1, s):
            rows += [r, r]; cols += [n + ((v - o) % s) * n + o - 1, n + v * n + o - 1]
            vals += [1.0, -1.0]
        rows.append(r); cols.append(lam); vals.append(-g[v])
        lo.append(0.0); hi.append(0.0)
        r += 1
    for o in range(1, s):
        for v in range(s):
            rows.append(r); cols.append(n + v * n + o - 1); vals.append(1.0)
        rows.append(r); cols.append(o - 1); vals.append(-capacity)
        lo.append(-np.inf); hi.append(0.0)
        r += 1
    rows += [r] * n; cols += list(range(n)); vals += [1.0] * n
    lo.append(0.0); hi.append(float(Q))
    r += 1
    rows += [r] * nf; cols += list(range(n, n + nf)); vals += [1.0] * nf
    rows.append(r); cols.append(lam); vals.append(-_moore_sum(g[1:], Q, True))
    lo.append(0.0); hi.append(np.inf)
    r += 1
    A = sparse.csr_array((vals, (rows, cols)), shape=(r, ncol))
    ub = np.full(ncol, np.inf)
    ub[:n] = Q
    for o in range(1, s):
        ub[n + ((-o) % s) * n + o - 1] = 0
    res = _maximise(A, lo, hi, ub, integers=n, objective=lam, time_limit=time_limit)
    if res.x is None:
        return None
    x = {o: int(round(res.x[o - 1])) for o in range(1, s) if round(res.x[o - 1]) > 0}
    bound = -float(res.mip_dual_bound) if res.mip_dual_bound is not None else np.inf
    return x, float(res.x[lam]), max(bound, float(res.x[lam])), res.status == 0


def _two_hop_lp(s: int, D: list, capacity: float):
    """lam of Q distinct offsets D (one circuit each) for uniform unit traffic when every CU
    outside D is reached in exactly two circuits: direct for d in D, else a path (a, b),
    a + b = d, a != b; returns lam and the path weights."""
    from scipy.optimize import linprog
    from scipy import sparse
    Dset = set(D)
    rest = [d for d in range(1, s) if d not in Dset]
    where = {d: q for q, d in enumerate(rest)}
    idx = {o: q for q, o in enumerate(D)}
    paths = [(a, b) for a in D for b in D if a != b and (a + b) % s in where]
    if len({(a + b) % s for a, b in paths}) < len(rest):
        return 0.0, None
    P = len(paths)
    lam = P
    rows = [where[(a + b) % s] for a, b in paths] + list(range(len(rest)))
    cols = list(range(P)) + [lam] * len(rest)
    vals = [1.0] * P + [-1.0] * len(rest)
    Aeq = sparse.csr_array((vals, (rows, cols)), shape=(len(rest), P + 1))
    rows = [idx[a] for a, b in paths] + [idx[b] for a, b in paths] + list(range(len(D)))
    cols = list(range(P)) * 2 + [lam] * len(D)
    Aub = sparse.csr_array((np.ones(len(rows)), (rows, cols)), shape=(len(D), P + 1))
    c = np.zeros(P + 1)
    c[lam] = -1
    res = linprog(c, A_ub=Aub, b_ub=np.full(len(D), capacity), A_eq=Aeq,
                  b_eq=np.zeros(len(rest)), bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"two-hop LP: {res.message}")
    return float(-res.fun), {p: res.x[q] for q, p in enumerate(paths) if res.x[q] > _TOL}


def _cover_search(s: int, Q: int, rng, rounds: int = 300) -> list | None:
    """Q distinct offsets such that every other nonzero offset is a sum of two different
    ones: random, then swap an uncovered offset in for the member whose removal uncovers
    least."""
    D = list(rng.choice(np.arange(1, s), Q, replace=False))
    for _ in range(rounds):
        arr = np.array(D)
        sums = (arr[:, None] + arr[None, :]) % s
        np.fill_diagonal(sums, 0)                      # a + a does not count
        cnt = np.bincount(sums.ravel(), minlength=s)
        covered = cnt > 0
        covered[arr] = True
        missing = np.flatnonzero(~covered[1:]) + 1
        if not len(missing):
            return sorted(int(o) for o in D)
        # offsets only one member (counted in ordered pairs, as a or b) covers
        loss = np.zeros(len(D))
        for q, a in enumerate(arr):
            own = np.concatenate([sums[q], np.delete(sums[:, q], q)])
            alone = cnt[own] == np.bincount(own, minlength=s)[own]
            loss[q] = len(set(own[alone].tolist()) - set(arr.tolist()) - {0}) + rng.random()
        out = int(np.argmin(loss))
        D[out] = int(rng.choice(missing))
    return None


def _assign_paths(s, x, g, capacity, candidates, time_limit=10.0):
    """One path per destination offset (rotated to every source) minimising the worst load
    per circuit, over ``candidates`` ({d: [paths]}), by a small assignment MILP."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy import sparse
    ds = sorted(candidates)
    clean = {}
    for d in ds:                # offsets in increasing order; no offset twice if avoidable
        ps = list(dict.fromkeys(tuple(sorted(p)) for p in candidates[d]))
        clean[d] = [p for p in ps if len(set(p)) == len(p)] or ps
    candidates = clean
    cols = [(d, p) for d in ds for p in candidates[d]]
    if all(len(candidates[d]) == 1 for d in ds):
        pick = {d: candidates[d][0] for d in ds}
    else:
        offs = sorted(x)
        oi = {o: q for q, o in enumerate(offs)}
        z = len(cols)
        rows, cc, vals = [], [], []
        pos = {d: q for q, d in enumerate(ds)}
        for j, (d, p) in enumerate(cols):
            rows.append(pos[d]); cc.append(j); vals.append(1.0)
        A1 = sparse.csr_array((vals, (rows, cc)), shape=(len(ds), z + 1))
        rows, cc, vals = [], [], []
        for j, (d, p) in enumerate(cols):
            for o in p:
                rows.append(oi[o]); cc.append(j); vals.append(g[d])
        for q, o in enumerate(offs):
            rows.append(q); cc.append(z); vals.append(-capacity * x[o])
        A2 = sparse.csr_array((vals, (rows, cc)), shape=(len(offs), z + 1))
        integ = np.ones(z + 1)
        integ[z] = 0
        c = np.zeros(z + 1)
        c[z] = 1
        ub = np.ones(z + 1)
        ub[z] = np.inf
        res = milp(c, constraints=[LinearConstraint(A1, 1, 1),
                                   LinearConstraint(A2, -np.inf, 0)],
                   integrality=integ, bounds=Bounds(0, ub),
                   options={"time_limit": time_limit})
        if res.x is not None:
            pick = {d: p for j, (d, p) in enumerate(cols) if res.x[j] > 0.5}
        else:                                          # greedy: longest-demand first
            load = {o: 0.0 for o in offs}
            pick = {}
            for d in sorted(ds, key=lambda d: -g[d]):
                best = min(candidates[d], key=lambda p: max(
                    (load[o] + g[d] * p.count(o)) / x[o] for o in p))
                pick[d] = best
                for o in best:
                    load[o] += g[d]
    load: dict = {}
    for d, p in pick.items():
        for o in p:
            load[o] = load.get(o, 0.0) + g[d]
    worst = max(load[o] / (capacity * x[o]) for o in load)
    return pick, 1.0 / worst


def _decompose(s, f, g, lam):
    """Paths (tuples of offsets) from CU 0 carrying the one-commodity flow ``f``."""
    f = dict(f)
    need = {v: lam * g[v] for v in range(1, s) if g[v] > 0}
    out_edges: dict = {}
    for (v, o), a in f.items():
        out_edges.setdefault(v, []).append(o)
    paths: dict = {}
    guard = 0
    while any(a > 1e-9 * lam for a in need.values()) and guard < 100 * s * s:
        guard += 1
        v, seen, walk = 0, {0: 0}, []
        while True:
            if v != 0 and need.get(v, 0) > 1e-9 * lam:
                break
            nxt = [o for o in out_edges.get(v, ()) if f.get((v, o), 0) > 1e-12]
            if not nxt:
                walk = None
                break
            o = max(nxt, key=lambda o: f[(v, o)])
            walk.append((v, o))
            v = (v + o) % s
            if v in seen:                               # a cycle: cancel it
                cyc = walk[seen[v]:]
                a = min(f[e] for e in cyc)
                for e in cyc:
                    f[e] -= a
                walk = walk[:seen[v]]
                seen = {u: q for u, q in seen.items() if q <= seen[v]}
                continue
            seen[v] = len(walk)
        if walk is None:
            break
        a = min([need[v]] + [f[e] for e in walk])
        for e in walk:
            f[e] -= a
        need[v] -= a
        paths.setdefault(v, []).append(tuple(o for _, o in walk))
    return {d: list(dict.fromkeys(p)) for d, p in paths.items()}


def _spread(s: int, Q: int) -> dict:
    """A fallback circulant: every offset k times and the r = Q mod (s - 1) extra circuits
    on evenly spaced offsets when s - 1 <= Q, else Q distinct offsets +-1, +-2, +-4, ...
    then evenly spaced ones."""
    n = s - 1
    if n <= Q:
        k, r = divmod(Q, n)
        x = {o: k for o in range(1, s)}
        for o in np.linspace(1, n, r, dtype=int) if r else ():
            x[int(o)] += 1
        return x
    offs: list = []
    k = 1
    while k < s and len(offs) < Q:
        for o in (k, s - k):
            if o not in offs and len(offs) < Q:
                offs.append(o)
        k *= 2
    for o in range(1, s):
        if len(offs) >= Q:
            break
        if o not in offs:
            offs.append(o)
    return {o: 1 for o in offs}


def _fewest_hops(s: int, x: dict) -> dict:
    """A fewest-circuit path of offsets from CU 0 to every CU (breadth-first)."""
    prev = {0: None}
    frontier = [0]
    while frontier:
        nxt = []
        for v in frontier:
            for o in sorted(x):
                w = (v + o) % s
                if w not in prev:
                    prev[w] = (v, o)
                    nxt.append(w)
        frontier = nxt
    out = {}
    for d in prev:
        if d:
            p, v = [], d
            while v:
                v, o = prev[v]
                p.append(o)
            out[d] = tuple(reversed(p))
    return out


def _unit_classes(s: int) -> list[int]:
    """One offset per orbit of the units of Z_s acting on Z_s minus 0: the divisors."""
    return [d for d in range(1, s) if s % d == 0]


def steer(T, Q: int, capacity: float = 1.0, *, time_limit: float = 60.0, seed: int = 0,
          tries: int = 20, exact_max: int = 8, milp_max: int = 72) -> Steering:
    """SiP-ML's steering for one job: circulant traffic over circulant circuit sets (exact
    for the restricted problem, see the module docstring); other traffic by
    :func:`steer_exact` up to ``exact_max`` CUs."""
    t0 = time.perf_counter()
    T, Q, capacity = _check(T, Q, capacity)
    s = T.shape[0]
    g = circulant_demand(T) if s >= 2 else None
    if g is None:
        if s < 2:
            return Steering(np.zeros((s, s), int), np.inf, np.inf, True, "trivial", 0.0,
                            offsets={}, paths={}, lam_routed=np.inf)
        if s > exact_max:
            raise ValueError(f"T is not circulant and has {s} CUs: the general ILP is "
                             f"limited to exact_max = {exact_max}")
        return steer_exact(T, Q, capacity, time_limit=time_limit)
    n = s - 1
    uniform = np.allclose(g[1:], g[1])
    x = lam = None
    bound = capacity * Q / _moore_sum(g[1:], Q, True)
    optimal, method, candidates = False, "", None
    if uniform and n <= Q:
        k, r = divmod(Q, n)
        if r == 0:
            x, lam, optimal, method = {o: k for o in range(1, s)}, k * capacity / g[1], True, \
                "dense, all offsets k times (= Moore bound)"
        elif r == 1:
            best = None
            for e in _unit_classes(s):
                cand = {o: k + (o == e) for o in range(1, s)}
                val, f = _circulant_lp(s, cand, g, capacity)
                if best is None or val > best[1] + _TOL:
                    best = (cand, val, f)
            x, lam, f = best
            optimal, method = True, "dense, one extra circuit: one LP per divisor of s"
            bound = max(lam, k * capacity / g[1])       # the certificate's bound
            candidates = _decompose(s, f, g, lam)
    elif uniform and n <= Q + Q * (Q + 1) // 2:
        rng = np.random.default_rng(seed)
        best = None
        for attempt in range(tries):
            D = _cover_search(s, Q, rng)
            if D is None:
                continue
            val, w = _two_hop_lp(s, D, capacity / g[1])
            if best is None or val > best[1]:
                best = ({o: 1 for o in D}, val, w, attempt)
            if val >= bound * (1 - 1e-9):
                break
        if best is not None:
            x, lam, w, attempt = best
            optimal = lam >= bound * (1 - 1e-9)
            method = (f"sparse, Q distinct offsets at the Moore bound (search attempt "
                      f"{attempt + 1})" if optimal else "sparse, best searched")
            Dset = set(x)
            candidates = {d: [(d,)] for d in Dset}
            for a in x:
                for b in x:
                    d = (a + b) % s
                    if a < b and d and d not in Dset:
                        candidates.setdefault(d, []).append((a, b))
    if not optimal and s <= milp_max:
        got = _circulant_milp(s, g, Q, capacity, time_limit)
        if got is not None:
            bound = min(bound, got[2])
            if lam is None or got[1] > lam + _TOL or got[3]:
                x, lam, optimal = got[0], got[1], got[3]
                method, candidates = "circulant MILP", None
    if x is None:                     # no certificate and too large for the MILP
        x = _spread(s, Q)
        lam, f = _circulant_lp(s, x, g, capacity)
        method, candidates = "spread offsets (not optimised)", _decompose(s, f, g, lam)
    optimal = optimal or lam >= bound * (1 - 1e-9)
    if candidates is None:
        lam2, f = _circulant_lp(s, x, g, capacity)
        candidates = _decompose(s, f, g, lam2)
    short = None
    for d in range(1, s):
        if g[d] > 0 and not candidates.get(d):      # numerically lost: a fewest-hop path
            short = short or _fewest_hops(s, x)
            candidates[d] = [short[d]]
    candidates = {d: candidates[d] for d in range(1, s) if g[d] > 0}
    pick, lam_routed = _assign_paths(s, x, g, capacity, candidates)
    return Steering(_offsets_matrix(s, x), float(lam), float(max(bound, lam)), bool(optimal),
                    method, time.perf_counter() - t0, offsets=dict(sorted(x.items())),
                    paths=pick, lam_routed=float(lam_routed))
