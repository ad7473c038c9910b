"""InfiniteHBD topology: nodes of R GPUs joined by OCS transceivers into a reconfigurable
K-hop ring (or line) of nodes, and the GPU rings of TP groups built on it (§4.2, Alg. 2).

The model (the paper gives the idea, this fixes the wiring so rings can be checked link by
link and so the controller RTL has a configuration to apply):

- Node ``n`` has GPUs ``(n, 0) .. (n, R-1)``: the *upper* half ``0 .. R/2-1`` and the *lower*
  half ``R/2 .. R-1``, each a chain of fixed intra-node links ``(n, i) - (n, i+1)``.
- Two OCS transceiver bundles are active in ring construction: ``W(n)`` (west) and ``E(n)``
  (east). Each selects one *path*: an external path ``d`` in ``1 .. K`` (to node ``n - d``
  for W, ``n + d`` for E; K <= R) or ``LOOP``, the internal loopback, which joins the two
  halves at that side of the node: ``(n, 0) - (n, R-1)`` for W, ``(n, R/2-1) - (n, R/2)``
  for E. The other bundles of the node stay in loopback (or are DAC cables).
- The fibre pair ``E(n) -- W(n+d)`` (one per node and hop distance, 2K per node) carries two
  GPU links: the upper track ``(n, R/2-1) - (n+d, 0)`` and the lower track
  ``(n, R/2) - (n+d, R-1)``. It is *active* when ``E(n)`` and ``W(n+d)`` both select ``d``.
- On a ring of nodes the distances wrap modulo the node count; on a *line* they do not, so the
  2K nodes at its two ends have fewer backup links.

A TP group of ``m = tp / R`` healthy nodes ``n_1, .., n_m``, consecutive along the ring with
gaps of at most K, becomes one GPU ring: ``E(n_i)`` and ``W(n_{i+1})`` select the gap,
``W(n_1)`` and ``E(n_m)`` select LOOP; the GPU order is the upper halves west to east, then
the lower halves east to west. :func:`verify` walks every ring on the physical link graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["LOOP", "HBD", "Ring", "Wiring", "wiring", "build_rings", "components", "verify",
           "usable_rings", "ring_segments", "R_SUPPORTED", "TRX_PER_BUNDLE"]

LOOP = "loop"
R_SUPPORTED = (4, 8)
TRX_PER_BUNDLE = 8          # Fig 4: a bundle is 8 x 800 Gb/s OCSTrx for a 6.4 Tb/s GPU


@dataclass(frozen=True)
class Wiring:
    """The one wiring table of a node's OCSTrx bundles (used by :meth:`HBD.graph`,
    ``ocstrx.trx_commands`` and ``cost``): ``bundles[b] = ((side, d) of path 1, (side, d)
    of path 2)`` (None for a path that is not wired), and the GPU pair of each side's
    links (upper track, lower track) as an offset into the node (``h = R/2``)."""

    K: int
    bundles: tuple

    def path_of(self, side: str, d: int) -> tuple[int, int]:
        """(bundle, path 1 or 2) of the external path to hop distance d on ``side``."""
        for b, paths in enumerate(self.bundles):
            for p, end in enumerate(paths, 1):
                if end == (side, d):
                    return b, p
        raise ValueError(f"no bundle serves hop distance {d} on side {side!r} (K = {self.K})")

    def bundles_of(self, side: str) -> list[int]:
        return [b for b, paths in enumerate(self.bundles)
                if any(e is not None and e[0] == side for e in paths)]

    @staticmethod
    def gpus(side: str, R: int) -> tuple[int, int]:
        """(upper, lower) GPU of a side's links in a node of R GPUs."""
        h = R // 2
        return (0, R - 1) if side == "W" else (h - 1, h)

    @property
    def trx(self) -> int:
        """OCSTrx per node (8 per bundle, Fig 4)."""
        return TRX_PER_BUNDLE * len(self.bundles)


def wiring(K: int) -> Wiring:
    """2K external paths, two per bundle (paths 1 and 2), so K bundles per node: Fig 5 (a)
    2 bundles for K = 2, (b) 3 bundles for K = 3, the 16 and 24 OCSTrx per 4-GPU node of
    Table 8. Each side's distances pair up on its own bundles, (1, 2), (3, 4), ..; for odd K
    the last bundle carries distance K of both sides (W on path 1, E on path 2)."""
    _int("K", K, 1)
    bundles = []
    for side in ("W", "E"):
        for d in range(1, K, 2):
            bundles.append(((side, d), (side, d + 1)))
    if K % 2:
        bundles.append((("W", K), ("E", K)))
    return Wiring(K, tuple(bundles))


def _int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, not {value!r}")
    return int(value)


