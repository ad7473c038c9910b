"""§8.1's circuit model (models/chronos/sec81.py) on a case solvable by hand."""

import numpy as np
import pytest

from aifabric.models.chronos.sec81 import circuit


def test_circuit_is_quantised_makespan_plus_reconfiguration_plus_engine_time(monkeypatch):
    from aifabric.models.chronos import setting
    # the engine's period: 50 FO4 measured at N = 8 (the smallest size >= 4) x 10 ps
    monkeypatch.setattr(setting, "ENGINE_PERIOD_FO4", {8: 50.0, 16: 80.0})
    monkeypatch.setattr(setting, "FO4_PS", 10.0)
    n = 4
    d = np.zeros((n, n), dtype=np.int64)
    for i in range(n):
        d[i, (i + 1) % n] = 1_000_000                  # one permutation of 1 MB entries
    c = circuit(d)
    # 512 slots: the smallest unit with ceil(1e6 / unit) <= 512 is 1,954 bytes, so each
    # entry takes 512 slots of 1,954 bytes = 1,000,448 bytes on the wire
    assert c["transfer_s"] == pytest.approx(8 * 512 * 1954 / 800e9, rel=1e-12)
    assert c["permutations"] == 1
    assert c["reconfig_s"] == pytest.approx(10e-9)
    # the engine: N load beats, one cycle into RUN, one permutation: N + 2 cycles of 500 ps
    assert c["decompose_s"] == pytest.approx((n + 2) * 500e-12)
    assert c["total_s"] == pytest.approx(c["transfer_s"] + c["reconfig_s"] + c["decompose_s"])
    # the unquantised ablation: the lower bound over the rate, one reconfiguration
    assert c["exact_s"] == pytest.approx(8e6 / 800e9 + 10e-9, rel=1e-12)
    assert c["quant_overhead"] == pytest.approx(512 * 1954 / 1e6 - 1)


def test_packet_set_in_two_processes_equals_one(monkeypatch):
    from aifabric.models.chronos.roce import hpcc_dcqcn
    from aifabric.models.chronos.sec81 import JOBS_ENV, matrices, packet_set
    mats = matrices(3, 5, 0.0005)                      # three small all-to-alls (~100 KB/host)
    cfg = hpcc_dcqcn()
    monkeypatch.setenv(JOBS_ENV, "1")
    serial = packet_set(mats, cfg, 11, progress=False)
    monkeypatch.setenv(JOBS_ENV, "2")
    parallel = packet_set(mats, cfg, 11, progress=False)
    # each matrix keeps its own ECN seed (seed + k) whichever process runs it
    assert list(parallel) == list(serial)
    assert len(set(serial)) == 3                       # three different matrices, not one


@pytest.mark.parametrize("text", ["0", "-2", "two", "1.5"])
def test_jobs_must_be_a_positive_integer(monkeypatch, text):
    from aifabric.models.chronos.sec81 import JOBS_ENV, workers
    monkeypatch.setenv(JOBS_ENV, text)
    with pytest.raises(ValueError, match=f"{JOBS_ENV} must be a positive integer"):
        workers(4)


def test_workers_never_exceed_the_runs(monkeypatch):
    from aifabric.models.chronos.sec81 import JOBS_ENV, workers
    monkeypatch.setenv(JOBS_ENV, "8")
    assert workers(3) == 3
    monkeypatch.delenv(JOBS_ENV)
    assert 1 <= workers(1) == 1


def _square(x):
    return x * x


@pytest.mark.parametrize("jobs,warmed", [("2", 1), ("1", 0)])
def test_pmap_warms_here_once_before_its_processes(monkeypatch, jobs, warmed):
    """``warm`` (the engine's compilation) runs in this process, once, before the worker
    processes start; with one process the runs are here and need none."""
    from aifabric.models.common.parallel import JOBS_ENV, pmap
    monkeypatch.setenv(JOBS_ENV, jobs)
    calls = []
    assert pmap(_square, [1, 2, 3], progress=False, warm=lambda: calls.append(1)) == [1, 4, 9]
    assert len(calls) == warmed


