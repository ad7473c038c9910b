"""Job mappings and traffic matrices for wavelength allocation (Flex-SiPAC §3.C, eq 2).

Jobs are mapped sequentially onto contiguous blocks of CUs (CU ids in base-r digit order).
Each job's collective gives its sub-matrix of relative traffic between its CUs; traffic
between different jobs is filtered out. Collectives:

- ``ring``: each CU to the next CU of its job (cyclically), one unit.
- ``hierarchical-ring``: a ring inside each level-0 group of the job, and a ring across
  the groups between CUs with the same level-0 digit.
- ``mesh``: every CU to every other CU of its job, one unit each.
- ``sipco``: the bytes Flex-SiPCO's schedule sends between each pair of the job (a unit
  message; :mod:`.sipco`) -- only *direct* neighbours, so t_ij = 0 wherever no direct link
  exists. Jobs that are not sub-grids fall back to one unit per direct neighbour in the job.

:func:`skewness` is eq 2: sigma = 1 - min |u_i| / max |u_i|.
"""

from __future__ import annotations

import numpy as np

from .topology import SiPAC

__all__ = ["job_blocks", "skewness", "traffic_matrix", "COLLECTIVES", "check_traffic"]

COLLECTIVES = ("ring", "hierarchical-ring", "mesh", "sipco")


def job_blocks(topo: SiPAC, sizes) -> list[list[int]]:
    """CUs of each job, mapped sequentially onto contiguous blocks."""
    sizes = list(sizes)
    if not sizes:
        raise ValueError("a job mapping needs at least one job")
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise ValueError(f"job sizes must be ints >= 1, not {s!r}")
    if sum(sizes) > topo.N:
        raise ValueError(f"jobs of {sum(sizes)} CUs do not fit the {topo.N} CUs of {topo}")
    out, start = [], 0
    for s in sizes:
        out.append(list(range(start, start + int(s))))
        start += int(s)
    return out


def skewness(sizes) -> float:
    """Eq 2."""
    sizes = [int(s) for s in sizes]
    return 1 - min(sizes) / max(sizes)


def traffic_matrix(topo: SiPAC, sizes, collective: str = "sipco") -> np.ndarray:
    """N x N relative traffic of the mapping (row = sender)."""
    if collective not in COLLECTIVES:
        raise ValueError(f"collective must be one of {', '.join(COLLECTIVES)}, not "
                         f"{collective!r}")
    T = np.zeros((topo.N, topo.N))
    for job in job_blocks(topo, sizes):
        members = set(job)
        if len(job) == 1:
            continue
        if collective == "ring":
            for a, b in zip(job, job[1:] + job[:1]):
                T[a, b] += 1
        elif collective == "mesh":
            for a in job:
                for b in job:
                    if a != b:
                        T[a, b] += 1
        elif collective == "sipco":
            from .sipco import sipco_schedule
            try:
                for t in sipco_schedule(topo, job, 1.0):
                    T[t.src, t.dst] += t.size
            except ValueError:                       # not a sub-grid: neighbours, one unit
                for a in job:
                    for l in range(topo.L):
                        for b in topo.neighbours(a, l):
                            if b in members:
                                T[a, b] += 1
        else:   # hierarchical ring
            groups: dict = {}
            for a in job:
                groups.setdefault(a // topo.r, []).append(a)
            for g in groups.values():
                if len(g) > 1:
                    for a, b in zip(g, g[1:] + g[:1]):
                        T[a, b] += 1
            by_digit: dict = {}
            for a in job:
                by_digit.setdefault(a % topo.r, []).append(a)
            for g in by_digit.values():
                if len(g) > 1:
                    for a, b in zip(g, g[1:] + g[:1]):
                        T[a, b] += 1
    np.fill_diagonal(T, 0.0)
    return T


def check_traffic(T) -> np.ndarray:
    T = np.asarray(T, dtype=float)
    if T.ndim != 2 or T.shape[0] != T.shape[1]:
        raise ValueError(f"traffic matrix must be square, not shape {T.shape}")
    if not np.all(np.isfinite(T)) or (T < 0).any():
        bad = np.argwhere(~np.isfinite(T) | (T < 0))[0]
        raise ValueError(f"traffic matrix entry ({bad[0]}, {bad[1]}) = {T[tuple(bad)]!r}: "
                         f"entries must be finite and >= 0")
    if np.any(np.diag(T) != 0):
        i = int(np.flatnonzero(np.diag(T))[0])
        raise ValueError(f"traffic matrix diagonal ({i}, {i}) = {T[i, i]!r}: a CU sends "
                         f"nothing to itself")
    return T
