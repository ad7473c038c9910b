"""HBD-DCN orchestration (InfiniteHBD §4.3, Appendix D, Algorithms 2-5) and the cross-ToR
traffic it leaves (§6.4, Fig 13b-c).

Nodes are numbered 1..n in DCN order: ToR ``t`` holds nodes ``t p + 1 .. (t + 1) p``; an
Aggregation-Switch domain holds ``d`` consecutive nodes (``d / p`` ToRs). Functions take
and return 1-based node ids, as the paper writes them.

- :func:`orchestration_dcn_free` (Alg. 2): healthy subgraph, connected components (DFS), each
  sorted in HBD order, TP groups of ``m`` nodes popped in turn.
- :func:`deployment_strategy` (Alg. 3): the HBD line visits node ``i`` of every ToR (a
  *sub-line*), then node ``i + 1`` of every ToR, ...; edges join nodes at most K apart on it.
- :func:`placement_fat_tree` (Alg. 4): with ``n_constraints`` = c, the first
  ``max(0, c - n_maxsubline)`` Aggregation domains get the alignment constraint (a faulty node
  fails its whole ToR, so TP groups stay rank-aligned across sub-lines) and
  ``min(n_maxsubline, c)`` pieces of ``l`` nodes (one sub-line inside one Aggregation domain)
  are orchestrated on their own (no TP group crosses a domain); the rest of the line is
  orchestrated as one.
- :func:`orchestration_fat_tree` (Alg. 5): binary search for the most constraints that
  still leave enough TP groups for the job.

Where the printed algorithm is ambiguous we take the reading that type-checks:
``n_maxsubline`` is printed as floor(n d / p), more than the node count; we use the number of
``l``-node pieces, floor(n / l). Alg. 4's alignment loop runs over Aggregation domains
``i`` (nodes ``i d + 1 .. (i + 1) d``).

Cross-ToR traffic (:func:`cross_tor_ratio`): the job's other parallel dimensions (CP/DP/PP)
join the k-th node of one TP group with the k-th node of the TP groups it is grouped with;
TP groups are grouped ``p`` at a time, those with the same ToR signature (the ToR of each
of their nodes) together first. The ratio is the share of these node pairs that sit under
different ToRs. :func:`baseline_placement` is §6.4's greedy baseline: TP groups from
Algorithm 2 on the whole deployed line, taken in random order until the job fits.
Both placements are scored by the same rule.

Byte weighting (:func:`iteration_bytes`, :func:`dcn_byte_share`): the share above counts DCN
node pairs; §6.4's ratio may be over all of a job's traffic. One iteration's bytes per GPU by
parallel dimension follow ``models.railonly.traffic.megatron_traffic`` (ring collectives,
Megatron TP with sequence parallelism, PP activations, DP gradient AllReduce; checked
against it in the tests): TP rides the HBD, PP and DP the DCN, so a byte-weighted cross-ToR
ratio is the DCN pair share times the DCN byte share.
"""

from __future__ import annotations

import random
from collections import defaultdict

import networkx as nx

__all__ = ["orchestration_dcn_free", "deployment_strategy", "placement_fat_tree",
           "orchestration_fat_tree", "baseline_placement", "cross_tor_ratio", "tor_of",
           "iteration_bytes", "dcn_byte_share"]


def orchestration_dcn_free(S: list[int], E, F: set[int], m: int) -> list[list[int]]:
    """Algorithm 2 on an ordered node list ``S`` (HBD order), edge set ``E`` and faults F."""
    if m < 1:
        raise ValueError(f"m (nodes per TP group) must be >= 1, not {m}")
    order = {u: i for i, u in enumerate(S)}
    H = [u for u in S if u not in F]
    g = nx.Graph()
    g.add_nodes_from(H)
    g.add_edges_from((u, v) for u, v in E if u in g and v in g)
    visited: set = set()
    comps = []
    for s in H:
        if s not in visited:
            comp = list(nx.dfs_preorder_nodes(g, s))
            visited.update(comp)
            comps.append(sorted(comp, key=order.__getitem__))
    placement = []
    for comp in comps:
        while len(comp) >= m:
            placement.append(comp[:m])
            comp = comp[m:]
    return placement


