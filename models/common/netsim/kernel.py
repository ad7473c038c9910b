"""The compiled simulation kernel: :mod:`.reference`'s cycle, on flat arrays, under numba.

Same contract as the reference (see :mod:`models.common.netsim` for the pipeline); the
tests run both on random small networks and compare every injection and switch traversal.
Speed comes from visiting a router only in the cycles it can act in (credits arrive, its
source has a packet due, or ``wake``: the cycle after one it acted in while it holds flits,
else the cycle its earliest front flit becomes ready), keeping every per-cycle decision in
integer arrays, and, for large networks whose state outgrows the caches, touching as few
memory lines per cycle
as possible:

- everything a cycle reads or writes about one VC sits in one 64-byte record (``vc``,
  fields ``V_*`` below): its queue, allocation and head route, and the output VC of the
  same number (credits, held, round-robin pointer);
- a head's route (port, VC range, packet length), its packet's slot and, for age
  allocation, creation cycle are read once, into its record, not on every cycle it waits:
  allocation compares ages without reading the flit buffer or the packet pool (the pool
  only for a tie of creation cycles);
- VC allocation visits only the VCs of ``vaw`` (a head without an output VC), switch
  allocation only those of ``act`` (an output VC held) and a credit arrival only those of
  ``cmask``, one bit per (port, VC); its grants go through the list of the output VCs
  asked for (``req_o``), not a scan of every output VC;
- a flit is 16 bytes (``buf``: packet slot, sequence number | tail << 15 | length << 16,
  ready cycle, and on a head its route, see :func:`_route`);
- a router whose ports have one lane each, where each input port has one VC that may send
  and no two of them ask for the same output port, grants them all without a round of its
  allocator (every allocator would, and its pointers move as in that round; the registered
  router's speculative round alike), and the injection phase runs only when the source has
  a packet to write;
- array indices are compiled without numba's fix-up of negative ones
  (:func:`nonnegative_indices`);
- the route tables are packed, one entry per (router, row, destination), rows shared by
  the VCs that route alike (``vrow``, see :func:`models.common.netsim.sim.route_table`);
- a large network runs on a kernel compiled for its shape and router (:func:`kernel_for`,
  :func:`_make_run`): its array strides and router settings are constants.

A router's cycle is the reference model's phases, one function each, inlined into
:func:`run`'s loop: :func:`_credit_arrival`, :func:`_inject`, :func:`_vc_allocate`, switch
allocation (:func:`_sa_eligible`, then per round :func:`_separable_round` or
:func:`_wavefront_round`), and :func:`_traverse` and :func:`_deliver` for every grant;
:func:`_end_of_cycle` after the last router. The ``registered`` router (``C_CROSS`` 1) has
phases of its own: :func:`_vc_allocate_registered` (the requests formed in the cycle
before), :func:`_sa_eligible_registered` and one round of the same allocators (speculating
beside VC allocation), :func:`_cross` for every grant that holds (the flit's crossing, a
cycle later, is where it reaches the next router or the sink), :func:`_form_requests`,
:func:`_hold_granted` and :func:`_apply_crossed` (last cycle's grants take their output VC's
credit, a tail frees it); a router holding flits is visited every cycle.

State is a dict of arrays built by :class:`models.common.netsim.sim.Simulator`; scalars
live in ``cfg`` (int64) and ``ctr`` (int64 counters, indices below); the packet pool and
the network's per-port tables are records too (``pk``, ``ports``: fields ``PK_*``,
``PT_*``).

numba's on-disk cache of :func:`run` is keyed by this file only, not by the functions it
inlines from :mod:`.traffic` (``destination``, ``gap``, ``uniform``): a change there must
also change this file (e.g. this line: traffic rules of 2026-11, no self-addressed packets),
or a warm cache keeps running the old rule.
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from .traffic import MODE_TRACE, destination, gap, uniform

# cfg indices
(C_VCS, C_BUF, C_LEN, C_MODE, C_SEED, C_CHECK, C_WATCHDOG, C_EVERY, C_LOGCAP, C_W0, C_W1,
 C_ALLOC, C_BYPASS, C_LINKS, C_CLS, C_VINJ, C_SOURCE, C_CROSS) = range(18)
# ctr indices
(K_INJ, K_EJ, K_LAST, K_WIN_EJ, K_MEAS_DONE, K_LAT_SUM, K_LOG, K_STATUS, K_E0, K_E1, K_E2,
 K_E3, K_PKT_INJ, K_PKT_DONE, K_FREE, K_MEAS_INJ, K_LAT_MAX) = range(17)
# per-VC record fields (``vc[router, port, VC, field]``, one 64-byte line per VC): the input
# VC's queue (buffer head index, flit count, cycle its front flit is ready), its allocation
# (cycle allocated, state 0 idle / 1 holding an output VC, output port, output VC), its front
# packet, read from its head flit: the route (port, -2: not read yet; lowest VC | highest VC
# << 8 | packet length << 16), the packet's slot and, for age allocation, its creation cycle;
# its last received flit (packet slot, sequence number; invariant checks), and the *output* VC
# of the same number: credits, held by a packet, VC-allocation round-robin pointer
(V_HEAD, V_CNT, V_READY, V_AT, V_STATE, V_OP, V_OV, V_RPORT, V_RRNG, V_PSID, V_PCRE, V_CRED,
 V_BUSY, V_VAPTR, V_LPKT, V_LSEQ) = range(16)
V_FIELDS = 16
# packet-pool record fields (``pk[slot, field]``, int64, 32 bytes per packet): destination
# chip, length in flits, creation cycle, tag (source << 32 | its packet number)
PK_DST, PK_LEN, PK_CREATE, PK_TAG = range(4)
PK_FIELDS = 4
# per-port record fields (``ports[router, port, field]``, int32, 32 bytes per port): the
# neighbour's router and port, the link's delay, the credits' delay back, lanes, parallel
# links
PT_NBR, PT_NPORT, PT_DELAY, PT_CDELAY, PT_WIDTH, PT_LINKS = range(6)
PT_FIELDS = 8
# status codes
OK, DEADLOCK, CONSERVATION, CREDIT, CONTIGUITY, CAPACITY, LOGFULL = range(7)
EV_INJECT, EV_SWITCH = 0, 1
# the cfg entries a shaped kernel holds as constants (:func:`kernel_for`)
KIND = (C_ALLOC, C_CHECK, C_BYPASS, C_LINKS, C_CLS, C_CROSS)
INF = np.int64(1) << 62


@numba.njit(cache=True)
def _log(ev, ctr, cap, t, kind, r, p, v, op, ov, tag, seq):
    i = ctr[K_LOG]
    if i >= cap:
        ctr[K_STATUS] = LOGFULL
        return
    ev[i, 0], ev[i, 1], ev[i, 2], ev[i, 3], ev[i, 4] = t, kind, r, p, v
    ev[i, 5], ev[i, 6], ev[i, 7], ev[i, 8] = op, ov, tag, seq
    ctr[K_LOG] = i + 1


@numba.njit(cache=True, inline="always")
def _wrap(x, n):
    """x mod n for 0 <= x < 2n (a compare instead of a division in the inner loops)."""
    return x - n if x >= n else x


@numba.njit(cache=True, inline="always")
def _unwrap(x, n):
    """x mod n for -n < x < n."""
    return x + n if x < 0 else x


_ONE = np.uint64(1)


@intrinsic
def _cttz(typingctx, m):
    """The number of trailing zero bits of the uint64 m (undefined for 0): one ``tzcnt``."""
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))
    return types.int64(types.uint64), codegen


@numba.njit(cache=True, inline="always")
def _pop_low(m):
    """(index of the lowest set bit of the non-zero uint64 m, m without it)."""
    return _cttz(m), m & (m - _ONE)


@numba.njit(cache=True, inline="always")
def _mark(mask, r, i):
    """Set bit i of router r's VC mask (bit p * V + v)."""
    mask[r, i >> 6] |= _ONE << np.uint64(i & 63)


