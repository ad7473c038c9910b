"""cocotb testbench: a RailX system of router RTL (``rtl/railx/railx_mesh.py``: a 2D-HyperX of
3 x 3 nodes of 2 x 2 chips, 10-cycle rails) against the cycle-level network simulator running
the same system built by ``models.railx.netsim.railx`` under Algorithm 1's tables.

- **Wiring**: the RTL writes its links from the paper's rules itself; the bench checks that
  they are the model's links (same chip pairs, same delays, the mesh on the same ports) and
  maps the model's rail port numbers onto the RTL's. The routing tables the model compiled
  (Algorithm 1's VC classes, the in-node order per phase) are loaded into every router
  through the ``table`` stream, rail ports translated.
- **Traffic** (``traffic_patterns``): the packets the simulator's own Bernoulli source creates
  (``synthesize``), below and above saturation (the rails, credit-bound at 8 slots over a
  10-cycle link each way, saturate first), replayed by the simulator; a source per chip
  injects them by the simulator's rule (as in ``cosim/test_mesh.py``). Every cycle every
  chip's injection and ejection must equal the simulator's (same cycle, packet and flit).
- **Closed loop** (not from the model): every packet leaves at the chip its head names,
  which is the destination the traffic pattern gives on the paper's chip numbering (a
  transpose is recomputed here from (X, Y, x, y)); none is lost, duplicated or reordered;
  nothing leaves on a mesh port at a node's edge; the error flags stay low.
- **Paths** (``zero_load_paths``): single-flit packets between random chip pairs, sent in
  batches whose Algorithm 1 paths (``MinimalRouting.route``, the paper-level routing, not the
  compiled tables) share no node, so none waits: each head must eject exactly
  2 + sum over its links (delay + 2) cycles after injection (three-stage router, 1-cycle
  mesh links and 10-cycle rails), i.e. on the path the paper's routing gives.
- **Edges and errors** (``edge_ports_and_errors``): the mesh ports at a node's edge carry
  packets both ways when a table routes there (every one of them, on every VC in turn, the
  edge's credits returned on the flit's VC), and each router's error flags reach the top's
  OR alone, at every chip.
- **Coverage**: from the simulator's switch events (equal to the RTL's at every ejection):
  every Algorithm 1 VC class used on mesh links (0, 1, 2), X-rails on VC 1 and Y-rails on
  VC 2, and the busiest rail carrying at least 0.25 flits a cycle (credit-bound).

``AIFABRIC_TRANSACTIONS`` (flits) scales the traffic scenarios and the number of path packets
down for CI.
"""

from __future__ import annotations

import os
import random
import time
from collections import deque

import cocotb
import numpy as np

from aifabric.cosim.codec import encode_entry, width_of
from aifabric.cosim.noc import (ID_BITS, IdleTable, Link, Payload, RouteTables, expect_flags,
                                read_int, reset_idle)
from aifabric.cosim.testbench import Testbench
from aifabric.models.common.netsim import Traffic
from aifabric.models.common.netsim.kernel import EV_INJECT, EV_SWITCH
from aifabric.models.common.netsim.network import KIND_MESH, KIND_RAIL, LOCAL
from aifabric.models.common.netsim.traffic import synthesize
from aifabric.models.railx.netsim import DEFAULT_ORDER, railx
from aifabric.models.railx.mesh import trace_events
from aifabric.models.railx.router import table_entries
from aifabric.models.railx.routing import MinimalRouting
from aifabric.models.railx.system import RailX, hyperx_2d
from aifabric.rtl.railx.railx_mesh import RailXMesh

# (pattern, rate in flits/cycle/chip, cycles of packet creation). Saturation of this system
# is about 0.24 (uniform) and 0.22 (transpose): the rails are credit-bound.
SCENARIOS = (("uniform", 0.1, 1500), ("uniform", 0.5, 1000), ("transpose", 0.08, 1000),
             ("transpose", 0.4, 800))