def deployment_strategy(S: list[int], K: int, p: int) -> tuple[list[int], set]:
    """Algorithm 3: S_deploy (sub-line i = node i of every ToR, sub-lines end to end) and
    E_deploy = {(S_i, S_j): 0 < j - i <= K}."""
    if p < 1 or K < 1:
        raise ValueError(f"p and K must be >= 1, not p={p}, K={K}")
    l = len(S) // p
    deploy = [S[i + j * p] for i in range(p) for j in range(l)]
    edges = {(deploy[i], deploy[j]) for i in range(len(deploy))
             for j in range(i + 1, min(i + K, len(deploy) - 1) + 1)}
    return deploy, edges


def _edges_within(nodes, E) -> set:
    s = set(nodes)
    return {(u, v) for u, v in E if u in s and v in s}


def placement_fat_tree(deploy: list[int], E: set, n_constraints: int, F: set[int], l: int,
                       m: int, n_maxsubline: int, d: int, p: int) -> list[list[int]]:
    """Algorithm 4 (see the module docstring)."""
    F = set(F)
    n_align = max(0, n_constraints - n_maxsubline)
    n_subline = min(n_maxsubline, n_constraints)
    for i in range(n_align):
        for j in range(1, d + 1):
            sid = i * d + j
            if sid in F:
                base = (sid - 1) // p * p
                F |= set(range(base + 1, base + p + 1))
    rest = list(deploy)
    placement = []
    for _ in range(n_subline):
        piece, rest = rest[:l], rest[l:]
        placement += orchestration_dcn_free(piece, _edges_within(piece, E), F & set(piece), m)
    placement += orchestration_dcn_free(rest, _edges_within(rest, E), F & set(rest), m)
    return placement


