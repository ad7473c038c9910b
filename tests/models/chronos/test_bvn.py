"""BvN decomposition: reconstruction, optimality of "exact", the WWFA order of "wavefront",
permutation validity, and one-line errors on bad matrices."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from aifabric.models.chronos.bvn import (METHODS, decompose, lower_bound, permutation_bound, quantize,
                               wavefront_reference)
from aifabric.models.chronos.moe import moe_traffic_matrix


def served(schedule, n):
    """Units each (input, output) pair receives, accumulated step by step."""
    out = np.zeros((n, n), dtype=np.int64)
    for perm, weight in schedule:
        for i, j in enumerate(perm):
            if j >= 0:
                out[i, j] += weight
    return out


def assert_valid(schedule, n):
    assert schedule.perms.shape == (len(schedule), n)
    for perm, weight in schedule:
        assert weight > 0
        assert ((perm >= -1) & (perm < n)).all()
        active = perm[perm >= 0]
        assert len(set(active.tolist())) == len(active)      # a partial permutation


@st.composite
def demands(draw, max_n=10, max_value=60):
    n = draw(st.integers(1, max_n))
    values = draw(arrays(np.int64, (n, n), elements=st.integers(0, max_value)))
    mask = draw(arrays(np.bool_, (n, n)))
    return values * mask


@settings(max_examples=150)
@given(demands())
def test_exact_covers_demand_in_the_lower_bound(d):
    n = d.shape[0]
    s = decompose(d, "exact")
    assert_valid(s, n)
    got = served(s, n)
    assert (got >= d).all()
    # A connection only appears while it still has real demand.
    bound = max(d.sum(axis=0).max(), d.sum(axis=1).max())
    assert s.makespan == bound
    assert len(s) <= max(1, n * n - 2 * n + 2) or bound == 0


@settings(max_examples=150)
@given(demands(), st.sampled_from(["wavefront", "fast"]))
def test_greedy_methods_reconstruct_demand_exactly(d, method):
    n = d.shape[0]
    s = decompose(d, method)
    assert_valid(s, n)
    assert (served(s, n) == d).all()
    assert s.makespan >= lower_bound(d)
    assert len(s) <= np.count_nonzero(d)        # every step empties a cell


@settings(max_examples=100)
@given(demands(max_n=12).filter(lambda d: d.shape[0] >= 2))
def test_wavefront_kernel_follows_the_wwfa_model_step_for_step(d):
    ref = wavefront_reference(d)
    s = decompose(d, "wavefront")
    np.testing.assert_array_equal(s.perms, ref.perms)
    np.testing.assert_array_equal(s.weights, ref.weights)


def test_wavefront_hand_worked():
    # Step 1, priority diagonal 0: (0,0) and (1,1) granted, weight min(3, 1) = 1.
    # Step 2, priority 1: diagonal 1 offers (1,0) only; then diagonal 0: (0,0) blocked by
    # column 0. Weight 2. Step 3, priority 0: (0,0), weight 2.
    s = decompose(np.array([[3, 0], [2, 1]]), "wavefront")
    assert [(p.tolist(), w) for p, w in s] == [([0, 1], 1), ([-1, 0], 2), ([0, -1], 2)]


def test_exact_hand_worked():
    # Line sums 9 and 8 / 8 and 9: padding adds 1 at (1, 0); the padded matrix is
    # 5 * identity + 4 * swap, so two permutations, makespan 9.
    s = decompose(np.array([[5, 4], [3, 5]]), "exact")
    assert sorted((p.tolist(), w) for p, w in s) == [([0, 1], 5), ([1, 0], 4)]


@pytest.mark.parametrize("n", [64, 128])
def test_large_moe_matrices(n):
    d = moe_traffic_matrix(n, np.random.default_rng(n), unit="tokens")
    for method in ("exact", "fast"):
        s = decompose(d, method)
        got = s.served()
        assert (got == d).all() if method == "fast" else (got >= d).all()
    assert decompose(d, "exact").makespan == lower_bound(d)
    if n == 64:
        ref = wavefront_reference(d)
        s = decompose(d, "wavefront")
        np.testing.assert_array_equal(s.perms, ref.perms)
        np.testing.assert_array_equal(s.weights, ref.weights)


@settings(max_examples=40)
@given(demands(max_n=6, max_value=30))
def test_eclipse_covers_demand(d):
    s = decompose(d, "eclipse", reconfig=5)
    assert_valid(s, d.shape[0])
    assert (served(s, d.shape[0]) >= d).all()


def test_eclipse_duration_follows_the_reconfiguration_cost():
    d = np.array([[9, 2, 0], [1, 7, 3], [4, 0, 5]])
    # Reconfiguring is free: serve the smallest demand first (utility = matched cells).
    assert decompose(d, "eclipse", reconfig=0).weights[0] == 1
    # Reconfiguring dominates: hold each matching as long as the largest demand.
    assert decompose(d, "eclipse", reconfig=1e9).weights[0] == 9
    cheap = decompose(d, "eclipse", reconfig=1e9)
    assert len(cheap) <= len(decompose(d, "exact"))


def test_zero_and_trivial_matrices():
    for method in ("exact", "wavefront", "fast"):
        assert len(decompose(np.zeros((4, 4), dtype=int), method)) == 0
        s = decompose(np.array([[7]]), method)
        assert [(p.tolist(), w) for p, w in s] == [([0], 7)]


def test_float_integral_matrices_are_accepted():
    s = decompose(np.array([[2.0, 1.0], [0.0, 3.0]]), "fast")
    assert (s.served() == [[2, 1], [0, 3]]).all()


@pytest.mark.parametrize("demand,error,message", [
    (np.ones((2, 3)), ValueError, r"square N x N matrix, not shape \(2, 3\)"),
    (np.ones(4), ValueError, r"square N x N matrix, not shape \(4,\)"),
    (np.zeros((0, 0)), ValueError, "is empty"),
    (np.array([[1, -2], [0, 1]]), ValueError, r"non-negative; entry \(0, 1\) is -2"),
    (np.array([[1.5, 0], [0, 1]]), ValueError, r"integers; entry \(0, 0\) is 1.5"),
    (np.array([[np.nan, 0], [0, 1]]), ValueError, "NaN or infinite"),
    (np.array([["a", "b"], ["c", "d"]]), TypeError, "must hold integers"),
    (np.full((2, 2), 2**60), ValueError, "row or column sum of 2\\*\\*60"),
])
def test_bad_matrices(demand, error, message):
    with pytest.raises(error, match=message):
        decompose(demand, "fast")


def test_bad_method_and_options():
    with pytest.raises(ValueError, match="unknown BvN method 'hungarian'; allowed: "
                                         + ", ".join(METHODS)):
        decompose(np.eye(2, dtype=int), "hungarian")
    with pytest.raises(ValueError, match="needs reconfig >= 0"):
        decompose(np.eye(2, dtype=int), "eclipse")
    with pytest.raises(ValueError, match="applies to method 'eclipse' only"):
        decompose(np.eye(2, dtype=int), "exact", reconfig=3)


# --- slot quantisation and the 2L - 1 bound --------------------------------------------------

@settings(max_examples=200)
@given(demands(max_n=8, max_value=10_000), st.integers(1, 600))
def test_quantize_covers_every_byte_with_the_smallest_unit(d, slots):
    nz = d > 0
    if max(nz.sum(axis=0).max(initial=0), nz.sum(axis=1).max(initial=0)) > slots:
        with pytest.raises(ValueError, match=f"cannot fit {slots} slots"):
            quantize(d, slots)
        return
    q = quantize(d, slots)
    assert q.slots == slots and q.unit >= 1
    assert (q.counts * q.unit >= d).all()                          # every byte covered
    assert ((q.counts - 1) * q.unit < d)[nz].all()                 # rounded up, not more
    assert (q.counts[~nz] == 0).all()
    line = max(q.counts.sum(axis=0).max(), q.counts.sum(axis=1).max())
    assert q.used == line <= slots
    assert q.makespan_bytes() >= lower_bound(d)
    if q.unit > 1:                                                 # one byte less does not fit
        finer = -(-d // (q.unit - 1))
        assert max(finer.sum(axis=0).max(), finer.sum(axis=1).max()) > slots


@settings(max_examples=300)
@given(demands(max_n=9, max_value=12), st.sampled_from(["wavefront", "fast"]))
def test_greedy_permutations_within_2l_minus_1(d, method):
    s = decompose(d, method)
    lb = max(d.sum(axis=0).max(), d.sum(axis=1).max())
    assert len(s) <= max(0, 2 * lb - 1) == permutation_bound(d)


def test_greedy_bound_is_reached():
    """2L - 1 is tight for the wave-front order: the 3 x 3 matrix below has L = 2 and takes 3
    permutations (found by exhaustive search over 0/1 matrices)."""
    d = np.array([[0, 0, 0], [1, 0, 1], [1, 1, 0]])
    assert permutation_bound(d) == 3
    assert len(decompose(d, "wavefront")) == 3


def test_quantised_moe_fits_the_budget_and_its_bound():
    rng = np.random.default_rng(5)
    for n, slots in ((16, 64), (64, 512)):
        d = moe_traffic_matrix(n, rng)
        q = quantize(d, slots)
        s = decompose(q.counts, "wavefront")
        assert q.used <= slots and len(s) <= 2 * q.used - 1
        assert (s.served() == q.counts).all()


def test_quantize_with_an_explicit_unit():
    d = np.array([[0, 10], [7, 0]])
    q = quantize(d, 4, unit=3)
    assert q.unit == 3 and q.counts.tolist() == [[0, 4], [3, 0]] and q.used == 4
    with pytest.raises(ValueError, match=r"unit 2 bytes needs 5 slots on the busiest line, "
                                         r"more than the budget of 4; use a unit of at least 3"):
        quantize(d, 4, unit=2)


@pytest.mark.parametrize("slots,message", [
    (0, "'slots' must be >= 1, not 0"), (-3, "'slots' must be >= 1, not -3"),
    (2.5, "'slots' must be an int >= 1, not 2.5"), (True, "'slots' must be an int >= 1"),
    ("64", "'slots' must be an int >= 1, not '64'"),
])
def test_quantize_rejects_bad_budgets(slots, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        quantize(np.ones((2, 2), dtype=np.int64), slots)


def test_quantize_names_the_line_that_cannot_fit():
    d = np.zeros((4, 4), dtype=np.int64)
    d[:, 2] = 5                       # column 2: four nonzero entries
    with pytest.raises(ValueError, match=r"cannot fit 3 slots at any unit: column 2 has 4 "
                                         r"nonzero entries"):
        quantize(d, 3)
    with pytest.raises(ValueError, match="'unit' must be >= 1, not 0"):
        quantize(d, 8, unit=0)
