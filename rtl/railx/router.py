"""Input-queued virtual-channel router with credits and virtual cut-through: the RailX chip
router (RailX §3.2, §4.1, A.6), cycle for cycle the router of ``models.common.netsim``.

Ports and flits
===============
P ports, numbered as in ``models.common.netsim.network``: 0 local (injection in, ejection
out), 1..4 mesh (+x, -x, +y, -y), 5.. rail ports. Every port is a link of one flit per cycle
each way (:func:`link_signature`): ``valid``, ``flit`` and ``route`` forward, ``credit`` and
``credit_vc`` back. A flit (:func:`flit_layout`, bit 0 upwards) is ``head`` (1 bit), ``tail``
(1), ``vc`` (:func:`vc_bits`) and ``data`` (``data`` bits); a head's ``data`` holds the
destination chip in its low ``dst_width`` bits and the packet's length in flits in the next
:func:`len_bits` bits (:func:`head_layout`). A packet's flits travel contiguously on one VC
of a link, head first, tail last (a one-flit packet is head and tail).

- **Input**: ``i[p].valid`` in cycle t writes ``i[p].flit`` into VC ``flit.vc`` of input p;
  it takes part in allocation from cycle t + 1. The sender must hold a credit for that VC:
  every VC has ``depth`` slots and starts with ``depth`` credits. When a flit leaves input p
  in cycle t, ``i[p].credit`` (with ``credit_vc``) is high in cycle t + 1. Port 0's credits
  tell the injecting source how full each local VC is.
- **Output**: a flit that traverses the switch in cycle t is on ``o[q]`` in cycle t + 1 with
  ``vc`` set to its output VC (0 on the ejection port). A credit arriving on ``o[q].credit``
  in cycle t counts for allocation in cycle t (so a link of one cycle each way returns a
  slot freed downstream in cycle t to the upstream allocator in cycle t + 1, the simulator's
  delay-1 credit). The ejection port ``o[0]`` needs no credit: a sink takes a flit every
  cycle. Flits of different packets may interleave on it (each is routed on its own input
  VC, as in the simulator); a sink tells them apart by their payload.

Allocation (the contract of ``models.common.netsim``, cycle for cycle)
=====================================================================
- **Route** (lookahead routing): a head arrives with its route at this router beside it on
  the link (``route``, :func:`route_layout`: valid, output port, mask of the output VCs it
  may take), the entry (row, destination) of this router's routing table, row = its input
  VC (0 at port 0): output port and a range lo..hi of output VCs. The route is stored with
  the head and read by VC allocation from cycle t + 1, a register and not a table lookup.
  The router upstream looks it up: output q keeps a copy of the table of the router its
  link leads to, and reads it at (output VC, destination) as a flit crosses to q, so the
  route is on the link with the head (a body flit's route is not read). At the local port
  the source supplies it (it reads the chip's own row 0, as a network interface does).
  The copies are memories loaded at run time through ``table`` (one entry a cycle, written
  into the copies of the outputs named in its ``outs``), so any table
  ``models.common.netsim`` compiles (Algorithm 1's VC classes included) runs without
  regenerating Verilog. A head without a route (``valid`` 0 or a port >= P) waits: it came
  before its entry was loaded upstream and keeps waiting after it is, so load the tables
  before the traffic (the simulator refuses tables with such holes).
- **VC allocation** (cycle >= t + 1, heads without an output VC): a head routed to port 0 is
  allocated at once. Otherwise it requests the lowest VC of its range that no packet holds
  and whose credits cover the whole packet (virtual cut-through); each output VC grants one
  requester, round robin over requesters ``p * V + v`` starting after its last grant.
- **Switch allocation** (a later cycle), ``allocator="separable"``: each input port offers
  its first VC, round robin from after its last granted VC, that holds an output VC, has a
  flit and a credit of that output VC (port 0 needs none); each output grants one offering
  input port, round robin from after its last grant. ``allocator="wavefront"``: each input
  port requests every output port for which it has such a VC (the first in round-robin
  order), and a wrapped wave-front arbiter (``rtl.chronos.wwfa``) grants a maximal matching;
  its priority diagonal advances in every cycle in which some VC could send.
- **Traversal**: a granted flit leaves its input VC, takes a credit of its output VC and
  is registered onto the output. A tail releases its output VC, which may be allocated
  again in the next cycle.

Head flit across one router (delay-1 links)::

    cycle        t            t+1            t+2              t+3
    i[p]         head, route  -              -                -
    input VC     written      VC allocated   switch + cross,  -
                                             next route read
    o[q]         -            -              -                head and route (next: t)
    i[p].credit  -            -              -                high (slot freed at t+2)

Reset returns every register to its initial state (buffers empty, ``depth`` credits per output
VC, round-robin pointers at 0) and keeps the routing tables, which are memories.

Errors (``error``, sticky until ``clear``): bit 0 a table entry refused (port >= P, row >=
V, or for a link port a VC >= V or lo > hi, whatever its ``outs``; an ejection entry's VC
range is not read; nothing is written), bit 1 a head that came without a route (``valid``
0, a port >= P, or a link port with no VC: it waits, as in the simulator, and raises the bit again every cycle it
waits), bit 2 a head whose length is 0 or more than ``packet`` (one of 0 needs no
credit; one longer than ``packet`` is never VC-allocated and blocks its VC), bit 3 a
sender broke the credit protocol (a flit written into a full VC or on a VC >= V, a credit
on a VC >= V or beyond ``depth`` returned: it is dropped, the count stays at ``depth``),
bit 4 ``credit``
or any bit of ``credit_vc`` high on the ejection port (tie them to 0). A cause present in
cycle t sets its bit in t + 1 (``error`` in t + 1 is ``~clear & (error | cause)`` of t); an
unrouted head written in t waits from t + 1, so its bit is up in t + 2.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from .._util import check_params, eq_const, ge_const, not_elaborated, or_tree
from ..chronos.wwfa import rotation_counters, wave_grants

__all__ = ["Router", "flit_layout", "head_layout", "link_signature", "route_layout",
           "entry_layout", "table_layout", "vc_bits", "port_bits", "len_bits", "ALLOCATORS",
           "ERROR_BITS"]

ALLOCATORS = ("separable", "wavefront")
ERROR_BITS = {"table": 0, "no_route": 1, "length": 2, "protocol": 3, "eject_credit": 4}


def vc_bits(vcs):
    """Width of a VC number (at least 1)."""
    return max(1, ceil_log2(vcs))


def port_bits(ports):
    return max(1, ceil_log2(ports))


# The longest packet: a buffer slot holds the length one-hot (packet + 1 bits) beside the
# flit, so the cells grow with packet x depth (at packet 256 and depth 256, P = 5, V = 2,
# 7 times the router of binary lengths); a longer packet would store the length in binary
# and decode it once per input VC at the buffer head.
PACKET_MAX = 32


def len_bits(packet):
    """Width of a head's length field: lengths 0..packet."""
    return max(1, ceil_log2(packet + 1))


