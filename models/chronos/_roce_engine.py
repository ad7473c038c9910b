"""The compiled event loop of :func:`models.chronos.roce.simulate` (numba). Same rules, same
order of events as :func:`~models.chronos.roce.simulate_reference`."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..common import eventheap as heap   # inlined: its version 2026-11-28b (see there)

(TX_DONE, WAKE, SW_ARRIVE, SW_TX_DONE, PFC_FRAME, CNP, ALPHA, DECREASE, INCREASE, ACK_GEN,
 SW_ACK) = range(11)


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
# event of the single-heap order.


@njit(cache=True, inline="always")
def _src_up(sh, spos, kt, ks, i):
    s = sh[i]
    t, q = kt[s], ks[s]
    while i > 0:
        p = (i - 1) >> 1
        u = sh[p]
        if t < kt[u] or (t == kt[u] and q < ks[u]):
            sh[i] = u
            spos[u] = i
            i = p
        else:
            break
    sh[i] = s
    spos[s] = i


@njit(cache=True, inline="always")
def _src_down(sh, spos, kt, ks, nsrc, i):
    s = sh[i]
    t, q = kt[s], ks[s]
    while True:
        c = 2 * i + 1
        if c >= nsrc:
            break
        u = sh[c]
        if c + 1 < nsrc:
            v = sh[c + 1]
            if kt[v] < kt[u] or (kt[v] == kt[u] and ks[v] < ks[u]):
                c += 1
                u = v
        if kt[u] < t or (kt[u] == t and ks[u] < q):
            sh[i] = u
            spos[u] = i
            i = c
        else:
            break
    sh[i] = s
    spos[s] = i


@njit(cache=True, inline="always")
def _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, s, t, kind, a, b):
    """Schedule event (t, kind, a, b) on timeline ``s`` (-1: the general heap). ``meta``:
    [sources in the heap, general heap size, next sequence number, ring capacity, a ring
    was full]."""
    seq = meta[2]
    meta[2] = seq + 1
    cap = meta[3]
    if s >= 0:
        c = fcnt[s]
        if c < cap and (c == 0 or t >= ftail[s]):
            j = s * cap + ((fhead[s] + c) & (cap - 1))
            qt[j] = t
            qi[4 * j] = seq
            qi[4 * j + 1] = kind
            qi[4 * j + 2] = a
            qi[4 * j + 3] = b
            fcnt[s] = c + 1
            ftail[s] = t
            if c == 0:
                kt[s] = t
                ks[s] = seq
                n = meta[0]
                sh[n] = s
                meta[0] = n + 1
                _src_up(sh, spos, kt, ks, n)
            return
        if c == cap:
            meta[4] = 1
    g = kt.shape[0] - 1                     # the general heap's source id
    ne = meta[1]
    top = heap.push(gt, gi, ne, t, seq, kind, a, b) == 0
    meta[1] = ne + 1
    if top:
        kt[g] = t
        ks[g] = seq
        if ne == 0:
            n = meta[0]
            sh[n] = g
            meta[0] = n + 1
            _src_up(sh, spos, kt, ks, n)
        else:
            _src_up(sh, spos, kt, ks, spos[g])


@njit(cache=True, inline="always")
def _take(qt, qi, fhead, fcnt, gt, gi, sh, spos, kt, ks, meta):
    """Remove and return the next event (t, kind, a, b); the queue must not be empty."""
    s = sh[0]
    g = kt.shape[0] - 1
    if s != g:
        cap = meta[3]
        j = s * cap + fhead[s]
        t, kind, a, b = qt[j], qi[4 * j + 1], qi[4 * j + 2], qi[4 * j + 3]
        fhead[s] = (fhead[s] + 1) & (cap - 1)
        c = fcnt[s] - 1
        fcnt[s] = c
        more = c > 0
        if more:
            j = s * cap + fhead[s]
            kt[s] = qt[j]
            ks[s] = qi[4 * j]
    else:
        t, kind, a, b = heap.top(gt, gi)
        ne = meta[1]
        heap.pop(gt, gi, ne)
        meta[1] = ne - 1
        more = ne > 1
        if more:
            kt[g] = gt[0]
            ks[g] = gi[0]
    if not more:
        n = meta[0] - 1
        meta[0] = n
        if n > 0:
            sh[0] = sh[n]
    if meta[0] > 0:
        _src_down(sh, spos, kt, ks, meta[0], 0)
    return t, kind, a, b


@njit(cache=True)
def _grow_f(x):
    y = np.empty(2 * x.shape[0], x.dtype)
    y[:x.shape[0]] = x
    return y


@njit(cache=True, inline="always")
def _trace(tr_t, tr_v, ntr, t, what, rc, rt, alpha):
    """Record one step of the traced flow (kind, R_C, R_T, alpha); returns the new count."""
    tr_t[ntr] = t
    tr_v[ntr, 0] = what
    tr_v[ntr, 1] = rc
    tr_v[ntr, 2] = rt
    tr_v[ntr, 3] = alpha
    return ntr + 1


@njit(cache=True, inline="always")
def _raise_rate(rate, target, f, t_count, b_count, fr, bc_on, r_ai, r_hai, line):
    """One rate increase of flow f; returns its trace kind (3 fast recovery, 4 additive,
    5 hyper). Without a byte counter (HPCC's ns-3): ``t_count`` is the timer stage before
    this increase, < F fast recovery, == F additive, above hyper. With one (Zhu et al.):
    the timer and byte-counter expirations since the last cut, this one counted; both <= F
    fast recovery, both > F hyper, else additive."""
    if bc_on:
        hi, lo = max(t_count, b_count), min(t_count, b_count)
        what = 3 if hi <= fr else (5 if lo > fr else 4)
    else:
        what = 3 if t_count < fr else (4 if t_count == fr else 5)
    if what == 4:
        target[f] += r_ai
    elif what == 5:
        target[f] += r_hai
    if target[f] > line:
        target[f] = line
    rate[f] = rate[f] / 2 + target[f] / 2
    return what


@njit(cache=True)
def run(n, src, dst, size, p, uniform, inj_t, inj_f, log_cap, trace_flow, max_t):
    C, mtu, hdr, dly, cnp_dly = p[0], int(p[1]), int(p[2]), p[3], p[4]
    pfc_mode, pfc_alpha, buf, resume_off, xoff, xon = int(p[5]), p[6], p[7], p[8], p[9], p[10]
    ecn, k_min, k_max, p_max, cnp_int = p[11] != 0.0, p[12], p[13], p[14], p[15]
    g, t_alpha, t_dec, t_inc, fr = p[16], p[17], p[18], p[19], int(p[20])
    r_ai, r_hai, min_rate, first_frac, clamp = p[21], p[22], p[23], p[24], p[25] != 0.0
    ack = int(p[26])
    bc = p[27]                          # byte counter (bytes; 0: none, as HPCC's ns-3)
    ack_fifo = p[28] == 0.0             # ACKs queue with data at the switch (ns-3's)
    bc_on = bc > 0.0
    line = C
    m = size.shape[0]
    # flows of each host, in flow (= destination) order
    hf_start = np.zeros(n + 1, np.int64)
    for f in range(m):
        hf_start[src[f] + 1] += 1
    for h in range(n):
        hf_start[h + 1] += hf_start[h]
    hf = np.empty(m, np.int64)
    fill = hf_start[:n].copy()
    for f in range(m):
        hf[fill[src[f]]] = f
        fill[src[f]] += 1
    left = size.copy()
    delivered = np.zeros(m, np.int64)
    finish = np.zeros(m)
    rate = np.full(m, line)
    target = np.full(m, line)
    alpha = np.ones(m)
    alpha_flag = np.zeros(m, np.bool_)
    dec_flag = np.zeros(m, np.bool_)
    first = np.ones(m, np.bool_)
    stage = np.zeros(m, np.int64)
    bc_stage = np.zeros(m, np.int64)
    bc_bytes = np.zeros(m)
    inc_due = np.zeros(m)
    inc_pending = np.zeros(m, np.bool_)
    next_avail = np.zeros(m)
    np_last = np.full(m, -np.inf)
    rr = np.full(n, -1, np.int64)
    nic_busy = np.zeros(n, np.bool_)
    host_paused = np.zeros(n, np.bool_)
    wake_at = np.full(n, np.inf)
    wake_gen = np.zeros(n, np.int64)
    sw_paused = np.zeros(n, np.bool_)
    ingress = np.zeros(n)
    held = 0.0
    peak = 0.0
    # packets in the switch: a pool with a free list, FIFO per egress port
    cap_pk = 1024
    pk_flow = np.empty(cap_pk, np.int64)
    pk_pay = np.empty(cap_pk, np.int64)
    pk_next = np.empty(cap_pk, np.int64)
    free_top = cap_pk
    free = np.arange(cap_pk - 1, -1, -1).astype(np.int64)
    head = np.full(n, -1, np.int64)
    tail = np.full(n, -1, np.int64)
    egress_bytes = np.zeros(n)
    egress_busy = np.zeros(n, np.bool_)
    # ACKs: a FIFO per host NIC and a high-priority FIFO per egress port (same pool)
    ahead = np.full(n, -1, np.int64)
    atail = np.full(n, -1, np.int64)
    hhead = np.full(n, -1, np.int64)
    htail = np.full(n, -1, np.int64)
    # events: 5 n FIFO timelines (NIC h's transmit-done: h; host h's link to the switch:
    # n + h; egress port p's transmit-done: 2 n + p; port p's link to its host: 3 n + p;
    # PFC frames to host h: 4 n + h) and the general heap (source 5 n)
    ntl = 5 * n
    cap = 64
    qt = np.empty(ntl * cap)
    qi = np.empty(4 * ntl * cap, np.int64)
    fhead = np.zeros(ntl, np.int64)
    fcnt = np.zeros(ntl, np.int64)
    ftail = np.zeros(ntl)
    gcap = 1024 + 4 * m + inj_t.shape[0]
    gt = np.empty(gcap)
    gi = np.empty(heap.WIDTH * gcap, np.int64)
    sh = np.empty(ntl + 1, np.int64)
    spos = np.zeros(ntl + 1, np.int64)
    kt = np.zeros(ntl + 1)
    ks = np.zeros(ntl + 1, np.int64)
    meta = np.zeros(5, np.int64)            # sources, general size, next seq, capacity, full
    meta[3] = cap
    k_draw = 0
    n_events, n_marks, n_cnps, n_pauses = 0, 0, 0, 0
    lt = np.empty(max(log_cap, 1))
    lk = np.empty(max(log_cap, 1), np.int64)
    la = np.empty(max(log_cap, 1), np.int64)
    # rate trace of one flow: (time, what, R_C, R_T, alpha); what as in TRACE_KINDS
    tr_t = np.empty(64)
    tr_v = np.empty((64, 4))
    ntr = 0
    for i in range(inj_t.shape[0]):
        _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, -1, inj_t[i], CNP,
             inj_f[i], 0)
    # the first sends, host by host: the same as the event "try_send(0, h)"
    pending_hosts = np.zeros(n, np.bool_)
    for h in range(n):
        pending_hosts[h] = hf_start[h + 1] > hf_start[h]
    h0 = 0
    stopped = 0
    t = 0.0
    kind = -1
    a = 0
    b = 0
    # Two loops: the outer one grows the arrays, the inner one (the event loop) never
    # reassigns an array, so numba keeps no reference counts in it.
    finished = False
    while not finished:
        if meta[1] + 16 >= gt.shape[0]:
            gt = _grow_f(gt)
            gi = _grow_f(gi)
        if meta[4] != 0:                    # a ring was full: double every ring
            meta[4] = 0
            qt2 = np.empty(2 * qt.shape[0])
            qi2 = np.empty(2 * qi.shape[0], np.int64)
            for q in range(ntl):
                for i in range(fcnt[q]):
                    j = q * cap + ((fhead[q] + i) & (cap - 1))
                    j2 = q * 2 * cap + i
                    qt2[j2] = qt[j]
                    for w in range(4):
                        qi2[4 * j2 + w] = qi[4 * j + w]
                fhead[q] = 0
            cap *= 2
            meta[3] = cap
            qt = qt2
            qi = qi2
        if free_top < 4:
            old = pk_flow.shape[0]
            pk_flow = _grow_f(pk_flow)
            pk_pay = _grow_f(pk_pay)
            pk_next = _grow_f(pk_next)
            nf = np.empty(2 * old, np.int64)
            nf[:free_top] = free[:free_top]
            for i in range(old):
                nf[free_top + i] = 2 * old - 1 - i
            free = nf
            free_top += old
        if ntr + 4 >= tr_t.shape[0]:
            tr_t = _grow_f(tr_t)
            tr_v2 = np.empty((tr_t.shape[0], 4))
            tr_v2[:ntr] = tr_v[:ntr]
            tr_v = tr_v2
        while True:
            if meta[1] + 16 >= gt.shape[0] or meta[4] != 0 or free_top < 4 \
                    or ntr + 4 >= tr_t.shape[0]:
                break
            # ---- choose the action: initial sends first, then events
            send_host = -1
            egress_port = -1
            if h0 < n:
                if pending_hosts[h0]:
                    send_host = h0
                h0 += 1
                if send_host < 0:
                    continue
            else:
                if meta[0] == 0:
                    finished = True
                    break
                t, kind, a, b = _take(qt, qi, fhead, fcnt, gt, gi, sh, spos, kt, ks, meta)
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
                    nic_busy[a] = False
                    send_host = a
                elif kind == WAKE:
                    if b == wake_gen[a]:
                        wake_at[a] = np.inf
                        send_host = a
                elif kind == SW_ARRIVE or (kind == SW_ACK and ack_fifo):
                    f = a
                    if kind == SW_ARRIVE:
                        payload = b
                        s = payload + hdr
                        h = src[f]
                        port = dst[f]
                    else:                       # an ACK in the data FIFO: -1 - its CNP flag
                        payload = -1 - b
                        s = ack
                        h = dst[f]
                        port = src[f]
                    ingress[h] += s
                    held += s
                    if held > peak:
                        peak = held
                    free_top -= 1
                    k = free[free_top]
                    pk_flow[k] = f
                    pk_pay[k] = payload
                    pk_next[k] = -1
                    if head[port] < 0:
                        head[port] = k
                    else:
                        pk_next[tail[port]] = k
                    tail[port] = k
                    egress_bytes[port] += s
                    if pfc_mode != 0 and not sw_paused[h]:
                        if pfc_mode == 1:
                            pause = ingress[h] >= xoff
                        else:
                            pause = ingress[h] >= pfc_alpha * (buf - held)
                        if pause:
                            sw_paused[h] = True
                            n_pauses += 1
                            _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, 4 * n + h,
                                 t + dly, PFC_FRAME, h, 1)
                    if not egress_busy[port]:
                        egress_port = port
                elif kind == SW_TX_DONE:
                    egress_busy[a] = False
                    if head[a] >= 0 or hhead[a] >= 0:
                        egress_port = a
                elif kind == ACK_GEN:
                    h = dst[a]
                    free_top -= 1
                    k = free[free_top]
                    pk_flow[k] = a
                    pk_pay[k] = b
                    pk_next[k] = -1
                    if ahead[h] < 0:
                        ahead[h] = k
                    else:
                        pk_next[atail[h]] = k
                    atail[h] = k
                    send_host = h
                elif kind == SW_ACK:
                    port = src[a]
                    free_top -= 1
                    k = free[free_top]
                    pk_flow[k] = a
                    pk_pay[k] = b
                    pk_next[k] = -1
                    if hhead[port] < 0:
                        hhead[port] = k
                    else:
                        pk_next[htail[port]] = k
                    htail[port] = k
                    if not egress_busy[port]:
                        egress_port = port
                elif kind == PFC_FRAME:
                    host_paused[a] = b == 1
                    if b == 0:
                        send_host = a
                elif kind == CNP:
                    f = a
                    if left[f] > 0:
                        alpha_flag[f] = True
                        dec_flag[f] = True
                        if first[f]:
                            alpha[f] = 1.0
                            alpha_flag[f] = False
                            _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, -1,
                                 t + t_alpha, ALPHA, f, 0)
                            _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, -1,
                                 t + t_dec + 1e-9, DECREASE, f, 0)
                            rate[f] = first_frac * rate[f]
                            target[f] = rate[f]
                            first[f] = False
                            if f == trace_flow:
                                ntr = _trace(tr_t, tr_v, ntr, t, 0, rate[f], target[f], alpha[f])
                elif kind == ALPHA:
                    f = a
                    if left[f] > 0:
                        if alpha_flag[f]:
                            alpha[f] = (1 - g) * alpha[f] + g
                        else:
                            alpha[f] = (1 - g) * alpha[f]
                        alpha_flag[f] = False
                        _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, -1,
                             t + t_alpha, ALPHA, f, 0)
                        if f == trace_flow:
                            ntr = _trace(tr_t, tr_v, ntr, t, 1, rate[f], target[f], alpha[f])
                elif kind == DECREASE:
                    f = a
                    if left[f] > 0:
                        _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, -1,
                             t + t_dec, DECREASE, f, 0)
                        if dec_flag[f]:
                            if clamp or stage[f] != 0:
                                target[f] = rate[f]
                            rate[f] = max(min_rate, rate[f] * (1 - alpha[f] / 2))
                            stage[f] = 0
                            bc_stage[f] = 0
                            bc_bytes[f] = 0.0
                            dec_flag[f] = False
                            inc_due[f] = t + t_inc
                            if not inc_pending[f]:
                                inc_pending[f] = True
                                _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, -1,
                                     inc_due[f], INCREASE, f, 0)
                            if f == trace_flow:
                                ntr = _trace(tr_t, tr_v, ntr, t, 2, rate[f], target[f], alpha[f])
                else:                                   # INCREASE
                    f = a
                    inc_pending[f] = False
                    if left[f] > 0 and t < inc_due[f]:
                        inc_pending[f] = True
                        _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, -1,
                             inc_due[f], INCREASE, f, 0)
                    elif left[f] > 0:
                        inc_due[f] = t + t_inc
                        inc_pending[f] = True
                        _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, -1,
                             inc_due[f], INCREASE, f, 0)
                        if bc_on:
                            stage[f] += 1
                            what = _raise_rate(rate, target, f, stage[f], bc_stage[f], fr,
                                               True, r_ai, r_hai, line)
                        else:
                            what = _raise_rate(rate, target, f, stage[f], 0, fr, False, r_ai,
                                               r_hai, line)
                            stage[f] += 1
                        if f == trace_flow:
                            ntr = _trace(tr_t, tr_v, ntr, t, what, rate[f], target[f], alpha[f])
            # ---- a NIC that may send: round-robin over its eligible QPs
            if send_host >= 0:
                h = send_host
                if not nic_busy[h] and ahead[h] >= 0:
                    k = ahead[h]
                    ahead[h] = pk_next[k]
                    if ahead[h] < 0:
                        atail[h] = -1
                    f = pk_flow[k]
                    flag = pk_pay[k]
                    free[free_top] = k
                    free_top += 1
                    nic_busy[h] = True
                    done = t + ack / C
                    _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, h,
                         done, TX_DONE, h, 0)
                    _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, n + h,
                         done + dly, SW_ACK, f, flag)
                elif not nic_busy[h] and not host_paused[h]:
                    f0 = hf_start[h]
                    kq = hf_start[h + 1] - f0
                    pick = -1
                    soonest = np.inf
                    for st in range(1, kq + 1):
                        i = (rr[h] + st) % kq
                        f = hf[f0 + i]
                        if left[f] > 0:
                            if next_avail[f] <= t:
                                pick = i
                                break
                            if next_avail[f] < soonest:
                                soonest = next_avail[f]
                    if pick < 0:
                        if soonest < wake_at[h]:
                            wake_gen[h] += 1
                            wake_at[h] = soonest
                            _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, -1,
                                 soonest, WAKE, h, wake_gen[h])
                    else:
                        rr[h] = pick
                        f = hf[f0 + pick]
                        payload = min(mtu, left[f])
                        left[f] -= payload
                        s = payload + hdr
                        next_avail[f] = t + s / rate[f]
                        if bc_on and not first[f] and left[f] > 0:
                            bc_bytes[f] += s
                            if bc_bytes[f] >= bc:   # the byte counter expires
                                bc_bytes[f] -= bc
                                bc_stage[f] += 1
                                what = _raise_rate(rate, target, f, stage[f], bc_stage[f], fr,
                                                   True, r_ai, r_hai, line)
                                if f == trace_flow:
                                    ntr = _trace(tr_t, tr_v, ntr, t, what, rate[f], target[f],
                                                 alpha[f])
                        nic_busy[h] = True
                        done = t + s / C
                        _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, h,
                             done, TX_DONE, h, 0)
                        _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, n + h,
                             done + dly, SW_ARRIVE, f, payload)
            # ---- an egress port that starts its next packet
            if egress_port >= 0 and hhead[egress_port] >= 0:
                port = egress_port
                k = hhead[port]
                hhead[port] = pk_next[k]
                if hhead[port] < 0:
                    htail[port] = -1
                f = pk_flow[k]
                flag = pk_pay[k]
                free[free_top] = k
                free_top += 1
                egress_busy[port] = True
                done = t + ack / C
                _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, 2 * n + port,
                     done, SW_TX_DONE, port, 0)
                if flag != 0:
                    _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, 3 * n + port,
                         done + dly, CNP, f, 0)
            elif egress_port >= 0:
                port = egress_port
                k = head[port]
                head[port] = pk_next[k]
                if head[port] < 0:
                    tail[port] = -1
                f = pk_flow[k]
                payload = pk_pay[k]
                free[free_top] = k
                free_top += 1
                is_ack = payload < 0
                s = ack if is_ack else payload + hdr
                h = dst[f] if is_ack else src[f]
                egress_bytes[port] -= s
                ingress[h] -= s
                held -= s
                mark = False
                if ecn and not is_ack:
                    q = egress_bytes[port]
                    u = uniform[k_draw]
                    k_draw += 1
                    if q > k_max:
                        mark = True
                    elif q > k_min:
                        mark = u < p_max * (q - k_min) / (k_max - k_min)
                if pfc_mode != 0 and sw_paused[h]:
                    if pfc_mode == 1:
                        resume = ingress[h] <= xon
                    else:
                        thr = pfc_alpha * (buf - held)
                        resume = ingress[h] <= 0 or ingress[h] + resume_off <= thr
                    if resume:
                        sw_paused[h] = False
                        _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, 4 * n + h,
                             t + dly, PFC_FRAME, h, 0)
                egress_busy[port] = True
                done = t + s / C
                _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, 2 * n + port,
                     done, SW_TX_DONE, port, 0)
                if is_ack:
                    if payload == -2:               # its CNP flag
                        _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta,
                             3 * n + port, done + dly, CNP, f, 0)
                    continue
                arrive = done + dly
                delivered[f] += payload
                if delivered[f] == size[f]:
                    finish[f] = arrive
                flag = 0
                if mark:
                    n_marks += 1
                    if arrive - np_last[f] >= cnp_int:
                        np_last[f] = arrive
                        n_cnps += 1
                        flag = 1
                        if ack == 0:
                            _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, 3 * n + port,
                                 arrive + cnp_dly, CNP, f, 0)
                if ack != 0:
                    _put(qt, qi, fhead, fcnt, ftail, gt, gi, sh, spos, kt, ks, meta, 3 * n + port,
                         arrive, ACK_GEN, f, flag)
    counts = np.array([n_events, n_marks, n_cnps, n_pauses, stopped], np.int64)
    return finish, delivered, counts, peak, lt, lk, la, tr_t[:ntr], tr_v[:ntr]
