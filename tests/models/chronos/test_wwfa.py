"""The WWFA golden model: hand-worked cases, the reference definition, and the arbiter's
properties under hypothesis."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from aifabric.models.chronos.wwfa import WavefrontArbiter, arbitrate_reference


def matrix(n, cells):
    m = np.zeros((n, n), dtype=bool)
    for i, j in cells:
        m[i, j] = True
    return m


def cells(grants):
    return {(int(i), int(j)) for i, j in np.argwhere(grants)}


@st.composite
def arbitration(draw, max_n=12):
    n = draw(st.integers(2, max_n))
    # the matrix itself is drawn (hypothesis shrinks it cell by cell on a failure); a biased
    # cell strategy gives sparse and dense matrices alike
    p = draw(st.sampled_from([0.0, 0.1, 0.3, 0.6, 1.0]))
    cell = st.booleans() if p not in (0.0, 1.0) else st.just(bool(p))
    if p in (0.1, 0.3):
        cell = st.sampled_from([True] + [False] * (3 if p == 0.3 else 9))
    req = draw(arrays(np.bool_, (n, n), elements=cell))
    priority = draw(st.integers(0, n - 1))
    return n, req, priority


def model_at(n, priority):
    arb = WavefrontArbiter(n)
    arb.priority = priority
    return arb


# Worked by hand from the definition: diagonal (i + j) mod 3, visited from the priority on.
def test_full_matrix_grants_priority_diagonal():
    arb = WavefrontArbiter(3)
    assert cells(arb.arbitrate(np.ones((3, 3), bool))) == {(0, 0), (1, 2), (2, 1)}
    assert cells(arb.arbitrate(np.ones((3, 3), bool))) == {(0, 1), (1, 0), (2, 2)}
    assert cells(arb.arbitrate(np.ones((3, 3), bool))) == {(0, 2), (1, 1), (2, 0)}
    assert arb.priority == 0  # wrapped


def test_earlier_diagonal_blocks_row():
    req = matrix(3, [(0, 0), (0, 1), (1, 1)])
    # p=0: (0,0) on diagonal 0 wins row 0; (0,1) on diagonal 1 is blocked; (1,1) on diagonal 2.
    assert cells(model_at(3, 0).arbitrate(req)) == {(0, 0), (1, 1)}
    # p=1: (0,1) on diagonal 1 comes first and takes row 0 and column 1; (1,1) and (0,0) lose.
    assert cells(model_at(3, 1).arbitrate(req)) == {(0, 1)}
    # p=2: (1,1) first, then (0,0) on diagonal 0; (0,1) is blocked by both.
    assert cells(model_at(3, 2).arbitrate(req)) == {(1, 1), (0, 0)}


def test_empty_requests_grant_nothing_and_advance():
    arb = WavefrontArbiter(4)
    assert not arb.arbitrate(np.zeros((4, 4), bool)).any()
    assert arb.priority == 1
    arb.reset()
    assert arb.priority == 0


@given(arbitration(max_n=20))
def test_matches_reference_definition(case):
    n, req, p = case
    assert (model_at(n, p).arbitrate(req) == arbitrate_reference(req, p)).all()


@given(arbitration())
def test_grants_subset_of_requests(case):
    n, req, p = case
    g = model_at(n, p).arbitrate(req)
    assert not (g & ~req).any()


@given(arbitration())
def test_at_most_one_grant_per_row_and_column(case):
    n, req, p = case
    g = model_at(n, p).arbitrate(req)
    assert (g.sum(axis=0) <= 1).all() and (g.sum(axis=1) <= 1).all()


@given(arbitration())
def test_matching_is_maximal(case):
    n, req, p = case
    g = model_at(n, p).arbitrate(req)
    free = req & ~g.any(axis=1)[:, None] & ~g.any(axis=0)[None, :]
    assert not free.any()


@given(st.integers(2, 12), st.data())
def test_held_request_granted_within_n_cycles(n, data):
    i, j = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, n - 1))
    arb = model_at(n, data.draw(st.integers(0, n - 1)))
    granted = False
    for _ in range(n):
        req = data.draw(arrays(np.bool_, (n, n)))
        req[i, j] = True  # held constantly; everything else varies
        granted |= bool(arb.arbitrate(req)[i, j])
    assert granted


@pytest.mark.parametrize("n", [0, 1, 129, -4])
def test_n_out_of_range(n):
    with pytest.raises(ValueError, match=rf"Parameter 'n' must be in 2\.\.128, not {n}"):
        WavefrontArbiter(n)


@pytest.mark.parametrize("n", [2.5, "8", True, None])
def test_n_wrong_type(n):
    with pytest.raises(TypeError, match=r"Parameter 'n' must be an int in 2\.\.128, not"):
        WavefrontArbiter(n)


def test_requests_validated():
    arb = WavefrontArbiter(4)
    with pytest.raises(ValueError, match=r"'requests' must be a 4x4 matrix, not shape \(3, 4\)"):
        arb.arbitrate(np.zeros((3, 4), bool))
    with pytest.raises(ValueError, match="booleans or 0/1 integers"):
        arb.arbitrate(np.full((4, 4), 2))
    assert arb.priority == 0  # a rejected call is not a cycle
    assert cells(arb.arbitrate(np.eye(4, dtype=int))) == {(0, 0), (1, 1), (2, 2), (3, 3)}


@pytest.mark.parametrize("n", [63, 64, 65, 128])
def test_matches_reference_at_wide_sizes(n):
    # Rows are packed into Python integers wider than a machine word from n = 65 on.
    rng = np.random.default_rng(n)
    arb = WavefrontArbiter(n)
    for t, density in enumerate([1.0, 0.5, 0.05, 0.9, 0.2] * 2):
        req = rng.random((n, n)) < density
        p = arb.priority
        assert (arb.arbitrate(req) == arbitrate_reference(req, p)).all(), (t, p)
