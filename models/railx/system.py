"""RailX physical architecture and logical topologies (RailX §3.2-§3.3, eq 1, Table 2, Fig 6-9).

Physical system ``RailX(m, n, R)``: nodes of m x m chips joined by a 2D mesh; every chip edge
has n off-package ports, so a node has r = m·n rails per dimension (a rail is a ``+``/``-`` port
pair). Nodes sit on an (R/2) x (R/2) grid; X-rail a of node (X, Y) plugs into X-OCS (Y, a) and
Y-rail b into Y-OCS (X, b) (the paper's node (i, j) is our (X, Y) = (i, j)), so every row and
every column of nodes has its own group of r optical circuit switches of radix R:
N = (R/2)² m² chips and N_s = r·R switches (eq 1).

Conventions used everywhere (the router RTL and the network simulator build on them):

- node (X, Y), X in [0, PX), Y in [0, PY); chip (x, y) inside it, x, y in [0, m).
  ``chip_id = ((X·PY + Y)·m + x)·m + y``.
- X-rail a lives on chip row y = a // n: its ``+`` port on the east chip (m-1, y), its ``-``
  port on the west chip (0, y). Y-rail b lives on chip column x = b // n: ``+`` on the north
  chip (x, m-1), ``-`` on the south chip (x, 0).
- X-OCS (Y, a) port 2X is node X's ``+`` port, 2X+1 its ``-`` port (Y-OCS (X, b): 2Y, 2Y+1).
  A circuit joins one node's ``+`` to another node's ``-``: a full-duplex optical link.

A :class:`Topology` is the OCS configuration of one logical topology: per-OCS port
permutations (``ocs``), the node-level links, and the chip-level graph (networkx).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from .rings import NotAnInteger, rail_rings

__all__ = ["RailX", "Link", "Topology", "Dim", "torus_2d", "hyperx_2d", "dragonfly",
           "split", "table2"]


def _positive_int(name: str, value, low: int = 1) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise NotAnInteger(f"{name} must be an int >= {low}, not {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, not {value!r}")
    return int(value)


@dataclass(frozen=True)
class RailX:
    """The physical system: m x m chips per node, n ports per chip edge, OCS radix R."""

    m: int
    n: int
    R: int

    def __post_init__(self) -> None:
        _positive_int("m", self.m)
        _positive_int("n", self.n)
        _positive_int("R", self.R, 4)
        if self.R % 2:
            raise ValueError(f"R (OCS radix) must be even (each node uses a +/- port pair), "
                             f"not {self.R}")

    @property
    def r(self) -> int:
        """Rails per dimension and node."""
        return self.m * self.n

    @property
    def side(self) -> int:
        """Nodes per row and column of the physical grid: R/2."""
        return self.R // 2

    @property
    def chips(self) -> int:
        """N = (R/2)² m² (eq 1)."""
        return self.side ** 2 * self.m ** 2

    @property
    def switches(self) -> int:
        """N_s = r·R (eq 1): R/2 rows and R/2 columns, r switches each."""
        return self.r * self.R

    @property
    def ports_per_chip(self) -> int:
        return 4 * self.n


@dataclass(frozen=True)
class Link:
    """A link of the chip-level graph between chips ``u`` and ``v`` (ids). ``kind`` is
    "mesh" (on-package, internal hop H_i) or "optical" (through an OCS, external hop H_o).
    Optical links: ``dim`` "X"/"Y", ``rail``, and ``u`` is the ``+`` side."""

    u: int
    v: int
    kind: str
    dim: str = ""
    rail: int = -1


@dataclass(frozen=True)
class Dim:
    """One logical dimension of a split physical dimension: ``kind`` "torus" (rings in
    coordinate order) or "alltoall" (rail-ring all-to-all), ``size`` nodes, ``rails`` rails."""

    kind: str
    size: int
    rails: int

    def __post_init__(self) -> None:
        if self.kind not in ("torus", "alltoall"):
            raise ValueError(f"dimension kind must be 'torus' or 'alltoall', not {self.kind!r}")
        _positive_int("dimension size", self.size, 2)
        _positive_int("dimension rails", self.rails)
        if self.kind == "alltoall":
            if self.size < 3 or self.size in (4, 6):
                raise ValueError(f"an all-to-all dimension of {self.size} nodes does not exist "
                                 f"(rail rings need k >= 3, k not 4 or 6)")
            if self.rails < self.size - 1:
                raise ValueError(f"an all-to-all dimension of {self.size} nodes needs >= "
                                 f"{self.size - 1} rails, not {self.rails}")


@dataclass(eq=False)      # identity semantics: holds numpy arrays and cached graphs
class Topology:
    """One OCS configuration of a :class:`RailX` system.

    ``nodes`` = (PX, PY) nodes used; ``ocs[(dim, index, rail)]`` = port permutation of that
    switch (``perm[p] = q`` joins ports p and q; -1 for an unused port); ``node_links`` =
    list of (dim, rail, plus_node, minus_node); ``name`` and ``dims`` describe the logical
    topology (``dims``: logical dimensions of X and of Y).
    """

    system: RailX
    name: str
    nodes: tuple[int, int]
    ocs: dict = field(default_factory=dict)
    node_links: list = field(default_factory=list)
    dims: tuple = ()

    # -- indices ---------------------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return self.nodes[0] * self.nodes[1]

    @property
    def num_chips(self) -> int:
        return self.num_nodes * self.system.m ** 2

    def chip_id(self, X: int, Y: int, x: int, y: int) -> int:
        m = self.system.m
        return ((X * self.nodes[1] + Y) * m + x) * m + y

    def chip_coords(self, chip: int) -> tuple[int, int, int, int]:
        if 0 <= chip < len(self._coords):
            return self._coords[chip]
        return self._coords_of(chip)

    def _coords_of(self, chip: int) -> tuple[int, int, int, int]:
        m = self.system.m
        y = chip % m
        x = chip // m % m
        node = chip // (m * m)
        return node // self.nodes[1], node % self.nodes[1], x, y

    @functools.cached_property
    def _coords(self) -> list:
        """(X, Y, x, y) of every chip: routing asks millions of times."""
        return [self._coords_of(c) for c in range(self.num_chips)]

    def node_of(self, chip: int) -> tuple[int, int]:
        return self.chip_coords(chip)[:2]

    def port_chip(self, node: tuple[int, int], dim: str, rail: int, sign: str) -> int:
        """The chip carrying ``sign`` ("+"/"-") port of rail ``rail`` of ``dim``."""
        m, n = self.system.m, self.system.n
        line = rail // n
        edge = m - 1 if sign == "+" else 0
        x, y = (edge, line) if dim == "X" else (line, edge)
        return self.chip_id(node[0], node[1], x, y)

    # -- graphs ----------------------------------------------------------------------------
    @functools.cached_property
    def links(self) -> list[Link]:
        """Every link of the chip-level graph: the 2D mesh inside each node, then the
        optical links in ``node_links`` order."""
        m = self.system.m
        out = []
        for X, Y in itertools.product(range(self.nodes[0]), range(self.nodes[1])):
            for x, y in itertools.product(range(m), range(m)):
                c = self.chip_id(X, Y, x, y)
                if x + 1 < m:
                    out.append(Link(c, self.chip_id(X, Y, x + 1, y), "mesh"))
                if y + 1 < m:
                    out.append(Link(c, self.chip_id(X, Y, x, y + 1), "mesh"))
        for dim, rail, plus, minus in self.node_links:
            out.append(Link(self.port_chip(plus, dim, rail, "+"),
                            self.port_chip(minus, dim, rail, "-"), "optical", dim, rail))
        return out

    def chip_graph(self) -> nx.MultiGraph:
        """Chips as nodes (with X, Y, x, y attributes); one edge per link, keyed by its index
        in :attr:`links`, with ``kind``, ``dim``, ``rail`` and ``weight`` (1)."""
        import networkx as nx     # here, not at import: the network simulator's start-up
        g = nx.MultiGraph()
        for c in range(self.num_chips):
            X, Y, x, y = self.chip_coords(c)
            g.add_node(c, X=X, Y=Y, x=x, y=y)
        for i, ln in enumerate(self.links):
            g.add_edge(ln.u, ln.v, key=i, kind=ln.kind, dim=ln.dim, rail=ln.rail)
        return g

    def node_graph(self) -> nx.MultiGraph:
        """Nodes (X, Y) as vertices, one edge per optical link."""
        import networkx as nx
        g = nx.MultiGraph()
        g.add_nodes_from(itertools.product(range(self.nodes[0]), range(self.nodes[1])))
        for dim, rail, plus, minus in self.node_links:
            g.add_edge(plus, minus, dim=dim, rail=rail)
        return g

    def ocs_ports(self) -> dict[str, int]:
        """Ports each switch of a dimension uses: 2 per node of the row (X) or column (Y);
        for a Dragonfly the global radix R_g = 2·groups and the local radix R_l =
        2·group_size of §3.3.3."""
        return {"X": 2 * self.nodes[0], "Y": 2 * self.nodes[1]}

    def node_diameter(self) -> int:
        """Inter-node diameter d_o (optical hops)."""
        import networkx as nx
        return nx.diameter(nx.Graph(self.node_graph()))

    def links_between(self, a: tuple[int, int], b: tuple[int, int]) -> list[int]:
        """Indices (into :attr:`links`) of the optical links joining nodes a and b."""
        return self._pair_links.get((a, b), []) + self._pair_links.get((b, a), []) \
            if a != b else []

    @functools.cached_property
    def _pair_links(self) -> dict:
        out: dict = {}
        first = len(self.links) - len(self.node_links)
        for i, (_, _, plus, minus) in enumerate(self.node_links):
            out.setdefault((plus, minus), []).append(first + i)
        return out

    def cut_links(self, side: set) -> int:
        """Optical links with exactly one end node in ``side``."""
        return sum((p in side) != (q in side) for _, _, p, q in self.node_links)

    def all_to_all_throughput(self) -> float:
        """2·B_c / N in port bandwidths per chip (eq 2-4), B_c = TX+RX bandwidth across the
        bisection that halves the nodes along X (the natural cut of every topology here)."""
        px = self.nodes[0]
        side = {(X, Y) for X in range(px // 2) for Y in range(self.nodes[1])}
        b_c = 2 * self.cut_links(side)
        return 2 * b_c / self.num_chips


def _new(system: RailX, name: str, px: int, py: int, dims=()) -> Topology:
    for label, p in (("X", px), ("Y", py)):
        if p > system.side:
            raise ValueError(f"{label}: {p} nodes do not fit on OCSes of radix R = "
                             f"{system.R} (at most R/2 = {system.side} nodes per row/column)")
    return Topology(system, name, (px, py), dims=dims)


def _wire_ring(topo: Topology, dim: str, line: int, rail: int, ring: list) -> None:
    """Configure OCS (dim, line, rail) with the ring: node ring[t]'s + port to node
    ring[t+1]'s - port. ``ring`` holds coordinates along ``dim``."""
    key = (dim, line, rail)
    perm = topo.ocs.setdefault(key, np.full(topo.system.R, -1, dtype=np.int64))
    k = len(ring)
    for t in range(k):
        a, b = ring[t], ring[(t + 1) % k]
        p, q = 2 * a, 2 * b + 1
        if perm[p] != -1 or perm[q] != -1:
            raise ValueError(f"OCS {key}: port {p} or {q} is already used")
        perm[p], perm[q] = q, p
        plus = (a, line) if dim == "X" else (line, a)
        minus = (b, line) if dim == "X" else (line, b)
        topo.node_links.append((dim, rail, plus, minus))


