"""The simulator's API: :class:`Simulator` (state + the compiled kernel), measurement per
RailX Table 5 (warm-up, measurement window, drain of the measured packets) and
:class:`Result`.

    >>> net = mesh(8)
    >>> res = simulate(net, "uniform", rate=0.2, seed=1)     # doctest: +SKIP
    >>> res.accepted, res.latency_mean                        # doctest: +SKIP
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import time
from dataclasses import asdict, dataclass

import numba
import numpy as np

from . import kernel as K
from . import registry
from .network import Network, NetworkError, check_deadlock_free
from .traffic import MODE_TRACE, Traffic, gap, uniform

__all__ = ["Simulator", "simulate", "Result", "DeadlockError", "InvariantError",
           "HIST_BINS"]

HIST_BINS = 1 << 17
MAX_BUFFER = 4096     # flits per VC buffer (and per packet): VC counters are 16-bit
# a network of this many chips runs on a kernel compiled for its shape and router
# (kernel.kernel_for; the first time a shape is seen on a machine it is compiled, later
# processes load it from numba's cache), a smaller one on the generic kernel
SHAPED_MIN_ROUTERS = 128
# the environment's word on that rule: "0" every network on the generic kernel unless its
# Simulator asks for a shaped one (short runs of many shapes, where each shape's first
# compile outweighs the gain: make test sets it), "1" every network shaped
SHAPED_ENV = "AIFABRIC_NETSIM_SHAPED"


def shaped_by_default(net: Network) -> bool:
    """A :class:`Simulator` of this network runs on a shaped kernel unless told otherwise:
    :data:`SHAPED_ENV` if set, else a network of :data:`SHAPED_MIN_ROUTERS` chips or more."""
    env = os.environ.get(SHAPED_ENV)
    if env is None:
        return net.routers >= SHAPED_MIN_ROUTERS
    if env not in ("0", "1"):
        raise NetworkError(f"{SHAPED_ENV} must be 0 or 1, not {env!r}")
    return env == "1"


class InvariantError(RuntimeError):
    """A simulator invariant failed (credits, contiguity, conservation)."""


class DeadlockError(RuntimeError):
    """No flit moved for ``watchdog`` cycles while flits were in the network."""


@dataclass
class Result:
    """One simulated point. Throughputs in flits/cycle/chip, latencies in cycles."""

    network: str
    traffic: str
    rate: float
    offered: float
    accepted: float
    latency_mean: float
    latency_p50: float
    latency_p99: float
    latency_max: int
    measured_packets: int
    delivered_packets: int
    saturated: bool
    cycles: int
    seconds: float
    router_cycles_per_s: float
    seed: int
    cpu_seconds: float = 0.0
    router_cycles_per_cpu_s: float = 0.0

    # ``seconds``/``router_cycles_per_s``: wall time of the measurement; ``cpu_seconds``/
    # ``router_cycles_per_cpu_s``: the process's CPU time (time.process_time), the figure that
    # does not depend on what else the machine runs. Router-cycles count every router every
    # cycle, idle routers the kernel skips included.

    def as_dict(self) -> dict:
        return asdict(self)


def _percentile(hist: np.ndarray, frac: float) -> float:
    total = hist.sum()
    if total == 0:
        return math.nan
    return float(np.searchsorted(np.cumsum(hist), math.ceil(frac * total)))


@numba.njit(cache=True)
def _count_queued(nxt, sj, seed, q, w0, w1):
    """Packets not yet injected whose creation time falls in [w0, w1)."""
    total = 0
    for r in range(nxt.shape[0]):
        for s in range(nxt.shape[1]):
            tc, j = nxt[r, s], sj[r, s]
            while tc < w1:
                if tc >= w0:
                    total += 1
                j += 1
                tc += gap(uniform(seed, r, s, j), q)
    return total


def _vc_records(R: int, P: int, V: int) -> np.ndarray:
    """Zeroed per-VC records, each on a 64-byte line of its own."""
    line = 64 // np.dtype(np.int32).itemsize
    assert K.V_FIELDS == line
    raw = np.zeros(R * P * V * line + line, np.int32)
    skip = (-raw.ctypes.data % 64) // raw.itemsize
    return raw[skip:skip + R * P * V * line].reshape(R, P, V, line)


@functools.lru_cache(maxsize=None)
def _kernel_params(run) -> tuple[str, ...]:
    """The names of the kernel's parameters after (t0, t1)."""
    return tuple(inspect.signature(run.py_func).parameters)[2:]


