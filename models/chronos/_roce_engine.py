"""The compiled event loop of :func:`models.chronos.roce.simulate` (numba). Same rules, same
order of events as :func:`~models.chronos.roce.simulate_reference`, and the same phases under
the same names: ``push`` (:func:`_push`, with :func:`_pop` its heap's pop), ``note``,
``increase``, ``try_send`` and ``start_egress``, and one function per event of its loop that
does more than set a flag.

The phases are inlined into the event loop (``inline="always"``) and share the state as a few
record arrays (numpy structured arrays: per flow, per host, per switch port, per event
source, and one record of the run's counters) rather than one array per variable: numba
counts a reference for every array a function is handed, on every event, so the number of
arrays, not their size, is what a phase costs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..common import eventheap as heap   # inlined: its version 2026-11-28b (see there)

(TX_DONE, WAKE, SW_ARRIVE, SW_TX_DONE, PFC_FRAME, CNP, ALPHA, DECREASE, INCREASE, ACK_GEN,
 SW_ACK) = range(11)

_i, _f, _b = np.int64, np.float64, np.bool_
# the reference's per-flow lists
FLOW = np.dtype([("size", _i), ("left", _i), ("delivered", _i), ("stage", _i), ("bc_stage", _i),
                 ("rate", _f), ("target", _f), ("alpha", _f), ("bc_bytes", _f),
                 ("inc_due", _f), ("next_avail", _f), ("np_last", _f), ("finish", _f),
                 ("alpha_flag", _b), ("dec_flag", _b), ("first", _b), ("inc_pending", _b)],
                align=True)
# a host: its flows hf[f0:f0 + nf], round-robin position, NIC, pause, wake-up timer, and the
# FIFO of its ACKs (ahead .. atail in the packet pool)
HOST = np.dtype([("f0", _i), ("nf", _i), ("rr", _i), ("wake_gen", _i), ("ahead", _i),
                 ("atail", _i), ("wake_at", _f), ("nic_busy", _b), ("paused", _b)], align=True)
# a switch port: its egress FIFOs of data (head .. tail) and of ACKs (hhead .. htail), the
# bytes queued there, whether it is sending; the bytes held for its ingress, and whether the
# switch has paused that ingress (PFC)
PORT = np.dtype([("head", _i), ("tail", _i), ("hhead", _i), ("htail", _i), ("queued", _f),
                 ("ingress", _f), ("busy", _b), ("paused", _b)], align=True)
# a source of events (a FIFO timeline; the last one: the general heap): its ring's head,
# count and last time, its key (head time, head sequence) and place in the heap of sources
SOURCE = np.dtype([("head", _i), ("count", _i), ("kt", _f), ("ks", _i), ("pos", _i),
                   ("last", _f)], align=True)
# the run's counters: ECN marks, CNPs, PFC pauses, uniform draws taken, free pool slots,
# trace steps; the event queue's sources in the heap, general heap size, next sequence
# number, ring capacity and "a ring was full"; the traced flow; bytes held now and at most
STATE = np.dtype([("marks", _i), ("cnps", _i), ("pauses", _i), ("draws", _i), ("free", _i),
                  ("ntr", _i), ("nsrc", _i), ("gsize", _i), ("seq", _i), ("cap", _i),
                  ("full", _i), ("trace_flow", _i), ("held", _f), ("peak", _f)], align=True)
# the packet pool: one row per packet or ACK waiting in a FIFO: (flow, payload or flag, next)
FLOW_, X_, NEXT_ = range(3)


# ------------------------------------------------------------------ the event queue --
# Events are popped in (time, sequence number) order, the sequence number counting pushes:
# exactly the order of the reference's one binary heap. Most events sit on deterministic
# per-resource timelines whose times only grow in push order (a NIC's transmit-done, a host
# link's arrivals at the switch, an egress port's transmit-done, a switch-to-host link's
# arrivals, a host's PFC frames), so each of these ``5 n`` timelines is a FIFO ring and only
# their heads compete, in a small binary heap of sources keyed by (head time, head sequence).
# Timers, wake-ups and injected CNPs (and any event that would break a FIFO's order, or find
# its ring full) go to one general binary heap (:mod:`models.common.eventheap`), itself one
# source. A source's events are in (time, sequence) order, so the smallest head is the next
# event of the single-heap order. ``Q``: (ring times, ring integers, the sources, the heap
# of sources, the general heap's times and integers); its counters are in the STATE record.


@njit(cache=True, inline="always")
def _src_up(sh, srcs, i):
    s = sh[i]
    t, q = srcs[s].kt, srcs[s].ks
    while i > 0:
        p = (i - 1) >> 1
        u = sh[p]
        if t < srcs[u].kt or (t == srcs[u].kt and q < srcs[u].ks):
            sh[i] = u
            srcs[u].pos = i
            i = p
        else:
            break
    sh[i] = s
    srcs[s].pos = i


@njit(cache=True, inline="always")
def _src_down(sh, srcs, nsrc, i):
    s = sh[i]
    t, q = srcs[s].kt, srcs[s].ks
    while True:
        c = 2 * i + 1
        if c >= nsrc:
            break
        u = sh[c]
        if c + 1 < nsrc:
            v = sh[c + 1]
            if srcs[v].kt < srcs[u].kt or (srcs[v].kt == srcs[u].kt and srcs[v].ks < srcs[u].ks):
                c += 1
                u = v
        if srcs[u].kt < t or (srcs[u].kt == t and srcs[u].ks < q):
            sh[i] = u
            srcs[u].pos = i
            i = c
        else:
            break
    sh[i] = s
    srcs[s].pos = i


@njit(cache=True, inline="always")
def _push(Q, st, s, t, kind, a, b):
    """Schedule event (t, kind, a, b) on timeline ``s`` (-1: the general heap)."""
    qt, qi, srcs, sh, gt, gi = Q
    seq = st.seq
    st.seq = seq + 1
    cap = st.cap
    if s >= 0:
        r = srcs[s]
        c = r.count
        if c < cap and (c == 0 or t >= r.last):
            j = s * cap + ((r.head + c) & (cap - 1))
            qt[j] = t
            qi[4 * j] = seq
            qi[4 * j + 1] = kind
            qi[4 * j + 2] = a
            qi[4 * j + 3] = b
            r.count = c + 1
            r.last = t
            if c == 0:
                r.kt = t
                r.ks = seq
                n = st.nsrc
                sh[n] = s
                st.nsrc = n + 1
                _src_up(sh, srcs, n)
            return
        if c == cap:
            st.full = 1
    g = srcs.shape[0] - 1                   # the general heap's source id
    ne = st.gsize
    top = heap.push(gt, gi, ne, t, seq, kind, a, b) == 0
    st.gsize = ne + 1
    if top:
        srcs[g].kt = t
        srcs[g].ks = seq
        if ne == 0:
            n = st.nsrc
            sh[n] = g
            st.nsrc = n + 1
            _src_up(sh, srcs, n)
        else:
            _src_up(sh, srcs, srcs[g].pos)


@njit(cache=True, inline="always")
def _pop(Q, st):
    """Remove and return the next event (t, kind, a, b); the queue must not be empty."""
    qt, qi, srcs, sh, gt, gi = Q
    s = sh[0]
    g = srcs.shape[0] - 1
    if s != g:
        cap = st.cap
        r = srcs[s]
        j = s * cap + r.head
        t, kind, a, b = qt[j], qi[4 * j + 1], qi[4 * j + 2], qi[4 * j + 3]
        r.head = (r.head + 1) & (cap - 1)
        c = r.count - 1
        r.count = c
        more = c > 0
        if more:
            j = s * cap + r.head
            r.kt = qt[j]
            r.ks = qi[4 * j]
    else:
        t, kind, a, b = heap.top(gt, gi)
        ne = st.gsize
        heap.pop(gt, gi, ne)
        st.gsize = ne - 1
        more = ne > 1
        if more:
            srcs[g].kt = gt[0]
            srcs[g].ks = gi[0]
    if not more:
        n = st.nsrc - 1
        st.nsrc = n
        if n > 0:
            sh[0] = sh[n]
    if st.nsrc > 0:
        _src_down(sh, srcs, st.nsrc, 0)
    return t, kind, a, b


@njit(cache=True)
def _grow_rings(qt, qi, srcs, cap):
    """Every ring at twice its capacity ``cap``, each one's events from slot 0."""
    qt2 = np.empty(2 * qt.shape[0])
    qi2 = np.empty(2 * qi.shape[0], np.int64)
    for q in range(srcs.shape[0] - 1):
        for i in range(srcs[q].count):
            j = q * cap + ((srcs[q].head + i) & (cap - 1))
            j2 = q * 2 * cap + i
            qt2[j2] = qt[j]
            for w in range(4):
                qi2[4 * j2 + w] = qi[4 * j + w]
        srcs[q].head = 0
    return qt2, qi2