@dataclass(frozen=True)
class HBD:
    """``nodes`` nodes of ``R`` GPUs in a K-hop ring (``ring=True``) or line."""

    nodes: int
    R: int = 4
    K: int = 2
    ring: bool = True

    def __post_init__(self) -> None:
        _int("nodes", self.nodes, 1)
        if self.R not in R_SUPPORTED:
            raise ValueError(f"R (GPUs per node) must be one of {R_SUPPORTED}, not {self.R!r}")
        _int("K", self.K, 1)
        if self.K > self.R:
            raise ValueError(f"K ({self.K}) must be <= R ({self.R}): a node has 2R external "
                             f"paths, to the nodes at +-1 .. +-K")
        if self.ring and self.nodes <= 2 * self.K:
            raise ValueError(f"a K-hop ring needs more than 2K = {2 * self.K} nodes, not "
                             f"{self.nodes} (use ring=False for a line)")

    @property
    def gpus(self) -> int:
        return self.nodes * self.R

    def neighbour(self, n: int, d: int) -> int | None:
        """The node ``d`` hops east (d > 0) or west (d < 0) of ``n``, or None off a line."""
        v = n + d
        if self.ring:
            return v % self.nodes
        return v if 0 <= v < self.nodes else None

    def graph(self):
        """Physical links as a networkx MultiGraph on GPUs ``(n, i)``; every edge has
        ``kind`` ("fixed", "loop", "ext"), and for loop/ext the transceiver(s) and path."""
        import networkx as nx
        g = nx.MultiGraph()
        h = self.R // 2
        for n in range(self.nodes):
            g.add_nodes_from((n, i) for i in range(self.R))
            for i in list(range(h - 1)) + list(range(h, self.R - 1)):
                g.add_edge((n, i), (n, i + 1), key=("fixed", n, i), kind="fixed")
            g.add_edge((n, 0), (n, self.R - 1), key=("loop", "W", n), kind="loop",
                       trx=("W", n))
            g.add_edge((n, h - 1), (n, h), key=("loop", "E", n), kind="loop", trx=("E", n))
            table = wiring(self.K)
            eu, el = table.gpus("E", self.R)
            wu, wl = table.gpus("W", self.R)
            for d in range(1, self.K + 1):
                v = self.neighbour(n, d)
                if v is None:
                    continue
                bundles = (table.path_of("E", d)[0], table.path_of("W", d)[0])
                g.add_edge((n, eu), (v, wu), key=("ext", n, d, "upper"), kind="ext",
                           ends=(("E", n), ("W", v)), path=d, bundles=bundles)
                g.add_edge((n, el), (v, wl), key=("ext", n, d, "lower"), kind="ext",
                           ends=(("E", n), ("W", v)), path=d, bundles=bundles)
        return g


@dataclass
class Ring:
    """One TP group: its nodes west to east, its GPU cycle, and the path each of its
    transceivers selects (``{("W"|"E", node): d or LOOP}``)."""

    nodes: tuple[int, ...]
    gpus: tuple[tuple[int, int], ...]
    config: dict = field(default_factory=dict)


def _faulty_mask(hbd: HBD, faulty) -> np.ndarray:
    mask = np.zeros(hbd.nodes, dtype=bool)
    for f in faulty:
        if isinstance(f, bool) or not isinstance(f, (int, np.integer)) or \
                not 0 <= f < hbd.nodes:
            raise ValueError(f"faulty node {f!r} is outside the cluster (nodes 0..{hbd.nodes - 1})")
        mask[int(f)] = True
    return mask


def components(hbd: HBD, faulty) -> list[list[int]]:
    """Algorithm 2's connected components of the healthy-node graph (healthy nodes linked
    when at most K hops apart), each in HBD order (west to east). On a ring, a component
    that wraps starts after the break; with no break the whole ring is one component
    starting at the lowest healthy node."""
    import networkx as nx
    bad = _faulty_mask(hbd, faulty)
    g = nx.Graph()
    healthy = [n for n in range(hbd.nodes) if not bad[n]]
    g.add_nodes_from(healthy)
    for n in healthy:
        for d in range(1, hbd.K + 1):
            v = hbd.neighbour(n, d)
            if v is not None and not bad[v]:
                g.add_edge(n, v)
    out = []
    for comp in nx.connected_components(g):   # DFS/BFS: the same components
        nodes = sorted(comp)
        if hbd.ring and len(nodes) < hbd.nodes:
            # rotate a wrapping component so it starts just after its gap of > K hops
            gaps = [(nodes[(i + 1) % len(nodes)] - nodes[i]) % hbd.nodes
                    for i in range(len(nodes))]
            big = [i for i, gap in enumerate(gaps) if gap > hbd.K or len(nodes) == 1]
            if big:
                start = (big[0] + 1) % len(nodes)
                nodes = nodes[start:] + nodes[:start]
        out.append(nodes)
    out.sort(key=lambda c: c[0])
    return out


