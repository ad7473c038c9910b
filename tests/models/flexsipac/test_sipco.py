"""Flex-SiPCO and mesh all-reduce executed on numbers; steps and per-link bytes."""

import numpy as np
import pytest

from aifabric.models.flexsipac import sipco, traffic
from aifabric.models.flexsipac.topology import SiPAC


@pytest.mark.parametrize("r,L,sizes", [(4, 2, [16]), (4, 2, [8, 4, 4]), (4, 2, [12, 4]),
                                       (2, 3, [8]), (3, 3, [9, 18]), (4, 3, [32, 16, 16]),
                                       (8, 2, [64])])
def test_every_cu_ends_with_the_exact_sum(r, L, sizes):
    topo = SiPAC(r, L)
    rng = np.random.default_rng(r * 100 + L)
    for job in traffic.job_blocks(topo, sizes):
        n = 12 * len(job)
        data = {x: rng.integers(-1000, 1000, n).astype(float) for x in job}
        total = sum(data.values())
        for make in (sipco.sipco_schedule, sipco.mesh_schedule):
            sch = make(topo, job, 8.0 * n)
            out = sipco.execute(topo, job, sch, data)
            assert all(np.array_equal(out[x], total) for x in job)


def test_steps_and_link_bytes_against_the_bound():
    topo, n = SiPAC(4, 3), 1e6
    sch = sipco.sipco_schedule(topo, range(64), n)
    assert len({t.step for t in sch}) == 3 + 1                 # l_hat + 1
    assert all(t.level is not None for t in sch)               # direct neighbours only
    loads = sipco.link_bytes(sch)
    assert max(loads.values()) == pytest.approx((4 - 1) * n / (4 * 3))
    assert max(loads.values()) <= (4 - 1) * 2 * n / (4 * 3)


def test_a_broken_schedule_gives_a_wrong_sum():
    topo = SiPAC(4, 2)
    job = list(range(16))
    sch = sipco.sipco_schedule(topo, job, 128.0)[1:]            # one transfer lost
    data = {x: np.arange(16, dtype=float) + x for x in job}
    out = sipco.execute(topo, job, sch, data)
    total = sum(data.values())
    assert not all(np.array_equal(out[x], total) for x in job)


def test_job_must_be_a_sub_grid():
    with pytest.raises(ValueError, match="not a sub-grid"):
        sipco.sipco_schedule(SiPAC(4, 2), range(6), 1.0)
