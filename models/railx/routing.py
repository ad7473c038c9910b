"""Deadlock-free routing on RailX topologies (RailX §4.1, Algorithm 1, Fig 10).

A *channel* is one direction of one link: ``(link, src_chip)`` where ``link`` indexes
:attr:`Topology.links`. A route is a list of (channel, VC) pairs.

Minimal routing (:class:`MinimalRouting`) generalises Algorithm 1 to every topology of
:mod:`.system`: the node-level path is a shortest path that corrects dimensions in order
(X before Y, the first logical dimension first; Algorithm 1's "X-rail first"); inside a node the
packet goes to the *nearest* chip that has a link to the next node (mesh distance, then the
lowest link index) by dimension-order mesh routing, and takes that link. The in-node order
(x then y, or y then x) is a parameter per phase (``order``; Algorithm 1 does not fix it).
VCs (``vcs``):

- ``"hops"`` (every topology): the VC is the number of node hops taken so far; mesh channels
  of the source node use VC 0, the k-th optical link and the mesh channels of the node it
  enters use VC k. d_o + 1 VCs, d_o the inter-node diameter (§4.1's general rule).
- ``"algorithm1"`` (2D-HyperX only): Algorithm 1 as written, VCs by phase: mesh channels use
  VC 0 while X differs, VC 1 while only Y differs, VC 2 in the destination node; X-rails VC 1,
  Y-rails VC 2. The two agree on routes that change both X and Y.

Non-minimal adaptive routing (:class:`AdaptiveRouting`, §4.1.2) with a > d_o free hops and
a + 1 VCs: a packet may always take a *free* hop to any neighbouring node (VC + 1), as long as
the destination stays within the remaining free hops, and may take any number of *ordered*
hops on its current VC, an ordered hop going to a node with a lexicographically larger
(X, Y) (an X-rail hop towards larger X, or a Y-rail hop towards larger Y). This stands in for
the paper's XY-torus virtual networks: the paper keeps a packet on one VC around whole torus
rings with bubble flow control, which a channel dependency graph cannot express, so here the
wrap-around (and any hop to a smaller node) costs a VC instead, which keeps the CDG acyclic:
along every dependency (VC, node, XY mesh order) strictly increases.

:func:`channel_dependency_graph` builds the CDG (nodes = (channel, VC)) of a routing function
over all sources and destinations; :func:`vc_collapsed` maps every VC to 0, which on 2D-HyperX
gives the cyclic CDG that the VC rule fixes.
"""

from __future__ import annotations

import functools
import itertools
from collections import deque

from .system import Topology

__all__ = ["MinimalRouting", "AdaptiveRouting", "channel_dependency_graph", "vc_collapsed",
           "route", "check_order", "ORDERS", "XY"]


class _Base:
    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        self.m = topo.system.m
        import networkx as nx
        g = nx.Graph(topo.node_graph())
        self.node_dist = dict(nx.all_pairs_shortest_path_length(g))
        self.neighbours = {u: sorted(g.neighbors(u)) for u in g.nodes}
        self.d_o = max(max(d.values()) for d in self.node_dist.values())

    def _check_chip(self, name: str, chip) -> int:
        if not isinstance(chip, int) or isinstance(chip, bool) or not \
                0 <= chip < self.topo.num_chips:
            raise ValueError(f"{name} must be a chip id in 0..{self.topo.num_chips - 1}, "
                             f"not {chip!r}")
        return chip

    def mesh_path(self, a: int, b: int, vc: int, order: str = "xy") -> list:
        """Dimension-order route between two chips of one node: x then y (``order="xy"``) or
        y then x (``"yx"``)."""
        t = self.topo
        X, Y, x, y = t.chip_coords(a)
        _, _, x1, y1 = t.chip_coords(b)
        out, cur = [], a
        axes = ((0, x1), (1, y1)) if order == "xy" else ((1, y1), (0, x1))
        for axis, target in axes:
            while (x, y)[axis] != target:
                step = 1 if target > (x, y)[axis] else -1
                if axis == 0:
                    x += step
                else:
                    y += step
                nxt = t.chip_id(X, Y, x, y)
                out.append(((self._mesh_link(cur, nxt), cur), vc))
                cur = nxt
        return out

    @functools.cached_property
    def _mesh_index(self) -> dict:
        return {(ln.u, ln.v): i for i, ln in enumerate(self.topo.links) if ln.kind == "mesh"}

    def _mesh_link(self, a: int, b: int) -> int:
        return self._mesh_index.get((a, b), self._mesh_index.get((b, a)))

    def exit_link(self, chip: int, node_to: tuple[int, int]) -> tuple[int, int, int]:
        """(link, local chip, remote chip) of the link to ``node_to`` nearest to ``chip``."""
        key = (chip, node_to)
        found = self._exits.get(key)
        if found is None:
            found = self._exits[key] = self._exit_link(chip, node_to)
        return found

    @functools.cached_property
    def _exits(self) -> dict:
        return {}

    def _exit_link(self, chip: int, node_to: tuple[int, int]) -> tuple[int, int, int]:
        t = self.topo
        here = t.node_of(chip)
        _, _, x, y = t.chip_coords(chip)
        best = None
        for i in t.links_between(here, node_to):
            ln = t.links[i]
            local, remote = (ln.u, ln.v) if t.node_of(ln.u) == here else (ln.v, ln.u)
            _, _, lx, ly = t.chip_coords(local)
            key = (abs(lx - x) + abs(ly - y), i)
            if best is None or key < best[0]:
                best = (key, i, local, remote)
        if best is None:
            raise ValueError(f"no link between nodes {here} and {node_to}")
        return best[1], best[2], best[3]

    def hop(self, chip: int, node_to: tuple[int, int], mesh_vc: int, link_vc: int,
            order: str = "xy"):
        """Channels from ``chip`` through its node to the link into ``node_to``, and the chip
        the link arrives at."""
        link, local, remote = self.exit_link(chip, node_to)
        return self.mesh_path(chip, local, mesh_vc, order) + [((link, local), link_vc)], remote


