"""RailX's networks on the cycle-level simulator (models.railx.netsim): the kernel equals the
reference step on them, the tables equal the routing function in every in-node order, the VC
classes are needed, the links follow eq 5, and the registry resolves them by name."""

import numpy as np
import pytest

from aifabric.models.common.netsim import NetworkError, Traffic, simulate
from aifabric.models.common.netsim import kernel as K
from aifabric.models.common.netsim.network import (KIND_MESH, KIND_RAIL, channel_load_bound,
                                          check_deadlock_free)
from aifabric.models.common.netsim.reference import both_event_logs
from aifabric.models.common.netsim.sweep import build
from aifabric.models.railx import MinimalRouting, RailX, dragonfly, hyperx_2d, torus_2d
from aifabric.models.railx.netsim import DEFAULT_ORDER, order_search, railx


CASES = [
    ("HyperX 3x3 m=2", lambda: railx(hyperx_2d(RailX(2, 1, 8)), vcs=6, mesh_width=2),
     "uniform", 2.5, 8, 4),
    ("HyperX 3x3 m=2 order yx,yx,xy", lambda: railx(hyperx_2d(RailX(2, 1, 8)), vcs=3, k=1,
                                                    order="yx,yx,xy"), "transpose", 2.0, 6, 3),
    ("torus 3x3 m=2", lambda: railx(torus_2d(RailX(2, 1, 6))), "permutation", 1.5, 4, 4),
    ("dragonfly", lambda: railx(dragonfly(RailX(1, 2, 10), 5, 3), mesh_width=1),
     "uniform", 1.0, 4, 2),
]