VC_MAX = 127      # the largest VC count per port the state's int8 VC numbers hold
LANES_MAX = 127   # the widest port: a VC returns up to its port's lanes of credits a cycle (int8)


def vc_layout(net: Network, links: str, source: str) -> tuple[int, int, int]:
    """(Vb, VI, V): the routing's VCs per link, the local VCs a source writes into, and the
    VCs the state holds per port. ``perlink`` links: VC l * Vb + c is class c of link l, so a
    port holds links x Vb; an ``open`` source: as many local VCs as a chip has output
    links (the most of any chip), so every link can start a packet of its own in one cycle;
    a ``fifo`` source the Vb VCs of the local port."""
    Vb = net.vcs
    nl = net.link_counts() * (net.nbr >= 0)
    nl[:, 0] = 0
    V = Vb * int(nl.max(initial=1)) if links == "perlink" else Vb
    VI = max(int(nl.sum(axis=1).max(initial=1)), 1) if source == "open" else Vb
    return Vb, VI, max(V, VI)


def initial_credits(net: Network, V: int, Vb: int, buffer: int, links: str) -> np.ndarray:
    """Credits of every output VC at the start: ``buffer`` for each VC the port's links have
    downstream (Vb, or links x Vb per-link), 0 for the local port and VCs that do not
    exist (so they are never allocated)."""
    have = np.full(net.nbr.shape, Vb)
    if links == "perlink":
        have = have * net.link_counts()
    have[net.nbr < 0] = 0
    have[:, 0] = 0
    return np.where(np.arange(V)[None, None, :] < have[:, :, None], buffer, 0)


def route_table(net: Network) -> tuple[np.ndarray, np.ndarray]:
    """The routing tables as the kernel reads them: ``vrow[v]`` names the distinct table row
    of input VC v (VCs of one class share a row), and ``rt[router, row, dst]`` holds (port,
    lowest VC, highest VC, 0) side by side, so a route costs one memory access, not three."""
    V = net.vcs
    vrow = np.zeros(V, np.int16)
    rows: list[int] = []
    for v in range(V):
        for u, w in enumerate(rows):
            if all(np.array_equal(a[:, v], a[:, w]) for a in
                   (net.route_port, net.route_vc_lo, net.route_vc_hi)):
                vrow[v] = u
                break
        else:
            vrow[v] = len(rows)
            rows.append(v)
    rt = np.zeros((net.routers, len(rows), net.routers, 4), np.int8)
    for u, w in enumerate(rows):
        rt[:, u, :, 0] = net.route_port[:, w]
        rt[:, u, :, 1] = net.route_vc_lo[:, w]
        rt[:, u, :, 2] = net.route_vc_hi[:, w]
    return vrow, rt