ORDERS = ("xy", "yx")
XY = ("xy", "xy", "xy")


def check_order(order) -> tuple[str, str, str]:
    """An in-node dimension order per phase: three of "xy"/"yx" (a tuple or "xy,yx,xy")."""
    if isinstance(order, str):
        order = tuple(o.strip() for o in order.split(","))
    if not isinstance(order, (tuple, list)) or len(order) != 3 or \
            any(o not in ORDERS for o in order):
        raise ValueError(f"order must be three of 'xy'/'yx' (source/X phase, intermediate/Y "
                         f"phase, destination node), e.g. 'yx,xy,yx', not {order!r}")
    return tuple(order)


class MinimalRouting(_Base):
    """Deterministic minimal routing (Algorithm 1 and its generalisation; see the module).

    ``order``: the in-node dimension order of each phase, (phase 0, phase 1, phase 2) with
    "xy" = x then y, "yx" = y then x. With Algorithm 1's VCs the phase is the VC class of the
    mesh channels (0 while X differs, 1 while only Y differs, 2 in the destination node), so
    each VC class has one order; with per-hop VCs it is the node's role (source, intermediate,
    destination), which may mix two orders on one VC: the channel dependency graph decides.
    Algorithm 1 leaves the in-node routing open; the default is x then y everywhere."""

    def __init__(self, topo: Topology, vcs: str = "hops", order=XY) -> None:
        super().__init__(topo)
        self.order = check_order(order)
        if vcs not in ("hops", "algorithm1"):
            raise ValueError(f"vcs must be 'hops' or 'algorithm1', not {vcs!r}")
        if vcs == "algorithm1" and not (
                len(topo.dims) == 2 and all(len(d) == 1 and d[0].kind == "alltoall"
                                            for d in topo.dims)):
            raise ValueError(f"vcs='algorithm1' is Algorithm 1 for a 2D-HyperX; {topo.name!r} "
                             f"is not one (use vcs='hops')")
        self.vcs = vcs

    @property
    def num_vcs(self) -> int:
        return 3 if self.vcs == "algorithm1" else self.d_o + 1

    def _phase_vc(self, node: tuple[int, int], goal: tuple[int, int]) -> int:
        return 2 if node == goal else 0 if node[0] != goal[0] else 1

    def phase(self, node: tuple[int, int], goal: tuple[int, int], hops: int) -> int:
        """Index into :attr:`order` of the mesh channels of ``node`` on the way to ``goal``
        after ``hops`` node hops."""
        if self.vcs == "algorithm1":
            return self._phase_vc(node, goal)
        return 2 if node == goal else 0 if hops == 0 else 1

    def next_node(self, here: tuple[int, int], dst: tuple[int, int]) -> tuple[int, int]:
        """The next node of the dimension-ordered shortest path: among neighbours one hop
        closer to ``dst``, the one that changes X (then the lower logical dimension) first."""
        want = self.node_dist[here][dst] - 1
        cands = [w for w in self.neighbours[here] if self.node_dist[w][dst] == want]
        return min(cands, key=lambda w: (w[0] == here[0], w))

    def route(self, src: int, dst: int) -> list:
        """(channel, VC) sequence from chip ``src`` to chip ``dst``."""
        self._check_chip("src", src)
        self._check_chip("dst", dst)
        t = self.topo
        out, chip, hops = [], src, 0
        goal = t.node_of(dst)
        while t.node_of(chip) != goal:
            here = t.node_of(chip)
            nxt = self.next_node(here, goal)
            if self.vcs == "algorithm1":
                mesh_vc, link_vc = self._phase_vc(here, goal), 1 if nxt[0] != here[0] else 2
            else:
                mesh_vc, link_vc = hops, hops + 1
            seg, chip = self.hop(chip, nxt, mesh_vc, link_vc,
                                 self.order[self.phase(here, goal, hops)])
            out += seg
            hops += 1
        final = 2 if self.vcs == "algorithm1" else hops
        return out + self.mesh_path(chip, dst, final, self.order[2])

    def routes(self):
        """(src, dst, route) for every ordered pair of distinct chips."""
        n = self.topo.num_chips
        for s, d in itertools.permutations(range(n), 2):
            yield s, d, self.route(s, d)


