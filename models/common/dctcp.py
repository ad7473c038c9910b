"""A window transport with DCTCP's reaction to ECN over lossless output-queued links: the
packet-level setting of Netbench's ``simple_dctcp`` with ``ecn_tail_drop`` output ports, plus
the link-level back-pressure Flex-SiPAC §6.A adds ("a link-level back-pressure based
loss-less flow control mechanism [27]": nothing is dropped; the form is ours, below). A
shared core: any model hands it links (rate, delay, output-queue bytes, ECN threshold) and
flows (a path of links, a size, a (job, step) they belong to); the credit and RoCE engines
of the other models are untouched.

Rules (one event loop, :func:`run`, compiled with numba):

- **Links.** Link k sends the packet at the head of its FIFO output queue when it is idle:
  serialisation takes wire bytes / rate, the packet reaches the next node ``delay`` later.
- **Output queues count what waits in them.** Link k's output queue holds the packets that
  have arrived at k's sending node and wait for k (not the one k is serialising, not those
  still on the wire toward it: a wire carries what is on it). A source's own output queue is
  finite (``queue`` bytes): a host whose queue is full waits.
- **ECN.** A packet is marked when it joins an output queue already holding more than ``K``
  waiting bytes (Netbench's ``ecn_tail_drop`` output port marks on enqueue at K against the
  bytes in its queue).
- **Lossless links: link-level back-pressure**, one of two mechanisms (``backpressure``):

  * ``"pause"`` (the default): a PFC-like pause per link (IEEE 802.1Qbb, one class). The
    node at the end of link k counts the bytes that came in over k and still wait in one of
    its output queues (its ingress counter). When that count exceeds ``xoff`` bytes it sends
    a PAUSE back over k's reverse wire, which reaches k's sender one link delay later; from
    then k starts no new packet (the one it is serialising completes). When the count falls
    to ``xon`` or below it sends a RESUME, also one link delay on its way. The round trip
    costs headroom, not loss: the bytes already sent or started during the pause's flight
    (up to two link delays at the link's rate, plus one packet) are accepted, and
    ``max_ingress`` reports the largest count reached (the buffer a lossless port needs).
  * ``"credit"``: credit per link: k's sender holds ``credit`` bytes of the receive buffer
    at its far end; a packet starts only with credit for its wire bytes, and its credit
    returns one link delay after it leaves that node (starts on its next link, or is
    delivered). A link then carries at most ``credit`` bytes per round trip (two link
    delays plus the serialisation): with a buffer under the bandwidth-delay product the
    link is throttled before any contention.

  A packet larger than a threshold or a credit still passes when the counter is empty.
- **Window transport.** A flow may have at most ``cwnd`` bytes unacknowledged; the
  destination returns an acknowledgement per packet that echoes the mark and reaches the
  source after the path's delays (acknowledgements take no link capacity: the reverse
  links carry little). Per acknowledgement of s bytes: slow start (cwnd += s) below
  ``ssthresh``, else additive increase (cwnd += MSS s / cwnd); DCTCP's alpha estimate
  alpha <- (1 - g) alpha + g F once per window of acknowledged bytes (F the marked share of
  that window); on a marked acknowledgement the window is cut to max(MSS, cwnd (1 - alpha /
  2)) and ssthresh set to it, at most once per window of data (a cut waits until the data
  sent before the previous cut is acknowledged). A source whose output queue is full waits
  (the host is paused like any other upstream port).
- **Flows and steps.** The flows of a job's step start when every flow of its previous step
  has been delivered; each flow first spends a handshake (one round trip of the path's
  delays, Netbench's SYN / SYN+ACK) when ``handshake`` is set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from . import eventheap as heap   # inlined: its version 2026-11-28b (see there)

__all__ = ["Setting", "NETBENCH_SIPAC", "run", "run_reference"]


@dataclass(frozen=True)
class Setting:
    """One packet-level setting. Bytes and seconds."""

    name: str
    mss: float = 1380.0               # payload bytes per packet
    header: float = 120.0             # wire bytes on top of the payload
    queue: float = 20_000.0           # a source's output-queue bytes (the host waits above)
    ecn_k: float = 4_000.0            # ECN marking threshold (bytes)
    g: float = 1 / 16                 # DCTCP's alpha gain
    init_window: float = 3.0          # initial cwnd, in segments
    ssthresh: float = 30.0            # initial slow-start threshold, in segments
    link_delay: float = 1e-6          # every network and server link
    injection_gbps: float = 1000.0    # server-to-network (injection) link rate
    handshake: bool = True
    backpressure: str = "pause"       # "pause" (PFC-like, per link) or "credit" (per link)
    xoff: float = 20_000.0            # pause: ingress bytes above which the link is paused
    xon: float = 17_000.0             # pause: ... at or below which it resumes
    credit: float = 20_000.0          # credit: receive-buffer bytes per link
    source: str = ""


# The authors' pipeline of the earlier SiPAC study (docs/models/flexsipac.md: provenance,
# per parameter): brianwuuu/SiPAC input_parameters/setup.json (TRANSPORT_LAYER
# simple_dctcp, OUTPUT_QUEUE_BUFFER_SIZE_BYTES 20000, NETWORK_ / SERVER_LINK_LATENCY_NS 1000,
# INJECTION_LINK_BW_GBPS 1000, NUM_VCS 2), generate_experiment.py (ECN threshold K = 1/5 of
# the output queue = 4,000 B; CONGESTION_THRESHOLD_BYTES 5000 names the run; routing ecmp),
# utilities.py (output_port=ecn_tail_drop); the pause thresholds are ours (XOFF at the
# output-queue size, XON two 1,500-byte packets below: the paper names no values); Netbench's
# SimpleTcpSocket / SimpleDctcpSocket defaults (MSS 1,380 B, initial window 3 MSS, ssthresh
# 30 MSS, g = 0.0625, handshake).
NETBENCH_SIPAC = Setting(
    "netbench-sipac", source="brianwuuu/SiPAC setup.json + generate_experiment.py; Netbench "
    "simple_dctcp defaults")

ARRIVE, FREE, ACK, START, OPEN, PAUSE, RESUME, CREDIT = 0, 1, 2, 3, 4, 5, 6, 7
BACKPRESSURE = ("pause", "credit")


@njit(cache=True, inline="always")
def _push(ht, hi, n, t, seq, kind, a, b):
    """:func:`~models.common.eventheap.push` with the capacity check: -1 once the storage is
    full, and it stays -1 (the run stops after the event)."""
    if n < 0 or n >= ht.shape[0]:
        return -1
    heap.push(ht, hi, n, t, seq, kind, a, b)
    return n + 1


@njit(cache=True)
def run(bw, lat, qcap, ecn_k, path_start, path_links, size, group_flows_start, group_flows,
        group_job, job_first, flow_group, mss, header, init_w, ssth0, g, handshake,
        credit_mode, xoff, xon, credit0):
    """Returns (per group its completion time, packets, events, marked packets, pauses (PAUSE
    frames sent; credit mode: starts that waited for credit), the largest fraction one
    window cut took off a window, the largest ingress count of a link (bytes))."""
    nl = bw.shape[0]
    nf = size.shape[0]
    ng = group_job.shape[0]
    # per flow
    npk = np.empty(nf, np.int64)
    total = 0
    for f in range(nf):
        npk[f] = int(np.ceil(size[f] / mss))
        total += npk[f]
    pk_base = np.zeros(nf, np.int64)
    for f in range(1, nf):
        pk_base[f] = pk_base[f - 1] + npk[f - 1]
    sent_pk = np.zeros(nf, np.int64)       # packets injected
    sent_b = np.zeros(nf, np.float64)      # payload bytes injected
    acked_b = np.zeros(nf, np.float64)
    inflight = np.zeros(nf, np.float64)
    cwnd = np.full(nf, init_w * mss)
    ssth = np.full(nf, ssth0 * mss)
    alpha = np.zeros(nf, np.float64)
    win_tot = np.zeros(nf, np.float64)
    win_mark = np.zeros(nf, np.float64)
    win_len = np.zeros(nf, np.float64)     # alpha update window (0: first ack updates)
    cut_until = np.zeros(nf, np.float64)   # no cut before acked_b passes this
    rtt_half = np.zeros(nf, np.float64)
    for f in range(nf):
        d = 0.0
        for h in range(path_start[f], path_start[f + 1]):
            d += lat[path_links[h]]
        rtt_half[f] = d
    # packets
    cap_pk = total + 1
    pk_flow = np.empty(cap_pk, np.int64)
    pk_hop = np.zeros(cap_pk, np.int64)
    pk_pay = np.empty(cap_pk, np.float64)
    pk_mark = np.zeros(cap_pk, np.bool_)
    pk_next = np.full(cap_pk, -1, np.int64)
    # links
    busy = np.zeros(nl, np.bool_)
    qbytes = np.zeros(nl, np.float64)      # bytes waiting in the output queue
    ing = np.zeros(nl, np.float64)         # bytes in over the link, waiting at its far end
    xoff_sent = np.zeros(nl, np.bool_)     # a PAUSE for the link is out (no RESUME since)
    paused = np.zeros(nl, np.bool_)        # the link's sender has received a PAUSE
    credit = np.full(nl, credit0)
    cwait = np.zeros(nl, np.bool_)         # credit mode: the head waits for credit
    head = np.full(nl, -1, np.int64)
    tail = np.full(nl, -1, np.int64)
    f_wait = np.zeros(nf, np.bool_)         # flows paused for room at their first link
    fw_head = np.full(nl, -1, np.int64)
    fw_next = np.full(nf, -1, np.int64)
    fstack = np.empty(nf + 1, np.int64)
    # events
    cap = 4 * total + 4 * nl + 2 * nf + 2 * ng + 16
    ht = np.empty(cap, np.float64)
    hi = np.empty(heap.WIDTH * cap, np.int64)
    n = 0
    seq = 0
    remaining = np.zeros(ng, np.int64)
    step_done = np.full(ng, np.nan)
    nj = job_first.shape[0] - 1
    for j in range(nj):
        if job_first[j] < job_first[j + 1]:
            n = _push(ht, hi, n, 0.0, seq, START, job_first[j], 0)
            seq += 1
    events = 0
    marked = 0
    pauses = 0
    max_cut = 0.0
    max_ing = 0.0
    stack = np.empty(4 * nl + nf + 8, np.int64)  # links to try, processed after each event
    while n > 0:
        t, kind, a, b = heap.top(ht, hi)
        heap.pop(ht, hi, n)
        n -= 1
        events += 1
        sp = 0
        inject = -1
        if kind == FREE:                    # link a finished serialising its packet
            busy[a] = False
            stack[sp] = a
            sp += 1
        elif kind == PAUSE:
            paused[a] = True
        elif kind == RESUME:
            paused[a] = False
            stack[sp] = a
            sp += 1
        elif kind == CREDIT:                # the credit of packet b returns to link a
            k = a
            credit[k] += pk_pay[b] + header
            stack[sp] = k
            sp += 1
        elif kind == ARRIVE:                # packet a reaches the end of its hop
            p = a
            f = pk_flow[p]
            h = pk_hop[p] + 1
            prev = path_links[path_start[f] + h - 1]
            wire = pk_pay[p] + header
            if path_start[f] + h == path_start[f + 1]:      # delivered
                if credit_mode:
                    n = _push(ht, hi, n, t + lat[prev], seq, CREDIT, prev, p)
                    seq += 1
                n = _push(ht, hi, n, t + rtt_half[f], seq, ACK, p, 0)
                seq += 1
                gg = flow_group[f]
                remaining[gg] -= 1
                if remaining[gg] == 0:
                    step_done[gg] = t
                    j = group_job[gg]
                    if gg + 1 < job_first[j + 1]:
                        n = _push(ht, hi, n, t, seq, START, gg + 1, 0)
                        seq += 1
            else:                           # joins the next link's output queue
                k = path_links[path_start[f] + h]
                pk_hop[p] = h
                pk_next[p] = -1
                if qbytes[k] > ecn_k[k]:
                    if not pk_mark[p]:
                        marked += 1
                    pk_mark[p] = True
                qbytes[k] += wire
                if tail[k] < 0:
                    head[k] = p
                else:
                    pk_next[tail[k]] = p
                tail[k] = p
                ing[prev] += wire
                if ing[prev] > max_ing:
                    max_ing = ing[prev]
                if not credit_mode and ing[prev] > xoff[prev] and not xoff_sent[prev]:
                    xoff_sent[prev] = True
                    pauses += 1
                    n = _push(ht, hi, n, t + lat[prev], seq, PAUSE, prev, 0)
                    seq += 1
                stack[sp] = k
                sp += 1
        elif kind == ACK:
            p = a
            f = pk_flow[p]
            s = pk_pay[p]
            inflight[f] -= s
            acked_b[f] += s
            win_tot[f] += s
            if pk_mark[p]:
                win_mark[f] += s
            if win_tot[f] >= win_len[f]:
                alpha[f] = (1 - g) * alpha[f] + g * win_mark[f] / win_tot[f]
                win_tot[f] = 0.0
                win_mark[f] = 0.0
                win_len[f] = cwnd[f]
            if pk_mark[p] and acked_b[f] >= cut_until[f]:
                old_w = cwnd[f]
                cwnd[f] = max(mss, cwnd[f] * (1 - alpha[f] / 2))
                max_cut = max(max_cut, 1 - cwnd[f] / old_w)
                ssth[f] = cwnd[f]
                cut_until[f] = sent_b[f]
            elif not pk_mark[p]:
                if cwnd[f] < ssth[f]:
                    cwnd[f] += s
                else:
                    cwnd[f] += mss * s / cwnd[f]
            inject = f
        elif kind == START:                 # group a's flows open (after a handshake)
            gg = a
            cnt = 0
            for i in range(group_flows_start[gg], group_flows_start[gg + 1]):
                f = group_flows[i]
                cnt += npk[f]
                d = 2 * rtt_half[f] if handshake else 0.0
                n = _push(ht, hi, n, t + d, seq, OPEN, f, 0)
                seq += 1
            remaining[gg] = cnt
        else:                               # OPEN: flow a may send
            inject = a
        fsp = 0
        if inject >= 0:
            fstack[0] = inject
            fsp = 1
        while fsp > 0 or sp > 0:
            while fsp > 0:                  # sources inject what their windows allow
                fsp -= 1
                f = fstack[fsp]
                k = path_links[path_start[f]]
                while sent_pk[f] < npk[f]:
                    pay = mss if sent_pk[f] < npk[f] - 1 else size[f] - mss * (npk[f] - 1)
                    if inflight[f] > 0 and inflight[f] + pay > cwnd[f]:
                        break
                    if qbytes[k] > 0 and qbytes[k] + pay + header > qcap[k]:
                        if not f_wait[f]:       # host waits: its output queue is full
                            f_wait[f] = True
                            fw_next[f] = fw_head[k]
                            fw_head[k] = f
                        break
                    p = pk_base[f] + sent_pk[f]
                    pk_flow[p] = f
                    pk_hop[p] = 0
                    pk_pay[p] = pay
                    pk_mark[p] = qbytes[k] > ecn_k[k]
                    if pk_mark[p]:
                        marked += 1
                    qbytes[k] += pay + header
                    pk_next[p] = -1
                    if tail[k] < 0:
                        head[k] = p
                    else:
                        pk_next[tail[k]] = p
                    tail[k] = p
                    sent_pk[f] += 1
                    sent_b[f] += pay
                    inflight[f] += pay
                stack[sp] = k
                sp += 1
            if sp == 0:
                break
            sp -= 1                         # one touched link tries to send
            k = stack[sp]
            if busy[k] or head[k] < 0 or paused[k]:
                continue
            p = head[k]
            f = pk_flow[p]
            h = pk_hop[p]
            wire = pk_pay[p] + header
            if credit_mode:
                if credit[k] < wire and credit[k] < credit0:
                    if not cwait[k]:
                        cwait[k] = True
                        pauses += 1
                    continue
                cwait[k] = False
                credit[k] -= wire
            head[k] = pk_next[p]
            if head[k] < 0:
                tail[k] = -1
            busy[k] = True
            qbytes[k] -= wire
            done = t + wire / bw[k]
            n = _push(ht, hi, n, done, seq, FREE, k, 0)
            seq += 1
            n = _push(ht, hi, n, done + lat[k], seq, ARRIVE, p, 0)
            seq += 1
            if h > 0:                       # it leaves the node it came in over prev
                prev = path_links[path_start[f] + h - 1]
                ing[prev] -= wire
                if credit_mode:
                    n = _push(ht, hi, n, t + lat[prev], seq, CREDIT, prev, p)
                    seq += 1
                elif xoff_sent[prev] and ing[prev] <= xon[prev]:
                    xoff_sent[prev] = False
                    n = _push(ht, hi, n, t + lat[prev], seq, RESUME, prev, 0)
                    seq += 1
            w = fw_head[k]                  # room in k's queue: wake the hosts that wait
            fw_head[k] = -1
            while w >= 0:
                nx = fw_next[w]
                f_wait[w] = False
                fw_next[w] = -1
                fstack[fsp] = w
                fsp += 1
                w = nx
        if n < 0:
            break
    return step_done, total, events, marked, pauses, max_cut, max_ing


def run_reference(links, paths, sizes, groups, setting: Setting, *, mss: float | None = None,
                  header: float | None = None, queue: float | None = None,
                  ecn_k: float | None = None):
    """The same rules in plain Python, written apart from :func:`run` (objects and deques
    instead of arrays and linked lists) to check it. ``links``: [(rate B/s, delay s)];
    ``paths``: per flow its link ids; ``groups``: per job the list of its steps, each a list
    of flow ids, in order. Returns ({(job, step index): completion time}, marked packets,
    pauses, the largest ingress count)."""
    import heapq
    from collections import deque
    mss = mss or setting.mss
    k_scale = mss / setting.mss
    header = setting.header if header is None else header
    queue = setting.queue if queue is None else queue
    ecn_k = setting.ecn_k if ecn_k is None else ecn_k
    credit_mode = setting.backpressure == "credit"
    xoff, xon, credit0 = (setting.xoff * k_scale, setting.xon * k_scale,
                          setting.credit * k_scale)
    nl = len(links)
    q = [deque() for _ in range(nl)]         # packets waiting at each link's output
    qb = [0.0] * nl                           # their bytes
    ing = [0.0] * nl                          # bytes in over the link, waiting at its end
    xoff_out = [False] * nl
    paused = [False] * nl
    credit = [credit0] * nl
    cwait = [False] * nl
    busy = [False] * nl
    host_wait = [[] for _ in range(nl)]       # flows waiting on this (first) link
    delay = [sum(links[k][1] for k in p) for p in paths]

    class F:
        pass
    fl = []
    for i, s in enumerate(sizes):
        f = F()
        f.n = int(np.ceil(s / mss))
        f.size, f.sent, f.sent_b, f.acked, f.inflight = s, 0, 0.0, 0.0, 0.0
        f.cwnd, f.ssth = setting.init_window * mss, setting.ssthresh * mss
        f.alpha = f.wtot = f.wmark = f.wlen = f.cut_until = 0.0
        f.waiting = False
        fl.append(f)
    group_of = {}
    for j, steps in enumerate(groups):
        for si, step in enumerate(steps):
            for i in step:
                group_of[i] = (j, si)
    left: dict = {}
    done: dict = {}
    ev: list = []
    seq = [0]
    stats = {"marked": 0, "pauses": 0, "max_ing": 0.0}

    def push(t, kind, a):
        heapq.heappush(ev, (t, seq[0], kind, a))
        seq[0] += 1

    for j, steps in enumerate(groups):
        if steps:
            push(0.0, START, (j, 0))

    def enqueue(k, pkt):
        if qb[k] > ecn_k:
            stats["marked"] += not pkt[3]
            pkt[3] = True
        qb[k] += pkt[2] + header
        q[k].append(pkt)

    def inject(i, todo):
        f = fl[i]
        k = paths[i][0]
        while f.sent < f.n:
            pay = mss if f.sent < f.n - 1 else f.size - mss * (f.n - 1)
            if f.inflight > 0 and f.inflight + pay > f.cwnd:
                break
            if qb[k] > 0 and qb[k] + pay + header > queue:
                if not f.waiting:
                    f.waiting = True
                    host_wait[k].insert(0, i)
                break
            enqueue(k, [i, 0, pay, False])
            f.sent += 1
            f.sent_b += pay
            f.inflight += pay
        todo.append(k)

    while ev:
        t, _, kind, a = heapq.heappop(ev)
        todo: list = []
        flows_todo: list = []
        if kind == FREE:
            busy[a] = False
            todo.append(a)
        elif kind == PAUSE:
            paused[a] = True
        elif kind == RESUME:
            paused[a] = False
            todo.append(a)
        elif kind == CREDIT:
            k, wire = a
            credit[k] += wire
            todo.append(k)
        elif kind == ARRIVE:
            i, h = a[0], a[1] + 1
            prev = paths[i][h - 1]
            wire = a[2] + header
            if h == len(paths[i]):
                if credit_mode:
                    push(t + links[prev][1], CREDIT, (prev, wire))
                push(t + delay[i], ACK, a)
                key = group_of[i]
                left[key] -= 1
                if left[key] == 0:
                    done[key] = t
                    j, si = key
                    if si + 1 < len(groups[j]):
                        push(t, START, (j, si + 1))
            else:
                a[1] = h
                k = paths[i][h]
                enqueue(k, a)
                ing[prev] += wire
                stats["max_ing"] = max(stats["max_ing"], ing[prev])
                if not credit_mode and ing[prev] > xoff and not xoff_out[prev]:
                    xoff_out[prev] = True
                    stats["pauses"] += 1
                    push(t + links[prev][1], PAUSE, prev)
                todo.append(k)
        elif kind == ACK:
            i, _, s, m = a
            f = fl[i]
            f.inflight -= s
            f.acked += s
            f.wtot += s
            f.wmark += s if m else 0.0
            if f.wtot >= f.wlen:
                f.alpha = (1 - setting.g) * f.alpha + setting.g * f.wmark / f.wtot
                f.wtot = f.wmark = 0.0
                f.wlen = f.cwnd
            if m and f.acked >= f.cut_until:
                f.cwnd = max(mss, f.cwnd * (1 - f.alpha / 2))
                f.ssth = f.cwnd
                f.cut_until = f.sent_b
            elif not m:
                f.cwnd += s if f.cwnd < f.ssth else mss * s / f.cwnd
            flows_todo.append(i)
        elif kind == START:
            j, si = a
            left[a] = sum(fl[i].n for i in groups[j][si])
            for i in groups[j][si]:
                push(t + (2 * delay[i] if setting.handshake else 0.0), OPEN, i)
        else:
            flows_todo.append(a)
        while flows_todo or todo:
            while flows_todo:
                inject(flows_todo.pop(), todo)
            if not todo:
                break
            k = todo.pop()
            if busy[k] or not q[k] or paused[k]:
                continue
            pkt = q[k][0]
            i, h, pay, _ = pkt
            wire = pay + header
            if credit_mode:
                if credit[k] < wire and credit[k] < credit0:
                    if not cwait[k]:
                        cwait[k] = True
                        stats["pauses"] += 1
                    continue
                cwait[k] = False
                credit[k] -= wire
            q[k].popleft()
            qb[k] -= wire
            busy[k] = True
            end = t + wire / links[k][0]
            push(end, FREE, k)
            push(end + links[k][1], ARRIVE, pkt)
            if h > 0:
                prev = paths[i][h - 1]
                ing[prev] -= wire
                if credit_mode:
                    push(t + links[prev][1], CREDIT, (prev, wire))
                elif xoff_out[prev] and ing[prev] <= xon:
                    xoff_out[prev] = False
                    push(t + links[prev][1], RESUME, prev)
            for i2 in host_wait[k]:
                fl[i2].waiting = False
                flows_todo.append(i2)
            host_wait[k] = []
    return done, stats["marked"], stats["pauses"], stats["max_ing"]