def _rings_for(dimension: Dim) -> list[list[int]]:
    if dimension.kind == "torus":
        return [list(range(dimension.size))]
    return rail_rings(dimension.size)


def split(system: RailX, x_dims, y_dims, name: str | None = None) -> Topology:
    """High-dimensional topology by dimension splitting (§3.3.4): the physical X dimension
    carries the logical dimensions ``x_dims`` (first one varies fastest in the node's X
    coordinate), Y likewise. Each :class:`Dim` gets its own ``rails`` consecutive rails;
    a torus dimension wires each of its rails into the coordinate-order ring, an all-to-all
    dimension wires rail j into rail ring j mod (size-1) (§3.1).

    Example (Fig 9): ``split(RailX(2, 2, 128), [Dim("torus", 3, 2), Dim("alltoall", 3, 2)],
    [Dim("torus", D, 2), Dim("torus", P, 2)])`` is the 4 x 3 x 3 x D x P topology.
    """
    x_dims, y_dims = [Dim(*d) if not isinstance(d, Dim) else d for d in x_dims], \
        [Dim(*d) if not isinstance(d, Dim) else d for d in y_dims]
    for label, dims in (("X", x_dims), ("Y", y_dims)):
        if not dims:
            raise ValueError(f"{label}: at least one logical dimension is needed")
        used = sum(d.rails for d in dims)
        if used > system.r:
            raise ValueError(f"{label}: the dimensions use {used} rails, a node has r = "
                             f"m·n = {system.r}")
    px = math.prod(d.size for d in x_dims)
    py = math.prod(d.size for d in y_dims)
    label = name or "x".join(f"{d.size}{'T' if d.kind == 'torus' else 'A'}"
                             for d in x_dims + y_dims)
    topo = _new(system, label, px, py, dims=(tuple(x_dims), tuple(y_dims)))
    for dim, dims, lines in (("X", x_dims, py), ("Y", y_dims, px)):
        stride, rail0 = 1, 0
        for d in dims:
            rings = _rings_for(d)
            others = [c for c in range(math.prod(e.size for e in dims)) if c // stride % d.size
                      == 0]
            for j in range(d.rails):
                ring = rings[j % len(rings)]
                for line in range(lines):
                    for base in others:
                        _wire_ring(topo, dim, line, rail0 + j, [base + v * stride for v in ring])
            stride *= d.size
            rail0 += d.rails
    return topo