@numba.njit(cache=True, inline="always")
def _mark3(mask, r, s, i):
    """Set bit i of router r's mask for ring slot s."""
    mask[r, s, i >> 6] |= _ONE << np.uint64(i & 63)


@numba.njit(cache=True, inline="always")
def _unmark(mask, r, i):
    mask[r, i >> 6] &= ~(_ONE << np.uint64(i & 63))


@numba.njit(cache=True, inline="always")
def _route(rt, r, row, dst):
    """Router r's table entry for dst in table row ``row``, packed for the head flit:
    (port + 1) | lowest VC << 8 | highest VC << 16 (each a byte in the tables)."""
    return (np.int32(rt[r, row, dst, 0]) + 1) | (np.int32(rt[r, row, dst, 1]) << 8) | \
        (np.int32(rt[r, row, dst, 2]) << 16)


@numba.njit(cache=True)
def _source_head(r, mode, nxt, tr, tr_ptr, tr_end):
    """(creation time, stream) of the packet at the head of chip r's source queue."""
    if mode == MODE_TRACE:
        if tr_ptr[r] < tr_end[r]:
            return tr[tr_ptr[r], 0], 0
        return INF, 0
    best, bs = INF, 0
    for s in range(nxt.shape[1]):
        if nxt[r, s] < best:
            best, bs = nxt[r, s], s
    return best, bs


@numba.njit(cache=True, inline="always")
def _pick_link_vc(vc, link_busy, r, op, nl, Vb, lo, hi, B, ln):
    """Per-link VCs: the output VC (l * Vb + class) a head asks for on output ``op``: the
    first free, empty VC (all B credits) of a free link, else the first free one with room
    for the packet, links in order, each link's classes lo..hi in order (CNSim's
    ``vc_allocate``); -1: none. One pass over the candidates: the first empty one is the
    answer at once, the first with room is kept for when none is empty."""
    room = -1
    held = link_busy[r, op]
    for l in range(nl):
        if held & (np.int32(1) << l):
            continue
        for c in range(lo, hi + 1):
            ov = l * Vb + c
            if not vc[r, op, ov, V_BUSY]:
                cr = vc[r, op, ov, V_CRED]
                if cr >= B:
                    return ov
                if room < 0 and cr >= ln:
                    room = ov
    return room


@numba.njit(cache=True, inline="always")
def _tag_before(pk, a, b):
    """Packet slot a's tag orders before slot b's (age allocation's tie between packets
    created in the same cycle; the only reason it reads the packet pool)."""
    return pk[a, PK_TAG] < pk[b, PK_TAG]


# -- the phases of one router's cycle, in the reference model's order (credit arrival,
# injection, route computation + VC allocation, switch allocation, traversal). Each is
# inlined into run() by numba's IR inliner (inline="always"), so the arrays they take are
# bound, not passed: no call, no reference counts, the same machine code as one loop.


@numba.njit(cache=True, inline="always")
def _credit_arrival(r, slot, B, check, vc, cred_ring, cmask, pend, pidx, vidx, ctr):
    """Phase 1, :meth:`RouterModel.credit`: the credits due at router r in this cycle (the
    (port, VC) bits of ``cmask[r, slot]``). False: a count exceeded B (``ctr`` says where)."""
    pend[r, slot] = 0
    for w in range(cmask.shape[2]):
        m = cmask[r, slot, w]
        cmask[r, slot, w] = 0
        while m != 0:
            b, m = _pop_low(m)
            i = w * 64 + b
            p, v = pidx[i], vidx[i]
            vc[r, p, v, V_CRED] += cred_ring[r, p, v, slot]
            cred_ring[r, p, v, slot] = 0
            if check and vc[r, p, v, V_CRED] > B:
                ctr[K_STATUS] = CREDIT
                ctr[K_E0], ctr[K_E1], ctr[K_E2], ctr[K_E3] = r, p, v, vc[r, p, v, V_CRED]
                return False
    return True


@numba.njit(cache=True, inline="always")
def _inject(t, r, cfg, fcfg, ctr, ports, vrow, rt, buf, vc, occ, vaw, pk, free,
            nxt, sj, sk, srcn, inj_vc, inj_slot, inj_done, inj_ptr,
            tr, tr_ptr, tr_end, perm, hot, ev):
    """Phase 2, :meth:`ReferenceNetwork._inject`: up to ``ports[r, 0, PT_WIDTH]`` flits from chip r's
    source queue into its local VCs. Returns 1 if a flit was written, 0 if none, -1 if the
    packet pool is exhausted (``ctr[K_STATUS]``)."""
    B, L, mode, seed = cfg[C_BUF], cfg[C_LEN], cfg[C_MODE], cfg[C_SEED]
    w0, w1, logcap = cfg[C_W0], cfg[C_W1], cfg[C_LOGCAP]
    VI, open_src = cfg[C_VINJ], cfg[C_SOURCE] == 1
    wrote = 0
    budget = ports[r, 0, PT_WIDTH]
    while budget > 0:
        if inj_vc[r] < 0:
            if srcn[r] > t:                  # the source queue's head is not due
                break
            ln = tr[tr_ptr[r], 3] if mode == MODE_TRACE else L
            vv = -1
            for i in range(VI):
                v = _wrap(inj_ptr[r] + i, VI)
                if vc[r, 0, v, V_CNT] == 0 if open_src else B - vc[r, 0, v, V_CNT] >= ln:
                    vv = v
                    break
            if vv < 0:                       # no injection VC has room for it
                break
            tc, s = _source_head(r, mode, nxt, tr, tr_ptr, tr_end)
            if mode == MODE_TRACE:
                dst = tr[tr_ptr[r], 2]
            else:
                k = sk[r]
                dst = destination(mode, perm, hot, fcfg[1], srcn.shape[0], r,
                                  uniform(seed, r, k, -1), uniform(seed, r, k, -2))
            top = ctr[K_FREE]
            if top == 0:
                ctr[K_STATUS] = CAPACITY
                return -1
            ctr[K_FREE] = top - 1
            slot_id = free[top - 1]
            pk[slot_id, PK_DST], pk[slot_id, PK_LEN] = dst, ln
            pk[slot_id, PK_CREATE] = tc
            pk[slot_id, PK_TAG] = (r << 32) | sk[r]
            sk[r] += 1
            if mode == MODE_TRACE:
                tr_ptr[r] += 1
            else:
                j = sj[r, s] + 1
                sj[r, s] = j
                nxt[r, s] += gap(uniform(seed, r, s, j), fcfg[0])
            srcn[r] = _source_head(r, mode, nxt, tr, tr_ptr, tr_end)[0]
            if w0 <= tc < w1:
                ctr[K_MEAS_INJ] += 1
            ctr[K_PKT_INJ] += 1
            inj_vc[r], inj_slot[r], inj_done[r] = vv, slot_id, 0
            inj_ptr[r] = _wrap(vv + 1, VI)
        v, sid = inj_vc[r], inj_slot[r]
        j = _wrap(vc[r, 0, v, V_HEAD] + vc[r, 0, v, V_CNT], B)
        ln = pk[sid, PK_LEN]
        buf[r, 0, v, j, 0] = sid
        buf[r, 0, v, j, 1] = inj_done[r] | ((inj_done[r] == ln - 1) << 15) | (ln << 16)
        buf[r, 0, v, j, 2] = t + 1
        if inj_done[r] == 0:
            buf[r, 0, v, j, 3] = _route(rt, r, vrow[0], pk[sid, PK_DST])
        if vc[r, 0, v, V_CNT] == 0:
            vc[r, 0, v, V_READY] = t + 1
            if vc[r, 0, v, V_STATE] == 0:
                _mark(vaw, r, v)
        vc[r, 0, v, V_CNT] += 1
        occ[r] += 1
        wrote = 1
        ctr[K_INJ] += 1
        ctr[K_LAST] = t
        if logcap > 0:
            _log(ev, ctr, logcap, t, EV_INJECT, r, 0, v, -1, -1, pk[sid, PK_TAG], inj_done[r])
        inj_done[r] += 1
        budget -= 1
        if inj_done[r] == pk[sid, PK_LEN]:
            inj_vc[r] = -1
    return wrote


