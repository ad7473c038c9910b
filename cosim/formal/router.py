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
  whole packet (virtual cut-through);
- ``fits_are_the_count``: each output VC's two registered "longest packet the credits cover"
  values (VC allocation's cover check, without and with a credit back in the cycle) equal
  min(count, packet) and min(count + 1, packet), in every cycle.

All six by k-induction of length 2 (an unbounded proof), at four parameter sets: one VC and
two with the separable allocator, one with the wave-front allocator (depth 3, packets of 2),
and one VC at depth 5 with packets of 3 (neither a power of two). The induction needs to
know what the input buffers hold, so the harness puts register files in place of the
buffers' memories (:func:`cosim.formal.expose_memories`; they behave as the memories do
port for port, which ``tests/test_formal.py`` checks in Amaranth's simulator; the pointers
that address them are proved to stay below the depth) and states over their rows and the
router's registers (:func:`_buffered`, :func:`_output_packet`):

- each input VC's count, pointers and non-empty flag agree; the flits it holds, read from
  the front backwards from what the sender still owes of its open packet (the harness
  counts it), form packets: each flit's head and tail bits and a head's length agree with
  its place, the meta memory's copies agree with the flit's, a head's stored route names
  at most one port (one, and a VC at a link port, when it is valid); a VC is mid-packet
  only while it holds an output VC; the registered front meta is the front slot's, and
  the output port registered for the front head its route's;
- the registered VC request: one bit at most, for the front head's route, and a free output
  VC it names has credits for the whole packet; the registered switch grants: one VC per
  input, one input per output;
- per output VC, the packet open on the link: the flits it still owes after the flit on the
  link and after the one crossing the switch are those of the one input VC that holds it
  (none when no input VC holds it), the VC is held exactly while an input VC holds it or
  its tail crosses, and its credits cover every flit still to come, a VC-allocated head's
  whole packet included;
