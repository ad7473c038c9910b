"""Formal harness of the RailX chip router (:mod:`rtl.railx.router`).

The harness is the router's neighbourhood as its docstring specifies it: senders that hold a
credit for a VC before they send on it (``depth`` per VC at reset, one back per flit that
leaves) and send well-formed packets (head with a length 1..``packet``, that many flits
contiguous on one VC, the last a tail); downstream buffers of ``depth`` flits per output VC
that return a credit for a flit they hold, on any later cycle; beside every head any route
(lookahead routing: a head arrives with the route upstream looked up for it, and nothing in
the router can assume where that came from: the local port's from the source, an edge
port's from another node, a table reloaded while traffic runs), and any entries of the
tables downstream, loaded at any time. Promises:

- ``no_flit_into_full_vc``: no flit is sent into a downstream VC that is full;
- ``credits_returned_le_taken``: the router returns a credit only for a flit it took (per
  input VC, credits returned <= flits taken);
- ``no_protocol_error``: under such senders the protocol error bit never rises;
- ``packets_contiguous``: on every link port, the flits of one VC form whole packets, head
  first, ``length`` flits, tail last (no interleaving within a VC);
- ``vct_whole_packet_credit``: a head leaves only when the downstream VC has room for the
  whole packet (virtual cut-through).

These five by bounded model check of 8 cycles (steps 0..7), the router built at depth 3, not
a power of two. A head written in cycle t is on its output in t + 3 (VC allocation and a
speculative switch grant in t + 1, the crossing in t + 2, the output register), and an
output VC is free again two cycles after its packet's tail was granted: the head of a second
packet on one downstream VC arrives 4 cycles after the first head at the earliest, at step
7, and its tail, the fourth flit into a VC of three, at step 8. The negative controls of
``no_flit_into_full_vc`` and ``vct_whole_packet_credit`` therefore run 9 steps and check the
last one only (``mutant_skip``: the solver did not end step 7 of either planted bug in 2 to
5 minutes; it finds each counter-example at step 8 in seconds). The proofs stay at 8 steps,
and on this router the three deep ones (``no_flit_into_full_vc``, ``packets_contiguous``,
``vct_whole_packet_credit``) take their step 7 from minutes to beyond an hour
(docs/blocks.md has the runs; ``make formal`` gives a job 30 minutes). A ninth step was not
tried. Those
three keep the buffer memories as registers and the design synthesised to gates before it
becomes SMT (``--nomem --syn``, :data:`ENGINE`): the same circuit, another encoding, which
ended in seconds on the router with combinational grants.

- ``fits_are_the_count``: each output VC's two registered "longest packet the credits cover"
  values (VC allocation's cover check, without and with a credit back in the cycle) equal
  min(count, packet) and min(count + 1, packet), in every cycle (8 cycles of BMC, as the
  five: its k-induction needs the router never to send without a credit, which needs what
  the last paragraph names). It runs with the memories as arrays (no ``ENGINE`` options):
  with the separable allocator the solver ended in 172 s that way and in 487 s as gates;
  with the wave-front allocator it did not end in 300 s (as gates not tried). The five do
  not reach, in 8 cycles, a wrong value that changes a decision.

The error flags, each in both directions (:func:`build_flags`: every input free, the causes
computed by the harness): ``table_flag_exact``, ``length_flag_exact``,
``protocol_flag_exact`` and ``eject_credit_flag_exact`` -- the bit in t + 1 is
``~clear & (bit | cause)`` of t, so it rises on its violation and never otherwise. The
no-route bit has no such property: its cause is a head without a route at the front of its
VC, and which flit is at the front is in the buffer memories, which the harness cannot read. k-induction with the conservation invariants the harness carries (the credit
counter of every output VC plus the downstream occupancy is ``depth``; every input VC's fill
plus its credit on the wire is what the sender counts as outstanding) does not close: it
also needs the buffered route entries (in the buffers' meta memories) to name one port and
one VC, which a harness cannot state about memory contents from outside the block.
"""

from amaranth.hdl import Assume, Cat, Module, Mux, Signal

from . import Harness, Property, any_seq, block_module, elaborate, named

MODULE = "aifabric.rtl.railx.router"


def _top(mod, params):
    """The router in a top module, its routing table and ``clear`` free; returns the router,
    its elaborated fragment, the top, the length field's width and offset and the width of
    the harness's fill counts."""
    dut = mod.Router(**params)
    frag = elaborate(dut)
    m = Module()
    m.submodules.dut = frag
    tp = dut.table.payload.as_value()
    m.d.comb += [dut.table.valid.eq(any_seq(1)), tp.eq(any_seq(len(tp))),
                 dut.clear.eq(any_seq(1))]
    return (dut, frag, m, mod.len_bits(params["packet"]), params["dst_width"],
            (params["depth"] + 1).bit_length() + 1)


