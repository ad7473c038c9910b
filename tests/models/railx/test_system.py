"""Physical architecture and topologies: eq 1, OCS configurations, chip-level graphs and
Table 2's formulas measured on built instances."""

import itertools

import networkx as nx
import numpy as np
import pytest

from aifabric.models.railx.system import (Dim, RailX, dragonfly, hyperx_2d, split, table2,
                                 torus_2d)


def test_eq1_headline_scale():
    s = RailX(5, 9, 128)
    assert s.chips == 102_400
    assert s.r == 45 and s.switches == 45 * 128


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(m=0, n=1, R=8), ValueError, "m must be >= 1"),
    (dict(m=2, n=1.5, R=8), TypeError, "n must be an int"),
    (dict(m=2, n=1.5, R=8), ValueError, "n must be an int"),       # also a ValueError
    (dict(m=2, n=1, R=9), ValueError, "R .OCS radix. must be even"),
    (dict(m=2, n=1, R=2), ValueError, "R must be >= 4"),
])
def test_bad_system(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        RailX(**kwargs)


def ocs_is_valid(topo):
    """Every OCS configuration is an involution pairing a + port with a - port."""
    for key, perm in topo.ocs.items():
        used = np.nonzero(perm >= 0)[0]
        for p in used:
            q = perm[p]
            assert perm[q] == p and (p % 2) != (q % 2), key


def test_torus_is_the_chip_torus():
    s = RailX(2, 2, 12)
    t = torus_2d(s)
    ocs_is_valid(t)
    assert len(t.ocs) == s.switches            # every switch of the system is configured
    g = nx.Graph(t.chip_graph())
    side = t.nodes[0] * s.m
    expect = nx.grid_2d_graph(side, side, periodic=True)
    assert nx.is_isomorphic(g, expect)
    # n = 2 parallel optical links between horizontally adjacent edge chips
    mg = t.chip_graph()
    a, b = t.chip_id(0, 0, 1, 0), t.chip_id(1, 0, 0, 0)
    assert mg.number_of_edges(a, b) == 2


def test_wiring_rule_of_section_3_2():
    """X-rail a of node (X, Y) is on X-OCS (Y, a), ports 2X (+) and 2X+1 (-)."""
    s = RailX(2, 1, 10)
    t = hyperx_2d(s)
    for (dim, line, rail), perm in t.ocs.items():
        for p in np.nonzero(perm >= 0)[0]:
            node = p // 2
            assert node < (t.nodes[0] if dim == "X" else t.nodes[1])
    for dim, rail, plus, minus in t.node_links:
        if dim == "X":
            assert plus[1] == minus[1] and t.ocs[("X", plus[1], rail)][2 * plus[0]] == \
                2 * minus[0] + 1
        else:
            assert plus[0] == minus[0] and t.ocs[("Y", plus[0], rail)][2 * plus[1]] == \
                2 * minus[1] + 1


def test_hyperx_rows_are_all_to_all_with_two_links_per_pair():
    s = RailX(2, 2, 12)
    t = hyperx_2d(s)
    assert t.nodes == (5, 5)
    g = t.node_graph()
    for a, b in itertools.combinations(g.nodes, 2):
        same_row = a[1] == b[1] or a[0] == b[0]
        assert g.number_of_edges(a, b) == (2 if same_row else 0)
    assert t.node_diameter() == 2


def test_table2_formulas_on_built_instances():
    torus = torus_2d(RailX(2, 2, 16))
    f = table2(torus.system)
    assert torus.num_chips == f["torus"]["chips"]
    assert torus.all_to_all_throughput() == pytest.approx(f["torus"]["throughput"])
    assert torus.node_diameter() == f["torus"]["diameter"] // 2   # R/2 on bidirectional rings
    hx = hyperx_2d(RailX(1, 7, 16))                 # P = r + 1 = 8 (even): exact
    f = table2(hx.system)
    assert hx.num_chips == f["hyperx"]["chips"]
    assert hx.node_diameter() == 2
    assert hx.all_to_all_throughput() == pytest.approx(f["hyperx"]["throughput"])
    df = dragonfly(RailX(2, 2, 42))
    f = table2(df.system)
    assert df.num_chips == f["dragonfly"]["chips"] and df.node_diameter() == 3
    assert df.all_to_all_throughput() == pytest.approx(f["dragonfly"]["throughput"], rel=0.05)


def test_bisection_bounds():
    """Natural cut >= spectral lower bound of the min bisection (lambda_2 |V| / 4) and the
    Kernighan-Lin heuristic finds no cut below the spectral bound either."""
    t = hyperx_2d(RailX(1, 7, 16))              # 8 x 8 nodes: the natural cut is balanced
    g = nx.Graph()
    for _, _, p, q in t.node_links:
        g.add_edge(p, q, weight=g.get_edge_data(p, q, {"weight": 0})["weight"] + 1)
    lap = nx.laplacian_matrix(g, weight="weight").toarray().astype(float)
    lam2 = np.sort(np.linalg.eigvalsh(lap))[1]
    lower = lam2 * g.number_of_nodes() / 4
    half = {v for v in g.nodes if v[0] < t.nodes[0] // 2}
    natural = t.cut_links(half)
    a, b = nx.algorithms.community.kernighan_lin_bisection(g, weight="weight", seed=1)
    kl = sum(d["weight"] for u, v, d in g.edges(data=True) if (u in a) != (v in a))
    assert lower <= kl + 1e-9 and lower <= natural


def test_dragonfly_structure():
    s = RailX(2, 2, 42)
    t = dragonfly(s)
    assert t.nodes == (21, 5)                    # r^2 + r + 1 groups of r + 1 nodes (Fig 8)
    assert t.ocs_ports() == {"X": 2 * 21, "Y": 2 * 5}   # R_g = 2(r(r+1)+1), R_l = 2(r+1)
    g = t.node_graph()
    groups = {}
    for _, _, p, q in t.node_links:
        if p[0] != q[0]:
            key = frozenset((p[0], q[0]))
            groups[key] = groups.get(key, 0) + 1
    assert len(groups) == 21 * 20 // 2           # every pair of groups directly linked
    for X in range(21):                          # local all-to-all inside each group
        for a, b in itertools.combinations(range(5), 2):
            assert g.number_of_edges((X, a), (X, b)) == 2
    ocs_is_valid(t)


def test_split_fig9():
    s = RailX(2, 2, 30)
    t = split(s, [Dim("torus", 3, 2), Dim("alltoall", 3, 2)],
              [Dim("torus", 3, 2), Dim("torus", 5, 2)])
    assert t.num_chips == 4 * 3 * 3 * 3 * 5
    ocs_is_valid(t)
    g = t.node_graph()
    # dimension 2 (all-to-all, X digit 1) links X = 0 with X = 3 and X = 6 directly
    assert g.number_of_edges((0, 0), (3, 0)) == 2 and g.number_of_edges((0, 0), (6, 0)) == 2
    # dimension 1 (torus, X digit 0): 0 - 1 - 2 - 0 rings, 2 rails each
    assert g.number_of_edges((0, 0), (1, 0)) == 2 and g.number_of_edges((0, 0), (2, 0)) == 2
    assert g.number_of_edges((1, 0), (4, 0)) == 2
    assert nx.is_connected(nx.Graph(g))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hyperx_2d(RailX(4, 9, 16)), ValueError, "r \\+ 1 = 37 nodes per row, more than "
                                                       "R/2 = 8"),
    (lambda: hyperx_2d(RailX(2, 2, 20), side=4), ValueError, "all-to-all dimension of 4"),
    (lambda: torus_2d(RailX(2, 2, 8), side=5), ValueError, "5 nodes do not fit"),
    (lambda: split(RailX(2, 1, 20), [Dim("torus", 3, 3)], [Dim("torus", 3, 1)]), ValueError,
     "X: the dimensions use 3 rails, a node has r = m·n = 2"),
    (lambda: split(RailX(2, 2, 20), [Dim("alltoall", 5, 2)], [Dim("torus", 3, 1)]),
     ValueError, "needs >= 4 rails"),
    (lambda: split(RailX(2, 2, 20), [("ring", 3, 1)], [Dim("torus", 3, 1)]), ValueError,
     "kind must be"),
    (lambda: dragonfly(RailX(1, 2, 40), groups=8), ValueError, "8 groups need 7 global rails"),
])
def test_bad_topologies(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
