"""Eq 1: constraints, the exact optimum against brute force, the heuristic, the
wavelength assignment and minimal-change reconfiguration."""

import itertools

import numpy as np
import pytest

from aifabric.models.flexsipac import allocation as al, traffic
from aifabric.models.flexsipac.topology import SiPAC


def brute_force(topo, t, w):
    pairs = [tuple(p) for p in np.argwhere(al.direct_mask(topo))]
    best = None
    for vals in itertools.product(range(w + 1), repeat=len(pairs)):
        lam = np.zeros((topo.N, topo.N))
        for (i, j), v in zip(pairs, vals):
            lam[i, j] = v
        if (lam.sum(axis=1) > w).any() or (lam.sum(axis=0) > w).any():
            continue
        f = al.objective(lam, t)
        if best is None or f < best - 1e-12:
            best = f
    return best


@pytest.mark.parametrize("T", [
    np.array([[0, 3, 1, 0], [1, 0, 0, 2], [2, 0, 0, 1], [0, 1, 5, 0]], float),
    np.array([[0, 1, 1, 0], [1, 0, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0]], float),
    np.array([[0, 7, 0, 0], [0, 0, 0, 3], [1, 0, 0, 0], [0, 0, 2, 0]], float),
])
def test_exact_is_optimal_on_tiny_cases(T):
    topo, w = SiPAC(2, 2), 3
    t = al.scale(T, w) * al.direct_mask(topo)
    lam = al.exact(topo, T, w)
    al.check_allocation(topo, lam, w)
    assert al.objective(lam, t) == pytest.approx(brute_force(topo, t, w))
    h = al.heuristic(topo, T, w)
    al.check_allocation(topo, h, w)
    assert al.objective(h, t) >= al.objective(lam, t) - 1e-9


@pytest.mark.parametrize("sizes", [[16], [8, 4, 4], [6, 6, 4], [3, 5, 8], [2] * 8])
@pytest.mark.parametrize("collective", traffic.COLLECTIVES)
def test_heuristic_respects_constraints_and_assignment_is_valid(sizes, collective):
    topo, w = SiPAC(4, 2), 8
    T = traffic.traffic_matrix(topo, sizes, collective)
    lam = al.heuristic(topo, T, w)
    al.check_allocation(topo, lam, w)
    a = al.assign_wavelengths(topo, lam, w)
    al.check_assignment(topo, lam, a, w)
    # the WSS view: each (input port, wavelength) of a WSS drops at one output port, and no
    # output port of a WSS receives a wavelength twice
    for cfg in a["wss"].values():
        outs = [(o, lam_id) for (i, lam_id), o in cfg.items()]
        assert len(outs) == len(set(outs))


def test_check_allocation_names_the_violation():
    topo, w = SiPAC(2, 2), 2
    lam = np.zeros((4, 4))
    lam[0, 1] = 3
    with pytest.raises(ValueError, match="ingress constraint: CU 0 has 3"):
        al.check_allocation(topo, lam, w)
    lam = np.zeros((4, 4))
    lam[0, 3] = 1
    with pytest.raises(ValueError, match="not direct neighbours"):
        al.check_allocation(topo, lam, w)


def test_koenig_colouring_when_greedy_is_not_enough():
    # a 4-regular bipartite demand on SiPAC(3, 2) with w = 4: Koenig guarantees 4 colours
    topo, w = SiPAC(3, 2), 4
    lam = np.zeros((9, 9))
    for x in range(9):
        for l in range(2):
            for y in topo.neighbours(x, l):
                lam[x, y] = 1
    a = al.assign_wavelengths(topo, lam, w)
    al.check_assignment(topo, lam, a, w)
    assert max(a["signals"].values()) < w


def test_reconfigure_keeps_surviving_signals():
    topo, w = SiPAC(4, 2), 8
    lam1 = al.heuristic(topo, traffic.traffic_matrix(topo, [8, 8], "sipco"), w)
    a1 = al.assign_wavelengths(topo, lam1, w)
    lam2 = al.heuristic(topo, traffic.traffic_matrix(topo, [8, 4, 4], "sipco"), w)
    a2, moved = al.reconfigure(topo, a1, lam2, w)
    al.check_assignment(topo, lam2, a2, w)
    # the first job (CUs 0..7) is unchanged: its signals keep their wavelengths
    same = [s for s in a1["signals"] if s[0] < 8 and s[1] < 8 and s[2] < lam2[s[0], s[1]]]
    assert same and all(a2["signals"][s] == a1["signals"][s] for s in same)
    assert moved < sum(1 for _ in a2["signals"])
    a3, moved3 = al.reconfigure(topo, a2, lam2, w)
    assert moved3 == 0 and a3["signals"] == a2["signals"]


def test_bad_w():
    with pytest.raises(ValueError, match="w .* must be an int >= 1"):
        al.heuristic(SiPAC(2, 2), np.zeros((4, 4)), 0)
