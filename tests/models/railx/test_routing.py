"""Routing: Algorithm 1 step by step, the VC rule, deadlock freedom (acyclic CDG) for every
topology, the single-VC counterexample, and the non-minimal adaptive scheme."""

import networkx as nx
import numpy as np
import pytest

from aifabric.models.railx.routing import (AdaptiveRouting, MinimalRouting, channel_dependency_graph,
                                  route, vc_collapsed)
from aifabric.models.railx.system import Dim, RailX, dragonfly, hyperx_2d, split, torus_2d


def walk(topo, r, src, dst):
    """The route is a connected walk of channels from src to dst."""
    cur = src
    for (link, frm), _ in r:
        ln = topo.links[link]
        assert frm == cur and frm in (ln.u, ln.v)
        cur = ln.v if frm == ln.u else ln.u
    assert cur == dst


def vcs_by_kind(topo, r):
    return [(topo.links[l].kind, topo.links[l].dim, vc) for (l, _), vc in r]


def test_algorithm1_on_hyperx():
    t = hyperx_2d(RailX(4, 1, 20))                      # 4 x 4 chips: interior chips exist
    rt = MinimalRouting(t, vcs="algorithm1")
    assert rt.num_vcs == 3
    # both dimensions differ (Fig 10's nodes): VC-0 mesh, VC-1 X-rail and mesh at (4, 4),
    # VC-2 Y-rail and destination mesh
    src, dst = t.chip_id(0, 4, 1, 2), t.chip_id(4, 0, 2, 1)
    r = rt.route(src, dst)
    walk(t, r, src, dst)
    hops = vcs_by_kind(t, r)
    optical = [(d, vc) for k, d, vc in hops if k == "optical"]
    assert optical == [("X", 1), ("Y", 2)]                           # X-rail first
    phases = [vc for k, _, vc in hops]
    assert phases == sorted(phases) and phases[0] == 0 and phases[-1] == 2
    assert ("mesh", "", 1) in hops and ("mesh", "", 0) in hops      # intermediate node on VC-1
    # only Y differs (lines 10-15): mesh VC-1, Y-rail VC-2, destination mesh VC-2
    y_only = vcs_by_kind(t, rt.route(t.chip_id(2, 0, 1, 1), t.chip_id(2, 3, 2, 2)))
    assert {vc for k, _, vc in y_only if k == "mesh" and vc < 2} <= {1}
    assert [(d, vc) for k, d, vc in y_only if k == "optical"] == [("Y", 2)]
    # only X differs: X-rail VC-1, then VC-2 in the destination node (line 1-2)
    x_only = vcs_by_kind(t, rt.route(t.chip_id(0, 2, 1, 1), t.chip_id(3, 2, 2, 2)))
    assert [(d, vc) for k, d, vc in x_only if k == "optical"] == [("X", 1)]
    assert x_only[-1][2] == 2
    # inside one node: VC-2 mesh routing
    assert {vc for *_, vc in vcs_by_kind(t, rt.route(t.chip_id(1, 1, 0, 0),
                                                     t.chip_id(1, 1, 3, 3)))} == {2}
    assert nx.is_directed_acyclic_graph(channel_dependency_graph(rt))
    # the general rule (VC = node hops) agrees wherever both X and Y change
    assert [vc for *_, vc in hops if _[0] == "optical"] == \
        [vc for (l, _), vc in MinimalRouting(t).route(src, dst) if t.links[l].kind == "optical"]
    with pytest.raises(ValueError, match="is not one"):
        MinimalRouting(torus_2d(RailX(2, 1, 12), side=5), vcs="algorithm1")
    with pytest.raises(ValueError, match="vcs must be"):
        MinimalRouting(t, vcs="phases")


def test_nearest_exit_chip():
    """Inside a node the packet goes to the nearest chip with a link to the next node."""
    t = hyperx_2d(RailX(4, 1, 20))
    rt = MinimalRouting(t)
    for src in range(0, t.num_chips, 7):
        X, Y, x, y = t.chip_coords(src)
        dst_node = ((X + 1) % t.nodes[0], Y)
        link, local, _ = rt.exit_link(src, dst_node)
        _, _, lx, ly = t.chip_coords(local)
        best = min(abs(t.chip_coords(t.links[i].u if t.node_of(t.links[i].u) == (X, Y)
                                     else t.links[i].v)[2] - x)
                   + abs(t.chip_coords(t.links[i].u if t.node_of(t.links[i].u) == (X, Y)
                                       else t.links[i].v)[3] - y)
                   for i in t.links_between((X, Y), dst_node))
        assert abs(lx - x) + abs(ly - y) == best