def _free_input(m, link, dw, lb):
    """Drive an input link (flit and route) with free values; returns its flit and a head's
    length field."""
    f = link.flit
    fv, rv = f.as_value(), link.route.as_value()
    m.d.comb += [link.valid.eq(any_seq(1)), fv.eq(any_seq(len(fv))), rv.eq(any_seq(len(rv)))]
    return f, f.data[dw:dw + lb]


def build(params, mutant_spec=None):
    mod = block_module(MODULE, mutant_spec)
    P, V, B = params["ports"], params["vcs"], params["depth"]
    dut, frag, m, lb, dw, ob = _top(mod, params)

    invariants = []
    # ---- senders: credit-respecting, well-formed packets, any route beside a head
    ok_credit = []
    for p in range(P):
        link = dut.i[p]
        f, length = _free_input(m, link, dw, lb)
        for v in range(V):
            occ = Signal(ob, name=f"h_in{p}_{v}")          # flits sent - credits back
            rem = Signal(lb, name=f"h_rem{p}_{v}")          # flits left of the open packet
            send = link.valid & (f.vc == v)
            back = link.credit & (link.credit_vc == v)
            m.d.sync += occ.eq(occ + send - back)
            ok_credit.append(~back | (occ != 0))
            m.d.comb += Assume(~send | (occ < B))
            m.d.comb += Assume(~send | (f.head == (rem == 0)))
            with m.If(send & f.head):
                m.d.comb += Assume((length >= 1) & (length <= params["packet"]))
                m.d.comb += Assume(f.tail == (length == 1))
                m.d.sync += rem.eq(length - 1)
            with m.Elif(send):
                m.d.comb += Assume(f.tail == (rem == 1))
                m.d.sync += rem.eq(rem - 1)
            cnt = named(frag, f"cnt{p}_{v}")
            invariants += [occ == cnt + back, occ <= B, cnt <= B]
            # an allocated input VC holds one output port and one output VC
            for x in (named(frag, f"op{p}_{v}"), named(frag, f"ov{p}_{v}")):
                invariants.append((x & (x - 1)) == 0)
        m.d.comb += Assume(~link.valid | (f.vc < V))

    # ---- downstream buffers
    no_full, contiguous, vct, cover = [], [], [], []
    m.d.comb += [dut.o[0].credit.eq(0), dut.o[0].credit_vc.eq(0)]
    for q in range(1, P):
        link = dut.o[q]
        f = link.flit
        cv = Signal(1, name=f"h_cr{q}")
        cvc = Signal(len(link.credit_vc), name=f"h_crvc{q}")
        m.d.comb += [cv.eq(any_seq(1)), cvc.eq(any_seq(len(cvc))),
                     link.credit.eq(cv), link.credit_vc.eq(cvc)]
        m.d.comb += Assume(~cv | (cvc < V))
        length = f.data[dw:dw + lb]
        for w in range(V):
            occ = Signal(ob, name=f"h_out{q}_{w}")
            rem = Signal(lb, name=f"h_orem{q}_{w}")
            arrive = link.valid & (f.vc == w)
            back = cv & (cvc == w)
            m.d.comb += Assume(~back | (occ != 0))
            m.d.sync += occ.eq(occ + arrive - back)
            no_full.append(~arrive | (occ < B))
            vct.append(~(arrive & f.head) | (occ + length <= B))
            contiguous.append(~arrive | (f.head == (rem == 0)))
            contiguous.append(~(arrive & f.head) | (f.tail == (length == 1)))
            contiguous.append(~(arrive & ~f.head) | (f.tail == (rem == 1)))
            with m.If(arrive & f.head):
                m.d.sync += rem.eq(length - 1)
            with m.Elif(arrive):
                m.d.sync += rem.eq(rem - 1)
            cr = named(frag, f"cr{q}_{w}")
            invariants += [cr + occ + arrive == B, occ <= B, cr <= B]
            L = params["packet"]
            # the longest packet the credits cover, without and with a credit back
            cover += [named(frag, f"fit{q}_{w}_{b}") == Mux(cr + b >= L, L, cr + b)
                      for b in range(2)]

    checks = {
        "no_flit_into_full_vc": Cat(*no_full).all(),
        "credits_returned_le_taken": Cat(*ok_credit).all(),
        "no_protocol_error": ~dut.error[3],
        "packets_contiguous": Cat(*contiguous).all(),
        "vct_whole_packet_credit": Cat(*vct).all(),
        "fits_are_the_count": Cat(*cover).all(),
    }
    return Harness(m, checks, invariants)


