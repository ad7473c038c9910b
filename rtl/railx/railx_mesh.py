"""A small RailX system of router RTL: a 2D-HyperX of ``side`` x ``side`` nodes of 2 x 2
chips (RailX §3.2, §3.3.2, Fig 7), every chip a :class:`~.router.Router`, the on-package mesh
inside each node and the optical rails between nodes as links of ``mesh_delay`` and
``rail_delay`` cycles (Table 5: 1 and 10), for co-simulation against the network simulator
under Algorithm 1's tables.

The wiring is written here from the paper's rules, not taken from ``models/``, so the
co-simulation can check it against the model's topology (``links`` lists it):

- chip ``c = ((X * side + Y) * 2 + x) * 2 + y`` is chip (x, y) of node (X, Y);
- mesh: port 1 (+x) of (x, y) to port 2 (-x) of (x + 1, y), port 3 (+y) to port 4 (-y) of
  (x, y + 1), inside the node;
- a node has r = 2n rails per dimension. X-rail a sits on chip row y = a // n, its ``+`` port
  on the east chip (x = 1), its ``-`` port on the west chip (x = 0); Y-rail b on chip column
  x = b // n, ``+`` on the north chip (y = 1), ``-`` on the south chip (y = 0). So every chip
  has n X-rail ports (ports 5 .. 5 + n - 1, rail a = y * n + i on port 5 + i) and n Y-rail
  ports (5 + n + i, rail b = x * n + i): P = 5 + 2n;
- rail j of a row (column) of nodes realises the rail ring j mod (side - 1) of a rail-ring
  all-to-all (§3.1): the arc A -> B of the ring joins node A's rail-j ``+`` port to node B's
  rail-j ``-`` port. The rings are Walecki's (A.1): for side = 2M + 1, ring i < M is the
  zig-zag cycle (2M, i, i - 1, i + 1, i - 2, ..., i - M) mod 2M, ring i + M the same cycle
  reversed.

The routers are one Verilog module instantiated once per chip (:meth:`RailXMesh.convert_verilog`):
Verilator compiles one router, not 36.

Members
-------
inject : In(link_signature(vcs, data, ports)).array(chips)
    Chip c's local input (port 0), heads with their routes at chip c (lookahead routing:
    its source reads the chip's own row 0), credits back to its source.
eject : Out(eject_signature(vcs, data)).array(chips)
edge_i : In(link_signature(vcs, data, ports)).array(len(edge_ports))
edge_o : Out(link_signature(vcs, data, ports)).array(len(edge_ports))
    The mesh ports at a node's edge (no link: the co-simulation ties them off and checks
    that nothing leaves on them), in the order of :attr:`RailXMesh.edges`.
table : In(stream.Signature(mesh_table_layout(...)))
    Routing-table entries, each of one ``router``'s (chip's) own table, written into the
    copies at the routers upstream of it (:func:`.mesh.fan_table`); ``router`` chips + e:
    the router beyond edge port e, its entries in the copy at that edge's output.
error : Out(5)
    The routers' error flags, ORed.
clear : In(1)
"""

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params, not_elaborated, or_tree
from .mesh import (RouterMesh, RouterSystem, chip_ports, eject_signature, fan_table,
                   instantiate_router, mesh_table_layout, wire_edge, wire_local)
from .router import ERROR_BITS, Router, link_signature

__all__ = ["RailXMesh", "walecki_rings"]

M = 2     # chips per node edge


def walecki_rings(k):
    """The k - 1 directed Hamiltonian cycles of K*_k, k odd (A.1), as arc lists (a, b)."""
    half, top = (k - 1) // 2, k - 1
    rings = []
    for i in range(half):
        path = [i]
        for t in range(1, half):
            path += [(i - t) % top, (i + t) % top]
        path.append((i - half) % top)
        rings.append([top] + path)
    rings += [c[:1] + c[1:][::-1] for c in rings]
    return [[(c[t], c[(t + 1) % k]) for t in range(k)] for c in rings]


