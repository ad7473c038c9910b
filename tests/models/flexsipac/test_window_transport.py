"""The window transport (DCTCP, output queues that count what waits in them, ECN marking on
enqueue, lossless links by a pause or credit per link: models.common.dctcp) through the
Flex-SiPAC simulator's interface: hand-computed times, back-pressure without loss, ECN marks
and the reaction to them, single-flow sanity from first principles."""

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
    # 4 senders into one output queue (the authors' setting): everything is delivered, ECN
    # marks appear and DCTCP keeps every ingress count under the pause threshold
    links = {(x, "sw"): Link(100e9) for x in range(4)}
    links[("sw", 9)] = Link(100e9)
    flows = [Flow(x, 0, (x, "sw", 9), 200_000) for x in range(4)]
    r = simulate_window(links, flows, NETBENCH_SIPAC)
    assert r.marked > 0 and r.pauses == 0
    assert r.packets == 4 * math.ceil(200_000 / 1380)
    # open windows without ECN: the queue builds, the links into the switch are paused and
    # nothing is lost (every packet delivered: the run finishes)
    flood = simulate_window(links, flows, Setting(**{**BIG.__dict__, "queue": 20_000.0}))
    assert flood.pauses > 0 and flood.packets == r.packets
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


@pytest.mark.parametrize("backpressure", ["pause", "credit"])
def test_compiled_engine_equals_the_plain_python_reference(backpressure):
    # two jobs, two steps each, an incast through a switch with a slow output and a relay:
    # every completion time, the mark and pause counts and the largest ingress count agree
    # exactly (small pause thresholds and credits so that both mechanisms act)
    import numpy as np

    from aifabric.models.common.dctcp import run_reference
    s = Setting(**{**NETBENCH_SIPAC.__dict__, "backpressure": backpressure,
                   "xoff": 6_000.0, "xon": 3_000.0, "credit": 6_000.0})
    rng = np.random.default_rng(3)
    links = {(x, "sw"): Link(100e9) for x in range(4)}
    links[("sw", 9)] = Link(30e9)
    links[(9, 8)] = Link(50e9)
    links[(8, 0)] = Link(100e9)
    flows = [Flow(0, 0, (x, "sw", 9), float(rng.integers(5_000, 60_000))) for x in range(3)]
    flows += [Flow(0, 1, (3, "sw", 9, 8), 40_000.0), Flow(1, 0, (1, "sw", 9, 8, 0), 30_000.0),
              Flow(1, 1, (2, "sw", 9), 25_000.0)]
    got = simulate_window(links, flows, s)
    ids = {k: i for i, k in enumerate(links)}
    paths = [[ids[(u, v)] for u, v in zip(f.path, f.path[1:])] for f in flows]
    groups = [[[i for i, f in enumerate(flows) if f.job == j and f.step == s]
               for s in (0, 1)] for j in (0, 1)]
    done, marked, pauses, max_ing = run_reference(
        [(l.bandwidth, s.link_delay) for l in links.values()], paths,
        [f.size for f in flows], groups, s)
    assert got.marked == marked > 0 and got.pauses == pauses > 0
    assert got.max_ingress == max_ing > 0
    assert {k: got.step_time[k] for k in got.step_time} == \
        {(j, st): done[(j, st)] for j in (0, 1) for st in (0, 1)}


# ---- single-flow sanity, from first principles (1,920 Gb/s: the Fig 7 CU's bandwidth) ----

LINE = 1920e9 / 8                       # bytes/s
WIRE = (1380 + 120) / 1380              # wire bytes per payload byte
OPEN = Setting("open window, ECN off", init_window=1e6, ssthresh=1e6, ecn_k=1e12,
               handshake=False)


def _through_switch(size, setting, hops=2):
    if hops == 1:
        links, path = {(0, 1): Link(LINE)}, (0, 1)
    else:
        links, path = {(0, "sw"): Link(LINE), ("sw", 1): Link(LINE)}, (0, "sw", 1)
    return simulate_window(links, [Flow(0, 0, path, size)], setting)