def flit_layout(vcs, data_width):
    return data.StructLayout({"head": 1, "tail": 1, "vc": vc_bits(vcs), "data": data_width})


def head_layout(dst_width, packet):
    """The low bits of a head flit's ``data``."""
    return data.StructLayout({"dst": dst_width, "length": len_bits(packet)})


def route_layout(ports, vcs):
    """The route a head takes at the router it is written into, carried beside it on the
    link: ``valid`` (0: no route), output ``port`` and the mask of output ``vcs`` it may
    take."""
    return data.StructLayout({"valid": 1, "port": port_bits(ports), "vcs": vcs})


def link_signature(vcs, data_width, ports):
    """One direction of a link, seen from its sender: flits and their routes out, credits
    back."""
    return wiring.Signature({
        "valid": Out(1),
        "flit": Out(flit_layout(vcs, data_width)),
        "route": Out(route_layout(ports, vcs)),
        "credit": In(1),
        "credit_vc": In(vc_bits(vcs)),
    })


def entry_layout(ports, vcs, dst_width):
    """A router's own routing-table entry: (row, dst) -> output port, VC range lo..hi."""
    return data.StructLayout({"row": vc_bits(vcs), "dst": dst_width, "port": port_bits(ports),
                              "vc_lo": vc_bits(vcs), "vc_hi": vc_bits(vcs)})