class RailXMesh(RouterSystem, wiring.Component):
    """2D-HyperX of side x side nodes of 2 x 2 chip routers (see the module docstring).

    Parameters (keyword-only)
    -------------------------
    side : int, 3, 5 or 7 (odd: Walecki's rings)
        Nodes per row and column.
    n : int, 1..4
        Off-package ports per chip edge: 2n rails per dimension, at least side - 1.
    mesh_delay, rail_delay : int, 1..16 and 1..32
    vcs, depth, data, packet, allocator
        As for :class:`~.router.Router` (ports 5 + 2n; destinations of enough bits for
        every chip).
    """

    def __init__(self, *, side, n, vcs, depth, data, packet, mesh_delay=1, rail_delay=10,
                 allocator="separable"):
        check_params(self, [("side", side, 3, 7), ("n", n, 1, 4),
                            ("mesh_delay", mesh_delay, 1, 16),
                            ("rail_delay", rail_delay, 1, 32)])
        if side % 2 == 0:
            not_elaborated(self)
            raise ValueError(f"Parameter 'side' must be odd (Walecki's rail rings), not {side}")
        if 2 * n < side - 1:
            not_elaborated(self)
            raise ValueError(f"Parameter 'n': {side} nodes all-to-all need {side - 1} rails "
                             f"per dimension, 2n = {2 * n}")
        self.side, self.n = side, n
        self.mesh_delay, self.rail_delay = mesh_delay, rail_delay
        self.chips = side * side * M * M
        self.ports = 5 + 2 * n
        self.dst_width = (self.chips - 1).bit_length()
        self.router_params = dict(ports=self.ports, vcs=vcs, depth=depth, data=data,
                                  dst_width=self.dst_width, packet=packet, allocator=allocator)
        try:                                                  # validate them here
            not_elaborated(Router(**self.router_params))
        except (TypeError, ValueError):
            not_elaborated(self)          # half-built: not a forgotten design
            raise
        self.links = self._links()
        wired = {(a, pa) for a, pa, _, _, _ in self.links} | \
            {(b, pb) for _, _, b, pb, _ in self.links}
        self.edges = [(c, p) for c in range(self.chips) for p in range(1, self.ports)
                      if (c, p) not in wired]
        link = link_signature(vcs, data, self.ports)
        super().__init__({
            "inject": In(link).array(self.chips),
            "edge_i": In(link).array(len(self.edges)),
            "edge_o": Out(link).array(len(self.edges)),
            "eject": Out(eject_signature(vcs, data)).array(self.chips),
            "table": In(stream.Signature(mesh_table_layout(M * self.side, self.ports, vcs,
                                                           self.dst_width, len(self.edges)))),
            "error": Out(len(ERROR_BITS)),
            "clear": In(1),
        })

    def chip(self, X, Y, x, y):
        return ((X * self.side + Y) * M + x) * M + y

    def _links(self):
        """(chip a, port a, chip b, port b, delay) of every link, each once."""
        s, n = self.side, self.n
        out = []
        for X in range(s):
            for Y in range(s):
                for x in range(M):
                    for y in range(M):
                        c = self.chip(X, Y, x, y)
                        if x + 1 < M:
                            out.append((c, 1, self.chip(X, Y, x + 1, y), 2, self.mesh_delay))
                        if y + 1 < M:
                            out.append((c, 3, self.chip(X, Y, x, y + 1), 4, self.mesh_delay))
        rings = walecki_rings(s)
        for rail in range(M * n):
            line, i = divmod(rail, n)
            for A, B in rings[rail % (s - 1)]:
                for other in range(s):
                    # X-rail: row `other` of nodes, chip row `line`; + east (x = 1), - west
                    out.append((self.chip(A, other, 1, line), 5 + i,
                                self.chip(B, other, 0, line), 5 + i, self.rail_delay))
                    # Y-rail: column `other` of nodes, chip column `line`; + north, - south
                    out.append((self.chip(other, A, line, 1), 5 + n + i,
                                self.chip(other, B, line, 0), 5 + n + i, self.rail_delay))
        return out

    def elaborate(self, platform):
        m = Module()
        P, V = self.ports, self.router_params["vcs"]
        data = self.router_params["data"]
        ports = chip_ports(self.chips, P, link_signature(V, data, P))
        errors, readies = [], []
        downstream = [{} for _ in range(self.chips)]
        for a, pa, b, pb, _ in self.links:
            downstream[a][pa], downstream[b][pb] = b, a
        for e, (c, p) in enumerate(self.edges):
            downstream[c][p] = self.chips + e
        for c in range(self.chips):
            err, ready = instantiate_router(m, self.router_module, c, ports[c],
                                            fan_table(self.table, P, downstream[c]),
                                            self.clear)
            errors.append(err)
            readies.append(ready)
            wire_local(m, self.inject[c], self.eject[c], ports[c][0])
        for a, pa, b, pb, d in self.links:
            for u, pu, v, pv in ((a, pa, b, pb), (b, pb, a, pa)):
                RouterMesh._link(m, ports[u][pu].o, ports[v][pv].i, d, f"l{u}_{pu}")
        for e, (c, p) in enumerate(self.edges):
            wire_edge(m, self.edge_i[e], self.edge_o[e], ports[c][p])
        m.d.comb += [self.table.ready.eq(or_tree(m, readies, 1)),
                     self.error.eq(or_tree(m, errors, len(ERROR_BITS)))]
        return m
