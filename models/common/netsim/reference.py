"""The reference step: the router model of :mod:`models.common.netsim`, written for reading.

:class:`RouterModel` is one router of the contract with its ports open (flits and credits
come in, traversals go out); :class:`ReferenceNetwork` wires one per chip with the network's
links and sources. Objects instead of arrays, one phase at a time over all routers (the
kernel instead does all phases of one router before the next; the contract makes the two
orders equal, and the tests hold them to it). Slow: for tests, for reading and as the golden
model of the router RTL (``cosim/test_router.py`` drives a :class:`RouterModel` beside it).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from . import registry
from .network import LOCAL, Network
from .traffic import MODE_TRACE, Traffic, destination, gap, uniform_py

__all__ = ["ReferenceNetwork", "RouterModel", "Packet", "Flit"]


@dataclass
class Packet:
    tag: int
    dst: int
    length: int
    created: int


@dataclass
class Flit:
    packet: Packet
    seq: int
    ready: int = 0                   # first cycle it may take part in allocation

    @property
    def head(self) -> bool:
        return self.seq == 0

    @property
    def tail(self) -> bool:
        return self.seq == self.packet.length - 1


@dataclass
class InputVC:
    flits: deque = field(default_factory=deque)
    out: tuple[int, int] | None = None   # (output port, output VC) once VC-allocated
    allocated_at: int = -1


class RouterModel:
    """One router: P ports (0 local), V VCs per input port, ``buffer`` flits per VC.

    ``route_port[row, dst]``, ``route_vc_lo/hi[row, dst]``: the router's routing tables (row =
    input VC, 0 at the local port; a negative port: no route, the head waits). Read when a
    head is VC-allocated; the router RTL's head brings the same entry with it, looked up one
    router ahead (lookahead routing), so the cycles are the same. ``width[p]``:
    lanes of port p (default 1 everywhere). ``credits[p]``: initial credits of every VC of
    output p (default ``buffer``, and 0 at the local port, which needs none).
    ``allocator`` and ``router``: registered names (:mod:`.registry`; None: the defaults,
    "separable" and "pipelined"). ``links[p]``: the parallel links output p is made of, each
    held by one packet from its VC allocation to its tail (the "parallel" link model); None:
    every port one link shared flit by flit ("shared"). ``perlink``: each of those links has
    its own ``classes`` VCs (VC l * classes + c is class c of link l; the tables' rows and VC
    ranges are classes): a head asks for the first free, empty VC of a free link, else the
    first free one with room (links in order, classes lo..hi in each), and the link is held
    until the tail crosses. ``allocator="age"``: every VC and switch allocation goes to the
    oldest packet (creation cycle, then tag) instead of round robin.

    A cycle t, in the contract's order: :meth:`credit` for every credit arriving at t,
    :meth:`receive` for every flit written at t (by a link or a source; ready at t + 1),
    then :meth:`allocate` (VC allocation) and :meth:`switch` (switch allocation and
    traversal), which returns the traversals of the cycle as ``(in port, in VC, out port, out
    VC, flit)`` in input-port order. A traversal on a port other than 0 frees a slot of the
    input VC (its credit goes upstream) and, unless it leaves on port 0, takes a credit of
    the output VC.
    """

    def __init__(self, ports: int, vcs: int, *, buffer: int, route_port, route_vc_lo,
                 route_vc_hi, width=None, credits=None, allocator: str | None = None,
                 router: str | None = None, links=None, classes: int | None = None,
                 perlink: bool = False) -> None:
        self.P, self.V, self.B = ports, vcs, buffer
        self.C = vcs if classes is None else classes
        self.route_port, self.route_vc_lo, self.route_vc_hi = route_port, route_vc_lo, \
            route_vc_hi
        self.width = [1] * ports if width is None else [int(w) for w in width]
        if credits is None:
            credits = [0] + [buffer] * (ports - 1)
        self.inputs = [[InputVC() for _ in range(vcs)] for _ in range(ports)]
        self.held = [[False] * vcs for _ in range(ports)]       # output VC held by a packet
        self.credits = [[int(c)] * vcs if isinstance(c, (int, float)) or not hasattr(c, "__len__")
                        else [int(x) for x in c] for c in credits]
        self.va_next = [[0] * vcs for _ in range(ports)]         # requester to start after
        self.sa_in_next = [0] * ports
        self.sa_out_next = [0] * ports
        self.wavefront = None
        self.age = registry.choice("allocator", allocator).name == "age"
        if registry.choice("allocator", allocator).name == "wavefront":
            from ..wwfa import WavefrontArbiter
            self.wavefront = WavefrontArbiter(ports)
        # the ideal VCT router lets a head cross in the cycle it is VC-allocated
        rtr = registry.choice("router", router)
        self.bypass = int(rtr.bypass)
        self.links = None if links is None else [int(n) for n in links]
        self.perlink = bool(perlink)
        if self.perlink and self.links is None:
            raise ValueError("per-link VCs need the links of every port")
        self.link_busy = [0] * ports             # links held (per-link VCs: a set of links)
        self.link_held = [set() for _ in range(ports)]
        self.sent_vc: dict = {}
        # the registered router (the router RTL's): VC requests formed a cycle ahead,
        # switch allocation speculating beside VC allocation, the output VC's credit and
        # release a cycle after the grant
        self.registered = bool(rtr.cross)
        registry.check_router(rtr, registry.choice("allocator", allocator).name,
                              "shared" if links is None else
                              "perlink" if perlink else "parallel", max(self.width))
        self.vreq = [[None] * vcs for _ in range(ports)]     # (port, VC) asked for next
        self.spec: dict = {}                                  # (p, v) -> port, this cycle
        self.sure: set = set()                                # of them, VC allocation's sure
        self.deferred: list = []                              # (port, VC, tail) of last cycle
        self.snapshot = None

    # -- inputs of a cycle -----------------------------------------------------------------
    def credit(self, port: int, vc: int) -> None:
        """A credit of output ``port`` VC ``vc`` arrives (usable by this cycle's allocation)."""
        self.credits[port][vc] += 1

    def receive(self, port: int, vc: int, flit: Flit, t: int) -> None:
        """``flit`` is written into input ``port`` VC ``vc`` in cycle ``t`` (ready at t + 1)."""
        flit.ready = t + 1
        self.inputs[port][vc].flits.append(flit)

    def occupancy(self, port: int, vc: int) -> int:
        return len(self.inputs[port][vc].flits)

    # -- VC allocation ---------------------------------------------------------------------
    def allocate(self, t: int) -> None:
        if self.registered:
            return self._allocate_registered(t)
        V = self.V
        requests: dict[tuple[int, int], list[int]] = {}
        for p in range(self.P):
            for v, ivc in enumerate(self.inputs[p]):
                if ivc.out is not None or not ivc.flits or ivc.flits[0].ready > t:
                    continue
                pkt = ivc.flits[0].packet
                row = v % self.C if p != LOCAL else 0
                op = int(self.route_port[row, pkt.dst])
                if op == LOCAL:
                    ivc.out, ivc.allocated_at = (LOCAL, 0), t
                    continue
                if op < 0:                    # no route (the simulator refuses such tables)
                    continue
                classes = range(self.route_vc_lo[row, pkt.dst], self.route_vc_hi[row, pkt.dst] + 1)
                if self.perlink:
                    want = [(need, l * self.C + c) for need in (self.B, pkt.length)
                            for l in range(self.links[op]) if l not in self.link_held[op]
                            for c in classes]
                else:
                    if self.links and self.link_busy[op] >= self.links[op]:
                        continue              # every link of the port is held by a packet
                    want = [(pkt.length, c) for c in classes]
                for need, ov in want:
                    if not self.held[op][ov] and self.credits[op][ov] >= need:
                        requests.setdefault((op, ov), []).append(p * V + v)
                        break
        n = self.P * V
        for (op, ov), who in sorted(requests.items()):
            start = self.va_next[op][ov]
            if self.age:
                winner = min(who, key=lambda x: self._age(*divmod(x, V)))
            else:
                winner = min(who, key=lambda x: (x - start) % n)
            p, v = divmod(winner, V)
            if self.perlink:
                if ov // self.C in self.link_held[op]:
                    continue                  # the link went to a lower output VC
                self.link_held[op].add(ov // self.C)
            elif self.links:
                if self.link_busy[op] >= self.links[op]:
                    continue                  # the port's links went to lower output VCs
                self.link_busy[op] += 1
            self.held[op][ov] = True
            self.inputs[p][v].out, self.inputs[p][v].allocated_at = (op, ov), t
            self.va_next[op][ov] = (winner + 1) % n

    # -- switch allocation and traversal ---------------------------------------------------
    def switch(self, t: int) -> list[tuple[int, int, int, int, Flit]]:
        """Switch allocation and traversal in rounds, as many as the router's widest port
        has lanes. In each round every port with a lane left takes part: each input port
        offers one VC (round robin) whose output has a lane left, each output grants one
        input port (round robin); a granted flit crosses at once, so the same VC may win
        again in the next round."""
        if self.registered:
            return self._switch_registered(t)
        width, V = self.width, self.V
        sent_in = [0] * self.P
        sent_out = [0] * self.P
        out = []
        self.sent_vc = {}

        def ready(p, v):
            ivc = self.inputs[p][v]
            if (ivc.out is None or ivc.allocated_at >= t + self.bypass or not ivc.flits
                    or ivc.flits[0].ready > t):
                return None
            op, ov = ivc.out
            if op != LOCAL and self.credits[op][ov] <= 0:
                return None
            if self.links and op != LOCAL and \
                    self.sent_vc.get((p, v), 0) * self.links[op] >= width[op]:
                return None                   # its link's lanes are used this cycle
            return op

        if self.wavefront and not any(ready(p, v) is not None for p in range(self.P)
                                      if width[p] for v in range(V)):
            return out
        for _ in range(max(width)):
            if self.wavefront:
                grants = self._wavefront_round(width, sent_in, sent_out, ready)
            else:
                grants = self._separable_round(width, sent_in, sent_out, ready)
            if not grants:
                break
            for p, v in sorted(grants):
                self.sa_in_next[p] = (v + 1) % V
                sent_in[p] += 1
                sent_out[self.inputs[p][v].out[0]] += 1
                out.append(self._traverse(p, v))
        return out

    # -- registered grants -------------------------------------------------------------------
    def _allocate_registered(self, t: int) -> None:
        """VC allocation of the requests formed last cycle: each output VC still free grants
        one (round robin); a request for port 0 is granted at once."""
        V, n = self.V, self.P * self.V
        self.snapshot = ([row[:] for row in self.held], [row[:] for row in self.credits])
        self.spec = {}
        self.sure = set()
        requests: dict = {}
        for p in range(self.P):
            for v, ivc in enumerate(self.inputs[p]):
                want = self.vreq[p][v]
                if ivc.out is not None or want is None:
                    continue
                self.spec[(p, v)] = want[0]
                if want[0] == LOCAL:
                    ivc.out, ivc.allocated_at = (LOCAL, 0), t
                    self.sure.add((p, v))
                elif not self.held[want[0]][want[1]]:
                    requests.setdefault(want, []).append(p * V + v)
        for (op, ov), who in sorted(requests.items()):
            if len(who) == 1:                 # a sure grant: its speculation holds
                self.sure.add(divmod(who[0], V))
            start = self.va_next[op][ov]
            winner = min(who, key=lambda x: (x - start) % n)
            p, v = divmod(winner, V)
            self.held[op][ov] = True
            self.inputs[p][v].out, self.inputs[p][v].allocated_at = (op, ov), t
            self.va_next[op][ov] = (winner + 1) % n

    def _switch_registered(self, t: int):
        """Switch allocation beside VC allocation: an allocated VC with a flit written before
        this cycle requests its output; a VC that requested VC allocation requests its
        port speculatively, its grant void unless it was VC-allocated in this cycle. The
        round-robin pointers advance on every grant; no credit check (VC allocation found
        credits for the whole packet). Then last cycle's grants take their output VC's
        credit and a tail releases it, and the requests of next cycle are formed."""
        V = self.V

        def ready(p, v):
            if (p, v) in self.spec:
                return self.spec[(p, v)]
            ivc = self.inputs[p][v]
            if ivc.out is None or not ivc.flits or ivc.flits[0].ready > t:
                return None
            return ivc.out[0]

        out = []
        one = self.width                      # 1, or 0 where a port is not connected
        if self.wavefront:
            if any(ready(p, v) is not None for p in range(self.P) if one[p] for v in range(V)):
                grants = self._wavefront_round(one, [0] * self.P, [0] * self.P, ready)
            else:
                grants = []
        else:
            grants = self._separable_round(one, [0] * self.P, [0] * self.P, ready)
        done = []
        for p, v in sorted(grants):
            self.sa_in_next[p] = (v + 1) % V
            ivc = self.inputs[p][v]
            if (p, v) in self.spec and (p, v) not in self.sure:
                continue                       # VC allocation might have refused it: void
            op, ov = ivc.out
            flit = ivc.flits.popleft()
            if op != LOCAL:
                done.append((op, ov, flit.tail))
            if flit.tail:
                ivc.out = None
            out.append((p, v, op, ov, flit))
        for op, ov, tail in self.deferred:
            self.credits[op][ov] -= 1
            if tail:
                self.held[op][ov] = False
        self.deferred = done
        self._form_requests(t)
        return out

    def _form_requests(self, t: int) -> None:
        """Each input VC without an output VC whose front (after this cycle) is a head asks
        for the lowest VC of its range that was free and covered the packet at the start
        of this cycle, or for port 0."""
        held, credits = self.snapshot
        for p in range(self.P):
            for v, ivc in enumerate(self.inputs[p]):
                self.vreq[p][v] = None
                if ivc.out is not None or not ivc.flits or not ivc.flits[0].head \
                        or ivc.flits[0].ready > t + 1:
                    continue                  # no head written by this cycle at the front
                pkt = ivc.flits[0].packet
                row = v % self.C if p != LOCAL else 0
                op = int(self.route_port[row, pkt.dst])
                if op == LOCAL:
                    self.vreq[p][v] = (LOCAL, 0)
                    continue
                if op < 0:
                    continue
                for c in range(self.route_vc_lo[row, pkt.dst], self.route_vc_hi[row, pkt.dst] + 1):
                    if not held[op][c] and credits[op][c] >= max(pkt.length, 1):
                        self.vreq[p][v] = (op, int(c))
                        break

    def _requests(self, width, sent_in, sent_out, ready):
        """(input port, VC, output port) of every ready VC, ports with a lane left, each
        port's VCs in round-robin order from after its last granted VC."""
        for p in range(self.P):
            if sent_in[p] >= width[p]:
                continue
            for i in range(self.V):
                v = (self.sa_in_next[p] + i) % self.V
                op = ready(p, v)
                if op is not None and sent_out[op] < width[op]:
                    yield p, v, op

    def _age(self, p: int, v: int):
        """The age key of the packet at the front of input ``p`` VC ``v``: older first."""
        pkt = self.inputs[p][v].flits[0].packet
        return pkt.created, pkt.tag

    def _separable_round(self, width, sent_in, sent_out, ready):
        """Each input port offers its first request (age: its oldest); each output grants
        one offering port, round robin (age: the oldest offer)."""
        offers = {}                                                # input port -> (v, op)
        for p, v, op in self._requests(width, sent_in, sent_out, ready):
            if p not in offers or (self.age and self._age(p, v) < self._age(p, offers[p][0])):
                offers[p] = (v, op)
        grants = []
        for op in sorted({op for _, op in offers.values()}):
            start = self.sa_out_next[op]
            key = (lambda p: self._age(p, offers[p][0])) if self.age else \
                (lambda p: (p - start) % self.P)
            p = min((p for p, (_, o) in offers.items() if o == op), key=key)
            self.sa_out_next[op] = (p + 1) % self.P
            grants.append((p, offers[p][0]))
        return grants

    def _wavefront_round(self, width, sent_in, sent_out, ready):
        """Input port x output port requests (each with the port's first request towards that
        output) through the router's wrapped wave-front arbiter."""
        import numpy as np
        req = np.zeros((self.P, self.P), dtype=bool)
        first = {}
        for p, v, op in self._requests(width, sent_in, sent_out, ready):
            if (p, op) not in first:
                first[(p, op)] = v
                req[p, op] = True
        grant = self.wavefront.arbitrate(req)
        return [(int(p), first[(int(p), int(q))]) for p, q in zip(*np.nonzero(grant))]

    def _traverse(self, p: int, v: int):
        ivc = self.inputs[p][v]
        op, ov = ivc.out
        flit = ivc.flits.popleft()
        self.sent_vc[(p, v)] = self.sent_vc.get((p, v), 0) + 1
        if op != LOCAL:
            self.credits[op][ov] -= 1
            if flit.tail:
                self.held[op][ov] = False
                if self.perlink:
                    self.link_held[op].discard(ov // self.C)
                elif self.links:
                    self.link_busy[op] -= 1
        if flit.tail:
            ivc.out = None
        return p, v, op, ov, flit


class ReferenceNetwork:
    """Same constructor arguments as :class:`.sim.Simulator` (no checks, no measurement);
    :meth:`step` simulates one cycle and appends to :attr:`events` the rows
    :meth:`.sim.Simulator.events` documents."""

    def __init__(self, net: Network, traffic: Traffic, *, rate: float = 0.0,
                 buffer: int = 16, length: int = 4, seed: int = 1,
                 allocator: str | None = None, router: str | None = None,
                 links: str | None = None, source: str | None = None) -> None:
        from .sim import initial_credits, vc_layout
        # the registered router: a flit granted in t crosses in t + 1
        self.cross = int(registry.choice("router", router).cross)
        self.net, self.traffic, self.B, self.L, self.seed = net, traffic, buffer, length, seed
        self.P, self.W = net.ports, net.inject_width
        self.q = rate / (self.W * length) if traffic.mode != MODE_TRACE else 0.0
        lnk = registry.choice("links", links).name
        # an open source writes a packet only into an empty local VC, one of VI
        self.open = registry.choice("source", source).name == "open"
        Vb, self.VI, self.V = vc_layout(net, lnk, "open" if self.open else "fifo")
        parallel = lnk in ("parallel", "perlink")
        counts = net.link_counts()
        credits = initial_credits(net, self.V, Vb, buffer, lnk)
        # a credit travels back over the link ("link") or arrives the next cycle ("next")
        self.credit_link = registry.choice("router", router).credit == "link"
        registry.check_router(registry.choice("router", router),
                              registry.choice("allocator", allocator).name, lnk,
                              int(net.width.max()))
        self.routers = [RouterModel(self.P, self.V, buffer=buffer,
                                    route_port=net.route_port[r],
                                    route_vc_lo=net.route_vc_lo[r],
                                    route_vc_hi=net.route_vc_hi[r], width=net.width[r],
                                    credits=credits[r].tolist(),
                                    allocator=allocator, router=router,
                                    links=list(counts[r]) if parallel else None,
                                    classes=Vb, perlink=lnk == "perlink")
                        for r in range(net.routers)]
        self.credit_due: dict[int, list] = {}
        self.t = 0
        self.events: list[tuple] = []
        # source queues: per chip, each stream's next (creation time, index); trace rows
        self.streams = [[[gap.py_func(uniform_py(seed, r, s, 0), self.q) - 1, 0]
                         for s in range(self.W)] if self.q > 0 and traffic.sends[r] else []
                        for r in range(net.routers)]
        self.trace = [deque() for _ in range(net.routers)]
        if traffic.mode == MODE_TRACE:
            for cyc, src, dst, flits in traffic.trace:
                self.trace[src].append((int(cyc), int(dst), int(flits)))
        self.sent = [0] * net.routers
        self.writing: list = [None] * net.routers       # (local VC, packet, flits written)
        self.inj_next = [0] * net.routers
        self.ejected: list[tuple[int, Packet]] = []     # (cycle, packet) per delivered packet

    # -- the source --------------------------------------------------------------------------
    def _queue_head(self, r: int):
        if self.traffic.mode == MODE_TRACE:
            return (self.trace[r][0][0], 0) if self.trace[r] else None
        if not self.streams[r]:
            return None
        s = min(range(self.W), key=lambda i: (self.streams[r][i][0], i))
        return self.streams[r][s][0], s

    def _new_packet(self, r: int, created: int, stream: int) -> Packet:
        k = self.sent[r]
        if self.traffic.mode == MODE_TRACE:
            _, dst, length = self.trace[r].popleft()
        else:
            tr = self.traffic
            dst = int(destination.py_func(tr.mode, tr.perm, tr.hot, tr.hot_frac, tr.n, r,
                                          uniform_py(self.seed, r, k, -1),
                                          uniform_py(self.seed, r, k, -2)))
            length = self.L
            st = self.streams[r][stream]
            st[1] += 1
            st[0] += gap.py_func(uniform_py(self.seed, r, stream, st[1]), self.q)
        self.sent[r] = k + 1
        return Packet((r << 32) | k, dst, length, created)

    def _inject(self, r: int, t: int) -> None:
        router = self.routers[r]
        budget = self.W
        while budget:
            if self.writing[r] is None:
                head = self._queue_head(r)
                if head is None or head[0] > t:
                    return
                length = self.trace[r][0][2] if self.traffic.mode == MODE_TRACE else self.L
                order = [(self.inj_next[r] + i) % self.VI for i in range(self.VI)]
                room = [v for v in order if router.occupancy(LOCAL, v) == 0 or not self.open
                        and self.B - router.occupancy(LOCAL, v) >= length]
                if not room:
                    return
                v = room[0]
                self.writing[r] = [v, self._new_packet(r, head[0], head[1]), 0]
                self.inj_next[r] = (v + 1) % self.VI
            v, pkt, done = self.writing[r]
            router.receive(LOCAL, v, Flit(pkt, done), t)
            self.events.append((t, 0, r, 0, v, -1, -1, pkt.tag, done))
            self.writing[r][2] = done + 1
            budget -= 1
            if done + 1 == pkt.length:
                self.writing[r] = None

    # -- one cycle -------------------------------------------------------------------------
    def step(self) -> None:
        t, net = self.t, self.net
        for r, p, v in self.credit_due.pop(t, []):                     # (1) credits
            self.routers[r].credit(p, v)
        for r in range(net.routers):                                   # (2) sources
            self._inject(r, t)
        for router in self.routers:                                    # (3) VC allocation
            router.allocate(t)
        for r, router in enumerate(self.routers):                      # (4) switch
            for p, v, op, ov, flit in router.switch(t):
                self._deliver(r, p, v, op, ov, flit, t)
        self.t += 1

    def _deliver(self, r: int, p: int, v: int, op: int, ov: int, flit: Flit, t: int) -> None:
        net = self.net
        # an ejection is logged in the cycle the flit crosses (a cycle after a registered
        # grant), a flit to another router in its grant's cycle
        self.events.append((t + self.cross * (op == LOCAL), 1, r, p, v, op, ov,
                            flit.packet.tag, flit.seq))
        if p != LOCAL:
            up, up_port = int(net.nbr[r, p]), int(net.nbr_port[r, p])
            back = int(net.delay[r, p]) if self.credit_link else 1
            self.credit_due.setdefault(t + back, []).append((up, up_port, v))
        if op == LOCAL:
            if flit.tail:
                self.ejected.append((t + self.cross, flit.packet))
        else:
            down, port = int(net.nbr[r, op]), int(net.nbr_port[r, op])
            self.routers[down].receive(port, ov, flit, t + self.cross + int(net.delay[r, op]))


def both_event_logs(net: Network, traffic: Traffic, cycles: int, shaped: bool | None = None,
                    **kw):
    """The event logs of the compiled simulator (checking its invariants; ``shaped``: on a
    kernel compiled for the network's shape, see :class:`.sim.Simulator`) and of this
    reference after ``cycles`` cycles of the same network, traffic and keywords, as two
    arrays of the same row layout (the reference's sorted): equal event for event when the
    kernel is right."""
    import numpy as np

    from .sim import Simulator
    sim = Simulator(net, traffic, check=True, log=400_000, shaped=shaped, **kw)
    sim.advance(cycles)
    ref = ReferenceNetwork(net, traffic, **kw)
    for _ in range(cycles):
        ref.step()
    return sim.events(), np.array(sorted(ref.events), dtype=np.int64).reshape(-1, 9)