@njit(cache=True)
def _grow_f(x):
    y = np.empty((2 * x.shape[0],) + x.shape[1:], x.dtype)
    y[:x.shape[0]] = x
    return y


# Packets and ACKs wait in FIFOs (the reference's deques): linked lists through one pool with
# a free list; a FIFO is its (first, last) rows, -1 when empty.

@njit(cache=True, inline="always")
def _append(pool, free, st, first, last, f, x):
    """(flow f, x) appended to the FIFO (first, last); returns its new (first, last)."""
    top = st.free - 1
    st.free = top
    k = free[top]
    pool[k, FLOW_] = f
    pool[k, X_] = x
    pool[k, NEXT_] = -1
    if first < 0:
        first = k
    else:
        pool[last, NEXT_] = k
    return first, k


@njit(cache=True, inline="always")
def _popleft(pool, free, st, first, last):
    """The front (flow, x) of the FIFO (first, last), not empty, removed; returns (flow, x,
    first, last)."""
    k = first
    first = pool[k, NEXT_]
    if first < 0:
        last = -1
    top = st.free
    free[top] = k
    st.free = top + 1
    return pool[k, FLOW_], pool[k, X_], first, last


# ------------------------------------------------------------------------ the phases --
# Parameters, as tuples of scalars (see _config):
#   link    (C, mtu, hdr, ack, dly, cnp_dly)              bytes/s, bytes, seconds
#   switch  (pfc_mode, pfc_alpha, buf, resume_off, xoff, xon, ecn, k_min, k_max, p_max,
#            cnp_int, ack_fifo)                            PFC, RED/ECN, where ACKs queue
#   rp      (g, t_alpha, t_dec, t_inc, fr, r_ai, r_hai, min_rate, first_frac, clamp, bc,
#            line)                                         the DCQCN reaction point

