"""Rail-ring all-to-all: every ring Hamiltonian, every ordered pair on exactly one ring,
checked independently of the construction's own verifier."""

import itertools

import numpy as np
import pytest

from aifabric.models.railx.rings import check_rings, rail_links, rail_rings, walecki

VALID_TO_65 = [k for k in range(3, 66) if k not in (4, 6)]


def independent_check(rings, k):
    assert len(rings) == k - 1
    arcs = []
    for ring in rings:
        assert len(ring) == k and set(ring) == set(range(k))     # Hamiltonian cycle
        arcs += [(ring[t], ring[(t + 1) % k]) for t in range(k)]
    assert len(arcs) == len(set(arcs)) == k * (k - 1)             # each ordered pair once
    assert all(a != b for a, b in arcs)


@pytest.mark.parametrize("k", VALID_TO_65)
def test_every_k_up_to_65(k):
    independent_check(rail_rings(k), k)


@pytest.mark.parametrize("k", [66, 98, 128, 129, 200, 256, 257])
def test_a_sample_above_65(k):
    independent_check(rail_rings(k), k)


def test_deterministic_and_copies():
    a, b = rail_rings(10), rail_rings(10)
    assert a == b
    a[0][0] = 99
    assert rail_rings(10)[0][0] == 0


def test_odd_k_is_walecki_in_both_directions():
    rings = walecki(7)
    assert len(rings) == 6
    for i in range(3):
        assert rings[i + 3] == rings[i][:1] + rings[i][1:][::-1]
    # the zig-zag of A.1: (i, i-1, i+1, i-2, i+2, ..) mod 2m, closed through vertex 2m
    assert rings[1] == [6, 1, 0, 2, 5, 3, 4]


@pytest.mark.parametrize("k,match", [
    (4, "K\\*_4 has no decomposition"), (6, "K\\*_6 has no decomposition"),
    (2, "must be >= 3"), (0, "must be >= 3"), (-5, "must be >= 3")])
def test_impossible_k(k, match):
    with pytest.raises(ValueError, match=match):
        rail_rings(k)


@pytest.mark.parametrize("k", [5.0, "8", True, None])
def test_non_int_k(k):
    with pytest.raises(TypeError, match="k must be an int"):
        rail_rings(k)


def test_checker_rejects_broken_rings():
    rings = rail_rings(5)
    bad = [list(r) for r in rings]
    bad[0][1], bad[0][2] = bad[0][2], bad[0][1]        # two arcs now on two rings
    with pytest.raises(ValueError):
        check_rings(bad, 5)
    with pytest.raises(ValueError, match="not a Hamiltonian cycle"):
        check_rings([[0, 1, 2, 3, 3]] + rings[1:], 5)
    with pytest.raises(ValueError, match="rings for k"):
        check_rings(rings[:-1], 5)


@pytest.mark.parametrize("k", [5, 7, 8, 10])
def test_lemma_3_1_two_rails_per_pair(k):
    """A+ <-> B- on one rail and A- <-> B+ on another: every pair on two different rails."""
    by_pair = {}
    for ln in rail_links(k):
        by_pair.setdefault((ln.src, ln.dst), []).append(ln.rail)
    for a, b in itertools.permutations(range(k), 2):
        assert len(by_pair[(a, b)]) == 1
        assert by_pair[(a, b)] != by_pair[(b, a)]


def test_more_rails_than_rings_double_the_links():
    links = rail_links(5, rails=8)
    count = {}
    for ln in links:
        key = frozenset((ln.src, ln.dst))
        count[key] = count.get(key, 0) + 1
    assert set(count.values()) == {4}                  # 2 a = 4 links per pair (a = 2)
    with pytest.raises(ValueError, match="rails must be a positive int"):
        rail_links(5, rails=0)


def test_rings_start_at_node_zero():
    for k in (5, 8, 9):
        assert all(r[0] == 0 for r in rail_rings(k))
        assert np.all(np.diff(sorted(rail_rings(k)[0])) == 1)
