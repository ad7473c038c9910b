"""cocotb testbench: the VC router RTL against ``models.common.netsim.reference.RouterModel``.

Every input port is driven by an upstream sender that keeps its own credit count per VC and
sends packets of random length (1 .. packet) to random destinations on random VCs, packets
of different VCs interleaved on the link, at a load that changes every few hundred cycles.
Every output port feeds a downstream receiver that holds the flits it gets and frees them
at random (back-pressure: outputs stall completely, drain slowly or at once, by phases),
returning a credit per freed slot. The router's routing table is random; every head
arrives with its route from it (lookahead: an upstream router or the source looks it up),
and the tables of the routers downstream, random too, are loaded through the ``table``
stream at run time: every head that leaves on a link port must carry its route there.

The golden model takes the same flits and credits in the same cycles. Every cycle, every
output flit (port, head, tail, VC, data) and every credit the RTL returns is compared with
the model's. Checked on the RTL alone: a receiver never holds more than ``depth`` flits of a
VC (credits never negative), a sender never gets back more credits than ``depth`` (never
above B), flits leave each output VC as whole packets in sequence (head first, tail last,
contiguous), no flit is lost or duplicated, and the error flags stay low. Further tests: the
virtual cut-through and pipeline timing from the documented diagram, and each error flag.
"""

from __future__ import annotations

import os
import time
from fractions import Fraction

import cocotb
import numpy as np

from aifabric.cosim.codec import encode_entry, encode_route
from aifabric.cosim.noc import Link, OutputChecker, PacketIds, Payload, RoutedLink, read_int
from aifabric.cosim.testbench import Testbench
from aifabric.models.common.netsim.reference import Flit, Packet, RouterModel
from aifabric.rtl.railx.router import Router

DEFAULT_CYCLES = 15_000
PHASE = 400            # cycles between changes of load and back-pressure
DESTINATIONS = 24      # destinations in the random table (of 2**dst_width)
# Every destination an entry was driven for in this simulation: reset keeps the table (a
# memory), so a later test's "never loaded" destination must avoid the earlier tests' ones.
LOADED: set[int] = set()
ERROR_BITS = {"table": 0, "no_route": 1, "length": 2, "protocol": 3, "eject_credit": 4}

# Functional coverage of ``random_traffic``: cycles in which each corner of the allocators
# and buffers occurs (read off the model's state before its VC allocation; the model and the
# RTL agree on every output and credit of every cycle), and the least each must reach in a
# run of ``DEFAULT_CYCLES`` (scaled down for shorter runs): about a third of the fewest
# measured over seeds 1-3 at the four default parameter sets (va_conflict 390, vct_wait
# 11,107, buffer_full 12,435, output_held 1,097 cycles of 15,000; range_held 1,182 since the
# table gives every row its share of multi-VC ranges: see ``random_table``).
COVER_MIN = {
    "va_conflict": 130,    # >= 2 heads request the same output VC in one cycle
    "vct_wait": 3700,      # a head waits for cut-through room: a VC of its range is free
                           # (not held) but holds fewer credits than the packet's length
    "range_held": 390,     # a head's range of >= 2 VCs is held, every VC of it (1,182-3,844
                           # over seeds 1-3 at the four sets; before the table's share of
                           # multi-VC ranges, 63-2,949 and a minimum of 40)
    "buffer_full": 4000,   # an input VC holds `depth` flits
    "output_held": 350,    # an output port with every VC held
}