@pytest.mark.parametrize("name,make,pattern,rate,buffer,length", CASES,
                         ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seed,allocator", [(1, "separable"), (3, "wavefront")])
def test_kernel_equals_reference_event_for_event(name, make, pattern, rate, buffer, length,
                                                 seed, allocator):
    net = make()
    tr = Traffic.make(pattern, net.coords, net.grid, perm_seed=seed)
    kw = dict(rate=rate, buffer=buffer, length=length, seed=seed, allocator=allocator)
    a, b = both_event_logs(net, tr, 250, **kw)
    assert len(a) > 1000 and (a[:, 1] == K.EV_SWITCH).sum() > 500
    assert a.shape == b.shape and (a == b).all()


def test_the_papers_router_equals_its_reference_on_a_railx_hyperx():
    """The paper router's switches (per-link VCs on n = 2 links per connection, age
    allocation, the open source) on a RailX HyperX: kernel and reference agree event for
    event, and the links' second VCs carry traffic."""
    from aifabric.models.railx import fig14
    net = railx(hyperx_2d(RailX(2, 2, 10)), vcs=3, k=1)
    tr = Traffic.make("uniform", net.coords, net.grid)
    a, b = both_event_logs(net, tr, 150, rate=3.0, buffer=8, length=4, seed=2,
                           **fig14.PAPER_ROUTER)
    assert (a[:, 1] == K.EV_SWITCH).sum() > 1000
    assert a.shape == b.shape and (a == b).all()
    assert (a[(a[:, 1] == K.EV_SWITCH) & (a[:, 5] > 0), 6] >= 3).any()   # link 1's VCs


def test_fig14_ablations_undo_one_switch_of_the_papers_router_each():
    from aifabric.models.railx import fig14
    head = fig14.spec(fig14.HX, 2)
    assert {k: head[k] for k in fig14.PAPER_ROUTER} == \
        {"router": "vct", "links": "perlink", "allocator": "age", "source": "open"}
    for name in ("fifo_source", "shared_vcs", "round_robin"):
        changed = {k for k, v in fig14.spec(fig14.HX, 2, **fig14.ABLATIONS[name]).items()
                   if head[k] != v}
        assert len(changed) == 1, name
    assert set(fig14.ABLATION_RECORDS) == set(fig14.ABLATIONS)
    ranges = fig14.range_table(fig14.RANGES)
    assert {rid for rid, _ in fig14.ABLATION_RECORDS.values()} <= set(ranges)


def test_vc_classes_are_needed_and_acyclic():
    net = railx(hyperx_2d(RailX(2, 1, 8)), vcs=3)
    assert check_deadlock_free(net, 3) is None
    assert check_deadlock_free(net, 1) is not None         # one VC: Fig 10's cycle
    with pytest.raises(NetworkError, match="needs 3 VC classes"):
        railx(hyperx_2d(RailX(2, 1, 8)), vcs=2)
    with pytest.raises(NetworkError, match="'hops' routing needs 3 VC classes"):
        railx(torus_2d(RailX(2, 1, 6)), vcs=4)          # d_o = 2 node hops: 3 classes


@pytest.mark.parametrize("order", [None, "yx,xy,xy", "xy,yx,yx"])
@pytest.mark.parametrize("topo", [hyperx_2d(RailX(3, 1, 8), side=3),
                                  torus_2d(RailX(2, 2, 8)), dragonfly(RailX(2, 1, 10), 5, 3)],
                         ids=["hyperx", "torus", "dragonfly"])
def test_tables_follow_the_routing_function(topo, order):
    net = railx(topo, order=order)
    all_to_all = all(len(d) == 1 and d[0].kind == "alltoall" for d in topo.dims)
    want = order or (DEFAULT_ORDER if all_to_all else ("xy",) * 3)
    rt = MinimalRouting(topo, vcs="algorithm1" if all_to_all else "hops", order=want)
    assert net.routing == f"minimal ({rt.vcs} VCs, in-node order {','.join(rt.order)})"
    rng = np.random.default_rng(0)
    for s, d in rng.integers(0, topo.num_chips, size=(150, 2)):
        s, d = int(s), int(d)
        hops = net.hops(s, d)
        if s == d:
            assert hops == [(s, 0, 0)]
            continue
        route = rt.route(s, d)
        assert len(hops) == len(route) + 1
        for (r, p, vc), ((link, frm), want_vc) in zip(hops, route):
            ln = topo.links[link]
            assert r == frm and net.nbr[r, p] == (ln.v if frm == ln.u else ln.u)
            assert vc == want_vc                            # one VC per class by default
        assert hops[-1] == (d, 0, 0)


def test_in_node_order_is_the_phase_order():
    """On a 2D-HyperX of 3x3-chip nodes, a packet whose exit chip is diagonal from it moves
    along y first where the phase's order is yx, along x first where it is xy."""
    topo = hyperx_2d(RailX(3, 1, 8), side=3)
    rt_yx = MinimalRouting(topo, vcs="algorithm1", order="yx,yx,yx")
    rt_xy = MinimalRouting(topo, vcs="algorithm1", order="xy,xy,xy")
    a, b = topo.chip_id(0, 0, 0, 0), topo.chip_id(0, 0, 2, 2)      # same node, diagonal
    first = {}
    for name, rt in (("yx", rt_yx), ("xy", rt_xy)):
        (link, frm), _ = rt.route(a, b)[0]
        ln = topo.links[link]
        nxt = ln.v if frm == ln.u else ln.u
        first[name] = topo.chip_coords(nxt)[2:]
    assert first == {"yx": (0, 1), "xy": (1, 0)}


def test_mesh_links_carry_n_times_k_flits_per_cycle_eq5():
    """Eq 5 counts a chip-to-chip connection as n ports of k times the port bandwidth."""
    for n, k in ((1, 2), (2, 2), (2, 3)):
        net = railx(hyperx_2d(RailX(2, n, 12), side=3), k=k)
        assert set(net.width[net.kind == KIND_MESH].tolist()) == {n * k}
        assert set(net.width[net.kind == KIND_RAIL].tolist()) == {1}
        assert (net.width[:, 0] == 4 * n).all()           # 4n ports of injection
    with pytest.raises(NetworkError, match="not both"):
        railx(hyperx_2d(RailX(2, 1, 8)), k=2, mesh_width=2)


def test_order_search_ranks_every_order_and_the_cdg_accepts_them():
    """Algorithm 1 gives each phase its own VC class, so any order per phase keeps the CDG
    acyclic; the search ranks the 8 by the channel-load bound computed from the tables."""
    topo = hyperx_2d(RailX(4, 1, 8), side=3)
    rows = order_search(topo, k=1)
    assert len(rows) == 8 and len({r["order"] for r in rows}) == 8
    assert all(r["acyclic"] for r in rows)
    bounds = [r["bound"] for r in rows]
    assert bounds == sorted(bounds, reverse=True)
    for r in rows:
        net = railx(topo, k=1, order=r["order"])
        assert r["bound"] == channel_load_bound(net)
        assert r["bound"] == pytest.approx(min(r["mesh"], r["rail"]))   # ejection: 4n
    assert rows[0]["bound"] > rows[-1]["bound"]           # the order matters here


def test_registry_builds_railx_specs_by_name():
    net = build({"topology": "hyperx", "m": 2, "n": 1, "R": 8, "k": 2, "vcs": 3})
    assert net.routers == 36 and set(net.width[net.kind == KIND_MESH].tolist()) == {2}
    with pytest.raises(NetworkError, match="hyperx: unknown parameter"):
        build({"topology": "hyperx", "m": 2, "n": 1, "R": 8, "colour": 1})
    with pytest.raises(NetworkError, match="order must be three of"):
        build({"topology": "hyperx", "m": 2, "n": 1, "R": 8, "order": "xy"})


def test_a_dimension_split_railx_topology_simulates_deadlock_free():
    from aifabric.models.railx import Dim, split
    topo = split(RailX(2, 2, 12), [Dim("torus", 2, 2), Dim("alltoall", 3, 2)],
                 [Dim("torus", 3, 2)])
    net = railx(topo, vcs=None)
    assert net.vcs == net.vcs_needed and check_deadlock_free(net, net.vcs) is None
    res = simulate(net, "uniform", 0.3, warmup=300, window=1000, drain=3000, check=True)
    assert res.delivered_packets == res.measured_packets > 300
