"""The router mesh's co-simulation as it was before the batched testbench (kept unchanged for
``make bench``, which times it against ``cosim/test_mesh.py`` in the same run: two triggers
per clock, a Python clock, each output checked in the cycle it appears). Not run by the
regression. Changed only to draw the seeds cocotb gives the new module's tests (``_seed``)
and to report the cycle loop's CPU seconds beside its wall seconds (``cpu_seconds``).

cocotb testbench: a k x k mesh of router RTL against the cycle-level network simulator.

The packets are those the simulator's own Bernoulli source creates for a pattern and a rate
(``synthesize``); the simulator replays them as a trace (``models.railx.mesh.replay``) with
the same dimension-order tables the RTL loads through its ``table`` stream. A source per chip
injects them into the RTL by the simulator's rule (a packet waits in an unbounded queue
until its creation cycle and a local VC with room for all of it, round robin from the VC
after the last used, one flit a cycle), counting the room from the credits the RTL returns.
Every cycle, each chip's injection must equal the simulator's (so the RTL's credits are
right) and each chip's ejected flit must equal the simulator's (same cycle, same packet,
same flit). Checked on the RTL alone: every packet leaves at its destination chip, its
flits in sequence, none lost or duplicated, and the error flags stay low. Scenarios:
uniform and transpose traffic, below and above saturation, then a drain.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import deque

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from aifabric.cosim.codec import encode_entry, width_of
from aifabric.cosim.noc import ID_BITS, Link, OutputChecker, Payload, read_int
from aifabric.cosim.stats import CycleMeter, block_params, record_stats
from aifabric.models.common.netsim import Traffic
from aifabric.models.common.netsim.traffic import synthesize
from aifabric.models.railx.mesh import mesh_network, replay, table_entries

# (pattern, rate in flits/cycle/chip, cycles of packet creation): below and above saturation
SCENARIOS = (("uniform", 0.15, 1500), ("uniform", 0.8, 1200), ("transpose", 0.1, 1500),
             ("transpose", 0.6, 1200))
DRAIN = 6000

def _seed(test: str) -> int:
    """The seed cocotb gives ``cosim.test_mesh.<test>`` (it hashes a test's module and name into its
    seed), so that this copy draws the same stimulus as the testbench it is timed against."""
    own = int(hashlib.sha1(f"{__name__}.{test}".encode()).hexdigest(), 16)
    theirs = int(hashlib.sha1(f"aifabric.cosim.test_mesh.{test}".encode()).hexdigest(), 16)
    return cocotb.RANDOM_SEED - own + theirs



class MeshBench:
    def __init__(self, dut, rng) -> None:
        prm = block_params()
        self.dut, self.rng = dut, rng
        self.k, self.P, self.V = prm["k"], prm["ports"], prm["vcs"]
        self.B, self.L, self.DW = prm["depth"], prm["packet"], prm["dst_width"]
        self.allocator = prm.get("allocator", "separable")
        self.n = self.k * self.k
        self.payload = Payload(self.DW, self.L, prm["data"])
        self.payload.check_width(prm["data"])
        self.net = mesh_network(self.k, vcs=self.V, delay=prm.get("delay", 1), ports=self.P)
        self.inject = [Link(dut, "inject", c, self.V) for c in range(self.n)]
        self.eject = [Link(dut, "eject", c, self.V) for c in range(self.n)]
        self.edges = []
        e = 0
        while hasattr(dut, f"edge_i__{e}__valid"):
            self.edges.append((Link(dut, "edge_i", e, self.V), Link(dut, "edge_o", e, self.V)))
            e += 1
        self.per_src = 1 << (ID_BITS - width_of(self.n))   # packet numbers per chip
        self.meter = None

    async def reset(self) -> None:
        """Reset (the routing tables, memories, survive it)."""
        dut = self.dut
        if self.meter is None:
            Clock(dut.clk, 10, unit="ns").start()
        for link in self.inject:
            link.send(None)
        for i, o in self.edges:                          # the stubs at the mesh's edge
            i.send(None)
            o.send_credit(None)
        dut.table__valid.value = 0
        dut.clear.value = 0
        dut.rst.value = 1
        for _ in range(2):
            await FallingEdge(dut.clk)
        dut.rst.value = 0
        if self.meter is None:
            self.meter = CycleMeter(10)

    async def load_tables(self) -> None:
        dut = self.dut
        rb = width_of(self.n)
        for r in range(self.n):
            for row, dst, port, lo, hi in table_entries(self.net, r):
                await FallingEdge(dut.clk)
                entry = encode_entry(row, dst, port, lo, hi, ports=self.P, vcs=self.V,
                                     dst_width=self.DW)
                dut.table__payload.value = r | entry << rb
                dut.table__valid.value = 1
        await FallingEdge(dut.clk)
        dut.table__valid.value = 0

    def pid(self, tag: int) -> int:
        src, k = tag >> 32, tag & 0xFFFFFFFF
        assert k < self.per_src, "too many packets per chip for the payload's packet field"
        return src * self.per_src + k

    async def scenario(self, pattern: str, rate: float, cycles: int, seed: int) -> dict:
        """One run: the packets of ``cycles`` cycles, then a drain. Returns statistics."""
        dut, n, V, B = self.dut, self.n, self.V, self.B
        traffic = Traffic.make(pattern, self.net.coords, self.net.grid)
        rows = synthesize(traffic, rate, self.L, cycles, seed=seed)
        model = replay(self.net, rows, buffer=B, cycles=cycles + DRAIN,
                       allocator=self.allocator)
        queues = [deque() for _ in range(n)]
        for t, src, dst, flits in rows:          # sorted by (src, cycle): k counts per src
            src = int(src)
            queues[src].append((int(t), int(dst), int(flits), src << 32 | len(queues[src])))
        packets = {tag: (t, dst, flits) for q in queues for t, dst, flits, tag in q}
        credits = [[B] * V for _ in range(n)]
        writing = [None] * n                # (VC, tag, next flit)
        inj_next = [0] * n
        seen: set = set()
        checkers = [OutputChecker(f"chip {c} ejection", self.payload, interleave=True,
                                  seen=seen) for c in range(n)]
        latencies, delivered, flits_out = [], 0, 0
        total = len(packets)
        start_wall = time.perf_counter()          # the cycle loop only, not the model's run
        start_cpu = time.process_time()
        for t in range(cycles + DRAIN + 1):
            await FallingEdge(dut.clk)
            # outputs of cycle t - 1: ejections and the injection ports' credits
            for c in range(n):
                got = self.eject[c].read()
                want = model.ejected.get((t - 1, c))
                if want is None:
                    assert got is None, f"cycle {t - 1}: chip {c} ejected {got}, model nothing"
                    continue
                tag, seq = want
                created, dst, flits = packets[tag]
                expect = (seq == 0, seq == flits - 1, 0,
                          self.payload.data(self.pid(tag), seq, dst, flits))
                assert got == expect, (f"cycle {t - 1}: chip {c} ejected {got}, model packet "
                                       f"{tag >> 32}:{tag & 0xFFFFFFFF} flit {seq} {expect}")
                checkers[c].check(t - 1, got)
                if seq == 0:
                    assert self.payload.head(got[3])[0] == c, \
                        f"cycle {t - 1}: a packet for chip {dst} left at chip {c}"
                flits_out += 1
                if seq == flits - 1:
                    delivered += 1
                    latencies.append(t - 1 - created)
            for c in range(n):
                vc = self.inject[c].read_credit()
                if vc is not None:
                    credits[c][vc] += 1
                    assert credits[c][vc] <= B, f"cycle {t}: chip {c} VC {vc}: over {B} credits"
            error = read_int(dut.error)
            assert error == 0, f"cycle {t - 1}: error flags {error:05b}"
            if delivered == total and t > cycles:
                break
            # injections of cycle t, by the simulator's source rule
            for c in range(n):
                flit = None
                if writing[c] is None and queues[c] and queues[c][0][0] <= t:
                    _, dst, flits, tag = queues[c][0]
                    for i in range(V):
                        v = (inj_next[c] + i) % V
                        if credits[c][v] >= flits:
                            queues[c].popleft()
                            writing[c] = (v, tag, 0)
                            inj_next[c] = (v + 1) % V
                            break
                if writing[c] is not None:
                    v, tag, seq = writing[c]
                    _, dst, flits = packets[tag]
                    flit = (seq == 0, seq == flits - 1, v,
                            self.payload.data(self.pid(tag), seq, dst, flits))
                    credits[c][v] -= 1
                    writing[c] = None if seq == flits - 1 else (v, tag, seq + 1)
                    got = (v, tag, seq)
                else:
                    got = None
                assert got == model.injected.get((t, c)), (
                    f"cycle {t}: chip {c} injects {got}, model {model.injected.get((t, c))} "
                    f"(VC, tag, flit): the RTL's credits differ")
                self.inject[c].send(flit)
        assert delivered == total, f"{total - delivered} of {total} packets not delivered"
        for c, chk in enumerate(checkers):
            assert not chk.open, f"chip {c}: packets still open {chk.open}"
        lat = np.array(latencies) if latencies else np.zeros(1)
        return {"pattern": pattern, "rate": rate, "seed": seed, "created_cycles": cycles,
                "packets": total, "flits": flits_out,
                "cycles": t, "latency_mean": round(float(lat.mean()), 2),
                "latency_p99": float(np.percentile(lat, 99)),
                "accepted": round(flits_out / (t * n), 3),
                "seconds": round(time.perf_counter() - start_wall, 2),
                "cpu_seconds": round(time.process_time() - start_cpu, 2)}


@cocotb.test()
async def traffic_patterns(dut):
    """Uniform and transpose traffic below and above saturation: every injection and every
    ejection in the same cycle as the simulator's."""
    rng = np.random.default_rng(_seed("traffic_patterns"))
    b = MeshBench(dut, rng)
    scale = float(os.environ.get("AIFABRIC_MESH_SCALE", "1"))
    dut._log.info("%dx%d mesh, P=%d V=%d B=%d %s, seed %d", b.k, b.k, b.P, b.V, b.B,
                  b.allocator, _seed("traffic_patterns"))
    await b.reset()
    await b.load_tables()
    start = b.meter.cycles
    flits, results = 0, []
    for k, (pattern, rate, cycles) in enumerate(SCENARIOS):
        res = await b.scenario(pattern, rate, max(100, int(cycles * scale)),
                               seed=int(_seed("traffic_patterns") % (1 << 40)) * 10 + k)
        dut._log.info("%s", res)
        results.append(res)
        flits += res["flits"]
        # the next scenario starts, like the simulator, from reset (round-robin pointers,
        # credits); the routing tables stay
        await b.reset()
    record_stats("traffic_patterns", transactions=flits, cycles=b.meter.cycles - start,
                 scenarios=results)


