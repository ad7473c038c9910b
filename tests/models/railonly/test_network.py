"""Minimum-tier Clos counts on hand-worked networks and on built graphs; Table II."""

import random

import networkx as nx
import pytest

from aifabric.models.common.clos import clos_capacity, clos_graph, min_tier_clos
from aifabric.models.railonly import network
from aifabric.models.railonly.experiments import TABLE2_PRINTED


@pytest.mark.parametrize("hosts,radix,per_tier", [
    (4, 4, (1,)),            # one switch
    (8, 4, (4, 2)),          # 4 leaves of 2 down / 2 up, 2 spines of 4 down
    (5, 4, (3, 2)),          # a partly filled leaf
    (16, 4, (8, 8, 4)),      # capacity of 3 tiers at radix 4 is 4*2*2 = 16
    (9, 4, (5, 5, 3)),
    (2048, 64, (64, 32)),
])
def test_hand_worked_counts(hosts, radix, per_tier):
    c = min_tier_clos(hosts, radix)
    assert c.per_tier == per_tier
    assert c.transceivers == 2 * hosts * len(per_tier)


def test_capacity():
    assert [clos_capacity(8, t) for t in (1, 2, 3)] == [8, 32, 128]
    with pytest.raises(ValueError, match="even"):
        clos_capacity(7, 1)
    with pytest.raises(ValueError, match="serves at most 32 hosts"):
        min_tier_clos(33, 8, tiers=2)


@pytest.mark.parametrize("hosts,radix", [(8, 4), (9, 4), (16, 4), (24, 8), (100, 8), (64, 8)])
def test_graph_is_the_counted_non_blocking_network(hosts, radix):
    c = min_tier_clos(hosts, radix)
    g = clos_graph(c)
    switches = [v for v in g if v[0] == "s"]
    assert len(switches) == c.switches
    assert sum(d["capacity"] for _, _, d in g.edges(data=True)) == c.links
    for v in switches:
        tier = v[1]
        up = sum(d["capacity"] for u, w, d in g.edges(v, data=True) if w[0] == "s"
                 and w[1] == tier + 1)
        down = sum(d["capacity"] for u, w, d in g.edges(v, data=True) if w[0] == "h"
                   or (w[0] == "s" and w[1] == tier - 1))
        assert up + down <= radix
        if tier < c.tiers - 1:
            assert up == down          # every lower switch as much up as down
    # full bisection: any half of the hosts can send to the other half at line rate
    rng = random.Random(hosts)
    for _ in range(3):
        hs = list(range(hosts))
        rng.shuffle(hs)
        a, b = hs[:hosts // 2], hs[hosts // 2: 2 * (hosts // 2)]
        flow = g.to_directed()
        for i in a:
            flow.add_edge("src", ("h", i), capacity=1)
        for i in b:
            flow.add_edge(("h", i), "dst", capacity=1)
        assert nx.maximum_flow_value(flow, "src", "dst") == len(a)


def test_rail_only_hand_worked():
    # 16 GPUs in HB domains of 4: 4 rails of 4 GPUs, one radix-4 switch each.
    ro = network.rail_only(16, 4, 4)
    assert (ro.switches, ro.transceivers, ro.tiers) == (4, 32, 1)
    sota = network.rail_optimized(16, 4)
    assert (sota.switches, sota.transceivers, sota.tiers) == (20, 96, 3)
    assert sota.cost() == 20 * 4 * 694 + 96 * 199
    assert sota.power() == 20 * 4 * 18 + 96 * 9
    s = network.savings(16, 4, 4)
    assert s["cost_saving"] == pytest.approx(1 - (4 * 4 * 694 + 32 * 199)
                                             / (20 * 4 * 694 + 96 * 199))
    # rails of 2 GPUs share radix-4 switches, two rails per switch
    assert network.rail_only(16, 4, 8).switches == 4


def test_table2_every_cell_and_its_hb_domain():
    for row, p in zip(network.table2(), TABLE2_PRINTED):
        g, r, ssw, rsw, str_, rtr, cost, pwr = p
        assert (row["gpus"], row["radix"]) == (g, r)
        assert (row["sota_switches"], row["railonly_switches"]) == (ssw, rsw)
        assert (row["sota_transceivers"], row["railonly_transceivers"]) == (str_, rtr)
        assert round(100 * row["cost_saving"]) == cost
        assert round(100 * row["power_saving"]) in (pwr, pwr + 1)   # 37.5 printed as 37
    printed = [dict(gpus=g, radix=r, sota_switches=a, railonly_switches=b,
                    sota_transceivers=c, railonly_transceivers=d)
               for g, r, a, b, c, d, _, _ in TABLE2_PRINTED]
    assert network.hb_sizes_matching(printed) == [256]


@pytest.mark.parametrize("call,message", [
    (lambda: network.rail_only(100, 64, 8), "multiple of the HB domain size"),
    (lambda: network.rail_only(64, 1, 8), "radix must be an int >= 2"),
    (lambda: network.rail_optimized(0, 64), "gpus must be an int >= 1"),
    (lambda: network.rail_only(64, 64, 0), "hb must be an int >= 1"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
