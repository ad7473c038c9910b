"""Availability with faulted nodes (RailX §6.6, Appendix A.5, Algorithm 2, Fig 17, Fig 20).

A job on RailX uses a set of node rows and a set of node columns (the OCSes can join any
rows and any columns); with faulted nodes, every fault must lie in a disabled row or a
disabled column, and the largest single job is max over such choices of
(n - disabled rows) x (n - disabled columns).

- :func:`max_single_allocation`: Algorithm 2 as written (isolated faults are balanced between
  rows and columns; every row/column choice of the non-isolated ones is tried, 2^|C|).
- :func:`max_single_allocation_exact`: the same optimum by enumerating the disabled subsets of
  the faulted rows (independent of Algorithm 2; exponential in the faulted rows, for tests).
- :func:`max_single_allocation_fast`: the same optimum for large fault counts: the faults
  split into connected components (faults sharing a row or a column); each component's
  Pareto front (disabled rows, fewest disabled columns) is enumerated when small and solved
  as integer programs (HiGHS) when large, and a knapsack over components gives, for every
  total of disabled rows, the fewest disabled columns.
- :func:`pack_jobs`: multi-job placement for MLaaS (Fig 20): jobs of h x w nodes on disjoint
  row x column sets of healthy nodes (greedy candidates, bounded depth-first choice among
  them); reports the utilisation of healthy nodes.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["max_single_allocation", "max_single_allocation_exact", "max_single_allocation_fast",
           "random_faults", "fig17a", "fig17b", "Job", "Placement", "pack_jobs"]


def _check(n, faults) -> list[tuple[int, int]]:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n (grid side) must be an int >= 1, not {n!r}")
    out = []
    for f in faults:
        try:
            r, c = f
        except (TypeError, ValueError):
            raise ValueError(f"faults must be (row, column) pairs, not {f!r}") from None
        for v in (r, c):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 0 <= v < n:
                raise ValueError(f"fault {f!r} is outside the {n} x {n} grid "
                                 f"(rows and columns 0..{n - 1})")
        out.append((int(r), int(c)))
    if len(set(out)) != len(out):
        dup = next(f for f in out if out.count(f) > 1)
        raise ValueError(f"fault {dup} is listed twice")
    return out


def _best_split(n: int, rows: int, cols: int, free: int) -> int:
    """max over r' + c' = free of (n - rows - r')(n - cols - c')."""
    best = 0
    for extra in range(free + 1):
        best = max(best, max(0, n - rows - extra) * max(0, n - cols - (free - extra)))
    return best


def max_single_allocation(n: int, faults) -> int:
    """Algorithm 2: largest single allocation on an n x n grid with ``faults``."""
    faults = _check(n, faults)
    row_count, col_count = {}, {}
    for r, c in faults:
        row_count[r] = row_count.get(r, 0) + 1
        col_count[c] = col_count.get(c, 0) + 1
    isolated = [f for f in faults if row_count[f[0]] == 1 and col_count[f[1]] == 1]
    others = [f for f in faults if f not in isolated]
    if not others:
        k = len(faults)
        return max(0, n - math.ceil(k / 2)) * max(0, n - k // 2)
    best = 0
    for choice in itertools.product((0, 1), repeat=len(others)):
        rows = {f[0] for f, ch in zip(others, choice) if ch == 0}
        cols = {f[1] for f, ch in zip(others, choice) if ch == 1}
        best = max(best, _best_split(n, len(rows), len(cols), len(isolated)))
    return best


def max_single_allocation_exact(n: int, faults) -> int:
    """Brute force: every subset of the faulted rows as disabled rows; the columns of the
    faults left uncovered are disabled."""
    faults = _check(n, faults)
    fault_rows = sorted({r for r, _ in faults})
    best = n * n if not faults else 0
    for k in range(len(fault_rows) + 1):
        for rows in itertools.combinations(fault_rows, k):
            chosen = set(rows)
            cols = {c for r, c in faults if r not in chosen}
            best = max(best, (n - len(chosen)) * (n - len(cols)))
    return best


def _components(faults):
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r, c in faults:
        parent[find(("r", r))] = find(("c", c))
    groups: dict = {}
    for f in faults:
        groups.setdefault(find(("r", f[0])), []).append(f)
    return list(groups.values())


def max_single_allocation_fast(n: int, faults) -> int:
    """Exact optimum for many faults: for every number r of disabled rows, the fewest
    disabled columns that cover the faults left is an integer program (a vertex cover of
    the bipartite fault graph with r row vertices), solved with HiGHS (scipy.optimize.milp);
    the answer is max over r of (n - r)(n - c_min(r)). Connected components of the fault
    graph are solved separately and combined by a knapsack over their Pareto fronts."""
    faults = _check(n, faults)
    INF = 1 << 30
    total = [0]          # total[r] = fewest disabled columns with r disabled rows so far
    for comp in _components(faults):
        front = _front(comp)
        nxt = [INF] * (len(total) + max(front) + 1)
        for r0, c0 in enumerate(total):
            if c0 >= INF:
                continue
            for r1, c1 in front.items():
                nxt[r0 + r1] = min(nxt[r0 + r1], c0 + c1)
        total = nxt
    return max((n - r) * (n - c) for r, c in enumerate(total) if c < INF and r <= n and c <= n)


def _front(comp) -> dict:
    """{r: fewest disabled columns covering ``comp`` with exactly r of its rows disabled}."""
    rows = sorted({r for r, _ in comp})
    cols = sorted({c for _, c in comp})
    if len(rows) <= 12 or len(cols) <= 12:
        return _front_enumerated(comp, rows, cols)
    from scipy.optimize import Bounds, LinearConstraint, milp
    ri = {r: i for i, r in enumerate(rows)}
    ci = {c: len(rows) + i for i, c in enumerate(cols)}
    nv = len(rows) + len(cols)
    cover = np.zeros((len(comp), nv))
    for k, (r, c) in enumerate(comp):
        cover[k, ri[r]] = cover[k, ci[c]] = 1
    budget = np.zeros((1, nv))
    budget[0, :len(rows)] = 1
    cost = np.zeros(nv)
    cost[len(rows):] = 1
    front = {}
    for r in range(len(rows) + 1):
        res = milp(cost, integrality=np.ones(nv), bounds=Bounds(0, 1),
                   constraints=[LinearConstraint(cover, lb=1), LinearConstraint(budget, r, r)])
        front[r] = int(round(res.fun))
    return front


def _front_enumerated(comp, rows, cols) -> dict:
    if len(rows) <= len(cols):
        out: dict = {}
        for k in range(len(rows) + 1):
            for chosen in itertools.combinations(rows, k):
                s = set(chosen)
                out[k] = min(out.get(k, 1 << 30), len({c for r, c in comp if r not in s}))
        return out
    out = {}
    for k in range(len(cols) + 1):     # enumerate the column side, then invert
        for chosen in itertools.combinations(cols, k):
            s = set(chosen)
            nr = len({r for r, c in comp if c not in s})
            out[nr] = min(out.get(nr, 1 << 30), k)
    return out


def random_faults(n: int, count: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """``count`` distinct faulted nodes drawn uniformly on an n x n grid."""
    if count > n * n:
        raise ValueError(f"{count} faults do not fit an {n} x {n} grid")
    cells = rng.choice(n * n, size=count, replace=False)
    return [(int(x) // n, int(x) % n) for x in cells]


def fig17a(n: int, max_faults: int, samples: int, rng: np.random.Generator) -> dict:
    """Fig 17(a): mean (over ``samples`` random fault sets) and worst-case largest single job
    vs number of faults. The worst case puts every fault in its own row and column:
    (n - ceil(f/2))(n - floor(f/2))."""
    faults = list(range(max_faults + 1))
    mean = []
    for f in faults:
        vals = [max_single_allocation_fast(n, random_faults(n, f, rng)) for _ in range(samples)]
        mean.append(float(np.mean(vals)))
    worst = [max(0, n - math.ceil(f / 2)) * max(0, n - f // 2) for f in faults]
    return {"n": n, "faults": faults, "mean": mean, "worst": worst, "samples": samples}


def fig17b(sides, rates, samples: int, rng: np.random.Generator) -> dict:
    """Fig 17(b): availability (largest single job / all nodes, mean over ``samples``) vs the
    node failure rate, each node failing independently."""
    out = {"rates": list(rates), "sides": list(sides), "availability": {}}
    for n in sides:
        row = []
        for p in rates:
            vals = []
            for _ in range(samples):
                mask = rng.random((n, n)) < p
                faults = [(int(r), int(c)) for r, c in zip(*np.nonzero(mask))]
                vals.append(max_single_allocation_fast(n, faults) / (n * n))
            row.append(float(np.mean(vals)))
        out["availability"][n] = row
    return out


@dataclass(frozen=True)
class Job:
    name: str
    rows: int
    cols: int


@dataclass(frozen=True)
class Placement:
    job: Job
    rows: tuple[int, ...]
    cols: tuple[int, ...]


def pack_jobs(n: int, faults, jobs, candidates: int = 4, budget: int = 20_000
              ) -> tuple[list[Placement], list[Job], float]:
    """Place ``jobs`` on disjoint row x column sets of healthy nodes, maximising the placed
    nodes: jobs largest first, up to ``candidates`` greedy placements per job (see
    :func:`_candidates`), depth-first over those choices within ``budget`` search nodes.
    Returns (placements, jobs that did not fit, utilisation of the healthy nodes)."""
    faults = _check(n, faults)
    free = np.ones((n, n), dtype=bool)
    for r, c in faults:
        free[r, c] = False
    healthy = int(free.sum())
    order = sorted(jobs, key=lambda j: -j.rows * j.cols)
    for job in order:
        if job.rows < 1 or job.cols < 1 or job.rows > n or job.cols > n:
            raise ValueError(f"job {job.name!r}: {job.rows} x {job.cols} does not fit an "
                             f"{n} x {n} grid")
    best = {"area": -1, "placed": []}
    nodes = [0]

    def dfs(i, placed, area):
        nodes[0] += 1
        if area > best["area"]:
            best["area"], best["placed"] = area, list(placed)
        if i == len(order) or nodes[0] > budget:
            return
        job = order[i]
        for rows, cols in _candidates(free, job, candidates):
            free[np.ix_(rows, cols)] = False
            placed.append(Placement(job, tuple(rows), tuple(cols)))
            dfs(i + 1, placed, area + job.rows * job.cols)
            placed.pop()
            free[np.ix_(rows, cols)] = True
        dfs(i + 1, placed, area)            # leave this job out

    dfs(0, [], 0)
    placed = best["placed"]
    got = {id(p.job) for p in placed}
    failed = [j for j in order if id(j) not in got]
    return placed, failed, best["area"] / healthy if healthy else 0.0


def _candidates(free: np.ndarray, job: Job, limit: int):
    """Up to ``limit`` placements of ``job``: from every first column, add the columns that
    keep the most rows free (ties: fewer free nodes elsewhere), take the rows with the fewest
    free nodes elsewhere; ranked by how many free nodes their rows and columns hold (fewest
    first: they leave the largest untouched area)."""
    col_free = free.sum(axis=0)
    row_free = free.sum(axis=1)
    found = {}
    for first in range(free.shape[1]):
        rows_ok = free[:, first].copy()
        if rows_ok.sum() < job.rows:
            continue
        cols = [first]
        while len(cols) < job.cols:
            keep = (free & rows_ok[:, None]).sum(axis=0)
            keep[cols] = -1
            cand = [c for c in range(free.shape[1]) if keep[c] >= job.rows]
            if not cand:
                break
            c = max(cand, key=lambda c: (keep[c], -col_free[c], -c))
            rows_ok &= free[:, c]
            cols.append(c)
        if len(cols) < job.cols:
            continue
        rows = sorted(np.nonzero(rows_ok)[0], key=lambda r: (row_free[r], r))[:job.rows]
        key = (tuple(sorted(int(r) for r in rows)), tuple(sorted(cols)))
        found[key] = int(col_free[cols].sum() + row_free[rows].sum())
    ranked = sorted(found, key=lambda k: (found[k], k))
    return [(list(r), list(c)) for r, c in ranked[:limit]]
