"""The compiled simulation kernel: :mod:`.reference`'s cycle, on flat arrays, under numba.

Same contract as the reference (see :mod:`models.common.netsim` for the pipeline); the
tests run both on random small networks and compare every injection and switch traversal.
Speed comes from visiting a router only in the cycles it can act in (credits arrive, its
source has a packet due, or ``wake``: the cycle after one it acted in, else the cycle its
earliest front flit becomes ready), keeping every per-cycle decision in integer arrays, and,
for large networks whose state outgrows the caches, touching as few memory lines per cycle
as possible:

- everything a cycle reads or writes about one VC sits in one 64-byte record (``vc``,
  fields ``V_*`` below): its queue, allocation and head route, and the output VC of the
  same number (credits, held, round-robin pointer);
- a head's route (port, VC range, packet length) is read from the tables once, into its
  record, not on every cycle it waits;
- VC allocation visits only the VCs of ``vaw`` (a head without an output VC), switch
  allocation only those of ``act`` (an output VC held) and a credit arrival only those of
  ``cmask``, one bit per (port, VC);
- a flit is 16 bytes (``buf``: packet slot, sequence number | tail << 15 | length << 16,
  ready cycle, destination);
- the route tables are packed, one entry per (router, row, destination), rows shared by
  the VCs that route alike (``vrow``, see :func:`models.common.netsim.sim.route_table`).

State is a dict of arrays built by :class:`models.common.netsim.sim.Simulator`; scalars
live in ``cfg`` (int64) and ``ctr`` (int64 counters, indices below).

numba's on-disk cache of :func:`run` is keyed by this file only, not by the functions it
inlines from :mod:`.traffic` (``destination``, ``gap``, ``uniform``): a change there must
also change this file (e.g. this line: traffic rules of 2026-11, no self-addressed packets),
or a warm cache keeps running the old rule.
"""

from __future__ import annotations

import numba
import numpy as np

from .traffic import MODE_TRACE, destination, gap, uniform

# cfg indices
(C_VCS, C_BUF, C_LEN, C_MODE, C_SEED, C_CHECK, C_WATCHDOG, C_EVERY, C_LOGCAP, C_W0, C_W1,
 C_ALLOC, C_BYPASS, C_LINKS, C_CLS, C_VINJ, C_SOURCE) = range(17)
# ctr indices
(K_INJ, K_EJ, K_LAST, K_WIN_EJ, K_MEAS_DONE, K_LAT_SUM, K_LOG, K_STATUS, K_E0, K_E1, K_E2,
 K_E3, K_PKT_INJ, K_PKT_DONE, K_FREE, K_MEAS_INJ, K_LAT_MAX) = range(17)
# per-VC record fields (``vc[router, port, VC, field]``, one 64-byte line per VC): the input
# VC's queue (buffer head index, flit count, cycle its front flit is ready), its allocation
# (cycle allocated, state 0 idle / 1 holding an output VC, output port, output VC), its head's
# route (port, lowest and highest VC, packet length; port -2: not read yet) and its last
# received flit (packet slot, sequence number; invariant checks), and the *output* VC of the
# same number: credits, held by a packet, VC-allocation round-robin pointer
(V_HEAD, V_CNT, V_READY, V_AT, V_STATE, V_OP, V_OV, V_RPORT, V_RLO, V_RHI, V_RLEN, V_CRED,
 V_BUSY, V_VAPTR, V_LPKT, V_LSEQ) = range(16)
V_FIELDS = 16
# status codes
OK, DEADLOCK, CONSERVATION, CREDIT, CONTIGUITY, CAPACITY, LOGFULL = range(7)
EV_INJECT, EV_SWITCH = 0, 1
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


_DB_MUL = np.uint64(0x03F79D71B4CB0A89)
_DB_TABLE = np.zeros(64, np.int64)
for _i in range(64):
    _DB_TABLE[((1 << _i) * 0x03F79D71B4CB0A89 % (1 << 64)) >> 58] = _i
