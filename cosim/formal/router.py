"""Formal harness of the RailX chip router (:mod:`rtl.railx.router`).

The harness is the router's neighbourhood as its docstring specifies it: senders that hold a
credit for a VC before they send on it (``depth`` per VC at reset, one back per flit that
leaves) and send well-formed packets (head with a length 1..``packet``, that many flits
contiguous on one VC, the last a tail); downstream buffers of ``depth`` flits per output VC
that return a credit for a flit they hold, on any later cycle; any routing table, loaded at
any time. Promises:

- ``no_flit_into_full_vc``: no flit is sent into a downstream VC that is full;
- ``credits_returned_le_taken``: the router returns a credit only for a flit it took (per
  input VC, credits returned <= flits taken);
- ``no_protocol_error``: under such senders the protocol error bit never rises;
- ``packets_contiguous``: on every link port, the flits of one VC form whole packets, head
  first, ``length`` flits, tail last (no interleaving within a VC);
- ``vct_whole_packet_credit``: a head leaves only when the downstream VC has room for the
  whole packet (virtual cut-through).

All five by bounded model check (8 cycles: a head crosses in 3, so two packets reach one
downstream VC). k-induction with the conservation invariants the harness carries (the credit
counter of every output VC plus the downstream occupancy is ``depth``; every input VC's fill
plus its credit on the wire is what the sender counts as outstanding) does not close: it
also needs the buffered route entries (in the buffers' meta memories) to name one port and
one VC, which a harness cannot state about memory contents from outside the block.
"""

from amaranth.hdl import Assume, Cat, Module, Signal

from . import Harness, Property, any_seq, block_module, elaborate, named

MODULE = "aifabric.rtl.railx.router"


def build(params, mutant_spec=None):
    mod = block_module(MODULE, mutant_spec)
    P, V, B = params["ports"], params["vcs"], params["depth"]
    dut = mod.Router(**params)
    frag = elaborate(dut)
    m = Module()
    m.submodules.dut = frag
    lb = mod.len_bits(params["packet"])
    dw = params["dst_width"]
    ob = (B + 1).bit_length() + 1

    # routing table and clear: free
    tp = dut.table.payload.as_value()
    m.d.comb += [dut.table.valid.eq(any_seq(1)), tp.eq(any_seq(len(tp))),
                 dut.clear.eq(any_seq(1))]

    invariants = []
    # ---- senders: credit-respecting, well-formed packets
    ok_credit = []
    for p in range(P):
        link = dut.i[p]
        f = link.flit
        fv = f.as_value()
        m.d.comb += [link.valid.eq(any_seq(1)), fv.eq(any_seq(len(fv)))]
        length = f.data[dw:dw + lb]
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
    no_full, contiguous, vct = [], [], []
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

    checks = {
        "no_flit_into_full_vc": Cat(*no_full).all(),
        "credits_returned_le_taken": Cat(*ok_credit).all(),
        "no_protocol_error": ~dut.error[3],
        "packets_contiguous": Cat(*contiguous).all(),
        "vct_whole_packet_credit": Cat(*vct).all(),
    }
    return Harness(m, checks, invariants)


MUTANTS = {
    # a flit that crosses the switch takes no credit of its output VC
    "no_flit_into_full_vc": ("m.d.sync += credit[q][w].eq((avail[q][w] - sent)[:cb])",
                             "m.d.sync += credit[q][w].eq(avail[q][w][:cb])"),
    # the credit goes back when an input offers a flit, granted or not
    "credits_returned_le_taken": ("m.d.sync += self.i[p].credit.eq(chosen[p].any())",
                                  "m.d.sync += self.i[p].credit.eq(elig[p].any())"),
    # a credit that brings an output VC back to B is taken for one beyond B
    "no_protocol_error": ("full.eq(eq_const(credit[q][w], B)),",
                          "full.eq(eq_const(credit[q][w], B - 1)),"),
    # virtual cut-through checks one flit of credit instead of the packet's
    "vct_whole_packet_credit": ("_at_least(_pick(m, r.port, [avail[q][w] for q in range(P)], cb),\n"
                                "                                         r.length)",
                                "_pick(m, r.port, [avail[q][w] for q in range(P)], cb).any()"),
    # VC allocation ignores that an output VC is held by a packet
    "packets_contiguous": ("ok = _bits(m, [r.vcs[w] & ~heldq[w] &",
                           "ok = _bits(m, [r.vcs[w] &"),
}
MUTANT_TEXT = {
    "no_flit_into_full_vc": "a flit that crosses takes no credit of its output VC",
    "credits_returned_le_taken": "an input returns a credit when it offers a flit, granted or not",
    "no_protocol_error": "a credit that refills an output VC to B counts as one beyond B",
    "vct_whole_packet_credit": "VC allocation asks for one flit of credit, not the packet's",
    "packets_contiguous": "VC allocation ignores that an output VC is held by a packet",
}


def _builder(name):
    def build_one(params, mutant):
        return build(params, MUTANTS[name] if mutant else None)
    return build_one


BASE = {"ports": 5, "depth": 2, "data": 8, "dst_width": 1, "packet": 2}
PROPERTIES = [
    Property("router", name, promise, {**BASE, "vcs": vcs, "allocator": alloc}, mode, depth,
             _builder(name), MUTANT_TEXT[name], mutant_depth=mdepth,
             ci=ci and vcs == 1 and alloc == "separable")
    for vcs, alloc in ((1, "separable"), (2, "separable"), (1, "wavefront"))
    for name, promise, mode, depth, mdepth, ci in (
        ("no_flit_into_full_vc", "no flit is sent into a full downstream VC", "bmc", 8, 8,
         False),
        ("credits_returned_le_taken", "credits returned <= flits taken, per input VC", "bmc",
         8, 8, True),
        ("no_protocol_error", "no protocol error under credit-respecting senders", "bmc", 8,
         8, False),
        ("packets_contiguous", "the flits of one output VC form whole packets, in order",
         "bmc", 8, 8, False),
        ("vct_whole_packet_credit", "a head leaves only with a whole packet's credit "
         "downstream", "bmc", 8, 8, False),
    )
    # two VCs and the wave-front allocator: the credit checks (minutes each for the others)
    if vcs == 1 and alloc == "separable" or name in ("credits_returned_le_taken",
                                                     "no_protocol_error")
]