@numba.njit(cache=True, inline="always")
def _front_route(r, p, v, age, vc, buf, pk):
    """The output port of the head at the front of input p VC v (-1: no route), read once
    from the head flit into the VC's record (looked up in the tables when the head was
    written, see :func:`_route`), with its VC range and length (``V_RRNG``): a blocked head
    retries every cycle without reading the flit again."""
    op = vc[r, p, v, V_RPORT]
    if op == -2:
        h = vc[r, p, v, V_HEAD]
        rw = buf[r, p, v, h, 3]
        op = (rw & 0xFF) - 1
        vc[r, p, v, V_RPORT] = op
        vc[r, p, v, V_RRNG] = ((rw >> 8) & 0xFFFF) | ((buf[r, p, v, h, 1] >> 16) << 16)
        sid = buf[r, p, v, h, 0]
        vc[r, p, v, V_PSID] = sid
        if age:
            vc[r, p, v, V_PCRE] = pk[sid, PK_CREATE]
    return op


@numba.njit(cache=True, inline="always")
def _ask(req_o, nreq, o):
    """Output VC o joins the ``nreq`` asked for in this visit, kept in ascending order (the
    order they are granted in); returns the new count."""
    j = nreq
    while j > 0 and req_o[j - 1] > o:
        req_o[j] = req_o[j - 1]
        j -= 1
    req_o[j] = o
    return nreq + 1


@numba.njit(cache=True, inline="always")
def _take(t, r, i, op, ov, vc, vaw, act, pidx, vidx):
    """Input VC i (p * V + v) is allocated output ``op`` VC ``ov`` in cycle t: it leaves the
    heads waiting (``vaw``) for the VCs holding an output VC (``act``)."""
    p, v = pidx[i], vidx[i]
    vc[r, p, v, V_STATE], vc[r, p, v, V_OP], vc[r, p, v, V_OV] = 1, op, ov
    vc[r, p, v, V_AT] = t
    _unmark(vaw, r, i)
    _mark(act, r, i)


