"""§8.1's circuit model (models/chronos/sec81.py) on a case solvable by hand."""

import numpy as np
import pytest

from aifabric.models.chronos.sec81 import circuit


def test_circuit_is_quantised_makespan_plus_reconfiguration_plus_engine_time():
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
    # the engine: N load beats, one cycle into RUN, one permutation: N + 2 cycles at 1 GHz
    assert c["decompose_s"] == pytest.approx((n + 2) * 1e-9)
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
