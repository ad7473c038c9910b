"""The packet simulator on hand-worked transfers, the compiled engine against the plain-Python
reference, and the evaluation fabrics."""

import random

import numpy as np
import pytest

from aifabric.models.flexsipac import fabrics
from aifabric.models.flexsipac.packetsim import Flow, Link, simulate, simulate_reference

BOTH = (simulate, simulate_reference)


@pytest.mark.parametrize("sim", BOTH)
def test_one_flow_at_line_rate(sim):
    # 10 packets of 9 kB over 1 GB/s with 1 us latency: 90 us + 1 us
    r = sim({("a", "b"): Link(1e9, 1e-6)}, [Flow(0, 0, ("a", "b"), 90_000)], packet=9000)
    assert r.jct == pytest.approx(91e-6)
    assert r.packets == 10


@pytest.mark.parametrize("sim", BOTH)
def test_two_flows_share_a_link(sim):
    links = {("a", "s"): Link(1e9), ("c", "s"): Link(1e9), ("s", "d"): Link(1e9)}
    flows = [Flow(0, 0, ("a", "s", "d"), 90_000), Flow(1, 0, ("c", "s", "d"), 90_000)]
    r = sim(links, flows, packet=9000)
    # s -> d carries 20 packets back to back from the first arrival at 9 us: done at 189 us;
    # the two flows interleave, so both finish within one packet of the end
    assert r.jct == pytest.approx(189e-6)
    assert min(r.job_time.values()) == pytest.approx(180e-6)


def test_back_pressure_holds_the_sender():
    # fast a -> s, slow s -> d, room for 2 packets at s: a may only send when s forwards one
    links = {("a", "s"): Link(10e9, 0, 2000), ("s", "d"): Link(1e9, 0, 1e6)}
    trace = []
    r = simulate_reference(links, [Flow(0, 0, ("a", "s", "d"), 10_000)], packet=1000,
                           trace=trace)
    sends = [t for t, kind, link, *_ in trace if kind == "send" and link == ("a", "s")]
    assert sends[:2] == pytest.approx([0.0, 0.1e-6])
    # from the third packet on, a sends only as s frees a slot (every 1 us)
    assert np.diff(sends[3:]) == pytest.approx([1e-6] * 6)
    assert r.jct == pytest.approx(10.1e-6)
    # without the buffer limit a sends all ten packets back to back in 1 us
    trace = []
    simulate_reference({("a", "s"): Link(10e9, 0, 1e6), ("s", "d"): Link(1e9)},
                       [Flow(0, 0, ("a", "s", "d"), 10_000)], packet=1000, trace=trace)
    sends = [t for t, kind, link, *_ in trace if kind == "send" and link == ("a", "s")]
    assert sends[-1] == pytest.approx(0.9e-6)


@pytest.mark.parametrize("sim", BOTH)
def test_blocking_steps(sim):
    links = {("a", "b"): Link(1e9, 1e-6), ("b", "a"): Link(1e9, 1e-6)}
    flows = [Flow(0, 0, ("a", "b"), 1000), Flow(0, 1, ("b", "a"), 1000)]
    r = sim(links, flows, packet=1000, step_gap=5e-6)
    assert r.step_time[(0, 0)] == pytest.approx(2e-6)
    assert r.step_time[(0, 1)] == pytest.approx(2e-6 + 5e-6 + 2e-6)


@pytest.mark.parametrize("seed", range(5))
def test_compiled_engine_equals_the_reference(seed):
    rng = random.Random(seed)
    nodes = list(range(8))
    links = {(u, v): Link(rng.choice([1e9, 2e9, 5e9]), rng.choice([0, 1e-7, 5e-7]),
                          rng.choice([3000, 20_000]))
             for u in nodes for v in nodes if u != v and rng.random() < 0.5}
    fab = fabrics.Fabric("random", links, 8)
    flows = []
    for job in range(3):
        for step in range(3):
            for _ in range(rng.randint(1, 6)):
                s, d = rng.sample(nodes, 2)
                try:
                    flows.append(Flow(job, step, fab.route(s, d), rng.choice([500, 3000, 9000])))
                except ValueError:
                    pass
    a = simulate(links, flows, packet=1000)
    b = simulate_reference(links, flows, packet=1000)
    assert a.step_time == b.step_time and a.events == b.events and a.packets == b.packets


