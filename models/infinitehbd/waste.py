"""GPU waste of HBD architectures under faults (InfiniteHBD §2.1, §6.2, Figs 9-12, 16-19).

A fault state is a boolean matrix of faulty GPUs [samples, nodes, R] (or of faulty nodes
[samples, nodes]: the whole node). Each architecture turns it into the GPUs that TP groups of
``tp`` GPUs can use; the *waste ratio* is healthy-but-unusable GPUs over all GPUs (faulty
GPUs are not waste: §2.1's fragmentation formula, Fig 13d counts them apart). Rules, one per
architecture, as §2.2 and §6.1-6.2 describe them:

- ``big-switch``: the ideal HBD, every healthy GPU in one pool (GPU-level faults):
  floor(healthy / tp) tp.
- ``infinitehbd-k2`` / ``-k3``: a node with a faulty GPU is out (node-level explosion
  radius); TP rings over consecutive healthy nodes of the K-hop ring, bypassing runs of fewer
  than K faulty nodes (:func:`models.infinitehbd.topology.usable_rings`, Algorithm 2).
- ``nvl-36``, ``nvl-72``: NVLink-switch HBDs of 36 / 72 GPUs (9 / 18 nodes of 4) with 1/9
  of the GPUs kept as backups (the paper: "1/9 of GPUs are reserved for redundant backups"):
  per HBD, floor(min(healthy, 8/9 S) / tp) tp. ``nvl-576``: 576 GPUs, no backups
  (its waste is fragmentation only, "benefiting from its larger size").
- ``tpuv4``: 4^3 = 64-GPU cubes (16 nodes of 4). A TP group of up to 64 stays inside one
  cube's torus and pools the cube's healthy GPUs (per cube floor(healthy / tp) tp: a fault
  removes its node and fragments the cube; §6.2's "performs well at low fault ratios and
  small TP sizes"); a larger group joins whole cubes through the OCS, and only fault-free
  cubes can join (cube-level explosion radius): floor(64 healthy cubes / tp) tp.
- ``tpuv4-cube``: the other reading of TPUv4 (Table 1 and §2.2: "a failure in any single
  TPU affects the entire 64-TPU cube"): the cube-level explosion radius at every TP size,
  a cube with a fault serves no TP group: floor(64 fault-free cubes / tp) tp for tp > 64
  and floor(64 / tp) groups per fault-free cube otherwise.
- ``sip-ring``: static rings of exactly tp GPUs; a ring with a fault is lost.

:func:`usable` is vectorised (the K-hop ring's components are memoised per fault state, so
every TP size reuses them); :func:`usable_reference` is the plain per-GPU Python rule set it
is checked and benchmarked against.
"""

from __future__ import annotations

import numpy as np

from .topology import ring_segments

__all__ = ["ARCHS", "usable", "waste", "usable_reference", "check_tp"]

ARCHS = ("big-switch", "infinitehbd-k2", "infinitehbd-k3", "nvl-36", "nvl-72", "nvl-576",
         "tpuv4", "tpuv4-cube", "sip-ring")
NVL = {"nvl-36": (36, 4), "nvl-72": (72, 8), "nvl-576": (576, 0)}   # size, backup GPUs
CUBE = 64


def check_tp(tp: int, R: int, nodes: int) -> None:
    if isinstance(tp, bool) or not isinstance(tp, (int, np.integer)) or tp < 1:
        raise ValueError(f"TP size must be an int >= 1, not {tp!r}")
    if tp % R:
        raise ValueError(f"TP size {tp} must be a multiple of the node size R = {R}")
    if tp > nodes * R:
        raise ValueError(f"TP size {tp} exceeds the cluster's {nodes * R} GPUs")


def _state(state: np.ndarray, R: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    """(healthy nodes [T, N], healthy GPUs per sample [T], R) of a GPU-level [T, N, R] or
    node-level [T, N] (or [N]) fault state."""
    s = np.asarray(state, dtype=bool)
    if s.ndim == 1:
        s = s[None]
    if s.ndim == 2:
        if R is None:
            raise ValueError("a node-level fault state needs R (GPUs per node)")
        ok = ~s
        return ok, ok.sum(axis=1) * R, R
    if s.ndim != 3:
        raise ValueError(f"fault state must be [samples, nodes(, R)], not shape {s.shape}")
    if R is not None and s.shape[2] != R:
        raise ValueError(f"fault state has {s.shape[2]} GPUs per node, not R = {R}")
    return ~s.any(axis=2), s.shape[1] * s.shape[2] - s.sum(axis=(1, 2)), s.shape[2]


def _per_group(healthy_nodes: np.ndarray, group_nodes: int) -> np.ndarray:
    T, N = healthy_nodes.shape
    full = N // group_nodes
    return healthy_nodes[:, :full * group_nodes].reshape(T, full, group_nodes)


def usable(arch: str, state, tp: int, R: int | None = None) -> np.ndarray:
    """GPUs usable by TP groups of ``tp`` in each sample of ``state``."""
    if arch not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r}; architectures are {', '.join(ARCHS)}")
    ok, healthy, R = _state(state, R)
    check_tp(tp, R, ok.shape[1])
    if arch == "big-switch":
        return healthy // tp * tp
    return _usable_nodes(arch, ok, tp, R)


