"""The window transport (DCTCP over lossless, finite output queues with ECN marking,
models.common.dctcp) through the Flex-SiPAC simulator's interface: hand-computed times,
back-pressure without loss, ECN marks and the reaction to them."""

import math

import pytest

from aifabric.models.common.dctcp import NETBENCH_SIPAC, Setting
from aifabric.models.flexsipac.packetsim import Flow, Link, simulate_window

BIG = Setting("open window", init_window=1e6, ssthresh=1e6, ecn_k=1e12, queue=1e12,
              link_delay=1e-6, handshake=False)


def test_one_flow_pipelines_at_line_rate_with_an_open_window():
    # 10 packets of 1,380 B + 120 B header over two 100 GB/s hops, 1 us each: the last
    # packet leaves the first link after 10 x 1500 B, then one more serialisation and the
    # two delays (store and forward)
    bw = 100e9
    links = {(0, 1): Link(bw), (1, 2): Link(bw)}
    r = simulate_window(links, [Flow(0, 0, (0, 1, 2), 13_800)], BIG)
    assert r.jct == pytest.approx(10 * 1500 / bw + 1500 / bw + 2e-6, rel=1e-9)
    assert r.marked == 0 and r.pauses == 0
    # the handshake costs one round trip of the path's delays before the first packet
    hs = Setting(**{**BIG.__dict__, "handshake": True})
    assert simulate_window(links, [Flow(0, 0, (0, 1, 2), 13_800)], hs).jct == \
        pytest.approx(r.jct + 4e-6, rel=1e-9)


def test_initial_window_limits_the_first_round_trip():
    # 3-segment window, no ECN, no slow-start growth beyond it (ssthresh 3): 6 segments
    # need two round trips; with a huge link rate the time is ~ two RTTs of 2 x 1 us
    s = Setting("small window", init_window=3, ssthresh=3, ecn_k=1e12, queue=1e12,
                link_delay=1e-6, handshake=False)
    r = simulate_window({(0, 1): Link(1e15)}, [Flow(0, 0, (0, 1), 6 * 1380)], s)
    assert 3e-6 < r.jct < 3.1e-6          # 1 us out, 1 us ack back, 1 us out again


def test_incast_is_lossless_marks_and_pauses():
    # 4 senders into one 20,000-byte output queue (the authors' setting): everything is
    # delivered (no loss: back-pressure pauses the upstream ports), ECN marks appear
    links = {(x, "sw"): Link(100e9) for x in range(4)}
    links[("sw", 9)] = Link(100e9)
    flows = [Flow(x, 0, (x, "sw", 9), 200_000) for x in range(4)]
    r = simulate_window(links, flows, NETBENCH_SIPAC)
    assert r.marked > 0 and r.pauses > 0
    assert r.packets == 4 * math.ceil(200_000 / 1380)
    # the bottleneck carries 4 x 200 kB (+ headers): it cannot finish sooner
    assert r.jct >= 4 * 200_000 * 1500 / 1380 / 100e9
    # without ECN (threshold above the queue) the same incast has no marks
    no_ecn = Setting(**{**NETBENCH_SIPAC.__dict__, "ecn_k": 1e9})
    assert simulate_window(links, flows, no_ecn).marked == 0


def test_dctcp_cut_slows_a_marked_flow():
    # one flow through a slow second link: the queue in front of it builds, packets are
    # marked, the window is cut; with ECN off the window only grows. Marks change the time.
    links = {(0, 1): Link(100e9), (1, 2): Link(10e9)}
    f = [Flow(0, 0, (0, 1, 2), 500_000)]
    on = simulate_window(links, f, NETBENCH_SIPAC)
    off = simulate_window(links, f, Setting(**{**NETBENCH_SIPAC.__dict__, "ecn_k": 1e9}))
    assert on.marked > 0 and off.marked == 0
    assert on.jct != off.jct
    # DCTCP's cut: by alpha / 2 of the window, alpha <= 1, so never more than half
    assert 0 < on.max_cut <= 0.5 and off.max_cut == 0
    # the slow link bounds both
    assert min(on.jct, off.jct) >= 500_000 * 1500 / 1380 / 10e9


def test_steps_block():
    links = {(0, 1): Link(100e9), (1, 0): Link(100e9)}
    r = simulate_window(links, [Flow(0, 0, (0, 1), 10_000), Flow(0, 1, (1, 0), 10_000)], BIG)
    assert r.step_time[(0, 1)] > r.step_time[(0, 0)]
    one = simulate_window(links, [Flow(0, 0, (0, 1), 10_000)], BIG).jct
    assert r.jct == pytest.approx(2 * one, rel=1e-9)


def test_compiled_engine_equals_the_plain_python_reference():
    # two jobs, two steps each, an incast through a switch with a slow output and a relay:
    # every completion time and the mark count agree exactly
    import numpy as np

    from aifabric.models.common.dctcp import run_reference
    rng = np.random.default_rng(3)
    links = {(x, "sw"): Link(100e9) for x in range(4)}
    links[("sw", 9)] = Link(30e9)
    links[(9, 8)] = Link(50e9)
    links[(8, 0)] = Link(100e9)
    flows = [Flow(0, 0, (x, "sw", 9), float(rng.integers(5_000, 60_000))) for x in range(3)]
    flows += [Flow(0, 1, (3, "sw", 9, 8), 40_000.0), Flow(1, 0, (1, "sw", 9, 8, 0), 30_000.0),
              Flow(1, 1, (2, "sw", 9), 25_000.0)]
    got = simulate_window(links, flows, NETBENCH_SIPAC)
    ids = {k: i for i, k in enumerate(links)}
    paths = [[ids[(u, v)] for u, v in zip(f.path, f.path[1:])] for f in flows]
    groups = [[[i for i, f in enumerate(flows) if f.job == j and f.step == s]
               for s in (0, 1)] for j in (0, 1)]
    done, marked = run_reference([(l.bandwidth, NETBENCH_SIPAC.link_delay)
                                  for l in links.values()], paths,
                                 [f.size for f in flows], groups, NETBENCH_SIPAC)
    assert got.marked == marked > 0 and got.pauses > 0
    assert {k: got.step_time[k] for k in got.step_time} == \
        {(j, s): done[(j, s)] for j in (0, 1) for s in (0, 1)}
