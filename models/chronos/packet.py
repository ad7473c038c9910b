"""Circuit versus packet switching for MoE all-to-all traffic (Chronos, NAIC'25, §8.1).

One switch, N endpoints, every link ``link_bps`` in each direction; ``demand[i, j]`` bytes go
from endpoint ``i`` to endpoint ``j``; the metric is the all-to-all completion time.

* :func:`circuit_completion`: a crossbar circuit switch playing a BvN schedule of the demand:
  makespan / link rate + permutations x ``t_x`` + the measured decomposition time.
* :func:`fluid_completion`: an ideal packet switch that gives the flows max-min fair rates at
  every instant (sender and receiver links are the constraints; rates are recomputed whenever
  a flow finishes). It has no queues and no control loop, so it bounds any packet switch with
  fair sharing from below.
* :func:`dcqcn_completion`: an output-queued packet switch with ECN marking and DCQCN rate
  control at the senders (:class:`DCQCN`), simulated as a fluid in steps of ``dt``.

DCQCN (Zhu et al., "Congestion control for large-scale RDMA deployments", SIGCOMM 2015):

* switch egress queue marks packets with probability 0 below ``k_min``, rising linearly to
  ``p_max`` at ``k_max``, 1 above;
* the receiver (NP) returns at most one CNP per flow per ``cnp_interval`` when marked packets
  arrive; it reaches the sender half an RTT later;
* the sender (RP), on a CNP: ``Rt = Rc; Rc *= 1 - alpha/2; alpha = (1-g) alpha + g``; without
  CNPs ``alpha *= 1-g`` every ``alpha_timer``; rate increase events every ``rate_timer`` and every
  ``byte_counter`` bytes: fast recovery ``Rc = (Rt+Rc)/2`` for the first ``f`` events, then
  additive (``Rt += r_ai``) and, once both counters passed ``f``, hyper increase
  (``Rt += i * r_hai``), each followed by ``Rc = (Rt+Rc)/2``;
* a sender's flows share its link in proportion to their rates when their sum exceeds it;
* lossless Ethernet: PFC pauses a sender (all its flows) while more than ``pfc_xoff`` bytes from
  its ingress port are queued in the switch, until fewer than ``pfc_xon`` remain (defaults: a
  51.2 Tb/s switch's ~165 MB buffer over 64 ports, about 2.5 MB per port). Queues drain FIFO,
  modelled as a fluid (each egress serves its ingress shares in proportion).

Flows start at line rate.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numba
import numpy as np

from .bvn import check_demand, decompose

__all__ = ["DCQCN", "circuit_completion", "fluid_completion", "dcqcn_completion"]


@dataclass(frozen=True)
class DCQCN:
    """DCQCN parameters; defaults are Zhu et al.'s (SIGCOMM 2015), except ``r_hai`` (the
    hyper-increase step, 5 x ``r_ai`` here) and ``min_rate``/``mtu`` (the HPCC ns-3 defaults)."""

    k_min: float = 5e3            # bytes
    k_max: float = 200e3          # bytes
    p_max: float = 0.01
    g: float = 1 / 256
    cnp_interval: float = 50e-6   # s, NP: at most one CNP per flow per interval
    alpha_timer: float = 55e-6    # s
    rate_timer: float = 55e-6     # s
    byte_counter: float = 10e6    # bytes
    f: int = 5                    # fast-recovery stages
    r_ai: float = 40e6            # bit/s
    r_hai: float = 200e6          # bit/s
    min_rate: float = 100e6       # bit/s
    mtu: float = 1000.0           # bytes
    pfc_xoff: float = 2.5e6       # bytes queued from one ingress port that pause its sender
    pfc_xon: float = 2.0e6        # bytes below which the pause is lifted

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not np.isfinite(value) or value <= 0:
                raise ValueError(f"DCQCN parameter '{name}' must be a positive number, "
                                 f"not {value!r}")
        if self.k_min >= self.k_max:
            raise ValueError(f"DCQCN needs k_min < k_max, not {self.k_min} >= {self.k_max}")
        if self.p_max > 1 or self.g >= 1:
            raise ValueError("DCQCN needs p_max <= 1 and g < 1")
        if self.pfc_xon >= self.pfc_xoff:
            raise ValueError(f"DCQCN needs pfc_xon < pfc_xoff, not {self.pfc_xon} >= "
                             f"{self.pfc_xoff}")


def _rate(link_bps: object) -> float:
    if isinstance(link_bps, bool) or not isinstance(link_bps, (int, float)) \
            or not np.isfinite(link_bps) or link_bps <= 0:
        raise ValueError(f"'link_bps' must be a positive number of bit/s, not {link_bps!r}")
    return float(link_bps)


def circuit_completion(demand: object, link_bps: float, t_x_s: float = 10e-9,
                       method: str = "exact") -> dict:
    """Completion time (s) of the circuit switch's schedule, with its parts: ``transfer_s``
    (makespan / rate), ``reconfig_s`` (permutations x t_x), ``total_s`` (their sum). The
    host's time to compute the decomposition, ``decompose_s``, is measured and returned apart:
    it depends on the machine, not on the schedule."""
    d = check_demand(demand)
    c = _rate(link_bps)
    if isinstance(t_x_s, bool) or not isinstance(t_x_s, (int, float)) or t_x_s < 0:
        raise ValueError(f"'t_x_s' must be a number of seconds >= 0, not {t_x_s!r}")
    decompose(np.ones((2, 2), dtype=np.int64), method)   # compiled before it is timed
    start = time.perf_counter()
    schedule = decompose(d, method)
    elapsed = time.perf_counter() - start
    transfer = 8.0 * schedule.makespan / c
    reconfig = len(schedule) * float(t_x_s)
    return {"transfer_s": transfer, "reconfig_s": reconfig, "decompose_s": elapsed,
            "total_s": transfer + reconfig, "permutations": len(schedule)}


@numba.njit(cache=True)
def _maxmin_rates(active, src, dst, n, cap):
    """Max-min fair rates of the active flows under per-sender and per-receiver capacity."""
    m = len(src)
    rate = np.zeros(m)
    frozen = ~active
    left = np.full(2 * n, cap)
    while True:
        users = np.zeros(2 * n, dtype=np.int64)
        for f in range(m):
            if not frozen[f]:
                users[src[f]] += 1
                users[n + dst[f]] += 1
        share = np.inf
        for link in range(2 * n):
            if users[link] > 0:
                share = min(share, left[link] / users[link])
        if share == np.inf:
            return rate
        bottleneck = np.zeros(2 * n, dtype=np.bool_)
        for link in range(2 * n):
            if users[link] > 0 and left[link] / users[link] <= share * (1 + 1e-12):
                bottleneck[link] = True
        for f in range(m):
            if not frozen[f]:
                left[src[f]] -= share
                left[n + dst[f]] -= share
                rate[f] += share
                if bottleneck[src[f]] or bottleneck[n + dst[f]]:
                    frozen[f] = True


@numba.njit(cache=True)
def _fluid(sizes, src, dst, n, cap):
    left = sizes.astype(np.float64)
    active = left > 0
    t = 0.0
    while active.any():
        rate = _maxmin_rates(active, src, dst, n, cap)
        dt = np.inf
        for f in range(len(left)):
            if active[f]:
                dt = min(dt, left[f] / rate[f])
        t += dt
        for f in range(len(left)):
            if active[f]:
                left[f] -= rate[f] * dt
                if left[f] <= 1e-6 * sizes[f]:
                    left[f] = 0.0
                    active[f] = False
    return t


def _flows(d: np.ndarray):
    src, dst = np.nonzero(d)
    return d[src, dst].astype(np.float64), src.astype(np.int64), dst.astype(np.int64)


def fluid_completion(demand: object, link_bps: float) -> float:
    """Completion time (s) under instantaneous max-min fair sharing (no queues, no control
    loop): a lower bound for any packet switch that shares links fairly."""
    d = check_demand(demand)
    c = _rate(link_bps) / 8.0
    sizes, src, dst = _flows(d)
    if len(sizes) == 0:
        return 0.0
    return float(_fluid(sizes, src, dst, d.shape[0], c))


@numba.njit(cache=True)
def _dcqcn(sizes, src, dst, n, cap, dt, delay_steps, p, seed, max_steps):
    k_min, k_max, p_max, g = p[0], p[1], p[2], p[3]
    cnp_interval, alpha_timer, rate_timer, byte_counter = p[4], p[5], p[6], p[7]
    f_stages, r_ai, r_hai, min_rate, mtu = p[8], p[9], p[10], p[11], p[12]
    xoff, xon = p[13], p[14]
    np.random.seed(seed)
    m = len(sizes)
    left = sizes.copy()
    rc = np.full(m, cap)
    rt = np.full(m, cap)
    alpha = np.ones(m)
    since_cnp = np.zeros(m)        # s since the last CNP (alpha timer)
    since_inc = np.zeros(m)        # s since the last timer increase event
    bytes_inc = np.zeros(m)        # bytes since the last byte-counter event
    i_t = np.zeros(m, dtype=np.int64)
    i_b = np.zeros(m, dtype=np.int64)
    np_last = np.full(m, -1.0)     # when the NP last sent a CNP for the flow
    pending = np.zeros((delay_steps + 1, m), dtype=np.bool_)   # CNPs in flight
    queue = np.zeros(n)
    qm = np.zeros((n, n))          # qm[s, d]: bytes at egress d that came from ingress s
    paused = np.zeros(n, dtype=np.bool_)
    demand_rate = np.zeros(n)
    send = np.zeros(m)
    for step in range(max_steps):
        now = step * dt
        slot = step % (delay_steps + 1)
        # Reaction point: CNPs arriving now, alpha decay, rate increase.
        for f in range(m):
            if left[f] <= 0:
                continue
            if pending[slot, f]:
                pending[slot, f] = False
                rt[f] = rc[f]
                rc[f] = max(min_rate, rc[f] * (1 - alpha[f] / 2))
                alpha[f] = (1 - g) * alpha[f] + g
                since_cnp[f] = 0.0
                since_inc[f] = 0.0
                bytes_inc[f] = 0.0
                i_t[f] = 0
                i_b[f] = 0
                continue
            since_cnp[f] += dt
            if since_cnp[f] >= alpha_timer:
                alpha[f] *= 1 - g
                since_cnp[f] -= alpha_timer
            events = 0
            since_inc[f] += dt
            if since_inc[f] >= rate_timer:
                since_inc[f] -= rate_timer
                i_t[f] += 1
                events += 1
            if bytes_inc[f] >= byte_counter:
                bytes_inc[f] -= byte_counter
                i_b[f] += 1
                events += 1
            for _ in range(events):
                if max(i_t[f], i_b[f]) < f_stages:
                    pass
                elif min(i_t[f], i_b[f]) > f_stages:
                    rt[f] = min(cap, rt[f] + (min(i_t[f], i_b[f]) - f_stages) * r_hai)
                else:
                    rt[f] = min(cap, rt[f] + r_ai)
                rc[f] = min(cap, (rt[f] + rc[f]) / 2)
        # Senders share their link in proportion to the flows' rates.
        demand_rate[:] = 0.0
        for f in range(m):
            if left[f] > 0:
                demand_rate[src[f]] += rc[f]
        busy = False
        for f in range(m):
            if left[f] > 0:
                busy = True
            if left[f] > 0 and not paused[src[f]]:
                r = rc[f] * min(1.0, cap / demand_rate[src[f]])
                send[f] = min(left[f], r * dt)
            else:
                send[f] = 0.0
        # Egress queues: marking by the queue a packet joins, then drain at line rate.
        for f in range(m):
            if send[f] <= 0:
                continue
            left[f] -= send[f]
            bytes_inc[f] += send[f]
            q = queue[dst[f]]
            if q <= k_min:
                pm = 0.0
            elif q >= k_max:
                pm = 1.0
            else:
                pm = p_max * (q - k_min) / (k_max - k_min)
            if pm > 0 and (np_last[f] < 0 or now - np_last[f] >= cnp_interval):
                packets = max(1.0, send[f] / mtu)
                if np.random.random() < 1 - (1 - pm) ** packets:
                    np_last[f] = now
                    pending[(step + delay_steps) % (delay_steps + 1), f] = True
            queue[dst[f]] += send[f]
            qm[src[f], dst[f]] += send[f]
        # FIFO as a fluid: each egress drains its ingress shares in proportion.
        drained = True
        for d in range(n):
            if queue[d] > 0:
                out = min(queue[d], cap * dt)
                keep = 1.0 - out / queue[d]
                for s_ in range(n):
                    qm[s_, d] *= keep
                queue[d] -= out
                if queue[d] > 1e-9:
                    drained = False
                else:
                    queue[d] = 0.0
        # PFC: an ingress port holding more than xoff bytes pauses its sender until < xon.
        for s_ in range(n):
            held = 0.0
            for d in range(n):
                held += qm[s_, d]
            if held > xoff:
                paused[s_] = True
            elif held < xon:
                paused[s_] = False
        if not busy and drained:
            return now + dt
    return -1.0


def dcqcn_completion(demand: object, link_bps: float, *, rtt_s: float = 1e-6,
                     dt_s: float | None = None, params: DCQCN | None = None, seed: int = 0,
                     max_time_s: float = 10.0) -> float:
    """Completion time (s) of the all-to-all on an output-queued switch with DCQCN.

    ``dt_s`` (default RTT/2) is the fluid step; CNPs take RTT/2 to reach the sender, and the
    last byte a further RTT/2 to its receiver. ``seed`` drives the ECN marking draws."""
    d = check_demand(demand)
    c = _rate(link_bps) / 8.0
    p = params if params is not None else DCQCN()
    if not isinstance(p, DCQCN):
        raise TypeError(f"'params' must be a DCQCN, not {type(p).__name__}")
    for name, v in (("rtt_s", rtt_s), ("max_time_s", max_time_s)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise ValueError(f"'{name}' must be a positive number of seconds, not {v!r}")
    dt = rtt_s / 2 if dt_s is None else dt_s
    if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not 0 < dt <= rtt_s:
        raise ValueError(f"'dt_s' must be in (0, rtt_s], not {dt_s!r}")
    sizes, src, dst = _flows(d)
    if len(sizes) == 0:
        return 0.0
    delay_steps = max(1, int(round(rtt_s / 2 / dt)))
    vec = np.array([p.k_min, p.k_max, p.p_max, p.g, p.cnp_interval, p.alpha_timer,
                    p.rate_timer, p.byte_counter, float(p.f), p.r_ai / 8, p.r_hai / 8,
                    p.min_rate / 8, p.mtu, p.pfc_xoff, p.pfc_xon])
    t = _dcqcn(sizes, src, dst, d.shape[0], c, float(dt), delay_steps, vec, int(seed),
               int(max_time_s / dt) + 1)
    if t < 0:
        raise RuntimeError(f"DCQCN simulation did not finish within {max_time_s} s")
    return float(t + rtt_s / 2)
