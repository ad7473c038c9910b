"""A packet-level RoCE switch: hosts with DCQCN rate limiters, one shared-buffer
output-queued switch with PFC and RED/ECN (Chronos §8.1, the setting of the paper's ns-3 runs).

The rules are those of the simulator the paper used, HPCC's ns-3
(github.com/alibaba-edu/High-Precision-Congestion-Control: ``simulation/run.py``,
``src/point-to-point/model/rdma-hw.cc`` (Mellanox DCQCN, ``cc_mode`` 1), ``switch-mmu.cc`` and
``switch-node.cc``), on one switch with ``n`` hosts:

* **Hosts.** One queue pair (QP) per non-zero demand entry ``(i, j)``. The NIC is idle or
  sends one packet (``mtu`` payload bytes, the flow's last one shorter, plus
  ``header_bytes``) at ``link_bps``; when idle and not paused by PFC it picks the next QP
  round-robin (in destination order, from the one after the last served) among those with
  bytes left whose rate limiter allows it: after a packet of ``S`` wire bytes at rate ``R``,
  the QP may send again ``S / R`` after the start of that packet (ns-3 ``UpdateNextAvail``).
  If no QP may send yet, the NIC wakes at the earliest such time.
* **Links.** Every link (host to switch, switch to host) has rate ``link_bps`` and
  propagation delay ``delay_s`` (default: a quarter of ``rtt_s``, so a round trip
  host-switch-host-switch-host is ``rtt_s``); packets are stored and forwarded whole.
* **Switch.** Output-queued FIFO per egress port over a shared buffer of ``buffer_bytes``.
  Every packet is counted at its ingress port from its arrival until it starts leaving on
  its egress port. **PFC**: when a packet's arrival brings its ingress counter to the pause
  threshold, the switch sends a pause frame to that host (it arrives ``delay_s`` later and
  stops the NIC after the packet it is sending); when a packet leaves and its ingress counter
  is at or below the resume threshold, a resume frame. Dynamic thresholds (``pfc="dynamic"``,
  ns-3's): pause at ``ingress >= pfc_alpha x (buffer_bytes - bytes held)``, resume when
  ``ingress + pfc_resume_offset`` is at or below it (or the port is empty); static
  (``pfc="static"``): pause at ``pfc_xoff``, resume at ``pfc_xon``. Nothing is dropped; the
  peak buffer use is reported. **ECN** (RED on the instantaneous queue, as ns-3 marks it:
  when a packet starts leaving, on the egress queue's remaining bytes ``q``): marked with
  probability 1 if ``q > k_max``, ``p_max (q - k_min) / (k_max - k_min)`` if ``q > k_min``,
  else 0.
* **Notification point.** A marked packet's receiver returns a CNP (the CNP flag of its ACK
  in ns-3) if at least ``cnp_interval_s`` has passed since its last CNP for the flow (0 in
  ns-3: every marked packet); it reaches the sender ``cnp_delay_s`` (default ``2 delay_s``)
  after the packet's delivery.
* **Reaction point** (DCQCN, Zhu et al., SIGCOMM 2015, as ns-3's ``RdmaHw`` Mellanox version
  implements it). Rate ``R_C`` and target ``R_T`` start at line rate. A CNP sets the
  alpha and decrease flags; the first CNP of a QP sets ``alpha = 1``, clears the alpha flag,
  starts the alpha timer (every ``alpha_timer_s``: ``alpha <- (1 - g) alpha + g`` if a CNP
  came since the last tick, else ``(1 - g) alpha``) and the decrease timer (every
  ``decrease_timer_s``, the first 1 ns later: if a CNP came, ``R_T <- R_C`` unless
  ``clamp_target`` is off and no increase happened since the last cut, ``R_C <- max(min_rate,
  R_C (1 - alpha/2))``, the increase stage back to 0 and the increase timer restarted), and
  sets ``R_C = R_T = rate_on_first_cnp x R_C``. The increase timer (every
  ``increase_timer_s``) raises the rate: at stage ``< fast_recovery`` ``R_C <- (R_C +
  R_T)/2`` (fast recovery); at stage ``== fast_recovery`` ``R_T += r_ai`` (additive); above,
  ``R_T += r_hai`` (hyper); ``R_T`` capped at line rate, then ``R_C <- (R_C + R_T)/2``; the
  stage counts up (a restarted timer fires one period after the restart). HPCC's ns-3 DCQCN
  has no byte counter, nor have its presets (``byte_counter_bytes = 0``). With
  ``byte_counter_bytes = B > 0`` the reaction point also has Zhu et al.'s byte counter: from
  the QP's first CNP on, every B bytes it sends (headers included) the counter expires and
  raises the rate as the timer does; a cut resets both counts. With the byte counter the
  increase is chosen as Zhu et al. choose it, from the timer's and the byte counter's
  expirations since the last cut, the current one counted: both <= F fast recovery, both > F
  hyper (``R_T += r_hai``), else additive (``R_T += r_ai``). A QP's timers and byte counter
  stop once it has sent its last byte.
* **ACKs** (``ack_bytes``, 0: none): the receiver of each data packet returns an ACK of
  ``ack_bytes`` (ns-3: one per packet, L2_ACK_INTERVAL 1, padded to a 60-byte frame in
  ``RdmaHw::ReceiveUdp``) carrying the CNP flag; the
  NIC sends ACKs before data and regardless of PFC pauses (ns-3's ACK_HIGH_PRIO, a host
  setting only); the switch queues them with the data in the egress FIFO of the sender's port,
  counted for PFC and in the queue that marks data but never marked themselves (``third.cc``
  leaves ``SwitchNode``'s AckHighPrio at 0, so ACKs take the data's priority group there), or,
  with ``switch_ack_first``, forwards them ahead of data outside the PFC accounting. The CNP
  reaches the sender with its ACK (``cnp_delay_s`` is then unused), so behind the queue of
  the sender's own downlink. Not modelled: link-level retransmission
  (nothing is ever lost here).

Events at the same time are handled in the order they were scheduled.
:func:`simulate` is the compiled engine (:mod:`._roce_engine`, numba); :func:`simulate_reference`
the same rules in plain Python, event for event (the check of the engine and the
benchmark's baseline). ECN draws come from one uniform array per run (``seed``), taken in
packet departure order, so both give identical results.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, fields, replace

import numpy as np

__all__ = ["RoCE", "RoceResult", "Stalled", "hpcc_dcqcn", "hpcc_dcqcn_paper", "zhu_reaction_point",
           "PRESETS", "simulate",
           "simulate_reference"]

# Event kinds (the engine uses the same numbers).
(TX_DONE, WAKE, SW_ARRIVE, SW_TX_DONE, PFC_FRAME, CNP, ALPHA, DECREASE, INCREASE, ACK_GEN,
 SW_ACK) = range(11)


@dataclass(frozen=True)
class RoCE:
    """Every constant of the simulator. Rates in bit/s, sizes in bytes, times in s. The
    defaults are HPCC ns-3's ``run.py --cc dcqcn`` at 800 Gb/s (see :func:`hpcc_dcqcn`)."""

    link_bps: float = 800e9
    rtt_s: float = 1e-6               # base round trip; each link's delay is rtt_s / 4
    mtu: int = 1000                   # payload bytes per packet (ns-3 PACKET_PAYLOAD_SIZE)
    header_bytes: int = 50            # per-packet headers on the wire
    ack_bytes: int = 60               # ACK per data packet, reverse path (ns-3 pads to 60; 0: none)
    buffer_bytes: float = 256 * 2**20  # shared switch buffer (run.py: 16 MB x bw / 50)
    pfc: str = "dynamic"              # "dynamic" (ns-3), "static" or "off"
    pfc_alpha: float = 1 / 8          # dynamic threshold factor (ns-3 pfc_a_shift = 3)
    pfc_resume_offset: float = 3 * 1024   # ns-3 SwitchMmu::resume_offset
    pfc_xoff: float = 2.5e6           # static thresholds (pfc="static")
    pfc_xon: float = 2.0e6
    ecn: bool = True
    k_min: float = 3.2e6              # run.py KMIN_MAP: 100 KB x bw / 25
    k_max: float = 12.8e6             # run.py KMAX_MAP: 400 KB x bw / 25
    p_max: float = 0.2
    cnp_interval_s: float = 0.0       # ns-3: a CNP flag on every marked packet's ACK
    g: float = 1 / 256                # EWMA_GAIN 0.00390625
    alpha_timer_s: float = 1e-6       # ALPHA_RESUME_INTERVAL
    decrease_timer_s: float = 4e-6    # RATE_DECREASE_INTERVAL
    increase_timer_s: float = 300e-6  # RP_TIMER
    fast_recovery: int = 1            # FAST_RECOVERY_TIMES
    r_ai: float = 160e6               # RATE_AI: 5 Mb/s x bw / 25
    r_hai: float = 1.6e9              # RATE_HAI: 50 Mb/s x bw / 25
    min_rate: float = 1e9             # MIN_RATE 1000 Mb/s
    rate_on_first_cnp: float = 1.0    # ns-3 RdmaHw RateOnFirstCnp default
    clamp_target: bool = False        # CLAMP_TARGET_RATE 0
    byte_counter_bytes: float = 0.0   # Zhu et al.'s byte counter B (0: none, as HPCC's ns-3)
    switch_ack_first: bool = False    # ACKs ahead of data at the switch (ns-3: in the data queue)
    delay_s: float | None = None      # per-link propagation; None: rtt_s / 4
    cnp_delay_s: float | None = None  # receiver to sender; None: 2 x delay

    def __post_init__(self) -> None:
        def bad(name, what):
            raise ValueError(f"RoCE parameter '{name}' must be {what}, not "
                             f"{getattr(self, name)!r}")

        def num(name):
            v = getattr(self, name)
            return not isinstance(v, bool) and isinstance(v, (int, float, np.integer,
                                                               np.floating)) and np.isfinite(v)
        for name in ("link_bps", "rtt_s", "buffer_bytes", "pfc_alpha", "pfc_xoff", "g",
                     "alpha_timer_s", "decrease_timer_s", "increase_timer_s", "min_rate",
                     "rate_on_first_cnp"):
            if not num(name) or getattr(self, name) <= 0:
                bad(name, "a positive number")
        for name in ("pfc_resume_offset", "pfc_xon", "k_min", "k_max", "cnp_interval_s",
                     "r_ai", "r_hai", "byte_counter_bytes"):
            if not num(name) or getattr(self, name) < 0:
                bad(name, "a number >= 0")
        for name in ("mtu", "header_bytes", "fast_recovery", "ack_bytes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0 \
                    or (name == "mtu" and v < 1):
                bad(name, "an int >= 1" if name == "mtu" else "an int >= 0")
        for name in ("delay_s", "cnp_delay_s"):
            if getattr(self, name) is not None and (not num(name) or getattr(self, name) < 0):
                bad(name, "None or a number of seconds >= 0")
        if self.pfc not in ("dynamic", "static", "off"):
            bad("pfc", "'dynamic', 'static' or 'off'")
        if not isinstance(self.ecn, bool):
            bad("ecn", "True or False")
        for name in ("clamp_target", "switch_ack_first"):
            if not isinstance(getattr(self, name), bool):
                bad(name, "True or False")
        if self.k_min > self.k_max:
            raise ValueError(f"RoCE parameters need k_min <= k_max, not k_min={self.k_min} > "
                             f"k_max={self.k_max}")
        if not 0 < self.p_max <= 1:
            bad("p_max", "in (0, 1]")
        if self.g >= 1:
            bad("g", "in (0, 1)")
        if self.pfc_alpha > 1:
            bad("pfc_alpha", "in (0, 1]")
        if self.rate_on_first_cnp > 1:
            bad("rate_on_first_cnp", "in (0, 1]")
        if self.min_rate > self.link_bps:
            bad("min_rate", f"at most link_bps ({self.link_bps})")
        if self.pfc == "static" and self.pfc_xon >= self.pfc_xoff:
            raise ValueError(f"RoCE parameters need pfc_xon < pfc_xoff, not pfc_xon="
                             f"{self.pfc_xon} >= pfc_xoff={self.pfc_xoff}")
        if self.buffer_bytes < self.packet_bytes:
            raise ValueError(f"RoCE parameter 'buffer_bytes' ({self.buffer_bytes}) is smaller "
                             f"than one packet ({self.packet_bytes} bytes)")

    @property
    def packet_bytes(self) -> int:
        return int(self.mtu) + int(self.header_bytes)

    @property
    def delay(self) -> float:
        return self.rtt_s / 4 if self.delay_s is None else float(self.delay_s)

    @property
    def cnp_delay(self) -> float:
        return 2 * self.delay if self.cnp_delay_s is None else float(self.cnp_delay_s)

    def replace(self, **kw) -> "RoCE":
        return replace(self, **kw)


def hpcc_dcqcn(link_bps: float = 800e9, **kw) -> RoCE:
    """HPCC ns-3 ``run.py --cc dcqcn`` at ``link_bps``: its formulas scale K_min (100 KB),
    K_max (400 KB), R_AI (5 Mb/s), R_HAI (50 Mb/s) and the buffer (16 MB at 50 Gb/s) with
    the rate from 25 Gb/s; P_max 0.2, g 1/256, MIN_RATE 1 Gb/s, FAST_RECOVERY_TIMES 1,
    CLAMP_TARGET_RATE 0, dynamic PFC, timers alpha/decrease/increase 1/4/300 us."""
    bw = link_bps / 1e9
    base = dict(link_bps=float(link_bps), k_min=100e3 * bw / 25, k_max=400e3 * bw / 25,
                p_max=0.2, r_ai=5e6 * bw / 25, r_hai=50e6 * bw / 25,
                buffer_bytes=float(int(16 * bw / 50) * 2**20), g=1 / 256, min_rate=1e9,
                alpha_timer_s=1e-6, decrease_timer_s=4e-6, increase_timer_s=300e-6)
    base.update(kw)
    return RoCE(**base)


def hpcc_dcqcn_paper(link_bps: float = 800e9, **kw) -> RoCE:
    """HPCC ns-3 ``run.py --cc dcqcn_paper``: as :func:`hpcc_dcqcn` with Zhu et al.'s timers,
    alpha/decrease/increase 50/50/55 us."""
    base = dict(alpha_timer_s=50e-6, decrease_timer_s=50e-6, increase_timer_s=55e-6)
    base.update(kw)
    return hpcc_dcqcn(link_bps, **base)


# Zhu et al.'s own ns-3 (bobzhuyb/ns3-rdma, mix/config.txt, 40 Gb/s): BYTE_COUNTER 300000,
# FAST_RECOVERY_TIMES 5
ZHU_BYTE_COUNTER = 300_000.0
ZHU_FAST_RECOVERY = 5
ZHU_LINK_BPS = 40e9


def zhu_reaction_point(link_bps: float = 800e9, *, scale: bool = True, **kw) -> RoCE:
    """HPCC's ``dcqcn_paper`` (Zhu et al.'s timers) with the reaction point of Zhu et al.'s
    own ns-3 (bobzhuyb/ns3-rdma ``mix/config.txt``): the byte counter B = 300,000 bytes and
    F = 5 fast-recovery steps, set there for 40 Gb/s links. ``scale``: B x link / 40 Gb/s
    (6 MB at 800 Gb/s: the same time at line rate, as HPCC's ``run.py`` scales its
    thresholds with the bandwidth); else B as printed."""
    bc = ZHU_BYTE_COUNTER * (link_bps / ZHU_LINK_BPS if scale else 1.0)
    base = dict(byte_counter_bytes=bc, fast_recovery=ZHU_FAST_RECOVERY)
    base.update(kw)
    return hpcc_dcqcn_paper(link_bps, **base)


PRESETS = {"dcqcn": hpcc_dcqcn, "dcqcn_paper": hpcc_dcqcn_paper}


@dataclass
class RoceResult:
    """``completion_s``: when the last byte of the all-to-all is received; ``finish_s``: per
    flow (in :attr:`flows` order, ``(src, dst)``); counts of ``packets``, ``events``,
    ECN ``marks``, ``cnps`` and PFC ``pauses`` (pause frames sent); ``peak_buffer``: the most
    bytes the switch held; ``delivered``: payload bytes received per flow; ``log``: the
    first events as ``(time, kind, argument)`` when asked for."""

    completion_s: float
    finish_s: np.ndarray
    flows: list
    packets: int
    events: int
    marks: int
    cnps: int
    pauses: int
    peak_buffer: float
    delivered: np.ndarray
    log: list | None = None
    trace: list | None = None


class Stalled(RuntimeError):
    """The run did not deliver every byte (within ``max_time_s`` of simulated time)."""


def _stalled(limit: float):
    raise Stalled(f"the RoCE simulation did not deliver every byte within {limit} s of "
                  f"simulated time")


def _check_demand(demand) -> np.ndarray:
    try:
        d = np.asarray(demand, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("'demand' must be a square matrix of byte counts") from None
    if d.ndim != 2 or d.shape[0] != d.shape[1] or d.shape[0] < 2:
        raise ValueError(f"'demand' must be a square n x n matrix (n >= 2), not shape "
                         f"{d.shape}")
    if not np.all(np.isfinite(d)) or (d < 0).any():
        raise ValueError("'demand' entries must be finite byte counts >= 0")
    if (d != np.round(d)).any():
        raise ValueError("'demand' entries must be whole bytes")
    return d


def _setup(demand, cfg, seed, inject):
    d = _check_demand(demand)
    if cfg is None:
        cfg = RoCE()
    if not isinstance(cfg, RoCE):
        raise TypeError(f"'cfg' must be a RoCE, not {type(cfg).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"'seed' must be an int, not {seed!r}")
    src, dst = np.nonzero(d)
    size = d[src, dst].astype(np.int64)
    mtu = int(cfg.mtu)
    npk = -(-size // mtu)
    total = int(npk.sum())
    uniform = np.random.default_rng(int(seed)).random(max(total, 1))
    inj = sorted((float(t), int(f)) for t, f in (inject or []))
    for t, f in inj:
        if not 0 <= f < len(size) or t < 0:
            raise ValueError(f"'inject_cnp': ({t}, {f}) needs a time >= 0 and a flow index "
                             f"in 0..{len(size) - 1}")
    return d, cfg, src.astype(np.int64), dst.astype(np.int64), size, total, uniform, inj


# --------------------------------------------------------------- plain Python reference --

def simulate_reference(demand, cfg: RoCE | None = None, *, seed: int = 0,
                       inject_cnp=None, log: int = 0, trace_flow: int | None = None,
                       max_time_s: float = 10.0) -> RoceResult:
    """The simulator's rules in plain Python. ``inject_cnp``: ``(time, flow)`` CNPs delivered
    to a sender as if a marked packet had produced them (for tests of the reaction point);
    ``log``: keep the first ``log`` events; ``trace_flow``: record ``(time, event, R_C, R_T,
    alpha)`` of that flow after each of its rate and alpha updates (rates in bit/s)."""
    d, cfg, src, dst, size, total, uniform, inj = _setup(demand, cfg, seed, inject_cnp)
    n = d.shape[0]
    m = len(size)
    C = cfg.link_bps / 8.0
    mtu, hdr = int(cfg.mtu), int(cfg.header_bytes)
    dly, cnp_dly = cfg.delay, cfg.cnp_delay
    pfc_mode = {"off": 0, "static": 1, "dynamic": 2}[cfg.pfc]
    line = C
    r_ai, r_hai, min_rate = cfg.r_ai / 8.0, cfg.r_hai / 8.0, cfg.min_rate / 8.0
    g = cfg.g
    host_flows = [[f for f in range(m) if src[f] == h] for h in range(n)]
    left = [int(s) for s in size]
    delivered = [0] * m
    finish = [0.0] * m
    rate = [line] * m
    target = [line] * m
    alpha = [1.0] * m
    alpha_flag = [False] * m
    dec_flag = [False] * m
    first = [True] * m
    stage = [0] * m
    bc = float(cfg.byte_counter_bytes)
    bc_stage = [0] * m
    bc_bytes = [0.0] * m
    inc_due = [0.0] * m
    inc_pending = [False] * m
    next_avail = [0.0] * m
    np_last = [-np.inf] * m
    rr = [-1] * n
    nic_busy = [False] * n
    host_paused = [False] * n
    wake_at = [np.inf] * n
    wake_gen = [0] * n
    sw_paused = [False] * n
    ingress = [0.0] * n
    held = 0.0
    peak = 0.0
    egress_q = [deque() for _ in range(n)]
    egress_bytes = [0.0] * n
    egress_busy = [False] * n
    ack = int(cfg.ack_bytes)
    ack_q = [deque() for _ in range(n)]
    hp_q = [deque() for _ in range(n)]
    events: list = []
    seq = 0
    k_draw = 0
    stats = {"events": 0, "marks": 0, "cnps": 0, "pauses": 0}
    out_log: list = [] if log else None
    trace: list | None = [] if trace_flow is not None else None

    def push(t, kind, a, b=0):
        nonlocal seq
        heapq.heappush(events, (t, seq, kind, a, b))
        seq += 1

    def note(t, what, f):
        if trace is not None and f == trace_flow:
            trace.append((t, what, 8 * rate[f], 8 * target[f], alpha[f]))

    def increase(t, f, timer_count, byte_count):
        """One rate increase (see the module docstring): the stage from the counts."""
        F = cfg.fast_recovery
        if bc > 0:
            if max(timer_count, byte_count) <= F:
                what = "fast_recovery"
            elif min(timer_count, byte_count) > F:
                what = "hyper"
            else:
                what = "additive"
        else:
            what = ("fast_recovery" if timer_count < F else
                    "additive" if timer_count == F else "hyper")
        if what != "fast_recovery":
            target[f] = min(line, target[f] + (r_ai if what == "additive" else r_hai))
        rate[f] = rate[f] / 2 + target[f] / 2
        note(t, what, f)

    def try_send(t, h):
        if nic_busy[h]:
            return
        if ack_q[h]:                        # ACKs first, never paused (ns-3 queue 0)
            f, flag = ack_q[h].popleft()
            nic_busy[h] = True
            done = t + ack / C
            push(done, TX_DONE, h)
            push(done + dly, SW_ACK, f, flag)
            return
        if host_paused[h]:
            return
        fl = host_flows[h]
        k = len(fl)
        pick = -1
        soonest = np.inf
        for step in range(1, k + 1):
            i = (rr[h] + step) % k
            f = fl[i]
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
                push(soonest, WAKE, h, wake_gen[h])
            return
        rr[h] = pick
        f = fl[pick]
        payload = min(mtu, left[f])
        left[f] -= payload
        s = payload + hdr
        next_avail[f] = t + s / rate[f]
        if bc > 0 and not first[f] and left[f] > 0:
            bc_bytes[f] += s
            if bc_bytes[f] >= bc:
                bc_bytes[f] -= bc
                bc_stage[f] += 1
                increase(t, f, stage[f], bc_stage[f])
        nic_busy[h] = True
        done = t + s / C
        push(done, TX_DONE, h)
        push(done + dly, SW_ARRIVE, f, payload)

    def start_egress(t, port):
        nonlocal held, k_draw
        if hp_q[port]:                      # ACKs first, outside the PFC accounting
            f, flag = hp_q[port].popleft()
            egress_busy[port] = True
            done = t + ack / C
            push(done, SW_TX_DONE, port)
            if flag:
                push(done + dly, CNP, f)
            return
        f, payload = egress_q[port].popleft()
        is_ack = payload < 0
        s = ack if is_ack else payload + hdr
        h = int(dst[f]) if is_ack else int(src[f])
        egress_bytes[port] -= s
        ingress[h] -= s
        held -= s
        mark = False
        if cfg.ecn and not is_ack:
            q = egress_bytes[port]
            u = uniform[k_draw]
            k_draw += 1
            if q > cfg.k_max:
                mark = True
            elif q > cfg.k_min:
                mark = u < cfg.p_max * (q - cfg.k_min) / (cfg.k_max - cfg.k_min)
        if pfc_mode and sw_paused[h]:
            if pfc_mode == 1:
                resume = ingress[h] <= cfg.pfc_xon
            else:
                thr = cfg.pfc_alpha * (cfg.buffer_bytes - held)
                resume = ingress[h] <= 0 or ingress[h] + cfg.pfc_resume_offset <= thr
            if resume:
                sw_paused[h] = False
                push(t + dly, PFC_FRAME, h, 0)
        egress_busy[port] = True
        done = t + s / C
        push(done, SW_TX_DONE, port)
        if is_ack:
            if payload == -2:               # its CNP flag
                push(done + dly, CNP, f)
            return
        arrive = done + dly
        delivered[f] += payload
        if delivered[f] == size[f]:
            finish[f] = arrive
        flag = 0
        if mark:
            stats["marks"] += 1
            if arrive - np_last[f] >= cfg.cnp_interval_s:
                np_last[f] = arrive
                stats["cnps"] += 1
                flag = 1
                if not ack:
                    push(arrive + cnp_dly, CNP, f)
        if ack:                             # the receiver returns an ACK (CNP flag if set)
            push(arrive, ACK_GEN, f, flag)

    for t, f in inj:
        push(t, CNP, f)
    for h in range(n):
        if host_flows[h]:
            try_send(0.0, h)
    while events:
        t, _, kind, a, b = heapq.heappop(events)
        if t > max_time_s:
            _stalled(max_time_s)
        stats["events"] += 1
        if out_log is not None and len(out_log) < log:
            out_log.append((t, kind, a))
        if kind == TX_DONE:
            nic_busy[a] = False
            try_send(t, a)
        elif kind == WAKE:
            if b == wake_gen[a]:
                wake_at[a] = np.inf
                try_send(t, a)
        elif kind == SW_ARRIVE or (kind == SW_ACK and not cfg.switch_ack_first):
            f = a
            if kind == SW_ARRIVE:
                payload, s, h, port = b, b + hdr, int(src[f]), int(dst[f])
            else:                           # an ACK in the data FIFO: -1 - its CNP flag
                payload, s, h, port = -1 - b, ack, int(dst[f]), int(src[f])
            ingress[h] += s
            held += s
            if held > peak:
                peak = held
            egress_q[port].append((f, payload))
            egress_bytes[port] += s
            if pfc_mode and not sw_paused[h]:
                if pfc_mode == 1:
                    pause = ingress[h] >= cfg.pfc_xoff
                else:
                    pause = ingress[h] >= cfg.pfc_alpha * (cfg.buffer_bytes - held)
                if pause:
                    sw_paused[h] = True
                    stats["pauses"] += 1
                    push(t + dly, PFC_FRAME, h, 1)
            if not egress_busy[port]:
                start_egress(t, port)
        elif kind == SW_TX_DONE:
            egress_busy[a] = False
            if egress_q[a] or hp_q[a]:
                start_egress(t, a)
        elif kind == ACK_GEN:
            h = int(dst[a])
            ack_q[h].append((a, b))
            try_send(t, h)
        elif kind == SW_ACK:
            port = int(src[a])
            hp_q[port].append((a, b))
            if not egress_busy[port]:
                start_egress(t, port)
        elif kind == PFC_FRAME:
            host_paused[a] = b == 1
            if b == 0:
                try_send(t, a)
        elif kind == CNP:
            f = a
            if left[f] > 0:
                alpha_flag[f] = True
                dec_flag[f] = True
                if first[f]:
                    alpha[f] = 1.0
                    alpha_flag[f] = False
                    push(t + cfg.alpha_timer_s, ALPHA, f)
                    push(t + cfg.decrease_timer_s + 1e-9, DECREASE, f)
                    rate[f] = cfg.rate_on_first_cnp * rate[f]
                    target[f] = rate[f]
                    first[f] = False
                    note(t, "first_cnp", f)
        elif kind == ALPHA:
            f = a
            if left[f] > 0:
                alpha[f] = (1 - g) * alpha[f] + g if alpha_flag[f] else (1 - g) * alpha[f]
                alpha_flag[f] = False
                push(t + cfg.alpha_timer_s, ALPHA, f)
                note(t, "alpha", f)
        elif kind == DECREASE:
            f = a
            if left[f] > 0:
                push(t + cfg.decrease_timer_s, DECREASE, f)
                if dec_flag[f]:
                    if cfg.clamp_target or stage[f] != 0:
                        target[f] = rate[f]
                    rate[f] = max(min_rate, rate[f] * (1 - alpha[f] / 2))
                    stage[f] = 0
                    bc_stage[f] = 0
                    bc_bytes[f] = 0.0
                    dec_flag[f] = False
                    inc_due[f] = t + cfg.increase_timer_s    # the increase timer restarts
                    if not inc_pending[f]:
                        inc_pending[f] = True
                        push(inc_due[f], INCREASE, f)
                    note(t, "decrease", f)
        elif kind == INCREASE:
            f = a
            inc_pending[f] = False
            if left[f] > 0 and t < inc_due[f]:       # restarted since: wait for the new time
                inc_pending[f] = True
                push(inc_due[f], INCREASE, f)
            elif left[f] > 0:
                inc_due[f] = t + cfg.increase_timer_s
                inc_pending[f] = True
                push(inc_due[f], INCREASE, f)
                if bc > 0:
                    stage[f] += 1
                    increase(t, f, stage[f], bc_stage[f])
                else:
                    increase(t, f, stage[f], 0)
                    stage[f] += 1
    if any(delivered[f] < size[f] for f in range(m)):
        _stalled(max_time_s)
    return RoceResult(completion_s=max(finish) if m else 0.0, finish_s=np.array(finish),
                      flows=list(zip(src.tolist(), dst.tolist())), packets=total,
                      events=stats["events"], marks=stats["marks"], cnps=stats["cnps"],
                      pauses=stats["pauses"], peak_buffer=peak,
                      delivered=np.array(delivered, dtype=np.int64), log=out_log, trace=trace)


# ------------------------------------------------------------------- compiled engine -----

def _vector(cfg: RoCE) -> np.ndarray:
    return np.array([cfg.link_bps / 8.0, float(cfg.mtu), float(cfg.header_bytes), cfg.delay,
                     cfg.cnp_delay, {"off": 0, "static": 1, "dynamic": 2}[cfg.pfc],
                     cfg.pfc_alpha, cfg.buffer_bytes, cfg.pfc_resume_offset, cfg.pfc_xoff,
                     cfg.pfc_xon, float(cfg.ecn), cfg.k_min, cfg.k_max, cfg.p_max,
                     cfg.cnp_interval_s, cfg.g, cfg.alpha_timer_s, cfg.decrease_timer_s,
                     cfg.increase_timer_s, float(cfg.fast_recovery), cfg.r_ai / 8.0,
                     cfg.r_hai / 8.0, cfg.min_rate / 8.0, cfg.rate_on_first_cnp,
                     float(cfg.clamp_target), float(cfg.ack_bytes),
                     float(cfg.byte_counter_bytes), float(cfg.switch_ack_first)])


TRACE_KINDS = ("first_cnp", "alpha", "decrease", "fast_recovery", "additive", "hyper")


def simulate(demand, cfg: RoCE | None = None, *, seed: int = 0, inject_cnp=None,
             log: int = 0, trace_flow: int | None = None,
             max_time_s: float = 10.0) -> RoceResult:
    """The simulator (see the module docstring), compiled with numba: the same events and
    results as :func:`simulate_reference` (same arguments)."""
    from ._roce_engine import run
    return _simulate_with(run, demand, cfg, seed, inject_cnp, log, trace_flow, max_time_s)


def _simulate_with(run, demand, cfg, seed, inject_cnp, log, trace_flow, max_time_s):
    """:func:`simulate` on the engine function ``run`` (``make bench`` also times an earlier
    revision's engine through it)."""
    d, cfg, src, dst, size, total, uniform, inj = _setup(demand, cfg, seed, inject_cnp)
    inj_t = np.array([t for t, _ in inj], dtype=np.float64)
    inj_f = np.array([f for _, f in inj], dtype=np.int64)
    finish, delivered, counts, peak, lt, lk, la, tr_t, tr_v = run(
        d.shape[0], src, dst, size, _vector(cfg), uniform, inj_t, inj_f, int(log),
        -1 if trace_flow is None else int(trace_flow), float(max_time_s))
    if counts[4] or (delivered < size).any():
        _stalled(max_time_s)
    nlog = min(int(log), int(counts[0]))
    trace = None if trace_flow is None else [
        (float(tr_t[i]), TRACE_KINDS[int(tr_v[i, 0])], 8 * float(tr_v[i, 1]),
         8 * float(tr_v[i, 2]), float(tr_v[i, 3])) for i in range(len(tr_t))]
    return RoceResult(completion_s=float(finish.max()) if len(size) else 0.0,
                      finish_s=finish, flows=list(zip(src.tolist(), dst.tolist())),
                      packets=total, events=int(counts[0]), marks=int(counts[1]),
                      cnps=int(counts[2]), pauses=int(counts[3]), peak_buffer=float(peak),
                      delivered=delivered,
                      log=[(float(lt[i]), int(lk[i]), int(la[i])) for i in range(nlog)]
                      if log else None, trace=trace)


def describe(cfg: RoCE) -> dict:
    """The parameters as a plain dict (for reports)."""
    return {f.name: getattr(cfg, f.name) for f in fields(cfg)}

