"""Flex-SiPCO all-reduce (Flex-SiPAC §4, Algorithm 1) as a schedule generator, executed on
numbers, and the mesh all-reduce it is compared with.

A job is a sub-grid of SiPAC(r, L) (contiguous blocks of a multiple of r CUs mapped
sequentially are: e.g. 8 CUs of r = 4 are 4 x 2); its used levels ``U`` are those where it
spans more than one digit value (``l_hat = |U|``, Algorithm 1 line 3: the highest level whose
WSSs connect the job, plus one). The message is split into sum_g d_g evenly sized chunks,
``d_g`` of them in group ``g`` (``d_g`` = the job's extent at level ``U[g]``: r l_hat chunks
of n / (r l_hat) for a job of whole levels, as in the paper; equal chunks keep every direct
link equally loaded in every step when a level is partial). Steps, on every link ``a`` (level ``U[a]``) in parallel:

- step 0: group ``a``'s chunk ``c`` goes to the level-``U[a]`` neighbour at position ``c``,
  which reduces it (line 11: send C_l^c on link l);
- steps ``v = 1 .. l_hat - 1``: group ``g = (v + a) mod l_hat`` on link ``a``: each CU
  broadcasts its partially reduced chunk of group g to its level-``U[a]`` neighbours, which
  add it to theirs (lines 16-18) -- after step v a chunk is reduced over v + 1 levels;
- step ``l_hat``: group ``a``, now fully reduced at the CU owning each chunk, is multicast on
  link ``a`` (the last step), so every CU holds every chunk: l_hat + 1 steps in all.

Per step a CU's port carries at most (r - 1) n / (r l_hat) bytes, within the paper's
(l_hat + 1)(alpha + (r - 1) 2n / (r l_hat) beta) bound. The transit chunks of Algorithm 1
(lines 12, 19: chunks meant for CUs outside the job on a shared WSS) do not arise here:
chunks are split by the job's own extent per level, so every chunk's owner is in the job.
Jobs that are not sub-grids are refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .topology import SiPAC

__all__ = ["Transfer", "job_grid", "sipco_schedule", "mesh_schedule", "execute",
           "link_bytes"]


@dataclass(frozen=True)
class Transfer:
    """``src`` sends ``chunk`` = (group, index) to ``dst`` on the level-``level`` WSS in
    ``step``; ``op`` is "reduce" (the receiver adds it to its copy) or "copy"."""

    step: int
    src: int
    dst: int
    level: int | None
    chunk: tuple[int, int]
    op: str
    size: float


def job_grid(topo: SiPAC, job) -> tuple[list[int], dict]:
    """(used levels, {level: sorted digit values}) of a job; ValueError unless it is a
    sub-grid (the product of one digit set per level)."""
    job = sorted(set(int(x) for x in job))
    if not job or job[0] < 0 or job[-1] >= topo.N:
        raise ValueError(f"job CUs must lie in 0..{topo.N - 1}")
    values = {l: sorted({topo.digits(x)[l] for x in job}) for l in range(topo.L)}
    size = int(np.prod([len(v) for v in values.values()]))
    if size != len(job):
        raise ValueError(f"job of {len(job)} CUs starting at CU {job[0]} is not a sub-grid of "
                         f"{topo} (sizes that are multiples of r, mapped in order, tile it)")
    used = [l for l in range(topo.L) if len(values[l]) > 1]
    return used, values


def sipco_schedule(topo: SiPAC, job, n: float) -> list[Transfer]:
    """The steps of Flex-SiPCO on one job for an ``n``-byte message (see the module
    docstring)."""
    used, values = job_grid(topo, job)
    job = sorted(job)
    if not used:
        return []
    lh = len(used)
    pos = {l: {v: i for i, v in enumerate(values[l])} for l in used}
    chunk = n / sum(len(values[l]) for l in used)          # every chunk the same size
    size = {g: chunk for g in range(lh)}
    out = []

    def peers(x, l):
        return [topo.with_digit(x, l, v) for v in values[l] if v != topo.digits(x)[l]]

    for a, l in enumerate(used):                            # step 0: reduce-scatter hop
        for x in job:
            for y in peers(x, l):
                out.append(Transfer(0, x, y, l, (a, pos[l][topo.digits(y)[l]]), "reduce",
                                    size[a]))
    for v in range(1, lh + 1):
        for a, l in enumerate(used):
            g = (v + a) % lh
            op = "copy" if v == lh else "reduce"
            for x in job:
                c = pos[used[g]][topo.digits(x)[used[g]]]      # the chunk x owns in group g
                for y in peers(x, l):
                    out.append(Transfer(v, x, y, l, (g, c), op, size[g]))
    return out


def mesh_schedule(topo: SiPAC, job, n: float) -> list[Transfer]:
    """Mesh all-reduce: step 0 every CU sends chunk j (n / s bytes) to the job's j-th CU, which
    reduces; step 1 each CU sends its reduced chunk to every other CU. ``level`` is the direct
    level or None (the pair needs relaying)."""
    job = sorted(int(x) for x in job)
    s = len(job)
    out = []
    for step, op in ((0, "reduce"), (1, "copy")):
        for i, x in enumerate(job):
            for j, y in enumerate(job):
                if x != y:
                    c = j if step == 0 else i
                    out.append(Transfer(step, x, y, topo.level(x, y), (0, c), op, n / s))
    return out


def _chunks(counts: dict, data: np.ndarray, groups: int) -> dict:
    """Cut ``data`` into sum(counts) near-equal chunks, ``counts[g]`` for group g in turn."""
    keys = [(g, c) for g in range(groups) for c in range(counts[g])]
    return {k: part.copy() for k, part in zip(keys, np.array_split(data, len(keys)))}


def execute(topo: SiPAC, job, schedule: list[Transfer], data: dict) -> dict:
    """Run a schedule on ``data`` ({cu: 1-D array}); a step's sends use the values held when
    it starts. Returns each CU's final array (chunks reassembled)."""
    job = sorted(job)
    groups = max((t.chunk[0] for t in schedule), default=0) + 1
    counts: dict = {}
    for t in schedule:
        counts[t.chunk[0]] = max(counts.get(t.chunk[0], 0), t.chunk[1] + 1)
    state = {x: _chunks(counts, np.array(data[x], dtype=float), groups) for x in job}   # a copy
    for step in sorted({t.step for t in schedule}):
        snap = {x: {k: v.copy() for k, v in st.items()} for x, st in state.items()}
        for t in (t for t in schedule if t.step == step):
            if t.op == "reduce":
                state[t.dst][t.chunk] += snap[t.src][t.chunk]
            else:
                state[t.dst][t.chunk] = snap[t.src][t.chunk].copy()
    return {x: np.concatenate([st[k] for k in sorted(st)]) if st else np.array([])
            for x, st in state.items()}


def link_bytes(schedule: list[Transfer]) -> dict:
    """{(step, src, level): bytes sent} -- a CU port's load per step."""
    out: dict = {}
    for t in schedule:
        key = (t.step, t.src, t.level)
        out[key] = out.get(key, 0.0) + t.size
    return out