def _fake_run(rng, volume, ints):
    """A stand-in for one §8.1 run (untuned and tuned results), every value drawn (counts
    from the range ``ints``)."""
    from types import SimpleNamespace

    from aifabric.models.chronos.roce import hpcc_dcqcn
    from aifabric.models.chronos.sec81 import REACTION_POINT
    k = 5
    circ = rng.uniform(5e-3, 15e-3, k)
    pk = lambda: circ * rng.uniform(1.05, 1.4, k)     # noqa: E731
    mats = [rng.integers(1, 10**6, (16, 16)) for _ in range(k)]
    u = {"volume": volume, "matrices": mats, "circuit_s": circ,
         "exact_s": circ * rng.uniform(0.9, 1, k), "decompose_s": rng.uniform(1e-7, 1e-6, k),
         "quant_overhead": rng.uniform(0, 0.02, k), "fluid_s": circ * rng.uniform(0.9, 1, k),
         "framed_s": circ * rng.uniform(1.01, 1.1, k),
         "packet": {"dcqcn": pk(), "dcqcn_paper": pk()},
         "reaction_point": {k: pk() for k in REACTION_POINT}}
    hist = list(rng.uniform(10e-3, 20e-3, 9))
    tuning = SimpleNamespace(
        params=hpcc_dcqcn(k_min=rng.uniform(1e6, 9e6), k_max=rng.uniform(10e6, 30e6),
                          p_max=rng.uniform(0.01, 1), r_ai=rng.uniform(1e7, 1e9),
                          r_hai=rng.uniform(1e8, 1e10), g=rng.uniform(0.01, 0.4)),
        history=hist, improvement=list(rng.uniform(0, 0.3, 9)),
        best_trial=int(rng.integers(0, 9)), trials=int(rng.integers(*ints)),
        train=int(rng.integers(*ints)), min_trials=int(rng.integers(*ints)),
        patience=int(rng.integers(*ints)), max_trials=int(rng.integers(*ints)),
        startup=int(rng.integers(*ints)), converged=True)
    return u, {"tuning": tuning, "packet_s": pk(), "ack_first_s": pk()}


# numbers a reason may quote as typed: §8.1's printed values (10.13 ms: 13 ms x (1 - 22.04 %)) and
# small integers; "95" is the
# confidence level and "8.1" the section
PRINTED = {"13", "22.04", "32", "1.28", "10.13", "95", "8.1"}


def _numbers(text: str) -> list[str]:
    """The numbers of ``text`` in order (figure file names left out)."""
    import re
    return re.findall(r"\d+(?:[.,]\d+)*", re.sub(r"\S+\.png", "", text))


@pytest.mark.parametrize("volume", [0.01, 1.0])
def test_every_number_in_a_reason_is_computed(monkeypatch, volume):
    """Two §8.1 runs that share no value and no setting (the presets' timers and framing, the
    engine's slot budget and clock, the stopping rule differ): a number quoted in both
    reasons is typed in the code, not formatted from the run, unless §8.1 prints it."""
    from collections import defaultdict

    from aifabric.models.chronos import sec81, setting
    from aifabric.models.chronos.roce import hpcc_dcqcn, hpcc_dcqcn_paper
    monkeypatch.setattr(sec81, "ranges", lambda quick: defaultdict(lambda: (0, 1)))
    u, t = _fake_run(np.random.default_rng(1), volume, (11, 50))
    first = sec81.records(u, t)
    patched = {"dcqcn": lambda **kw: hpcc_dcqcn(**{**dict(
                   alpha_timer_s=3e-6, decrease_timer_s=7e-6, increase_timer_s=123e-6,
                   header_bytes=77, mtu=1499, fast_recovery=3, link_bps=700e9), **kw}),
               "dcqcn_paper": lambda **kw: hpcc_dcqcn_paper(**{**dict(
                   alpha_timer_s=61e-6, decrease_timer_s=67e-6, increase_timer_s=71e-6), **kw})}
    monkeypatch.setattr(sec81, "PRESETS", patched)
    monkeypatch.setattr(sec81, "STOP", 0.0037, raising=False)
    monkeypatch.setattr(setting, "ENGINE_BUDGET", 333)
    monkeypatch.setattr(setting, "FO4_PS", 13.7)
    u2, t2 = _fake_run(np.random.default_rng(3), volume * 0.53, (51, 99))
    second = sec81.records(u2, t2)
    typed = {}
    for a, b in zip(first, second):
        na, nb = _numbers(a.why + " " + a.note), _numbers(b.why + " " + b.note)
        assert len(na) == len(nb), (a.id, na, nb)          # one template, other values
        same = [x for x, y in zip(na, nb) if x == y and x not in PRINTED
                and not (x.isdigit() and int(x) <= 10)]
        if same:
            typed[a.id] = same
    assert not typed, typed


