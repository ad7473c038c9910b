"""A k x k mesh of :class:`~.router.Router` s: the on-package mesh of a RailX node, wired as
``models.common.netsim.mesh`` wires its routers, for co-simulation against the simulator.

Chip ``c = x * k + y`` sits at (x, y). Port 1 (+x) of chip (x, y) drives port 2 (-x) of
chip (x + 1, y) and port 3 (+y) drives port 4 (-y) of (x, y + 1), and back. A link of
``delay`` d cycles is the router's output register plus d - 1 registers on the flit path,
and d - 1 registers on the credit path (the router registers its credits), so a flit that
crosses a switch in cycle t is written downstream in cycle t + d and a slot freed downstream
in cycle t counts upstream in cycle t + d, as in the simulator; a head's route at the next
router (lookahead routing, :mod:`.router`) travels beside it on the same registers. The
ports that leave the
mesh (the mesh ports at its edges and every rail port, 5 ..) are the top's ``edge_i`` and
``edge_o``, in the order of :func:`edge_ports`: a RailX node wires them to its optical
rails; the co-simulation ties them off (stubs: no flit comes in, no credit goes back).

Routing tables: ``table`` takes each router's own entries (row, destination -> port, VC
range), as :func:`models.railx.mesh.table_entries` lists them; the top writes an entry of
router n into the routers upstream of n, the copies their outputs towards n read
(lookahead). ``router`` k * k + e names the router beyond edge port e: its entries go into
the copy at that edge's output, so a head leaves the mesh with its route at the next node.
Router n's own row 0 is read by its source: a head injected at chip c carries its route at
chip c (``route``, :func:`~.router.route_layout`), as the flits of the edge ports do at
theirs.

Members
-------
inject : In(link_signature(vcs, data, ports)).array(k * k)
    Chip c's local input (port 0), heads with their routes, credits back to its source.
eject : Out(eject_signature(vcs, data)).array(k * k)
    Chip c's local output: a flit in cycle t + 1 for every flit ejected in cycle t.
edge_i : In(link_signature(vcs, data, ports)).array(len(edge_ports(k, ports)))
edge_o : Out(link_signature(vcs, data, ports)).array(len(edge_ports(k, ports)))
    Input and output of port ``edge_ports(k, ports)[e]``.
table : In(stream.Signature(mesh_table_layout(...)))
    Routing-table entries, each of one ``router``'s own table.
error : Out(5)
    The routers' error flags, ORed.
clear : In(1)
"""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params, eq_const, not_elaborated, or_tree
from .router import ERROR_BITS, Router, entry_layout, flit_layout, link_signature

__all__ = ["RouterMesh", "eject_signature", "mesh_table_layout", "mesh_links", "edge_ports",
           "fan_table"]


def eject_signature(vcs, data_width):
    """The ejection link: flits out, no credits (a sink takes one every cycle)."""
    return wiring.Signature({"valid": Out(1), "flit": Out(flit_layout(vcs, data_width))})


def mesh_table_layout(k, ports, vcs, dst_width, edges=0):
    """An entry of one router's own table: ``router`` 0 .. k * k - 1 a chip of the system,
    k * k + e the router beyond edge port e (the copy at that edge output is its table)."""
    return data.StructLayout({"router": max(1, (k * k + edges - 1).bit_length()),
                              "entry": entry_layout(ports, vcs, dst_width)})


def fan_table(table, ports, downstream):
    """A router's ``table`` (valid, payload) from a system's ``table`` stream (entries of
    one router's own table each): an entry of router n is written into the copies of n's
    table at this router's outputs towards n. ``downstream``: output port -> the router it
    leads to (ports without a link left out)."""
    outs = Cat(*[eq_const(table.payload.router, downstream[q]) if q in downstream
                 else Const(0, 1) for q in range(1, ports)])
    return table.valid & outs.any(), Cat(table.payload.entry.as_value(), outs)


def mesh_links(k):
    """(chip a, port a, chip b, port b) of every link of the k x k mesh, each once."""
    links = []
    for x in range(k):
        for y in range(k):
            c = x * k + y
            if x + 1 < k:
                links.append((c, 1, c + k, 2))
            if y + 1 < k:
                links.append((c, 3, c + 1, 4))
    return links


def edge_ports(k, ports):
    """(chip, port) of every router port not wired inside the mesh, in chip then port
    order."""
    inside = {(a, pa) for a, pa, _, _ in mesh_links(k)} | \
        {(b, pb) for _, _, b, pb in mesh_links(k)}
    return [(c, p) for c in range(k * k) for p in range(1, ports) if (c, p) not in inside]