def test_bad_input():
    with pytest.raises(ValueError, match="no link b->c"):
        simulate({("a", "b"): Link(1e9)}, [Flow(0, 0, ("a", "b", "c"), 10)])
    with pytest.raises(ValueError, match="cannot hold one"):
        simulate({("a", "b"): Link(1e9, 0, 100)}, [Flow(0, 0, ("a", "b"), 10)], packet=1000)
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        simulate({("a", "b"): Link(0)}, [Flow(0, 0, ("a", "b"), 10)])


@pytest.mark.parametrize("name", fabrics.FABRICS)
def test_fabrics_keep_the_per_cu_bandwidth(name):
    sizes = [16, 16, 32]
    fab = fabrics.build(name, sizes, r=4, L=3, w=12, rate_gbps=8)
    bw = 12 * 8e9 / 8
    out = {}
    for (u, v), link in fab.links.items():
        out[u] = out.get(u, 0.0) + link.bandwidth
    cus = [out.get(x, 0.0) for x in range(64)]
    assert max(cus) <= bw * (1 + 1e-9)
    if name in ("sipac", "h100-superpod", "bcube"):
        assert min(cus) == pytest.approx(bw)
    # every job's CUs reach each other
    for s, d in [(0, 15), (16, 31), (32, 63)]:
        assert fab.route(s, d)[0] == s


@pytest.mark.parametrize("sim", BOTH)
def test_a_cycle_of_full_buffers_is_reported_as_a_deadlock(sim):
    # three nodes in a ring, each sending two hops clockwise, one packet of buffer per link:
    # every relay holds a packet that waits for the next relay's buffer, which is full
    links = {(u, (u + 1) % 3): Link(1e9, 1e-6, 1000) for u in range(3)}
    flows = [Flow(u, 0, (u, (u + 1) % 3, (u + 2) % 3), 10_000) for u in range(3)]
    with pytest.raises(Exception, match="stalled with 3 of 3 steps unfinished"):
        sim(links, flows, packet=1000)
    # the same flows with room for every packet complete
    big = {k: Link(1e9, 1e-6, 1e6) for k in links}
    assert sim(big, flows, packet=1000).jct > 0


def test_torus_routes_by_hand_and_without_dependency_cycles():
    import networkx as nx
    dims = (4, 4, 4)
    index = {(x, y, z): x + 4 * y + 16 * z for x in range(4) for y in range(4) for z in range(4)}
    # x from 3 to 1: the + way would take the wrap 3 -> 0 and go on: the - way instead
    assert fabrics._torus_route((3, 0, 0), (1, 0, 0), dims, index) == [3, 2, 1]
    # x from 2 to 0: the wrap is the last x hop, allowed; then y
    assert fabrics._torus_route((2, 0, 0), (0, 1, 0), dims, index) == [2, 3, 0, 4]
    # every pair of a 64-CU job: links that wait on each other form no cycle
    fab = fabrics.build("tpuv4", [64], r=4, L=3)
    g = nx.DiGraph()
    for s in range(64):
        for d in range(64):
            if s != d:
                p = fab.route(s, d)
                assert all((a, b) in fab.links for a, b in zip(p, p[1:]))
                g.add_edges_from(((p[i], p[i + 1]), (p[i + 1], p[i + 2]))
                                 for i in range(len(p) - 2))
    assert nx.is_directed_acyclic_graph(g)