_ONE = np.uint64(1)


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
    ``vc_allocate``); -1: none."""
    for pas in range(2):
        need = B if pas == 0 else np.int64(ln)
        for l in range(nl):
            if link_busy[r, op] & (np.int32(1) << l):
                continue
            for c in range(lo, hi + 1):
                ov = l * Vb + c
                if not vc[r, op, ov, V_BUSY] and vc[r, op, ov, V_CRED] >= need:
                    return ov
    return -1


@numba.njit(cache=True, error_model="numpy")
def run(t0, t1, cfg, fcfg, ctr,
        nbr, nbr_port, width, delay, cdelay, nlinks, link_busy, vrow, rt,
        buf, vc, occ, wake, cred_ring, cmask, pend,
        sa_in, sa_out, vaw, act,
        pk_src, pk_dst, pk_len, pk_create, pk_tag, free,
        nxt, sj, sk, srcn, inj_vc, inj_slot, inj_done, inj_ptr,
        tr, tr_ptr, tr_end, perm, hot, hist, ev, util, wf_prio):
    """Simulate cycles t0 .. t1-1. Returns the cycle it stopped at (t1, or the cycle an
    invariant failed; ``ctr[K_STATUS]`` says which)."""
    R, P = nbr.shape
    V, B, L = cfg[C_VCS], cfg[C_BUF], cfg[C_LEN]
    mode, seed, check = cfg[C_MODE], cfg[C_SEED], cfg[C_CHECK]
    watchdog, every, logcap = cfg[C_WATCHDOG], cfg[C_EVERY], cfg[C_LOGCAP]
    w0, w1 = cfg[C_W0], cfg[C_W1]
    q_inject, hot_frac = fcfg[0], fcfg[1]
    D1 = cred_ring.shape[1]
    H = hist.shape[0]
    PV = P * V
    logging = logcap > 0
    # scratch
    req_q = np.empty(PV, np.int64)          # VA: requester per output VC (index op*V+ov)
    req_pri = np.empty(PV, np.int64)
    c_p = np.empty(PV, np.int64)             # SA stage-1 winners
    c_v = np.empty(PV, np.int64)
    c_op = np.empty(PV, np.int64)
    c_ok = np.empty(PV, np.bool_)
    elig = np.zeros((P, V), np.bool_)       # SA: VC may send a flit this cycle
    ne = np.zeros(P, np.int64)               # eligible VCs per input port
    best_pri = np.zeros(P, np.int64)         # SA: best offer per output this round
    best_c = np.zeros(P, np.int64)
    plist = np.zeros(P, np.int64)           # SA: input ports with an eligible VC
    maxw = np.zeros(R, np.int64)             # SA rounds: the router's widest port
    for r in range(R):
        for p in range(P):
            maxw[r] = max(maxw[r], width[r, p])
    wf_v = np.full((P, P), -1, np.int64)     # wavefront SA: VC of input p requesting q
    wf_row = np.zeros(P, np.bool_)
    wf_col = np.zeros(P, np.bool_)
    wavefront = cfg[C_ALLOC] == 1
    age = cfg[C_ALLOC] == 2                 # oldest packet first (creation cycle, then tag)
    bypass = cfg[C_BYPASS]                  # 1: a head may cross in the cycle it is allocated
    plinks = cfg[C_LINKS] >= 1              # parallel links, each held by one packet
    perlink = cfg[C_LINKS] == 2             # ... each with its own VCs: VC l * Vb + class
    Vb = cfg[C_CLS]                         # VCs of one link (the routing's VC numbers)
    VI = cfg[C_VINJ]                        # local VCs the source writes into
    open_src = cfg[C_SOURCE] == 1           # no FIFO: a packet only into an empty local VC
    req_tag = np.empty(PV, np.int64)        # age: the requester's tag (ties of creation)
    best_tag = np.zeros(P, np.int64)
    vsent = np.zeros((P, V), np.int64)       # flits a VC sent this cycle (parallel links)
    used = np.zeros(P, np.int64)             # SA: lanes used this cycle per output port
    lanes_in = np.zeros(P, np.int64)         # and per input port
    out_done = np.zeros(P, np.int64)         # output arbitrated at SA visit number stamp
    stamp = 0
    n_chips = R
    NW = vaw.shape[1]
    pidx = np.empty(PV, np.int64)            # VC bit -> (port, VC)
    vidx = np.empty(PV, np.int64)
    for i in range(PV):
        pidx[i], vidx[i] = i // V, i % V
    for t in range(t0, t1):
        slot = t % D1
        for r in range(R):
            # a router is visited when credits arrive, its source has a packet due or is
            # injecting one, or ``wake`` says it may act: the cycle after one it acted in,
            # else the earliest cycle a buffered front flit becomes ready (a flit written
            # into it lowers its wake to the flit's ready cycle); every other change to what
            # it can do (an output VC or link freed, buffer room) comes from its own acting
            if wake[r] > t and pend[r, slot] == 0 and inj_vc[r] < 0 and srcn[r] > t:
                continue
            acted = False
            # 1. credits that arrive this cycle (the (port, VC) bits of cmask[r, slot])
            if pend[r, slot] > 0:
                pend[r, slot] = 0
                acted = True
                for w in range(NW):
                    m = cmask[r, slot, w]
                    cmask[r, slot, w] = 0
                    while m != 0:
                        low = m & (~m + _ONE)
                        m ^= low
                        i = w * 64 + _DB_TABLE[(low * _DB_MUL) >> np.uint64(58)]
                        p, v = pidx[i], vidx[i]
                        vc[r, p, v, V_CRED] += cred_ring[r, slot, p, v]
                        cred_ring[r, slot, p, v] = 0
                        if check and vc[r, p, v, V_CRED] > B:
                            ctr[K_STATUS] = CREDIT
                            ctr[K_E0], ctr[K_E1], ctr[K_E2], ctr[K_E3] = \
                                r, p, v, vc[r, p, v, V_CRED]
                            return t
            # 2. injection: up to width[r, 0] flits from the source queue
            budget = width[r, 0]
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
                        dst = destination(mode, perm, hot, hot_frac, n_chips, r,
                                          uniform(seed, r, k, -1), uniform(seed, r, k, -2))
                    top = ctr[K_FREE]
                    if top == 0:
                        ctr[K_STATUS] = CAPACITY
                        return t
                    ctr[K_FREE] = top - 1
                    slot_id = free[top - 1]
                    pk_src[slot_id], pk_dst[slot_id], pk_len[slot_id] = r, dst, ln
                    pk_create[slot_id] = tc
                    pk_tag[slot_id] = (r << 32) | sk[r]
                    sk[r] += 1
                    if mode == MODE_TRACE:
                        tr_ptr[r] += 1
                    else:
                        j = sj[r, s] + 1
                        sj[r, s] = j
                        nxt[r, s] += gap(uniform(seed, r, s, j), q_inject)
                    srcn[r] = _source_head(r, mode, nxt, tr, tr_ptr, tr_end)[0]
                    if w0 <= tc < w1:
                        ctr[K_MEAS_INJ] += 1
                    ctr[K_PKT_INJ] += 1
                    inj_vc[r], inj_slot[r], inj_done[r] = vv, slot_id, 0
                    inj_ptr[r] = _wrap(vv + 1, VI)
                v, sid = inj_vc[r], inj_slot[r]
                j = _wrap(vc[r, 0, v, V_HEAD] + vc[r, 0, v, V_CNT], B)
                ln = pk_len[sid]
                buf[r, 0, v, j, 0] = sid
                buf[r, 0, v, j, 1] = inj_done[r] | ((inj_done[r] == ln - 1) << 15) | (ln << 16)
                buf[r, 0, v, j, 2] = t + 1
                if inj_done[r] == 0:
                    buf[r, 0, v, j, 3] = _route(rt, r, vrow[0], pk_dst[sid])
                if vc[r, 0, v, V_CNT] == 0:
                    vc[r, 0, v, V_READY] = t + 1
                    if vc[r, 0, v, V_STATE] == 0:
                        _mark(vaw, r, v)
                vc[r, 0, v, V_CNT] += 1
                occ[r] += 1
                acted = True
                ctr[K_INJ] += 1
                ctr[K_LAST] = t
                if logging:
                    _log(ev, ctr, logcap, t, EV_INJECT, r, 0, v, -1, -1, pk_tag[sid],
                         inj_done[r])
                inj_done[r] += 1
                budget -= 1
                if inj_done[r] == pk_len[sid]:
                    inj_vc[r] = -1
            if occ[r] == 0:
                wake[r] = t + 1 if acted else INF
                continue
            # the earliest cycle a front flit not ready yet becomes ready
            soon = INF
            # 3. route computation + VC allocation for heads that arrived in an earlier cycle
            #    (the VCs with a head and no output VC yet are the set bits of vaw[r])
            nreq = 0
            for w in range(NW):
                m = vaw[r, w]
                while m != 0:
                    low = m & (~m + _ONE)
                    m ^= low
                    i = w * 64 + _DB_TABLE[(low * _DB_MUL) >> np.uint64(58)]
                    p, v = pidx[i], vidx[i]
                    if vc[r, p, v, V_READY] > t:
                        soon = min(soon, vc[r, p, v, V_READY])
                        continue
                    op = vc[r, p, v, V_RPORT]
                    if op == -2:
                        # the head's route, read once from the head flit (looked up in the
                        # tables when the head was written, see _route): a blocked head
                        # retries every cycle
                        h = vc[r, p, v, V_HEAD]
                        rw = buf[r, p, v, h, 3]
                        op = (rw & 0xFF) - 1
                        vc[r, p, v, V_RPORT], vc[r, p, v, V_RLO] = op, (rw >> 8) & 0xFF
                        vc[r, p, v, V_RHI], vc[r, p, v, V_RLEN] = (rw >> 16) & 0xFF, buf[r, p, v, h, 1] >> 16
                    if op == 0:
                        vc[r, p, v, V_STATE], vc[r, p, v, V_OP], vc[r, p, v, V_OV] = 1, 0, 0
                        _unmark(vaw, r, i)
                        _mark(act, r, i)
                        vc[r, p, v, V_AT] = t
                        acted = True
                        continue
                    if op < 0:
                        continue
                    ln = vc[r, p, v, V_RLEN]
                    if perlink:
                        ov = _pick_link_vc(vc, link_busy, r, op,
                                           nlinks[r, op], Vb, vc[r, p, v, V_RLO],
                                           vc[r, p, v, V_RHI], B, ln)
                    else:
                        if plinks and link_busy[r, op] >= nlinks[r, op]:
                            continue
                        ov = -1
                        for c in range(vc[r, p, v, V_RLO], vc[r, p, v, V_RHI] + 1):
                            if not vc[r, op, c, V_BUSY] and vc[r, op, c, V_CRED] >= ln:
                                ov = c
                                break
                    if ov >= 0:
                        o = op * V + ov
                        qq = p * V + v
                        if age:
                            sid = buf[r, p, v, vc[r, p, v, V_HEAD], 0]
                            pri, tg = pk_create[sid], pk_tag[sid]
                        else:
                            pri, tg = _unwrap(qq - vc[r, op, ov, V_VAPTR], PV), 0
                        if nreq == 0:
                            for x in range(PV):
                                req_q[x] = -1
                        nreq += 1
                        if req_q[o] < 0 or pri < req_pri[o] or \
                                (pri == req_pri[o] and tg < req_tag[o]):
                            req_q[o], req_pri[o], req_tag[o] = qq, pri, tg
            if nreq > 0:
                acted = True
                for o in range(PV):
                    qq = req_q[o]
                    if qq < 0:
                        continue
                    op, ov = o // V, o % V
                    p, v = qq // V, qq % V
                    if perlink:
                        bit = np.int32(1) << (ov // Vb)
                        if link_busy[r, op] & bit:
                            continue            # the link went to a lower output VC
                        link_busy[r, op] |= bit
                    elif plinks:
                        if link_busy[r, op] >= nlinks[r, op]:
                            continue            # the port's links went to lower output VCs
                        link_busy[r, op] += 1
                    vc[r, op, ov, V_BUSY] = 1
                    vc[r, p, v, V_STATE], vc[r, p, v, V_OP], vc[r, p, v, V_OV] = 1, op, ov
                    _unmark(vaw, r, qq)
                    _mark(act, r, qq)
                    vc[r, p, v, V_AT] = t
                    vc[r, op, ov, V_VAPTR] = _wrap(qq + 1, PV)
            # 4. switch allocation in rounds, as many as the router's widest port has lanes:
            #    each round every port with a lane left wins at most one flit (input first,
            #    then output)
            #    over the VCs holding an output VC (the set bits of act[r]); elig is all False
            #    between routers
            npl = 0
            for p in range(P):
                used[p], lanes_in[p], ne[p] = 0, 0, 0
            for w in range(NW):
                m = act[r, w]
                while m != 0:
                    low = m & (~m + _ONE)
                    m ^= low
                    i = w * 64 + _DB_TABLE[(low * _DB_MUL) >> np.uint64(58)]
                    p, v = pidx[i], vidx[i]
                    vsent[p, v] = 0
                    if vc[r, p, v, V_READY] > t and vc[r, p, v, V_CNT] > 0:
                        soon = min(soon, vc[r, p, v, V_READY])
                    elif vc[r, p, v, V_AT] < t + bypass and vc[r, p, v, V_CNT] > 0 and \
                            (vc[r, p, v, V_OP] == 0 or
                             vc[r, vc[r, p, v, V_OP], vc[r, p, v, V_OV], V_CRED] > 0):
                        elig[p, v] = True
                        if ne[p] == 0:
                            plist[npl] = p
                            npl += 1
                        ne[p] += 1
            if npl == 0:
                # nothing moved: it next acts when a front flit becomes ready, a flit or
                # credits arrive, or its source has a packet due (the visit rule above)
                wake[r] = t + 1 if acted else soon
                continue
            wake[r] = t + 1
            for lane in range(maxw[r]):
                nc = 0
                stamp += 1
                if wavefront:
                    # requests: input port x output port, each with its first eligible VC in
                    # round-robin order; the wrapped wave-front arbiter grants a matching
                    for k in range(npl):
                        p = plist[k]
                        for oq in range(P):
                            wf_v[p, oq] = -1
                        if ne[p] == 0 or lanes_in[p] >= width[r, p]:
                            continue
                        for i in range(V):
                            v = _wrap(sa_in[r, p] + i, V)
                            if elig[p, v]:
                                op = vc[r, p, v, V_OP]
                                if used[op] < width[r, op] and wf_v[p, op] < 0:
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
                    if nc == 0:
                        break
                    # grants in input-port order, as the separable allocator traverses them
                    for i in range(1, nc):
                        j = i
                        while j > 0 and c_p[j - 1] > c_p[j]:
                            c_p[j - 1], c_p[j] = c_p[j], c_p[j - 1]
                            c_v[j - 1], c_v[j] = c_v[j], c_v[j - 1]
                            c_op[j - 1], c_op[j] = c_op[j], c_op[j - 1]
                            j -= 1
                else:
                    for k in range(npl):
                        p = plist[k]
                        if ne[p] == 0 or lanes_in[p] >= width[r, p]:
                            continue
                        bv, bpri, btg = -1, INF, INF
                        for i in range(V):
                            v = _wrap(sa_in[r, p] + i, V)
                            if not elig[p, v]:
                                continue
                            op = vc[r, p, v, V_OP]
                            if used[op] >= width[r, op]:
                                continue
                            if not age:
                                bv = v
                                break
                            sid = buf[r, p, v, vc[r, p, v, V_HEAD], 0]
                            if pk_create[sid] < bpri or (pk_create[sid] == bpri and
                                                         pk_tag[sid] < btg):
                                bv, bpri, btg = v, pk_create[sid], pk_tag[sid]
                        if bv < 0:
                            continue
                        v = bv
                        op = vc[r, p, v, V_OP]
                        c_p[nc], c_v[nc], c_op[nc], c_ok[nc] = p, v, op, False
                        if age:
                            pri, tg = bpri, btg
                        else:
                            pri, tg = _unwrap(p - sa_out[r, op], P), 0
                        if out_done[op] != stamp or pri < best_pri[op] or \
                                (pri == best_pri[op] and tg < best_tag[op]):
                            out_done[op], best_pri[op], best_c[op] = stamp, pri, nc
                            best_tag[op] = tg
                        nc += 1
                    if nc == 0:
                        break
                    for c in range(nc):
                        op = c_op[c]
                        if best_c[op] == c:
                            c_ok[c] = True
                            sa_out[r, op] = _wrap(c_p[c] + 1, P)
                for c in range(nc):
                    if not c_ok[c]:
                        continue
                    p, v, op = c_p[c], c_v[c], c_op[c]
                    sa_in[r, p] = _wrap(v + 1, V)
                    lanes_in[p] += 1
                    used[op] += 1
                    ov = vc[r, p, v, V_OV]
                    h = vc[r, p, v, V_HEAD]
                    sid, sq_t = buf[r, p, v, h, 0], buf[r, p, v, h, 1]
                    seq, tail = sq_t & 0x7FFF, ((sq_t >> 15) & 1) == 1
                    vc[r, p, v, V_HEAD] = _wrap(h + 1, B)
                    vc[r, p, v, V_CNT] -= 1
                    if vc[r, p, v, V_CNT] > 0:
                        vc[r, p, v, V_READY] = buf[r, p, v, _wrap(h + 1, B), 2]
                    occ[r] -= 1
                    ctr[K_LAST] = t
                    if logging:
                        _log(ev, ctr, logcap, t, EV_SWITCH, r, p, v, op, ov, pk_tag[sid], seq)
                    if p > 0:
                        u, up = nbr[r, p], nbr_port[r, p]
                        ds = _wrap(slot + cdelay[r, p], D1)
                        cred_ring[u, ds, up, v] += 1
                        _mark3(cmask, u, ds, up * V + v)
                        pend[u, ds] += 1
                    if w0 <= t < w1:
                        util[r, op] += 1
                    vsent[p, v] += 1
                    if op == 0:
                        ctr[K_EJ] += 1
                        if w0 <= t < w1:
                            ctr[K_WIN_EJ] += 1
                        if tail:
                            ctr[K_PKT_DONE] += 1
                            tc = pk_create[sid]
                            if w0 <= tc < w1:
                                lat = t - tc
                                ctr[K_MEAS_DONE] += 1
                                ctr[K_LAT_SUM] += lat
                                if lat > ctr[K_LAT_MAX]:
                                    ctr[K_LAT_MAX] = lat
                                hist[min(lat, H - 1)] += 1
                            free[ctr[K_FREE]] = sid
                            ctr[K_FREE] += 1
                    else:
                        s, sq = nbr[r, op], nbr_port[r, op]
                        j = _wrap(vc[s, sq, ov, V_HEAD] + vc[s, sq, ov, V_CNT], B)
                        if check:
                            if vc[s, sq, ov, V_CNT] >= B or vc[r, op, ov, V_CRED] <= 0:
                                ctr[K_STATUS] = CREDIT
                                ctr[K_E0], ctr[K_E1], ctr[K_E2], ctr[K_E3] = \
                                    r, op, ov, vc[r, op, ov, V_CRED]
                                return t
                            lp, ls = vc[s, sq, ov, V_LPKT], vc[s, sq, ov, V_LSEQ]
                            ok = (seq == 0 and ls == -1) or (sid == lp and seq == ls + 1)
                            if not ok:
                                ctr[K_STATUS] = CONTIGUITY
                                ctr[K_E0], ctr[K_E1], ctr[K_E2] = s, sq, ov
                                ctr[K_E3] = pk_tag[sid]
                                return t
                            vc[s, sq, ov, V_LPKT] = sid
                            vc[s, sq, ov, V_LSEQ] = -1 if tail else seq
                        buf[s, sq, ov, j, 0], buf[s, sq, ov, j, 1] = sid, sq_t
                        buf[s, sq, ov, j, 2] = t + delay[r, op] + 1
                        if seq == 0:
                            buf[s, sq, ov, j, 3] = _route(rt, s, vrow[ov], pk_dst[sid])
                        if vc[s, sq, ov, V_CNT] == 0:
                            vc[s, sq, ov, V_READY] = t + delay[r, op] + 1
                            wake[s] = min(wake[s], t + delay[r, op] + 1)
                            if vc[s, sq, ov, V_STATE] == 0:
                                _mark(vaw, s, sq * V + ov)
                        vc[s, sq, ov, V_CNT] += 1
                        occ[s] += 1
                        vc[r, op, ov, V_CRED] -= 1
                        if tail:
                            vc[r, op, ov, V_BUSY] = 0
                            if perlink:
                                link_busy[r, op] &= ~(np.int32(1) << (ov // Vb))
                            elif plinks:
                                link_busy[r, op] -= 1
                    if tail:
                        vc[r, p, v, V_STATE] = 0
                        _unmark(act, r, p * V + v)
                        vc[r, p, v, V_RPORT] = -2
                        if vc[r, p, v, V_CNT] > 0:
                            _mark(vaw, r, p * V + v)
                    e = not tail and vc[r, p, v, V_CNT] > 0 and \
                        vc[r, p, v, V_READY] <= t and \
                        (op == 0 or vc[r, op, ov, V_CRED] > 0) and \
                        (not plinks or op == 0 or
                         vsent[p, v] * nlinks[r, op] < width[r, op])
                    if elig[p, v] and not e:
                        elig[p, v] = False
                        ne[p] -= 1
            for k in range(npl):
                for v in range(V):
                    elig[plist[k], v] = False
        # end of cycle: invariants and the watchdog
        if check and (t + 1) % every == 0:
            total = 0
            for r in range(R):
                total += occ[r]
            if total != ctr[K_INJ] - ctr[K_EJ]:
                ctr[K_STATUS] = CONSERVATION
                ctr[K_E0], ctr[K_E1], ctr[K_E2] = ctr[K_INJ], ctr[K_EJ], total
                return t
        if ctr[K_INJ] > ctr[K_EJ] and t - ctr[K_LAST] > watchdog:
            ctr[K_STATUS] = DEADLOCK
            return t
        if ctr[K_STATUS] != OK:
            return t
    return t1