class Simulator:
    """A network, its state, and the traffic that drives it.

    ``buffer`` B flits per VC (Table 5: 16), ``length`` flits per packet (Table 5: 4),
    ``rate`` flits/cycle/chip in (0, injection width]. ``check`` turns on the invariant
    checks (every ``check_every`` cycles for conservation); ``watchdog`` cycles without a
    moving flit stop the run. ``force`` simulates a routing whose channel dependency graph
    has a cycle (refused otherwise). ``log`` > 0 records up to that many events
    (injections and switch traversals) for :meth:`events`. ``router``, ``allocator`` and
    ``links``: names registered with :mod:`.registry` (None: the registered default;
    ``registry.choices(kind)`` lists them): the router ("pipelined", the RTL's; "vct", the
    ideal virtual cut-through router), the switch allocator ("separable": round robin, input
    first; "wavefront": the wrapped wave-front arbiter over input x output ports, priority
    diagonal advancing by one per arbitration, each input's VC by round robin) and the link
    model ("shared", "parallel" or "perlink", see :mod:`models.common.netsim`); ``source``:
    "fifo" or "open". The allocator "age" gives every VC and switch allocation to the oldest
    packet. The state holds :func:`vc_layout`'s V VCs per port (more than the routing's with
    per-link VCs or an open source). ``shaped``: run on a kernel compiled for this state's
    shape and router (:func:`kernel.kernel_for`; the same events, faster; a shape new to the
    machine is compiled first), else on the generic one; None: shaped for networks of at
    least ``SHAPED_MIN_ROUTERS`` chips.
    """

    def __init__(self, net: Network, traffic: Traffic, *, rate: float = 0.0, buffer: int = 16,
                 length: int = 4, seed: int = 1, check: bool = False, check_every: int = 1,
                 watchdog: int = 2000, force: bool = False, log: int = 0,
                 allocator: str | None = None, router: str | None = None,
                 links: str | None = None, source: str | None = None,
                 shaped: bool | None = None) -> None:
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or \
                not 0 <= seed < 2 ** 62:
            raise NetworkError(f"seed must be an integer in 0..2^62 - 1, not {seed!r}")
        self.net, self.traffic, self.seed = net, traffic, int(seed)
        self.measured, self._compiled = False, False
        if net.routers < 2:
            raise NetworkError(f"{net.name}: {net.routers} chip; a packet needs a chip to go "
                               f"to (at least 2)")
        W = net.inject_width
        for name, v, low, high in (("buffer", buffer, 1, MAX_BUFFER),
                                   ("length", length, 1, MAX_BUFFER),
                                   ("watchdog", watchdog, 10, None),
                                   ("check_every", check_every, 1, None)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < low or \
                    (high is not None and v > high):
                rng = f"in {low}..{high}" if high else f">= {low}"
                raise NetworkError(f"{name} must be an integer {rng}, not {v!r}")
        alloc, rtr, lnk, src = (registry.choice(kind, name) for kind, name in
                                (("allocator", allocator), ("router", router),
                                 ("links", links), ("source", source)))
        registry.check_router(rtr, alloc.name, lnk.name, int(net.width.max()))
        self.allocator, self.router, self.links, self.source = \
            alloc.name, rtr.name, lnk.name, src.name
        nlinks = net.link_counts()
        Vb, VI, V = vc_layout(net, lnk.name, src.name)
        if Vb < net.vcs_needed:
            raise NetworkError(f"{net.name}: {net.routing} routing needs {net.vcs_needed} "
                               f"VCs, not {Vb}")
        longest = length if traffic.mode != MODE_TRACE else \
            int(traffic.trace[:, 3].max(initial=1))
        if buffer < longest:
            raise NetworkError(f"virtual cut-through needs a VC buffer of at least one packet: "
                               f"buffer {buffer} < {longest} flits")
        if traffic.n != net.routers:
            raise NetworkError(f"traffic is for {traffic.n} chips, the network has "
                               f"{net.routers}")
        if traffic.mode != MODE_TRACE:
            if not isinstance(rate, (int, float)) or not 0 < rate <= W:
                raise NetworkError(f"rate must be in (0, {W}] flits/cycle/chip (the injection "
                                   f"width), not {rate!r}")
        if not force:
            checked = net.__dict__.setdefault("_cdg_cycle", {})
            if Vb not in checked:
                checked[Vb] = check_deadlock_free(net, Vb)
            cycle = checked[Vb]
            if cycle is not None:
                hops = " -> ".join(f"router {r} port {p} VC {v}" for r, p, v in cycle[:6])
                hint = f"{net.deadlock_hint}; " if net.deadlock_hint else ""
                raise NetworkError(f"{net.name}: the routing can deadlock ({hint}channel "
                                   f"dependency cycle {hops}{' ...' if len(cycle) > 6 else ''})"
                                   f"; pass force to simulate it anyway")
        self.rate, self.length, self.buffer = float(rate), int(length), int(buffer)
        self.t = 0
        self.q = self.rate / (W * length) if traffic.mode != MODE_TRACE else 0.0
        R, P = net.nbr.shape
        D1 = int(net.delay.max()) + 1
        cap = R * P * V * buffer + R
        st = {
            # buffered flits, 16 bytes each: packet slot; sequence number within the packet
            # + 1 << 15 on the tail flit + packet length << 16; cycle it is ready at the
            # router; destination chip (so a head routes without touching the packet pool)
            "buf": np.zeros((R, P, V, buffer, 4), np.int32),
            # per VC, one 64-byte line: its queue, allocation, head route and the output
            # VC of the same number (kernel.V_*; b_head, credits, ... below are views)
            "vc": _vc_records(R, P, V),
            "occ": np.zeros(R, np.int32),
            # the earliest cycle a router may act without credits arriving or its source
            # having a packet due (see the kernel's visit rule)
            "wake": np.zeros(R, np.int64),
            # credits on their way back, per VC by the cycle they arrive (mod D1; a packet's
            # credits share a memory line): at most a port's lanes per VC and cycle
            # (LANES_MAX)
            "cred_ring": np.zeros((R, P, V, D1), np.int8), "pend": np.zeros((R, D1), np.int32),
            # the (port, VC) bits of the cred_ring entries that hold credits
            "cmask": np.zeros((R, D1, (P * V + 63) // 64), np.uint64),
            "sa_in": np.zeros((R, P), np.int32),
            "sa_out": np.zeros((R, P), np.int32),
            # VCs holding a head without an output VC, one bit each (p * V + v)
            "vaw": np.zeros((R, (P * V + 63) // 64), np.uint64),
            "act": np.zeros((R, (P * V + 63) // 64), np.uint64),  # VCs with an output VC
            # the registered router: each input VC's VC request for the next cycle (output
            # port * V + output VC, plus 1; 0 none), and the grants of the last cycle it
            # was visited in (output port * V + output VC | tail << 20; how many; the cycle)
            # whose flits cross, taking their credit, in the cycle after
            "rq": np.zeros((R, P * V), np.int32),
            "dfl": np.zeros((R, P), np.int32), "dn": np.zeros(R, np.int32),
            "dcyc": np.zeros(R, np.int64),
            # the packet pool, one 32-byte record per packet (kernel.PK_*; pk_dst, ...
            # below are views)
            "pk": np.zeros((cap, K.PK_FIELDS), np.int64),
            "free": np.arange(cap, dtype=np.int32)[::-1].copy(),
        }
        vc = st["vc"]
        for name, field in (("b_head", K.V_HEAD), ("b_cnt", K.V_CNT),
                            ("front_ready", K.V_READY), ("in_vat", K.V_AT),
                            ("in_state", K.V_STATE), ("in_op", K.V_OP), ("in_ov", K.V_OV),
                            ("credits", K.V_CRED), ("out_busy", K.V_BUSY),
                            ("va_ptr", K.V_VAPTR), ("last_pkt", K.V_LPKT),
                            ("last_seq", K.V_LSEQ)):
            st[name] = vc[..., field]
        for name, field in (("pk_dst", K.PK_DST), ("pk_len", K.PK_LEN),
                            ("pk_create", K.PK_CREATE), ("pk_tag", K.PK_TAG)):
            st[name] = st["pk"][:, field]
        vc[..., K.V_RPORT] = -2                          # no head route read yet
        st["last_pkt"][...] = st["last_seq"][...] = -1
        st["credits"][...] = initial_credits(net, V, Vb, buffer, lnk.name)
        nxt = np.zeros((R, W), np.int64)
        for r in range(R):
            for s in range(W):
                nxt[r, s] = gap(uniform(self.seed, r, s, 0), self.q) - 1 \
                    if self.q > 0 and traffic.sends[r] else K.INF
        tr = traffic.trace if traffic.mode == MODE_TRACE else np.zeros((0, 4), np.int64)
        starts = np.searchsorted(tr[:, 1], np.arange(R + 1)) if len(tr) else \
            np.zeros(R + 1, np.int64)
        st.update(nxt=nxt, sj=np.zeros((R, W), np.int64), sk=np.zeros(R, np.int64),
                  srcn=np.zeros(R, np.int64), inj_vc=np.full(R, -1, np.int32),
                  inj_slot=np.zeros(R, np.int32), inj_done=np.zeros(R, np.int32),
                  inj_ptr=np.zeros(R, np.int32), tr=tr, tr_ptr=starts[:-1].astype(np.int64),
                  tr_end=starts[1:].astype(np.int64), perm=traffic.perm, hot=traffic.hot,
                  hist=np.zeros(HIST_BINS, np.int64),
                  ev=np.zeros((max(log, 1), 9), np.int64), util=np.zeros((R, P), np.int64), wf_prio=np.zeros(R, np.int64))
        with K.nonnegative_indices():          # compiled once, as run() calls it
            for r in range(R):
                st["srcn"][r] = K._source_head(r, traffic.mode, nxt, tr, st["tr_ptr"],
                                               st["tr_end"])[0]
        vrow, st["rt"] = route_table(net)
        st["vrow"] = vrow[np.arange(V) % Vb]          # VC l * Vb + c routes as class c
        # credits travel back over the link's delay ("link") or arrive the next cycle ("next")
        cdelay = net.delay if rtr.credit == "link" else np.where(net.nbr >= 0, 1, 0)
        # one 32-byte record per (router, port): the link's ends, delays, lanes and links
        ports = np.zeros((R, P, K.PT_FIELDS), np.int32)
        for field, a in ((K.PT_NBR, net.nbr), (K.PT_NPORT, net.nbr_port),
                         (K.PT_DELAY, net.delay), (K.PT_CDELAY, cdelay),
                         (K.PT_WIDTH, net.width), (K.PT_LINKS, nlinks)):
            ports[:, :, field] = a
        st["ports"] = ports
        used = net.nbr >= 0
        used[:, 0] = True                   # the local port: injection and ejection
        narrow = used & (net.width < 1)
        if narrow.any():
            r, p = (int(x[0]) for x in np.nonzero(narrow))
            raise NetworkError(f"{net.name}: router {r} port {p}: a port in use needs at least "
                               f"one lane, not {net.width[r, p]}")
        odd = np.nonzero(net.width[:, 0] != net.width[0, 0])[0]
        if odd.size:                        # the sources' streams are one per injection lane
            raise NetworkError(f"{net.name}: every chip injects at one width: router "
                               f"{int(odd[0])} has {net.width[odd[0], 0]} lanes, router 0 "
                               f"{net.width[0, 0]}")
        bad = (net.nbr >= 0) & (net.width % nlinks != 0)
        if lnk.code and bad.any():
            r, p = (int(x[0]) for x in np.nonzero(bad))
            raise NetworkError(f"{net.name}: router {r} port {p}: {net.width[r, p]} lanes do "
                               f"not split into {nlinks[r, p]} parallel links")
        if lnk.name == "perlink" and nlinks.max() > 30:
            raise NetworkError(f"{net.name}: per-link VCs take at most 30 links per port, not "
                               f"{nlinks.max()}")
        if V > VC_MAX:              # in_op / in_ov hold a VC number in int8
            raise NetworkError(f"{net.name}: {V} VCs per port ({Vb} per link x "
                               f"{nlinks.max()} links, or the open source's), at most "
                               f"{VC_MAX}")
        if net.width.max() > LANES_MAX:
            r, p = (int(x[0]) for x in np.nonzero(net.width > LANES_MAX))
            raise NetworkError(f"{net.name}: router {r} port {p} has {net.width[r, p]} lanes, "
                               f"at most {LANES_MAX}")
        st["link_busy"] = np.zeros((R, P), np.int32)
        st.update(K.scratch(R, P, V, net.width))
        self.state = st
        self.cfg = np.zeros(18, np.int64)
        self.cfg[K.C_CLS], self.cfg[K.C_VINJ], self.cfg[K.C_SOURCE] = Vb, VI, src.code
        self.cfg[K.C_ALLOC] = alloc.code
        self.cfg[K.C_BYPASS] = int(rtr.bypass)
        self.cfg[K.C_CROSS] = int(rtr.cross)
        self.cfg[K.C_LINKS] = lnk.code
        self.cfg[[K.C_VCS, K.C_BUF, K.C_LEN, K.C_MODE, K.C_SEED, K.C_CHECK, K.C_WATCHDOG,
                  K.C_EVERY, K.C_LOGCAP]] = [V, buffer, length, traffic.mode, self.seed,
                                             int(check), watchdog, check_every, log]
        self.cfg[K.C_W0], self.cfg[K.C_W1] = K.INF, K.INF
        self.fcfg = np.array([self.q, traffic.hot_frac], np.float64)
        self.ctr = np.zeros(17, np.int64)
        self.ctr[K.K_FREE] = cap
        if shaped is None:
            shaped = shaped_by_default(net)
        self.kernel = K.kernel_for(self.cfg, st) if shaped else K.run

    # -- running --------------------------------------------------------------------------
    def _args(self):
        """The kernel's arguments after (t0, t1), by the names of its parameters: the
        configuration and the state arrays of the same name (the network's tables are in
        ``ports``)."""
        s = self.state
        names = _kernel_params(K.run)
        have = {"cfg": self.cfg, "fcfg": self.fcfg, "ctr": self.ctr}
        return tuple(have[k] if k in have else s[k] for k in names)

    def load(self) -> None:
        """Compile the kernel, or load it from numba's on-disk cache, unless done already."""
        if not self._compiled:
            K.compile_run((self.t, self.t) + self._args(), self.kernel)
            self._compiled = True

    def advance(self, cycles: int) -> None:
        """Simulate ``cycles`` more cycles; raise on a failed invariant or a deadlock."""
        args = (self.t, self.t + cycles) + self._args()
        self.load()
        stop = self.kernel(*args)
        self.t = stop if self.ctr[K.K_STATUS] != K.OK else self.t + cycles
        self._raise()

    def _raise(self) -> None:
        status, c = int(self.ctr[K.K_STATUS]), self.ctr
        if status == K.OK:
            return
        at = f"cycle {self.t}"
        if status == K.DEADLOCK:
            raise DeadlockError(f"{self.net.name}: deadlock at {at}: no flit moved for "
                                f"{self.cfg[K.C_WATCHDOG]} cycles with "
                                f"{c[K.K_INJ] - c[K.K_EJ]} flits in the network; blocked: "
                                f"{self.blocked()}")
        if status == K.CREDIT:
            raise InvariantError(f"{at}: credit count {c[K.K_E3]} of router {c[K.K_E0]} "
                                 f"output {c[K.K_E1]} VC {c[K.K_E2]} outside 0..{self.buffer}"
                                 f" (or a flit sent into a full buffer)")
        if status == K.CONTIGUITY:
            raise InvariantError(f"{at}: router {c[K.K_E0]} input {c[K.K_E1]} VC {c[K.K_E2]} "
                                 f"received a flit of packet {c[K.K_E3]:#x} out of order "
                                 f"(interleaved with another packet or a flit lost)")
        if status == K.CONSERVATION:
            raise InvariantError(f"{at}: flits not conserved: injected {c[K.K_E0]} != ejected "
                                 f"{c[K.K_E1]} + buffered {c[K.K_E2]}")
        if status == K.CAPACITY:
            raise InvariantError(f"{at}: more packets in flight than buffer slots")
        if status == K.LOGFULL:
            raise InvariantError(f"{at}: the event log is full ({self.cfg[K.C_LOGCAP]})")

    def blocked(self, limit: int = 6) -> str:
        """The input VCs holding flits, with the output VC each waits for (deadlock report)."""
        s, out = self.state, []
        for r, p, v in zip(*np.nonzero(s["b_cnt"])):
            if s["in_state"][r, p, v]:
                op, ov = int(s["in_op"][r, p, v]), int(s["in_ov"][r, p, v])
                want = f"output {op} VC {ov} (credits {s['credits'][r, op, ov]})"
            else:
                sid = s["buf"][r, p, v, s["b_head"][r, p, v], 0]
                want = f"a VC towards chip {s['pk_dst'][sid]}"
            out.append(f"router {r} input {p} VC {v} waits for {want}")
        more = f" and {len(out) - limit} more" if len(out) > limit else ""
        return "; ".join(out[:limit]) + more

    def events(self) -> np.ndarray:
        """Logged events, rows (cycle, kind 0 inject / 1 switch, router, in port, in VC, out
        port, out VC, packet tag = src << 32 | k, flit), sorted."""
        ev = self.state["ev"][:self.ctr[K.K_LOG]]
        return ev[np.lexsort(ev.T[::-1])]

    # -- measurement ----------------------------------------------------------------------
    def measure(self, warmup: int = 5000, window: int = 10000, drain: int = 20000,
                progress=None) -> Result:
        """RailX Table 5: ``warmup`` cycles, a ``window`` of measured cycles (throughput:
        flits ejected in it; latency: packets created in it), then up to ``drain`` more
        cycles until every measured packet is delivered (else ``saturated``)."""
        if self.measured:
            raise NetworkError("measure() runs once per Simulator: its counters describe one "
                               "window (build a new Simulator for the next point)")
        self.measured = True
        self.load()                           # not timed: start-up, not simulation
        start, cpu_start = time.perf_counter(), time.process_time()
        w0, w1 = self.t + warmup, self.t + warmup + window
        self.cfg[K.C_W0], self.cfg[K.C_W1] = w0, w1
        t_begin = self.t
        for stop in range(t_begin, w1, 1000):
            self.advance(min(1000, w1 - self.t))
            if progress:
                progress(self.t - t_begin)
        st, c = self.state, self.ctr
        if self.traffic.mode == MODE_TRACE:
            in_window = (st["tr"][:, 0] >= w0) & (st["tr"][:, 0] < w1)
            created = int(in_window.sum())
            created_flits = int(st["tr"][in_window, 3].sum())
        else:
            created = int(c[K.K_MEAS_INJ]) + _count_queued(st["nxt"], st["sj"], self.seed,
                                                            self.q, w0, w1)
            created_flits = created * self.length
        drained = 0
        if int(c[K.K_WIN_EJ]) < 0.9 * created_flits:
            drain = 0          # unstable: the source queues grow, the drain would not end
        while c[K.K_MEAS_DONE] < created and drained < drain:
            step = min(500, drain - drained)
            self.advance(step)
            drained += step
        hist = st["hist"]
        done = int(c[K.K_MEAS_DONE])
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        cycles = self.t - t_begin
        n = self.net.routers
        return Result(
            network=self.net.name, traffic=self.traffic.pattern, rate=self.rate,
            offered=created_flits / (window * n),
            accepted=int(c[K.K_WIN_EJ]) / (window * n),
            latency_mean=int(c[K.K_LAT_SUM]) / done if done else math.nan,
            latency_p50=_percentile(hist, 0.5), latency_p99=_percentile(hist, 0.99),
            latency_max=int(c[K.K_LAT_MAX]), measured_packets=created,
            delivered_packets=done, saturated=done < created, cycles=cycles,
            seconds=round(seconds, 3),
            router_cycles_per_s=round(n * cycles / seconds, 1) if seconds else 0.0,
            seed=self.seed, cpu_seconds=round(cpu, 3),
            router_cycles_per_cpu_s=round(n * cycles / cpu, 1) if cpu else 0.0)


def simulate(net: Network, traffic: str | Traffic = "uniform", rate: float = 0.1, *,
             warmup: int = 5000, window: int = 10000, drain: int = 20000, **kwargs) -> Result:
    """Build a :class:`Simulator` and measure one point."""
    if isinstance(traffic, str):
        traffic = Traffic.make(traffic, net.coords, net.grid)
    return Simulator(net, traffic, rate=rate, **kwargs).measure(warmup, window, drain)