def test_tuning_stops_once_the_best_so_far_stops_improving():
    from aifabric.models.chronos.sec81 import stopped
    flat = [10.0, 9.0, 8.0, 8.0, 8.0, 8.0]
    assert stopped(flat, min_trials=4, patience=3)            # 8.0 for the last 3 trials
    assert not stopped(flat, min_trials=7, patience=3)        # too few trials yet
    assert not stopped(flat, min_trials=4, patience=4)        # 9.0 -> 8.0 within the last 4
    falling = [10.0 * 0.99 ** k for k in range(10)]           # 1 % better every trial
    assert not stopped(falling, min_trials=4, patience=3)
    assert stopped(falling, min_trials=4, patience=3, rel=0.05)
    # a worse trial does not count as progress: best-so-far, not the last value
    assert stopped([5.0, 9.0, 4.0, 7.0, 6.0, 8.0], min_trials=2, patience=3)
    # the patience runs after the sampler's random start-up trials only
    assert not stopped(flat, min_trials=4, patience=3, startup=3)   # 6 < 3 + 3 + 1
    assert stopped(flat + [8.0], min_trials=4, patience=3, startup=3)


def test_framing_adds_the_packet_switch_headers_per_packet():
    from aifabric.models.chronos.roce import hpcc_dcqcn
    from aifabric.models.chronos.sec81 import framed
    d = np.array([[0, 2_500], [1_000, 0]])
    # 2,500 bytes are 3 packets (1,000 + 1,000 + 500), 1,000 bytes one: 50 header bytes each
    assert framed(d).tolist() == [[0, 2_650], [1_050, 0]]
    assert framed(d, hpcc_dcqcn(mtu=500, header_bytes=10)).tolist() == [[0, 2_550], [1_020, 0]]


def test_committed_tuned_packet_switch_is_not_slower_than_untuned():
    """The committed full run: tuning started from the dcqcn preset (trial 0) and kept the
    best on the training matrices; on the test matrices the tuned mean is not slower."""
    from aifabric.scripts.reproduce import load_results
    rs = {r.id: r for r in load_results() if r.paper == "chronos"}
    untuned, tuned = rs["sec8.1.packet.mean"], rs["sec8.1.tuned.packet.mean"]
    assert tuned.model_value <= untuned.model_value, (tuned.model_value, untuned.model_value)
    # a faster packet switch leaves the circuit less to gain
    assert rs["sec8.1.tuned.improvement.mean"].model_value <= \
        rs["sec8.1.improvement.mean"].model_value


def test_tuned_switch_runs_at_ns3_ack_rule_with_acks_ahead_as_ablation(monkeypatch):
    """The tuned records run the engine's rule, ACKs in their flow's data FIFO at the switch
    (HPCC's ns-3); the same tuned parameters with ACKs ahead of data are the ablation, and
    its record carries that run's value and says its rule."""
    from collections import defaultdict
    from types import SimpleNamespace

    from aifabric.models.chronos import sec81
    from aifabric.models.chronos.roce import hpcc_dcqcn
    seen = []

    def fake_simulate(d, cfg, seed, max_time_s=None):
        seen.append((cfg.switch_ack_first, cfg.k_min, seed))
        return SimpleNamespace(completion_s=(2e-3 if cfg.switch_ack_first else 1e-3) + seed * 1e-9)

    params = hpcc_dcqcn(k_min=5e6, k_max=20e6)
    assert params.switch_ack_first is False           # the engine's default: ns-3's rule
    monkeypatch.setenv(sec81.JOBS_ENV, "1")
    monkeypatch.setattr(sec81, "simulate", fake_simulate)
    monkeypatch.setattr(sec81, "tune", lambda quick, progress=True: SimpleNamespace(params=params))
    mats = [np.full((2, 2), 1000), np.full((2, 2), 2000)]
    t = sec81.tuned(True, {"matrices": mats}, progress=False)
    s0 = sec81.TEST_SEED * 100_003
    assert seen == [(False, 5e6, s0), (False, 5e6, s0 + 1), (True, 5e6, s0), (True, 5e6, s0 + 1)]
    assert t["packet_s"].tolist() == pytest.approx([1e-3 + s0 * 1e-9, 1e-3 + (s0 + 1) * 1e-9])
    assert t["ack_first_s"].tolist() == pytest.approx([2e-3 + s0 * 1e-9, 2e-3 + (s0 + 1) * 1e-9])

    monkeypatch.setattr(sec81, "ranges", lambda quick: defaultdict(lambda: (-100, 100)))
    u, t = _fake_run(np.random.default_rng(5), 1.0, (11, 50))
    rs = {r.id: r for r in sec81.records(u, t)}
    ahead = rs["sec8.1.tuned.ack_first.improvement.mean"]
    assert ahead.model_value == pytest.approx(
        100 * np.mean(1 - u["circuit_s"] / t["ack_first_s"]))
    assert ahead.kind == "ablation" and ahead.setting["switch_acks"].startswith("ahead")
    assert "switch_acks" in ahead.choices
    head = rs["sec8.1.tuned.improvement.mean"]
    assert head.setting["switch_acks"].startswith("with data")
    assert "switch_acks" not in head.choices          # ns-3's rule, not ours
    assert f"{ahead.model_value:.2f}%" in head.why
