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

from amaranth.hdl import Cat, ClockSignal, Const, Instance, Module, ResetSignal, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params, eq_const, not_elaborated, or_tree
from .router import ERROR_BITS, Router, entry_layout, flit_layout, link_signature

__all__ = ["RouterMesh", "RouterSystem", "Chip", "eject_signature", "mesh_table_layout",
           "mesh_links", "edge_ports", "fan_table", "router_module", "convert_hierarchical",
           "chip_ports", "instantiate_router", "wire_local", "wire_edge"]


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


class Chip(wiring.Component):
    """The router as a system of routers instances it: output 0 (ejection) as ``eject``, valid and
    flit alone (its route is always 0 and it takes no credit), outputs 1 .. P - 1 as
    ``o[q - 1]``. Every port of the module is then read or driven by the top."""

    def __init__(self, params):
        self.params = params
        P, V, data = params["ports"], params["vcs"], params["data"]
        link = link_signature(V, data, P)
        proto = Router(**params)
        super().__init__({
            "i": In(link).array(P),
            "o": Out(link).array(P - 1),
            "eject": Out(eject_signature(V, data)),
            "table": In(proto.table.signature.flip()),
            "error": Out(len(ERROR_BITS)),
            "clear": In(1),
        })
        not_elaborated(proto)

    def elaborate(self, platform):
        m = Module()
        m.submodules.router = r = Router(**self.params)
        P = self.params["ports"]
        wiring.connect(m, wiring.flipped(self.table), r.table)
        m.d.comb += [r.clear.eq(self.clear), self.error.eq(r.error),
                     self.eject.valid.eq(r.o[0].valid), self.eject.flit.eq(r.o[0].flit),
                     r.o[0].credit.eq(0), r.o[0].credit_vc.eq(0)]
        for p in range(P):
            wiring.connect(m, wiring.flipped(self.i[p]), r.i[p])
        for q in range(1, P):
            wiring.connect(m, r.o[q], wiring.flipped(self.o[q - 1]))
        return m


def router_module(p):
    """The name of the router module a system of routers of parameters ``p`` instantiates."""
    return (f"railx_router_p{p['ports']}_v{p['vcs']}_b{p['depth']}_d{p['data']}"
            f"_w{p['dst_width']}_l{p['packet']}_{p['allocator']}")


def convert_hierarchical(top, router_params, name):
    """The Verilog of a system ``top`` of routers as module ``name``: the router module
    (:class:`Chip`) once, then the top that instantiates it per chip (Verilator
    then builds the router once, ``hierarchical``)."""
    from ..verilog import convert
    router = convert(Chip(router_params), name=router_module(router_params))
    text = convert(top, name=name)
    # one file, two modules: the router's name is not the file's
    return ("/* verilator lint_off DECLFILENAME */\n" + router +
            "/* verilator lint_on DECLFILENAME */\n" + text)


class _Port:
    """One router port of a system: its input link ``i`` and its output link ``o``, their
    signals named and located at the line that called :func:`chip_ports`."""

    def __init__(self, sig, c, p):
        # create() <- here <- chip_ports() <- its caller
        self.i = sig.create(path=(f"r{c}_i{p}",), src_loc_at=2)
        self.o = sig.create(path=(f"r{c}_o{p}",), src_loc_at=2)


def chip_ports(chips, ports, sig):
    """Per chip, per port, the links (:class:`_Port`) between a router instance and its
    system (a system's mutants are the cells and wires of its own file: no comprehension
    here, whose frame would shift the located line)."""
    out = []
    for c in range(chips):
        row = []
        for p in range(ports):
            row.append(_Port(sig, c, p))
        out.append(row)
    return out