class Bench(Testbench):
    """The DUT's links, a routing table, the model, the senders and the receivers, on the
    testbench layer (``seed``: added to the test's seed). ``t`` counts the cycles the
    traffic loops stepped; the coverage bins are :data:`COVER_MIN`'s (their minimums
    required where ``coverage`` gives them)."""

    def __init__(self, dut, *, seed: int = 0, rng=None, start: bool = True,
                 allocator: str | None = None, coverage: dict | None = None):
        super().__init__(dut, Router, seed=seed, coverage=coverage, start=start)
        if rng is not None:
            self.rng = rng
        prm = self.params
        self.P, self.V, self.B = prm["ports"], prm["vcs"], prm["depth"]
        self.D, self.DW, self.L = prm["data"], prm["dst_width"], prm["packet"]
        self.allocator = allocator or prm.get("allocator", "separable")
        self.payload = Payload(self.DW, self.L, self.D)
        self.payload.check_width(self.D)
        P, V = self.P, self.V
        self.inputs = [RoutedLink(link, lambda vc, data, p=p: self.route_of(p, vc, data))
                       for p, link in enumerate(Link.ports(self, "i", V))]
        self.outputs = Link.ports(self, "o", V)
        self.table = self.bus("table")
        # this router's routing table: (row, dst) -> port, VC range; -1 where nothing is
        # loaded (the heads' routes come from it, and the model reads it)
        n_dst = 1 << self.DW
        # the tables loaded into the RTL, of the routers downstream of each output:
        # (output, row, dst) -> encoded route
        self.next_route: dict[tuple[int, int, int], int] = {}
        self.routes_checked = 0
        self.route_port = np.full((V, n_dst), -1, np.int64)
        self.route_lo = np.zeros((V, n_dst), np.int64)
        self.route_hi = np.zeros((V, n_dst), np.int64)
        self.model = None
        self.ids = PacketIds()
        self.packets: dict[int, Packet] = {}
        # senders: credits per VC, the packet open on each VC (pid, next seq), load
        self.up_credit = [[self.B] * V for _ in range(P)]
        self.up_open = [[None] * V for _ in range(P)]
        self.load = 0.5
        # receivers: flits held per output VC, drain probability per port
        self.down = [[0] * V for _ in range(P)]
        self.drain = [1.0] * P
        seen: set = set()
        self.checkers = [OutputChecker(f"output {q}", self.payload, interleave=(q == 0),
                                       seen=seen) for q in range(P)]
        self.expected = ({}, {})                 # outputs and credits due this cycle
        self.crossing: dict = {}                 # outputs granted last cycle, due next
        self.sent = self.received = 0
        self.t = 0
        self.idle()

    def idle(self) -> None:
        """No flit, no credit, no table entry, no clear driven."""
        for link in self.inputs:
            link.send(None)
        for link in self.outputs:
            link.send_credit(None)
        self.table.valid.value = 0
        self.dut.clear.value = 0

    def random_table(self, destinations: list[int]) -> list[tuple]:
        """Random entries for every (row, destination): each port equally likely (port 0 =
        eject), a random VC range. With V >= 2, at least a third of each row's entries to a
        router port get a range of two VCs or more (a VC range held whole is a corner the
        coverage asks for, and a free draw gives V = 2 such a range one time in four, so a
        row could get almost none)."""
        entries = []
        rng, V = self.rng, self.V
        for row in range(V):
            drawn = []
            for dst in destinations:
                port = int(rng.integers(self.P))
                lo = int(rng.integers(V)) if port else 0
                hi = int(rng.integers(lo, V)) if port else 0
                drawn.append([row, dst, port, lo, hi])
            routed = [e for e in drawn if e[2]]
            single = [e for e in routed if e[3] == e[4]]
            short = -(-len(routed) // 3) - (len(routed) - len(single)) if V >= 2 else 0
            for k in rng.permutation(len(single))[:max(0, short)]:
                e = single[int(k)]
                e[3] = int(rng.integers(V - 1))
                e[4] = int(rng.integers(e[3] + 1, V))
            entries += [tuple(e) for e in drawn]
        return entries

    async def load_table(self, entries, *, record: bool = True, own: bool = True,
                         outs: int | None = None) -> None:
        """Entries of this router's table (``own``: the heads' routes and the model's) and
        of the tables downstream of the outputs in ``outs`` (bit q - 1 for output q;
        default every output), driven through ``table`` one per cycle (it is always ready);
        ``record``: False for entries the RTL must refuse."""
        everywhere = (1 << (self.P - 1)) - 1
        outs = everywhere if outs is None else outs
        for row, dst, port, lo, hi in entries:
            LOADED.add(dst)
            if record and own:
                self.route_port[row, dst], self.route_lo[row, dst] = port, lo
                self.route_hi[row, dst] = hi
            if record:
                for q in range(1, self.P):
                    if outs >> (q - 1) & 1:
                        self.next_route[q, row, dst] = encode_route(port, lo, hi, ports=self.P,
                                                                    vcs=self.V)
            if not outs:
                continue
            await self.tick()
            self.table.payload.value = encode_entry(row, dst, port, lo, hi, ports=self.P,
                                                    vcs=self.V, dst_width=self.DW, outs=outs)
            self.table.valid.value = 1
        await self.tick()
        self.table.valid.value = 0

    def route_of(self, port: int, vc: int, data: int) -> int:
        """The encoded route of a head arriving on input ``port`` VC ``vc`` with ``data``,
        from this router's table (row = the VC, 0 at the local port; 0: no route)."""
        row, dst = (vc if port else 0), data & ((1 << self.DW) - 1)
        if row >= self.V or self.route_port[row, dst] < 0:
            return 0
        return encode_route(int(self.route_port[row, dst]), int(self.route_lo[row, dst]),
                            int(self.route_hi[row, dst]), ports=self.P, vcs=self.V)

    def check_route(self, q: int, flit) -> None:
        """A head on output ``q`` carries its route at the next router, from the table
        loaded for that output (where this test loaded the entry); every flit leaving by the
        ejection port carries route 0."""
        if not q:
            got = self.outputs[0].read_route()
            assert got == 0, (f"cycle {self.t - 1}: the ejection port carries route {got:#x}, "
                              f"not 0")
            return
        if not flit[0]:
            return
        dst = flit[3] & ((1 << self.DW) - 1)
        want = self.next_route.get((q, flit[2], dst))
        if want is None:
            return
        got = self.outputs[q].read_route()
        assert got == want, (f"cycle {self.t - 1}: output {q}: head to {dst} on VC {flit[2]} "
                             f"carries route {got:#x}, the table downstream {want:#x}")
        self.routes_checked += 1

    def start_model(self) -> None:
        self.model = RouterModel(self.P, self.V, buffer=self.B, route_port=self.route_port,
                                 route_vc_lo=self.route_lo, route_vc_hi=self.route_hi,
                                 allocator=self.allocator, router="registered")
        self.crossing = {}

    # -- one cycle -------------------------------------------------------------------------
    def check_outputs(self) -> None:
        """The RTL's outputs of the previous cycle against the model's, and the rules."""
        t = self.t
        want_out, want_credit = self.expected
        for q, link in enumerate(self.outputs):
            got = link.read()
            want = want_out.get(q)
            assert got == want, (f"cycle {t - 1}: output {q}: RTL {got}, model {want} "
                                 f"(head, tail, VC, data)")
            if got is None:
                continue
            self.check_route(q, got)
            pid, _ = self.checkers[q].check(t, got)
            self.received += 1
            if q:
                vc = got[2]
                if got[0]:
                    # virtual cut-through, on the RTL alone: a head leaves only when the
                    # downstream VC has room for the whole packet
                    free, length = self.B - self.down[q][vc], self.packets[pid].length
                    assert free >= length, (f"cycle {t}: output {q} VC {vc}: a head of a "
                                            f"{length}-flit packet left with {free} free "
                                            f"slots downstream")
                self.down[q][vc] += 1
                assert self.down[q][vc] <= self.B, (f"cycle {t}: output {q} VC {vc} sent "
                                                    f"without a credit")
        for p, link in enumerate(self.inputs):
            vc = link.read_credit()
            assert vc == want_credit.get(p), (f"cycle {t - 1}: credit of input {p}: RTL {vc}, "
                                              f"model {want_credit.get(p)}")
            if vc is not None:
                self.up_credit[p][vc] += 1
                assert self.up_credit[p][vc] <= self.B, (f"cycle {t}: input {p} VC {vc}: more "
                                                         f"than {self.B} credits returned")
        error = read_int(self.dut.error)
        assert error == 0, f"cycle {t}: error flags {error:05b}"

    def new_packet(self, port: int, vc: int, dsts: list[int]) -> int:
        dst = int(self.rng.choice(dsts))
        length = int(self.rng.integers(1, self.L + 1))
        pid = self.ids.take()
        self.packets[pid] = Packet(pid, dst, length, self.t)
        return pid

    def drive(self, dsts: list[int] | None) -> None:
        """Credits from the receivers, flits from the senders (``dsts`` None: no new
        packet), into the RTL and the model; step the model."""
        t, rng = self.t, self.rng
        self.return_credits()
        for p in range(self.P):
            choices = [v for v in range(self.V) if self.up_credit[p][v] and
                       (self.up_open[p][v] is not None or dsts is not None)]
            flit = None
            if choices and rng.random() < self.load:
                v = choices[int(rng.integers(len(choices)))]
                if self.up_open[p][v] is None:
                    self.up_open[p][v] = (self.new_packet(p, v, dsts), 0)
                pid, seq = self.up_open[p][v]
                self.up_open[p][v] = None if seq == self.packets[pid].length - 1 else \
                    (pid, seq + 1)
                flit = self.send_flit(p, v, pid, seq)
            self.inputs[p].send(flit)
        self.step_model(t)

    def return_credits(self) -> None:
        """The receivers free a held flit (with their drain probability), one credit each."""
        rng, model = self.rng, self.model
        for q in range(1, self.P):
            held = [v for v in range(self.V) if self.down[q][v]]
            vc = None
            if held and rng.random() < self.drain[q]:
                vc = held[int(rng.integers(len(held)))]
                self.down[q][vc] -= 1
                model.credit(q, vc)
            self.outputs[q].send_credit(vc)

    def send_flit(self, p: int, v: int, pid: int, seq: int):
        """Flit ``seq`` of packet ``pid`` on input ``p``'s VC ``v``: into the model, taking
        a credit; returns the flit for the link."""
        pkt = self.packets[pid]
        self.up_credit[p][v] -= 1
        self.model.receive(p, v, Flit(pkt, seq), self.t)
        self.sent += 1
        return (seq == 0, seq == pkt.length - 1, v,
                self.payload.data(pid, seq, pkt.dst, pkt.length))

    def step_model(self, t: int) -> None:
        """The model's allocation and switch of cycle ``t``: the outputs and credits the RTL
        must show next cycle."""
        model = self.model
        self.observe(t)
        model.allocate(t)
        out, credits = {}, {}
        grants = model.switch(t)
        for p, v, op, ov, f in grants:
            pkt = f.packet
            out[op] = (f.head, f.tail, ov, self.payload.data(pkt.tag, f.seq, pkt.dst,
                                                             pkt.length))
            credits[p] = v
        # a grant of cycle t crosses in t + 1 and is on the output in t + 2; its input's
        # credit is in t + 1
        self.expected, self.crossing = (self.crossing, credits), out

    def observe(self, t: int) -> None:
        """Count this cycle's corners (:data:`COVER_MIN`) on the model's state before its VC
        allocation, by the rules of the contract: a head ready at t without an output VC
        requests the lowest VC of its range that is not held and has credits for the whole
        packet."""
        model, V = self.model, self.V
        hit = dict.fromkeys(COVER_MIN, False)
        wants: dict = {}
        for p in range(self.P):
            for v, ivc in enumerate(model.inputs[p]):
                if len(ivc.flits) == self.B:
                    hit["buffer_full"] = True
                if ivc.out is not None or not ivc.flits or ivc.flits[0].ready > t:
                    continue
                pkt = ivc.flits[0].packet
                row = v if p else 0
                op = int(model.route_port[row, pkt.dst])
                if op <= 0:
                    continue
                rng = range(int(model.route_vc_lo[row, pkt.dst]),
                            int(model.route_vc_hi[row, pkt.dst]) + 1)
                free = [w for w in rng if not model.held[op][w]]
                room = [w for w in free if model.credits[op][w] >= pkt.length]
                if room:
                    wants[(op, room[0])] = wants.get((op, room[0]), 0) + 1
                elif free:
                    hit["vct_wait"] = True
                elif len(rng) >= 2:
                    hit["range_held"] = True
        hit["va_conflict"] = any(k >= 2 for k in wants.values())
        hit["output_held"] = any(all(model.held[q][w] for w in range(V))
                                 for q in range(1, self.P))
        for k, h in hit.items():
            if h:
                self.coverage.hit(k)

    def advance(self, dsts) -> None:
        """One cycle at a falling edge: the outputs checked, the inputs driven."""
        self.t += 1
        self.check_outputs()
        self.drive(dsts)

    def shake(self) -> None:
        """A new phase of load and back-pressure."""
        rng = self.rng
        self.load = float(rng.choice([0.1, 0.3, 0.6, 0.9, 1.0]))
        self.drain = [float(rng.choice([0.0, 0.2, 0.6, 1.0, 1.0])) for _ in range(self.P)]

    async def drain_all(self, limit: int = 5000) -> None:
        """Cycles without new packets, everything drained at once, until every flit sent
        has left; the inputs are then left idle."""
        self.drain = [1.0] * self.P
        drained = False

        def body(t: int) -> bool:
            nonlocal drained
            if self.received == self.sent and not any(map(any, self.up_open)):
                drained = True
                self.idle()
                return True
            self.advance(None)
            return False
        await self.run(body, limit + 1)
        if not drained:
            raise AssertionError(f"not drained after {limit} cycles: "
                                 f"{self.sent - self.received} flits still in the router")


@cocotb.test()
async def random_traffic(dut):
    """Random traffic and back-pressure: cycle for cycle equal to the model."""
    cycles = int(os.environ.get("AIFABRIC_TRANSACTIONS", 0)) or DEFAULT_CYCLES
    b = Bench(dut, coverage=COVER_MIN)
    rng, cover = b.rng, b.coverage
    cover.scale = Fraction(cycles, DEFAULT_CYCLES)
    b.log.info("P=%d V=%d B=%d packet=%d %s; %s", b.P, b.V, b.B, b.L, b.allocator,
               b.seed_text())
    await b.reset()
    dsts = sorted(int(d) for d in rng.choice(1 << b.DW, size=min(DESTINATIONS, 1 << b.DW),
                                             replace=False))
    await b.load_table(b.random_table(dsts), outs=0)        # the heads' routes, the model's
    for q in range(1, b.P):                                  # the tables downstream
        entries = b.random_table(dsts)
        rng.shuffle(entries)
        await b.load_table(entries, own=False, outs=1 << (q - 1))
    b.start_model()
    start = time.perf_counter()
    begin = b.meter.cycles
    need = {k: cover.required(k) for k in COVER_MIN}

    def short() -> dict:
        return {k: f"{cover[k]} < {need[k]}" for k in need if cover[k] < need[k]}

    def body(k: int) -> None:
        if k % PHASE == 0:
            b.shake()
        b.advance(dsts)
    await b.run(body, cycles)
    # Coverage closure: the phases' loads and drains are drawn, and a seed that drew mostly
    # light ones reaches a corner too seldom (seed 281172997, before the table's share of
    # multi-VC ranges: range_held 83 of the 140 then asked at P = 6, V = 2). Then more
    # phases at full load, every cycle still checked against the model, up to half the
    # budget again; the minimums themselves do not move.
    extra = 0

    def closure(k: int) -> bool:
        nonlocal extra
        if not short():
            return True
        if extra % PHASE == 0:
            b.shake()
            b.load = 1.0
        b.advance(dsts)
        extra += 1
        return False
    if short() and cycles // 2:
        await b.run(closure, cycles // 2)
    await b.drain_all()
    for q, c in enumerate(b.checkers):
        assert not c.open, f"output {q}: packets left open {c.open}"
    assert b.received == b.sent
    elapsed = time.perf_counter() - start
    b.log.info("%d flits in %d cycles, %.1f s", b.received, b.meter.cycles - begin, elapsed)
    assert b.received >= cycles // 2, "too little traffic to mean anything"
    assert b.routes_checked >= b.received // (4 * b.L), \
        f"only {b.routes_checked} heads' routes checked"
    b.log.info("coverage (cycles): %s; %d closure cycles", cover.counts, extra)
    missed = short()
    assert not missed, (f"random stimulus missed corners (cycles reached < minimum, after "
                        f"{extra} closure cycles at full load): {missed}")
    b.finish("random_traffic", transactions=b.received, cycles=b.meter.cycles - begin,
             seconds=elapsed, coverage_min=need, closure_cycles=extra)


VA_SCENARIOS = 800     # contentions per parameter set at most (all of them at P = 5, V = 2)


@cocotb.test()
async def va_every_pair(dut):
    """Every pair of input VCs (i < j, in the allocators' order p * V + v) contends for every
    output VC, released at once: a packet from a third input VC s holds the output VC while
    one-flit packets from i and j arrive, and its tail frees it. Once with s before i or after
    j (both requesters stay in the round robin's first pass: i must win), once with s between
    them (the start lies after s: j must win) where a third port has one; every cycle against
    the model. Random traffic meets a given pair at a given output VC with the start between
    them rarely: mutants of the round-robin arbiters (a prefix-OR bit tied, the start reset
    while the VC is held) survived 15,000 cycles of it. With more pairs than ``VA_SCENARIOS``
    (P = 8, V = 3: 11,592), a random subset of that size."""
    b = Bench(dut, seed=7)
    rng = b.rng
    await b.reset()
    P, V = b.P, b.V
    outs = [(q, w) for q in range(1, P) for w in range(V)]
    fresh = [d for d in range(1, 1 << b.DW) if d not in LOADED][:len(outs)]
    dest = dict(zip(outs, fresh))
    await b.load_table([(row, dest[q, w], q, w, w) for (q, w) in outs for row in range(V)])
    b.start_model()
    reqs = [(p, v) for p in range(P) for v in range(V)]
    cases = []
    for (q, w) in outs:
        for i in range(len(reqs)):
            for j in range(i + 1, len(reqs)):
                ports = {reqs[i][0], reqs[j][0]}
                outside = [s for s in range(len(reqs)) if (s < i or s > j)
                           and reqs[s][0] not in ports]
                between = [s for s in range(i + 1, j) if reqs[s][0] not in ports]
                for holders, winner in ((outside, i), (between, j)):
                    if holders:
                        cases.append((q, w, i, j, holders[int(rng.integers(len(holders)))],
                                      winner))
    if len(cases) > VA_SCENARIOS:
        cases = [cases[int(k)] for k in sorted(rng.choice(len(cases), VA_SCENARIOS,
                                                          replace=False))]
    assert b.L >= 4, "the holder's packet must outlast the contenders' arrival"
    kinds = {"start_outside": 0, "start_between": 0}
    for q, w, i, j, s, winner in cases:
        d = dest[q, w]
        # the holder's packet first; i's and j's heads three cycles on, while it holds (q, w)
        # (on one port, j's a cycle after i's)
        plan = {0: [(reqs[s], b.L)], 3: [(reqs[i], 1), (reqs[j], 1)]}
        queues = [[] for _ in range(P)]
        owner, order = {}, []
        def step(k: int) -> bool:
            for (p, v), length in plan.get(k, ()):
                pid = b.ids.take()
                b.packets[pid] = Packet(pid, d, length, b.t)
                queues[p] += [(v, pid, seq) for seq in range(length)]
                owner[pid] = reqs.index((p, v))
            b.t += 1
            b.check_outputs()              # against the model, and the output rules
            got = b.outputs[q].read()
            if got is not None:
                who = owner.get(b.payload.ident(got[3])[0])
                if who in (i, j) and who not in order:
                    order.append(who)
            b.return_credits()
            for p in range(P):
                flit = None
                if queues[p] and b.up_credit[p][queues[p][0][0]]:
                    v, pid, seq = queues[p].pop(0)
                    flit = b.send_flit(p, v, pid, seq)
                b.inputs[p].send(flit)
            b.step_model(b.t)
            return k > 4 and not any(queues) and b.received == b.sent
        await b.run(step, 40)
        where = f"output {q} VC {w}, {reqs[i]} and {reqs[j]} after {reqs[s]}"
        assert b.received == b.sent, f"{where}: not delivered in 40 cycles"
        # the round robin's rule on the RTL alone: the first at or after the start
        assert order and order[0] == winner, f"{where}: {reqs[order[0]]} won, not " \
                                             f"{reqs[winner]}"
        kinds["start_outside" if winner == i else "start_between"] += 1
    for c in b.checkers:
        assert not c.open
    assert kinds["start_outside"] and kinds["start_between"], kinds
    b.finish("va_every_pair", transactions=b.received,
             contentions=len(cases), **kinds)


@cocotb.test()
async def first_grants_after_reset(dut):
    """Every arbiter starts its round robin at 0 after a reset: its first contention goes to
    the lowest requester. Each case on a fresh reset (the table reloaded; a reset keeps it):
    for every output VC, input 0 and input 1 send a one-flit head to it in the same cycle
    (the VC allocator's requesters 0 and V: input 0's must win); for every output port
    (with V >= 2), the two heads go to two VCs of that port, are allocated in the same cycle
    and offer the port together (the switch allocator's inputs 0 and 1: input 0's leaves
    first; the wave-front allocator's diagonal decides there, checked against the model).
    Every cycle against the model. ``va_every_pair`` and random traffic reach an
    arbiter's first contention only after another grant has moved its start."""
    b = Bench(dut, seed=11)
    rng = b.rng
    await b.reset()
    P, V = b.P, b.V
    fresh = iter([d for d in range(1, 1 << b.DW) if d not in LOADED])
    cases = [("va", q, w) for q in range(1, P) for w in range(V)]
    cases += [("sa", q, None) for q in (range(P) if V >= 2 else (0,))]
    cycles = 0
    for kind, q, w in cases:
        cycles += b.meter.cycles
        b = Bench(dut, rng=rng, start=False)
        await b.reset()
        d0, d1 = next(fresh), next(fresh)
        if kind == "va":
            await b.load_table([(0, d0, q, w, w)])
            heads = [(0, d0), (1, d0)]
        else:
            w1 = 1 if q else 0                  # the ejection port has no VCs to tell apart
            await b.load_table([(0, d0, q, 0, 0), (0, d1, q, w1, w1)])
            heads = [(0, d0), (1, d1)]
        b.start_model()
        pids, order = [], []
        def step(k: int) -> bool:
            b.t += 1
            b.check_outputs()                  # against the model
            got = b.outputs[q].read()
            if got is not None:
                order.append(b.payload.ident(got[3])[0])
            b.return_credits()
            for p in range(P):
                flit = None
                if k == 0 and p < len(heads):
                    pid = b.ids.take()
                    b.packets[pid] = Packet(pid, heads[p][1], 1, b.t)
                    pids.append(pid)
                    flit = b.send_flit(p, 0, pid, 0)
                b.inputs[p].send(flit)
            b.step_model(b.t)
            return k > 2 and b.received == b.sent
        await b.run(step, 20)
        where = (f"output {q} VC {w}" if kind == "va" else f"output port {q}") + \
            " after a reset"
        assert b.received == b.sent == 2, f"{where}: {b.received} of 2 flits out"
        # the wave-front switch allocator grants by its priority diagonal, not round robin
        # (the model comparison checks it)
        if kind == "va" or b.allocator == "separable":
            assert order == pids, f"{where}: input {pids.index(order[0])}'s head left first"
    b.finish("first_grants_after_reset", transactions=2 * len(cases),
             cycles=cycles + b.meter.cycles, cases=len(cases))


@cocotb.test()
async def cut_through_timing(dut):
    """The documented pipeline on the RTL alone: a head written in cycle t leaves in t + 3
    when its output VC has room; with fewer credits than the packet's length it waits, and
    is on the output three cycles after the credit that completes the room arrives."""
    b = Bench(dut, seed=1)
    rng = b.rng
    await b.reset()
    P, V, B = b.P, b.V, b.B
    q, dst = 1, 3 % (1 << b.DW)
    await b.load_table([(row, dst, q, 0, 0) for row in range(V)])
    length = min(4, b.L)
    if length < 2:
        return                              # one-flit packets always fit
    # fill output 1 VC 0 downstream until fewer than `length` slots are left
    room = length - 1
    pid = 0
    fill = B - room
    async def send_packet(n_flits, tag):
        for s in range(n_flits):
            await b.tick()
            b.inputs[2].send((s == 0, s == n_flits - 1, 0,
                              b.payload.data(tag, s, dst, n_flits)))
        await b.tick()
        b.inputs[2].send(None)
    arrivals = []                              # (cycle, flit) on output q

    class Monitor:
        def edge(self, t: int) -> None:
            f = b.outputs[q].read()
            if f is not None:
                arrivals.append((t, f))
    b.add(Monitor())
    watch = b.tick
    # one filler packet of `fill` flits (fill <= B, so it fits the downstream VC)
    fill_len = min(fill, b.L)
    sent = 0
    while sent < fill:
        n = min(fill_len, fill - sent)
        await send_packet(n, pid)
        pid += 1
        sent += n
    await watch(3 * B + 10)
    assert sum(1 for _, f in arrivals) == fill, f"filler: {len(arrivals)} of {fill} flits"
    arrivals.clear()
    # now `room` < length credits are left: a packet of `length` flits must wait
    await send_packet(length, pid)
    await watch(40)
    assert not arrivals, f"the head left with {room} credits for a {length}-flit packet"
    # return one credit: avail reaches `length` in the cycle the credit is on the link,
    # the VC request is formed in that cycle, VC and switch allocation take the next, the
    # traversal the one after, and the head is on the output in the fourth
    await b.tick()
    b.outputs[q].send_credit(0)
    credit_cycle = b.cycle
    await b.tick()
    b.outputs[q].send_credit(None)
    arrivals.clear()
    await watch(length + 6)
    heads = [c for c, f in arrivals if f[0]]
    assert heads, "the head never left after the credit arrived"
    assert heads[0] == credit_cycle + 3, (f"head on the output in cycle {heads[0]}, credit "
                                          f"in {credit_cycle}: expected 3 cycles later")
    assert [c for c, _ in arrivals] == list(range(heads[0], heads[0] + length))
    # zero-load timing: an empty output VC, a head written in cycle t is out in t + 3
    await b.load_table([(row, dst + 1, 2, 1 % V, 1 % V) for row in range(V)])
    other = []
    await b.tick()
    b.inputs[1].send((True, True, 0, b.payload.data(pid + 1, 0, dst + 1, 1)))
    written = b.cycle
    await b.tick()
    b.inputs[1].send(None)
    for _ in range(6):
        await b.tick()
        f = b.outputs[2].read()
        if f is not None:
            other.append((b.cycle, f))
    assert [c for c, _ in other] == [written + 3], (written, other)
    assert read_int(dut.error) == 0


@cocotb.test()
async def error_flags(dut):
    """Each error flag rises on its fault in the documented cycle and no other bit with it,
    the fault's effect is contained (a refused table entry is not written, an unrouted head
    waits without blocking other VCs), and ``clear`` lowers them. A fault driven at one
    falling edge is sampled at the next rising edge: the table, length, protocol and
    ejection-credit bits are up at the falling edge after it; an unrouted head is written
    in that cycle and waits from the next, so its bit comes one cycle later. The accepted
    boundary (port P - 1, row and VC V - 1, length ``packet``, the 2B-th flit of a full
    VC) raises nothing."""
    b = Bench(dut, seed=2)
    rng = b.rng
    await b.reset()
    P, V, B, dut_ = b.P, b.V, b.B, dut
    vb = max(1, (V - 1).bit_length())
    pb = max(1, (P - 1).bit_length())
    lb = b.L.bit_length()

    def error():
        return read_int(dut_.error)

    def bit(name):
        return 1 << ERROR_BITS[name]

    async def send_one(port, flit):
        """One flit on input ``port`` at a falling edge, nothing from the next (where the
        flags it raises are up)."""
        await b.tick()
        b.inputs[port].send(flit)
        await b.tick()
        b.inputs[port].send(None)

    async def clear():
        await b.tick()
        dut_.clear.value = 1
        await b.tick()
        dut_.clear.value = 0
        assert error() == 0

    def with_length(data, length):
        return data & ~(((1 << lb) - 1) << b.DW) | length << b.DW

    # a good entry for destination 5, then refused entries for it: the good one stays. The
    # highest port, row and VC are accepted (no flag) and routed; one beyond each, and the
    # top of each field, refused
    await b.load_table([(0, 5, 1, 0, 0)])
    assert error() == 0, "a good entry flagged"
    top = (V - 1, 6, P - 1, V - 1, V - 1)
    await b.load_table([top])
    assert error() == 0, f"entry {top} (the highest port, row and VC) refused"
    bad = [(0, 5, 2, 1, 0)] if V > 1 else []                     # lo > hi
    for w in sorted({V, (1 << vb) - 1} if V < 1 << vb else ()):
        bad += [(0, 5, 2, 0, w), (w, 5, 2, 0, 0)]               # VC / row beyond the last
    for port in sorted({P, (1 << pb) - 1} if P < 1 << pb else ()):
        bad.append((0, 5, port, 0, 0))                           # port beyond the last
    for entry in bad:
        assert error() == 0
        await b.load_table([entry], record=False)
        assert error() == bit("table"), f"entry {entry}: error {error():#b} one cycle after"
        await clear()
    # the good entries still route destination 5 to port 1, and 6 (row V - 1) to P - 1,
    # and leave with them as their routes downstream (no refused entry was written there)
    await b.tick()
    b.inputs[0].send((True, True, 0, b.payload.data(1, 0, 5, 1)))
    b.inputs[1].send((True, True, V - 1, b.payload.data(5, 0, 6, 1)))
    await b.tick()
    b.inputs[0].send(None)
    b.inputs[1].send(None)
    seen = []
    for _ in range(5):
        await b.tick()
        for q in range(P):
            f = b.outputs[q].read()
            if f is not None:
                seen.append(q)
                b.check_route(q, f)
    assert seen == [1, P - 1], f"destinations 5 and 6 left on {seen}, not 1 and {P - 1}"
    assert b.routes_checked == 2, f"{b.routes_checked} of 2 routes downstream checked"
    assert error() == 0

    # a head of length 0 and every length longer than `packet` that the field holds (each
    # has its own comparator: one checked alone leaves the others untested); `packet`
    # itself is a good length
    for length in [b.L, 0, *range(b.L + 1, 1 << lb)]:
        assert error() == 0
        good = length == b.L
        await send_one(1, (True, not good or b.L == 1, 0,
                           with_length(b.payload.data(4, 0, 5, 1), length)))
        want = 0 if good else bit("length")
        assert error() == want, f"a head of length {length}: error {error():#b} one cycle after"
        for _ in range(6):
            await b.tick()
        if good:                       # its other flits, so that the VC is free again
            for s in range(1, b.L):
                await send_one(1, (False, s == b.L - 1, 0, b.payload.data(4, s, 5, b.L)))
            for _ in range(b.L + 4):
                await b.tick()
            assert error() == 0
        else:
            await clear()

    # a flit into a full VC: route destination 7 to an output no flit took a credit of yet
    # and that gets no credits back; B one-flit packets cross and take its B credits, then
    # B more fill the input VC (no flag), and the next is written into a full VC (the flag,
    # at the falling edge after it)
    await b.load_table([(0, 7, 3, 0, 0)])
    crossed = 0
    for k in range(B):
        await send_one(2, (True, True, 0, b.payload.data(10 + k, 0, 7, 1)))
        for _ in range(3):
            await b.tick()
            crossed += b.outputs[3].read() is not None
    assert crossed == B and error() == 0, f"{crossed} of {B} flits crossed to a free output"
    for k in range(B + 1):
        await b.tick()
        assert error() == 0, f"the flag after {k} of {B} flits that fit the input VC"
        b.inputs[2].send((True, True, 0, b.payload.data(10 + B + k, 0, 7, 1)))
    await b.tick()
    b.inputs[2].send(None)
    assert error() == bit("protocol"), f"flit {B + 1} into a full VC: error {error():#b}"
    await clear()

    # a credit on the ejection port, and a credit VC number there without the credit bit
    # (every bit of the field alone)
    for credit, vc in [(1, 0)] + [(0, 1 << k) for k in range(vb)]:
        await b.tick()
        assert error() == 0
        b.outputs[0].credit_vc.value = vc
        b.outputs[0].credit.value = credit
        await b.tick()
        b.outputs[0].credit_vc.value = 0
        b.outputs[0].credit.value = 0
        assert error() == bit("eject_credit"), (f"ejection credit {credit}, VC {vc}: error "
                                                f"{error():#b} one cycle after")
        await clear()

    # a head whose route names a port beyond the last (where the field holds one) is a head
    # without a route: it waits and is flagged, as below; a reset drops it
    for port in sorted({P, (1 << pb) - 1} if P < 1 << pb else ()):
        await b.tick()
        b.inputs[4].link.send((True, True, 0, b.payload.data(7, 0, 5, 1)),
                              encode_route(port, 0, 0, ports=P, vcs=V))
        await b.tick()
        b.inputs[4].send(None)
        assert error() == 0, f"route to port {port}: the flag in the cycle it is written"
        await b.tick()
        assert error() == bit("no_route"), f"route to port {port}: error {error():#b}"
        await b.reset()
        assert error() == 0

    # a route to a link port with no VC (lo > hi leaves the mask empty) is no route either
    await b.tick()
    b.inputs[4].link.send((True, True, 0, b.payload.data(7, 0, 5, 1)),
                          encode_route(2, 1, 0, ports=P, vcs=V))
    await b.tick()
    b.inputs[4].send(None)
    assert error() == 0, "a route without a VC: the flag in the cycle it is written"
    await b.tick()
    assert error() == bit("no_route"), f"a route without a VC: error {error():#b}"
    await b.reset()
    assert error() == 0

    # a head for a destination never loaded (in any test of this simulation: reset keeps
    # the table): written in one cycle, waiting, flagged, from the next ...
    never = next(d for d in range(9, 1 << b.DW) if d not in LOADED)
    await send_one(3, (True, True, 0, b.payload.data(2, 0, never, 1)))
    assert error() == 0, "the no-route flag in the cycle the head is written"
    await b.tick()
    assert error() == bit("no_route"), f"an unrouted head waiting: error {error():#b}"
    # ... while another VC of the same input still gets through
    if V > 1:
        await b.load_table([(1, 5, 2, 0, 0)])
        await send_one(3, (True, True, 1, b.payload.data(3, 0, 5, 1)))
        got = []
        for _ in range(5):
            await b.tick()
            f = b.outputs[2].read()
            if f is not None:
                got.append(b.payload.ident(f[3]))
        assert got == [(3, 0)], got
    # the route came with the head: loading the entry now does not free it, and its flag
    # comes back in the cycle after every clear while it waits
    await b.load_table([(0, never, 2, 0, 0)])
    for _ in range(6):
        await b.tick()
        assert b.outputs[2].read() is None, "a head routed by an entry loaded after it came"
    await b.tick()
    dut.clear.value = 1
    await b.tick()
    dut.clear.value = 0
    assert error() == 0, "clear did not lower the flag"
    await b.tick()
    assert error() == bit("no_route")
    b.finish("error_flags", transactions=0)


@cocotb.test()
async def protocol_each_cause(dut):
    """Each cause of the protocol flag alone, everywhere it can happen: a credit returned to
    an output VC that already holds ``depth`` (every output port, every VC: at reset every
    output VC is full), a credit naming a VC >= V and a flit sent on a VC >= V (every output
    and every input port, where V does not fill its field, as at V = 3). The fault is driven
    for one cycle; the flag is exactly the protocol bit at the next falling edge (registered
    at the rising edge that samples the fault) and stays until ``clear``."""
    b = Bench(dut, seed=9)
    rng = b.rng
    await b.reset()
    P, V = b.P, b.V
    vb = max(1, (V - 1).bit_length())
    protocol = 1 << ERROR_BITS["protocol"]
    causes = 0

    async def fault(drive, undrive, what):
        nonlocal causes
        await b.tick()
        assert read_int(dut.error) == 0, f"{what}: a flag before the fault"
        drive()
        await b.tick()
        undrive()
        got = read_int(dut.error)
        assert got == protocol, f"{what}: error {got:#b} one cycle after, not {protocol:#b}"
        await b.tick()
        assert read_int(dut.error) == protocol, f"{what}: the flag did not stay"
        dut.clear.value = 1
        await b.tick()
        dut.clear.value = 0
        causes += 1

    for q in range(1, P):
        out = b.outputs[q]
        for w in [*range(V), *([V] if V < 1 << vb else [])]:
            await fault(lambda: out.send_credit(w), lambda: out.send_credit(None),
                        f"credit on output {q} VC {w}")
    if V < 1 << vb:
        for p in range(P):
            inp = b.inputs[p]
            flit = (True, True, V, b.payload.data(90 + p, 0, 5, 1))
            await fault(lambda: inp.send(flit), lambda: inp.send(None),
                        f"flit on input {p} VC {V}")
    # none of it touched a buffer or a credit: a packet still crosses
    await b.load_table([(0, 5, 1, 0, 0)])
    await b.tick()
    b.inputs[0].send((True, True, 0, b.payload.data(99, 0, 5, 1)))
    await b.tick()
    b.inputs[0].send(None)
    seen = []
    for _ in range(6):
        await b.tick()
        seen += [q for q in range(P) if b.outputs[q].read() is not None]
    assert seen == [1], f"after the faults destination 5 left on {seen}"
    assert read_int(dut.error) == 0
    b.finish("protocol_each_cause", transactions=causes)
