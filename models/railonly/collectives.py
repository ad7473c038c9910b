"""Collectives on an x x y GPU grid: x GPUs per HB domain (rows of the grid are HB domains,
columns are rails), y HB domains (Rail-only §III-B, §IV-B, eq 1-3; appendix eq 12-13).

Closed forms (bandwidths in bytes/s, sizes in bytes):

- :func:`ag_time` (eq 1, from :mod:`models.common.collectives`, where the iteration-time
  model reads it too): hierarchical AllGather of ``D`` bytes in total: each rail first
  gathers across the y HB domains over the NIC, then every HB domain gathers across its x GPUs.
- :func:`a2a_rail_optimized` (eq 2) and :func:`a2a_rail_only` (eq 3): uniform all-to-all of
  ``D`` bytes per GPU pair, direct (any-to-any network) or in two steps (an all-to-all within
  each rail, then one within each HB domain, forwarding).
- :func:`slowdown` = C_S / C_F: the paper's approximate forwarding overhead.

Schedules (:func:`allgather_schedule`, :func:`alltoall_schedule`) list every transfer of
these algorithms; :func:`run_schedule` executes one, checking each GPU ends with exactly the
data it must hold, that no NIC transfer leaves its rail, and counting the bytes per GPU port
and phase, which give the completion time independently of the closed forms.

:func:`ag_bound` evaluates the appendix's bandwidth-optimal AllGather time (eq 12 for a
Rail-optimized, eq 13 for a Rail-only network) by enumerating every partition of a small grid.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from aifabric.models.common.collectives import ag_time, check_positive, check_sizes

__all__ = ["ag_time", "a2a_rail_optimized", "a2a_rail_only", "slowdown",
           "Transfer", "Schedule", "allgather_schedule", "alltoall_schedule", "run_schedule",
           "ag_bound"]


def _grid(x, y) -> None:
    for name, v in (("x", x), ("y", y)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} (grid size) must be an int >= 1, not {v!r}")


def a2a_rail_optimized(D, x, y, C_F, C_S):
    """Eq 2: max((x-1) D / C_F, x (y-1) D / C_S)."""
    check_sizes(x, y)
    check_positive(C_F=C_F, C_S=C_S)
    return np.maximum((x - 1) * D / C_F, x * (y - 1) * D / C_S)


def a2a_rail_only(D, x, y, C_F, C_S):
    """Eq 3: y (x-1) D / C_F + x (y-1) D / C_S."""
    check_sizes(x, y)
    check_positive(C_F=C_F, C_S=C_S)
    return y * (x - 1) * D / C_F + x * (y - 1) * D / C_S


def slowdown(C_F, C_S) -> float:
    """The paper's approximate all-to-all slow-down of Rail-only forwarding, C_S / C_F."""
    check_positive(C_F=C_F, C_S=C_S)
    return C_S / C_F


@dataclass(frozen=True)
class Transfer:
    """``items`` (data item ids) sent from GPU ``src`` to ``dst`` over the ``link``
    ("hb" or "nic") in ``step`` of ``phase``; GPUs are (row, column) = (HB domain, rail)."""

    phase: int
    src: tuple[int, int]
    dst: tuple[int, int]
    link: str
    items: tuple
    step: int = 0


@dataclass
class Schedule:
    x: int
    y: int
    item_bytes: float
    initial: dict            # gpu -> set of items held at the start
    final: dict              # gpu -> set of items it must hold at the end
    transfers: list = field(default_factory=list)
    sequential: bool = True  # phases one after the other (else all at once)


def _gpus(x: int, y: int):
    return [(j, i) for j in range(y) for i in range(x)]


def allgather_schedule(x: int, y: int, D: float = 1.0) -> Schedule:
    """Eq 1's algorithm with ring AllGathers: shard (j, i) starts on GPU (j, i); phase 0 rings
    each rail over the NIC (y - 1 steps), phase 1 rings each HB domain (x - 1 steps)."""
    _grid(x, y)
    gpus = _gpus(x, y)
    s = Schedule(x, y, D / (x * y), {g: {g} for g in gpus}, {g: set(gpus) for g in gpus})
    held = {g: {g} for g in gpus}
    for phase, (ring_len, member) in enumerate(((y, lambda g, k: ((g[0] + k) % y, g[1])),
                                                (x, lambda g, k: (g[0], (g[1] + k) % x)))):
        link = "nic" if phase == 0 else "hb"
        # Ring step k: each GPU forwards what it received in step k-1 (its own data first).
        fresh = {g: set(held[g]) for g in gpus}
        for k in range(ring_len - 1):
            step = []
            for g in gpus:
                nxt = member(g, 1)
                step.append(Transfer(phase, g, nxt, link, tuple(sorted(fresh[g])), k))
            fresh = {g: set() for g in gpus}
            for t in step:
                fresh[t.dst] |= set(t.items)
                held[t.dst] |= set(t.items)
            s.transfers += step
    return s