@njit(cache=True, inline="always")
def _config(p):
    """The parameter vector of :func:`models.chronos.roce._vector` as (link, switch, rp)."""
    link = (p[0], int(p[1]), int(p[2]), int(p[26]), p[3], p[4])
    switch = (int(p[5]), p[6], p[7], p[8], p[9], p[10], p[11] != 0.0, p[12], p[13], p[14],
              p[15], p[28] == 0.0)
    rp = (p[16], p[17], p[18], p[19], int(p[20]), p[21], p[22], p[23], p[24], p[25] != 0.0,
          p[27], p[0])
    return link, switch, rp


@njit(cache=True, inline="always")
def _note(trace, st, fr, t, what, f):
    """Record one step of the traced flow: (t, what, R_C, R_T, alpha); ``what`` indexes
    TRACE_KINDS of :mod:`models.chronos.roce`."""
    if f == st.trace_flow:
        i = st.ntr
        trace[i, 0] = t
        trace[i, 1] = what
        trace[i, 2] = fr.rate
        trace[i, 3] = fr.target
        trace[i, 4] = fr.alpha
        st.ntr = i + 1


@njit(cache=True, inline="always")
def _increase(rp, fr, trace, st, t, f, timer_count, byte_count):
    """One rate increase of flow f (record ``fr``), noted as 3 fast recovery, 4 additive or
    5 hyper. Without a byte counter (HPCC's ns-3): ``timer_count`` is the timer stage before
    this increase, < F fast recovery, == F additive, above hyper. With one (Zhu et al.): the
    timer and byte-counter expirations since the last cut, this one counted; both <= F fast
    recovery, both > F hyper, else additive."""
    g, t_alpha, t_dec, t_inc, F, r_ai, r_hai, min_rate, first_frac, clamp, bc, line = rp
    if bc > 0.0:
        hi, lo = max(timer_count, byte_count), min(timer_count, byte_count)
        what = 3 if hi <= F else (5 if lo > F else 4)
    else:
        what = 3 if timer_count < F else (4 if timer_count == F else 5)
    if what == 4:
        fr.target += r_ai
    elif what == 5:
        fr.target += r_hai
    if fr.target > line:
        fr.target = line
    fr.rate = fr.rate / 2 + fr.target / 2
    _note(trace, st, fr, t, what, f)


