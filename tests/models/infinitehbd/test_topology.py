"""Rings on the physical link graph: hand-worked configurations, random faults, and rings
that must be refused."""

import random

import numpy as np
import pytest

from aifabric.models.infinitehbd.topology import (HBD, LOOP, Ring, build_rings, components,
                                         ring_segments, usable_rings, verify)


def test_hand_worked_ring_bypasses_a_faulty_node():
    # 4-GPU nodes, K = 2; node 2 faulty: TP-16 = 4 nodes -> 0, 1, 3, 4 (1 -> 3 is a 2-hop
    # backup link), then 5..8.
    h = HBD(12, R=4, K=2)
    rings = build_rings(h, [2], 16)
    assert [r.nodes for r in rings] == [(0, 1, 3, 4), (5, 6, 7, 8)]
    r = rings[0]
    assert r.config == {("W", 0): LOOP, ("E", 0): 1, ("W", 1): 1, ("E", 1): 2, ("W", 3): 2,
                        ("E", 3): 1, ("W", 4): 1, ("E", 4): LOOP}
    # upper halves west to east, lower halves east to west
    assert r.gpus[:8] == ((0, 0), (0, 1), (1, 0), (1, 1), (3, 0), (3, 1), (4, 0), (4, 1))
    assert r.gpus[8:] == ((4, 2), (4, 3), (3, 2), (3, 3), (1, 2), (1, 3), (0, 2), (0, 3))
    verify(h, rings, [2])


def test_two_faulty_nodes_break_a_k2_ring_but_not_k3():
    assert [len(c) for c in components(HBD(12, 4, 2), [4, 5])] == [10]     # ring: wraps
    assert [len(c) for c in components(HBD(12, 4, 2, ring=False), [4, 5])] == [4, 6]
    assert [len(c) for c in components(HBD(12, 4, 3, ring=False), [4, 5])] == [10]


@pytest.mark.parametrize("ring", [True, False])
@pytest.mark.parametrize("R,K", [(4, 1), (4, 2), (4, 3), (8, 2), (8, 4)])
def test_random_faults_rings_verify_and_fast_count_agrees(ring, R, K):
    h = HBD(30, R, K, ring)
    g = h.graph()
    rng = random.Random(R * 10 + K + ring)
    for _ in range(60):
        faulty = rng.sample(range(30), rng.randint(0, 10))
        mask = np.zeros(30, bool)
        mask[faulty] = True
        for tp in (R, 2 * R, 4 * R):
            rings = build_rings(h, faulty, tp)
            verify(h, rings, faulty, g)
            assert usable_rings(mask, K, tp // R, ring) == len(rings)
            assert all(len(r.gpus) == tp for r in rings)


def test_line_ends_have_fewer_backups():
    ring, line = HBD(10, 4, 2).graph(), HBD(10, 4, 2, ring=False).graph()
    ext = lambda g: sum(1 for *_, d in g.edges(data=True) if d["kind"] == "ext")
    assert ext(ring) == 2 * 10 * 2              # two tracks x 10 nodes x K fibres
    assert ext(line) == 2 * (9 + 8)             # fibres of length 1 and 2 inside the line
    # a faulty second node isolates the first on a K = 1 line but not on a K = 2 line
    assert components(HBD(10, 4, 1, ring=False), [1])[0] == [0]
    assert components(HBD(10, 4, 2, ring=False), [1])[0][:2] == [0, 2]


def test_verify_catches_broken_rings():
    h = HBD(12, 4, 2)
    rings = build_rings(h, [], 8)
    bad = Ring(rings[0].nodes, rings[0].gpus, {**rings[0].config, ("E", 0): 2})
    with pytest.raises(AssertionError, match="no active link"):
        verify(h, [bad])
    with pytest.raises(AssertionError, match="faulty"):
        verify(h, rings, faulty=[0])
    rotated = Ring(rings[0].nodes, rings[0].gpus[1:] + rings[0].gpus[:1], rings[0].config)
    verify(h, [rotated])                                    # a rotation is the same cycle
    jumbled = Ring(rings[0].nodes, tuple(reversed(rings[0].gpus[:3])) + rings[0].gpus[3:],
                   rings[0].config)
    with pytest.raises(AssertionError, match="no active link"):
        verify(h, [jumbled])
    # two rings asking one transceiver for different paths
    other = Ring((), (), {("E", rings[0].nodes[0]): LOOP})
    with pytest.raises(AssertionError, match="asked for paths"):
        verify(h, [rings[0], other])
    # the same GPU link used by two rings
    with pytest.raises(AssertionError, match="used twice|asked for"):
        verify(h, [rings[0], rings[0]])


def test_segments_wrap_on_a_ring():
    f = np.zeros(10, bool)
    f[[3, 4]] = True
    assert ring_segments(f, 2, ring=True) == [8]
    assert ring_segments(f, 2, ring=False) == [3, 5]
    assert ring_segments(f, 3, ring=False) == [8]


@pytest.mark.parametrize("kw,message", [
    (dict(nodes=10, R=6), "R .* must be one of"),
    (dict(nodes=10, R=4, K=5), "K .* must be <= R"),
    (dict(nodes=4, R=4, K=2), "more than 2K"),
])
def test_bad_hbd(kw, message):
    with pytest.raises(ValueError, match=message):
        HBD(**kw)


def test_bad_rings_input():
    h = HBD(10, 4, 2)
    with pytest.raises(ValueError, match="multiple of the node size"):
        build_rings(h, [], 6)
    with pytest.raises(ValueError, match="outside the cluster"):
        build_rings(h, [10], 8)