def instantiate_router(m, module, c, ports, table, clear):
    """Router ``module`` (:class:`Chip`) as chip ``c`` of the system ``m`` builds, on the
    links ``ports`` (:func:`chip_ports`), its table written from ``table`` (valid, payload:
    :func:`fan_table`); returns its error flags and its table's ready."""
    # the signals and the instance carry the caller's source line (a system's mutants are
    # the cells of its own file)
    err = Signal(len(ERROR_BITS), name=f"r{c}_error", src_loc_at=1)
    ready = Signal(name=f"r{c}_rdy", src_loc_at=1)
    tvalid, tpayload = table
    args = {"i_clk": ClockSignal(), "i_rst": ResetSignal(), "i_clear": clear,
            "o_error": err, "o_table__ready": ready,
            "i_table__valid": tvalid, "i_table__payload": tpayload}
    for p, port in enumerate(ports):
        i, o = port.i, port.o
        args.update({f"i_i__{p}__valid": i.valid, f"i_i__{p}__flit": i.flit.as_value(),
                     f"i_i__{p}__route": i.route.as_value(),
                     f"o_i__{p}__credit": i.credit, f"o_i__{p}__credit_vc": i.credit_vc})
        if p == 0:                          # ejection (Chip): no route, no credit
            args.update({"o_eject__valid": o.valid, "o_eject__flit": o.flit.as_value()})
            continue
        args.update({f"o_o__{p - 1}__route": o.route.as_value(),
                     f"o_o__{p - 1}__valid": o.valid,
                     f"o_o__{p - 1}__flit": o.flit.as_value(),
                     f"i_o__{p - 1}__credit": o.credit,
                     f"i_o__{p - 1}__credit_vc": o.credit_vc})
    m.submodules[f"router{c}"] = Instance(module, src_loc_at=1, **args)
    return err, ready


def wire_local(m, inj, ej, port):
    """A chip's local input ``inj`` and ejection ``ej`` to its router's port 0 links."""
    m.d.comb += [port.i.valid.eq(inj.valid), port.i.flit.eq(inj.flit),
                 port.i.route.eq(inj.route),
                 inj.credit.eq(port.i.credit), inj.credit_vc.eq(port.i.credit_vc),
                 ej.valid.eq(port.o.valid), ej.flit.eq(port.o.flit)]


def wire_edge(m, ei, eo, port):
    """A system's edge input ``ei`` and output ``eo`` to a router port's links."""
    m.d.comb += [port.i.valid.eq(ei.valid), port.i.flit.eq(ei.flit),
                 port.i.route.eq(ei.route), eo.route.eq(port.o.route),
                 ei.credit.eq(port.i.credit), ei.credit_vc.eq(port.i.credit_vc),
                 eo.valid.eq(port.o.valid), eo.flit.eq(port.o.flit),
                 port.o.credit.eq(eo.credit), port.o.credit_vc.eq(eo.credit_vc)]


class RouterSystem:
    """A system of routers of one parameter set (``router_params``) whose Verilog keeps the
    router module once, instanced per chip."""

    @property
    def router_module(self):
        return router_module(self.router_params)

    def convert_verilog(self, *, name):
        """The Verilog of this top as module ``name``: the router module once, then the top
        that instantiates it per chip."""
        return convert_hierarchical(self, self.router_params, name)


class RouterMesh(RouterSystem, wiring.Component):
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
        P, V = self.router_params["ports"], self.router_params["vcs"]
        ports = chip_ports(n, P, link_signature(V, self.router_params["data"], P))
        downstream = [{} for _ in range(n)]
        for a, pa, b, pb in mesh_links(self.k):
            downstream[a][pa], downstream[b][pb] = b, a
        for e, (c, p) in enumerate(self.edges):
            downstream[c][p] = n + e
        errors, readies = [], []
        for c in range(n):
            err, ready = instantiate_router(m, self.router_module, c, ports[c],
                                            fan_table(self.table, P, downstream[c]),
                                            self.clear)
            errors.append(err)
            readies.append(ready)
            wire_local(m, self.inject[c], self.eject[c], ports[c][0])
        for a, pa, b, pb in mesh_links(self.k):
            for u, pu, v, pv in ((a, pa, b, pb), (b, pb, a, pa)):
                self._link(m, ports[u][pu].o, ports[v][pv].i, d, f"l{u}_{pu}")
        for e, (c, p) in enumerate(self.edges):
            wire_edge(m, self.edge_i[e], self.edge_o[e], ports[c][p])
        m.d.comb += [self.table.ready.eq(or_tree(m, readies, 1)),
                     self.error.eq(or_tree(m, errors, len(ERROR_BITS)))]
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
