"""Slot duration and efficiency (§6), against hand-computed values."""

import pytest

from aifabric.models.chronos import timeslot as ts


def test_slot_and_efficiency_by_hand():
    # 1,000 bytes at 8,000 bit/s take 1 s; plus 0.5 s latency and 0.5 s guard.
    assert ts.slot_duration(1000, 8000, 0.5, 0.5) == pytest.approx(2.0)
    assert ts.efficiency(1000, 8000, 0.5, 0.5) == pytest.approx(0.5)
    assert ts.efficiency(1000, 8000, 0.0, 0.0) == pytest.approx(1.0)


@pytest.mark.parametrize("eta", [0.1, 0.5, 0.75, 0.95, 0.999])
def test_min_bytes_is_the_inverse_of_efficiency(eta):
    b = ts.min_bytes_for_efficiency(eta, 400e9, 1e-6, 1e-3)
    assert ts.efficiency(b, 400e9, 1e-6, 1e-3) == pytest.approx(eta)
    assert ts.efficiency(0.99 * b, 400e9, 1e-6, 1e-3) < eta


def test_fibre_and_dp_bytes():
    assert ts.fibre_latency(2000) == pytest.approx(10e-6)        # the paper's 2 km -> 10 us
    assert ts.dp_bytes_per_transfer(2.8e9, 8, 128) == pytest.approx(4 * 2.8e9 / 1024)


@pytest.mark.parametrize("call,message", [
    (lambda: ts.slot_duration(0, 1e9, 0, 0), "'bytes' must be a finite number > 0"),
    (lambda: ts.slot_duration(1, -1, 0, 0), "'link_bps' must be a finite number > 0"),
    (lambda: ts.efficiency(1, 1e9, float("nan"), 0), "'t_max_s' must be a finite number >= 0"),
    (lambda: ts.min_bytes_for_efficiency(1.0, 1e9, 0, 0), "strictly between 0 and 1"),
    (lambda: ts.dp_bytes_per_transfer(1e9, 0, 8), "'tp' must be an int >= 1"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
