"""SiPAC(r, L) on built graphs; traffic matrices and skewness by hand."""

import itertools

import networkx as nx
import numpy as np
import pytest

from aifabric.models.flexsipac import topology, traffic
from aifabric.models.flexsipac.topology import SiPAC


@pytest.mark.parametrize("r,L", [(2, 1), (2, 2), (3, 2), (4, 2), (2, 3), (3, 3), (4, 3)])
def test_built_graph_counts(r, L):
    s = SiPAC(r, L)
    g, cg = s.graph(), s.cu_graph()
    cus = [v for v in g if v[0] == "cu"]
    wss = [v for v in g if v[0] == "wss"]
    assert len(cus) == r ** L == s.N and len(wss) == L * r ** (L - 1) == s.M
    assert all(g.degree(v) == L for v in cus) and all(g.degree(v) == r for v in wss)
    assert all(len(list(cg.neighbors(x))) == L * (r - 1) for x in cg)
    assert nx.diameter(cg) == L
    if r % 2 == 0:
        # bisection across the top digit: direct pairs cut, counted on the graph
        half = {x for x in range(s.N) if s.digits(x)[-1] < r // 2}
        cut = sum(1 for a, b in cg.edges if (a in half) != (b in half))
        assert cut == s.bisection_pairs()


def test_digits_and_neighbours_by_hand():
    s = SiPAC(4, 2)
    assert s.digits(9) == (1, 2)
    assert s.neighbours(9, 0) == [8, 10, 11] and s.neighbours(9, 1) == [1, 5, 13]
    assert s.level(9, 13) == 1 and s.level(9, 10) == 0 and s.level(9, 14) is None
    assert s.wss(9, 1) == (1, 1) and s.port(9, 1) == 2


def test_fig9_sizes():
    got = topology.fig9_sizes([16, 64])
    assert got[16]["flex-sipac-l2"] == 256 and got[16]["flex-sipac-l3"] == 4096
    assert got[64]["tpuv4"] == 2048 and got[64]["h100-superpod"] == 256


def test_traffic_by_hand():
    s = SiPAC(2, 2)                   # CUs 0..3, level-0 pairs (0,1), (2,3); level 1 (0,2), (1,3)
    T = traffic.traffic_matrix(s, [2, 2], "sipco")
    assert T[0, 1] == T[1, 0] == 1 and T[0, 2] == 0       # (0, 2) crosses jobs: filtered
    assert traffic.traffic_matrix(s, [4], "ring")[3, 0] == 1
    M = traffic.traffic_matrix(s, [3, 1], "mesh")
    assert M[:3, :3].sum() == 6 and M[3].sum() == 0
    assert traffic.skewness([8, 4, 2]) == pytest.approx(0.75)
    assert traffic.skewness([4, 4]) == 0


@pytest.mark.parametrize("call,message", [
    (lambda: SiPAC(1, 2), "r .* must be an int >= 2"),
    (lambda: SiPAC(4, 0), "L .* must be an int >= 1"),
    (lambda: traffic.job_blocks(SiPAC(2, 2), [3, 3]), "do not fit"),
    (lambda: traffic.traffic_matrix(SiPAC(2, 2), [4], "allreduce"), "collective must be"),
    (lambda: traffic.check_traffic(np.eye(3)), "diagonal"),
    (lambda: traffic.check_traffic(-np.ones((2, 2)) + 2 * np.eye(2) - np.eye(2)),
     "entries must be finite and >= 0"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
