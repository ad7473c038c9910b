"""The compiled event loop of :func:`models.flexsipac.packetsim.simulate` (numba). Same
rules, same order of events as :func:`~models.flexsipac.packetsim.simulate_reference`."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..common import eventheap as heap   # inlined: its version 2026-11-28b (see there)

FREE, ARRIVE, CREDIT, START = 0, 1, 2, 3


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
    hi = np.empty(heap.WIDTH * cap, np.int64)
    n = 0
    seq = 0
    ng = group_job.shape[0]
    remaining = np.zeros(ng, np.int64)
    step_done = np.full(ng, np.nan)
    nj = job_first.shape[0] - 1
    for j in range(nj):
        if job_first[j] < job_first[j + 1]:
            heap.push(ht, hi, n, 0.0, seq, START, job_first[j], 0)
            n += 1
            seq += 1
    events = 0
    while n > 0:
        t, kind, a, b = heap.top(ht, hi)
        heap.pop(ht, hi, n)
        n -= 1
        events += 1
        touched = -1
        if kind == FREE:
            busy[a] = False
            touched = a
        elif kind == CREDIT:                # b: the packet whose room link a gets back
            credit[a] += pk_size[b]
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
                                   ht, hi, n, seq)
            continue
        else:                                           # arrival of packet a
            p = a
            f = pk_flow[p]
            pk_hop[p] += 1
            hop = pk_hop[p]
            plen = path_start[f + 1] - path_start[f]
            prev = path_links[path_start[f] + hop - 1]
            if hop == plen:
                heap.push(ht, hi, n, t + lat[prev], seq, CREDIT, prev, p)
                n += 1
                seq += 1
                g = flow_group[f]
                remaining[g] -= 1
                if remaining[g] == 0:
                    step_done[g] = t
                    j = group_job[g]
                    if g + 1 < job_first[j + 1]:
                        heap.push(ht, hi, n, t + step_gap, seq, START, g + 1, 0)
                        n += 1
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
                               credit, bw, lat, path_start, path_links, ht, hi,
                               n, seq)
    return step_done, total, events


@njit(cache=True)
def _send(t, k, head, tail, pk_next, pk_flow, pk_hop, pk_size, busy, credit, bw, lat,
          path_start, path_links, ht, hi, n, seq):
    p = head[k]
    head[k] = pk_next[p]
    if head[k] < 0:
        tail[k] = -1
    pk_next[p] = -1
    busy[k] = True
    s = pk_size[p]
    credit[k] -= s
    done = t + s / bw[k]
    heap.push(ht, hi, n, done, seq, FREE, k, 0)
    n += 1
    seq += 1
    heap.push(ht, hi, n, done + lat[k], seq, ARRIVE, p, 0)
    n += 1
    seq += 1
    hop = pk_hop[p]
    if hop > 0:
        f = pk_flow[p]
        prev = path_links[path_start[f] + hop - 1]
        heap.push(ht, hi, n, t + lat[prev], seq, CREDIT, prev, p)
        n += 1
        seq += 1
    return n, seq