PATH_PACKETS = 240
DRAIN = 8000
M = 2


class RailXBench(Testbench):
    """The RailX system on the testbench layer: its links (``inject``, ``eject``, the edge
    stubs) as :class:`~cosim.noc.Link` objects, the ``table`` stream, the model's network."""

    def __init__(self, dut) -> None:
        super().__init__(dut, RailXMesh)
        prm, rtl = self.params, self.component
        self.side, self.nrail = prm["side"], prm["n"]
        self.V, self.B, self.L = prm["vcs"], prm["depth"], prm["packet"]
        self.allocator = prm.get("allocator", "separable")
        self.rtl_links, self.rtl_edges = rtl.links, rtl.edges
        self.P, self.DW, self.n = rtl.ports, rtl.dst_width, rtl.chips
        self.payload = Payload(self.DW, self.L, prm["data"])    # the router benches' payload
        self.payload.check_width(prm["data"])
        self.topo = hyperx_2d(RailX(M, self.nrail, 2 * self.side), self.side)
        self.net = railx(self.topo, vcs=self.V, mesh_width=1, rail_width=1, inject=1,
                         mesh_delay=prm["mesh_delay"], rail_delay=prm["rail_delay"])
        self.delays = {"mesh": prm["mesh_delay"], "optical": prm["rail_delay"]}
        self.port_map = self.check_wiring()
        # the tables as loaded: the routes heads carry into a chip (lookahead routing; at
        # the local port its source's, the bench's)
        self.tables = RouteTables(ports=self.P, vcs=self.V, dst_width=self.DW)
        self.inject = [self.tables.link(link, c, True)
                       for c, link in enumerate(Link.ports(self, "inject", self.V))]
        self.eject = Link.ports(self, "eject", self.V)
        self.edge_i = [self.tables.link(link, c, False) for (c, _), link in
                       zip(self.rtl_edges, Link.ports(self, "edge_i", self.V))]
        self.edge_o = Link.ports(self, "edge_o", self.V)
        assert len(self.edge_i) == len(self.edge_o) == len(self.rtl_edges)
        self.table = self.bus("table")
        self.per_src = 1 << (ID_BITS - width_of(self.n))

    # -- wiring ------------------------------------------------------------------------------
    def check_wiring(self) -> list[dict]:
        """The RTL's links are the model's; returns, per chip, model port -> RTL port."""
        net = self.net
        assert net.ports == self.P, f"model routers have {net.ports} ports, RTL {self.P}"
        rtl = {}
        for a, pa, b, pb, d in self.rtl_links:
            for u, pu, v, pv in ((a, pa, b, pb), (b, pb, a, pa)):
                assert (u, pu) not in rtl, f"RTL port {pu} of chip {u} wired twice"
                rtl[(u, pu)] = (v, pv, d)
        pmap = [{LOCAL: LOCAL} for _ in range(self.n)]
        model = set()
        for c in range(self.n):
            for p in range(1, net.ports):
                v = int(net.nbr[c, p])
                if v < 0:
                    continue
                d, kind = int(net.delay[c, p]), int(net.kind[c, p])
                model.add((c, p))
                cands = [q for q in range(1, self.P) if rtl.get((c, q), (None,))[0] == v]
                if kind == KIND_MESH:
                    assert p in cands, f"chip {c}: the model's mesh port {p} to chip {v} is " \
                                       f"not the RTL's (RTL ports to it: {cands})"
                    q = p
                else:
                    assert kind == KIND_RAIL and len(cands) == 1, \
                        f"chip {c}: model rail port {p} to chip {v}; RTL ports to it {cands}"
                    q = cands[0]
                assert rtl[(c, q)][2] == d, f"chip {c} port {p}: delay {d}, RTL {rtl[(c, q)][2]}"
                pmap[c][p] = q
        assert len(model) == len(rtl), \
            f"the model has {len(model)} link ends, the RTL {len(rtl)}"
        for c in range(self.n):       # rail port maps are consistent at both ends
            for p, q in pmap[c].items():
                if p == LOCAL:
                    continue
                v, pv = int(self.net.nbr[c, p]), int(self.net.nbr_port[c, p])
                assert rtl[(c, q)][:2] == (v, pmap[v][pv]), f"chip {c} port {p}: ends differ"
        return pmap

    # -- stimulus --------------------------------------------------------------------------
    def data(self, pid: int, seq: int, dst: int, length: int) -> int:
        return self.payload.data(pid, seq, dst, length)

    def ident(self, data: int) -> tuple[int, int]:
        return self.payload.ident(data)

    def pid(self, tag: int) -> int:
        src, k = tag >> 32, tag & 0xFFFFFFFF
        assert k < self.per_src, "too many packets per chip for the payload's packet field"
        return src * self.per_src + k

    async def reset(self) -> None:
        """Reset with the links and the edge stubs idle; then one idle cycle out of it."""
        await reset_idle(self, self.inject, zip(self.edge_i, self.edge_o))

    def word(self, r: int, entry) -> int:
        """The ``table`` payload of router r's ``entry`` (routers k * k + e: beyond edge e)."""
        rb = width_of(M * self.side * M * self.side + len(self.rtl_edges))
        return r | encode_entry(*entry, ports=self.P, vcs=self.V, dst_width=self.DW) << rb

    async def write_table(self, entries) -> None:
        """(router, entry) pairs through ``table``, one a cycle; ``table.ready`` must be
        high whenever one is offered (the routers take an entry every cycle)."""
        for r, entry in entries:
            self.tables.load(r, *entry)
            await self.tick()
            assert read_int(self.table.ready) == 1, f"table not ready for router {r}'s entry"
            self.table.payload.value = self.word(r, entry)
            self.table.valid.value = 1
        await self.tick()
        self.table.valid.value = 0

    async def load_tables(self) -> int:
        entries = [(r, (row, dst, self.port_map[r][port], lo, hi)) for r in range(self.n)
                   for row, dst, port, lo, hi in table_entries(self.net, r, ports=self.P,
                                                               dst_width=self.DW)]
        if not any(isinstance(c, IdleTable) for c in self.components):
            self.add(IdleTable.of(self.table, entries, self.V, self.word))
        await self.write_table(entries)
        return len(entries)

    def simulate(self, rows: np.ndarray, cycles: int):
        """The simulator on the trace: (injected, ejected, switch events)."""
        budget = 16 * (int(rows[:, 3].sum()) + 16) if len(rows) else 64
        ev = trace_events(self.net, rows, buffer=self.B, cycles=cycles,
                          allocator=self.allocator, router="registered", budget=budget)
        inj = ev[ev[:, 1] == EV_INJECT]
        sw = ev[ev[:, 1] == EV_SWITCH]
        ej = sw[sw[:, 5] == LOCAL]
        injected = {(int(t), int(r)): (int(v), int(tag), int(f))
                    for t, r, v, tag, f in zip(inj[:, 0], inj[:, 2], inj[:, 4], inj[:, 7],
                                               inj[:, 8])}
        ejected = {(int(t), int(r)): (int(tag), int(f))
                   for t, r, tag, f in zip(ej[:, 0], ej[:, 2], ej[:, 7], ej[:, 8])}
        return injected, ejected, sw

    def expected_dst(self, pattern: str, src: int) -> int | None:
        """Destination of ``src`` under a permutation pattern, from the paper's numbering
        (None: a pattern drawn at random)."""
        if pattern != "transpose":
            return None
        X, Y, x, y = self.topo.chip_coords(src)
        gx, gy = X * M + x, Y * M + y              # the chip grid of the 2D-HyperX
        gx, gy = gy, gx
        X, x = divmod(gx, M)
        Y, y = divmod(gy, M)
        return ((X * self.side + Y) * M + x) * M + y

    async def run_trace(self, rows: np.ndarray, cycles: int, *, check_edges: bool = True):
        """Drive ``rows`` (cycle, src, dst, flits; sorted by src then cycle), compare every
        cycle with the simulator, return (ejection cycle per tag, switch events, cycles)."""
        n, V, B = self.n, self.V, self.B
        injected, ejected, sw = self.simulate(rows, cycles + DRAIN)
        queues = [deque() for _ in range(n)]
        for t, src, dst, flits in rows:
            src = int(src)
            queues[src].append((int(t), int(dst), int(flits), src << 32 | len(queues[src])))
        packets = {tag: (t, dst, flits) for q in queues for t, dst, flits, tag in q}
        credits = [[B] * V for _ in range(n)]
        writing = [None] * n
        inj_next = [0] * n
        open_, seen, done = {}, set(), {}
        total, flits_out = len(packets), 0
        read_error = self.bus().reader("error")

        def cycle(t: int) -> bool:
            """Iteration t, at a falling edge: the outputs of cycle t - 1 against the
            simulator's, then the injections of cycle t; True: every packet delivered."""
            nonlocal flits_out
            for c in range(n):
                got = self.eject[c].read()
                want = ejected.get((t - 1, c))
                if want is None:
                    assert got is None, f"cycle {t - 1}: chip {c} ejected {got}, model nothing"
                    continue
                tag, seq = want
                created, dst, flits = packets[tag]
                expect = (seq == 0, seq == flits - 1, 0, self.data(self.pid(tag), seq, dst, flits))
                assert got == expect, (f"cycle {t - 1}: chip {c} ejected {got}, model packet "
                                       f"{tag >> 32}:{tag & 0xFFFFFFFF} flit {seq} {expect}")
                # closed loop: the chip the packet was sent to, its flits in order, once
                pid, s = self.ident(got[3])
                assert (pid, s) not in seen, f"cycle {t - 1}: packet {pid} flit {s} twice"
                seen.add((pid, s))
                assert open_.get(pid, 0) == s, f"cycle {t - 1}: packet {pid} flit {s} " \
                                               f"out of order"
                open_[pid] = s + 1
                assert c == dst, f"cycle {t - 1}: a packet for chip {dst} left at chip {c}"
                if seq == 0:
                    assert got[3] & ((1 << self.DW) - 1) == c, \
                        f"cycle {t - 1}: head for {got[3] & ((1 << self.DW) - 1)} at chip {c}"
                flits_out += 1
                if seq == flits - 1:
                    done[tag] = t - 1
                    del open_[pid]
            for c in range(n):
                vc = self.inject[c].read_credit()
                if vc is not None:
                    credits[c][vc] += 1
                    assert credits[c][vc] <= B, f"cycle {t}: chip {c} VC {vc}: over {B} credits"
            error = read_error()
            assert error == 0, f"cycle {t - 1}: error flags {error:05b}"
            if check_edges and t % 64 == 0 or len(done) == total and t > cycles:
                stray = [self.rtl_edges[e] for e, link in enumerate(self.edge_o)
                         if link.read() is not None]
                assert not stray, f"cycle {t - 1}: flits left on edge ports {stray}"
            if len(done) == total and t > cycles:
                return True
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
                            self.data(self.pid(tag), seq, dst, flits))
                    credits[c][v] -= 1
                    writing[c] = None if seq == flits - 1 else (v, tag, seq + 1)
                    got = (v, tag, seq)
                else:
                    got = None
                assert got == injected.get((t, c)), (
                    f"cycle {t}: chip {c} injects {got}, model {injected.get((t, c))} "
                    f"(VC, tag, flit): the RTL's credits differ")
                self.inject[c].send(flit)
            return False

        t = await self.run(cycle, cycles + DRAIN + 1) - 1
        assert len(done) == total, f"{total - len(done)} of {total} packets not delivered"
        assert not open_, f"packets still open {open_}"
        return done, packets, sw, flits_out, t