def table_layout(ports, vcs, dst_width):
    """An entry as a router loads it: an entry of the routers downstream of the outputs
    set in ``outs`` (bit q - 1: output q)."""
    return data.StructLayout({**entry_layout(ports, vcs, dst_width).members,
                              "outs": ports - 1})


# The helpers below return a Cat of one-bit Signals rather than one wide Signal: a wide
# Signal whose bits are partly plain copies of other wires and partly logic keeps its copied
# bits in the Verilog unused (Verilator's UNUSEDSIGNAL); one-bit Signals are each either
# logic or a copy, and Yosys drops the copies.

def _bits(m, exprs, name):
    """A Cat of one-bit Signals ``name<i>``, each driven by one expression."""
    out = []
    for i, x in enumerate(exprs):
        b = Signal(name=f"{name}{i}")
        m.d.comb += b.eq(x)
        out.append(b)
    return Cat(*out)


def _prefix_or(m, bits, name):
    """Inclusive prefix OR, ``out[i] = bits[0] | ... | bits[i]``, in log2 n levels of
    one-bit Signals (Kogge-Stone): a ripple chain would put n gates on the allocators' path."""
    cur = [bits[i] for i in range(len(bits))]
    d, level = 1, 0
    while d < len(cur):
        cur = cur[:d] + list(_bits(m, [cur[i] | cur[i - d] for i in range(d, len(cur))],
                                   f"{name}_p{level}_"))
        d, level = 2 * d, level + 1
    return cur


def _lowest(m, bits, name):
    """One-hot of the lowest set bit of ``bits``."""
    below = _prefix_or(m, bits, f"{name}_b")
    return _bits(m, [bits[0]] + [bits[i] & ~below[i - 1] for i in range(1, len(bits))],
                 f"{name}_")


def _after(m, onehot, name):
    """The bits strictly above the set bit of a one-hot (all 0 when it is the top bit or
    none is set)."""
    seen = _prefix_or(m, onehot, f"{name}_s")
    return Cat(Const(0, 1), *seen[:-1])


def _encode(m, onehot, width, name):
    """Index of the set bit of a one-hot (0 when none)."""
    exprs = []
    for b in range(width):
        bits = [onehot[i] for i in range(len(onehot)) if i >> b & 1]
        exprs.append(Cat(*bits).any() if bits else Const(0, 1))
    return _bits(m, exprs, f"{name}_")


def _decode(m, value, n, name):
    """One-hot of ``value`` over 0..n-1 (all 0 when ``value`` >= n)."""
    return _bits(m, [eq_const(value, k) for k in range(n)], f"{name}_")


def _pick(m, onehot, values, width):
    """The value whose one-hot bit is set (0 when none): an OR of gated values."""
    return or_tree(m, [Mux(onehot[i], values[i], 0) for i in range(len(values))], width)


def round_robin(m, req, mask, name):
    """Grant (one-hot) the first requester at or after the start, i.e. the x minimising
    (x - start) mod n as the simulator's allocators do. The start is kept as ``mask``, the
    requesters at or after it; after a grant g the next mask is :func:`_after` (g), the
    requesters after g (all 0 when g is the last, which picks as start 0 does)."""
    n = len(req)
    upper = Signal(n, name=f"{name}_up")
    use = Signal(n, name=f"{name}_use")
    m.d.comb += [upper.eq(req & mask), use.eq(Mux(upper.any(), upper, req))]
    return _lowest(m, use, f"{name}_g")


def _next(index, n):
    """(index + 1) mod n, as wide as ``index``."""
    return Mux(eq_const(index, n - 1), 0, (index + 1)[:len(index)])