@cocotb.test()
async def edge_and_rail_ports(dut):
    """The ports that leave the mesh are real links: a packet routed out of chip 0's west
    edge leaves on its ``edge_o`` (whole, in order, one flit a cycle, within the credits the
    edge returns), and packets coming in on an east edge and on a rail port reach their
    destination chips, returning a credit per flit on ``edge_i``."""
    from aifabric.rtl.railx.mesh import edge_ports
    rng = np.random.default_rng(_seed("edge_and_rail_ports"))
    b = MeshBench(dut, rng)
    await b.reset()
    await b.load_tables()
    edges = edge_ports(b.k, b.P)
    west0 = edges.index((0, 2))
    last = b.n - 1
    east = edges.index((last, 1))
    rail = edges.index((b.n // 2, 5)) if b.P > 5 else None
    rb, V = width_of(b.n), b.V
    # chip 0 sends chip `last`'s packets out of its west edge (row 0: from its local port)
    await FallingEdge(dut.clk)
    dut.table__payload.value = 0 | encode_entry(0, last, 2, 0, V - 1, ports=b.P, vcs=V,
                                                dst_width=b.DW) << rb
    dut.table__valid.value = 1
    await FallingEdge(dut.clk)
    dut.table__valid.value = 0
    length = min(4, b.L)
    out_in, out_edge = b.edges[west0]
    seen_edge, ejected, credits_back = [], {}, {east: 0, rail: 0}
    sent = {east: [], rail: []}
    plan = {east: (last, 3), rail: (b.n // 2, b.n - 2)}   # edge -> (its chip, destination)
    cycle = 0
    for cycle in range(60 + 4 * length):
        await FallingEdge(dut.clk)
        f = out_edge.read()
        if f is not None:
            seen_edge.append((cycle, f))
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
    assert [c for c, _ in seen_edge] == list(range(seen_edge[0][0], seen_edge[0][0] + length))
    for e in (east, rail):
        if e is None:
            continue
        _, dst = plan[e]
        assert ejected.get(dst) == [(f[0], f[1], 0, f[3]) for f in sent[e]], \
            f"edge {edges[e]}: chip {dst} ejected {ejected.get(dst)}"
        assert credits_back[e] == length, f"edge {edges[e]}: {credits_back[e]} credits back"
    assert read_int(dut.error) == 0
    record_stats("edge_and_rail_ports", transactions=0, cycles=cycle)