def test_one_open_flow_through_the_switch_runs_at_line_rate():
    # nothing but the wire limits a lone flow with an open window and no ECN: its time is
    # its wire bytes at the line rate, plus the two 1 us wires and one more packet's
    # serialisation (store and forward at the switch). A 1 us wire at 1,920 Gb/s holds
    # 240 kB, twelve 20 kB queues: a queue that counted it would throttle the flow.
    size = 2e6
    r = _through_switch(size, OPEN)
    ideal = size * WIRE / LINE + 2e-6 + 1500 / LINE
    assert r.jct == pytest.approx(ideal, rel=0.03)
    # the same without the fixed delays: the rate on the wire, within 3 % of the line rate
    assert size * WIRE / (r.jct - 2e-6) >= 0.97 * LINE


def test_one_flow_through_the_switch_keeps_half_a_direct_flows_rate():
    # the authors' setting: a lone flow is bound by its window (3 segments, slow start to
    # 30, then one segment per round trip), not by any queue; through the switch its round
    # trip is twice a direct hop's, so with the same window history it runs at half the
    # direct flow's rate: at least half of a one-hop flow's rate (0.5 exactly), with nothing
    # to spare for the store-and-forward per round trip, which the window's slack absorbs.
    size = 10e6
    sw = _through_switch(size, NETBENCH_SIPAC)
    one = _through_switch(size, NETBENCH_SIPAC, hops=1)
    assert one.jct / sw.jct >= 0.5
    assert sw.pauses == 0               # one flow, equal rates: no ingress count builds


def test_a_lone_flow_at_the_authors_setting_runs_its_window_schedule():
    # Netbench's TCP defaults (3-segment initial window, slow start to 30 segments, then one
    # more segment per round trip) bound a lone flow by its window, not by the 1,920 Gb/s
    # line: a 30-segment window (45 kB on the wire) is sent in 0.19 us of a 4 us round trip.
    # Counted by hand: the handshake's round trip, then one round trip per window until the
    # segments are out; each round trip is the four 1 us delays plus at least the window's
    # own serialisation, so the time is at least the count and not much more.
    size = 10e6
    segments = math.ceil(size / 1380)
    rounds, window, sent = 0, 3, 0
    while sent < segments:
        sent += window
        rounds += 1
        window = min(2 * window, 30) if window < 30 else window + 1
    rtt = 4e-6
    least = (1 + rounds) * rtt
    r = _through_switch(size, NETBENCH_SIPAC)
    assert least <= r.jct <= 1.25 * least
    # so at the authors' setting no lone 10 MB flow can reach half the line rate: the
    # window schedule alone allows at most this rate
    assert size * WIRE / least < 0.5 * LINE
    assert r.pauses == 0                # one flow, equal rates: no ingress count builds


def test_incast_shares_the_port_fairly():
    # N open-window flows, ECN off, into one switch port of the same rate: the port is the
    # bottleneck, back-pressure (pause per link) shares it. Every flow finishes within 10 %
    # of the others. The port carries at least 3/4 of its line rate: it idles only when
    # every ingress has drained below XON before its RESUME's round trip (2 us) refills it.
    n, size = 4, 2e6
    links = {(x, "sw"): Link(LINE) for x in range(n)}
    links[("sw", 99)] = Link(LINE)
    r = simulate_window(links, [Flow(x, 0, (x, "sw", 99), size) for x in range(n)], OPEN)
    t = [r.job_time[x] for x in range(n)]
    assert min(t) / max(t) >= 0.9
    assert n * size * WIRE / (max(t) - 2e-6) >= 0.75 * LINE
    assert r.pauses > 0                 # the port's share is enforced by pauses, not loss
    # the headroom a lossless port needs: what arrives during the pause's round trip
    assert r.max_ingress > OPEN.xoff


def test_credit_into_a_small_buffer_throttles_a_lone_flow():
    # credit per link: a link carries at most its credit per round trip (two 1 us delays):
    # 20 kB per 2 us = 10 GB/s, 1/24 of the line rate -- the old accounting's ceiling
    s = Setting(**{**OPEN.__dict__, "backpressure": "credit"})
    size = 1e6
    r = _through_switch(size, s)
    bound = s.credit / (2 * s.link_delay + 1500 / LINE)
    assert size * WIRE / r.jct <= 1.05 * bound


def test_bad_backpressure_is_refused():
    with pytest.raises(ValueError, match="backpressure"):
        _through_switch(1e4, Setting("bad", backpressure="ack"))