@njit(cache=True, inline="always")
def _try_send(t, h, link, rp, n, hosts, flows, hf, pool, free, Q, trace, st):
    """NIC h, if idle, sends its next ACK, or else (unless paused) a packet of the next flow
    round-robin whose rate allows one now, or else wakes when the soonest one does."""
    C, mtu, hdr, ack, dly, cnp_dly = link
    ho = hosts[h]
    if ho.nic_busy:
        return
    if ho.ahead >= 0:                       # ACKs first, never paused (ns-3 queue 0)
        f, flag, ho.ahead, ho.atail = _popleft(pool, free, st, ho.ahead, ho.atail)
        ho.nic_busy = True
        done = t + ack / C
        _push(Q, st, h, done, TX_DONE, h, 0)
        _push(Q, st, n + h, done + dly, SW_ACK, f, flag)
        return
    if ho.paused:
        return
    f0 = ho.f0
    kq = ho.nf
    pick = -1
    soonest = np.inf
    for step in range(1, kq + 1):
        i = (ho.rr + step) % kq
        fr = flows[hf[f0 + i]]
        if fr.left > 0:
            if fr.next_avail <= t:
                pick = i
                break
            if fr.next_avail < soonest:
                soonest = fr.next_avail
    if pick < 0:
        if soonest < ho.wake_at:
            ho.wake_gen += 1
            ho.wake_at = soonest
            _push(Q, st, -1, soonest, WAKE, h, ho.wake_gen)
        return
    ho.rr = pick
    f = hf[f0 + pick]
    fr = flows[f]
    payload = min(mtu, fr.left)
    fr.left -= payload
    s = payload + hdr
    fr.next_avail = t + s / fr.rate
    bc = rp[10]
    if bc > 0.0 and not fr.first and fr.left > 0:
        fr.bc_bytes += s
        if fr.bc_bytes >= bc:               # the byte counter expires
            fr.bc_bytes -= bc
            fr.bc_stage += 1
            _increase(rp, fr, trace, st, t, f, fr.stage, fr.bc_stage)
    ho.nic_busy = True
    done = t + s / C
    _push(Q, st, h, done, TX_DONE, h, 0)
    _push(Q, st, n + h, done + dly, SW_ARRIVE, f, payload)


@njit(cache=True, inline="always")
def _start_egress(t, port, link, switch, n, src, dst, uniform, ports, flows, pool, free, Q,
                  st):
    """Egress port ``port`` starts its next ACK (ahead of data) or packet: ECN marking on
    the queue left behind, PFC resume at the packet's ingress, and the receiver's ACK or CNP."""
    C, mtu, hdr, ack, dly, cnp_dly = link
    (pfc_mode, pfc_alpha, buf, resume_off, xoff, xon, ecn, k_min, k_max, p_max, cnp_int,
     ack_fifo) = switch
    po = ports[port]
    if po.hhead >= 0:                       # ACKs first, outside the PFC accounting
        f, flag, po.hhead, po.htail = _popleft(pool, free, st, po.hhead, po.htail)
        po.busy = True
        done = t + ack / C
        _push(Q, st, 2 * n + port, done, SW_TX_DONE, port, 0)
        if flag != 0:
            _push(Q, st, 3 * n + port, done + dly, CNP, f, 0)
        return
    f, payload, po.head, po.tail = _popleft(pool, free, st, po.head, po.tail)
    is_ack = payload < 0
    s = ack if is_ack else payload + hdr
    h = dst[f] if is_ack else src[f]
    pi = ports[h]
    po.queued -= s
    pi.ingress -= s
    held = st.held - s
    st.held = held
    mark = False
    if ecn and not is_ack:
        q = po.queued
        u = uniform[st.draws]
        st.draws += 1
        if q > k_max:
            mark = True
        elif q > k_min:
            mark = u < p_max * (q - k_min) / (k_max - k_min)
    if pfc_mode != 0 and pi.paused:
        if pfc_mode == 1:
            resume = pi.ingress <= xon
        else:
            thr = pfc_alpha * (buf - held)
            resume = pi.ingress <= 0 or pi.ingress + resume_off <= thr
        if resume:
            pi.paused = False
            _push(Q, st, 4 * n + h, t + dly, PFC_FRAME, h, 0)
    po.busy = True
    done = t + s / C
    _push(Q, st, 2 * n + port, done, SW_TX_DONE, port, 0)
    if is_ack:
        if payload == -2:                   # its CNP flag
            _push(Q, st, 3 * n + port, done + dly, CNP, f, 0)
        return
    arrive = done + dly
    fr = flows[f]
    fr.delivered += payload
    if fr.delivered == fr.size:
        fr.finish = arrive
    flag = 0
    if mark:
        st.marks += 1
        if arrive - fr.np_last >= cnp_int:
            fr.np_last = arrive
            st.cnps += 1
            flag = 1
            if ack == 0:
                _push(Q, st, 3 * n + port, arrive + cnp_dly, CNP, f, 0)
    if ack != 0:                            # the receiver returns an ACK (CNP flag if set)
        _push(Q, st, 3 * n + port, arrive, ACK_GEN, f, flag)