def test_bcube_paths_correct_one_digit_per_switch():
    # SiPAC(3, 3)'s wiring with packet switches: 27 CUs, base-3 digits. A BCube path between
    # CUs differing in k digits crosses k switches (2k links) and relays at k - 1 CUs; each
    # switch joins CUs that differ only in its level's digit; links that wait on each other
    # form no cycle (levels only rise along a path)
    import networkx as nx
    fab = fabrics.build("bcube", [27], r=3, L=3, w=6, rate_gbps=8)

    def digits(x):
        return (x % 3, x // 3 % 3, x // 9)
    g = nx.DiGraph()
    for s in range(27):
        for d in range(27):
            if s == d:
                continue
            p = fab.route(s, d)
            k = sum(a != b for a, b in zip(digits(s), digits(d)))
            assert len(p) - 1 == 2 * k, (s, d, p)
            assert all((a, b) in fab.links for a, b in zip(p, p[1:]))
            for i in range(1, len(p), 2):
                level = p[i][1]
                changed = [l for l in range(3) if digits(p[i - 1])[l] != digits(p[i + 1])[l]]
                assert changed == [level]
            g.add_edges_from(((p[i], p[i + 1]), (p[i + 1], p[i + 2]))
                             for i in range(len(p) - 2))
    assert fab.route(0, 26) == (0, ("sw", 0, 0), 2, ("sw", 1, 2), 8, ("sw", 2, 8), 26)
    assert nx.is_directed_acyclic_graph(g)


@pytest.mark.parametrize("sim", BOTH)
def test_a_lone_flow_on_bcube_takes_the_whole_port(sim):
    # SiPAC(3, 2)'s wiring, w = 7 lines of 8 Gb/s over 2 ports: 4 lines (4 GB/s) on the
    # level-0 port, 3 on level 1. A lone 90 kB flow to a level-0 neighbour gets the whole
    # port (a packet switch, not the static SiPAC's 2 of its 4 lines): 10 packets of 9 kB
    # serialised at 4 GB/s, one more packet's serialisation at the switch (store and
    # forward), 300 ns into the switch and 100 ns out of it
    fab = fabrics.build("bcube", [9], r=3, L=2, w=7, rate_gbps=8)
    r = sim(fab.links, [Flow(0, 0, fab.route(0, 1), 90_000)], packet=9000)
    assert r.jct == pytest.approx(90_000 / 4e9 + 9000 / 4e9 + 0.4e-6)
    # to the CU differing in both digits: the level-0 port, a relay at CU 1, the level-1
    # port (3 GB/s, the bottleneck): the first packet crosses the 4 GB/s port and the
    # level-0 switch, then all ten leave CU 1 at 3 GB/s, then the last crosses the switch
    r = sim(fab.links, [Flow(0, 0, fab.route(0, 4), 90_000)], packet=9000)
    assert r.jct == pytest.approx(2 * 9000 / 4e9 + 90_000 / 3e9 + 9000 / 3e9 + 0.8e-6)
    # two flows from CU 0 to its two level-0 neighbours share its one port
    both = [Flow(0, 0, fab.route(0, 1), 90_000), Flow(1, 0, fab.route(0, 2), 90_000)]
    assert sim(fab.links, both, packet=9000).jct == \
        pytest.approx(180_000 / 4e9 + 9000 / 4e9 + 0.4e-6)
    # the static SiPAC deals the same port's 4 lines to the 2 neighbours: 2 lines each
    static = fabrics.build("sipac", [9], r=3, L=2, w=7, rate_gbps=8)
    assert static.links[(0, 1)].bandwidth == pytest.approx(2e9)


def test_tpuv4_large_messages_complete():
    from aifabric.models.flexsipac.experiments import run_point
    assert np.isfinite(run_point("tpuv4", "mesh", [16] * 4, [1e8], 4, 3))


def test_job_split_takes_the_large_job_out_of_the_gain():
    # a skewed quick mapping (32, 16, 16): Flex-SiPAC's 32-CU job is its slowest, the two
    # 16-CU jobs take 40 and 50 us; the H100 takes 100 us on each 16-CU job and 60 us on the
    # 32-CU one. Counted over the 16-CU jobs alone: 1 - 50 / 100 = 50 %; sigma = 0 (every
    # job of one size) gives no row
    from aifabric.models.flexsipac.experiments import job_split
    from aifabric.models.flexsipac.packetsim import SimResult

    def res(times, steps):
        r = SimResult(dict(enumerate(times)), {}, 0, 0)
        r.steps = steps                 # run_point's: the most steps of any job
        return r
    abl = {("authors", "sigma=0.5", "flex-sipac", "sipco"): res([70e-6, 40e-6, 50e-6], 4),
           ("authors", "sigma=0.5", "h100-superpod", "mesh"): res([60e-6, 100e-6, 100e-6], 2),
           ("authors", "sigma=0", "flex-sipac", "sipco"): res([10e-6] * 4, 3),
           ("authors", "sigma=0", "h100-superpod", "mesh"): res([20e-6] * 4, 2)}
    split = job_split(abl, True)
    assert list(split) == ["sigma=0.5"]
    row = split["sigma=0.5"]
    assert row["slowest"] == (32, 70e-6)
    assert row["steps"] == 4
    assert row["small_size"] == 16
    assert row["flex_small"] == 50e-6 and row["h100_small"] == 100e-6
    assert row["gain_small"] == pytest.approx(0.5)