def torus_2d(system: RailX, side: int | None = None) -> Topology:
    """2D-Torus (§3.3.1): every rail of a row (column) in the coordinate-order ring; the
    chips form a (side·m) x (side·m) torus. ``side`` defaults to R/2."""
    side = system.side if side is None else _positive_int("side", side, 2)
    return split(system, [Dim("torus", side, system.r)], [Dim("torus", side, system.r)],
                 name=f"2D-Torus {side}x{side}")


def hyperx_2d(system: RailX, side: int | None = None) -> Topology:
    """2D-HyperX (§3.3.2, Fig 7): X- and Y-rails separately into rail-ring all-to-all;
    ``side`` defaults to the maximum r+1, which must fit the switches (r+1 <= R/2)."""
    if side is None:
        side = system.r + 1
        if side > system.side:
            raise ValueError(f"a single 2D-HyperX needs r + 1 = {side} nodes per row, more "
                             f"than R/2 = {system.side}; pass side <= {system.side}")
    side = _positive_int("side", side, 3)
    return split(system, [Dim("alltoall", side, system.r)],
                 [Dim("alltoall", side, system.r)], name=f"2D-HyperX {side}x{side}")


def dragonfly(system: RailX, groups: int | None = None, group_size: int | None = None
              ) -> Topology:
    """Dragonfly (§3.3.3, Fig 8): a group is a column of ``group_size`` (default r+1) nodes
    joined all-to-all by their Y-rails; the group's r·group_size X-rails are its global rails,
    and global rail g = Y·r + a (X-OCS (Y, a)) carries rail ring g mod (groups-1) of a rail-ring
    all-to-all over the groups. ``groups`` defaults to min(r² + r + 1, R/2)."""
    r = system.r
    group_size = r + 1 if group_size is None else _positive_int("group_size", group_size, 3)
    Dim("alltoall", group_size, r)  # validates the local all-to-all
    global_rails = r * group_size
    if groups is None:
        groups = min(global_rails + 1, system.side)
    groups = _positive_int("groups", groups, 3)
    if groups > global_rails + 1:
        raise ValueError(f"{groups} groups need {groups - 1} global rails per group; a group "
                         f"of {group_size} nodes has {global_rails}")
    Dim("alltoall", groups, groups - 1)
    topo = _new(system, f"Dragonfly {groups}x{group_size}", groups, group_size,
                dims=((Dim("alltoall", groups, groups - 1),),
                      (Dim("alltoall", group_size, r),)))
    local = rail_rings(group_size)
    for X in range(groups):
        for b in range(r):
            _wire_ring(topo, "Y", X, b, local[b % len(local)])
    glob = rail_rings(groups)
    for Y in range(group_size):
        for a in range(r):
            _wire_ring(topo, "X", Y, a, glob[(Y * r + a) % len(glob)])
    return topo


def table2(system: RailX) -> dict[str, dict[str, float]]:
    """Table 2's formulas for this system: scalability (chips), diameter (H_o) and all-to-all
    throughput 2B_c/N (port bandwidths per chip) of Torus, HyperX and Dragonfly."""
    R, m, n, r = system.R, system.m, system.n, system.r
    return {
        "torus": {"chips": (R / 2) ** 2 * m ** 2, "diameter": R, "throughput": 16 * n / (R * m)},
        "hyperx": {"chips": (r + 1) ** 2 * m ** 2, "diameter": 2,
                   "throughput": 2 * (r + 1) / m ** 2},
        "dragonfly": {"chips": (r + 1) * (R / 2) * m ** 2, "diameter": 3,
                      "throughput": 2 * n / m},
    }
