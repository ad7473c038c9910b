"""Event-driven packet-level network simulator with link-level back-pressure (Flex-SiPAC §6:
the open counterpart of the paper's extended Netbench).

- A *network* is a set of directed links ``(u, v)`` between nodes (CUs or switches), each
  with a bandwidth (bytes/s), a latency (s) and a receive buffer of ``buffer`` bytes at
  ``v`` for that link.
- A *flow* moves ``size`` bytes from ``src`` to ``dst`` along a fixed path, cut into packets
  of at most ``packet`` bytes. The flows of a job's step ``k`` start only when every flow of
  its step ``k - 1`` has been delivered, plus ``step_gap`` (blocking flow starts).
- A link sends the packet at the head of its FIFO output queue when it is idle *and* the
  receiver has buffer space for it (credit-based, lossless back-pressure): sending takes
  size / bandwidth, the packet arrives ``latency`` later. At a relay the packet is accepted
  into the link's receive buffer and appended to the output queue of its next link; the
  buffer space is returned, a latency later (the credit's trip back), once the packet has
  left on that next link. At its destination the packet is consumed and its credit returned
  the same way.
- When a step starts, the packets of the flows leaving one source link are queued
  interleaved, one packet of each flow in turn (the flows share the link fairly).

Events at the same time are handled in the order they were scheduled. :func:`simulate` is
the compiled (numba) engine; :func:`simulate_reference` the same rules in plain Python, used
to check it and as the benchmark's baseline. Both return a :class:`SimResult`.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

import numpy as np

__all__ = ["Link", "Flow", "SimResult", "Deadlock", "simulate", "simulate_reference"]


@dataclass
class Link:
    bandwidth: float          # bytes/s
    latency: float = 0.0      # s
    buffer: float = 1 << 20   # bytes of receive buffer at the far end


@dataclass(frozen=True)
class Flow:
    job: int
    step: int
    path: tuple               # nodes, src first, dst last
    size: float               # bytes


@dataclass
class SimResult:
    job_time: dict            # job -> completion time of its last step
    step_time: dict           # (job, step) -> completion time
    packets: int
    events: int

    @property
    def jct(self) -> float:
        return max(self.job_time.values()) if self.job_time else 0.0


def _compile(links: dict, flows: list, packet: float):
    """Checked integer form: link ids, per-flow link paths, per (job, step) flow lists."""
    if not packet > 0:
        raise ValueError(f"packet size must be > 0, not {packet!r}")
    ids = {k: i for i, k in enumerate(links)}
    for k, l in links.items():
        if not l.bandwidth > 0 or l.latency < 0:
            raise ValueError(f"link {k}: bandwidth must be > 0 and latency >= 0")
        if l.buffer < packet:
            raise ValueError(f"link {k}: a buffer of {l.buffer} bytes cannot hold one "
                             f"{packet}-byte packet")
    steps: dict = {}
    paths = []
    for n, f in enumerate(flows):
        if len(f.path) < 2 or not f.size > 0:
            raise ValueError(f"flow {f.path}: needs a path of >= 2 nodes and size > 0")
        try:
            paths.append([ids[(u, v)] for u, v in zip(f.path, f.path[1:])])
        except KeyError:
            bad = next((u, v) for u, v in zip(f.path, f.path[1:]) if (u, v) not in ids)
            raise ValueError(f"flow {f.path[0]}->{f.path[-1]}: no link {bad[0]}->{bad[1]}") \
                from None
        steps.setdefault(f.job, {}).setdefault(f.step, []).append(n)
    return ids, paths, steps


# --------------------------------------------------------------- plain Python reference --

def simulate_reference(links: dict, flows: list, *, packet: float = 9000.0,
                       step_gap: float = 0.0, trace: list | None = None) -> SimResult:
    """The simulator's rules in plain Python (``trace``: a list to receive
    ``(time, "send", link, flow index, bytes)`` and ``(time, "deliver", flow index, bytes)``)."""
    ids, paths, steps = _compile(links, flows, packet)
    names = list(links)
    spec = list(links.values())
    busy = [False] * len(spec)
    credit = [l.buffer for l in spec]
    queue = [deque() for _ in spec]
    order = {j: sorted(s) for j, s in steps.items()}
    remaining: dict = {}
    events: list = []
    seq = 0
    counts = {"events": 0, "packets": 0}
    step_time: dict = {}
    job_time: dict = {}

    def push(t, kind, a, b=0, c=0.0):
        nonlocal seq
        heapq.heappush(events, (t, seq, kind, a, b, c))
        seq += 1

    def try_send(t, k):
        if busy[k] or not queue[k]:
            return
        f, hop, size = queue[k][0]
        if credit[k] < size:
            return
        queue[k].popleft()
        busy[k] = True
        credit[k] -= size
        if trace is not None:
            trace.append((t, "send", names[k], f, size))
        done = t + size / spec[k].bandwidth
        push(done, 0, k)
        push(done + spec[k].latency, 1, f, hop + 1, size)
        if hop > 0:
            prev = paths[f][hop - 1]
            push(t + spec[prev].latency, 2, prev, 0, size)

    def start(t, job, idx):
        step = order[job][idx]
        per_link: dict = {}
        total = 0
        for f in steps[job][step]:
            n = int(-(-flows[f].size // packet))
            total += n
            per_link.setdefault(paths[f][0], []).append((f, n))
        remaining[(job, step)] = total
        counts["packets"] += total
        for k, fl in per_link.items():
            i = 0
            while fl:
                nxt = []
                for f, n in fl:
                    size = packet if i < n - 1 else flows[f].size - packet * (n - 1)
                    queue[k].append((f, 0, size))
                    if i + 1 < n:
                        nxt.append((f, n))
                fl = nxt
                i += 1
            try_send(t, k)

    for job in sorted(order):
        push(0.0, 3, job, 0)
    while events:
        t, _, kind, a, b, c = heapq.heappop(events)
        counts["events"] += 1
        if kind == 0:
            busy[a] = False
            try_send(t, a)
        elif kind == 2:
            credit[a] += c
            try_send(t, a)
        elif kind == 3:
            start(t, a, b)
        else:
            f, hop, size = a, b, c
            prev = paths[f][hop - 1]
            if hop == len(paths[f]):
                push(t + spec[prev].latency, 2, prev, 0, size)
                if trace is not None:
                    trace.append((t, "deliver", f, size))
                key = (flows[f].job, flows[f].step)
                remaining[key] -= 1
                if remaining[key] == 0:
                    step_time[key] = t
                    idx = order[key[0]].index(key[1]) + 1
                    if idx < len(order[key[0]]):
                        push(t + step_gap, 3, key[0], idx)
                    else:
                        job_time[key[0]] = t
            else:
                k = paths[f][hop]
                queue[k].append((f, hop, size))
                try_send(t, k)
    _check_finished(len(set((f.job, f.step) for f in flows)), step_time)
    return SimResult(job_time, step_time, counts["packets"], counts["events"])


class Deadlock(RuntimeError):
    """The event queue ran dry with steps unfinished: packets wait for buffer space on a
    cycle of links each waiting on the next."""


def _check_finished(steps: int, step_time: dict) -> None:
    done = sum(1 for t in step_time.values() if t == t)       # NaN: never finished
    if done < steps:
        raise Deadlock(f"the simulation stalled with {steps - done} of {steps} steps "
                       f"unfinished: packets wait for buffer space around a cycle of links "
                       f"(a routing deadlock under back-pressure); route without cycles of "
                       f"link dependencies or give the receivers more buffer")


# ------------------------------------------------------------------- compiled engine -----

def simulate(links: dict, flows: list, *, packet: float = 9000.0,
             step_gap: float = 0.0) -> SimResult:
    """The simulator (see the module docstring), compiled with numba; the same results as
    :func:`simulate_reference`."""
    ids, paths, steps = _compile(links, flows, packet)
    spec = list(links.values())
    bw = np.array([l.bandwidth for l in spec], dtype=np.float64)
    lat = np.array([l.latency for l in spec], dtype=np.float64)
    buf = np.array([l.buffer for l in spec], dtype=np.float64)
    path_start = np.zeros(len(flows) + 1, dtype=np.int64)
    path_start[1:] = np.cumsum([len(p) for p in paths])
    path_links = np.array([k for p in paths for k in p], dtype=np.int64)
    size = np.array([f.size for f in flows], dtype=np.float64)
    # (job, step) groups in execution order: each job's steps consecutive, sorted
    jobs = sorted(steps)
    group_flows, group_job, job_first, keys = [], [], [], []
    seg_start, group_seg = [0], [0]     # flows of a group, by first link (first seen first)
    for j in jobs:
        job_first.append(len(keys))
        for s in sorted(steps[j]):
            keys.append((j, s))
            by_link: dict = {}
            for f in steps[j][s]:
                by_link.setdefault(paths[f][0], []).append(f)
            for fl in by_link.values():
                group_flows += fl
                seg_start.append(len(group_flows))
            group_seg.append(len(seg_start) - 1)
            group_job.append(len(job_first) - 1)
    job_first.append(len(keys))
    flow_group = np.zeros(len(flows), dtype=np.int64)
    for g, (j, s) in enumerate(keys):
        flow_group[steps[j][s]] = g
    from ._engine import run
    step_done, n_packets, n_events = run(
        bw, lat, buf, path_start, path_links, size, np.array(seg_start, np.int64),
        np.array(group_seg, np.int64), np.array(group_flows, np.int64),
        np.array(group_job, np.int64), np.array(job_first, np.int64), flow_group,
        float(packet), float(step_gap))
    step_time = {k: float(step_done[i]) for i, k in enumerate(keys)}
    _check_finished(len(keys), step_time)
    job_time = {j: float(step_done[job_first[n + 1] - 1]) for n, j in enumerate(jobs)}
    return SimResult(job_time, step_time, int(n_packets), int(n_events))


# ------------------------------------------------ window transport (the authors' setting) --

def simulate_window(links: dict, flows: list, setting=None, *,
                    packet_budget: int = 1_000_000) -> SimResult:
    """The same links and flows under a window transport with DCTCP's reaction to ECN,
    output queues that count what waits in them, ECN marking on enqueue and lossless links
    (link-level pause or credit; :mod:`models.common.dctcp`, by default its
    ``NETBENCH_SIPAC`` setting: the authors' pipeline, a pause per link). Every link's delay is the
    setting's (``link_delay``: 1 us on every network and server link); its rate is the
    link's. Above ``packet_budget`` packets a run's segments grow (total bytes / budget),
    and the queue, the ECN threshold, the pause thresholds, the credits and the windows
    grow with them (the same counts of
    segments): the 100 MB points then cost what the 1 MB ones do."""
    from aifabric.models.common import dctcp
    s = setting or dctcp.NETBENCH_SIPAC
    ids, paths, steps = _compile(links, flows, 1.0)
    total = sum(f.size for f in flows)
    mss = max(s.mss, total / packet_budget)
    k = mss / s.mss
    spec = list(links.values())
    nl = len(spec)
    bw = np.array([l.bandwidth for l in spec], dtype=np.float64)
    lat = np.full(nl, s.link_delay)
    qcap = np.full(nl, s.queue * k)
    ecn = np.full(nl, s.ecn_k * k)
    path_start = np.zeros(len(flows) + 1, dtype=np.int64)
    path_start[1:] = np.cumsum([len(p) for p in paths])
    path_links = np.array([x for p in paths for x in p], dtype=np.int64)
    size = np.array([f.size for f in flows], dtype=np.float64)
    jobs = sorted(steps)
    gstart, gflows, gjob, job_first, keys = [0], [], [], [], []
    for n, j in enumerate(jobs):
        job_first.append(len(keys))
        for st in sorted(steps[j]):
            keys.append((j, st))
            gflows += steps[j][st]
            gstart.append(len(gflows))
            gjob.append(n)
    job_first.append(len(keys))
    flow_group = np.zeros(len(flows), dtype=np.int64)
    for g, (j, st) in enumerate(keys):
        flow_group[steps[j][st]] = g
    if s.backpressure not in dctcp.BACKPRESSURE:
        raise ValueError(f"backpressure must be one of {', '.join(dctcp.BACKPRESSURE)}, "
                         f"not {s.backpressure!r}")
    done, packets, events, marked, pauses, max_cut, max_ing = dctcp.run(
        bw, lat, qcap, ecn, path_start, path_links, size, np.array(gstart, np.int64),
        np.array(gflows, np.int64), np.array(gjob, np.int64), np.array(job_first, np.int64),
        flow_group, float(mss), float(s.header * k), float(s.init_window),
        float(s.ssthresh), float(s.g), bool(s.handshake), s.backpressure == "credit",
        np.full(nl, s.xoff * k), np.full(nl, s.xon * k), float(s.credit * k))
    step_time = {key: float(done[i]) for i, key in enumerate(keys)}
    _check_finished(len(keys), step_time)
    job_time = {j: float(done[job_first[n + 1] - 1]) for n, j in enumerate(jobs)}
    res = SimResult(job_time, step_time, int(packets), int(events))
    res.marked, res.pauses, res.mss, res.max_cut = int(marked), int(pauses), mss, max_cut
    res.max_ingress = float(max_ing)
    return res