def alltoall_schedule(x: int, y: int, D: float = 1.0, *, rail_only: bool = True) -> Schedule:
    """Uniform all-to-all, item (a, b) = the D bytes GPU a sends GPU b. ``rail_only``: eq 3's
    two steps (phase 0: within each rail, GPU (j, i) sends to (j', i) every item bound for HB
    domain j'; phase 1: within each HB domain, forward each item to its GPU); otherwise eq 2's
    direct sends (one phase; different-rail, different-domain pairs cross the spine)."""
    _grid(x, y)
    gpus = _gpus(x, y)
    items = {a: {(a, b) for b in gpus if b != a} for a in gpus}
    final = {b: {(a, b) for a in gpus if a != b} for b in gpus}
    s = Schedule(x, y, D, items, final, sequential=rail_only)
    if not rail_only:
        for a in gpus:
            for b in gpus:
                if a != b:
                    s.transfers.append(Transfer(0, a, b, "hb" if a[0] == b[0] else "nic",
                                                ((a, b),)))
        return s
    for a in gpus:
        for j in range(y):
            if j != a[0]:
                s.transfers.append(Transfer(0, a, (j, a[1]), "nic",
                                            tuple((a, (j, i)) for i in range(x))))
    for g in gpus:
        for i in range(x):
            if i != g[1]:
                s.transfers.append(Transfer(1, g, (g[0], i), "hb",
                                            tuple((gpus[k], (g[0], i)) for k in range(len(gpus))
                                                  if gpus[k] != (g[0], i)
                                                  and (gpus[k][1] == g[1]))))
    return s


def run_schedule(s: Schedule, C_F: float, C_S: float, *, rail_only: bool = True) -> dict:
    """Execute ``s``: a GPU may only send items it holds when the step starts; ``hb``
    transfers stay inside an HB domain; with ``rail_only`` every ``nic`` transfer stays in its
    rail. Returns bytes per (gpu, link) egress and ingress port and phase, the phase times
    (per step, the busiest port's bytes over its bandwidth, summed over the steps) and the
    total (sum of phases if sequential, else their max). Raises AssertionError on any
    violation."""
    held = {g: set(v) for g, v in s.initial.items()}
    phases = sorted({t.phase for t in s.transfers})
    bw = {"hb": C_F, "nic": C_S}
    out = {}
    times = []
    for ph in phases:
        egress: dict = {}
        ingress: dict = {}
        steps = sorted({t.step for t in s.transfers if t.phase == ph})
        phase_time = 0.0
        for st in steps:
            phase_time += _run_step(s, [t for t in s.transfers if t.phase == ph
                                        and t.step == st], held, egress, ingress, bw,
                                    rail_only)
        times.append(phase_time)
        out[ph] = {"egress": egress, "ingress": ingress}
    for g, need in s.final.items():
        assert need <= held[g], f"{g} ends without {sorted(need - held[g])[:3]}"
    return {"phases": out, "times": times,
            "total": sum(times) if s.sequential else max(times)}


def _run_step(s, transfers, held, egress, ingress, bw, rail_only) -> float:
    start = {g: frozenset(v) for g, v in held.items()}
    eg: dict = {}
    ing: dict = {}
    ph = transfers[0].phase
    for t in transfers:
        missing = set(t.items) - start[t.src]
        assert not missing, f"phase {ph}: {t.src} sends {sorted(missing)[:3]} it lacks"
        if t.link == "hb":
            assert t.src[0] == t.dst[0], f"HB transfer {t.src}->{t.dst} leaves its domain"
        else:
            assert t.src[0] != t.dst[0], f"NIC transfer {t.src}->{t.dst} inside a domain"
            if rail_only:
                assert t.src[1] == t.dst[1], f"NIC transfer {t.src}->{t.dst} leaves its " \
                                             f"rail"
        size = len(t.items) * s.item_bytes
        eg[(t.src, t.link)] = eg.get((t.src, t.link), 0) + size
        ing[(t.dst, t.link)] = ing.get((t.dst, t.link), 0) + size
        held[t.dst] |= set(t.items)
    for mine, total in ((eg, egress), (ing, ingress)):
        for k, v in mine.items():
            total[k] = total.get(k, 0) + v
    return max(v / bw[k[1]] for d in (eg, ing) for k, v in d.items())


def ag_bound(x: int, y: int, C_F: float, C_S: float, *, rail_only: bool = False) -> float:
    """Appendix eq 12 (Rail-optimized) or eq 13 (``rail_only``): the bandwidth-optimal
    AllGather time per unit of data on an x x y grid, maximised over every partition A of the
    GPUs (all 2^(xy) - 2 boolean matrices but all-ones and all-zeros). Grid rows are HB
    domains (``y`` of them, ``x`` GPUs each), as in the schedules above."""
    _grid(x, y)
    check_positive(C_F=C_F, C_S=C_S)
    n = x * y
    if n > 20:
        raise ValueError(f"ag_bound enumerates 2^(x*y) partitions; x*y = {n} is over 20")
    codes = np.arange(1, 2 ** n - 1, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(n)) & 1).astype(bool).reshape(-1, y, x)

    def denom(a):
        rows = a.all(axis=2).sum(axis=1)          # whole HB domains inside the partition
        d = (C_F + C_S) * a.sum(axis=(1, 2)) - x * rows * C_F
        if rail_only:
            d = d - y * a.all(axis=1).sum(axis=1) * C_S   # whole rails inside
        return d

    a, na = bits, ~bits
    num = np.maximum(a.sum(axis=(1, 2)), na.sum(axis=(1, 2)))
    den = np.minimum(denom(a), denom(na))
    return float(np.max(num / den))
