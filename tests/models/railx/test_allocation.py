"""Bandwidth allocation (eq 11, Fig 16) and the dynamic CP/EP schedule (§5.2)."""

import pytest

from aifabric.models.railx.allocation import best_split, dynamic_cp_ep, fig16, split_time


def test_best_split_by_hand():
    # V_d = 4, V_c = 1, B = 0.5: time 4/n_d + 1/n_c, n_d + n_c = 3 -> n_d = 2, n_c = 1
    assert best_split(3, 4, 1, 0.5) == (2, 1, pytest.approx(3.0))
    # equal volumes split evenly
    assert best_split(10, 1, 1, 1)[:2] == (5, 5)
    # overlap hides DP completely -> DP keeps one port
    assert best_split(10, 1, 1, 1, comp_d=10)[:2] == (1, 9)
    # an exposed share of DP keeps DP above one port
    assert best_split(10, 1, 1, 1, comp_d=10, exposed_d=0.5)[:2] == (4, 6)
    with pytest.raises(ValueError, match="at least one port"):
        split_time(0, 3, 1, 1, 1)
    with pytest.raises(ValueError, match="ports must be an int >= 2"):
        best_split(1, 1, 1, 1)


def test_fig16_trends():
    d = fig16()
    no, ov = d["no_overlap"], d["overlap"]
    assert no == sorted(no) and no[-1] > no[0]          # more CP ports as S grows
    assert all(b >= a for a, b in zip(no, ov)) and ov != no
    for S in d["seq_lens"]:                             # the reported best is the minimum
        times = d["times"][S]["no_overlap"]
        assert times[no[d["seq_lens"].index(S)] - 1] == min(times)


def test_dynamic_reallocation():
    d = dynamic_cp_ep(2e9, 4e9, 10, 50e9, gap=6e-3, reconfig=1e-3)
    assert d["feasible"] and d["dynamic_comm"] < d["static_comm"]
    assert d["dynamic_comm"] == pytest.approx((2e9 + 4e9) / (2 * 10 * 50e9))
    phases = [p[0] for p in d["dynamic"]]
    assert phases[0] == "CP" and "EP" in phases
    too_slow = dynamic_cp_ep(2e9, 4e9, 10, 50e9, gap=6e-3, reconfig=20e-3)
    assert not too_slow["feasible"] and "dynamic" not in too_slow