class Router(wiring.Component):
    """VC router (see the module docstring for the protocol and the timing).

    Parameters (keyword-only)
    -------------------------
    ports : int, 5..16
        P: local + 4 mesh + rail ports.
    vcs : int, 1..8
        V virtual channels per port.
    depth : int, 2..256
        B flits of buffer per VC (and credits per output VC).
    data : int, 8..1024
        Flit payload width; a head's payload carries the destination and the length.
    dst_width : int, 1..16
        Destination width: up to 2**dst_width chips (11: 2,048, enough for 1,296).
    packet : int, 1..min(depth, 32)
        Longest packet in flits: virtual cut-through needs a VC buffer that holds a whole
        packet. At most :data:`PACKET_MAX`: every buffer slot carries its packet's length
        one-hot (``packet + 1`` bits, so the credit check is a gate), and each output VC
        as many "at least n credits" bits.
    allocator : "separable" or "wavefront"

    Members
    -------
    i : In(link_signature(vcs, data, ports)).array(ports)
        Input links (port 0: injection), heads with their routes here.
    o : Out(link_signature(vcs, data, ports)).array(ports)
        Output links (port 0: ejection, its route 0), heads with their routes at the next
        router.
    table : In(stream.Signature(table_layout(ports, vcs, dst_width)))
        Entries of the routing tables of the routers downstream, one per cycle (always
        ready), each written into the copies of the outputs set in its ``outs``.
    error : Out(5)
        Sticky error bits (:data:`ERROR_BITS`), cleared by ``clear``.
    clear : In(1)
    """

    def __init__(self, *, ports, vcs, depth, data, dst_width, packet, allocator="separable"):
        check_params(self, [("ports", ports, 5, 16), ("vcs", vcs, 1, 8),
                            ("depth", depth, 2, 256), ("data", data, 8, 1024),
                            ("dst_width", dst_width, 1, 16), ("packet", packet, 1, PACKET_MAX)])
        if allocator not in ALLOCATORS:
            not_elaborated(self)
            raise ValueError(f"Parameter 'allocator' must be one of {', '.join(ALLOCATORS)}, "
                             f"not {allocator!r}")
        if packet > depth:
            not_elaborated(self)
            raise ValueError(f"Parameter 'depth' must hold a whole packet under virtual "
                             f"cut-through: depth {depth} < packet {packet}")
        need = dst_width + len_bits(packet)
        if data < need:
            not_elaborated(self)
            raise ValueError(f"Parameter 'data' must hold a head's destination ({dst_width} "
                             f"bits) and length ({len_bits(packet)} bits): {data} < {need}")
        self.ports, self.vcs, self.depth, self.data = ports, vcs, depth, data
        self.dst_width, self.packet, self.allocator = dst_width, packet, allocator
        link = link_signature(vcs, data, ports)
        super().__init__({
            "i": In(link).array(ports),
            "o": Out(link).array(ports),
            "table": In(stream.Signature(table_layout(ports, vcs, dst_width))),
            "error": Out(len(ERROR_BITS)),
            "clear": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        P, V, B = self.ports, self.vcs, self.depth
        vb, pb, cb, lb = vc_bits(V), port_bits(P), ceil_log2(B + 2), len_bits(self.packet)
        hl = head_layout(self.dst_width, self.packet)
        err = {k: Signal(name=f"err_{k}") for k in ERROR_BITS}

        # ---- routing tables: the tables of the routers downstream (lookahead) ------------
        # Output q keeps a copy of the table of the router its link leads to, read with the
        # flits that cross to q: a head leaves with its route at that router, which then
        # reads it from its buffer instead of looking it up on arrival.
        rl = route_layout(P, V)
        e = self.table.payload
        good_entry = Signal()
        e_port = _decode(m, e.port, P, "tbl_port")
        e_lo = _decode(m, e.vc_lo, V, "tbl_lo")
        e_hi = _decode(m, e.vc_hi, V, "tbl_hi")
        # an ejection entry's VC range is not read: its mask is 0
        e_vcs = _bits(m, [~e_port[0] & Cat(*e_lo[:w + 1]).any() & Cat(*e_hi[w:]).any()
                          for w in range(V)], "tbl_vcs")
        m.d.comb += [
            self.table.ready.eq(1),
            good_entry.eq(e_port.any() & _decode(m, e.row, V, "tbl_row").any() &
                          (e_port[0] | (e_hi.any() & (e.vc_lo <= e.vc_hi)))),
            err["table"].eq(self.table.valid & ~good_entry),
        ]
        tables = [None]
        for q in range(1, P):
            tm = memory.Memory(shape=rl, depth=1 << (vb + self.dst_width), init=[])
            m.submodules[f"table{q}"] = tm
            twr = tm.write_port()
            m.d.comb += [twr.addr.eq(Cat(e.dst, e.row)),
                         twr.en.eq(self.table.valid & good_entry & e.outs[q - 1]),
                         twr.data.valid.eq(1), twr.data.port.eq(e.port),
                         twr.data.vcs.eq(e_vcs)]
            tables.append(tm)

        # ---- output side: credits and held output VCs ---------------------------------------
        # Port 0 (ejection) has no credits and no held VCs: constants stand in for them.
        credit = [None] + [[Signal(cb, name=f"cr{q}_{w}", init=B) for w in range(V)]
                           for q in range(1, P)]
        avail = [[Const(B, cb)] * V] + [[Signal(cb, name=f"av{q}_{w}") for w in range(V)]
                                        for q in range(1, P)]
        held = [Const(0, V)] + [Signal(V, name=f"held{q}") for q in range(1, P)]
        over = []
        backs = [None] + [[Signal(name=f"back{q}_{w}") for w in range(V)] for q in range(1, P)]
        for q in range(1, P):
            back_vc = _decode(m, self.o[q].credit_vc, V, f"crv{q}")
            for w in range(V):
                # a credit returned to a VC that already counts ``depth`` is surplus: flagged
                # and dropped, so the count never exceeds the downstream buffer
                back = backs[q][w]
                full = Signal(name=f"full{q}_{w}")
                m.d.comb += [back.eq(self.o[q].credit & back_vc[w]),
                             full.eq(eq_const(credit[q][w], B)),
                             avail[q][w].eq((credit[q][w] + (back & ~full))[:cb])]
                over.append(back & full)
            over.append(self.o[q].credit & ~back_vc.any())
        m.d.comb += err["eject_credit"].eq(self.o[0].credit | self.o[0].credit_vc.any())
        # ge[q][w][L]: output VC (q, w) counts at least L credits (L = 1 .. packet), registered
        # beside the count from its next value; "the credits now cover L" is then
        # ge[L] | (a credit back & ge[L - 1]), a gate instead of an adder and a comparison on
        # VC allocation's path (a count of B, where a credit back is dropped, has every ge)
        L = self.packet
        ge = [None] + [[[Const(1, 1)] + [Signal(name=f"ge{q}_{w}_{n}", init=int(B >= n))
                                         for n in range(1, L + 1)] for w in range(V)]
                       for q in range(1, P)]
        cover = [None] + [[[Const(1, 1)] + list(_bits(
            m, [ge[q][w][n] | (backs[q][w] & ge[q][w][n - 1]) for n in range(1, L + 1)],
            f"cov{q}_{w}_")) for w in range(V)] for q in range(1, P)]
        # has_credit[q][w]: output VC (q, w) can take a flit now, the credits covering one
        # flit: "at least 1" registered or a credit back, where the count's OR over its bits
        # was one more level at the head of switch allocation
        has_credit = [Const((1 << V) - 1, V)] + [Signal(V, name=f"hc{q}") for q in range(1, P)]
        for q in range(1, P):
            m.d.comb += has_credit[q].eq(Cat(*[cover[q][w][1] for w in range(V)]))

        # ---- input units ---------------------------------------------------------------------
        count = [[Signal(range(B + 1), name=f"cnt{p}_{v}") for v in range(V)] for p in range(P)]
        hptr = [[Signal(range(B), name=f"hp{p}_{v}") for v in range(V)] for p in range(P)]
        tptr = [[Signal(range(B), name=f"tp{p}_{v}") for v in range(V)] for p in range(P)]
        alloc = [[Signal(name=f"al{p}_{v}") for v in range(V)] for p in range(P)]
        oport = [[Signal(P, name=f"op{p}_{v}") for v in range(V)] for p in range(P)]  # one-hot
        ovc = [[Signal(V, name=f"ov{p}_{v}") for v in range(V)] for p in range(P)]    # one-hot
        front = [[None] * V for _ in range(P)]     # front flit (head, tail, data)
        route = [[None] * V for _ in range(P)]     # route and length of the front head
        wr_en = [Signal(V, name=f"we{p}") for p in range(P)]
        overflow, bad_len, bad_vc = [], [], []
        stored = data.StructLayout({"head": 1, "tail": 1, "data": self.data})
        meta = data.StructLayout({"valid": 1, "port": P, "vcs": V, "length": self.packet + 1})
        for p in range(P):
            link = self.i[p]
            f = link.flit
            head = data.View(hl, f.data[:hl.size])
            vc_oh = _decode(m, f.vc, V, f"in{p}_vc")
            m.d.comb += wr_en[p].eq(Mux(link.valid, vc_oh, 0))
            bad_vc.append(link.valid & ~vc_oh.any())
            too_long = [eq_const(head.length, k) for k in range(self.packet + 1, 1 << lb)]
            bad_len.append(link.valid & f.head & (~head.length.any() | Cat(*too_long).any()))
            # the route came with the head: stored beside it, read by VC allocation from
            # the cycle after (an output port beyond the last, or a link port without a VC,
            # is no route)
            r_port = _decode(m, link.route.port, P, f"in{p}_port")
            # the length one-hot (bit n: n flits; 0, flagged, needs no credit, as it did when
            # counted), a gate of VC allocation's cover check
            len_oh = _decode(m, head.length, self.packet + 1, f"in{p}_len")
            routed = link.route.valid & r_port.any() & (r_port[0] | link.route.vcs.any())
            looked = Cat(routed, r_port, link.route.vcs, len_oh)
            for v in range(V):
                overflow.append(wr_en[p][v] & eq_const(count[p][v], B))
                fm = memory.Memory(shape=stored, depth=B, init=[])
                mm = memory.Memory(shape=meta, depth=B, init=[])
                m.submodules[f"buf{p}_{v}"], m.submodules[f"meta{p}_{v}"] = fm, mm
                fw, fr = fm.write_port(), fm.read_port(domain="comb")
                mw, mr = mm.write_port(), mm.read_port(domain="comb")
                m.d.comb += [fw.addr.eq(tptr[p][v]), fw.en.eq(wr_en[p][v]),
                             fw.data.head.eq(f.head), fw.data.tail.eq(f.tail),
                             fw.data.data.eq(f.data), fr.addr.eq(hptr[p][v]),
                             mw.addr.eq(tptr[p][v]), mw.data.eq(looked),
                             mw.en.eq(wr_en[p][v] & f.head), mr.addr.eq(hptr[p][v])]
                front[p][v], route[p][v] = fr.data, mr.data

        # ---- VC allocation -------------------------------------------------------------------
        PV = P * V
        rq_valid = [Signal(name=f"rq{i}") for i in range(PV)]
        rq_vc = [None] * PV              # one-hot output VC requested
        to_local = [Signal(name=f"loc{i}") for i in range(PV)]
        no_route = []
        # output VC (q, w) free and its credits covering a packet of n flits, per n
        free_cover = [None] + [[_bits(m, [~held[q][w] & cover[q][w][n] for n in range(L + 1)],
                                      f"fc{q}_{w}_") for w in range(V)] for q in range(1, P)]
        for p in range(P):
            for v in range(V):
                i = p * V + v
                r = route[p][v]
                waiting = Signal(name=f"wait{i}")
                m.d.comb += waiting.eq(~alloc[p][v] & count[p][v].any() & front[p][v].head)
                no_route.append(waiting & ~r.valid)
                # the ejection port (to_local) needs no credit: only link ports are picked
                ok = _bits(m, [r.vcs[w] & Cat(*[r.port[q] & (r.length & free_cover[q][w]).any()
                                                for q in range(1, P)]).any()
                               for w in range(V)], f"ok{i}_")
                rq_vc[i] = _lowest(m, ok, f"rqv{i}")
                m.d.comb += [
                    to_local[i].eq(waiting & r.valid & r.port[0]),
                    rq_valid[i].eq(waiting & r.valid & ~r.port[0] & ok.any()),
                ]
        va_hits = [[] for _ in range(PV)]
        for q in range(1, P):
            for w in range(V):
                req = Signal(PV, name=f"var{q}_{w}")
                mask = Signal(PV, name=f"van{q}_{w}", init=(1 << PV) - 1)
                m.d.comb += req.eq(Cat(*[rq_valid[i] & route[i // V][i % V].port[q] &
                                         rq_vc[i][w] for i in range(PV)]))
                g = round_robin(m, req, mask, f"va{q}_{w}")
                for i in range(PV):
                    va_hits[i].append(g[i])
                with m.If(req.any()):
                    m.d.sync += [held[q][w].eq(1), mask.eq(_after(m, g, f"van{q}_{w}_n"))]
        for i in range(PV):
            p, v = divmod(i, V)
            with m.If(Cat(*va_hits[i]).any() | to_local[i]):
                m.d.sync += [alloc[p][v].eq(1), oport[p][v].eq(route[p][v].port),
                             ovc[p][v].eq(Mux(to_local[i], 1, rq_vc[i]))]

        # ---- switch allocation ---------------------------------------------------------------
        elig = [Signal(V, name=f"el{p}") for p in range(P)]
        for p in range(P):
            for v in range(V):
                credit_ok = Cat(*[oport[p][v][q] & (ovc[p][v] & has_credit[q]).any()
                                  for q in range(P)]).any()
                m.d.comb += elig[p][v].eq(alloc[p][v] & count[p][v].any() & credit_ok)
        sa_in = [Signal(V, name=f"sai{p}", init=(1 << V) - 1) for p in range(P)]
        chosen = [Signal(V, name=f"ch{p}") for p in range(P)]    # VC (one-hot) that crosses
        dest = [Signal(P, name=f"dst{p}") for p in range(P)]     # its output (one-hot)
        if self.allocator == "separable":
            offer = [round_robin(m, elig[p], sa_in[p], f"sin{p}") for p in range(P)]
            off_port = [Signal(P, name=f"ofp{p}") for p in range(P)]
            for p in range(P):
                m.d.comb += off_port[p].eq(_pick(m, offer[p], oport[p], P))
            for q in range(P):
                req = Signal(P, name=f"sar{q}")
                mask = Signal(P, name=f"sao{q}", init=(1 << P) - 1)
                m.d.comb += req.eq(Cat(*[off_port[p][q] for p in range(P)]))
                g = round_robin(m, req, mask, f"sa{q}")
                for p in range(P):
                    m.d.comb += dest[p][q].eq(g[p])
                with m.If(req.any()):
                    m.d.sync += mask.eq(_after(m, g, f"sao{q}_n"))
            for p in range(P):
                m.d.comb += chosen[p].eq(Mux(dest[p].any(), offer[p], 0))
        else:
            first = [[None] * P for _ in range(P)]       # first VC of p towards q (one-hot)
            rows = []
            for p in range(P):
                row = Signal(P, name=f"wfr{p}")
                for q in range(P):
                    towards = Signal(V, name=f"wft{p}_{q}")
                    m.d.comb += towards.eq(Cat(*[elig[p][v] & oport[p][v][q]
                                                 for v in range(V)]))
                    first[p][q] = round_robin(m, towards, sa_in[p], f"wf{p}_{q}")
                    m.d.comb += row[q].eq(towards.any())
                rows.append(row)
            any_elig = Signal()
            m.d.comb += any_elig.eq(Cat(*elig).any())
            rot = rotation_counters(m, P, advance=any_elig)
            grants = wave_grants(m, rows, rot)
            for p in range(P):
                m.d.comb += [dest[p].eq(grants[p]), chosen[p].eq(_pick(m, grants[p], first[p], V))]

        # ---- traversal: crossbar, buffers, credits ------------------------------------------
        leaving = [Signal(stored, name=f"lv{p}") for p in range(P)]
        lv_vc = [Signal(V, name=f"lvv{p}") for p in range(P)]    # its output VC (one-hot)
        for p in range(P):
            m.d.comb += [
                leaving[p].eq(_pick(m, chosen[p], [front[p][v].as_value() for v in range(V)],
                                    stored.size)),
                lv_vc[p].eq(_pick(m, chosen[p], ovc[p], V)),
            ]
            m.d.sync += self.i[p].credit.eq(chosen[p].any())
            if V > 1:
                m.d.sync += self.i[p].credit_vc.eq(_encode(m, chosen[p], vb, f"crd{p}"))
            else:
                m.d.comb += self.i[p].credit_vc.eq(0)
            with m.If(chosen[p].any()):
                m.d.sync += sa_in[p].eq(_after(m, chosen[p], f"sai{p}_n"))
            for v in range(V):
                with m.If(wr_en[p][v]):
                    m.d.sync += tptr[p][v].eq(_next(tptr[p][v], B))
                with m.If(chosen[p][v]):
                    m.d.sync += hptr[p][v].eq(_next(hptr[p][v], B))
                    with m.If(front[p][v].tail):
                        m.d.sync += alloc[p][v].eq(0)
                with m.If(wr_en[p][v] & ~chosen[p][v]):
                    m.d.sync += count[p][v].eq((count[p][v] + 1)[:len(count[p][v])])
                with m.Elif(~wr_en[p][v] & chosen[p][v]):
                    m.d.sync += count[p][v].eq((count[p][v] - 1)[:len(count[p][v])])
        for q in range(P):
            sel = Signal(P, name=f"xs{q}")
            m.d.comb += sel.eq(Cat(*[dest[p][q] for p in range(P)]))
            out = Signal(stored, name=f"xo{q}")
            out_vc = Signal(V, name=f"xv{q}")
            # the tail, which releases the output VC, on its own: an output nobody reads
            # (a stub in a mesh) then drops its whole data path
            out_tail = Signal(name=f"xt{q}")
            m.d.comb += [out.eq(_pick(m, sel, [lv.as_value() for lv in leaving], stored.size)),
                         out_vc.eq(_pick(m, sel, lv_vc, V)),
                         out_tail.eq(_pick(m, sel, [lv.tail for lv in leaving], 1))]
            link = self.o[q]
            m.d.sync += [link.valid.eq(sel.any()), link.flit.head.eq(out.head),
                         link.flit.tail.eq(out.tail), link.flit.data.eq(out.data)]
            if q == 0:
                m.d.comb += [link.flit.vc.eq(0), link.route.eq(0)]       # ejection
                continue
            out_vcn = _encode(m, out_vc, vb, f"xvb{q}") if V > 1 else Const(0, 1)
            if V == 1:
                m.d.comb += link.flit.vc.eq(0)
            else:
                m.d.sync += link.flit.vc.eq(out_vcn)
            # the next router's route of a head: its table read as the flit is registered
            # onto the link (a body flit's route is not read downstream)
            trd = tables[q].read_port()
            m.d.comb += [trd.addr.eq(Cat(out.data[:self.dst_width], out_vcn)),
                         link.route.eq(trd.data)]
            for w in range(V):
                sent = Signal(name=f"snt{q}_{w}")
                m.d.comb += sent.eq(sel.any() & out_vc[w])
                m.d.sync += credit[q][w].eq((avail[q][w] - sent)[:cb])
                for n in range(1, L + 1):
                    m.d.sync += ge[q][w][n].eq(Mux(sent, ge_const(avail[q][w], n + 1),
                                                   ge_const(avail[q][w], n)))
                with m.If(sent & out_tail):
                    m.d.sync += held[q][w].eq(0)

        # ---- errors --------------------------------------------------------------------------
        m.d.comb += [err["no_route"].eq(Cat(*no_route).any()),
                     err["length"].eq(Cat(*bad_len).any()),
                     err["protocol"].eq(Cat(*overflow, *bad_vc, *over).any())]
        for k, b in ERROR_BITS.items():      # bit by bit: a flag tied off stays one gate wide
            m.d.sync += self.error[b].eq(~self.clear & (self.error[b] | err[k]))
        return m
