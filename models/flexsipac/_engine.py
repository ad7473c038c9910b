"""The compiled event loop of :func:`models.flexsipac.packetsim.simulate` (numba). Same
rules, same order of events as :func:`~models.flexsipac.packetsim.simulate_reference`."""

from __future__ import annotations

import numpy as np
from numba import njit

FREE, ARRIVE, CREDIT, START = 0, 1, 2, 3


@njit(cache=True)
def _less(t, s, i, j):
    return t[i] < t[j] or (t[i] == t[j] and s[i] < s[j])


@njit(cache=True)
def _push(ht, hs, hk, ha, hc, n, seq, t, kind, a, c):
    i = n
    ht[i], hs[i], hk[i], ha[i], hc[i] = t, seq, kind, a, c
    while i > 0:
        p = (i - 1) // 2
        if _less(ht, hs, i, p):
            ht[i], ht[p] = ht[p], ht[i]
            hs[i], hs[p] = hs[p], hs[i]
            hk[i], hk[p] = hk[p], hk[i]
            ha[i], ha[p] = ha[p], ha[i]
            hc[i], hc[p] = hc[p], hc[i]
            i = p
        else:
            break
    return n + 1


@njit(cache=True)
def _pop(ht, hs, hk, ha, hc, n):
    t, kind, a, c = ht[0], hk[0], ha[0], hc[0]
    n -= 1
    ht[0], hs[0], hk[0], ha[0], hc[0] = ht[n], hs[n], hk[n], ha[n], hc[n]
    i = 0
    while True:
        l, r, m = 2 * i + 1, 2 * i + 2, i
        if l < n and _less(ht, hs, l, m):
            m = l
        if r < n and _less(ht, hs, r, m):
            m = r
        if m == i:
            break
        ht[i], ht[m] = ht[m], ht[i]
        hs[i], hs[m] = hs[m], hs[i]
        hk[i], hk[m] = hk[m], hk[i]
        ha[i], ha[m] = ha[m], ha[i]
        hc[i], hc[m] = hc[m], hc[i]
        i = m
    return t, kind, a, c, n