- the credit conservation the ports give (the credit counter of every output VC plus the
  downstream occupancy is ``depth``; every input VC's fill plus its credit on the wire is
  what the sender counts as outstanding), ``fits_are_the_count``'s promise, and with the
  wave-front allocator its rotation amounts (``cosim.formal.wwfa``'s invariant).

Each negative control is a bounded model check from reset. A head written in cycle t is on
its output in t + 3, and an output VC is free again two cycles after its packet's tail was
granted: at depth 3 the head of a second packet on one downstream VC arrives at step 7 at
the earliest, and its tail, the fourth flit into a VC of three, at step 8, so the controls
of ``no_flit_into_full_vc`` and ``vct_whole_packet_credit`` run 9 steps and check the last
(``mutant_skip``: proving the steps before clean costs more than finding the bug). At depth
5 with packets of 3 the second packet's head arrives at step 8, too much for a VC holding
the first (the ``vct_whole_packet_credit`` control, 9 steps), and its third flit, the sixth
into a VC of five, at step 10 (the ``no_flit_into_full_vc`` control, 11 steps).

The error flags, each in both directions (:func:`build_flags`: every input free, the causes
computed by the harness): ``table_flag_exact``, ``length_flag_exact``,
``protocol_flag_exact`` and ``eject_credit_flag_exact`` -- the bit in t + 1 is
``~clear & (bit | cause)`` of t, so it rises on its violation and never otherwise. The
no-route bit has no such property: its cause is a head without a route at the front of its
VC, a state inside the block and not an event at its ports (which head is at the front
depends on every grant before), so a cause the harness computed would restate the block's
own logic; the co-simulation provokes it (``error_flags``).
"""

from amaranth.hdl import Array, Assume, Cat, Const, Module, Mux, Signal
from amaranth.lib import data

from . import Harness, Property, any_seq, block_module, elaborate, expose_memories, named

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


def _at_most_one(bits):
    x = Cat(*bits)
    return (x & (x - 1)) == 0


def _buffered(m, frag, mems, p, v, B, L, lb, dw, rem_in):
    """What input VC (p, v) holds, for the invariants: its flits from the front (offset 0)
    backwards from what the sender still owes of its open packet. Returns (ok, pre, front,
    fresh): ``ok`` the invariants of the VC's own state, ``pre`` the flits its front packet
    still has to send, not counting a front head not yet granted (the flits before the
    front, when the front is not a head, or those the sender owes), ``front`` the meta of
    the flit at the front, and ``fresh`` whether that is a head not yet granted."""
    cnt, hp, tp, hq = (named(frag, f"{n}{p}_{v}") for n in ("cnt", "hp", "tp", "hq"))
    ne, al = named(frag, f"ne{p}_{v}"), named(frag, f"al{p}_{v}")
    buf, meta = mems[f"buf{p}_{v}"].rows, mems[f"meta{p}_{v}"].rows
    slayout, mlayout = buf[0].shape(), meta[0].shape()
    bufa = Array([r.as_value() for r in buf])
    metaa = Array([r.as_value() for r in meta])
    ok = [cnt <= B, hp < B, tp < B, hq < B, ne == (cnt != 0),
          hq == Mux(hp == B - 1, 0, hp + 1),
          tp == Mux(hp + cnt >= B, hp + cnt - B, hp + cnt)]
    slot = [Mux(hp + k >= B, hp + k - B, hp + k) for k in range(B)]
    fl = [data.View(slayout, bufa[slot[k]]) for k in range(B)]
    mt = [data.View(mlayout, metaa[slot[k]]) for k in range(B)]
    w = lb + 1
    # r[k]: flits of its packet after the flit at offset k, backwards from the sender's
    r = [None] * B
    for k in reversed(range(B)):
        after = Const(0, w) if k == B - 1 else Mux(fl[k + 1].head, 0, r[k + 1] + 1)
        r[k] = Signal(w, name=f"h_r{p}_{v}_{k}")
        m.d.comb += r[k].eq(Mux(cnt == k + 1, rem_in, after))
    for k in range(B):
        live = cnt > k
        length = fl[k].data[dw:dw + lb]
        port = mt[k].port
        ok.append(~live | ((mt[k].head == fl[k].head) & (mt[k].tail == fl[k].tail) &
                           (fl[k].tail == (r[k] == 0)) & (r[k] < L) &
                           (~fl[k].head | ((length == r[k] + 1) & (mt[k].length == r[k] + 1) &
                                           _at_most_one(port) &
                                           (~mt[k].valid | port.any() &
                                            (port[0] | mt[k].vcs.any()))))))
    fm = named(frag, f"fm{p}_{v}")
    head0 = ne & fl[0].head
    pre = Mux(ne, Mux(fl[0].head, 0, r[0] + 1), rem_in)
    ok += [
        ~ne | (fm == mt[0].as_value()),
        al | (pre == 0),                          # mid-packet only while allocated
        ~al | head0 | (pre != 0),
        ~head0 | (named(frag, f"op{p}_{v}") == mt[0].port),
    ]
    return ok, pre, mt[0], head0


def build(params, mutant_spec=None):
    mod = block_module(MODULE, mutant_spec)
    P, V, B = params["ports"], params["vcs"], params["depth"]
    L = params["packet"]
    dut, frag, m, lb, dw, ob = _top(mod, params)
    mems = expose_memories(frag, [f"{k}{p}_{v}" for k in ("buf", "meta") for p in range(P)
                                  for v in range(V)])
    RQ = (P - 1) * V + 1

    invariants = []
    pre, front, fresh = {}, {}, {}
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
            invariants += [occ == cnt + back, occ <= B, cnt <= B, rem < L]
            # an allocated input VC holds one output port and one output VC
            al = named(frag, f"al{p}_{v}")
            for x in (named(frag, f"op{p}_{v}"), named(frag, f"ov{p}_{v}")):
                invariants += [(x & (x - 1)) == 0, ~al | x.any()]
            ok, pre[p, v], front[p, v], fresh[p, v] = _buffered(m, frag, mems, p, v, B, L, lb,
                                                               dw, rem)
            invariants += ok
            # the VC request registered for the front: its route's port and VCs, one bit,
            # a free output VC's credits covering the packet
            vq, va = named(frag, f"vq{p}_{v}"), named(frag, f"va{p}_{v}")
            ne = named(frag, f"ne{p}_{v}")
            fr = front[p, v]
            invariants += [_at_most_one(vq), va == vq.any(),
                           ~vq.any() | (ne & fr.head & fr.valid),
                           ~vq[RQ - 1] | fr.port[0]]
            for q in range(1, P):
                for w in range(V):
                    bit = vq[(q - 1) * V + w]
                    held = named(frag, f"held{q}")[w]
                    invariants += [~bit | (fr.port[q] & fr.vcs[w]),
                                   ~bit | al | held | (named(frag, f"cr{q}_{w}") >= fr.length)]
        m.d.comb += Assume(~link.valid | (f.vc < V))
        gv, gd = named(frag, f"gv{p}"), named(frag, f"gd{p}")
        invariants += [_at_most_one(gv), _at_most_one(gd), ~gv.any() | gd.any()]
    for q in range(P):
        invariants.append(_at_most_one([named(frag, f"gv{p}").any() & named(frag, f"gd{p}")[q]
                                        for p in range(P)]))
    if params["allocator"] == "wavefront":
        # the wave-front arbiter's rotation amounts (cosim.formal.wwfa's invariant)
        rot = [named(frag, f"rot{i}") for i in range(P)]
        invariants += [rot[0] < P] + [rot[i] == (rot[0] + P - i) % P for i in range(1, P)]

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
            invariants += [cr + occ + arrive == B, occ <= B, cr <= B, rem < L]
            # the longest packet the credits cover, without and with a credit back
            cover += [named(frag, f"fit{q}_{w}_{b}") == Mux(cr + b >= L, L, cr + b)
                      for b in range(2)]
            invariants += _output_packet(m, frag, mems, params, q, w, f, arrive, length, rem, cr,
                                         pre, fresh, front)

    invariants += cover
    checks = {
        "no_flit_into_full_vc": Cat(*no_full).all(),
        "credits_returned_le_taken": Cat(*ok_credit).all(),
        "no_protocol_error": ~dut.error[3],
        "packets_contiguous": Cat(*contiguous).all(),
        "vct_whole_packet_credit": Cat(*vct).all(),
        "fits_are_the_count": Cat(*cover).all(),
    }
    return Harness(m, checks, invariants)


def _output_packet(m, frag, mems, params, q, w, f, arrive, length, rem, cr, pre, fresh, front):
    """The invariants of output VC (q, w)'s open packet: the flits it still owes after the
    one on the link (``x1``) and after the one crossing the switch (``x2``) are the front
    packet's of the one input VC that holds it, the VC is held exactly while an input VC
    holds it or its tail crosses, and its credits cover every flit still to come."""
    P, V, L, dw = params["ports"], params["vcs"], params["packet"], params["dst_width"]
    lb = len(length)
    x1 = Signal(lb + 1, name=f"h_x1_{q}_{w}")
    x2 = Signal(lb + 1, name=f"h_x2_{q}_{w}")
    m.d.comb += x1.eq(Mux(arrive, Mux(f.head, length - 1, rem - 1), rem))
    ok = [~(arrive & f.head) | ((length >= 1) & (length <= L))]
    trav, tails, holders, fresh_need = [], [], [], []
    x2_of = x1
    for p in range(P):
        gv, gd = named(frag, f"gv{p}"), named(frag, f"gd{p}")
        for v in range(V):
            ov, al, op = (named(frag, f"{n}{p}_{v}") for n in ("ov", "al", "op"))
            buf = mems[f"buf{p}_{v}"]
            # the flit crossing the switch: read at its grant, the cycle before
            t = gv[v] & gd[q] & ov[w]
            T = data.View(buf.rows[0].shape(), buf.reads[0])
            tl = T.data[dw:dw + lb]
            x2_of = Mux(t, Mux(T.head, tl - 1, x1 - 1), x2_of)
            h = al & op[q] & ov[w]
            ok += [~t | ((T.head == (x1 == 0)) & (T.tail == (x2 == 0)) &
                         (~T.head | ((tl >= 1) & (tl <= L)))),
                   ~t | T.tail | h,
                   ~(t & T.tail) | ~al,
                   ~h | (x2 == pre[p, v])]
            trav.append(t)
            tails.append(t & T.tail)
            holders.append(h)
            fresh_need.append(Mux(h & fresh[p, v], front[p, v].length, 0))
    held = named(frag, f"held{q}")[w]
    m.d.comb += x2.eq(x2_of)
    ok += [_at_most_one(trav), _at_most_one(holders + tails),
           held == Cat(*holders, *tails).any(),
           Cat(*holders).any() | (x2 == 0),
           cr >= x1 + sum(fresh_need)]
    return ok


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
# the controls whose bug shows only with one flit more than a downstream VC holds: the
# steps they run and the first one they check, by buffer depth (the module docstring)
DEEP_CONTROL = {3: (9, 8), 5: (11, 10)}
SETS = ({"vcs": 1, "allocator": "separable"}, {"vcs": 2, "allocator": "separable"},
        {"vcs": 1, "allocator": "wavefront"},
        # a buffer of five flits, packets of three: neither a power of two
        {"vcs": 1, "allocator": "separable", "depth": 5, "packet": 3})
PROPERTIES = [
    Property("router", name, promise, params, "prove", 2, _builder(name), MUTANT_TEXT[name],
             mutant_depth=DEEP_CONTROL[params["depth"]][0] if deep == "full" else deep[0],
             mutant_skip=DEEP_CONTROL[params["depth"]][1] if deep == "full" else deep[1],
             ci=ci and extra is SETS[0])
    for extra in SETS
    for params in ({**BASE, **extra},)
    for name, promise, deep, ci in (
        ("no_flit_into_full_vc", "no flit is sent into a full downstream VC", "full", False),
        ("credits_returned_le_taken", "credits returned <= flits taken, per input VC",
         (8, 0), True),
        ("no_protocol_error", "no protocol error under credit-respecting senders", (8, 0),
         False),
        ("packets_contiguous", "the flits of one output VC form whole packets, in order",
         (8, 0), True),
        ("vct_whole_packet_credit", "a head leaves only with a whole packet's credit "
         "downstream", (9, 8), False),
        ("fits_are_the_count", "each output VC's registered longest covered packet is "
         "min(count (+ 1), packet)", (8, 0), False),
    )
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