class AdaptiveRouting(_Base):
    """Non-minimal adaptive routing with ``free`` free hops and free + 1 VCs (see module)."""

    def __init__(self, topo: Topology, free: int) -> None:
        super().__init__(topo)
        if not isinstance(free, int) or isinstance(free, bool) or free <= self.d_o:
            raise ValueError(f"free hops a must be an int > the inter-node diameter "
                             f"d_o = {self.d_o} (§4.1.2: a > d_o), not {free!r}")
        self.free = free

    @property
    def num_vcs(self) -> int:
        return self.free + 1

    def moves(self, here: tuple[int, int], vc: int, dst: tuple[int, int]):
        """Allowed node hops from ``here`` on VC ``vc``: (next node, VC after the hop)."""
        out = []
        for w in self.neighbours[here]:
            if w > here:                                    # ordered hop: same VC
                if self.node_dist[w][dst] <= self.free - vc:
                    out.append((w, vc))
            if vc < self.free and self.node_dist[w][dst] <= self.free - vc - 1:
                out.append((w, vc + 1))                     # free hop
        return out

    def route(self, src: int, dst: int, choose=None) -> list:
        """One route; ``choose(options)`` picks among the allowed (node, VC) moves (default:
        the minimal one with the lowest VC, i.e. a minimal route)."""
        self._check_chip("src", src)
        self._check_chip("dst", dst)
        t = self.topo
        goal = t.node_of(dst)
        out, chip, vc, steps = [], src, 0, 0
        while t.node_of(chip) != goal:
            opts = self.moves(t.node_of(chip), vc, goal)
            if choose is None:
                d = self.node_dist[t.node_of(chip)][goal]
                opts = [o for o in opts if self.node_dist[o[0]][goal] == d - 1] or opts
                w, nvc = min(opts, key=lambda o: (o[1], o[0]))
            else:
                w, nvc = choose(opts)
            seg, chip = self.hop(chip, w, vc, nvc)
            out += seg
            vc = nvc
            steps += 1
            if steps > t.num_nodes * self.num_vcs:   # cannot happen: every move makes progress
                raise RuntimeError("adaptive route did not terminate")
        return out + self.mesh_path(chip, dst, vc)

    def dependencies(self):
        """Every (held, requested) pair of (channel, VC) the routing relation allows, found by
        exploring all states (last channel, chip, VC) for every destination chip."""
        t = self.topo
        deps = set()
        for dst in range(t.num_chips):
            goal = t.node_of(dst)
            seen = set()
            todo = deque((None, s, 0) for s in range(t.num_chips) if s != dst)
            while todo:
                state = todo.popleft()
                if state in seen:
                    continue
                seen.add(state)
                last, chip, vc = state
                here = t.node_of(chip)
                if here == goal:
                    path = self.mesh_path(chip, dst, vc)
                    _chain(deps, last, path)
                    continue
                for w, nvc in self.moves(here, vc, goal):
                    seg, arrive = self.hop(chip, w, vc, nvc)
                    _chain(deps, last, seg)
                    todo.append((seg[-1], arrive, nvc))
        return deps


def _chain(deps: set, last, path: list) -> None:
    prev = last
    for item in path:
        if prev is not None:
            deps.add((prev, item))
        prev = item


def channel_dependency_graph(routing) -> nx.DiGraph:
    """CDG of a routing function: an edge (c1, v1) -> (c2, v2) when a packet holding channel
    c1 on VC v1 may request channel c2 on VC v2."""
    import networkx as nx
    g = nx.DiGraph()
    if isinstance(routing, AdaptiveRouting):
        g.add_edges_from(routing.dependencies())
        return g
    for _, _, r in routing.routes():
        g.add_edges_from(zip(r, r[1:]))
    return g


def vc_collapsed(cdg: nx.DiGraph) -> nx.DiGraph:
    """The same dependencies with every VC mapped to 0 (a single-VC network)."""
    import networkx as nx
    g = nx.DiGraph()
    g.add_edges_from(((a[0], 0), (b[0], 0)) for a, b in cdg.edges)
    return g


def route(topo: Topology, src_chip: int, dst_chip: int) -> list:
    """Minimal route from ``src_chip`` to ``dst_chip``: a list of (channel, VC), channel =
    (link index, chip the channel leaves)."""
    routing = topo.__dict__.get("_minimal_routing")
    if routing is None:
        routing = topo.__dict__["_minimal_routing"] = MinimalRouting(topo)
    return routing.route(src_chip, dst_chip)