@njit(cache=True)
def run(bw, lat, buf, path_start, path_links, size, seg_start, group_seg, group_flows,
        group_job, job_first, flow_group, packet, step_gap):
    nl = bw.shape[0]
    nf = size.shape[0]
    npk_flow = np.empty(nf, np.int64)
    total = 0
    for f in range(nf):
        npk_flow[f] = int(np.ceil(size[f] / packet))
        total += npk_flow[f]
    # packets
    pk_flow = np.empty(total, np.int64)
    pk_hop = np.zeros(total, np.int64)
    pk_size = np.empty(total, np.float64)
    pk_next = np.full(total, -1, np.int64)
    pool = 0
    # links
    busy = np.zeros(nl, np.bool_)
    credit = buf.copy()
    head = np.full(nl, -1, np.int64)
    tail = np.full(nl, -1, np.int64)
    # events
    cap = 2 * total + nl + group_job.shape[0] + 16
    ht = np.empty(cap, np.float64)
    hs = np.empty(cap, np.int64)
    hk = np.empty(cap, np.int64)
    ha = np.empty(cap, np.int64)
    hc = np.empty(cap, np.float64)
    n = 0
    seq = 0
    ng = group_job.shape[0]
    remaining = np.zeros(ng, np.int64)
    step_done = np.full(ng, np.nan)
    nj = job_first.shape[0] - 1
    for j in range(nj):
        if job_first[j] < job_first[j + 1]:
            n = _push(ht, hs, hk, ha, hc, n, seq, 0.0, START, job_first[j], 0.0)
            seq += 1
    events = 0
    while n > 0:
        t, kind, a, c, n = _pop(ht, hs, hk, ha, hc, n)
        events += 1
        touched = -1
        if kind == FREE:
            busy[a] = False
            touched = a
        elif kind == CREDIT:
            credit[a] += c
            touched = a
        elif kind == START:
            g = a
            cnt = 0
            for sg in range(group_seg[g], group_seg[g + 1]):
                for i in range(seg_start[sg], seg_start[sg + 1]):
                    cnt += npk_flow[group_flows[i]]
            remaining[g] = cnt
            for sg in range(group_seg[g], group_seg[g + 1]):
                f0, f1 = seg_start[sg], seg_start[sg + 1]
                k = path_links[path_start[group_flows[f0]]]
                rnd = 0
                more = True
                while more:
                    more = False
                    for i in range(f0, f1):
                        f = group_flows[i]
                        if rnd >= npk_flow[f]:
                            continue
                        p = pool
                        pool += 1
                        pk_flow[p] = f
                        pk_hop[p] = 0
                        pk_size[p] = packet if rnd < npk_flow[f] - 1 else \
                            size[f] - packet * (npk_flow[f] - 1)
                        if head[k] < 0:
                            head[k] = p
                        else:
                            pk_next[tail[k]] = p
                        tail[k] = p
                        if rnd + 1 < npk_flow[f]:
                            more = True
                    rnd += 1
                # try_send(k)
                if not busy[k] and head[k] >= 0 and credit[k] >= pk_size[head[k]]:
                    n, seq = _send(t, k, head, tail, pk_next, pk_flow, pk_hop, pk_size, busy,
                                   credit, bw, lat, path_start, path_links,
                                   ht, hs, hk, ha, hc, n, seq)
            continue
        else:                                           # arrival of packet a
            p = a
            f = pk_flow[p]
            pk_hop[p] += 1
            hop = pk_hop[p]
            plen = path_start[f + 1] - path_start[f]
            prev = path_links[path_start[f] + hop - 1]
            if hop == plen:
                n = _push(ht, hs, hk, ha, hc, n, seq, t + lat[prev], CREDIT, prev,
                          pk_size[p])
                seq += 1
                g = flow_group[f]
                remaining[g] -= 1
                if remaining[g] == 0:
                    step_done[g] = t
                    j = group_job[g]
                    if g + 1 < job_first[j + 1]:
                        n = _push(ht, hs, hk, ha, hc, n, seq, t + step_gap, START, g + 1, 0.0)
                        seq += 1
                continue
            k = path_links[path_start[f] + hop]
            pk_next[p] = -1
            if head[k] < 0:
                head[k] = p
            else:
                pk_next[tail[k]] = p
            tail[k] = p
            touched = k
        if touched >= 0:
            k = touched
            if not busy[k] and head[k] >= 0 and credit[k] >= pk_size[head[k]]:
                n, seq = _send(t, k, head, tail, pk_next, pk_flow, pk_hop, pk_size, busy,
                               credit, bw, lat, path_start, path_links, ht, hs, hk, ha, hc,
                               n, seq)
    return step_done, total, events


@njit(cache=True)
def _send(t, k, head, tail, pk_next, pk_flow, pk_hop, pk_size, busy, credit, bw, lat,
          path_start, path_links, ht, hs, hk, ha, hc, n, seq):
    p = head[k]
    head[k] = pk_next[p]
    if head[k] < 0:
        tail[k] = -1
    pk_next[p] = -1
    busy[k] = True
    s = pk_size[p]
    credit[k] -= s
    done = t + s / bw[k]
    n = _push(ht, hs, hk, ha, hc, n, seq, done, FREE, k, 0.0)
    seq += 1
    n = _push(ht, hs, hk, ha, hc, n, seq, done + lat[k], ARRIVE, p, 0.0)
    seq += 1
    hop = pk_hop[p]
    if hop > 0:
        f = pk_flow[p]
        prev = path_links[path_start[f] + hop - 1]
        n = _push(ht, hs, hk, ha, hc, n, seq, t + lat[prev], CREDIT, prev, s)
        seq += 1
    return n, seq