def scale() -> float:
    budget = os.environ.get("AIFABRIC_TRANSACTIONS")
    if not budget:
        return 1.0
    full = sum(rate * cycles for _, rate, cycles in SCENARIOS) * 36
    return min(1.0, int(budget) / full)


@cocotb.test()
async def traffic_patterns(dut):
    """Uniform and transpose traffic below and above saturation: every injection and every
    ejection in the same cycle as the simulator's, every packet at its destination, Algorithm
    1's VC classes and the rails under load reached."""
    b = RailXBench(dut)
    seed = int(cocotb.RANDOM_SEED % (1 << 40))
    b.log.info("RailX %s: %d chips, P=%d V=%d B=%d, rails %d cycles; %s",
               b.topo.name, b.n, b.P, b.V, b.B, b.delays["optical"], b.seed_text())
    await b.reset()
    entries = await b.load_tables()
    start, flits, results = b.meter.cycles, 0, []
    used = set()                    # (link kind, VC) of switch traversals
    busiest = 0.0
    k_scale = scale()
    for k, (pattern, rate, cycles) in enumerate(SCENARIOS):
        cycles = max(150, int(cycles * k_scale))
        traffic = Traffic.make(pattern, b.net.coords, b.net.grid)
        rows = synthesize(traffic, rate, b.L, cycles, seed=seed * 10 + k)
        for _, src, dst, _ in rows:
            want = b.expected_dst(pattern, int(src))
            assert dst != src and 0 <= dst < b.n and (want is None or dst == want), \
                f"{pattern}: chip {src} sends to {dst}, the topology says {want}"
        wall = time.perf_counter()
        done, packets, sw, out, t = await b.run_trace(rows, cycles)
        kinds = b.net.kind[sw[:, 2], sw[:, 5]]
        for kind, vc in set(zip(kinds.tolist(), sw[:, 6].tolist())):
            used.add((int(kind), int(vc)))
        rail = sw[(kinds == KIND_RAIL) & (sw[:, 0] < cycles)]
        if len(rail):
            per = np.unique(rail[:, 2] * b.P + rail[:, 5], return_counts=True)[1]
            busiest = max(busiest, per.max() / cycles)
        lat = np.array([done[tag] - packets[tag][0] for tag in done]) if done else np.zeros(1)
        res = {"pattern": pattern, "rate": rate, "traffic_seed": seed * 10 + k,
               "created_cycles": cycles,
               "packets": len(packets), "flits": out, "cycles": t,
               "latency_mean": round(float(lat.mean()), 2),
               "accepted": round(out / (t * b.n), 3),
               "seconds": round(time.perf_counter() - wall, 2)}
        b.log.info("%s", res)
        results.append(res)
        flits += out
        await b.reset()
    cover = {"mesh_vcs": sorted(v for kd, v in used if kd == KIND_MESH),
             "rail_vcs": sorted(v for kd, v in used if kd == KIND_RAIL),
             "busiest_rail": round(busiest, 3)}
    b.log.info("coverage %s", cover)
    assert cover["mesh_vcs"] == list(range(3)), f"Algorithm 1's mesh VC classes: {cover}"
    assert cover["rail_vcs"] == [1, 2], f"X-rails VC 1, Y-rails VC 2: {cover}"
    assert busiest >= 0.25, f"the rails never ran under load: {cover}"
    b.finish("traffic_patterns", transactions=flits, cycles=b.meter.cycles - start,
             scenarios=results, table_entries=entries, coverage=cover)