def _ring_of(hbd: HBD, nodes: list[int]) -> Ring:
    h = hbd.R // 2
    cfg = {("W", nodes[0]): LOOP, ("E", nodes[-1]): LOOP}
    for a, b in zip(nodes, nodes[1:]):
        d = (b - a) % hbd.nodes if hbd.ring else b - a
        cfg[("E", a)] = d
        cfg[("W", b)] = d
    gpus = [(n, i) for n in nodes for i in range(h)]
    gpus += [(n, i) for n in reversed(nodes) for i in range(h, hbd.R)]
    return Ring(tuple(nodes), tuple(gpus), cfg)


def build_rings(hbd: HBD, faulty, tp: int) -> list[Ring]:
    """The GPU rings of TP groups of ``tp`` GPUs (Algorithm 2: components of healthy nodes in
    HBD order, ``m = tp / R`` nodes popped at a time). Each ring comes with the transceiver
    configuration that realises it."""
    _int("tp", tp, 1)
    if tp % hbd.R:
        raise ValueError(f"TP size {tp} must be a multiple of the node size R = {hbd.R}")
    m = tp // hbd.R
    rings = []
    for comp in components(hbd, faulty):
        for i in range(0, len(comp) - m + 1, m):
            rings.append(_ring_of(hbd, comp[i:i + m]))
    return rings


def ring_segments(faulty: np.ndarray, K: int, ring: bool = True) -> list[int]:
    """Healthy-node counts of the components of a boolean faulty-node vector: a run of K or
    more consecutive faulty nodes cuts the ring (line); shorter runs are bypassed."""
    f = np.asarray(faulty, dtype=bool)
    n = len(f)
    if f.all():
        return []
    if ring:
        f = np.roll(f, -int(np.argmax(~f)))     # start at a healthy node
    edges = np.diff(np.concatenate(([0], f.view(np.int8), [0])))
    run_start = np.flatnonzero(edges == 1)
    run_end = np.flatnonzero(edges == -1)
    long_runs = (run_end - run_start) >= K
    healthy_prefix = np.concatenate(([0], np.cumsum(~f)))
    cuts = np.concatenate(([0], np.column_stack((run_start[long_runs],
                                                 run_end[long_runs])).ravel(), [n]))
    segs = (healthy_prefix[cuts[1::2]] - healthy_prefix[cuts[::2]]).tolist()
    if ring and len(segs) > 1:
        segs[0] += segs.pop()                   # the last segment wraps into the first
    return [int(x) for x in segs]


def usable_rings(faulty: np.ndarray, K: int, m: int, ring: bool = True) -> int:
    """Fast count of the rings :func:`build_rings` makes from a boolean faulty-node vector."""
    return sum(x // m for x in ring_segments(faulty, K, ring))


def verify(hbd: HBD, rings: list[Ring], faulty=(), graph=None) -> None:
    """Walk every ring on the physical link graph: each hop is a real link, active under the
    configuration (fixed, a selected loopback, or an external path selected at both ends),
    used once across all rings; no faulty node; every transceiver selects one path; the ring
    visits each GPU of its nodes once. AssertionError naming the first violation."""
    g = graph if graph is not None else hbd.graph()
    bad = set(int(f) for f in faulty)
    selected: dict = {}
    used: set = set()
    for r in rings:
        assert not bad & set(r.nodes), f"ring {r.nodes} uses faulty node(s) {bad & set(r.nodes)}"
        for trx, path in r.config.items():
            assert selected.setdefault(trx, path) == path, \
                f"transceiver {trx} asked for paths {selected[trx]} and {path}"
        expect = {(n, i) for n in r.nodes for i in range(hbd.R)}
        assert len(r.gpus) == len(expect) and set(r.gpus) == expect, \
            f"ring {r.nodes} does not visit each of its GPUs once"
    for r in rings:
        cyc = list(r.gpus)
        for a, b in zip(cyc, cyc[1:] + cyc[:1]):
            links = g.get_edge_data(a, b) or {}
            active = [k for k, e in links.items() if _active(e, selected)]
            assert active, f"ring {r.nodes}: no active link {a} - {b}"
            free = [k for k in active if k not in used]
            assert free, f"ring {r.nodes}: link {a} - {b} used twice"
            used.add(free[0])


def _active(e: dict, selected: dict) -> bool:
    if e["kind"] == "fixed":
        return True
    if e["kind"] == "loop":
        return selected.get(e["trx"]) == LOOP
    return all(selected.get(t) == e["path"] for t in e["ends"])