def build_flags(params, mutant_spec=None):
    """Every input free (no sender or receiver keeps the protocol), the flags' causes
    computed by the harness from the ports alone, the block's sticky ``error`` compared bit
    for bit with what they promise: ``error`` in t + 1 is ``~clear & (error | cause)`` of
    cycle t, so each bit rises on its violation and never otherwise. The harness keeps its
    own count of each input VC's fill (flits written - credits returned) and each output
    VC's downstream fill (flits sent - credits taken; a surplus credit, returned to an
    output VC with nothing downstream, is dropped by the block and by the count). A flit
    written into a full VC leaves the block's buffers undefined, so the protocol bit is
    compared up to the cycle after the first one (the one where it must rise)."""
    mod = block_module(MODULE, mutant_spec)
    P, V, B = params["ports"], params["vcs"], params["depth"]
    dut, _, m, lb, dw, ob = _top(mod, params)
    for q in range(P):
        link = dut.o[q]
        m.d.comb += [link.credit.eq(any_seq(1)), link.credit_vc.eq(any_seq(len(link.credit_vc)))]
    e = dut.table.payload
    refused = dut.table.valid & ((e.port >= P) | (e.row >= V) |
                                 ((e.port != 0) & ((e.vc_hi >= V) | (e.vc_lo > e.vc_hi))))
    bad_len, protocol, overflow = [], [], []
    for p in range(P):
        link = dut.i[p]
        f, length = _free_input(m, link, dw, lb)
        bad_len.append(link.valid & f.head & ((length == 0) | (length > params["packet"])))
        protocol.append(link.valid & (f.vc >= V))
        for v in range(V):
            occ = Signal(ob, name=f"f_in{p}_{v}")       # flits written - credits returned
            send = link.valid & (f.vc == v)
            back = link.credit & (link.credit_vc == v)
            m.d.sync += occ.eq(occ + send - back)
            overflow.append(send & (occ - back == B))
    for q in range(1, P):
        link = dut.o[q]
        protocol.append(link.credit & (link.credit_vc >= V))
        for w in range(V):
            occ = Signal(ob, name=f"f_out{q}_{w}")      # flits downstream, not yet freed
            arrive = link.valid & (link.flit.vc == w)
            back = link.credit & (link.credit_vc == w)
            surplus = back & (occ == 0) & ~arrive
            m.d.sync += occ.eq(occ + arrive - (back & ~surplus))
            protocol.append(surplus)
    cause = {
        "table": refused,
        "length": Cat(*bad_len).any(),
        "protocol": Cat(*protocol, *overflow).any(),
        "eject_credit": dut.o[0].credit | (dut.o[0].credit_vc != 0),
    }
    seen, old = Signal(name="f_overflowed"), Signal(name="f_overflowed_before")
    m.d.sync += [seen.eq(seen | Cat(*overflow).any()), old.eq(seen)]
    checks = {}
    for k, c in cause.items():
        b = mod.ERROR_BITS[k]
        want = Signal(name=f"f_want_{k}")
        m.d.sync += want.eq(~dut.clear & (dut.error[b] | c))
        exact = dut.error[b] == want
        checks[f"{k}_flag_exact"] = exact | old if k == "protocol" else exact
    return Harness(m, checks)


