"""The packet-level RoCE switch (models/chronos/roce.py) against hand computations, and the
compiled engine against the plain-Python reference event for event."""

import numpy as np
import pytest

from aifabric.models.chronos.packet import fluid_completion
from aifabric.models.chronos.roce import RoCE, hpcc_dcqcn, hpcc_dcqcn_paper, simulate, simulate_reference

C = 800e9                  # bit/s
D = 250e-9                 # per-link delay: rtt 1 us / 4
PKT = 1050                 # 1,000 payload + 50 header bytes
SER = PKT * 8 / C          # one packet's serialisation


def wire(nbytes):
    """Bytes on the wire for a flow of ``nbytes`` payload in 1,000-byte packets."""
    return nbytes + 50 * -(-nbytes // 1000)


def test_presets_are_hpcc_run_py_at_800g():
    p = hpcc_dcqcn()
    # run.py: kmin 100 KB x bw/25, kmax 400 KB x bw/25, ai 5 Mb/s x bw/25, hai 50 Mb/s x bw/25
    assert (p.k_min, p.k_max, p.p_max) == (3.2e6, 12.8e6, 0.2)
    assert (p.r_ai, p.r_hai, p.g, p.min_rate) == (160e6, 1.6e9, 1 / 256, 1e9)
    assert p.buffer_bytes == 256 * 2**20 and p.pfc == "dynamic"
    assert (p.alpha_timer_s, p.decrease_timer_s, p.increase_timer_s) == (1e-6, 4e-6, 300e-6)
    q = hpcc_dcqcn_paper()
    assert (q.alpha_timer_s, q.decrease_timer_s, q.increase_timer_s) == (50e-6, 50e-6, 55e-6)
    assert p.delay == pytest.approx(D) and p.ack_bytes == 60


def test_one_flow_reaches_line_rate():
    d = np.zeros((2, 2), dtype=np.int64)
    d[0, 1] = 2_000_000
    r = simulate(d, hpcc_dcqcn())
    # NIC back to back, switch forwards each packet as it arrives: the last packet leaves
    # the NIC at W/C, reaches the switch D later, leaves it one packet later, arrives D later
    expect = wire(2_000_000) * 8 / C + SER + 2 * D
    assert r.completion_s == pytest.approx(expect, rel=1e-12)
    assert r.marks == 0 and r.pauses == 0


def test_incast_with_pfc_shares_fairly_and_loses_nothing():
    n = 5                                   # 4 senders -> host 4
    d = np.zeros((n, n), dtype=np.int64)
    d[:4, 4] = 3_000_000
    cfg = hpcc_dcqcn(ecn=False, pfc="static", pfc_xoff=100e3, pfc_xon=80e3)
    r = simulate(d, cfg, max_time_s=1e-3)        # raises if a byte is never delivered
    assert r.pauses > 10                     # PFC did the work
    assert (r.delivered == 3_000_000).all()  # lossless
    # bounded by the thresholds plus what is in flight while a pause travels (2 D at C)
    assert r.peak_buffer <= 4 * (100e3 + 2 * D * C / 8 + 2 * PKT)
    # the receiver's link never idles: the fluid time of everything, plus the pipeline
    total = 4 * wire(3_000_000) * 8 / C
    assert r.completion_s == pytest.approx(total + SER + 2 * D, rel=2e-3)
    # a fair share: every sender finishes within 2% of the end
    assert r.finish_s.min() >= 0.98 * r.completion_s


def test_incast_with_dcqcn_converges_to_the_fair_share():
    n = 5
    d = np.zeros((n, n), dtype=np.int64)
    d[:4, 4] = 3_000_000
    cfg = hpcc_dcqcn(k_min=20e3, k_max=80e3, alpha_timer_s=1e-6, decrease_timer_s=4e-6,
                     increase_timer_s=20e-6)
    r = simulate(d, cfg)
    assert r.cnps > 0 and (r.delivered == 3_000_000).all()
    assert r.finish_s.min() >= 0.9 * r.completion_s
    assert r.completion_s >= 4 * wire(3_000_000) * 8 / C


def test_no_ecn_and_a_large_buffer_give_the_fluid_bound():
    cfg = hpcc_dcqcn(ecn=False, ack_bytes=0)
    # 3 -> 1 incast of different sizes, 1 -> 3 fan-out, and a uniform all-to-all: cases whose
    # max-min fluid completion keeps the bottleneck busy throughout
    incast = np.zeros((4, 4), dtype=np.int64)
    incast[:3, 3] = [1_000_000, 2_000_000, 3_000_000]
    uniform = np.full((4, 4), 600_000, dtype=np.int64)
    np.fill_diagonal(uniform, 0)
    for d in (incast, incast.T.copy(), uniform):
        r = simulate(d, cfg)
        fluid = fluid_completion(np.vectorize(wire)(d), C)
        assert r.completion_s >= fluid
        assert r.completion_s == pytest.approx(fluid + SER + 2 * D, abs=3 * SER)


def test_acks_take_their_share_of_the_links():
    # 0 <-> 1 exchange 2 MB each way: every NIC sends its data and an ACK per packet it
    # receives, so each uplink carries W + 2,000 x 60 bytes
    d = np.array([[0, 2_000_000], [2_000_000, 0]])
    r = simulate(d, hpcc_dcqcn(ecn=False, ack_bytes=60))
    busy = (wire(2_000_000) + 2_000 * 60) * 8 / C
    assert r.completion_s == pytest.approx(busy + SER + 2 * D, abs=3 * SER)
    assert simulate(d, hpcc_dcqcn(ecn=False, ack_bytes=0)).completion_s < busy


@pytest.mark.parametrize("sim", [simulate, simulate_reference])
def test_a_cnp_waits_behind_the_data_queued_at_its_senders_port(sim):
    # 0 -> 2 and 1 -> 2 (port 2 marks: K_min = K_max = 0), 3 -> 0 and 4 -> 0 at line rate
    # (port 0's queue grows by one packet per SER). No rate ever changes (no decrease
    # within the run, rate 1 x on the first CNP), so every time is fixed by the links.
    d = np.zeros((5, 5), dtype=np.int64)
    d[0, 2] = d[1, 2] = 200_000
    d[3, 0] = d[4, 0] = 1_000_000
    ack = 60 * 8 / C
    # the first possible ACK of 0 -> 2 reaches the switch at ta: its packet left port 2 at
    # SER + D at the earliest, reached host 2 SER + D later, whose NIC sends the ACK at once
    ta = 2 * SER + 3 * D + ack
    k = int((ta - D) // SER)         # by ta, 2 k data packets have reached port 0 ...
    # ... which sends data back to back from SER + D on: in ns-3's data FIFO the CNP waits
    # for all of them, then the ACK itself and the link to host 0
    bound = (SER + D) + 2 * k * SER + ack + D
    first = {}
    for ahead in (False, True):
        cfg = hpcc_dcqcn(k_min=0.0, k_max=0.0, decrease_timer_s=1.0, switch_ack_first=ahead)
        r = sim(d, cfg, log=10**6)
        first[ahead] = min(t for t, kind, a in r.log if kind == 5 and a == 0)
    assert first[False] >= bound
    # ahead of data, it waits at most for the packet port 0 is sending
    assert first[True] <= ta + SER + 3 * SER + ack + D
    # the difference is the queue at ta: 2 k packets arrived, about k of them sent
    assert first[False] - first[True] >= (k - 4) * SER


def test_bytes_are_conserved_and_the_buffer_never_overflows():
    rng = np.random.default_rng(5)
    d = rng.integers(0, 400_000, (6, 6))
    np.fill_diagonal(d, 0)
    cfg = hpcc_dcqcn(k_min=10e3, k_max=40e3, buffer_bytes=300e3, pfc_alpha=1 / 8)
    r = simulate(d, cfg, seed=2)
    assert (r.delivered[:] == d[np.nonzero(d)]).all()
    assert r.marks > 0 and r.pauses > 0
    assert r.peak_buffer <= cfg.buffer_bytes


def _sawtooth_case():
    g, r_ai, r_hai = 1 / 16, 5e9, 20e9
    cfg = hpcc_dcqcn(ecn=False, g=g, r_ai=r_ai, r_hai=r_hai, alpha_timer_s=1e-6,
                     decrease_timer_s=4e-6, increase_timer_s=10e-6, fast_recovery=1)
    d = np.zeros((2, 2), dtype=np.int64)
    d[0, 1] = 8_000_000                    # 80 us at line rate: active through the trace
    return cfg, d, [(2e-6, 0), (20.5e-6, 0)]


@pytest.mark.parametrize("sim", [simulate, simulate_reference])
def test_dcqcn_sawtooth_by_hand(sim):
    cfg, d, inject = _sawtooth_case()
    g, ai, hai = cfg.g, cfg.r_ai, cfg.r_hai
    r = sim(d, cfg, inject_cnp=inject, trace_flow=0)
    steps = [(t, w, rc, rt) for t, w, rc, rt, _ in r.trace if w not in ("alpha", "first_cnp")]
    # By hand (Zhu et al. / ns-3 RdmaHw): CNP at 2 us sets alpha = 1; alpha ticks at 3..6 us
    # without CNPs: alpha = (1-g)^4 at the first decrease (6 us + 1 ns), which does not
    # clamp R_T (no increase since the last cut): R_C = C (1 - alpha/2), R_T = C.
    hand = []
    rc, rt = C * (1 - (1 - g) ** 4 / 2), C
    hand.append((6.001e-6, "decrease", rc, rt))
    rc = (rc + rt) / 2                                  # fast recovery at 16.001 us
    hand.append((16.001e-6, "fast_recovery", rc, rt))
    # CNP at 20.5 us; alpha ticks 3..20 us decay it 18 times, the one at 21 us sees the
    # CNP (decay and add g), the one at 22 us decays it once more before the cut
    alpha = (1 - g) * ((1 - g) ** 19 + g)
    rt, rc = rc, rc * (1 - alpha / 2)                   # cut at 22.001 us clamps R_T to R_C
    hand.append((22.001e-6, "decrease", rc, rt))
    rc = (rc + rt) / 2                                  # fast recovery: halves the gap
    hand.append((32.001e-6, "fast_recovery", rc, rt))
    rt += ai                                            # additive increase
    rc = (rc + rt) / 2
    hand.append((42.001e-6, "additive", rc, rt))
    for k in range(2):                                  # hyper increase
        rt += hai
        rc = (rc + rt) / 2
        hand.append(((52.001 + 10 * k) * 1e-6, "hyper", rc, rt))
    assert [w for _, w, _, _ in steps[:len(hand)]] == [w for _, w, _, _ in hand]
    for (t, w, rc_, rt_), (ht, hw, hrc, hrt) in zip(steps, hand):
        assert t == pytest.approx(ht, abs=1e-12), w
        assert rc_ == pytest.approx(hrc, rel=1e-12), w
        assert rt_ == pytest.approx(hrt, rel=1e-12), w
    first = r.trace[0]
    assert first[1] == "first_cnp" and first[4] == 1.0


@pytest.mark.parametrize("sim", [simulate, simulate_reference])
def test_byte_counter_by_hand(sim):
    """Zhu et al.'s byte counter with the timer out of reach (1 s): after the cut, every
    m packets (B = m x 1,050 wire bytes) the rate rises, F times by fast recovery, then
    additively (the timer's count stays 0 <= F, so never hyper); R_T stays at line rate
    (the first cut does not clamp it). Between two increases the flow sends exactly m
    packets: the one that completed the count left at the old rate, the other m - 1 at the
    new one."""
    F, m = 2, 20
    cfg = hpcc_dcqcn(ecn=False, g=1 / 16, alpha_timer_s=1e-6, decrease_timer_s=4e-6,
                     increase_timer_s=1.0, fast_recovery=F, byte_counter_bytes=PKT * m)
    d = np.zeros((2, 2), dtype=np.int64)
    d[0, 1] = 4_000_000
    r = sim(d, cfg, inject_cnp=[(2e-6, 0)], trace_flow=0)
    kinds = [w for _, w, _, _, _ in r.trace]
    cut = kinds.index("decrease")
    assert kinds.count("decrease") == 1
    inc = [(t, w, rc) for t, w, rc, rt, _ in r.trace[cut + 1:]
           if w not in ("alpha", "first_cnp")]
    assert len(inc) >= 8
    assert [w for _, w, _ in inc[:8]] == ["fast_recovery"] * F + ["additive"] * (8 - F)
    assert all(rt == C for _, w, _, rt, _ in r.trace[cut:] if w != "alpha")
    rc = r.trace[cut][2]
    assert rc == pytest.approx(C * (1 - (1 - 1 / 16) ** 4 / 2), rel=1e-12)
    rates = [rc]
    for _, _, got in inc[:8]:
        rates.append((rates[-1] + C) / 2)                 # the gap to R_T halves
        assert got == pytest.approx(rates[-1], rel=1e-12)
    for k in range(1, 8):
        gap = PKT * 8 / rates[k - 1] + (m - 1) * PKT * 8 / rates[k]
        assert inc[k][0] - inc[k - 1][0] == pytest.approx(gap, rel=1e-9), k


@pytest.mark.parametrize("sim", [simulate, simulate_reference])
def test_byte_counter_and_timer_reach_hyper_increase(sim):
    """With both counters running, hyper increase comes only once the timer too has
    expired more than F times since the cut (Zhu et al.: both counts above F), and then at
    once: the byte counter (10 packets, about 0.1 us at line rate) is far above F by the
    timer's (F + 1)-th expiry, so that expiry is the first hyper increase."""
    F = 1
    cfg = hpcc_dcqcn(ecn=False, g=1 / 16, alpha_timer_s=1e-6, decrease_timer_s=4e-6,
                     increase_timer_s=5e-6, fast_recovery=F, byte_counter_bytes=PKT * 10)
    d = np.zeros((2, 2), dtype=np.int64)
    d[0, 1] = 6_000_000
    r = sim(d, cfg, inject_cnp=[(2e-6, 0)], trace_flow=0)
    cut_t = next(t for t, w, *_ in r.trace if w == "decrease")
    hyper = [t for t, w, *_ in r.trace if w == "hyper"]
    assert hyper, "no hyper increase"
    # the timer restarts at the cut: its (F + 1)-th expiry is (F + 1) periods later
    assert min(hyper) == pytest.approx(cut_t + (F + 1) * 5e-6, rel=1e-12)
    without = sim(d, hpcc_dcqcn(ecn=False, g=1 / 16, alpha_timer_s=1e-6,
                                     decrease_timer_s=4e-6, increase_timer_s=5e-6,
                                     fast_recovery=F), inject_cnp=[(2e-6, 0)])
    assert r.completion_s < without.completion_s      # the byte counter recovers faster


def _random_case(rng):
    n = int(rng.integers(2, 6))
    d = rng.integers(0, 60_000, (n, n))
    d[rng.random((n, n)) < 0.2] = 0
    np.fill_diagonal(d, 0)
    kw = dict(k_min=float(rng.integers(0, 20_000)), p_max=float(rng.uniform(0.05, 1)),
              g=float(rng.uniform(0.01, 0.5)), alpha_timer_s=float(rng.uniform(0.05, 1)) * 1e-6,
              decrease_timer_s=float(rng.uniform(0.1, 2)) * 1e-6,
              increase_timer_s=float(rng.uniform(0.2, 3)) * 1e-6,
              fast_recovery=int(rng.integers(0, 4)), r_ai=float(rng.uniform(1, 50)) * 1e9,
              r_hai=float(rng.uniform(1, 200)) * 1e9, min_rate=float(rng.uniform(1, 100)) * 1e9,
              cnp_interval_s=float(rng.choice([0.0, 0.3e-6])),
              clamp_target=bool(rng.integers(0, 2)),
              rate_on_first_cnp=float(rng.choice([1.0, 0.5])),
              ack_bytes=int(rng.choice([0, 60])))
    kw["k_max"] = kw["k_min"] + float(rng.integers(0, 40_000))
    kw["byte_counter_bytes"] = float(rng.choice([0.0, float(rng.integers(2_000, 30_000))]))
    if rng.integers(0, 2):
        kw.update(pfc="static", pfc_xoff=float(rng.integers(3_000, 15_000)))
        kw["pfc_xon"] = kw["pfc_xoff"] * float(rng.uniform(0.3, 0.9))
    else:
        kw.update(buffer_bytes=float(rng.integers(20_000, 100_000)),
                  pfc_alpha=float(rng.uniform(0.05, 0.5)))
    return d, hpcc_dcqcn(**kw)


def test_engine_equals_reference_event_for_event():
    rng = np.random.default_rng(30)
    seen = {"marks": 0, "pauses": 0, "cnps": 0}
    counters, ack_modes = set(), set()
    for case in range(8):
        d, cfg = _random_case(rng)
        cfg = cfg.replace(switch_ack_first=bool(case % 2))   # ACKs ahead of data or in line
        inject = [(float(rng.uniform(0, 2e-6)), int(rng.integers(0, max(1, np.count_nonzero(d)))))
                  for _ in range(2)] if np.count_nonzero(d) else []
        a = simulate_reference(d, cfg, seed=case, inject_cnp=inject, log=10**6, trace_flow=0)
        b = simulate(d, cfg, seed=case, inject_cnp=inject, log=10**6, trace_flow=0)
        assert a.events == b.events and a.log == b.log, f"case {case}"
        assert (a.marks, a.cnps, a.pauses, a.peak_buffer) == (b.marks, b.cnps, b.pauses,
                                                              b.peak_buffer)
        assert (a.finish_s == b.finish_s).all() and a.trace == b.trace
        counters.add(cfg.byte_counter_bytes > 0)
        ack_modes.add((cfg.ack_bytes > 0, cfg.switch_ack_first))
        for k in seen:
            seen[k] += getattr(a, k)
    assert all(v > 0 for v in seen.values()), seen      # the cases exercise ECN and PFC
    assert counters == {False, True}                     # with and without a byte counter
    assert {(True, False), (True, True)} <= ack_modes    # ACKs in the data FIFO and ahead


@pytest.mark.parametrize("demand, kw, word", [
    ([[0, 1, 2], [1, 0, 2]], {}, "demand"),
    ([[0, -1], [1, 0]], {}, "demand"),
    ([[0, 1], [1, 0]], {"link_bps": 0}, "link_bps"),
    ([[0, 1], [1, 0]], {"pfc": "static", "pfc_xoff": 1e5, "pfc_xon": 1e5}, "pfc_xon"),
    ([[0, 1], [1, 0]], {"k_min": 2e6, "k_max": 1e6}, "k_min"),
    ([[0, 1], [1, 0]], {"buffer_bytes": 500}, "buffer_bytes"),
    ([[0, 1], [1, 0]], {"p_max": 0}, "p_max"),
])
def test_bad_input_names_the_parameter(demand, kw, word):
    with pytest.raises(ValueError, match=word) as e:
        simulate(demand, RoCE(**kw)) if kw else simulate(demand)
    assert "\n" not in str(e.value)
