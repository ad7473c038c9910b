"""cocotb testbench: a k x k mesh of router RTL against the cycle-level network simulator.

The packets are those the simulator's own Bernoulli source creates for a pattern and a rate
(``synthesize``); the simulator replays them as a trace (``models.railx.mesh.replay``) with
the same dimension-order tables the RTL loads through its ``table`` stream. Checks, per
cycle: each chip's injection must equal what a source following the simulator's rule would
inject (a packet waits in an unbounded queue until its creation cycle and a local VC with
room for all of it, round robin from the VC after the last used, one flit a cycle), the room
counted from the credits the RTL returns (so the RTL's credits are right: the rule's choice
equals the simulator's injection, and no VC ever holds more than ``depth`` credits); each
chip's ejected flit must equal the simulator's (same cycle, same packet, same flit). Checked
on the RTL alone: every packet leaves at its destination chip, its flits in sequence, none
lost or duplicated, and the error flags stay low. Scenarios: uniform and transpose traffic,
below and above saturation, then a drain. ``errors_at_every_chip``: each router's flags reach
the top's ``error``.

On ``cosim.testbench``: the clock runs in the simulator and the cycle loop
(``Testbench.run``) wakes once a cycle, at the falling edge, where it reads the registered
outputs (each chip's ejection, each injection port's credit, the error flags) straight from
the simulator handles and records them, then drives the injections of the next rising edge. Those injections are
the simulator's, formatted before the loop; the source rule is replayed in the batch check on
the credits the RTL returned, and until the first cycle in which the rule's choice differs
from the simulator's (a failure, reported with that cycle) the two are the same stimulus.
The records are checked every ``CHECK_EVERY`` cycles and at the end of a scenario, cycle by
cycle in the order of the per-cycle testbench (a cycle's ejections chip by chip, then its
credits, its error flags, its injections), so the first failure raises the per-cycle
message, which names the cycle, although it is found up to ``CHECK_EVERY`` cycles later.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left
from collections import deque
from itertools import compress
from operator import call

import cocotb
import numpy as np

from aifabric.cosim.batch import gc_paused
from aifabric.cosim.codec import decode_flit, encode_entry, encode_route, width_of
from aifabric.cosim.noc import (ID_BITS, IdleTable, Link, OutputChecker, Payload, RouteTables,
                                expect_flags, read_int, reset_idle)
from aifabric.cosim.testbench import Testbench
from aifabric.models.common.netsim import Traffic
from aifabric.models.common.netsim.traffic import synthesize
from aifabric.models.railx.mesh import mesh_network, replay, table_entries
from aifabric.rtl.railx.mesh import RouterMesh

# (pattern, rate in flits/cycle/chip, cycles of packet creation): below and above saturation
SCENARIOS = (("uniform", 0.15, 1500), ("uniform", 0.8, 1200), ("transpose", 0.1, 1500),
             ("transpose", 0.6, 1200))
DRAIN = 6000
CHECK_EVERY = 256      # cycles recorded between two batch checks
_NEVER = (1 << 62, 0)


class MeshBench(Testbench):
    """The mesh on the testbench layer: its links (``inject``, ``eject``, the edge stubs),
    the ``table`` stream, the simulator's network of the same parameters."""

    def __init__(self, dut, *, seed: int = 0) -> None:
        super().__init__(dut, RouterMesh, seed=seed)
        prm = self.params
        self.k, self.P, self.V = prm["k"], prm["ports"], prm["vcs"]
        self.B, self.L, self.DW = prm["depth"], prm["packet"], prm["dst_width"]
        self.allocator = prm.get("allocator", "separable")
        self.n = self.k * self.k
        self.payload = Payload(self.DW, self.L, prm["data"])
        self.payload.check_width(prm["data"])
        self.net = mesh_network(self.k, vcs=self.V, delay=prm.get("delay", 1), ports=self.P)
        # the tables as loaded: the routes heads carry into a chip (lookahead routing; at
        # the local port its source's, the bench's)
        self.tables = RouteTables(ports=self.P, vcs=self.V, dst_width=self.DW)
        self.inject = [self.tables.link(link, c, True)
                       for c, link in enumerate(Link.ports(self, "inject", self.V))]
        self.eject = Link.ports(self, "eject", self.V)
        self.edges = list(zip([self.tables.link(link, c, False) for (c, _), link in
                               zip(self.component.edges, Link.ports(self, "edge_i", self.V))],
                              Link.ports(self, "edge_o", self.V)))
        self.table = self.bus("table")
        self.per_src = 1 << (ID_BITS - width_of(self.n))   # packet numbers per chip
        self.flit_width = self.inject[0].bus.width("flit")
        self.iteration = -1           # the cycle loop's last iteration (scenario())

    async def reset(self) -> None:
        """Reset (the routing tables, memories, survive it), the links and the stubs at the
        mesh's edge idle; then one idle cycle out of reset."""
        await reset_idle(self, self.inject, self.edges)

    async def load_tables(self) -> None:
        """Every router's entries through ``table``, one a cycle; ``table.ready`` must be
        high whenever one is offered (the routers take an entry every cycle)."""
        rb = width_of(self.n + len(self.component.edges))   # router k * k + e: beyond edge e

        def word(r, entry):
            return r | encode_entry(*entry, ports=self.P, vcs=self.V, dst_width=self.DW) << rb
        entries = [(r, e) for r in range(self.n) for e in table_entries(self.net, r)]
        if not any(isinstance(c, IdleTable) for c in self.components):
            self.add(IdleTable.of(self.table, entries, self.V, word))
        for r, entry in entries:
            self.tables.load(r, *entry)
            await self.tick()
            assert read_int(self.table.ready) == 1, f"table not ready for router {r}'s entry"
            self.table.payload.value = word(r, entry)
            self.table.valid.value = 1
        await self.tick()
        self.table.valid.value = 0

    def pid(self, tag: int) -> int:
        src, k = tag >> 32, tag & 0xFFFFFFFF
        assert k < self.per_src, "too many packets per chip for the payload's packet field"
        return src * self.per_src + k

    async def scenario(self, pattern: str, rate: float, cycles: int, seed: int,
                       plant=None) -> dict:
        """One run: the packets of ``cycles`` cycles, then a drain. Returns statistics.
        ``plant(model)`` may change the simulator's record before anything is checked (a
        planted wrong expected value, to test the checks)."""
        n = self.n
        traffic = Traffic.make(pattern, self.net.coords, self.net.grid)
        rows = synthesize(traffic, rate, self.L, cycles, seed=seed)
        model = replay(self.net, rows, buffer=self.B, cycles=cycles + DRAIN,
                       allocator=self.allocator, router="registered")
        queues = [deque() for _ in range(n)]
        for t, src, dst, flits in rows:          # sorted by (src, cycle): k counts per src
            src = int(src)
            queues[src].append((int(t), int(dst), int(flits), src << 32 | len(queues[src])))
        packets = {tag: (t, dst, flits) for q in queues for t, dst, flits, tag in q}
        total = len(packets)
        with gc_paused():        # see cosim.batch.gc_paused
            start_wall = time.perf_counter()          # the cycle loop only, not the model's run
            start_cpu = time.process_time()
            if plant is not None:
                plant(model)
            check = ScenarioCheck(self, model, packets, queues)
            plan = self.drive_plan(check)
            last = cycles + DRAIN
            stop = check.stop(cycles, last)
            # per chip: ejection valid and flit, credit and its VC (read where valid)
            ej_valid = [link.bus.reader("valid") for link in self.eject]
            ej_bits = [link.bus.bits_reader("flit") for link in self.eject]
            cr_valid = [link.bus.reader("credit") for link in self.inject]
            cr_vc = [link.bus.reader("credit_vc") for link in self.inject]
            chips = range(n)
            error = self.bus().reader("error")
            ejected, returned, errors = [], [], []     # (t, chip, bits), (t, chip, VC), (t, flags)
            put_ejected, put_returned = ejected.append, returned.append
            first = 0                                  # the first cycle not yet checked

            def cycle(t):
                """Iteration t, at the falling edge before rising edge t; True: done."""
                nonlocal first
                self.iteration = t
                # outputs of cycle t - 1: ejections; credits returned for cycle t; error flags
                for c in compress(chips, map(call, ej_valid)):
                    put_ejected((t, c, ej_bits[c]()))
                for c in compress(chips, map(call, cr_valid)):
                    put_returned((t, c, cr_vc[c]()))
                flags = error()
                if flags:
                    errors.append((t, flags))
                if t == stop:                          # every packet delivered (see stop())
                    check.run(ejected, returned, errors, first, t + 1, inject_until=t)
                    return True
                # injections of cycle t
                for put, value in plan.get(t, ()):
                    put(value)
                if t + 1 - first >= CHECK_EVERY or t == last:
                    check.run(ejected, returned, errors, first, t + 1, inject_until=t + 1)
                    ejected.clear()
                    returned.clear()
                    errors.clear()
                    first = t + 1
                return False

            t = await self.run(cycle, min(stop, last) + 1, gc_off=False) - 1
        assert check.delivered == total, f"{total - check.delivered} of {total} packets not " \
                                         f"delivered"
        for c, chk in enumerate(check.checkers):
            assert not chk.open, f"chip {c}: packets still open {chk.open}"
        flits_out = check.flits_out
        lat = np.array(check.latencies) if check.latencies else np.zeros(1)
        return {"pattern": pattern, "rate": rate, "traffic_seed": seed, "created_cycles": cycles,
                "packets": total, "flits": flits_out,
                "cycles": t, "latency_mean": round(float(lat.mean()), 2),
                "latency_p99": float(np.percentile(lat, 99)),
                "accepted": round(flits_out / (t * n), 3),
                "seconds": round(time.perf_counter() - start_wall, 2),
                "cpu_seconds": round(time.process_time() - start_cpu, 2)}

    def drive_plan(self, check: "ScenarioCheck") -> dict:
        """The writes of each cycle, ``{cycle: [(write, value), ...]}``: the simulator's
        injections as link values (a flit and ``valid`` where it rises, ``valid`` low where a
        chip stops injecting)."""
        plan: dict = {}
        words = check.words
        shift, fmt = 2 + width_of(self.V), f"0{self.flit_width}b"   # encode_flit, inlined
        for c, injections in enumerate(check.model_inject):
            put_valid = self.inject[c].bus.writer("valid")
            put_flit = self.inject[c].bus.bits_writer("flit")
            put_route = self.inject[c].bus.writer("route")
            before = None
            for t, (v, tag, seq) in injections:
                _, dst, flits = check.packets[tag]
                ops = plan.setdefault(t, [])
                if before is not None and before != t - 1:
                    plan.setdefault(before + 1, []).append((put_valid, 0))
                # the flit's data, kept for the check of its ejection (one computation)
                data = words.get((tag, seq))
                if data is None:
                    for s, word in enumerate(self.payload.packet_words(self.pid(tag), dst,
                                                                       flits)):
                        words[tag, s] = word
                    data = words[tag, seq]
                ops.append((put_flit, format((seq == 0) | (seq == flits - 1) << 1 | v << 2 |
                                             data << shift, fmt)))
                if seq == 0:                   # its route at this chip, from its source
                    ops.append((put_route, self.tables.route(c, 0, data)))
                if before != t - 1:
                    ops.append((put_valid, 1))
                before = t
            if before is not None:
                plan.setdefault(before + 1, []).append((put_valid, 0))
        return plan