# ------------------------------------------------------------ the events of the loop --

@njit(cache=True, inline="always")
def _on_switch_arrival(t, kind, f, b, link, switch, n, src, dst, ports, pool, free, Q, st):
    """A packet (SW_ARRIVE, ``b`` its payload) or an ACK in the data FIFO (SW_ACK, ``b`` its
    CNP flag) enters the switch: queued at its egress port, counted at its ingress port (PFC
    pause). Returns the egress port if it is idle, else -1."""
    C, mtu, hdr, ack, dly, cnp_dly = link
    (pfc_mode, pfc_alpha, buf, resume_off, xoff, xon, ecn, k_min, k_max, p_max, cnp_int,
     ack_fifo) = switch
    if kind == SW_ARRIVE:
        payload = b
        s = payload + hdr
        h = src[f]
        port = dst[f]
    else:                                   # an ACK in the data FIFO: -1 - its CNP flag
        payload = -1 - b
        s = ack
        h = dst[f]
        port = src[f]
    pi = ports[h]
    po = ports[port]
    pi.ingress += s
    held = st.held + s
    st.held = held
    if held > st.peak:
        st.peak = held
    po.head, po.tail = _append(pool, free, st, po.head, po.tail, f, payload)
    po.queued += s
    if pfc_mode != 0 and not pi.paused:
        if pfc_mode == 1:
            pause = pi.ingress >= xoff
        else:
            pause = pi.ingress >= pfc_alpha * (buf - held)
        if pause:
            pi.paused = True
            st.pauses += 1
            _push(Q, st, 4 * n + h, t + dly, PFC_FRAME, h, 1)
    return -1 if po.busy else port


@njit(cache=True, inline="always")
def _on_cnp(t, f, t_alpha, t_dec, first_frac, flows, Q, trace, st):
    """A CNP reaches flow f's sender; the first one cuts the rate and starts the timers."""
    fr = flows[f]
    if fr.left > 0:
        fr.alpha_flag = True
        fr.dec_flag = True
        if fr.first:
            fr.alpha = 1.0
            fr.alpha_flag = False
            _push(Q, st, -1, t + t_alpha, ALPHA, f, 0)
            _push(Q, st, -1, t + t_dec + 1e-9, DECREASE, f, 0)
            fr.rate = first_frac * fr.rate
            fr.target = fr.rate
            fr.first = False
            _note(trace, st, fr, t, 0, f)


@njit(cache=True, inline="always")
def _on_alpha(t, f, g, t_alpha, flows, Q, trace, st):
    """Flow f's alpha timer: alpha moves towards 1 if a CNP came since, else towards 0."""
    fr = flows[f]
    if fr.left > 0:
        if fr.alpha_flag:
            fr.alpha = (1 - g) * fr.alpha + g
        else:
            fr.alpha = (1 - g) * fr.alpha
        fr.alpha_flag = False
        _push(Q, st, -1, t + t_alpha, ALPHA, f, 0)
        _note(trace, st, fr, t, 1, f)


@njit(cache=True, inline="always")
def _on_decrease(t, f, t_dec, t_inc, min_rate, clamp, flows, Q, trace, st):
    """Flow f's decrease timer: a cut if a CNP came since, and the increase timer restarts."""
    fr = flows[f]
    if fr.left > 0:
        _push(Q, st, -1, t + t_dec, DECREASE, f, 0)
        if fr.dec_flag:
            if clamp or fr.stage != 0:
                fr.target = fr.rate
            fr.rate = max(min_rate, fr.rate * (1 - fr.alpha / 2))
            fr.stage = 0
            fr.bc_stage = 0
            fr.bc_bytes = 0.0
            fr.dec_flag = False
            fr.inc_due = t + t_inc
            if not fr.inc_pending:
                fr.inc_pending = True
                _push(Q, st, -1, fr.inc_due, INCREASE, f, 0)
            _note(trace, st, fr, t, 2, f)