MUTANTS = {
    # a flit that crosses the switch takes no credit of its output VC
    "no_flit_into_full_vc": ("m.d.sync += credit[q][w].eq((avail[q][w] - sent)[:cb])",
                             "m.d.sync += credit[q][w].eq(avail[q][w][:cb])"),
    # the credit goes back for a void (speculative) grant too
    "credits_returned_le_taken": ("m.d.comb += self.i[p].credit.eq(g_vc[p].any())",
                                  "m.d.comb += self.i[p].credit.eq(g_dst[p].any())"),
    # a credit that brings an output VC back to B is taken for one beyond B
    "no_protocol_error": ("full.eq(eq_const(credit[q][w], B)),",
                          "full.eq(eq_const(credit[q][w], B - 1)),"),
    # virtual cut-through checks one flit of credit instead of the packet's
    "vct_whole_packet_credit": ("(r.length <= room[w])", "(1 <= room[w])"),
    # the longest covered packet registered with the multiplexer's inputs swapped: as if a flit
    # was sent when none was, and the other way round
    "fits_are_the_count": ("fits[q][w][0].eq(Mux(sent, clamp[0], clamp[1]))",
                                 "fits[q][w][0].eq(Mux(sent, clamp[1], clamp[0]))"),
    # VC allocation's arbiters ignore that an output VC is held by a packet (a request
    # formed before the VC was granted is granted too)
    "packets_contiguous": ("~held[q][w] for i in range(PV)]", "1 for i in range(PV)]"),
    # the port check decodes one port too many: an entry for port P is written
    "table_flag_exact": ('e_port = _decode(m, e.port, P, "tbl_port")',
                         'e_port = _decode(m, e.port, P + 1, "tbl_port")'),
    # the length check starts one above the longest packet: packet + 1 passes
    "length_flag_exact": ("range(self.packet + 1, 1 << lb)", "range(self.packet + 2, 1 << lb)"),
    # a flit written into a full input VC is not flagged
    "protocol_flag_exact": ("Cat(*overflow, *bad_vc, *over)", "Cat(*bad_vc, *over)"),
    # a credit VC number on the ejection port without its credit bit is not flagged
    "eject_credit_flag_exact": ("err[\"eject_credit\"].eq(self.o[0].credit | "
                                "self.o[0].credit_vc.any())",
                                "err[\"eject_credit\"].eq(self.o[0].credit)"),
}
MUTANT_TEXT = {
    "no_flit_into_full_vc": "a flit that crosses takes no credit of its output VC",
    "credits_returned_le_taken": "an input returns a credit for a void speculative grant too",
    "no_protocol_error": "a credit that refills an output VC to B counts as one beyond B",
    "vct_whole_packet_credit": "VC allocation asks for one flit of credit, not the packet's",
    "packets_contiguous": "VC allocation's arbiters ignore that an output VC is held",
    "fits_are_the_count": "the longest covered packet takes a flit sent for none sent and back",
    "table_flag_exact": "the table's port check accepts port P",
    "length_flag_exact": "a head of packet + 1 flits is not flagged",
    "protocol_flag_exact": "a flit written into a full input VC is not flagged",
    "eject_credit_flag_exact": "a credit VC number on the ejection port alone is not flagged",
}


def _builder(name, builder=build):
    def build_one(params, mutant):
        return builder(params, MUTANTS[name] if mutant else None)
    return build_one


BASE = {"ports": 5, "depth": 3, "data": 8, "dst_width": 1, "packet": 2}
# yosys-smtbmc's options of the deep checks (the module docstring says why)
ENGINE = {name: "--nomem --syn" for name in ("no_flit_into_full_vc", "packets_contiguous",
                                             "vct_whole_packet_credit")}
PROPERTIES = [
    Property("router", name, promise, {**BASE, "vcs": vcs, "allocator": alloc}, mode, depth,
             _builder(name), MUTANT_TEXT[name], mutant_depth=mdepth, mutant_skip=skip,
             ci=ci and vcs == 1 and alloc == "separable", engine=ENGINE.get(name, ""))
    for vcs, alloc in ((1, "separable"), (2, "separable"), (1, "wavefront"))
    for name, promise, mode, depth, mdepth, skip, ci in (
        ("no_flit_into_full_vc", "no flit is sent into a full downstream VC", "bmc", 8, 9, 8,
         False),
        ("credits_returned_le_taken", "credits returned <= flits taken, per input VC", "bmc",
         8, 8, 0, True),
        ("no_protocol_error", "no protocol error under credit-respecting senders", "bmc", 8,
         8, 0, False),
        ("packets_contiguous", "the flits of one output VC form whole packets, in order",
         "bmc", 8, 8, 0, False),
        ("vct_whole_packet_credit", "a head leaves only with a whole packet's credit "
         "downstream", "bmc", 8, 9, 8, False),
        ("fits_are_the_count", "each output VC's registered longest covered packet is "
         "min(count (+ 1), packet)", "bmc", 8, 8, 0, False),
    )
    # two VCs and the wave-front allocator: the credit checks (minutes each for the others);
    # the wave-front allocator also the covered lengths
    if vcs == 1 and alloc == "separable" or name in ("credits_returned_le_taken",
                                                     "no_protocol_error")
    or name == "fits_are_the_count" and vcs == 1
]

# the flags, both directions: one VC (the VC field holds a VC that does not exist), by BMC
# deep enough to fill an input VC of depth 3 and write one flit more
PROPERTIES += [
    Property("router", name, promise, {**BASE, "vcs": 1, "allocator": "separable"}, "bmc", 7,
             _builder(name, build_flags), MUTANT_TEXT[name], mutant_depth=7,
             ci=False)
    for name, promise in (
        ("table_flag_exact", "the table flag rises exactly on a refused entry"),
        ("length_flag_exact", "the length flag rises exactly on a head of length 0 or "
         "above packet"),
        ("protocol_flag_exact", "the protocol flag rises exactly on a flit into a full VC or "
         "on VC >= V, a credit on VC >= V or a surplus credit"),
        ("eject_credit_flag_exact", "the eject-credit flag rises exactly on a credit or a "
         "credit VC on the ejection port"),
    )
]