@cocotb.test()
async def zero_load_paths(dut):
    """Single-flit packets on node-disjoint Algorithm 1 paths: each ejects exactly after the
    latency of the path the paper's routing gives (the three-stage router per hop plus each
    link's delay)."""
    b = RailXBench(dut)
    rng = random.Random(cocotb.RANDOM_SEED)
    rt = MinimalRouting(b.topo, vcs="algorithm1", order=DEFAULT_ORDER)
    await b.reset()
    await b.load_tables()
    count = max(36, int(PATH_PACKETS * scale()))
    pairs = [tuple(rng.sample(range(b.n), 2)) for _ in range(count)]
    info = []
    for s, d in pairs:
        route = rt.route(s, d)
        nodes = {b.topo.node_of(s), b.topo.node_of(d)}
        lat = 2
        for (link, chip), _ in route:
            ln = b.topo.links[link]
            nodes |= {b.topo.node_of(ln.u), b.topo.node_of(ln.v)}
            lat += b.delays[ln.kind] + 2
        info.append((s, d, lat, nodes))
    rows, t = [], 0
    pending = list(range(len(info)))
    while pending:                  # batches of packets whose paths share no node
        taken, busy, left = [], set(), []
        for i in pending:
            if busy & info[i][3]:
                left.append(i)
            else:
                taken.append(i)
                busy |= info[i][3]
        for i in taken:
            rows.append((t, info[i][0], info[i][1], 1, info[i][2]))
        t += max(info[i][2] for i in taken) + 4
        pending = left
    rows.sort(key=lambda r: (r[1], r[0]))
    trace = np.array([r[:4] for r in rows], np.int64)
    start = b.meter.cycles
    done, packets, _, out, cycles = await b.run_trace(trace, t, check_edges=True)
    per_src: dict = {}
    for created, src, dst, _, lat in rows:       # tags: k-th packet of src, as run_trace
        tag = src << 32 | per_src.setdefault(src, 0)
        per_src[src] += 1
        assert packets[tag][:2] == (created, dst)
        assert done[tag] - created == lat, (
            f"chip {src} -> {dst} (injected {created}): ejected after {done[tag] - created} "
            f"cycles, the paper's path takes {lat}")
    lats = sorted({r[4] for r in rows})
    b.log.info("%d path packets, latencies %s, %d cycles", len(rows), lats, cycles)
    assert len(lats) >= 5, f"too few distinct path lengths: {lats}"
    b.finish("zero_load_paths", transactions=out, cycles=b.meter.cycles - start,
             packets=len(rows), latencies=lats)


