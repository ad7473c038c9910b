"""Algorithm 2 and the fast exact solver against brute force; Fig 17 claims; job packing."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.models.railx import availability as av


@st.composite
def grids(draw):
    n = draw(st.integers(1, 8))
    cells = draw(st.sets(st.integers(0, n * n - 1), max_size=min(n * n, 12)))
    return n, [(c // n, c % n) for c in sorted(cells)]


@given(grids())
def test_algorithm2_equals_brute_force(case):
    n, faults = case
    exact = av.max_single_allocation_exact(n, faults)
    assert av.max_single_allocation(n, faults) == exact
    assert av.max_single_allocation_fast(n, faults) == exact


def test_fast_solver_large_components_against_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(6):
        faults = av.random_faults(14, 45, rng)          # large connected fault components
        assert av.max_single_allocation_fast(14, faults) == \
            av.max_single_allocation_exact(14, faults)


def test_worst_and_best_cases():
    n = 64
    diag = [(i, i) for i in range(20)]                  # 2a faults, distinct rows and cols
    assert av.max_single_allocation(n, diag) == (n - 10) ** 2
    row = [(5, c) for c in range(20)]                   # all in one row: lose one row
    assert av.max_single_allocation(n, row) == (n - 1) * n
    assert av.max_single_allocation(n, []) == n * n


def test_fig17_claims():
    rng = np.random.default_rng(1)
    a = av.fig17a(32, 12, 20, rng)
    assert a["mean"][0] == 32 * 32
    assert all(x >= w for x, w in zip(a["mean"], a["worst"]))      # mean above worst case
    assert all(x >= y for x, y in zip(a["mean"], a["mean"][1:]))   # decreasing with faults
    b = av.fig17b((8, 16, 32, 64), (0.001,), 40, rng)
    assert min(v[0] for v in b["availability"].values()) >= 0.9   # "always more than 90%"
    assert b["availability"][64][0] < b["availability"][8][0]      # larger scale, lower


def test_pack_jobs_uses_every_healthy_node():
    """Fig 20's idea: several jobs use what one job cannot (each fault costs a row or a
    column for a single job)."""
    n = 6
    faults = [(0, 0), (1, 1)]
    single = av.max_single_allocation(n, faults)
    jobs = [av.Job("a", 4, 4), av.Job("b", 2, 4), av.Job("c", 4, 2), av.Job("d", 1, 1),
            av.Job("e", 1, 1)]
    placed, failed, util = av.pack_jobs(n, faults, jobs)
    assert not failed and util == pytest.approx(1.0)
    assert sum(p.job.rows * p.job.cols for p in placed) > single
    used = set()
    for p in placed:                                    # disjoint, healthy, right shape
        cells = {(r, c) for r in p.rows for c in p.cols}
        assert len(cells) == p.job.rows * p.job.cols
        assert not cells & used and not cells & set(faults)
        used |= cells


@pytest.mark.parametrize("call,match", [
    (lambda: av.max_single_allocation(4, [(4, 0)]), "outside the 4 x 4 grid"),
    (lambda: av.max_single_allocation(4, [(1, 1), (1, 1)]), "listed twice"),
    (lambda: av.max_single_allocation(0, []), "n .grid side. must be an int >= 1"),
    (lambda: av.max_single_allocation(4, [(1,)]), "faults must be .row, column. pairs"),
    (lambda: av.pack_jobs(4, [], [av.Job("x", 5, 1)]), "does not fit"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
