"""Circuit vs packet completion models on cases solvable by hand."""

import numpy as np
import pytest

from aifabric.models.chronos.packet import (DCQCN, circuit_completion, dcqcn_completion,
                                   fluid_completion)

C = 800e9          # bit/s
MB = 1_000_000


def test_fluid_by_hand():
    # One flow: size / rate.
    assert fluid_completion([[0, 10 * MB], [0, 0]], C) == pytest.approx(8 * 10 * MB / C)
    # Incast 2 -> 1 and fan-out 1 -> 2: the shared link carries everything.
    incast = np.zeros((3, 3), dtype=int)
    incast[0, 2], incast[1, 2] = 3 * MB, 1 * MB
    assert fluid_completion(incast, C) == pytest.approx(8 * 4 * MB / C)
    assert fluid_completion(incast.T, C) == pytest.approx(8 * 4 * MB / C)
    # Max-min is not always optimal: 0->1 (2 MB), 0->2 (1 MB), 3->2 (1 MB). Fair shares
    # give 0->2 and 3->2 half the link to 2 each; all finish at 3 MB worth of time.
    d = np.zeros((4, 4), dtype=int)
    d[0, 1], d[0, 2], d[3, 2] = 2 * MB, 1 * MB, 1 * MB
    assert fluid_completion(d, C) == pytest.approx(8 * 3 * MB / C)


def test_circuit_exact_is_the_lower_bound_plus_overheads():
    d = np.array([[0, 4, 2], [1, 0, 5], [3, 3, 0]]) * MB
    r = circuit_completion(d, C, t_x_s=1e-6)
    assert r["transfer_s"] == pytest.approx(8 * 7 * MB / C)       # column sums 4, 7, 7 MB
    assert r["reconfig_s"] == pytest.approx(r["permutations"] * 1e-6)
    # the schedule's time only: the host's decomposition time is reported apart
    assert r["total_s"] == pytest.approx(8 * 7 * MB / C + r["permutations"] * 1e-6, rel=1e-12)
    assert r["decompose_s"] > 0


def test_dcqcn_single_flow_runs_at_line_rate():
    d = np.zeros((2, 2), dtype=int)
    d[0, 1] = 10 * MB
    t = dcqcn_completion(d, C, rtt_s=1e-6)
    assert t == pytest.approx(8 * 10 * MB / C + 1e-6, abs=1e-6)


def test_dcqcn_incast_is_never_faster_than_the_fluid_bound():
    rng = np.random.default_rng(1)
    d = rng.integers(1, 20, (6, 6)) * MB
    np.fill_diagonal(d, 0)
    fluid = fluid_completion(d, C)
    t = dcqcn_completion(d, C, seed=3)
    assert t >= fluid
    assert t == dcqcn_completion(d, C, seed=3)          # seeded: reproducible


def test_dcqcn_congestion_control_slows_an_incast():
    # 4 -> 1 incast: queues pass K_max, CNPs cut rates; slow recovery (Zhu's 55 us timer)
    # leaves the egress idle, fast recovery keeps it busy.
    d = np.zeros((5, 5), dtype=int)
    d[:4, 4] = 20 * MB
    slow = dcqcn_completion(d, C)
    fast = dcqcn_completion(d, C, params=DCQCN(rate_timer=2e-6, alpha_timer=2e-6))
    bound = fluid_completion(d, C)
    assert slow > 1.2 * bound
    assert fast < slow


@pytest.mark.parametrize("kwargs,message", [
    ({"k_min": 300e3}, "k_min < k_max"),
    ({"p_max": 0}, "'p_max' must be a positive number"),
    ({"pfc_xon": 3e6}, "pfc_xon < pfc_xoff"),
])
def test_dcqcn_parameter_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DCQCN(**kwargs)


def test_rate_errors():
    with pytest.raises(ValueError, match="'link_bps' must be a positive number"):
        fluid_completion(np.eye(2, dtype=int), 0)
    with pytest.raises(ValueError, match="'dt_s' must be in"):
        dcqcn_completion(np.eye(2, dtype=int), C, dt_s=1.0)