class RouterMesh(wiring.Component):
    """k x k routers and their links (see the module docstring).

    Parameters (keyword-only)
    -------------------------
    k : int, 2..8
    delay : int, 1..16
        Cycles of every mesh link, each way.
    ports, vcs, depth, data, dst_width, packet, allocator
        As for :class:`~.router.Router` (``dst_width`` must address the k * k chips).
    """

    def __init__(self, *, k, ports, vcs, depth, data, dst_width, packet, delay=1,
                 allocator="separable"):
        check_params(self, [("k", k, 2, 8), ("delay", delay, 1, 16)])
        if dst_width < (k * k - 1).bit_length():
            not_elaborated(self)
            raise ValueError(f"Parameter 'dst_width' must address {k * k} chips: "
                             f"{dst_width} < {(k * k - 1).bit_length()}")
        self.router_params = dict(ports=ports, vcs=vcs, depth=depth, data=data,
                                  dst_width=dst_width, packet=packet, allocator=allocator)
        try:                                                  # validate them here
            not_elaborated(Router(**self.router_params))
        except (TypeError, ValueError):
            not_elaborated(self)          # half-built: not a forgotten design
            raise
        self.k, self.delay = k, delay
        n = k * k
        self.edges = edge_ports(k, ports)
        super().__init__({
            "inject": In(link_signature(vcs, data, ports)).array(n),
            "edge_i": In(link_signature(vcs, data, ports)).array(len(self.edges)),
            "edge_o": Out(link_signature(vcs, data, ports)).array(len(self.edges)),
            "eject": Out(eject_signature(vcs, data)).array(n),
            "table": In(stream.Signature(mesh_table_layout(k, ports, vcs, dst_width,
                                                           len(self.edges)))),
            "error": Out(len(ERROR_BITS)),
            "clear": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        n, d = self.k * self.k, self.delay
        P = self.router_params["ports"]
        downstream = [{} for _ in range(n)]
        for a, pa, b, pb in mesh_links(self.k):
            downstream[a][pa], downstream[b][pb] = b, a
        for e, (c, p) in enumerate(self.edges):
            downstream[c][p] = n + e
        routers = []
        for c in range(n):
            r = Router(**self.router_params)
            m.submodules[f"router{c}"] = r
            routers.append(r)
            valid, payload = fan_table(self.table, P, downstream[c])
            m.d.comb += [
                r.table.valid.eq(valid), r.table.payload.as_value().eq(payload),
                r.clear.eq(self.clear),
                r.i[0].valid.eq(self.inject[c].valid), r.i[0].flit.eq(self.inject[c].flit),
                r.i[0].route.eq(self.inject[c].route),
                self.inject[c].credit.eq(r.i[0].credit),
                self.inject[c].credit_vc.eq(r.i[0].credit_vc),
                self.eject[c].valid.eq(r.o[0].valid), self.eject[c].flit.eq(r.o[0].flit),
                r.o[0].credit.eq(0), r.o[0].credit_vc.eq(0),
            ]
        m.d.comb += self.table.ready.eq(1)
        for a, pa, b, pb in mesh_links(self.k):
            for u, pu, v, pv in ((a, pa, b, pb), (b, pb, a, pa)):
                self._link(m, routers[u].o[pu], routers[v].i[pv], d, f"l{u}_{pu}")
        for e, (c, p) in enumerate(self.edges):
            wiring.connect(m, wiring.flipped(self.edge_i[e]), routers[c].i[p])
            wiring.connect(m, routers[c].o[p], wiring.flipped(self.edge_o[e]))
        m.d.comb += self.error.eq(or_tree(m, [r.error for r in routers], len(ERROR_BITS)))
        return m

    @staticmethod
    def _link(m, out, inp, d, name):
        """``out`` (a router's output) to ``inp`` (the next router's input), d cycles."""
        valid, flit, route = out.valid, out.flit.as_value(), out.route.as_value()
        credit, credit_vc = inp.credit, inp.credit_vc
        for s in range(d - 1):
            v2, f2 = Signal(name=f"{name}_v{s}"), Signal(len(flit), name=f"{name}_f{s}")
            r2 = Signal(len(route), name=f"{name}_r{s}")
            c2, cv2 = Signal(name=f"{name}_c{s}"), Signal(len(credit_vc), name=f"{name}_cv{s}")
            m.d.sync += [v2.eq(valid), f2.eq(flit), r2.eq(route), c2.eq(credit),
                         cv2.eq(credit_vc)]
            valid, flit, route, credit, credit_vc = v2, f2, r2, c2, cv2
        m.d.comb += [inp.valid.eq(valid), inp.flit.eq(flit), inp.route.eq(route),
                     out.credit.eq(credit), out.credit_vc.eq(credit_vc)]
