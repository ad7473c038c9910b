"""Eq 1-3 against executed schedules on small grids; eq 12-13 enumerated."""

import dataclasses

import pytest

from aifabric.models.railonly import collectives as co

GRIDS = [(1, 3), (3, 1), (2, 2), (4, 3), (3, 4), (8, 2)]


def test_eq1_hand_worked():
    # D = 12 bytes on 4 x 3: NIC 2*12/(12*1) = 2, HB 3*12/(4*10) = 0.9
    assert co.ag_time(12.0, 4, 3, 10.0, 1.0) == pytest.approx(2.9)


@pytest.mark.parametrize("x,y", GRIDS)
def test_allgather_schedule_gives_eq1(x, y):
    D = 7.0 * x * y
    run = co.run_schedule(co.allgather_schedule(x, y, D), 10.0, 1.0)
    assert run["total"] == pytest.approx(co.ag_time(D, x, y, 10.0, 1.0))
    # bytes each GPU puts on its NIC: (y - 1) D / (x y)
    nic = [v for (g, link), v in run["phases"][0]["egress"].items() if link == "nic"] \
        if y > 1 else []
    assert all(v == pytest.approx((y - 1) * D / (x * y)) for v in nic)


@pytest.mark.parametrize("x,y", GRIDS)
def test_alltoall_schedules_give_eq2_and_eq3(x, y):
    only = co.run_schedule(co.alltoall_schedule(x, y, 3.0), 8.0, 1.0)
    assert only["total"] == pytest.approx(co.a2a_rail_only(3.0, x, y, 8.0, 1.0))
    direct = co.run_schedule(co.alltoall_schedule(x, y, 3.0, rail_only=False), 8.0, 1.0,
                             rail_only=False)
    assert direct["total"] == pytest.approx(co.a2a_rail_optimized(3.0, x, y, 8.0, 1.0))


def test_direct_alltoall_needs_the_spine():
    with pytest.raises(AssertionError, match="leaves its rail"):
        co.run_schedule(co.alltoall_schedule(2, 2, rail_only=False), 8.0, 1.0)


def test_a_broken_schedule_is_caught():
    s = co.alltoall_schedule(3, 2)
    s.transfers = s.transfers[1:]                      # one transfer lost
    with pytest.raises(AssertionError, match="ends without|lacks"):
        co.run_schedule(s, 8.0, 1.0)
    s = co.allgather_schedule(3, 2)
    t = s.transfers[-1]
    s.transfers[-1] = dataclasses.replace(t, step=0)    # a ring step before its data arrived
    with pytest.raises(AssertionError, match="lacks"):
        co.run_schedule(s, 8.0, 1.0)


@pytest.mark.parametrize("x,y", [(2, 2), (3, 2), (3, 3), (4, 3), (4, 4)])
def test_appendix_bound(x, y):
    C_F, C_S = 10.0, 1.0
    opt = co.ag_bound(x, y, C_F, C_S)
    only = co.ag_bound(x, y, C_F, C_S, rail_only=True)
    # the appendix's postulate for C_F >> C_S, x >= y: (y - 1) / C_S per unit, both networks
    assert opt == pytest.approx((y - 1) / C_S)
    assert only == pytest.approx((y - 1) / C_S)
    # eq 1 (one unit per GPU) never beats the bound
    assert co.ag_time(x * y, x, y, C_F, C_S) >= opt - 1e-12


def test_bound_slack_when_bandwidths_are_close():
    # with C_F = C_S a single GPU's partition binds: eq 12 exceeds (y-1)/C_S
    assert co.ag_bound(2, 2, 1.0, 1.0) > 1.0


def test_slowdown_and_bad_input():
    assert co.slowdown(3600, 400) == pytest.approx(1 / 9)
    with pytest.raises(ValueError, match="x .* >= 1"):
        co.a2a_rail_only(1.0, 0, 2, 1.0, 1.0)
    with pytest.raises(ValueError, match="C_S must be > 0"):
        co.ag_time(1.0, 2, 2, 1.0, 0.0)
    with pytest.raises(ValueError, match="over 20"):
        co.ag_bound(5, 5, 1.0, 1.0)