@njit(cache=True, inline="always")
def _on_increase(t, f, t_inc, rp, flows, Q, trace, st):
    """Flow f's increase timer: waits for its restarted time, or raises the rate (``rp``:
    the reaction point's parameters, for :func:`_increase`)."""
    bc = rp[10]
    fr = flows[f]
    fr.inc_pending = False
    if fr.left > 0 and t < fr.inc_due:     # restarted since: wait for the new time
        fr.inc_pending = True
        _push(Q, st, -1, fr.inc_due, INCREASE, f, 0)
    elif fr.left > 0:
        fr.inc_due = t + t_inc
        fr.inc_pending = True
        _push(Q, st, -1, fr.inc_due, INCREASE, f, 0)
        if bc > 0.0:
            fr.stage += 1
            _increase(rp, fr, trace, st, t, f, fr.stage, fr.bc_stage)
        else:
            _increase(rp, fr, trace, st, t, f, fr.stage, 0)
            fr.stage += 1


# -------------------------------------------------------------------------- the loop --

def run(n, src, dst, size, p, uniform, inj_t, inj_f, log_cap, trace_flow, max_t):
    """The run of :func:`models.chronos.roce.simulate`: (finish, delivered, counts [events,
    marks, CNPs, pauses, stopped], peak buffer, the log's times, kinds and arguments, the
    trace's times and (kind, R_C, R_T, alpha) rows)."""
    m = size.shape[0]
    flows = np.zeros(m, FLOW)
    flows["size"] = size
    flows["left"] = size
    flows["rate"] = flows["target"] = p[0]
    flows["alpha"] = 1.0
    flows["first"] = True
    flows["np_last"] = -np.inf
    hf = np.argsort(src, kind="stable").astype(np.int64)    # each host's flows, in order
    hosts = np.zeros(n, HOST)
    hosts["nf"] = np.bincount(src, minlength=n)
    hosts["f0"] = np.cumsum(hosts["nf"]) - hosts["nf"]
    hosts["rr"] = hosts["ahead"] = hosts["atail"] = -1
    hosts["wake_at"] = np.inf
    ports = np.zeros(n, PORT)
    for k in ("head", "tail", "hhead", "htail"):
        ports[k] = -1
    srcs = np.zeros(5 * n + 1, SOURCE)
    st = np.zeros(1, STATE)
    st["trace_flow"] = trace_flow
    counts, lt, lk, la, trace = _run(n, src, dst, p, uniform, inj_t, inj_f,
                                   log_cap, max_t, flows, hosts, hf, ports, srcs, st)
    return (flows["finish"].copy(), flows["delivered"].copy(), counts, float(st["peak"][0]),
            lt, lk, la, trace[:, 0].copy(), trace[:, 1:].copy())