@numba.njit(cache=True, inline="always")
def _vc_allocate(t, r, V, B, age, links, Vb, vc, buf, vaw, act, link_busy, ports, pk,
                 pidx, vidx, req_q, req_pri, req_tag, req_o):
    """Phase 3, :meth:`RouterModel.allocate`: route computation and VC allocation for the
    heads that arrived in an earlier cycle (the set bits of ``vaw[r]``: a head without an
    output VC). ``age``: oldest packet first; ``links``: the link model's code, ``Vb`` VCs per
    link. Returns (acted, the earliest cycle a waiting front flit becomes ready)."""
    PV = req_q.shape[0]
    plinks = links >= 1                     # parallel links, each held by one packet
    perlink = links == 2                    # ... each with its own VCs: VC l * Vb + class
    acted = False
    soon = INF
    nreq = 0
    for w in range(vaw.shape[1]):
        m = vaw[r, w]
        while m != 0:
            b, m = _pop_low(m)
            i = w * 64 + b
            p, v = pidx[i], vidx[i]
            if vc[r, p, v, V_READY] > t:
                soon = min(soon, vc[r, p, v, V_READY])
                continue
            op = _front_route(r, p, v, age, vc, buf, pk)
            if op == 0:
                _take(t, r, i, 0, 0, vc, vaw, act, pidx, vidx)
                acted = True
                continue
            if op < 0:
                continue
            rr = vc[r, p, v, V_RRNG]
            lo, hi, ln = rr & 0xFF, (rr >> 8) & 0xFF, rr >> 16
            if perlink:
                ov = _pick_link_vc(vc, link_busy, r, op, ports[r, op, PT_LINKS], Vb, lo, hi,
                                   B, ln)
            else:
                if plinks and link_busy[r, op] >= ports[r, op, PT_LINKS]:
                    continue
                ov = -1
                for c in range(lo, hi + 1):
                    if not vc[r, op, c, V_BUSY] and vc[r, op, c, V_CRED] >= ln:
                        ov = c
                        break
            if ov >= 0:
                o = op * V + ov
                qq = p * V + v
                if age:
                    # oldest first, ties by the packets' tags (read only for a tie)
                    pri, sid = vc[r, p, v, V_PCRE], vc[r, p, v, V_PSID]
                else:
                    pri, sid = _unwrap(qq - vc[r, op, ov, V_VAPTR], PV), 0
                if req_q[o] < 0:
                    nreq = _ask(req_o, nreq, o)
                if req_q[o] < 0 or pri < req_pri[o] or \
                        (pri == req_pri[o] and _tag_before(pk, sid, req_tag[o])):
                    req_q[o], req_pri[o], req_tag[o] = qq, pri, sid
    if nreq > 0:
        acted = True
    for k in range(nreq):
        o = req_o[k]
        qq = req_q[o]
        req_q[o] = -1                   # clear between visits
        op, ov = pidx[o], vidx[o]
        if perlink:
            bit = np.int32(1) << (ov // Vb)
            if link_busy[r, op] & bit:
                continue            # the link went to a lower output VC
            link_busy[r, op] |= bit
        elif plinks:
            if link_busy[r, op] >= ports[r, op, PT_LINKS]:
                continue            # the port's links went to lower output VCs
            link_busy[r, op] += 1
        vc[r, op, ov, V_BUSY] = 1
        _take(t, r, qq, op, ov, vc, vaw, act, pidx, vidx)
        vc[r, op, ov, V_VAPTR] = _wrap(qq + 1, PV)
    return acted, soon


@numba.njit(cache=True, inline="always")
def _mark_eligible(p, v, elig, ne, plist, npl, pvc):
    """Input p VC v may send this cycle: marked in ``elig``, counted in ``ne[p]`` and kept in
    ``pvc[p]`` (the port's one eligible VC when ``ne[p]`` is 1), its port listed in ``plist``
    if it is the port's first; returns the ports listed."""
    elig[p, v] = True
    pvc[p] = v
    if ne[p] == 0:
        plist[npl] = p
        npl += 1
    ne[p] += 1
    return npl


@numba.njit(cache=True, inline="always")
def _sa_eligible(t, r, bypass, vc, act, pidx, vidx, elig, ne, plist, pvc, vsent, soon):
    """Phase 4a, the ``ready`` test of :meth:`RouterModel.switch`: over the VCs holding an
    output VC (the set bits of ``act[r]``), mark those that may send a flit this cycle in
    ``elig`` and count them per input port in ``ne`` (both all clear between routers), and
    list their input ports in ``plist`` (and each port's VC in ``pvc``). Returns (ports
    listed, ``soon`` lowered to the earliest front flit not ready yet)."""
    npl = 0
    for w in range(act.shape[1]):
        m = act[r, w]
        while m != 0:
            b, m = _pop_low(m)
            i = w * 64 + b
            p, v = pidx[i], vidx[i]
            vsent[p, v] = 0
            if vc[r, p, v, V_READY] > t and vc[r, p, v, V_CNT] > 0:
                soon = min(soon, vc[r, p, v, V_READY])
            elif vc[r, p, v, V_AT] < t + bypass and vc[r, p, v, V_CNT] > 0 and \
                    (vc[r, p, v, V_OP] == 0 or
                     vc[r, vc[r, p, v, V_OP], vc[r, p, v, V_OV], V_CRED] > 0):
                npl = _mark_eligible(p, v, elig, ne, plist, npl, pvc)
    return npl, soon


@numba.njit(cache=True, inline="always")
def _sole_requests(r, P, vc, ne, plist, npl, pvc):
    """Each input port listed has one VC that may send (``pvc[p]``), and no two of them ask
    for the same output port: a round of any allocator grants every one of them."""
    if npl == 1:
        return ne[plist[0]] == 1
    if P > 64:
        return False
    seen = np.uint64(0)
    for k in range(npl):
        p = plist[k]
        if ne[p] != 1:
            return False
        bit = _ONE << np.uint64(vc[r, p, pvc[p], V_OP])
        if seen & bit:
            return False
        seen |= bit
    return True


@numba.njit(cache=True, inline="always")
def _wavefront_round(r, ports, vc, sa_in, wf_prio, elig, ne, plist, npl, used, lanes_in,
                     wf_v, wf_row, wf_col, c_p, c_v, c_op, c_ok):
    """Phase 4b, :meth:`RouterModel._wavefront_round`: requests input port x output port,
    each with its first eligible VC in round-robin order, granted by the wrapped wave-front
    arbiter; the grants in ``c_*`` in input-port order. Returns their number."""
    P, V = elig.shape
    nc = 0
    for k in range(npl):
        p = plist[k]
        for oq in range(P):
            wf_v[p, oq] = -1
        if ne[p] == 0 or lanes_in[p] >= ports[r, p, PT_WIDTH]:
            continue
        for i in range(V):
            v = _wrap(sa_in[r, p] + i, V)
            if elig[p, v]:
                op = vc[r, p, v, V_OP]
                if used[op] < ports[r, op, PT_WIDTH] and wf_v[p, op] < 0:
                    wf_v[p, op] = v
    for oq in range(P):
        wf_col[oq] = False
    for k in range(npl):
        wf_row[plist[k]] = False
    prio = wf_prio[r]
    for d in range(P):
        diag = _wrap(prio + d, P)
        for k in range(npl):
            p = plist[k]
            oq = _unwrap(diag - p, P)
            if not wf_row[p] and not wf_col[oq] and wf_v[p, oq] >= 0:
                wf_row[p], wf_col[oq] = True, True
                c_p[nc], c_v[nc], c_op[nc], c_ok[nc] = p, wf_v[p, oq], oq, True
                nc += 1
    wf_prio[r] = _wrap(prio + 1, P)
    # grants in input-port order, as the separable allocator traverses them
    for i in range(1, nc):
        j = i
        while j > 0 and c_p[j - 1] > c_p[j]:
            c_p[j - 1], c_p[j] = c_p[j], c_p[j - 1]
            c_v[j - 1], c_v[j] = c_v[j], c_v[j - 1]
            c_op[j - 1], c_op[j] = c_op[j], c_op[j - 1]
            j -= 1
    return nc


@numba.njit(cache=True, inline="always")
def _separable_round(r, age, ports, vc, buf, sa_in, sa_out, pk, elig, ne,
                     plist, npl, used, lanes_in, stamp, out_done, best_pri, best_c,
                     best_tag, c_p, c_v, c_op, c_ok):
    """Phase 4b, :meth:`RouterModel._separable_round`: each input port offers its first
    eligible VC in round-robin order (age: its oldest) whose output has a lane left, each
    output grants one offer (round robin; age: the oldest). The offers in ``c_*``, granted
    ones with ``c_ok``; returns their number."""
    P, V = elig.shape
    nc = 0
    for k in range(npl):
        p = plist[k]
        if ne[p] == 0 or lanes_in[p] >= ports[r, p, PT_WIDTH]:
            continue
        bv, bpri, bsid = -1, INF, 0
        for i in range(V):
            v = _wrap(sa_in[r, p] + i, V)
            if not elig[p, v]:
                continue
            op = vc[r, p, v, V_OP]
            if used[op] >= ports[r, op, PT_WIDTH]:
                continue
            if not age:
                bv = v
                break
            # the front packet's creation cycle and slot, kept in the VC's record
            cre, sid = vc[r, p, v, V_PCRE], vc[r, p, v, V_PSID]
            if cre < bpri or (cre == bpri and _tag_before(pk, sid, bsid)):
                bv, bpri, bsid = v, cre, sid
        if bv < 0:
            continue
        v = bv
        op = vc[r, p, v, V_OP]
        c_p[nc], c_v[nc], c_op[nc], c_ok[nc] = p, v, op, False
        if age:
            pri, sid = bpri, bsid
        else:
            pri, sid = _unwrap(p - sa_out[r, op], P), 0
        if out_done[op] != stamp or pri < best_pri[op] or \
                (pri == best_pri[op] and _tag_before(pk, sid, best_tag[op])):
            out_done[op], best_pri[op], best_c[op] = stamp, pri, nc
            best_tag[op] = sid
        nc += 1
    for c in range(nc):
        op = c_op[c]
        if best_c[op] == c:
            c_ok[c] = True
            sa_out[r, op] = _wrap(c_p[c] + 1, P)
    return nc


@numba.njit(cache=True, inline="always")
def _traverse(t, tl, slot, r, p, v, op, V, B, logcap, inwin, ctr, ports, buf, vc, occ,
              cred_ring, cmask, pend, vaw, act, pk, ev, util, vsent):
    """Phase 5, :meth:`RouterModel._traverse`: the front flit of input p VC v crosses the
    switch to output ``op``; its credit goes upstream (over the credit delay), and a tail
    frees the input VC (a head behind it waits for VC allocation). ``inwin``: t is in the
    measurement window; ``tl``: the cycle the traversal is logged in (t, or for a flit
    that leaves the registered router on port 0 the cycle it crosses). Returns the flit
    (packet slot, sequence | tail << 15 | length << 16)."""
    D1 = cred_ring.shape[3]
    ov = vc[r, p, v, V_OV]
    h = vc[r, p, v, V_HEAD]
    sid, sq_t = buf[r, p, v, h, 0], buf[r, p, v, h, 1]
    vc[r, p, v, V_HEAD] = _wrap(h + 1, B)
    vc[r, p, v, V_CNT] -= 1
    if vc[r, p, v, V_CNT] > 0:
        vc[r, p, v, V_READY] = buf[r, p, v, _wrap(h + 1, B), 2]
    occ[r] -= 1
    ctr[K_LAST] = t
    if logcap > 0:
        _log(ev, ctr, logcap, tl, EV_SWITCH, r, p, v, op, ov, pk[sid, PK_TAG], sq_t & 0x7FFF)
    if p > 0:
        u, up = ports[r, p, PT_NBR], ports[r, p, PT_NPORT]
        ds = _wrap(slot + ports[r, p, PT_CDELAY], D1)
        cred_ring[u, up, v, ds] += 1
        _mark3(cmask, u, ds, up * V + v)
        pend[u, ds] += 1
    if inwin:
        util[r, op] += 1
    vsent[p, v] += 1
    if (sq_t >> 15) & 1:
        vc[r, p, v, V_STATE] = 0
        _unmark(act, r, p * V + v)
        vc[r, p, v, V_RPORT] = -2
        if vc[r, p, v, V_CNT] > 0:
            _mark(vaw, r, p * V + v)
    return sid, sq_t


@numba.njit(cache=True, inline="always")
def _deliver(t, cross, r, op, ov, sid, sq_t, V, B, w0, w1, check, links, Vb, ctr, ports,
             link_busy, vrow, rt, buf, vc, occ, wake, vaw, pk, free, hist):
    """Phase 5, :meth:`ReferenceNetwork._deliver`: the flit granted in t to output ``op``
    VC ``ov`` crosses in t + ``cross`` and is ejected (op 0: a tail completes its packet)
    or written into the next router's input VC over the link's delay, taking a credit; a
    tail frees the output VC (and its link). ``links``: the link model's code. The
    registered router (``cross`` 1) takes the credit and frees the output VC a cycle later
    (:func:`_apply_crossed`). False: an invariant failed."""
    seq, tail = sq_t & 0x7FFF, ((sq_t >> 15) & 1) == 1
    if op == 0:
        te = t + cross
        ctr[K_EJ] += 1
        if w0 <= te < w1:
            ctr[K_WIN_EJ] += 1
        if tail:
            ctr[K_PKT_DONE] += 1
            tc = pk[sid, PK_CREATE]
            if w0 <= tc < w1:
                lat = te - tc
                ctr[K_MEAS_DONE] += 1
                ctr[K_LAT_SUM] += lat
                if lat > ctr[K_LAT_MAX]:
                    ctr[K_LAT_MAX] = lat
                hist[min(lat, hist.shape[0] - 1)] += 1
            free[ctr[K_FREE]] = sid
            ctr[K_FREE] += 1
        return True
    s, sq = ports[r, op, PT_NBR], ports[r, op, PT_NPORT]
    j = _wrap(vc[s, sq, ov, V_HEAD] + vc[s, sq, ov, V_CNT], B)
    if check:
        if vc[s, sq, ov, V_CNT] >= B or (cross == 0 and vc[r, op, ov, V_CRED] <= 0):
            ctr[K_STATUS] = CREDIT
            ctr[K_E0], ctr[K_E1], ctr[K_E2], ctr[K_E3] = r, op, ov, vc[r, op, ov, V_CRED]
            return False
        lp, ls = vc[s, sq, ov, V_LPKT], vc[s, sq, ov, V_LSEQ]
        ok = (seq == 0 and ls == -1) or (sid == lp and seq == ls + 1)
        if not ok:
            ctr[K_STATUS] = CONTIGUITY
            ctr[K_E0], ctr[K_E1], ctr[K_E2] = s, sq, ov
            ctr[K_E3] = pk[sid, PK_TAG]
            return False
        vc[s, sq, ov, V_LPKT] = sid
        vc[s, sq, ov, V_LSEQ] = -1 if tail else seq
    arrive = t + cross + ports[r, op, PT_DELAY] + 1
    buf[s, sq, ov, j, 0], buf[s, sq, ov, j, 1] = sid, sq_t
    buf[s, sq, ov, j, 2] = arrive
    if seq == 0:
        buf[s, sq, ov, j, 3] = _route(rt, s, vrow[ov], pk[sid, PK_DST])
    if vc[s, sq, ov, V_CNT] == 0:
        vc[s, sq, ov, V_READY] = arrive
        # visited when it can act on the flit: its VC allocation (the registered router:
        # the VC request formed in the cycle the flit is written)
        wake[s] = min(wake[s], arrive - cross)
        if vc[s, sq, ov, V_STATE] == 0:
            _mark(vaw, s, sq * V + ov)
    vc[s, sq, ov, V_CNT] += 1
    occ[s] += 1
    if cross:
        return True
    vc[r, op, ov, V_CRED] -= 1
    if tail:
        vc[r, op, ov, V_BUSY] = 0
        if links == 2:
            link_busy[r, op] &= ~(np.int32(1) << (ov // Vb))
        elif links == 1:
            link_busy[r, op] -= 1
    return True


@numba.njit(cache=True, inline="always")
def _cross(t, slot, r, p, v, op, kc, ctr, ports, link_busy, vrow, rt, buf, vc, occ, wake,
           cred_ring, cmask, pend, vaw, act, pk, free, ev, util, vsent, hist, sa_in):
    """A switch grant of input p VC v to output ``op``: the VC's round-robin successor
    becomes the input's first choice, the flit traverses (:func:`_traverse`) and is
    delivered (:func:`_deliver`). Returns the flit's sequence | tail << 15 | length << 16,
    or -1 if an invariant failed. (Its settings come in one tuple ``kc``, built by
    :func:`run`, constants in a shaped kernel: a call of more than 30 arguments is compiled
    as one of ``*args``, which numba cannot inline.)"""
    V, B, check, logcap, w0, w1, links, Vb, cross = kc
    sa_in[r, p] = _wrap(v + 1, V)
    ov = vc[r, p, v, V_OV]
    sid, sq_t = _traverse(t, t + cross if op == 0 else t, slot, r, p, v, op, V, B, logcap,
                          w0 <= t < w1, ctr, ports, buf, vc, occ, cred_ring, cmask, pend, vaw,
                          act, pk, ev, util, vsent)
    if not _deliver(t, cross, r, op, ov, sid, sq_t, V, B, w0, w1, check, links, Vb, ctr,
                    ports, link_busy, vrow, rt, buf, vc, occ, wake, vaw, pk, free, hist):
        return -1
    return sq_t


# -- the registered router (the router RTL's, :meth:`RouterModel._allocate_registered` and
# :meth:`RouterModel._switch_registered`): a cycle is VC allocation of the requests formed
# in the cycle before, switch allocation speculating beside it (one round: every port has
# one lane), the grants, the requests of the next cycle, then what a grant of the cycle
# before does when its flit crosses. A router holding flits is visited every cycle.


@numba.njit(cache=True, inline="always")
def _vc_allocate_registered(t, r, V, vc, vaw, act, rq, spec, spm, pidx, vidx, req_q, req_pri,
                            req_n, req_o):
    """VC allocation of the requests formed last cycle (``rq[r, p * V + v]``: output port *
    V + output VC, plus 1; 0 none) of the heads without an output VC (``vaw[r]``): a
    request for port 0 is granted at once; each output VC still free grants one requester,
    round robin. Each requester is marked in ``spec`` (1: its speculative switch grant is
    void, 2: it holds: port 0, or the only requester of a free output VC) and ``spm`` (its
    bit), and its port put in its record's ``V_OP`` for switch allocation. The output VCs
    granted are ``req_o[:n]`` (n returned): held from the end of the cycle
    (:func:`_hold_granted`), since the requests formed in this cycle see the start of it."""
    PV = req_q.shape[0]
    nreq = 0
    for w in range(vaw.shape[1]):
        m = vaw[r, w]
        while m != 0:
            b, m = _pop_low(m)
            i = w * 64 + b
            q = rq[r, i]
            if q == 0:
                continue
            rq[r, i] = 0
            op, ov = pidx[q - 1], vidx[q - 1]
            vc[r, pidx[i], vidx[i], V_OP] = op
            spm[w] |= _ONE << np.uint64(b)
            if op == 0:
                spec[i] = 2
                _take(t, r, i, 0, 0, vc, vaw, act, pidx, vidx)
                continue
            spec[i] = 1
            if vc[r, op, ov, V_BUSY]:
                continue
            o = q - 1
            pri = _unwrap(i - vc[r, op, ov, V_VAPTR], PV)
            if req_q[o] < 0:
                nreq = _ask(req_o, nreq, o)
                req_q[o], req_pri[o], req_n[o] = i, pri, 1
            else:
                req_n[o] += 1
                if pri < req_pri[o]:
                    req_q[o], req_pri[o] = i, pri
    for k in range(nreq):
        o = req_o[k]
        qq = req_q[o]
        req_q[o] = -1
        if req_n[o] == 1:
            spec[qq] = 2
        _take(t, r, qq, pidx[o], vidx[o], vc, vaw, act, pidx, vidx)
        vc[r, pidx[o], vidx[o], V_VAPTR] = _wrap(qq + 1, PV)
    return nreq


@numba.njit(cache=True, inline="always")
def _sa_eligible_registered(t, r, vc, act, spm, pidx, vidx, elig, ne, plist, pvc, vsent):
    """The switch requests of the registered router: a VC holding an output VC with a flit
    written before this cycle (no credit check: VC allocation covered the packet), and every
    VC that requested VC allocation this cycle (``spm``), granted or not. Marked in
    ``elig``/``ne``/``plist``/``pvc`` as :func:`_sa_eligible` does; returns the ports
    listed."""
    npl = 0
    for w in range(act.shape[1]):
        m = act[r, w] | spm[w]
        while m != 0:
            b, m = _pop_low(m)
            i = w * 64 + b
            p, v = pidx[i], vidx[i]
            vsent[p, v] = 0
            if (spm[w] >> np.uint64(b)) & _ONE or \
                    (vc[r, p, v, V_CNT] > 0 and vc[r, p, v, V_READY] <= t):
                npl = _mark_eligible(p, v, elig, ne, plist, npl, pvc)
    return npl


@numba.njit(cache=True, inline="always")
def _form_requests(t, r, V, vc, buf, vaw, rq, pidx, vidx, pk):
    """The VC requests of cycle t + 1 (:meth:`RouterModel._form_requests`): each VC without
    an output VC whose front is a head written by the end of t asks for port 0, or for the
    lowest VC of its range that is free with credits for the whole packet at the start of
    t (the output VCs granted in t are held, and last cycle's crossings counted, only after
    this, :func:`_hold_granted` and :func:`_apply_crossed`)."""
    for w in range(vaw.shape[1]):
        m = vaw[r, w]
        while m != 0:
            b, m = _pop_low(m)
            i = w * 64 + b
            p, v = pidx[i], vidx[i]
            rq[r, i] = 0
            if vc[r, p, v, V_READY] > t + 1:
                continue
            op = _front_route(r, p, v, False, vc, buf, pk)
            if op <= 0:
                rq[r, i] = op + 1          # port 0: 1 (output VC 0); no route: none
                continue
            rr = vc[r, p, v, V_RRNG]
            lo, hi, ln = rr & 0xFF, (rr >> 8) & 0xFF, max(rr >> 16, 1)
            for c in range(lo, hi + 1):
                if not vc[r, op, c, V_BUSY] and vc[r, op, c, V_CRED] >= ln:
                    rq[r, i] = op * V + c + 1
                    break


@numba.njit(cache=True, inline="always")
def _hold_granted(r, vc, spec, spm, req_o, nreq, pidx, vidx):
    """The end of the registered router's cycle: the output VCs VC allocation granted are
    held, and the marks of this cycle's requesters cleared."""
    for k in range(nreq):
        vc[r, pidx[req_o[k]], vidx[req_o[k]], V_BUSY] = 1
    for w in range(spm.shape[0]):
        m = spm[w]
        spm[w] = 0
        while m != 0:
            b, m = _pop_low(m)
            spec[w * 64 + b] = 0


@numba.njit(cache=True, inline="always")
def _apply_crossed(r, V, check, vc, dfl, dn, ctr):
    """The crossing of the registered router's grants of an earlier cycle (``dfl[r, :dn[r]]``:
    output port * V + output VC, | 1 << 20 for a tail): each takes a credit of its output
    VC, a tail frees it. False: a credit count went negative (``ctr`` says where)."""
    for k in range(dn[r]):
        d = dfl[r, k]
        o = d & 0xFFFFF
        op, ov = o // V, o % V
        vc[r, op, ov, V_CRED] -= 1
        if check and vc[r, op, ov, V_CRED] < 0:
            ctr[K_STATUS] = CREDIT
            ctr[K_E0], ctr[K_E1], ctr[K_E2], ctr[K_E3] = r, op, ov, vc[r, op, ov, V_CRED]
            return False
        if d >> 20:
            vc[r, op, ov, V_BUSY] = 0
    dn[r] = 0
    return True


@numba.njit(cache=True, inline="always")
def _end_of_cycle(t, cfg, ctr, occ):
    """The end of cycle t: flit conservation (every ``C_EVERY`` cycles when checking) and
    the watchdog. False: the run stops (``ctr[K_STATUS]`` says why)."""
    if cfg[C_CHECK] and (t + 1) % cfg[C_EVERY] == 0:
        total = 0
        for r in range(occ.shape[0]):
            total += occ[r]
        if total != ctr[K_INJ] - ctr[K_EJ]:
            ctr[K_STATUS] = CONSERVATION
            ctr[K_E0], ctr[K_E1], ctr[K_E2] = ctr[K_INJ], ctr[K_EJ], total
            return False
    if ctr[K_INJ] > ctr[K_EJ] and t - ctr[K_LAST] > cfg[C_WATCHDOG]:
        ctr[K_STATUS] = DEADLOCK
        return False
    return ctr[K_STATUS] == OK


_FIX = []          # numba's own index fix-up, kept the first time it is replaced
_DEPTH = [0]       # nonnegative_indices() contexts open (in the thread holding the lock)


@contextlib.contextmanager
def nonnegative_indices():
    """Within it, numba compiles array indexing without the fix-up of a negative index.

    numba lets a negative index count from the end (``a[-1]``), and pays for it on every
    signed index of every dimension of every access: a shift, an and and an add. Every
    index :func:`run` computes is non-negative (a network has at least 2 chips, so a
    destination is never -1), so :func:`compile_run` compiles it inside this context.
    numba has no option for this: its index fix-up, ``numba.np.arrayobj.fix_integer_index``,
    is replaced while the context is open, under numba's compiler lock (so no other thread
    compiles meanwhile), and numba's own is put back when the outermost context closes; a
    numba without that function compiles as it always does."""
    from numba.core import types
    from numba.core.compiler_lock import global_compiler_lock
    from numba.np import arrayobj
    if not _FIX:
        fix = getattr(arrayobj, "fix_integer_index", None)
        if fix is None:
            yield
            return
        _FIX.append(fix)

    def cast_only(context, builder, idxty, idx, size):
        return context.cast(builder, idx, idxty, types.intp)

    with global_compiler_lock:
        _DEPTH[0] += 1
        arrayobj.fix_integer_index = cast_only
        try:
            yield
        finally:
            _DEPTH[0] -= 1
            if _DEPTH[0] == 0:
                arrayobj.fix_integer_index = _FIX[0]


def compile_run(args: tuple, kern=None) -> None:
    """Compile :func:`run` (or ``kern``, a shaped one from :func:`kernel_for`) for these
    arguments, or load it from numba's on-disk cache, inside :func:`nonnegative_indices`,
    unless this process has it already. The cache does
    not know how a function was compiled: a first call of ``run`` outside the context would
    compile, and cache for every later process, the slower code."""
    kern = run if kern is None else kern
    sig = tuple(numba.typeof(a) for a in args)
    if sig not in kern.overloads:
        with nonnegative_indices():
            kern.compile(sig)


def scratch(R: int, P: int, V: int, width: np.ndarray) -> dict:
    """run()'s working arrays, by parameter name, for R routers of P ports of V VCs whose
    port p has ``width[r, p]`` lanes."""
    PV = P * V
    return {
        "req_q": np.full(PV, -1, np.int64),     # VA: requester per output VC (op * V + ov)
        "req_pri": np.empty(PV, np.int64),
        "req_tag": np.empty(PV, np.int64),      # age: the requester's packet slot (for ties)
        "req_o": np.empty(PV, np.int64),        # VA: the output VCs asked for, ascending
        "c_p": np.empty(PV, np.int64),          # SA: offers / grants of a round
        "c_v": np.empty(PV, np.int64),
        "c_op": np.empty(PV, np.int64),
        "c_ok": np.empty(PV, np.bool_),
        "elig": np.zeros((P, V), np.bool_),     # SA: VC may send a flit this cycle
        "ne": np.zeros(P, np.int64),            # eligible VCs per input port
        "best_pri": np.zeros(P, np.int64),      # SA: best offer per output this round
        "best_c": np.zeros(P, np.int64),
        "best_tag": np.zeros(P, np.int64),      # age: its packet slot (for ties)
        "plist": np.zeros(P, np.int64),         # SA: input ports with an eligible VC
        "pvc": np.zeros(P, np.int64),           # SA: the VC last marked eligible per input
        "maxw": width.max(axis=1).astype(np.int64),   # SA rounds: the widest port's lanes
        "wf_v": np.full((P, P), -1, np.int64),  # wavefront SA: VC of input p requesting q
        "wf_row": np.zeros(P, np.bool_),
        "wf_col": np.zeros(P, np.bool_),
        "vsent": np.zeros((P, V), np.int64),    # flits a VC sent this cycle (parallel links)
        "used": np.zeros(P, np.int64),          # SA: lanes used this cycle per output port
        "lanes_in": np.zeros(P, np.int64),      # and per input port
        "out_done": np.zeros(P, np.int64),      # output arbitrated at SA visit number stamp
        "pidx": np.arange(PV, dtype=np.int64) // V,   # VC bit -> (port, VC)
        "vidx": np.arange(PV, dtype=np.int64) % V,
        # the registered router: this cycle's VC requesters (1: switch grant void unless
        # VC allocation is sure, 2: sure) and their bits; the output VCs granted the switch
        "spec": np.zeros(PV, np.int8),
        "spm": np.zeros((PV + 63) // 64, np.uint64),
        "gl": np.zeros(P, np.int64),
    }


@intrinsic
def _shaped(typingctx, a, shape):
    """The C-contiguous array a viewed with the shape ``shape`` (a's own, given again): an
    index's strides are computed from the shape, so a shape of constants compiles every
    access with constant strides."""
    if not isinstance(a, types.Array) or a.layout != "C" or \
            not isinstance(shape, types.BaseTuple) or len(shape) != a.ndim:
        return None

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        src = make_array(aty)(context, builder, args[0])
        dst = make_array(aty)(context, builder)
        dims = [context.cast(builder, d, t, types.intp) for d, t in
                zip(cgutils.unpack_tuple(builder, args[1]), signature.args[1])]
        size = context.get_constant(types.intp,
                                    context.get_abi_sizeof(context.get_data_type(aty.dtype)))
        strides, step = [], size
        for d in reversed(dims):
            strides.insert(0, step)
            step = builder.mul(step, d)
        populate_array(dst, data=src.data, shape=dims, strides=strides, itemsize=size,
                       meminfo=src.meminfo, parent=src.parent)
        return dst._getvalue()
    return a(a, shape), codegen


def _make_run(shape, kind):
    """:func:`run` compiled for one state shape and router (:func:`kernel_for`), or, with
    zeros and -1s, for every one (``run``, the generic kernel). ``shape``: (ports, VCs per
    port, buffer flits, credit-ring slots); ``kind``: the values of ``cfg[KIND]`` (allocator,
    checks, bypass, link model, VCs per link, registered router). numba compiles a closure's
    variables as constants: every index into the per-VC records, the flit buffers, the credit
    rings and the bit masks then has constant strides instead of ones loaded from the
    arguments (61 arrays, their shapes spilled to the stack), and the branches of the other
    routers fold away. numba's on-disk cache keys a closure by its variables' values too, so
    each shape is compiled once per machine."""
    SP, SV, SB, SD1 = shape
    # the router as scalar constants (-1: read from cfg). numba prunes a branch whose test
    # compares a closure's constant before it inlines the phases: the registered router's
    # test names its constant (``KCROSS == 1``), so a shaped kernel of another router never
    # inlines the registered router's phases, nor a registered one the others' (numba's
    # front end, not LLVM, is most of a compile); the generic kernel (-1) keeps both
    KALLOC, KCHECK, KBYPASS, KLINKS, KVB, KCROSS = kind

    @numba.njit(cache=True, error_model="numpy", _nrt=False)
    def run(t0, t1, cfg, fcfg, ctr,
            ports, link_busy, vrow, rt,
            buf, vc, occ, wake, cred_ring, cmask, pend,
            sa_in, sa_out, vaw, act, rq, dfl, dn, dcyc,
            pk, free,
            nxt, sj, sk, srcn, inj_vc, inj_slot, inj_done, inj_ptr,
            tr, tr_ptr, tr_end, perm, hot, hist, ev, util, wf_prio,
            req_q, req_pri, req_tag, req_o, c_p, c_v, c_op, c_ok, elig, ne, best_pri, best_c,
            best_tag, plist, pvc, maxw, wf_v, wf_row, wf_col, vsent, used, lanes_in, out_done,
            pidx, vidx, spec, spm, gl):
        """Simulate cycles t0 .. t1-1. Returns the cycle it stopped at (t1, or the cycle an
        invariant failed; ``ctr[K_STATUS]`` says which). The arrays after ``wf_prio`` are
        :func:`scratch`'s.

        Compiled without numba's reference counting (``_nrt=False``): the phases are inlined
        into this loop, and each array a phase takes would otherwise be counted in and out on
        every router visit (an atomic add each way), which made a split kernel run at a sixth
        of the speed; so run() allocates nothing (its working arrays come from :func:`scratch`)
        and every array it touches belongs to the caller."""
        R = ports.shape[0]
        # the shape: a constant in a shaped kernel, else the state's own
        P = SP if SP else ports.shape[1]
        V = SV if SV else vc.shape[2]
        B = SB if SB else buf.shape[3]
        D1 = SD1 if SD1 else cred_ring.shape[3]
        NW = (P * V + 63) // 64                 # 64-bit words of a router's VC bit set
        ports = _shaped(ports, (R, P, PT_FIELDS))
        link_busy, sa_in = _shaped(link_busy, (R, P)), _shaped(sa_in, (R, P))
        sa_out, dfl, util = _shaped(sa_out, (R, P)), _shaped(dfl, (R, P)), _shaped(util, (R, P))
        rt = _shaped(rt, (R, rt.shape[1], rt.shape[2], 4))
        buf = _shaped(buf, (R, P, V, B, 4))
        vc = _shaped(vc, (R, P, V, V_FIELDS))
        cred_ring = _shaped(cred_ring, (R, P, V, D1))
        cmask, pend = _shaped(cmask, (R, D1, NW)), _shaped(pend, (R, D1))
        vaw, act = _shaped(vaw, (R, NW)), _shaped(act, (R, NW))
        rq = _shaped(rq, (R, P * V))
        elig, vsent = _shaped(elig, (P, V)), _shaped(vsent, (P, V))
        wf_v, spm = _shaped(wf_v, (P, P)), _shaped(spm, (NW,))
        # the router: constants in a shaped kernel
        alloc = KALLOC if KALLOC >= 0 else cfg[C_ALLOC]
        check = KCHECK if KCHECK >= 0 else cfg[C_CHECK]
        bypass = KBYPASS if KBYPASS >= 0 else cfg[C_BYPASS]
        links = KLINKS if KLINKS >= 0 else cfg[C_LINKS]
        Vb = KVB if KVB >= 0 else cfg[C_CLS]
        cross = KCROSS if KCROSS >= 0 else cfg[C_CROSS]
        wavefront = alloc == 1
        age = alloc == 2
        # bypass 1: a head may cross in the cycle it is allocated; links: the link model, Vb
        # VCs of one link; cross 1: the registered router (its phases below)
        w0, w1, logcap = cfg[C_W0], cfg[C_W1], cfg[C_LOGCAP]
        kc = (V, B, check, logcap, w0, w1, links, Vb, cross)      # _cross's settings
        # out_done's stamps count from 0 again in every call; elig and ne start clear
        stamp = 0
        for p in range(P):
            out_done[p], ne[p] = 0, 0
            for v in range(V):
                elig[p, v] = False
        for t in range(t0, t1):
            slot = t % D1
            for r in range(R):
                # a router is visited when credits arrive, its source has a packet due or is
                # injecting one, or ``wake`` says it may act: the cycle after one it acted in
                # while it holds flits, else the earliest cycle a buffered front flit becomes
                # ready (a flit written into it lowers its wake to the flit's ready cycle);
                # every other change to what it can do (an output VC or link freed, buffer
                # room) comes from its own acting
                if wake[r] > t and pend[r, slot] == 0 and inj_vc[r] < 0 and srcn[r] > t:
                    continue
                acted = False
                if (KCROSS == 1 or (KCROSS < 0 and cross == 1)) and dn[r] > 0 and \
                        dcyc[r] < t - 1:
                    # grants of a cycle it was not visited after: their flits have crossed
                    if not _apply_crossed(r, V, check, vc, dfl, dn, ctr):
                        return t
                if pend[r, slot] > 0:
                    acted = True
                    if not _credit_arrival(r, slot, B, check, vc, cred_ring, cmask, pend,
                                           pidx, vidx, ctr):
                        return t
                if inj_vc[r] >= 0 or srcn[r] <= t:
                    # (else its source has nothing to inject: _inject would write nothing)
                    wrote = _inject(t, r, cfg, fcfg, ctr, ports, vrow, rt, buf, vc, occ, vaw, pk,
                                    free, nxt, sj, sk, srcn, inj_vc, inj_slot, inj_done, inj_ptr,
                                    tr, tr_ptr, tr_end, perm, hot, ev)
                    if wrote < 0:
                        return t
                    acted = acted or wrote > 0
                if occ[r] == 0:
                    # nothing buffered: only a flit or credits arriving, or its source, make it
                    # act again (the visit rule's other triggers)
                    wake[r] = INF
                    continue
                if KCROSS == 1 or (KCROSS < 0 and cross == 1):
                    nreq = _vc_allocate_registered(t, r, V, vc, vaw, act, rq, spec, spm, pidx,
                                                   vidx, req_q, req_pri, req_tag, req_o)
                    npl = _sa_eligible_registered(t, r, vc, act, spm, pidx, vidx, elig, ne,
                                                  plist, pvc, vsent)
                    nc = 0
                    if npl > 0 and _sole_requests(r, P, vc, ne, plist, npl, pvc):
                        # one VC per input port requests, no two the same output: every
                        # allocator grants them all (as below)
                        if wavefront:
                            wf_prio[r] = _wrap(wf_prio[r] + 1, P)
                        for k in range(npl):
                            p = plist[k]
                            v = pvc[p]
                            op = vc[r, p, v, V_OP]
                            if not wavefront:
                                sa_out[r, op] = _wrap(p + 1, P)
                            c_p[k], c_v[k], c_op[k], c_ok[k] = p, v, op, True
                        nc = npl
                    elif npl > 0:
                        for p in range(P):
                            used[p], lanes_in[p] = 0, 0
                        stamp += 1
                        if wavefront:
                            nc = _wavefront_round(r, ports, vc, sa_in, wf_prio, elig, ne, plist,
                                                  npl, used, lanes_in, wf_v, wf_row, wf_col,
                                                  c_p, c_v, c_op, c_ok)
                        else:
                            nc = _separable_round(r, False, ports, vc, buf, sa_in, sa_out, pk,
                                                  elig, ne, plist, npl, used, lanes_in, stamp,
                                                  out_done, best_pri, best_c, best_tag,
                                                  c_p, c_v, c_op, c_ok)
                    ng = 0
                    for c in range(nc):
                        if not c_ok[c]:
                            continue
                        p, v, op = c_p[c], c_v[c], c_op[c]
                        if spec[p * V + v] == 1:
                            # VC allocation might have refused it: void, the pointers moved
                            sa_in[r, p] = _wrap(v + 1, V)
                            continue
                        ov = vc[r, p, v, V_OV]
                        sq_t = _cross(t, slot, r, p, v, op, kc, ctr, ports, link_busy, vrow, rt,
                                      buf, vc, occ, wake, cred_ring, cmask, pend, vaw, act, pk,
                                      free, ev, util, vsent, hist, sa_in)
                        if sq_t < 0:
                            return t
                        if op != 0:
                            gl[ng] = (op * V + ov) | (((sq_t >> 15) & 1) << 20)
                            ng += 1
                    for k in range(npl):
                        ne[plist[k]] = 0
                        for v in range(V):
                            elig[plist[k], v] = False
                    _form_requests(t, r, V, vc, buf, vaw, rq, pidx, vidx, pk)
                    _hold_granted(r, vc, spec, spm, req_o, nreq, pidx, vidx)
                    if not _apply_crossed(r, V, check, vc, dfl, dn, ctr):
                        return t
                    for k in range(ng):
                        dfl[r, k] = gl[k]
                    dn[r], dcyc[r] = ng, t
                    wake[r] = t + 1 if occ[r] > 0 else INF
                    continue
                va_acted, soon = _vc_allocate(t, r, V, B, age, links, Vb, vc, buf, vaw, act,
                                              link_busy, ports, pk, pidx, vidx,
                                              req_q, req_pri, req_tag, req_o)
                acted = acted or va_acted
                npl, soon = _sa_eligible(t, r, bypass, vc, act, pidx, vidx, elig, ne,
                                         plist, pvc, vsent, soon)
                if npl == 0:
                    # nothing moved: it next acts when a front flit becomes ready, a flit or
                    # credits arrive, or its source has a packet due (the visit rule above)
                    wake[r] = t + 1 if acted else soon
                    continue
                wake[r] = t + 1
                if maxw[r] == 1 and _sole_requests(r, P, vc, ne, plist, npl, pvc):
                    # every port has one lane, each input port has one VC that may send and
                    # no two of them ask for the same output: every allocator grants them all
                    # in its one round (in input-port order, as the rounds below traverse
                    # them), and its round-robin pointers move as in that round
                    if wavefront:
                        wf_prio[r] = _wrap(wf_prio[r] + 1, P)
                    for k in range(npl):
                        p = plist[k]
                        v = pvc[p]
                        elig[p, v] = False
                        ne[p] = 0
                        op = vc[r, p, v, V_OP]
                        if not wavefront:
                            sa_out[r, op] = _wrap(p + 1, P)
                        if _cross(t, slot, r, p, v, op, kc, ctr, ports, link_busy, vrow, rt, buf,
                                  vc, occ, wake, cred_ring, cmask, pend, vaw, act, pk, free, ev,
                                  util, vsent, hist, sa_in) < 0:
                            return t
                    continue
                for p in range(P):
                    used[p], lanes_in[p] = 0, 0
                # switch allocation in rounds, as many as the router's widest port has lanes:
                # each round every port with a lane left wins at most one flit
                for lane in range(maxw[r]):
                    stamp += 1
                    if wavefront:
                        nc = _wavefront_round(r, ports, vc, sa_in, wf_prio, elig, ne, plist,
                                              npl, used, lanes_in, wf_v, wf_row, wf_col,
                                              c_p, c_v, c_op, c_ok)
                    else:
                        nc = _separable_round(r, age, ports, vc, buf, sa_in, sa_out, pk, elig,
                                              ne, plist, npl, used, lanes_in, stamp, out_done,
                                              best_pri, best_c, best_tag, c_p, c_v, c_op, c_ok)
                    if nc == 0:
                        break
                    for c in range(nc):
                        if not c_ok[c]:
                            continue
                        p, v, op = c_p[c], c_v[c], c_op[c]
                        lanes_in[p] += 1
                        used[op] += 1
                        ov = vc[r, p, v, V_OV]
                        sq_t = _cross(t, slot, r, p, v, op, kc, ctr, ports, link_busy, vrow, rt,
                                      buf, vc, occ, wake, cred_ring, cmask, pend, vaw, act, pk,
                                      free, ev, util, vsent, hist, sa_in)
                        if sq_t < 0:
                            return t
                        # the VC may send another flit this cycle (parallel links: while its
                        # link has lanes left)
                        more = ((sq_t >> 15) & 1) == 0 and vc[r, p, v, V_CNT] > 0 and \
                            vc[r, p, v, V_READY] <= t and \
                            (op == 0 or vc[r, op, ov, V_CRED] > 0) and \
                            (links == 0 or op == 0 or
                             vsent[p, v] * ports[r, op, PT_LINKS] < ports[r, op, PT_WIDTH])
                        if elig[p, v] and not more:
                            elig[p, v] = False
                            ne[p] -= 1
                for k in range(npl):
                    ne[plist[k]] = 0
                    for v in range(V):
                        elig[plist[k], v] = False
            if not _end_of_cycle(t, cfg, ctr, occ):
                return t
        return t1
    return run


run = _make_run((0, 0, 0, 0), (-1,) * len(KIND))
_SHAPED: dict = {}


def kernel_for(cfg: np.ndarray, state: dict):
    """:func:`run` compiled for this state's shape and ``cfg``'s router (:func:`_make_run`),
    one per shape in a process. It holds them as constants: the state's arrays and
    ``cfg[KIND]`` must not change after (the :class:`~.sim.Simulator` never changes them)."""
    key = ((state["ports"].shape[1], state["vc"].shape[2], state["buf"].shape[3],
            state["cred_ring"].shape[3]), tuple(int(cfg[i]) for i in KIND))
    if key not in _SHAPED:
        _SHAPED[key] = _make_run(*key)
    return _SHAPED[key]