_SEGMENTS: dict = {}


def _segments(bad: np.ndarray, K: int) -> list[int]:
    """ring_segments of one faulty-node row, memoised: a trace revisits the same states and
    every TP size reuses them."""
    key = (np.packbits(bad).tobytes(), len(bad), K)
    got = _SEGMENTS.get(key)
    if got is None:
        if len(_SEGMENTS) > 200_000:
            _SEGMENTS.clear()
        got = _SEGMENTS[key] = ring_segments(bad, K)
    return got


def _usable_nodes(arch: str, ok: np.ndarray, tp: int, R: int) -> np.ndarray:
    T, N = ok.shape
    if arch.startswith("infinitehbd"):
        K, m = int(arch[-1]), tp // R
        # a trace holds its state for hours: evaluate only the samples where it changes
        changed = np.ones(T, dtype=bool)
        changed[1:] = (ok[1:] != ok[:-1]).any(axis=1)
        rows = np.flatnonzero(changed)
        vals = np.array([sum(x // m for x in _segments(~ok[i], K)) * tp for i in rows],
                        dtype=np.int64)
        return vals[np.cumsum(changed) - 1]
    if arch in NVL:
        size, backup = NVL[arch]
        h = _per_group(ok, size // R).sum(axis=2) * R
        return (np.minimum(h, size - backup) // tp * tp).sum(axis=1)
    if arch.startswith("tpuv4"):
        cubes = _per_group(ok, CUBE // R)
        if tp <= CUBE and arch == "tpuv4":
            return (cubes.sum(axis=2) * R // tp * tp).sum(axis=1)
        whole = cubes.all(axis=2).sum(axis=1)
        return whole * (CUBE // tp * tp) if tp <= CUBE else whole * CUBE // tp * tp
    if arch == "sip-ring":
        return _per_group(ok, tp // R).all(axis=2).sum(axis=1) * tp
    raise AssertionError(arch)


def waste(arch: str, state, tp: int, R: int | None = None) -> np.ndarray:
    """Healthy-but-unusable GPUs over all GPUs, per sample."""
    ok, healthy, R = _state(state, R)
    return (healthy - usable(arch, state, tp, R)) / (ok.shape[1] * R)


def usable_reference(arch: str, faulty_gpus: set, nodes: int, R: int, tp: int) -> int:
    """One fault state, GPU by GPU in plain Python: the rules above without numpy (the
    benchmark's baseline and the vectorised code's cross-check)."""
    check_tp(tp, R, nodes)
    bad_node = [any((n, i) in faulty_gpus for i in range(R)) for n in range(nodes)]
    if arch == "big-switch":
        healthy = nodes * R - len(faulty_gpus)
        return healthy // tp * tp
    if arch.startswith("infinitehbd"):
        K, m = int(arch[-1]), tp // R
        # walk the ring from a healthy node; a run of >= K faulty nodes cuts the line
        if all(bad_node):
            return 0
        start = bad_node.index(False)
        seq = [bad_node[(start + i) % nodes] for i in range(nodes)]
        segs, cur, run = [], 0, 0
        for b in seq:
            if b:
                run += 1
                continue
            if run >= K:
                segs.append(cur)
                cur = 0
            run = 0
            cur += 1
        if run >= K and segs:          # the wrap-around gap is a break too
            segs.append(cur)
        elif segs:
            segs[0] += cur
        else:
            segs.append(cur)
        return sum(s // m for s in segs) * tp
    if arch in NVL:
        size, backup = NVL[arch]
        per = size // R
        total = 0
        for h0 in range(0, nodes - per + 1, per):
            h = sum(R for n in range(h0, h0 + per) if not bad_node[n])
            total += min(h, size - backup) // tp * tp
        return total
    if arch in ("tpuv4", "tpuv4-cube"):
        per = CUBE // R
        cubes = [[not bad_node[n] for n in range(c, c + per)]
                 for c in range(0, nodes - per + 1, per)]
        if tp <= CUBE and arch == "tpuv4":
            return sum(sum(c) * R // tp * tp for c in cubes)
        whole = sum(all(c) for c in cubes)
        return whole * (CUBE // tp * tp) if tp <= CUBE else whole * CUBE // tp * tp
    if arch == "sip-ring":
        per = tp // R
        return sum(tp for r in range(0, nodes - per + 1, per)
                   if not any(bad_node[r:r + per]))
    raise ValueError(f"unknown architecture {arch!r}; architectures are {', '.join(ARCHS)}")