@njit(cache=True)
def _run(n, src, dst, p, uniform, inj_t, inj_f, log_cap, max_t, flows, hosts, hf, ports,
         srcs, S):
    link, switch, rp = _config(p)
    ack_fifo = switch[11]
    g, t_alpha, t_dec, t_inc, F, r_ai, r_hai, min_rate, first_frac, clamp, bc, line = rp
    m = flows.shape[0]
    st = S[0]
    cap_pk = 1024                           # the packet pool, its free rows on a stack
    pool = np.empty((cap_pk, 3), np.int64)
    free = np.arange(cap_pk - 1, -1, -1).astype(np.int64)
    st.free = cap_pk
    # events: 5 n FIFO timelines (NIC h's transmit-done: h; host h's link to the switch:
    # n + h; egress port p's transmit-done: 2 n + p; port p's link to its host: 3 n + p;
    # PFC frames to host h: 4 n + h) and the general heap (source 5 n)
    ntl = 5 * n
    cap = 64
    st.cap = cap
    qt = np.empty(ntl * cap)
    qi = np.empty(4 * ntl * cap, np.int64)
    gcap = 1024 + 4 * m + inj_t.shape[0]
    gt = np.empty(gcap)
    gi = np.empty(heap.WIDTH * gcap, np.int64)
    sh = np.empty(ntl + 1, np.int64)
    lt = np.empty(max(log_cap, 1))
    lk = np.empty(max(log_cap, 1), np.int64)
    la = np.empty(max(log_cap, 1), np.int64)
    trace = np.empty((64, 5))               # (time, what, R_C, R_T, alpha); what: TRACE_KINDS
    Q = (qt, qi, srcs, sh, gt, gi)
    for i in range(inj_t.shape[0]):
        _push(Q, st, -1, inj_t[i], CNP, inj_f[i], 0)
    h0 = 0                                  # the first sends, host by host (try_send(0, h))
    n_events = 0
    stopped = 0
    t = 0.0
    # Two loops: the outer one grows the arrays (and rebuilds Q), the inner one (the event
    # loop) never reassigns an array.
    finished = False
    while not finished:
        if st.gsize + 16 >= gt.shape[0]:
            gt = _grow_f(gt)
            gi = _grow_f(gi)
        if st.full != 0:                    # a ring was full: double every ring
            st.full = 0
            qt, qi = _grow_rings(qt, qi, srcs, cap)
            cap *= 2
            st.cap = cap
        if st.free < 4:                     # the pool doubles; the new rows are free
            old = pool.shape[0]
            top = st.free
            pool = _grow_f(pool)
            nf = np.empty(2 * old, np.int64)
            nf[:top] = free[:top]
            for i in range(old):
                nf[top + i] = 2 * old - 1 - i
            free = nf
            st.free = top + old
        if st.ntr + 4 >= trace.shape[0]:
            trace = _grow_f(trace)
        Q = (qt, qi, srcs, sh, gt, gi)
        while True:
            if st.gsize + 16 >= gt.shape[0] or st.full != 0 or st.free < 4 \
                    or st.ntr + 4 >= trace.shape[0]:
                break
            # ---- the action: the initial sends first, then one event
            send_host = -1
            egress_port = -1
            if h0 < n:
                if hosts[h0].nf > 0:
                    send_host = h0
                h0 += 1
                if send_host < 0:
                    continue
            else:
                if st.nsrc == 0:
                    finished = True
                    break
                t, kind, a, b = _pop(Q, st)
                if t > max_t:
                    stopped = 1
                    finished = True
                    break
                if n_events < log_cap:
                    lt[n_events] = t
                    lk[n_events] = kind
                    la[n_events] = a
                n_events += 1
                if kind == TX_DONE:
                    hosts[a].nic_busy = False
                    send_host = a
                elif kind == WAKE:
                    if b == hosts[a].wake_gen:
                        hosts[a].wake_at = np.inf
                        send_host = a
                elif kind == SW_ARRIVE or (kind == SW_ACK and ack_fifo):
                    egress_port = _on_switch_arrival(t, kind, a, b, link, switch, n, src, dst,
                                                     ports, pool, free, Q, st)
                elif kind == SW_TX_DONE:
                    po = ports[a]
                    po.busy = False
                    if po.head >= 0 or po.hhead >= 0:
                        egress_port = a
                elif kind == ACK_GEN:
                    send_host = dst[a]
                    ho = hosts[send_host]
                    ho.ahead, ho.atail = _append(pool, free, st, ho.ahead, ho.atail, a, b)
                elif kind == SW_ACK:
                    po = ports[src[a]]
                    po.hhead, po.htail = _append(pool, free, st, po.hhead, po.htail, a, b)
                    if not po.busy:
                        egress_port = src[a]
                elif kind == PFC_FRAME:
                    hosts[a].paused = b == 1
                    if b == 0:
                        send_host = a
                elif kind == CNP:
                    _on_cnp(t, a, t_alpha, t_dec, first_frac, flows, Q, trace, st)
                elif kind == ALPHA:
                    _on_alpha(t, a, g, t_alpha, flows, Q, trace, st)
                elif kind == DECREASE:
                    _on_decrease(t, a, t_dec, t_inc, min_rate, clamp, flows, Q, trace, st)
                else:
                    _on_increase(t, a, t_inc, rp, flows, Q, trace, st)
            if send_host >= 0:
                _try_send(t, send_host, link, rp, n, hosts, flows, hf, pool, free, Q, trace, st)
            if egress_port >= 0:
                _start_egress(t, egress_port, link, switch, n, src, dst, uniform, ports, flows,
                              pool, free, Q, st)
    counts = np.array([n_events, st.marks, st.cnps, st.pauses, stopped], np.int64)
    return counts, lt, lk, la, trace[:st.ntr]