@pytest.mark.parametrize("m,n", [(2, 2), (3, 2), (4, 1)])
def test_hyperx_diameter_bound(m, n):
    """2H_o + (5m-6)H_i (§4.1): no route exceeds it, all routes have <= 2 optical hops."""
    t = hyperx_2d(RailX(m, n, 20))
    rt = MinimalRouting(t)
    bound = 2 * (m // 2 - 1 + m - 1) + 2 * (m - 1)
    for s, d, r in rt.routes():
        mesh = sum(1 for (l, _), _ in r if t.links[l].kind == "mesh")
        assert len(r) - mesh <= 2 and mesh <= bound


TOPOLOGIES = [
    lambda: hyperx_2d(RailX(2, 2, 20)),
    lambda: torus_2d(RailX(2, 1, 12), side=5),
    lambda: dragonfly(RailX(1, 2, 14)),
    lambda: split(RailX(2, 2, 20), [Dim("torus", 3, 2), Dim("alltoall", 3, 2)],
                  [Dim("torus", 2, 2), Dim("torus", 3, 2)]),
]


@pytest.mark.parametrize("make", TOPOLOGIES)
def test_minimal_routing_is_deadlock_free_and_minimal(make):
    t = make()
    rt = MinimalRouting(t)
    cdg = channel_dependency_graph(rt)
    assert nx.is_directed_acyclic_graph(cdg)
    assert max(vc for (_, vc) in cdg.nodes) == rt.d_o == rt.num_vcs - 1
    dist = rt.node_dist
    for s, d, r in rt.routes():
        hops = sum(1 for (l, _), _ in r if t.links[l].kind == "optical")
        assert hops == dist[t.node_of(s)][t.node_of(d)]
        vcs = [vc for _, vc in r]
        assert vcs == sorted(vcs)                       # the VC never decreases
    walk(t, rt.route(0, t.num_chips - 1), 0, t.num_chips - 1)


def test_single_vc_hyperx_deadlocks():
    """The counterexample the VC rule fixes: one VC gives a cyclic CDG."""
    rt = MinimalRouting(hyperx_2d(RailX(2, 2, 20)))
    cycle = nx.find_cycle(vc_collapsed(channel_dependency_graph(rt)))
    assert len(cycle) >= 2


def test_adaptive_routing():
    t = hyperx_2d(RailX(2, 2, 20))
    ar = AdaptiveRouting(t, 3)
    assert ar.num_vcs == 4
    assert nx.is_directed_acyclic_graph(channel_dependency_graph(ar))
    rng = np.random.default_rng(0)
    for _ in range(200):                                # random adaptive choices deliver
        s, d = (int(x) for x in rng.choice(t.num_chips, 2, replace=False))
        r = ar.route(s, d, choose=lambda opts: opts[int(rng.integers(len(opts)))])
        walk(t, r, s, d)
        assert max(vc for _, vc in r) <= 3
    # default choice = minimal route
    assert len(ar.route(0, 99)) >= 1
    with pytest.raises(ValueError, match="free hops a must be an int > the inter-node"):
        AdaptiveRouting(t, 2)                              # d_o = 2: a must exceed it


def test_adaptive_allows_misrouting():
    """Fig 10: from (0,4) to (4,0) a packet may detour through other nodes."""
    t = hyperx_2d(RailX(2, 2, 20))
    ar = AdaptiveRouting(t, 3)
    opts = ar.moves((0, 4), 0, (4, 0))
    assert any(ar.node_dist[w][(4, 0)] > 1 for w, _ in opts)      # non-minimal hops exist
    assert all(vc == 1 or w > (0, 4) for w, vc in opts)          # ordered hops keep the VC


def test_route_entry_point_and_errors():
    t = hyperx_2d(RailX(2, 2, 20))
    assert route(t, 3, 50) == MinimalRouting(t).route(3, 50)
    for bad in (-1, t.num_chips, 2.0):
        with pytest.raises(ValueError, match="must be a chip id"):
            route(t, bad, 0)