def orchestration_fat_tree(n: int, r: int, p: int, F: set[int], t: int, s: int, d: int,
                           K: int) -> list[list[int]] | None:
    """Algorithm 5: ``n`` nodes of ``r`` GPUs, ``p`` per ToR, Aggregation domains of ``d``
    nodes, TP size ``t``, job of ``s`` GPUs. The placement with the most constraints that
    still holds ``s`` GPUs, or None."""
    for name, v in (("n", n), ("r", r), ("p", p), ("t", t), ("s", s), ("d", d), ("K", K)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an int >= 1, not {v!r}")
    if t % r:
        raise ValueError(f"TP size t = {t} must be a multiple of the GPUs per node r = {r}")
    if d % p or n % d:
        raise ValueError(f"the Aggregation domain size d = {d} must be a multiple of p = {p} "
                         f"and divide n = {n}")
    bad = [f for f in F if not 1 <= f <= n]
    if bad:
        raise ValueError(f"faulty node {bad[0]} is outside the cluster (nodes 1..{n})")
    m, l = t // r, d // p
    n_domain, n_maxsubline = n // d, n // l
    deploy, E = deployment_strategy(list(range(1, n + 1)), K, p)
    low, high = 0, n_domain + n_maxsubline
    best = None
    while low <= high:
        mid = (low + high) // 2
        placement = placement_fat_tree(deploy, E, mid, F, l, m, n_maxsubline, d, p)
        if len(placement) * m * r >= s:
            best = placement
            low = mid + 1
        else:
            high = mid - 1
    return best


def baseline_placement(n: int, r: int, p: int, F: set[int], t: int, s: int, K: int,
                       seed: int = 0) -> list[list[int]] | None:
    """§6.4's baseline: Algorithm 2 over the whole deployed line, TP groups chosen at random
    until the job has ``s`` GPUs."""
    m = t // r
    deploy, E = deployment_strategy(list(range(1, n + 1)), K, p)
    groups = orchestration_dcn_free(deploy, E, set(F), m)
    random.Random(seed).shuffle(groups)
    need = -(-s // (m * r))
    return groups[:need] if len(groups) >= need else None


def tor_of(node: int, p: int) -> int:
    return (node - 1) // p


def cross_tor_ratio(groups: list[list[int]], s: int, r: int, p: int) -> float:
    """Share of the job's rank-aligned DCN node pairs that cross ToRs (see the module
    docstring). The job takes whole aligned sets first: ``p`` TP groups with the same ToR
    signature form one CP group whose traffic stays under its ToRs; the groups left over are
    grouped ``p`` at a time in placement order."""
    if not groups:
        return 0.0
    m = len(groups[0])
    need = -(-s // (m * r))
    by_sig = defaultdict(list)
    for gr in groups:
        by_sig[tuple(tor_of(u, p) for u in gr)].append(gr)
    aligned, rest = [], []
    for gr in groups:                        # placement order, signature by signature
        sig = tuple(tor_of(u, p) for u in gr)
        members = by_sig.pop(sig, None)
        if members is None:
            continue
        whole = len(members) // p * p
        aligned += [members[i:i + p] for i in range(0, whole, p)]
        rest += members[whole:]
    job_sets, taken = [], 0
    for cp in aligned:
        if taken + p > need:
            break
        job_sets.append(cp)
        taken += p
    left = rest + [gr for cp in aligned[len(job_sets):] for gr in cp]
    extra = left[:need - taken]
    job_sets += [extra[i:i + p] for i in range(0, len(extra), p)]
    pairs = cross = 0
    for cp in job_sets:
        for a, b in zip(cp, cp[1:]):
            for u, v in zip(a, b):
                pairs += 1
                cross += tor_of(u, p) != tor_of(v, p)
    return cross / pairs if pairs else 0.0


def iteration_bytes(model, t: int, p: float, d: float, batch: int, micro: int = 1,
                    bytes_per: int = 2) -> dict:
    """Bytes one GPU sends in one iteration, by parallel dimension, for a GPT-like ``model``
    (``layers``, ``hidden``, ``seq``, ``block_params``) under TP ``t``, PP ``p``, DP ``d``
    (``p`` and ``d`` may be fractional: a job whose GPUs do not factor exactly), global batch
    ``batch`` sequences, ``micro`` sequences per micro-batch. The volumes of
    ``models.railonly.traffic.megatron_traffic``, per GPU: TP 8 (l / p) m (t - 1) / t
    2 micro h s (4 AllGathers + 4 ReduceScatters per layer and micro-batch); PP 2 m
    2 micro h s / t (forward to the next stage, backward to the previous, for an inner
    stage; on average over the p stages 2 (p - 1) / p of it); DP 2 (d - 1) / d 2 l S_T /
    (p t) (ring AllReduce of the stage's gradients); m = batch / (d micro) micro-batches.
    Averages over the job's GPUs."""
    for name, v in (("t", t), ("p", p), ("d", d), ("batch", batch), ("micro", micro)):
        if not v >= 1:
            raise ValueError(f"{name} must be >= 1, not {v!r}")
    h, s, l = model.hidden, model.seq, model.layers
    m = batch / (d * micro)
    D = bytes_per * micro * h * s
    return {"tp": 8 * (l / p) * m * D * (t - 1) / t,
            "pp": 2 * (p - 1) / p * m * D / t,
            "dp": 2 * (d - 1) / d * bytes_per * l * model.block_params / (p * t)}


def dcn_byte_share(model, gpus: int, t: int, p: int, batch: int, micro: int = 1) -> float:
    """PP + DP bytes over all bytes of one iteration of a job of ``gpus`` GPUs (TP in the
    HBD, the rest over the DCN); DP = gpus / (t p)."""
    b = iteration_bytes(model, t, p, gpus / (t * p), batch, micro)
    return (b["pp"] + b["dp"]) / sum(b.values())
