"""The compiled event loop of :func:`models.chronos.roce.simulate` (numba). Same rules, same
order of events as :func:`~models.chronos.roce.simulate_reference`."""

from __future__ import annotations

import numpy as np
from numba import njit

(TX_DONE, WAKE, SW_ARRIVE, SW_TX_DONE, PFC_FRAME, CNP, ALPHA, DECREASE, INCREASE, ACK_GEN,
 SW_ACK) = range(11)


@njit(cache=True)
def _less(ht, hs, i, j):
    return ht[i] < ht[j] or (ht[i] == ht[j] and hs[i] < hs[j])


@njit(cache=True)
def _swap(ht, hs, hk, ha, hb, i, j):
    ht[i], ht[j] = ht[j], ht[i]
    hs[i], hs[j] = hs[j], hs[i]
    hk[i], hk[j] = hk[j], hk[i]
    ha[i], ha[j] = ha[j], ha[i]
    hb[i], hb[j] = hb[j], hb[i]


@njit(cache=True)
def _push(ht, hs, hk, ha, hb, n, seq, t, kind, a, b):
    i = n
    ht[i], hs[i], hk[i], ha[i], hb[i] = t, seq, kind, a, b
    while i > 0:
        p = (i - 1) // 2
        if _less(ht, hs, i, p):
            _swap(ht, hs, hk, ha, hb, i, p)
            i = p
        else:
            break
    return n + 1


@njit(cache=True)
def _pop(ht, hs, hk, ha, hb, n):
    t, kind, a, b = ht[0], hk[0], ha[0], hb[0]
    n -= 1
    ht[0], hs[0], hk[0], ha[0], hb[0] = ht[n], hs[n], hk[n], ha[n], hb[n]
    i = 0
    while True:
        l, r, m = 2 * i + 1, 2 * i + 2, i
        if l < n and _less(ht, hs, l, m):
            m = l
        if r < n and _less(ht, hs, r, m):
            m = r
        if m == i:
            break
        _swap(ht, hs, hk, ha, hb, i, m)
        i = m
    return t, kind, a, b, n


@njit(cache=True)
def _grow_f(x):
    y = np.empty(2 * x.shape[0], x.dtype)
    y[:x.shape[0]] = x
    return y