class ScenarioCheck:
    """The per-cycle checks of one scenario, run on the records of many cycles at once.

    Cycle loop iteration ``t`` (the falling edge before rising edge ``t``) records the
    ejections and error flags of cycle ``t - 1`` and the credits returned for cycle ``t``,
    then injects cycle ``t``'s flits. :meth:`run` checks iterations ``first .. until - 1``
    in the per-cycle testbench's order and raises the first failure with its message:
    a cycle's ejections chip by chip (the simulator's flit, the output rules of
    :class:`~cosim.noc.OutputChecker`, the destination), then its credits (at most
    ``depth`` a VC), its error flags, and the source rule's injection chip by chip against
    the simulator's.
    """

    def __init__(self, bench: MeshBench, model, packets: dict, queues) -> None:
        self.bench, self.packets = bench, packets
        n, V, B = bench.n, bench.V, bench.B
        # the simulator's ejections in (iteration, chip) order
        self.model_eject = sorted((t + 1, c, tag, seq)
                                  for (t, c), (tag, seq) in model.ejected.items())
        self.model_injected = model.injected
        self.next_eject = 0
        # the simulator's injections per chip, by cycle; the source rule's state per chip
        self.model_inject = [[] for _ in range(n)]
        for (t, c), what in sorted(model.injected.items()):
            self.model_inject[c].append((t, what))
        self.next_inject = [0] * n
        self.queues = [list(q) for q in queues]
        self.head = [0] * n                       # the queue's first packet not yet started
        self.credits = [[B] * V for _ in range(n)]
        self.writing = [None] * n                 # (VC, tag, next flit)
        self.inj_next = [0] * n
        seen: set = set()
        self.checkers = [OutputChecker(f"chip {c} ejection", bench.payload, interleave=True,
                                       seen=seen) for c in range(n)]
        self.latencies, self.delivered, self.flits_out = [], 0, 0
        self.words: dict = {}       # (tag, seq) -> the data the flit carries (drive_plan)

    def stop(self, cycles: int, last: int) -> int:
        """The iteration the per-cycle loop leaves at: the first after ``cycles`` by which
        every packet has been delivered. Delivered packets are counted from ejections equal
        to the simulator's, so up to a failure this is the iteration after the simulator's
        last ejection; ``last + 1`` (never) where the simulator does not deliver them all."""
        tails = [t for t, c, tag, seq in self.model_eject if seq == self.packets[tag][2] - 1]
        if len(tails) < len(self.packets):
            return last + 1
        return max(max(tails, default=0), cycles + 1)

    def run(self, ejected, returned, errors, first: int, until: int, *,
            inject_until: int) -> None:
        """Check iterations ``first .. until - 1`` (injections up to ``inject_until - 1``);
        raise the earliest failure, as the per-cycle testbench would have."""
        failures = []
        found = self._ejections(ejected, until)
        if found:
            failures.append(found)
        if errors:
            t, flags = errors[0]
            try:
                assert flags == 0, f"cycle {t - 1}: error flags {flags:05b}"
            except AssertionError as e:
                failures.append(((t, 2, 0), e))
        per_chip = [[] for _ in range(self.bench.n)]
        for t, c, vc in returned:
            per_chip[c].append((t, vc))
        for c, arrivals in enumerate(per_chip):
            found = self._source(c, arrivals, first, until, inject_until)
            if found:
                failures.append(found)
        if failures:
            raise min(failures, key=lambda f: f[0])[1]

    def _ejections(self, ejected, until: int):
        """The ejections of iterations up to ``until - 1`` against the simulator's, in
        (iteration, chip) order; (key, error) of the first failure, else None."""
        bench, payload, packets, V = self.bench, self.bench.payload, self.packets, self.bench.V
        words = self.words
        want, w = self.model_eject, self.next_eject
        count, i = len(want), 0
        vmask, dshift = (1 << width_of(V)) - 1, 2 + width_of(V)   # decode_flit, inlined
        # Fast path: while the RTL's ejections are the simulator's, pair by pair (same
        # iteration and chip, the same link word), only the output rules and the
        # destination remain to check. At the first pair that differs the general merge
        # below takes over from there and raises the per-cycle message.
        checkers, latencies = self.checkers, self.latencies
        end = bisect_left(want, (until,), lo=w)
        try:
            for r, m in zip(ejected, want[w:end]):
                t, c, bits = r
                if t != m[0] or c != m[1]:
                    break
                tag, seq = m[2], m[3]
                created, dst, flits = packets[tag]
                data = words.get((tag, seq))
                if data is None:
                    data = payload.data(bench.pid(tag), seq, dst, flits)
                head, tail = seq == 0, seq == flits - 1
                if int(bits, 2) != head | tail << 1 | data << dshift:
                    break
                i += 1
                w += 1
                checkers[c].check(t - 1, (head, tail, 0, data))
                if head:
                    assert payload.head(data)[0] == c, \
                        f"cycle {t - 1}: a packet for chip {dst} left at chip {c}"
                self.flits_out += 1
                if tail:
                    self.delivered += 1
                    latencies.append(t - 1 - created)
        except AssertionError as e:
            return (t, 0, c), e
        try:
            while True:
                r = ejected[i] if i < len(ejected) else None
                m = want[w] if w < count and want[w][0] < until else None
                if r is None and m is None:
                    break
                rk = (r[0], r[1]) if r is not None else _NEVER
                mk = (m[0], m[1]) if m is not None else _NEVER
                if rk < mk:
                    t, c, bits = r
                    got = decode_flit(int(bits, 2), V)
                    assert got is None, f"cycle {t - 1}: chip {c} ejected {got}, model nothing"
                t, c, tag, seq = m
                w += 1
                if rk == mk:
                    word = int(r[2], 2)
                    got = (bool(word & 1), bool(word >> 1 & 1), word >> 2 & vmask, word >> dshift)
                    i += 1
                else:
                    got = None
                created, dst, flits = packets[tag]
                data = words.get((tag, seq))
                if data is None:
                    data = payload.data(bench.pid(tag), seq, dst, flits)
                expect = (seq == 0, seq == flits - 1, 0, data)
                assert got == expect, (f"cycle {t - 1}: chip {c} ejected {got}, model packet "
                                       f"{tag >> 32}:{tag & 0xFFFFFFFF} flit {seq} {expect}")
                self.checkers[c].check(t - 1, got)
                if seq == 0:
                    assert payload.head(got[3])[0] == c, \
                        f"cycle {t - 1}: a packet for chip {dst} left at chip {c}"
                self.flits_out += 1
                if seq == flits - 1:
                    self.delivered += 1
                    self.latencies.append(t - 1 - created)
        except AssertionError as e:
            return (t, 0, c), e
        self.next_eject = w
        return None

    def _source(self, c: int, arrivals, first: int, until: int, inject_until: int):
        """Chip ``c``'s credits and the source rule over iterations ``first .. until - 1``
        (decisions up to ``inject_until - 1``), against the simulator's injections; (key,
        error) of the first failure, else None. Only the cycles where something can change
        are visited: a credit returned, a flit the simulator injects, a flit of the packet
        being written, the queue's first packet reaching its creation cycle."""
        B, V = self.bench.B, self.bench.V
        credits = self.credits[c]
        queue, head = self.queues[c], self.head[c]
        model, m = self.model_inject[c], self.next_inject[c]
        writing, inj_next = self.writing[c], self.inj_next[c]
        a, na = 0, len(arrivals)
        nm, nq = len(model), len(queue)
        t = first
        try:
            while t < until:
                while a < na and arrivals[a][0] == t:      # credits returned for cycle t
                    vc = arrivals[a][1]
                    a += 1
                    credits[vc] += 1
                    try:
                        assert credits[vc] <= B, f"cycle {t}: chip {c} VC {vc}: over {B} credits"
                    except AssertionError as e:
                        return (t, 1, c), e
                if t >= inject_until:
                    break
                # injection of cycle t, by the simulator's source rule
                if writing is None and head < nq and queue[head][0] <= t:
                    _, dst, flits, tag = queue[head]
                    for i in range(V):
                        v = (inj_next + i) % V
                        if credits[v] >= flits:
                            head += 1
                            writing = (v, tag, 0)
                            inj_next = (v + 1) % V
                            break
                if writing is not None:
                    v, tag, seq = writing
                    flits = self.packets[tag][2]
                    credits[v] -= 1
                    writing = None if seq == flits - 1 else (v, tag, seq + 1)
                    got = (v, tag, seq)
                else:
                    got = None
                want = None
                if m < nm and model[m][0] == t:
                    want = model[m][1]
                    m += 1
                assert got == want, (
                    f"cycle {t}: chip {c} injects {got}, model {want} "
                    f"(VC, tag, flit): the RTL's credits differ")
                # the next cycle where the rule's choice or the simulator's can change
                if writing is not None:
                    t += 1
                    continue
                nxt = until
                if a < na:
                    nxt = min(nxt, arrivals[a][0])
                if m < nm:
                    nxt = min(nxt, model[m][0])
                if head < nq:
                    created, _, flits, _ = queue[head]
                    if created > t + 1:
                        nxt = min(nxt, created)
                    elif any(x >= flits for x in credits):
                        nxt = t + 1
                t = max(nxt, t + 1)
        except AssertionError as e:
            return (t, 3, c), e
        self.head[c], self.next_inject[c] = head, m
        self.writing[c], self.inj_next[c] = writing, inj_next
        return None


