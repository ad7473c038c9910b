"""HB-domain failure policies on a hand-made trace; the trace generator's steady state."""

import numpy as np
import pytest

from aifabric.models.railonly import faults


def test_policies_hand_worked():
    # 3 domains of 4 GPUs: job on 2, 1 spare. Sample 0: domain 0 has one GPU down;
    # sample 1: domains 0 and 1 each have one down; sample 2: domain 2 has two down.
    down = np.zeros((3, 12), dtype=bool)
    down[0, 1] = True
    down[1, [1, 5]] = True
    down[2, [8, 9]] = True
    none = faults.capacity(down, 4, 2, policy="none")
    assert list(none) == [0.5, 0.0, 1.0]
    mig = faults.capacity(down, 4, 2, policy="migrate", spare_domains=1)
    assert list(mig) == [1.0, 0.5, 1.0]
    opt = faults.capacity(down, 4, 2, policy="optical", spare_domains=1, spares=1)
    assert list(opt) == [1.0, 1.0, 1.0]


def test_trace_steady_state():
    d = faults.fault_trace(400, 24 * 200, mtbf=99.0, mttr=1.0, step=1.0, seed=3)
    assert d.mean() == pytest.approx(0.01, rel=0.15)


def test_bad_input():
    with pytest.raises(ValueError, match="policy must be one of"):
        faults.capacity(np.zeros((1, 8), bool), 4, 2, policy="pray")
    with pytest.raises(ValueError, match="trace has 4 GPUs"):
        faults.capacity(np.zeros((1, 4), bool), 4, 2, policy="none")
    with pytest.raises(ValueError, match="mttr must be > 0"):
        faults.fault_trace(4, 10, mtbf=1, mttr=0)