@njit(cache=True)
def run(n, src, dst, size, p, uniform, inj_t, inj_f, log_cap, trace_flow, max_t):
    C, mtu, hdr, dly, cnp_dly = p[0], int(p[1]), int(p[2]), p[3], p[4]
    pfc_mode, pfc_alpha, buf, resume_off, xoff, xon = int(p[5]), p[6], p[7], p[8], p[9], p[10]
    ecn, k_min, k_max, p_max, cnp_int = p[11] != 0.0, p[12], p[13], p[14], p[15]
    g, t_alpha, t_dec, t_inc, fr = p[16], p[17], p[18], p[19], int(p[20])
    r_ai, r_hai, min_rate, first_frac, clamp = p[21], p[22], p[23], p[24], p[25] != 0.0
    ack = int(p[26])
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
    # events
    cap = 1024 + 4 * n + 4 * m + inj_t.shape[0]
    ht = np.empty(cap)
    hs = np.empty(cap, np.int64)
    hk = np.empty(cap, np.int64)
    ha = np.empty(cap, np.int64)
    hb = np.empty(cap, np.int64)
    ne = 0
    seq = 0
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
        ne = _push(ht, hs, hk, ha, hb, ne, seq, inj_t[i], CNP, inj_f[i], 0)
        seq += 1
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
    while True:
        if ne + 8 >= ht.shape[0]:
            ht = _grow_f(ht)
            hs = _grow_f(hs)
            hk = _grow_f(hk)
            ha = _grow_f(ha)
            hb = _grow_f(hb)
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
            if ne == 0:
                break
            t, kind, a, b, ne = _pop(ht, hs, hk, ha, hb, ne)
            if t > max_t:
                stopped = 1
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
            elif kind == SW_ARRIVE:
                f = a
                payload = b
                s = payload + hdr
                h = src[f]
                port = dst[f]
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
                        ne = _push(ht, hs, hk, ha, hb, ne, seq, t + dly, PFC_FRAME, h, 1)
                        seq += 1
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
                        ne = _push(ht, hs, hk, ha, hb, ne, seq, t + t_alpha, ALPHA, f, 0)
                        seq += 1
                        ne = _push(ht, hs, hk, ha, hb, ne, seq, t + t_dec + 1e-9, DECREASE,
                                   f, 0)
                        seq += 1
                        rate[f] = first_frac * rate[f]
                        target[f] = rate[f]
                        first[f] = False
                        if f == trace_flow:
                            if ntr == tr_t.shape[0]:
                                tr_t = _grow_f(tr_t)
                                tr_v2 = np.empty((2 * ntr, 4))
                                tr_v2[:ntr] = tr_v
                                tr_v = tr_v2
                            tr_t[ntr] = t
                            tr_v[ntr, 0] = 0
                            tr_v[ntr, 1] = rate[f]
                            tr_v[ntr, 2] = target[f]
                            tr_v[ntr, 3] = alpha[f]
                            ntr += 1
            elif kind == ALPHA:
                f = a
                if left[f] > 0:
                    if alpha_flag[f]:
                        alpha[f] = (1 - g) * alpha[f] + g
                    else:
                        alpha[f] = (1 - g) * alpha[f]
                    alpha_flag[f] = False
                    ne = _push(ht, hs, hk, ha, hb, ne, seq, t + t_alpha, ALPHA, f, 0)
                    seq += 1
                    if f == trace_flow:
                        if ntr == tr_t.shape[0]:
                            tr_t = _grow_f(tr_t)
                            tr_v2 = np.empty((2 * ntr, 4))
                            tr_v2[:ntr] = tr_v
                            tr_v = tr_v2
                        tr_t[ntr] = t
                        tr_v[ntr, 0] = 1
                        tr_v[ntr, 1] = rate[f]
                        tr_v[ntr, 2] = target[f]
                        tr_v[ntr, 3] = alpha[f]
                        ntr += 1
            elif kind == DECREASE:
                f = a
                if left[f] > 0:
                    ne = _push(ht, hs, hk, ha, hb, ne, seq, t + t_dec, DECREASE, f, 0)
                    seq += 1
                    if dec_flag[f]:
                        if clamp or stage[f] != 0:
                            target[f] = rate[f]
                        rate[f] = max(min_rate, rate[f] * (1 - alpha[f] / 2))
                        stage[f] = 0
                        dec_flag[f] = False
                        inc_due[f] = t + t_inc
                        if not inc_pending[f]:
                            inc_pending[f] = True
                            ne = _push(ht, hs, hk, ha, hb, ne, seq, inc_due[f], INCREASE, f, 0)
                            seq += 1
                        if f == trace_flow:
                            if ntr == tr_t.shape[0]:
                                tr_t = _grow_f(tr_t)
                                tr_v2 = np.empty((2 * ntr, 4))
                                tr_v2[:ntr] = tr_v
                                tr_v = tr_v2
                            tr_t[ntr] = t
                            tr_v[ntr, 0] = 2
                            tr_v[ntr, 1] = rate[f]
                            tr_v[ntr, 2] = target[f]
                            tr_v[ntr, 3] = alpha[f]
                            ntr += 1
            else:                                   # INCREASE
                f = a
                inc_pending[f] = False
                if left[f] > 0 and t < inc_due[f]:
                    inc_pending[f] = True
                    ne = _push(ht, hs, hk, ha, hb, ne, seq, inc_due[f], INCREASE, f, 0)
                    seq += 1
                elif left[f] > 0:
                    inc_due[f] = t + t_inc
                    inc_pending[f] = True
                    ne = _push(ht, hs, hk, ha, hb, ne, seq, inc_due[f], INCREASE, f, 0)
                    seq += 1
                    what = 3
                    if stage[f] < fr:
                        rate[f] = rate[f] / 2 + target[f] / 2
                    else:
                        if stage[f] == fr:
                            target[f] += r_ai
                            what = 4
                        else:
                            target[f] += r_hai
                            what = 5
                        if target[f] > line:
                            target[f] = line
                        rate[f] = rate[f] / 2 + target[f] / 2
                    stage[f] += 1
                    if f == trace_flow:
                        if ntr == tr_t.shape[0]:
                            tr_t = _grow_f(tr_t)
                            tr_v2 = np.empty((2 * ntr, 4))
                            tr_v2[:ntr] = tr_v
                            tr_v = tr_v2
                        tr_t[ntr] = t
                        tr_v[ntr, 0] = what
                        tr_v[ntr, 1] = rate[f]
                        tr_v[ntr, 2] = target[f]
                        tr_v[ntr, 3] = alpha[f]
                        ntr += 1
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
                ne = _push(ht, hs, hk, ha, hb, ne, seq, done, TX_DONE, h, 0)
                seq += 1
                ne = _push(ht, hs, hk, ha, hb, ne, seq, done + dly, SW_ACK, f, flag)
                seq += 1
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
                        ne = _push(ht, hs, hk, ha, hb, ne, seq, soonest, WAKE, h, wake_gen[h])
                        seq += 1
                else:
                    rr[h] = pick
                    f = hf[f0 + pick]
                    payload = min(mtu, left[f])
                    left[f] -= payload
                    s = payload + hdr
                    next_avail[f] = t + s / rate[f]
                    nic_busy[h] = True
                    done = t + s / C
                    ne = _push(ht, hs, hk, ha, hb, ne, seq, done, TX_DONE, h, 0)
                    seq += 1
                    ne = _push(ht, hs, hk, ha, hb, ne, seq, done + dly, SW_ARRIVE, f, payload)
                    seq += 1
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
            ne = _push(ht, hs, hk, ha, hb, ne, seq, done, SW_TX_DONE, port, 0)
            seq += 1
            if flag != 0:
                ne = _push(ht, hs, hk, ha, hb, ne, seq, done + dly, CNP, f, 0)
                seq += 1
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
            s = payload + hdr
            h = src[f]
            egress_bytes[port] -= s
            ingress[h] -= s
            held -= s
            mark = False
            if ecn:
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
                    ne = _push(ht, hs, hk, ha, hb, ne, seq, t + dly, PFC_FRAME, h, 0)
                    seq += 1
            egress_busy[port] = True
            done = t + s / C
            ne = _push(ht, hs, hk, ha, hb, ne, seq, done, SW_TX_DONE, port, 0)
            seq += 1
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
                        ne = _push(ht, hs, hk, ha, hb, ne, seq, arrive + cnp_dly, CNP, f, 0)
                        seq += 1
            if ack != 0:
                ne = _push(ht, hs, hk, ha, hb, ne, seq, arrive, ACK_GEN, f, flag)
                seq += 1
    counts = np.array([n_events, n_marks, n_cnps, n_pauses, stopped], np.int64)
    return finish, delivered, counts, peak, lt, lk, la, tr_t[:ntr], tr_v[:ntr]