@cocotb.test()
async def traffic_patterns(dut):
    """Uniform and transpose traffic below and above saturation: every injection and every
    ejection in the same cycle as the simulator's."""
    b = MeshBench(dut)
    scale = float(os.environ.get("AIFABRIC_MESH_SCALE", "1"))
    b.log.info("%dx%d mesh, P=%d V=%d B=%d %s; %s", b.k, b.k, b.P, b.V, b.B,
               b.allocator, b.seed_text())
    await b.reset()
    await b.load_tables()
    start = b.meter.cycles
    flits, results = 0, []
    for k, (pattern, rate, cycles) in enumerate(SCENARIOS):
        res = await b.scenario(pattern, rate, max(100, int(cycles * scale)),
                               seed=int(cocotb.RANDOM_SEED % (1 << 40)) * 10 + k)
        b.log.info("%s", res)
        results.append(res)
        flits += res["flits"]
        # the next scenario starts, like the simulator, from reset (round-robin pointers,
        # credits); the routing tables stay
        await b.reset()
    b.finish("traffic_patterns", transactions=flits, cycles=b.meter.cycles - start,
             scenarios=results)


@cocotb.test()
async def edge_and_rail_ports(dut):
    """The ports that leave the mesh are real links: a packet routed out of chip 0's west
    edge leaves on its ``edge_o`` (whole, in order, one flit a cycle, within the credits the
    edge returns), and packets coming in on an east edge and on a rail port reach their
    destination chips, returning a credit per flit on ``edge_i``."""
    from aifabric.rtl.railx.mesh import edge_ports
    b = MeshBench(dut)
    await b.reset()
    await b.load_tables()
    edges = edge_ports(b.k, b.P)
    west0 = edges.index((0, 2))
    last = b.n - 1
    east = edges.index((last, 1))
    rail = edges.index((b.n // 2, 5)) if b.P > 5 else None
    rb, V = width_of(b.n + len(edges)), b.V
    # chip 0 sends chip `last`'s packets out of its west edge (row 0: from its local port)
    await b.tick()
    b.table.payload.value = 0 | encode_entry(0, last, 2, 0, V - 1, ports=b.P, vcs=V,
                                             dst_width=b.DW) << rb
    b.tables.load(0, 0, last, 2, 0, V - 1)
    b.table.valid.value = 1
    # the router beyond that edge (router k * k + e): its rows give the head its route there,
    # a different port per row (the head leaves on output VC 0, so row 0's)
    beyond = [(row, last, 3 + row % 2, row, V - 1) for row in range(V)]
    for row, dst, port, lo, hi in beyond:
        await b.tick()
        b.table.payload.value = (b.n + west0) | encode_entry(
            row, dst, port, lo, hi, ports=b.P, vcs=V, dst_width=b.DW) << rb
    await b.tick()
    b.table.valid.value = 0
    length = min(4, b.L)
    out_in, out_edge = b.edges[west0]
    seen_edge, ejected, credits_back = [], {}, {east: 0, rail: 0}
    head_route = None
    sent = {east: [], rail: []}
    plan = {east: (last, 3), rail: (b.n // 2, b.n - 2)}   # edge -> (its chip, destination)
    cycle = 0
    for cycle in range(60 + 4 * length):
        await b.tick()
        f = out_edge.read()
        if f is not None:
            seen_edge.append((cycle, f))
            if f[0]:
                head_route = out_edge.read_route()
            out_edge.send_credit(f[2])             # the rail takes it: its slot frees at once
        else:
            out_edge.send_credit(None)
        for c in range(b.n):
            g = b.eject[c].read()
            if g is not None:
                ejected.setdefault(c, []).append(g)
        for e in (east, rail):
            if e is not None and b.edges[e][0].read_credit() is not None:
                credits_back[e] += 1
        # drive: chip 0's local packet, and one packet into each incoming edge
        if cycle < length:
            b.inject[0].send((cycle == 0, cycle == length - 1, 0,
                              b.payload.data(1, cycle, last, length)))
        else:
            b.inject[0].send(None)
        for e, pid in ((east, 2), (rail, 3)):
            if e is None:
                continue
            _, dst = plan[e]
            if cycle < length:
                flit = (cycle == 0, cycle == length - 1, 0,
                        b.payload.data(pid, cycle, dst, length))
                b.edges[e][0].send(flit)
                sent[e].append(flit)
            else:
                b.edges[e][0].send(None)
    assert [f for _, f in seen_edge] == [(s == 0, s == length - 1, f[2],
                                          b.payload.data(1, s, last, length))
                                         for s, (_, f) in enumerate(seen_edge)], seen_edge
    assert len(seen_edge) == length, f"{len(seen_edge)} of {length} flits left the edge"
    assert seen_edge[0][1][2] == 0
    assert head_route == encode_route(3, 0, V - 1, ports=b.P, vcs=V), \
        f"the head left with route {head_route:#x}, not its route beyond the edge"
    assert [c for c, _ in seen_edge] == list(range(seen_edge[0][0], seen_edge[0][0] + length))
    for e in (east, rail):
        if e is None:
            continue
        _, dst = plan[e]
        assert ejected.get(dst) == [(f[0], f[1], 0, f[3]) for f in sent[e]], \
            f"edge {edges[e]}: chip {dst} ejected {ejected.get(dst)}"
        assert credits_back[e] == length, f"edge {edges[e]}: {credits_back[e]} credits back"
    assert read_int(dut.error) == 0
    b.finish("edge_and_rail_ports", transactions=0, cycles=cycle)


@cocotb.test()
async def errors_at_every_chip(dut):
    """The top's ``error`` is every router's, ORed: a head of length 0 injected at each chip
    in turn (to itself: it enters no other router) raises the length bit alone at the next
    falling edge, and ``clear`` lowers it. Random traffic never raises a flag, so a router
    left out of the OR went unseen."""
    b = MeshBench(dut, seed=3)
    await b.reset()
    await b.load_tables()
    length_bit = 1 << 2                     # ERROR_BITS["length"] of rtl.railx.router
    field = ((1 << b.L.bit_length()) - 1) << b.DW
    for c in range(b.n):
        await b.tick()
        assert read_int(dut.error) == 0, f"chip {c}: a flag before the fault"
        b.inject[c].send((True, True, 0, b.payload.data(100 + c, 0, c, 1) & ~field))
        await b.tick()
        b.inject[c].send(None)
        await expect_flags(b, length_bit, f"chip {c}, one cycle after a head of length 0")
    await b.tick()
    assert read_int(dut.error) == 0
    b.finish("errors_at_every_chip", transactions=b.n)


@cocotb.test()
async def batch_check_names_the_cycle(dut):
    """The batched checks are live and name the cycle: a planted wrong expected value (one
    ejection of the simulator's record changed to the next flit of its packet) fails with
    the per-cycle message and that ejection's cycle, found at a batch check after it."""
    b = MeshBench(dut)
    await b.reset()
    await b.load_tables()
    pattern, rate, cycles = "uniform", 0.3, 2 * CHECK_EVERY
    seed = int(cocotb.RANDOM_SEED % (1 << 40)) * 10 + 7
    rows = synthesize(Traffic.make(pattern, b.net.coords, b.net.grid), rate, b.L, cycles,
                      seed=seed)
    counts, packets = [0] * b.n, {}          # tag -> (destination, flits), as scenario() tags
    for _, src, dst, flits in rows:
        packets[int(src) << 32 | counts[int(src)]] = (int(dst), int(flits))
        counts[int(src)] += 1
    planted = {}

    def plant(model):
        # the first ejection of a body flit that is not a tail, past the first batch
        for (t, c), (tag, seq) in sorted(model.ejected.items()):
            dst, flits = packets[tag]
            if t >= CHECK_EVERY and 0 < seq < flits - 1:
                planted.update(cycle=t, chip=c, tag=tag, seq=seq, dst=dst, flits=flits)
                model.ejected[(t, c)] = (tag, seq + 1)
                return
        raise AssertionError("no body flit ejected after the first batch to plant on")

    try:
        await b.scenario(pattern, rate, cycles, seed, plant=plant)
    except AssertionError as e:
        message = str(e).splitlines()[0]   # pytest's explanation of the assert follows
    else:
        raise AssertionError("the planted expected value was not caught")
    found_at = b.iteration                         # the loop iteration that raised
    p = planted
    tag, seq, dst, flits = p["tag"], p["seq"], p["dst"], p["flits"]
    got = (False, False, 0, b.payload.data(b.pid(tag), seq, dst, flits))
    want = (False, seq + 1 == flits - 1, 0, b.payload.data(b.pid(tag), seq + 1, dst, flits))
    assert message == (f"cycle {p['cycle']}: chip {p['chip']} ejected {got}, model packet "
                       f"{tag >> 32}:{tag & 0xFFFFFFFF} flit {seq + 1} {want}"), message
    assert found_at > p["cycle"] + 1, (found_at, p["cycle"])
    assert found_at % CHECK_EVERY == CHECK_EVERY - 1, f"raised in iteration {found_at}, " \
                                                      f"not at a batch check"
    b.finish("batch_check_names_the_cycle", transactions=0, cycles=found_at + 1,
             planted_cycle=p["cycle"], found_at=found_at)
