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
  every VC has ``depth`` slots and starts with ``depth`` credits. When a flit of input p is
  granted the switch in cycle t, ``i[p].credit`` (with ``credit_vc``) is high in cycle
  t + 1. Port 0's credits tell the injecting source how full each local VC is.
- **Output**: a flit granted the switch in cycle t crosses it in t + 1 and is on ``o[q]``
  in cycle t + 2 with ``vc`` set to its output VC (0 on the ejection port). A credit
  arriving on ``o[q].credit`` in cycle t counts for the VC requests formed in cycle t (so a
  link of one cycle each way returns a slot freed downstream in cycle t to the upstream
  allocator in cycle t + 1, the simulator's delay-1 credit). The ejection port ``o[0]``
  needs no credit: a sink takes a flit every cycle. Flits of different packets may
  interleave on it (each is routed on its own input VC, as in the simulator); a sink tells
  them apart by their payload.

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
- **VC request** (formed in cycle c, for cycle c + 1): an input VC that has no output VC
  after cycle c and whose front after cycle c (the flit there now, the one behind it if
  the front is granted the switch in c, or the flit written in c into an empty VC) is a
  head with a route requests port 0 if it is routed there, else the lowest VC of its
  range that was free (no packet held it) at the start of cycle c and whose credits
  (those of cycle c, a credit arriving in c included) covered the whole packet (virtual
  cut-through; a head of length 0 counts as one flit). A head written in t thus has its
  request arbitrated from t + 1.
- **VC allocation** (cycle c + 1): a request for port 0 is granted at once; each output
  VC that is still free grants one of its requesters, round robin over requesters
  ``p * V + v`` starting after its last grant. (A free VC's credits only grow, so a
  request formed a cycle earlier still fits.)
- **Switch allocation** (the same cycle, speculating beside VC allocation): a VC requests
  its packet's output port if it holds an output VC and a flit written before this cycle
  (no credit check: VC allocation found credits for the whole packet), or if it has a VC
  request this cycle (speculative, port 0 or the route's port). ``allocator="separable"``:
  each input port offers its first requesting VC, round robin from after its last
  granted VC; each output grants one offering input port, round robin from after its last
  grant. ``allocator="wavefront"``: each input port requests every output port for which
  it has such a VC (the first in round-robin order), and a wrapped wave-front arbiter
  (``rtl.chronos.wwfa``) grants a maximal matching; its priority diagonal advances in
  every cycle in which some VC requests. Every grant advances the round-robin pointers.
  A speculative grant holds only where VC allocation cannot refuse the head in this
  cycle: it is routed to port 0, or it is the only requester of a free output VC (known
  from the requests, beside the arbiters); otherwise it is void (nothing moves) and the
  head, if VC-allocated, is granted the switch from the next cycle.
- **Grant** (cycle s, registered): the flit leaves its input VC's count, the input credit
  goes back (high in s + 1), and a tail releases the input VC, whose next head forms its
  request in s. Body flits follow one a cycle.
- **Traversal** (cycle s + 1): the flit is read (the buffers are synchronous-read
  memories read at the granted slot), crosses the crossbar and is registered onto the
  output (on ``o[q]`` in s + 2); its output VC's credit is taken, and a tail releases the
  output VC, free from cycle s + 2 (requested in s + 2, granted in s + 3).

Head flit across one router (delay-1 links)::

    cycle        t             t+1                t+2              t+3
    i[p]         head, route   -                  -                -
    input VC     written,      VC allocated,      read + cross,    -
                 VC request    switch granted     next route read,
                 formed        (speculatively)    output credit
    o[q]         -             -                  -                head and route (next: t)
    i[p].credit  -             -                  high             -

A credit arriving in cycle t lets a waiting head's request form in t, be granted in t + 1,
and the head is on the output in t + 3. Between a tail and the next packet on the same
output VC that VC is idle for two cycles (the tail granted in s crosses in s + 1; the VC
is free from s + 2, requested in s + 2, granted in s + 3).

Reset returns every register to its initial state (buffers empty, ``depth`` credits per output
VC, round-robin pointers at 0) and keeps the routing tables, which are memories.

Errors (``error``, sticky until ``clear``): bit 0 a table entry refused (port >= P, row >=
V, or for a link port a VC >= V or lo > hi, whatever its ``outs``; an ejection entry's VC
range is not read; nothing is written), bit 1 a head that came without a route (``valid``
0, a port >= P, or a link port with no VC: it waits, as in the simulator, and raises the bit again every cycle it
waits), bit 2 a head whose length is 0 or more than ``packet`` (one of 0 is allocated
as one of 1 flit; one longer than ``packet`` is never VC-allocated to a link port and
blocks its VC, while port 0 takes it; a
packet with more flits than its head says is not checked: switch allocation trusts the
length VC allocation covered, and the router downstream flags the overflow), bit 3 a
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


# The longest packet: a buffer slot holds the length in binary beside the flit, and each
# output VC the longest packet its credits cover (twice: with and without a credit back),
# so lengths cost log2(packet) bits each; the bound keeps the verified range.
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
    m.d.comb += upper.eq(req & mask)
    # the lowest of each side by side, then one multiplexer: the OR over the masked
    # requests is not in series with the prefix chain
    lo_up = _lowest(m, upper, f"{name}_gu")
    lo_all = _lowest(m, req, f"{name}_ga")
    return _bits(m, [Mux(upper.any(), lo_up[i], lo_all[i]) for i in range(n)], f"{name}_g")


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
        packet. At most :data:`PACKET_MAX`.
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
        # fits[q][w][b]: the longest packet (at most ``packet`` flits) output VC (q, w) has
        # credits for, b = 0 without and b = 1 with a credit back in this cycle; both are
        # registered beside the count from its next value, so "the credits now cover n" is
        # a multiplexer and a comparison of a few bits instead of an adder on VC
        # allocation's path (a count of B, where a credit back is dropped, fits ``packet``)
        L = self.packet
        fits = [None] + [[[Signal(range(L + 1), name=f"fit{q}_{w}_{b}", init=L)
                           for b in range(2)] for w in range(V)] for q in range(1, P)]
        # ---- input units ---------------------------------------------------------------------
        # count and nonempty are counted at switch-allocation grant time; the flit leaves the
        # buffer (a synchronous read at the granted slot) in the cycle after its grant
        count = [[Signal(range(B + 1), name=f"cnt{p}_{v}") for v in range(V)] for p in range(P)]
        nonempty = [[Signal(name=f"ne{p}_{v}") for v in range(V)] for p in range(P)]
        hptr = [[Signal(range(B), name=f"hp{p}_{v}") for v in range(V)] for p in range(P)]
        tptr = [[Signal(range(B), name=f"tp{p}_{v}") for v in range(V)] for p in range(P)]
        alloc = [[Signal(name=f"al{p}_{v}") for v in range(V)] for p in range(P)]
        # the output port (one-hot) of the packet at the front: its head's route, kept while
        # its body flits follow (switch allocation's request, speculative or not)
        oport = [[Signal(P, name=f"op{p}_{v}") for v in range(V)] for p in range(P)]
        ovc = [[Signal(V, name=f"ov{p}_{v}") for v in range(V)] for p in range(P)]    # one-hot
        front = [[None] * V for _ in range(P)]     # front flit's head and tail (allocation)
        rdata = [[None] * V for _ in range(P)]     # the slot read at the last grant (traversal)
        route = [[None] * V for _ in range(P)]     # route and length of the front head
        wr_en = [Signal(V, name=f"we{p}") for p in range(P)]
        overflow, bad_len, bad_vc = [], [], []
        stored = data.StructLayout({"head": 1, "tail": 1, "data": self.data})
        meta = data.StructLayout({"head": 1, "tail": 1, "valid": 1, "port": P, "vcs": V,
                                  "length": lb})
        hp1 = [[Signal(range(B), name=f"hq{p}_{v}", init=1 % B) for v in range(V)]
               for p in range(P)]
        nxt = [[None] * V for _ in range(P)]
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
            # a head of length 0 (flagged) is allocated as one of 1 flit, so that every flit
            # of an allocated packet has a credit and switch allocation checks none
            length = Signal(lb, name=f"in{p}_len")
            m.d.comb += length.eq(Mux(head.length.any(), head.length, 1))
            routed = link.route.valid & r_port.any() & (r_port[0] | link.route.vcs.any())
            looked = Cat(f.head, f.tail, routed, r_port, link.route.vcs, length)
            for v in range(V):
                overflow.append(wr_en[p][v] & eq_const(count[p][v], B))
                fm = memory.Memory(shape=stored, depth=B, init=[])
                mm = memory.Memory(shape=meta, depth=B, init=[])
                m.submodules[f"buf{p}_{v}"], m.submodules[f"meta{p}_{v}"] = fm, mm
                fw, fr = fm.write_port(), fm.read_port()
                mw, mr = mm.write_port(), mm.read_port(domain="comb")
                # the front's flags and route, registered: the next one read ahead at
                # hptr + 1, or the flit written into the slot that becomes the front
                fmeta = Signal(meta, name=f"fm{p}_{v}")
                m.d.comb += [fw.addr.eq(tptr[p][v]), fw.en.eq(wr_en[p][v]),
                             fw.data.head.eq(f.head), fw.data.tail.eq(f.tail),
                             fw.data.data.eq(f.data), fr.addr.eq(hptr[p][v]),
                             mw.addr.eq(tptr[p][v]), mw.data.eq(looked),
                             mw.en.eq(wr_en[p][v]), mr.addr.eq(hp1[p][v])]
                nxt[p][v] = (fmeta, looked, mr.data)
                front[p][v], rdata[p][v], route[p][v] = fmeta, fr.data, fmeta

        # ---- VC allocation -------------------------------------------------------------------
        # in two halves: a VC's request is formed in the cycle before it is arbitrated, for
        # the head that is then its front (the one there now, the one read ahead, or the
        # one being written), from this cycle's held bits and credits; the arbiter grants
        # it if the output VC is still free (a free VC's credits only grow)
        PV = P * V
        RQ = (P - 1) * V + 1             # bit (q - 1) * V + w: output VC (q, w); last: port 0
        no_route = []
        # the longest packet output VC (q, w) takes now: 0 while a packet holds it
        free_fit = [None] + [[Signal(range(L + 1), name=f"ff{q}_{w}") for w in range(V)]
                             for q in range(1, P)]
        for q in range(1, P):
            for w in range(V):
                m.d.comb += free_fit[q][w].eq(Mux(held[q][w], 0,
                                                  Mux(backs[q][w], fits[q][w][1], fits[q][w][0])))

        def form(r, name):
            """The request of a front flit with meta ``r`` (0 unless it is a routed head):
            the lowest VC of its range free and covering the packet, or port 0."""
            room = [or_tree(m, [Mux(r.port[q], free_fit[q][w], 0) for q in range(1, P)], lb)
                    for w in range(V)]
            ok = _bits(m, [r.vcs[w] & (r.length <= room[w]) for w in range(V)], f"{name}_ok")
            low = _lowest(m, ok, f"{name}_lo")
            go_ = r.head & r.valid
            rq = _bits(m, [go_ & r.port[q] & low[w] for q in range(1, P) for w in range(V)]
                       + [go_ & r.port[0]], f"{name}_rq")
            # "has a request" beside the request, from ``ok`` and not after the lowest VC
            return rq, go_ & (r.port[0] | ok.any())

        vreq = [[Signal(RQ, name=f"vq{p}_{v}") for v in range(V)] for p in range(P)]
        vany = [[Signal(name=f"va{p}_{v}") for v in range(V)] for p in range(P)]   # vreq != 0
        for p in range(P):
            for v in range(V):
                i = p * V + v
                waiting = Signal(name=f"wait{i}")
                m.d.comb += waiting.eq(~alloc[p][v] & nonempty[p][v] & front[p][v].head)
                no_route.append(waiting & ~route[p][v].valid)
        va_hits = [[] for _ in range(PV)]
        alone = [[] for _ in range(PV)]   # the only requester of a free output VC
        for q in range(1, P):
            for w in range(V):
                mask = Signal(PV, name=f"van{q}_{w}", init=(1 << PV) - 1)
                req = _bits(m, [vreq[i // V][i % V][(q - 1) * V + w] & ~alloc[i // V][i % V] &
                                ~held[q][w] for i in range(PV)], f"var{q}_{w}_")
                g = round_robin(m, req, mask, f"va{q}_{w}")
                below = _prefix_or(m, req, f"vab{q}_{w}")
                above = _prefix_or(m, req[::-1], f"vaa{q}_{w}")[::-1]
                for i in range(PV):
                    va_hits[i].append(g[i])
                    others = [x for x in (below[i - 1] if i else None,
                                          above[i + 1] if i + 1 < PV else None) if x is not None]
                    alone[i].append(req[i] & ~Cat(*others).any() if others else req[i])
                with m.If(req.any()):
                    m.d.sync += [held[q][w].eq(1), mask.eq(_after(m, g, f"van{q}_{w}_n"))]
        won = [[Signal(name=f"won{p}_{v}") for v in range(V)] for p in range(P)]
        # a speculative switch grant holds for a head VC allocation cannot refuse: routed to
        # port 0, or the only requester of a free output VC (known before the arbiters end)
        sure = [[Signal(name=f"sure{p}_{v}") for v in range(V)] for p in range(P)]
        for i in range(PV):
            p, v = divmod(i, V)
            loc = vreq[p][v][RQ - 1] & ~alloc[p][v]
            m.d.comb += [won[p][v].eq(Cat(*va_hits[i]).any() | loc),
                         sure[p][v].eq(Cat(*alone[i]).any() | loc)]
            with m.If(won[p][v]):
                m.d.sync += [alloc[p][v].eq(1),
                             ovc[p][v].eq(Mux(loc, 1, Cat(*[
                                 Cat(*[vreq[p][v][(q - 1) * V + w] for q in range(1, P)]).any()
                                 for w in range(V)])))]

        # ---- switch allocation (speculative beside VC allocation), grants registered -----
        # an allocated VC with a flit requests its output port; a head waiting for VC
        # allocation requests its route's port in the same cycle, and its grant holds only
        # if VC allocation grants it too (a void grant moves nothing but the round-robin
        # pointers). No credit check: VC allocation found credits for the whole packet.
        elig = [_bits(m, [alloc[p][v] & nonempty[p][v] | ~alloc[p][v] & vany[p][v]
                          for v in range(V)], f"el{p}_") for p in range(P)]
        want = oport
        sa_in = [Signal(V, name=f"sai{p}", init=(1 << V) - 1) for p in range(P)]
        chosen = [Signal(V, name=f"ch{p}") for p in range(P)]    # VC (one-hot) granted
        dest = [Signal(P, name=f"dst{p}") for p in range(P)]     # its output (one-hot)
        if self.allocator == "separable":
            offer = [round_robin(m, elig[p], sa_in[p], f"sin{p}") for p in range(P)]
            off_port = [Signal(P, name=f"ofp{p}") for p in range(P)]
            for p in range(P):
                m.d.comb += off_port[p].eq(_pick(m, offer[p], want[p], P))
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
                    towards = _bits(m, [elig[p][v] & want[p][v][q] for v in range(V)],
                                    f"wft{p}_{q}_")
                    first[p][q] = round_robin(m, towards, sa_in[p], f"wf{p}_{q}")
                    m.d.comb += row[q].eq(towards.any())
                rows.append(row)
            any_elig = Signal()
            m.d.comb += any_elig.eq(Cat(*elig).any())
            rot = rotation_counters(m, P, advance=any_elig)
            grants = wave_grants(m, rows, rot)
            for p in range(P):
                m.d.comb += [dest[p].eq(grants[p]), chosen[p].eq(_pick(m, grants[p], first[p], V))]

        # ---- grant time: buffers, input credits ----------------------------------------------
        # the grant holds for an allocated VC, or a head VC-allocated in this cycle
        go = []
        g_vc = [Signal(V, name=f"gv{p}") for p in range(P)]      # registered: VC that crosses
        g_dst = [Signal(P, name=f"gd{p}") for p in range(P)]     # registered: its output
        for p in range(P):
            go.append(_bits(m, [chosen[p][v] & (alloc[p][v] | sure[p][v]) for v in range(V)],
                            f"go{p}_"))
            m.d.sync += [g_vc[p].eq(go[p]), g_dst[p].eq(dest[p])]
            m.d.comb += self.i[p].credit.eq(g_vc[p].any())
            if V > 1:
                m.d.comb += self.i[p].credit_vc.eq(_encode(m, g_vc[p], vb, f"crd{p}"))
            else:
                m.d.comb += self.i[p].credit_vc.eq(0)
            with m.If(chosen[p].any()):
                m.d.sync += sa_in[p].eq(_after(m, chosen[p], f"sai{p}_n"))
            for v in range(V):
                one = Signal(name=f"one{p}_{v}")
                m.d.comb += one.eq(eq_const(count[p][v], 1))
                with m.If(wr_en[p][v]):
                    m.d.sync += tptr[p][v].eq(_next(tptr[p][v], B))
                # the front's meta and request next cycle: one value if the VC's grant
                # holds, one if not, chosen by the grant last (the write is known early)
                fmeta, looked, ahead = nxt[p][v]
                in_go, in_stay = Signal(name=f"ig{p}_{v}"), Signal(name=f"is{p}_{v}")
                m.d.comb += [in_go.eq(wr_en[p][v] & one), in_stay.eq(wr_en[p][v] & ~nonempty[p][v])]
                fm_go = Signal(meta, name=f"fmg{p}_{v}")
                fm_stay = Signal(meta, name=f"fms{p}_{v}")
                vq_go, vq_stay = Signal(RQ, name=f"vqg{p}_{v}"), Signal(RQ, name=f"vqs{p}_{v}")
                vn_go, vn_stay = Signal(name=f"vng{p}_{v}"), Signal(name=f"vns{p}_{v}")
                # the request is formed once per case from that case's front (the meta is
                # chosen before the credit check, by the early write and count)
                m.d.comb += [fm_go.eq(Mux(in_go, looked, ahead)),
                             fm_stay.eq(Mux(in_stay, looked, fmeta))]
                (f_go, a_go), (f_st, a_st) = form(fm_go, f"fg{p}_{v}"), form(fm_stay, f"fs{p}_{v}")
                some_go, some_st = in_go | ~one, in_stay | nonempty[p][v]
                m.d.comb += [vq_go.eq(Mux(some_go, f_go, 0)), vn_go.eq(some_go & a_go),
                             vq_stay.eq(Mux(some_st, f_st, 0)), vn_stay.eq(some_st & a_st)]
                # the front's meta after the grant: both candidates registered and the
                # grant with them, chosen after the registers (the grant drives one flop
                # here instead of the meta's every bit)
                fm_g_r = Signal(meta, name=f"fmgr{p}_{v}")
                fm_s_r = Signal(meta, name=f"fmsr{p}_{v}")
                fm_sel = Signal(name=f"fmsel{p}_{v}")
                m.d.comb += fmeta.eq(Mux(fm_sel, fm_g_r.as_value(), fm_s_r.as_value()))
                m.d.sync += [fm_g_r.eq(fm_go), fm_s_r.eq(fm_stay), fm_sel.eq(go[p][v]),
                             oport[p][v].eq(Mux(go[p][v],
                                                Mux(fm_go.head & (in_go | ~one), fm_go.port,
                                                    oport[p][v]),
                                                Mux(fm_stay.head & (in_stay | nonempty[p][v]),
                                                    fm_stay.port, oport[p][v]))),
                             vreq[p][v].eq(Mux(go[p][v], vq_go, vq_stay)),
                             vany[p][v].eq(Mux(go[p][v], vn_go, vn_stay))]
                with m.If(go[p][v]):
                    m.d.sync += [hptr[p][v].eq(hp1[p][v]), hp1[p][v].eq(_next(hp1[p][v], B))]
                    with m.If(front[p][v].tail):
                        m.d.sync += alloc[p][v].eq(0)
                # the count's next value in either case, chosen by the grant last
                c_go = Signal.like(count[p][v], name=f"cg{p}_{v}")
                c_stay = Signal.like(count[p][v], name=f"cs{p}_{v}")
                m.d.comb += [c_go.eq(Mux(wr_en[p][v], count[p][v],
                                         (count[p][v] - 1)[:len(count[p][v])])),
                             c_stay.eq(Mux(wr_en[p][v], (count[p][v] + 1)[:len(count[p][v])],
                                           count[p][v]))]
                m.d.sync += count[p][v].eq(Mux(go[p][v], c_go, c_stay))
                m.d.sync += nonempty[p][v].eq(wr_en[p][v] | nonempty[p][v] &
                                              ~(go[p][v] & one))

        # ---- traversal (the cycle after the grant): crossbar, output credits -----------------
        leaving = [Signal(stored, name=f"lv{p}") for p in range(P)]
        lv_vc = [Signal(V, name=f"lvv{p}") for p in range(P)]    # its output VC (one-hot)
        for p in range(P):
            m.d.comb += [
                leaving[p].eq(_pick(m, g_vc[p], [rdata[p][v].as_value() for v in range(V)],
                                    stored.size)),
                lv_vc[p].eq(_pick(m, g_vc[p], ovc[p], V)),
            ]
        for q in range(P):
            sel = Signal(P, name=f"xs{q}")
            m.d.comb += sel.eq(Cat(*[g_dst[p][q] & g_vc[p].any() for p in range(P)]))
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
                a = avail[q][w]
                # the count less one, the count, the count plus one (unsigned: less one is
                # plus all ones), each clamped at the longest packet
                less = (a + Const((1 << cb) - 1, cb))[:lb]
                clamp = [Mux(ge_const(a, L + 1 - k), L, x)
                         for k, x in enumerate((less, a[:lb], (a + 1)[:lb]))]
                m.d.sync += [fits[q][w][0].eq(Mux(sent, clamp[0], clamp[1])),
                             fits[q][w][1].eq(Mux(sent, clamp[1], clamp[2]))]
                with m.If(sent & out_tail):
                    m.d.sync += held[q][w].eq(0)

        # ---- errors --------------------------------------------------------------------------
        m.d.comb += [err["no_route"].eq(Cat(*no_route).any()),
                     err["length"].eq(Cat(*bad_len).any()),
                     err["protocol"].eq(Cat(*overflow, *bad_vc, *over).any())]
        for k, b in ERROR_BITS.items():      # bit by bit: a flag tied off stays one gate wide
            m.d.sync += self.error[b].eq(~self.clear & (self.error[b] | err[k]))
        return m