ERROR_BITS = {"table": 0, "no_route": 1, "length": 2, "protocol": 3, "eject_credit": 4}
EDGE_PACKETS = 3         # packets per edge port out (3 x 4 flits on one VC: over its 8 credits)


@cocotb.test()
async def edge_ports_and_errors(dut):
    """The mesh ports RailX leaves at a node's edge are real links, and every router's error
    flags reach the top, each alone.

    - out: every chip in turn routes one destination out of each of its edge ports (a table
      entry for row 0, that port, one VC only: (chip + round) mod V, so every VC is drawn,
      each at about 1 / V of the edge ports) and injects ``EDGE_PACKETS`` packets for it,
      one on each local VC: they leave on that ``edge_o`` whole, each packet contiguous and
      in sequence, on that VC, more flits than a VC's credits, so the edge's credits
      (returned by the bench a cycle after each flit, on the flit's VC) must come back to
      that VC; nothing leaves elsewhere;
    - in: two packets into every ``edge_i`` on VC (chip + round + 1) mod V, for the next
      chip: each reaches it whole, and a credit comes back on that ``edge_i`` per flit, on
      that VC;
    - errors, at every chip in turn: a refused table entry, a head of length 0, a head for a
      destination with no route, each raising exactly its own flag at the top (the OR of all
      routers' flags), then flits into the VC that head blocks until one finds it full
      (protocol, with no-route, which the waiting head raises again every cycle); ``clear``
      lowers them. The ejection-credit flag cannot be raised here: the top ties that credit
      to 0."""
    b = RailXBench(dut)
    await b.reset()
    await b.load_tables()
    n, V, B, L, P = b.n, b.V, b.B, b.L, b.P
    assert EDGE_PACKETS <= V and (EDGE_PACKETS * L > B), "the out test needs these"
    edge_i, edge_o = b.edge_i, b.edge_o
    own = [[e for e, (c, _) in enumerate(b.rtl_edges) if c == chip] for chip in range(n)]
    rounds = max(len(x) for x in own)
    original = {}                            # (chip, dst) -> its row-0 entry as loaded
    for c in range(n):
        for row, dst, port, lo, hi in table_entries(b.net, c, ports=P, dst_width=b.DW):
            if row == 0:
                original[(c, dst)] = (0, dst, b.port_map[c][port], lo, hi)
    pid = iter(range(1, 1 << 20))

    write_table = b.write_table

    def packet(dst, vc):
        k = next(pid)
        return [(s == 0, s == L - 1, vc, b.data(k, s, dst, L)) for s in range(L)]

    async def run(sources, out_edges, eject_to, credit_edges, cycles=200):
        """Drive ``sources`` ({send: [flit, ...]}, one flit a cycle each, in order), return
        every flit and credit seen: ``edges`` {e: [flit]}, ``ejected`` {chip: [flit]},
        ``credits`` {e: [vc]}; flits on edges not in ``out_edges`` or ejections at chips not
        in ``eject_to`` fail at once."""
        edges, ejected, credits = {}, {}, {}
        queues = {send: list(flits) for send, flits in sources.items()}
        for cycle in range(cycles):
            await b.tick()
            for e, link in enumerate(edge_o):
                f = link.read()
                link.send_credit(None if f is None else f[2])
                if f is not None:
                    assert e in out_edges, f"cycle {cycle}: a flit left on edge {e} " \
                                           f"{b.rtl_edges[e]}: {f}"
                    edges.setdefault(e, []).append(f)
            for c in range(n):
                f = b.eject[c].read()
                if f is not None:
                    assert c in eject_to, f"cycle {cycle}: chip {c} ejected {f}"
                    ejected.setdefault(c, []).append(f)
            for e in credit_edges:
                vc = edge_i[e].read_credit()
                if vc is not None:
                    credits.setdefault(e, []).append(vc)
            for send, q in queues.items():
                send(q.pop(0) if q else None)
            assert read_int(dut.error) == 0, f"cycle {cycle}: error flags {read_int(dut.error):05b}"
        return edges, ejected, credits

    def injector(c):
        return b.inject[c].send

    def packets_of(flits):
        """Contiguous packets (head .. tail) of one VC's stream; fails on a broken one."""
        out, cur = [], None
        for f in flits:
            assert (cur is None) == f[0], f"a head inside a packet, or a body outside: {flits}"
            cur = [f] if cur is None else cur + [f]
            if f[1]:
                out.append(cur)
                cur = None
        assert cur is None, f"a packet left open: {flits}"
        return out

    # -- out: each chip's edge ports, one round per edge port of a chip -------------------
    checked_out = 0
    for r in range(rounds):
        plan = {c: own[c][r] for c in range(n) if r < len(own[c])}
        dst = {c: (c + 1) % n for c in plan}
        evc = {c: (c + r) % V for c in plan}
        await write_table([(c, (0, dst[c], b.rtl_edges[e][1], evc[c], evc[c]))
                           for c, e in plan.items()])
        sent = {c: [packet(dst[c], vc) for vc in range(EDGE_PACKETS)] for c in plan}
        # the three packets on three local VCs, interleaved flit by flit: each VC holds one
        sources = {injector(c): [p[s] for s in range(L) for p in ps] for c, ps in sent.items()}
        edges, _, _ = await run(sources, set(plan.values()), set(), [])
        for c, e in plan.items():
            got = edges.get(e, [])
            assert all(f[2] == evc[c] for f in got), f"edge {e}: VCs {[f[2] for f in got]}, " \
                                                     f"the entry allows {evc[c]}"
            pk = packets_of(got)
            want = sorted([[(h, t, evc[c], d) for h, t, _, d in p] for p in sent[c]])
            if len(got) != L * EDGE_PACKETS:
                raise AssertionError(f"chip {c} edge {e} {b.rtl_edges[e]}: {len(got)} flits "
                                     f"left, {L * EDGE_PACKETS} sent")
            assert len(pk) == len(want), f"chip {c} edge {e}: {len(pk)} packets left"
            for left, sent_ in zip(sorted(pk), want):
                assert left == sent_, (f"chip {c} edge {e} {b.rtl_edges[e]}: packet {left} "
                                       f"left where {sent_} was sent")
            checked_out += 1
        await write_table([(c, original[(c, dst[c])]) for c in plan])

    # -- in: two packets into every edge, for the next chip --------------------------------
    checked_in = 0
    for r in range(rounds):
        plan = {c: own[c][r] for c in range(n) if r < len(own[c])}
        dst = {c: (c + 1) % n for c in plan}
        evc = {c: (c + r + 1) % V for c in plan}
        sent = {c: packet(dst[c], evc[c]) + packet(dst[c], evc[c]) for c in plan}
        sources = {edge_i[e].send: sent[c] for c, e in plan.items()}
        _, ejected, credits = await run(sources, set(), set(dst.values()), set(plan.values()))
        for c, e in plan.items():
            got = [f for f in ejected.get(dst[c], []) if b.ident(f[3])[0] in
                   {b.ident(x[3])[0] for x in sent[c]}]
            assert got == [(h, t, 0, d) for h, t, _, d in sent[c]], \
                f"edge {e} {b.rtl_edges[e]} -> chip {dst[c]}: ejected {got}"
            assert credits.get(e, []) == [evc[c]] * len(sent[c]), \
                f"edge {e}: credits back {credits.get(e)}, {len(sent[c])} flits on VC {evc[c]}"
            checked_in += 1

    # -- errors, one chip at a time ---------------------------------------------------------
    async def flags(expect, what, c, wait=3):
        for _ in range(wait):
            await b.tick()
        await expect_flags(b, expect, f"chip {c}, {what}")
        await b.tick()

    for c in range(n):
        send = injector(c)
        d = (c + 1) % n
        await write_table([(c, (0, d, 1, 1, 0))])                      # lo > hi: refused
        await flags(1 << ERROR_BITS["table"], "refused entry", c)
        # a head of length 0 for the chip beside it in the node (one mesh hop: every router
        # it enters flags it; it has left both when the flags are read)
        near = c ^ 1
        head0 = b.data(next(pid), 0, near, L) & ~(((1 << L.bit_length()) - 1) << b.DW)
        await b.tick()
        send((True, True, 0, head0))                    # its length field 0
        await b.tick()
        send(None)
        await flags(1 << ERROR_BITS["length"], "a head of length 0", c, wait=16)
        await flags(0, "after the head of length 0 left", c)
        never = n                                       # no chip: no entry routes it
        assert never < 1 << b.DW, "every destination the field holds is a chip"
        await b.tick()
        send((True, True, 0, b.data(next(pid), 0, never, 1)))
        await b.tick()
        send(None)
        await flags(1 << ERROR_BITS["no_route"], "a head with no route", c)
        for k in range(B):                              # behind it on VC 0: full at the B-th
            await b.tick()
            send((True, True, 0, b.data(next(pid), 0, d, 1)))
        await b.tick()
        send(None)
        await flags(1 << ERROR_BITS["protocol"] | 1 << ERROR_BITS["no_route"],
                    "a flit into a full VC", c)
        await b.reset()                                 # drops the waiting packets
    b.log.info("edge ports: %d out, %d in; errors at %d chips", checked_out, checked_in, n)
    b.finish("edge_ports_and_errors", transactions=checked_out + checked_in)
