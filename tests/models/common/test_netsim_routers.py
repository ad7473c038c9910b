"""Routers, allocators, link models and routings by name: the registry resolves every name it
holds (and refuses others in one line that lists them); the ideal virtual cut-through router
and the parallel link model equal their reference event for event; directed cases pin the
VCT router's rules (one cycle per router, a second packet right behind the first in one VC,
the credit round trip) and the parallel links' (one packet per link, its lanes only), and
the registered router's by the router RTL's timing diagram (cycles per hop, a credit to the
output in three cycles, an output VC's two idle cycles between packets, a void speculative
grant); every routing the registry offers is deadlock free under every router, and the
watchdog still fires on one that is not."""

import itertools

import numpy as np
import pytest

import aifabric.models.railx.netsim  # noqa: F401  (registers RailX's topologies and routing)
from aifabric.models.common.netsim import (DeadlockError, NetworkError, Simulator, Traffic, mesh,
                                           torus)
from aifabric.models.common.netsim import kernel as K
from aifabric.models.common.netsim import registry
from aifabric.models.common.netsim.network import check_deadlock_free
from aifabric.models.common.netsim.reference import RouterModel, both_event_logs
from aifabric.models.common.netsim.sweep import build, point, run_point

# one small instance of every registered topology
SMALL = {
    "mesh": {"k": 3, "vcs": 2},
    "torus": {"k": 4, "vcs": 2},
    "hyperx": {"m": 2, "n": 1, "R": 8, "k": 1, "vcs": 3},
    "railx-torus": {"m": 2, "n": 2, "R": 8},
    "dragonfly": {"m": 2, "n": 1, "R": 10, "groups": 5, "group_size": 3},
}
# what the registered router needs of them: one lane per port (RailX's chip-to-chip links as
# one link of one lane, one flit a cycle injected)
ONE_LANE = {"hyperx": {"inject": 1},                      # k = 1, n = 1: one lane
            "railx-torus": {"mesh_width": 1, "inject": 1},
            "dragonfly": {"mesh_width": 1, "inject": 1}}


def runs(router, allocator, links):
    """The router takes this allocator and link model (the registered router: separable or
    wavefront, shared links)."""
    return router != "registered" or (allocator != "age" and links == "shared")


def test_the_registry_holds_the_routers_allocators_and_link_models():
    assert registry.choices("router") == ("pipelined", "vct", "registered")
    assert registry.choices("allocator") == ("separable", "wavefront", "age")
    assert registry.choices("links") == ("shared", "parallel", "perlink")
    assert registry.choices("source") == ("fifo", "open")
    assert [registry.default_name(k) for k in registry.KINDS] == \
        ["pipelined", "separable", "shared", "fifo"]
    assert set(registry.routings()) >= {"dor", "railx-minimal"}
    assert set(registry.topologies()) == set(SMALL)


@pytest.mark.parametrize("kind", registry.KINDS)
def test_an_unknown_name_is_one_line_listing_the_registered_ones(kind):
    net = mesh(3)
    tr = Traffic.make("uniform", net.coords, net.grid)
    names = ", ".join(registry.choices(kind))
    with pytest.raises(NetworkError, match=f"^unknown {kind} 'nope'; registered: {names}$"):
        Simulator(net, tr, rate=0.1, **{kind: "nope"})
    with pytest.raises(NetworkError, match=f"unknown {kind} 'nope'"):
        run_point(point({"topology": "mesh", "k": 3, kind: "nope"}, "uniform", 0.1))
    with pytest.raises(NetworkError, match="unknown routing 'nope'; registered: dor, "):
        build({"topology": "mesh", "k": 3, "routing": "nope"})
    with pytest.raises(NetworkError, match="routing 'railx-minimal' does not route a mesh"):
        build({"topology": "mesh", "k": 3, "routing": "railx-minimal"})


def test_every_registered_name_resolves_and_runs():
    """Every router x allocator x link model runs a point (with the default source; every
    other source with each router); every routing builds every topology it is registered for;
    the router and allocator a point names reach the kernel."""
    rows = {}
    combos = [c + ("fifo",) for c in itertools.product(*(registry.choices(k)
                                                         for k in registry.KINDS[:3]))]
    combos += [(r, "age", "perlink", s) for r in registry.choices("router")
               for s in registry.choices("source") if s != "fifo"]
    assert registry.KINDS[3] == "source" and {c[3] for c in combos} == \
        set(registry.choices("source"))
    for names in combos:
        spec = {"topology": "mesh", "k": 3, "vcs": 2, **dict(zip(registry.KINDS, names))}
        pt = point(spec, "uniform", 0.3, warmup=50, window=100, drain=400)
        if not runs(*names[:3]):
            with pytest.raises(NetworkError, match=f"^router {names[0]!r} needs ports of at "
                               "most 1 lane, allocator separable or wavefront, links shared"):
                run_point(pt)
            continue
        rows[names] = run_point(pt)
        assert rows[names]["delivered_packets"] > 20
    # the routers differ (one cycle per router against two), so the names were not ignored
    assert rows[("vct", "separable", "shared", "fifo")]["latency_mean"] < \
        rows[("pipelined", "separable", "shared", "fifo")]["latency_mean"] - 2
    for name in registry.routings():
        entry = registry.routing(name)
        for topo in entry.topologies:
            net = build({"topology": topo, **SMALL[topo], "routing": name})
            assert net.routers > 1


def test_every_routing_is_deadlock_free_under_every_router_and_the_watchdog_fires():
    for name in registry.routings():
        for topo in registry.routing(name).topologies:
            net = build({"topology": topo, **SMALL[topo], "routing": name})
            assert check_deadlock_free(net, net.vcs) is None, (name, topo)
            for router in registry.choices("router"):
                links, rnet = "parallel", net
                if router == "registered":
                    rnet = build({"topology": topo, **SMALL[topo], **ONE_LANE.get(topo, {}),
                                  "routing": name})
                    links = "shared"
                tr = Traffic.make("uniform", rnet.coords, rnet.grid)
                sim = Simulator(rnet, tr, rate=0.9 * rnet.inject_width, router=router,
                                links=links, check=True, watchdog=300)
                sim.advance(400)                   # saturated, and still moving
                assert sim.ctr[K.K_EJ] > 0
    net = torus(4, vcs=1)                          # no dateline: a dependency cycle
    tr = Traffic.make("uniform", net.coords, net.grid)
    for router in registry.choices("router"):
        sim = Simulator(net, tr, rate=0.9, buffer=4, force=True, watchdog=200, router=router)
        with pytest.raises(DeadlockError, match="no flit moved for 200 cycles"):
            sim.advance(20000)


def events(net, rows, cycles, **kw):
    tr = Traffic.make("trace", net.coords, net.grid, trace=rows)
    sim = Simulator(net, tr, check=True, log=100_000, **kw)
    sim.advance(cycles)
    return sim.events()


def crossing(ev, router, tag, seq, out=None):
    """The cycle flit ``seq`` of packet ``tag`` crosses ``router``'s switch."""
    m = (ev[:, 1] == K.EV_SWITCH) & (ev[:, 2] == router) & (ev[:, 7] == tag) & \
        (ev[:, 8] == seq)
    if out is not None:
        m &= ev[:, 5] == out
    (t,) = ev[m, 0]
    return int(t)


@pytest.mark.parametrize("width,delay,length", [(1, 1, 4), (2, 3, 5)])
def test_vct_zero_load_latency_is_one_cycle_per_router(width, delay, length):
    """Spaced packets: (H + 1) routers of one cycle, H links of ``delay``, ceil(L / width) - 1
    to serialise, from creation to tail ejection (the pipelined router: 2 per router)."""
    k = 5
    net = mesh(k, vcs=2, width=width, delay=delay, inject=width)
    rng = np.random.default_rng(11)
    pairs = [(int(s), int(d)) for s, d in rng.integers(0, k * k, size=(25, 2)) if s != d]
    rows = [(i * 100, s, d, length) for i, (s, d) in enumerate(pairs)]
    ev = events(net, rows, len(rows) * 100 + 100, buffer=8, length=length, router="vct")
    ej = ev[(ev[:, 1] == K.EV_SWITCH) & (ev[:, 5] == 0) & (ev[:, 8] == length - 1)]
    done = {int(tag): int(t) for t, tag in zip(ej[:, 0], ej[:, 7])}
    for i, (s, d) in enumerate(pairs):
        hops = abs(s // k - d // k) + abs(s % k - d % k)
        tag = (s << 32) | sum(1 for s2, _ in pairs[:i] if s2 == s)
        assert done[tag] - i * 100 == (hops + 1) + hops * delay + -(-length // width) - 1


def test_vct_second_packet_follows_the_first_in_one_vc_without_a_gap():
    """Two packets 0 -> 1 on one VC, created together: under the VCT router the second head
    crosses router 0 the cycle after the first's tail (it is allocated the output VC the
    tail freed and crosses at once), and queues in router 1's VC 0 right behind it; the
    pipelined router leaves two cycles (VC allocation, then switch allocation)."""
    net = mesh(2, vcs=1)
    rows = [(0, 0, 1, 4), (0, 0, 1, 4)]
    a, b = 0 << 32, (0 << 32) | 1
    for router, gap in (("vct", 1), ("pipelined", 2)):
        ev = events(net, rows, 60, buffer=8, length=4, router=router)
        assert crossing(ev, 0, b, 0) - crossing(ev, 0, a, 3) == gap, router
        into1 = ev[(ev[:, 1] == K.EV_SWITCH) & (ev[:, 2] == 0) & (ev[:, 5] != 0)]
        assert set(into1[:, 6]) == {0}                   # both packets on output VC 0
    ev = events(net, rows, 60, buffer=8, length=4, router="vct")
    # at router 1 the eight flits leave one a cycle, the second packet right behind the first
    at1 = [crossing(ev, 1, tag, s) for tag in (a, b) for s in range(4)]
    assert at1 == list(range(at1[0], at1[0] + 8))


@pytest.mark.parametrize("router,extra", [("vct", 1), ("pipelined", None)])
def test_credit_round_trip(router, extra):
    """Buffer = packet = 4 flits, one VC, a 3-cycle link: the second packet waits for all 4
    credits of the first. VCT: they are back the cycle after the first's tail leaves router 1
    and the head crosses at once (tail ejected at t, head crosses router 0 at t + 1).
    Pipelined: each credit crosses the link back (3 cycles) and the head needs its VC
    allocation cycle first (t + 3 + 1)."""
    d = 3
    net = mesh(2, vcs=1, delay=d)
    rows = [(0, 0, 1, 4), (0, 0, 1, 4)]
    ev = events(net, rows, 80, buffer=4, length=4, router=router)
    tail_out = crossing(ev, 1, 0, 3, out=0)
    head_in = crossing(ev, 0, 1, 0)
    assert head_in - tail_out == (extra if extra is not None else d + 1)


def test_parallel_links_hold_one_packet_each_at_their_own_lanes():
    """A 2-lane port made of 2 parallel 1-lane links: one packet crosses at 1 flit/cycle (the
    shared model lets it use both lanes), two packets on two VCs cross side by side, a third
    waits for a link."""
    net = mesh(2, vcs=3, width=2, inject=2)
    net.links = np.where(net.nbr >= 0, 2, 1).astype(np.int32)
    one = [(0, 0, 1, 4)]
    for links, span in (("shared", 1), ("parallel", 3)):
        ev = events(net, one, 40, buffer=8, length=4, router="vct", links=links)
        assert crossing(ev, 0, 0, 3) - crossing(ev, 0, 0, 0) == span, links
    net = mesh(2, vcs=3, width=2, inject=4)                # a packet injected per cycle
    net.links = np.where(net.nbr >= 0, 2, 1).astype(np.int32)
    three = [(0, 0, 1, 4), (0, 0, 1, 4), (0, 0, 1, 4)]
    ev = events(net, three, 60, buffer=8, length=4, router="vct", links="parallel")
    heads = [crossing(ev, 0, tag, 0) for tag in range(3)]
    tails = [crossing(ev, 0, tag, 3) for tag in range(3)]
    assert heads[0] < heads[1] < tails[0]                  # side by side on the two links
    assert heads[2] == tails[0] + 1                        # the third waits for a free link
    sw = ev[(ev[:, 1] == K.EV_SWITCH) & (ev[:, 2] == 0)]
    per_cycle_vc = np.unique(sw[:, [0, 4]], axis=0, return_counts=True)[1]
    assert per_cycle_vc.max() == 1                         # one lane per packet per cycle


def test_parallel_links_must_split_the_port():
    net = mesh(2, vcs=2, width=3)
    net.links = np.where(net.nbr >= 0, 2, 1).astype(np.int32)
    tr = Traffic.make("uniform", net.coords, net.grid)
    with pytest.raises(NetworkError, match="3 lanes do not split into 2 parallel links"):
        Simulator(net, tr, rate=0.1, links="parallel")


@pytest.mark.parametrize("port", [0, 2])
def test_a_port_in_use_has_a_lane(port):
    """A connected port (or the local one) of no lanes is refused in one line: allocation
    would never grant it, and the kernel's grants without a round do not look at widths."""
    net = mesh(3, vcs=2)
    net.width[4, port] = 0
    tr = Traffic.make("uniform", net.coords, net.grid)
    with pytest.raises(NetworkError, match=f"router 4 port {port}: a port in use needs at "
                                           "least one lane, not 0"):
        Simulator(net, tr, rate=0.1)
    net.width[4, port] = 1
    assert net.nbr[0, 2] < 0 and net.width[0, 2] == 0      # a corner's unused port: no lanes
    Simulator(net, tr, rate=0.1)


def test_every_chip_injects_at_one_width():
    """The sources draw one stream per injection lane, the same number at every chip."""
    net = mesh(3, vcs=2, inject=2)
    net.width[5, 0] = 1
    tr = Traffic.make("uniform", net.coords, net.grid)
    with pytest.raises(NetworkError, match="every chip injects at one width: router 5 has 1 "
                                           "lanes, router 0 2"):
        Simulator(net, tr, rate=0.1)


CASES = [
    ("4x4 mesh, 2 parallel 1-lane links", lambda: mesh(4, vcs=3, width=2, inject=2, delay=2),
     "uniform", 1.4, 6, 4, 2, "separable", 150),
    ("4x4 torus, dateline", lambda: torus(4, vcs=4), "transpose", 0.5, 5, 2, 1, "wavefront",
     150),
]
ROUTERS = [("vct", "shared", False, "fifo"), ("vct", "parallel", False, "fifo"),
           ("pipelined", "parallel", False, "fifo"), ("vct", "perlink", False, "fifo"),
           ("vct", "shared", True, "fifo"), ("vct", "parallel", False, "open"),
           ("vct", "perlink", True, "open"), ("pipelined", "perlink", True, "open")]
# the registered router on the same topologies with one lane per port, a 5x5 mesh and a RailX
# 2D-HyperX (links of one lane), each allocator at a low rate and past saturation
REGISTERED = [
    ("4x4 mesh, 1 lane", lambda: mesh(4, vcs=3, delay=2), "uniform", 1.0, 6, 4, 1,
     "separable", 150),
    ("4x4 torus, dateline", lambda: torus(4, vcs=4), "transpose", 0.5, 5, 2, 1, "wavefront",
     150),
    ("5x5 mesh, low", lambda: mesh(5, vcs=2), "uniform", 0.05, 4, 3, 1, "wavefront", 400),
    ("5x5 mesh, saturated", lambda: mesh(5, vcs=2), "uniform", 1.0, 4, 3, 1, "separable",
     150),
    ("RailX 2D-HyperX, 1 lane, low",
     lambda: build({"topology": "hyperx", **SMALL["hyperx"], **ONE_LANE["hyperx"]}),
     "uniform", 0.05, 5, 4, 1, "separable", 300),
    ("RailX 2D-HyperX, 1 lane, saturated",
     lambda: build({"topology": "hyperx", **SMALL["hyperx"], **ONE_LANE["hyperx"],
                    "rail_delay": 3}), "transpose", 1.0, 5, 4, 1, "wavefront", 150),
]
PAIRS = [c + r for r in ROUTERS for c in CASES] + \
    [c + ("registered", "shared", False, "fifo") for c in REGISTERED] + \
    [REGISTERED[0] + ("registered", "shared", False, "open")]
# pairs run on a kernel compiled for the network's shape and router (kernel.kernel_for), the
# others on the generic one: the paper router's switches together (age, per-link VCs on two
# parallel links, the open source; 6 VCs a port, 3 credit-ring slots) and the registered
# router with the wavefront allocator; every router setting a shaped kernel holds as a
# constant is off its default in one of them
SHAPED = {(CASES[0][0], "vct", "perlink", True, "open"),
          (REGISTERED[1][0], "registered", "shared", False, "fifo")}


def _shaped(p):
    return (p[0],) + tuple(p[9:]) in SHAPED


@pytest.mark.parametrize(
    "name,make,pattern,rate,buffer,length,nl,allocator,cycles,router,links,age,source", PAIRS,
    ids=[f"{p[0]}-{p[9]}-{p[10]}{'-age' if p[11] else ''}-{p[12]}"
         f"{'-shaped' if _shaped(p) else ''}" for p in PAIRS])
def test_kernel_equals_reference_for_every_router_and_link_model(
        name, make, pattern, rate, buffer, length, nl, allocator, cycles, router, links, age,
        source):
    """Each router x link model, and each of the paper router's switches (per-link VCs, age
    allocation, the open source) alone and together; the registered router with each
    allocator, at a low rate and saturated; two of them on a shaped kernel."""
    net = make()
    net.links = np.where(net.nbr >= 0, nl, 1).astype(np.int32)
    tr = Traffic.make(pattern, net.coords, net.grid, perm_seed=2)
    kw = dict(rate=rate, buffer=buffer, length=length, seed=5,
              allocator="age" if age else allocator, router=router, links=links,
              source=source)
    shaped = (name, router, links, age, source) in SHAPED
    assert len(SHAPED) == sum(map(_shaped, PAIRS))           # each names a pair
    a, b = both_event_logs(net, tr, cycles, shaped=shaped, **kw)
    assert (a[:, 1] == K.EV_SWITCH).sum() > 500
    assert a.shape == b.shape and (a == b).all()


def test_the_kernel_is_shaped_for_large_networks_one_per_shape_and_router(monkeypatch):
    from aifabric.models.common.netsim.sim import SHAPED_ENV, SHAPED_MIN_ROUTERS

    def sim(k, **kw):
        net = mesh(k, vcs=2)
        return Simulator(net, Traffic.make("uniform", net.coords, net.grid), rate=0.1, **kw)

    big = 12                                             # 144 chips
    assert big * big >= SHAPED_MIN_ROUTERS > 11 * 11
    monkeypatch.setenv(SHAPED_ENV, "0")                  # make test's setting: none by default
    assert sim(big).kernel is K.run and sim(3, shaped=True).kernel is not K.run
    monkeypatch.setenv(SHAPED_ENV, "1")
    assert sim(3).kernel is not K.run and sim(big, shaped=False).kernel is K.run
    monkeypatch.setenv(SHAPED_ENV, "yes")
    with pytest.raises(NetworkError, match=f"^{SHAPED_ENV} must be 0 or 1, not 'yes'$"):
        sim(3)
    monkeypatch.delenv(SHAPED_ENV)                       # the rule: by size
    assert sim(11).kernel is K.run and sim(3, shaped=False).kernel is K.run
    a, b = sim(big), sim(3, shaped=True)
    assert a.kernel is not K.run and b.kernel is not K.run
    assert a.kernel is b.kernel                          # 5 ports, 2 VCs, 16 flits: one kernel
    assert sim(big, router="vct").kernel is not a.kernel
    assert sim(3, shaped=True, buffer=8).kernel is not a.kernel
    assert sim(3, shaped=True, check=True).kernel is not a.kernel



def _phases_left(kind):
    """The phase functions a kernel of router ``kind`` (``cfg[KIND]``'s values, -1: read at run
    time) still calls once numba's dead-branch pruning, the pass it runs before inlining, has
    removed the branches on the closure's constants."""
    from numba.core import ir, types
    from numba.core.analysis import dead_branch_prune
    from numba.core.compiler import run_frontend
    fn = K._make_run((5, 2, 16, 2), kind).py_func
    fir = run_frontend(fn)
    dead_branch_prune(fir, (types.pyobject,) * fn.__code__.co_argcount)
    return {st.value.name for blk in fir.blocks.values() for st in blk.body
            if isinstance(st, ir.Assign) and isinstance(st.value, ir.Global)
            and st.value.name.startswith("_")}


def test_a_shaped_kernel_inlines_only_its_routers_phases():
    """A shaped kernel holds its router as constants, and its test for the registered router
    is one numba prunes before inlining: a kernel of another router never inlines the
    registered router's phases, a registered one never the others', the generic one both."""
    registered = {"_vc_allocate_registered", "_sa_eligible_registered", "_form_requests",
                  "_hold_granted", "_apply_crossed"}
    others = {"_vc_allocate", "_sa_eligible"}
    shared = {"_credit_arrival", "_inject", "_sole_requests", "_cross", "_separable_round",
              "_wavefront_round"}
    pipelined, vct = (0, 0, 0, 0, 2, 0), (0, 0, 1, 2, 2, 0)
    for kind in (pipelined, vct):
        left = _phases_left(kind)
        assert others | shared <= left and not registered & left, kind
    left = _phases_left((0, 0, 0, 0, 2, 1))
    assert registered | shared <= left and not others & left
    assert registered | others | shared <= _phases_left((-1,) * len(K.KIND))

def test_the_router_model_resolves_its_names():
    kw = dict(buffer=4, route_port=np.zeros((1, 1), np.int8),
              route_vc_lo=np.zeros((1, 1), np.int8), route_vc_hi=np.zeros((1, 1), np.int8))
    assert RouterModel(2, 1, router="vct", **kw).bypass == 1
    assert RouterModel(2, 1, **kw).bypass == 0
    with pytest.raises(NetworkError, match="unknown router 'x'; registered: pipelined, vct, "
                                           "registered$"):
        RouterModel(2, 1, router="x", **kw)
    assert RouterModel(2, 1, router="registered", **kw).registered
    for bad, what in (({"allocator": "age"}, "1 lane, age, shared"),
                      ({"width": [1, 2]}, "2 lanes, separable, shared"),
                      ({"links": [1, 1]}, "1 lane, separable, parallel")):
        with pytest.raises(NetworkError, match=f"^router 'registered' needs ports of at most 1 "
                           f"lane, allocator separable or wavefront, links shared \\(given "
                           f"{what}\\)$"):
            RouterModel(2, 1, router="registered", **kw, **bad)


def test_open_source_starts_a_second_packet_on_another_link_in_the_same_cycle():
    """Two packets created together at chip 0 of a 3 x 3 mesh, one VC: to chip 1 (east) and
    to chip 3 (two different output ports). The FIFO source queues the second behind the first in the local VC: its
    head crosses router 0 the cycle after the first's tail. The open source gives each its
    own local VC (one per output link of the chip) and both heads cross in the same cycle on
    their two links."""
    net = mesh(3, vcs=1, inject=8)                      # both written in cycle 0
    rows = [(0, 0, 1, 4), (0, 0, 3, 4)]
    ev = events(net, rows, 60, buffer=8, length=4, router="vct")
    assert crossing(ev, 0, 1, 0) == crossing(ev, 0, 0, 3) + 1
    ev = events(net, rows, 60, buffer=8, length=4, router="vct", source="open")
    assert crossing(ev, 0, 1, 0) == crossing(ev, 0, 0, 0)
    heads = ev[(ev[:, 1] == K.EV_SWITCH) & (ev[:, 2] == 0) & (ev[:, 8] == 0)]
    assert len(set(heads[:, 5])) == 2                   # on two different output ports
    inj = ev[ev[:, 1] == K.EV_INJECT]
    assert set(inj[inj[:, 7] == 0, 4]) == {0} and set(inj[inj[:, 7] == 1, 4]) == {1}


def test_open_source_holds_one_packet_per_local_vc_and_as_many_as_the_chip_has_links():
    """Every chip of a 2 x 2 mesh has 2 output links, so 2 local VCs: with 3 packets to one
    destination, the third is written only once a local VC is empty."""
    net = mesh(2, vcs=1, inject=2)
    rows = [(0, 0, 1, 4)] * 3
    ev = events(net, rows, 80, buffer=8, length=4, router="vct", source="open")
    inj = ev[ev[:, 1] == K.EV_INJECT]
    assert sorted(set(inj[:, 4])) == [0, 1]
    first_of_third = int(inj[(inj[:, 7] == 2) & (inj[:, 8] == 0), 0][0])
    vc_of_third = int(inj[inj[:, 7] == 2, 4][0])
    last_out = crossing(ev, 0, vc_of_third, 3)        # packet in that VC before (tag = VC)
    assert first_of_third == last_out + 1


def test_per_link_vcs_let_two_packets_of_one_class_cross_side_by_side():
    """One VC class, a connection of 2 links of 1 lane. Parallel links share the port's one
    VC: the second packet waits for the first's tail. Per-link VCs: each link has its own VC
    downstream (output VC 1 is link 1's class 0), so the second starts the cycle after the
    first (one packet written into the local port per cycle) on the other link; a third
    waits for a link."""
    net = mesh(2, vcs=1, width=2, inject=4)
    net.links = np.where(net.nbr >= 0, 2, 1).astype(np.int32)
    rows = [(0, 0, 1, 4)] * 3
    ev = events(net, rows, 60, buffer=8, length=4, router="vct", links="parallel",
                source="open")
    assert crossing(ev, 0, 1, 0) > crossing(ev, 0, 0, 3)
    ev = events(net, rows, 60, buffer=8, length=4, router="vct", links="perlink",
                source="open")
    heads = [crossing(ev, 0, tag, 0) for tag in range(3)]
    tails = [crossing(ev, 0, tag, 3) for tag in range(3)]
    assert heads[1] - heads[0] == 1 and heads[1] < tails[0]
    assert heads[2] == min(tails[:2]) + 1
    sw = ev[(ev[:, 1] == K.EV_SWITCH) & (ev[:, 2] == 0) & (ev[:, 5] != 0)]
    assert [int(sw[sw[:, 7] == tag, 6][0]) for tag in range(2)] == [0, 1]
    # router 1 received them on two input VCs of one port
    at1 = ev[(ev[:, 1] == K.EV_SWITCH) & (ev[:, 2] == 1)]
    assert set(at1[:, 4]) == {0, 1}


def test_age_allocation_gives_the_output_to_the_oldest_packet():
    """At router 1, on the line of chips 0, 1, 2 of a 3 x 3 mesh, packet A (created at chip 0 at cycle 0) and packet B
    (created at chip 1 at cycle 2) ask for the east output VC in the same cycle. Round robin
    starts at the local port and grants B; age grants A, the older."""
    net = mesh(3, vcs=1)
    rows = [(0, 0, 2, 4), (2, 1, 2, 4)]
    a, b = 0, 1 << 32
    for allocator, first in (("separable", b), ("age", a)):
        ev = events(net, rows, 60, buffer=8, length=4, router="vct", allocator=allocator)
        ta, tb = crossing(ev, 1, a, 0), crossing(ev, 1, b, 0)
        assert (ta < tb) == (first == a), allocator
        assert abs(ta - tb) >= 4                        # the loser waits for the whole packet


def test_per_link_vcs_beyond_the_states_range_are_refused():
    # a port holds vcs x links VCs with per-link VCs; the state numbers them in int8, so 3
    # links of 42 VCs (126) build and 3 of 45 (135) are refused, not wrapped
    def sim(vcs):
        net = build({"topology": "hyperx", "m": 2, "n": 3, "R": 8, "k": 1, "vcs": vcs,
                     "side": 3})
        return Simulator(net, Traffic.make("uniform", net.coords, net.grid), rate=0.1,
                         links="perlink")
    assert sim(42).state["in_ov"].shape[-1] == 126
    with pytest.raises(NetworkError, match=r"135 VCs per port \(45 per link x 3 links, .*at "
                                           r"most 127$"):
        sim(45)


def test_ports_wider_than_the_credit_ring_holds_are_refused():
    # a VC returns up to its port's lanes of credits in one cycle, counted in int8: 127 lanes
    # build, 128 are refused, not wrapped
    def sim(lanes):
        net = mesh(2, vcs=2)
        net.width[net.nbr >= 0] = lanes
        return Simulator(net, Traffic.make("uniform", net.coords, net.grid), rate=0.1)
    assert sim(127).state["ports"][0, 1, K.PT_WIDTH] == 127
    with pytest.raises(NetworkError, match=r"router 0 port \d has 128 lanes, at most 127$"):
        sim(128)


# -- the registered router: the contract of rtl/railx/router.py's docstring (its timing diagram:
# a head written in t is VC-allocated and switch-granted in t + 1, read and crossing in t + 2,
# on the output, the first cycle of the link, in t + 3)


@pytest.mark.parametrize("delay,length", [(1, 4), (3, 1)])
def test_registered_zero_load_is_two_cycles_per_router_plus_the_link(delay, length):
    """Spaced packets on a 5x5 mesh: a head written into a router in t is granted in t + 1
    and written into the next router in t + 2 + delay (granted there in t + 3 + delay); the
    ejection is the crossing, t + 2 at the last router, the body one a cycle behind: from
    creation to tail ejection 2(H + 1) + H·delay + L - 1, as many cycles as the pipelined
    router's."""
    k = 5
    net = mesh(k, vcs=2, delay=delay)
    rng = np.random.default_rng(3)
    pairs = [(int(s), int(d)) for s, d in rng.integers(0, k * k, size=(20, 2)) if s != d]
    rows = [(i * 100, s, d, length) for i, (s, d) in enumerate(pairs)]
    ev = events(net, rows, len(rows) * 100 + 100, buffer=4, length=length,
                router="registered")
    for i, (s, d) in enumerate(pairs):
        hops = abs(s // k - d // k) + abs(s % k - d % k)
        tag = (s << 32) | sum(1 for s2, _ in pairs[:i] if s2 == s)
        heads = ev[(ev[:, 1] == K.EV_SWITCH) & (ev[:, 7] == tag) & (ev[:, 8] == 0)]
        hop_grants = sorted(int(t) for t, op in zip(heads[:, 0], heads[:, 5]) if op != 0)
        assert hop_grants == [i * 100 + 1 + h * (2 + delay) for h in range(hops)]
        assert crossing(ev, d, tag, 0, out=0) == i * 100 + hops * (2 + delay) + 2
        assert crossing(ev, d, tag, length - 1, out=0) - i * 100 == \
            2 * (hops + 1) + hops * delay + length - 1


@pytest.mark.parametrize("delay", [1, 3])
def test_registered_credit_in_t_puts_the_waiting_head_on_the_output_in_t_plus_3(delay):
    """Buffer = packet = 4 flits, one VC: the second packet waits for the first's last credit,
    its tail's, which router 1 sends back (high in s + 1, s its grant) over the link: it
    arrives at router 0 in t = s + delay. The waiting head forms its request in t, is granted
    in t + 1 and written into router 1 in t + 2 + delay (on the output in t + 3), where it is
    granted in t + 3 + delay and ejected, crossing, in t + 4 + delay."""
    net = mesh(2, vcs=1, delay=delay)
    rows = [(0, 0, 1, 4), (0, 0, 1, 4)]
    ev = events(net, rows, 80, buffer=4, length=4, router="registered")
    s = crossing(ev, 1, 0, 3, out=0) - 1           # the ejection is logged as it crosses
    t = s + delay
    b = (0 << 32) | 1
    assert crossing(ev, 0, b, 0) == t + 1
    assert crossing(ev, 1, b, 0, out=0) == t + 4 + delay


def test_registered_output_vc_idles_two_cycles_between_packets():
    """Two packets 0 -> 1 in one VC, created together: the first's tail is granted in s and
    crosses in s + 1, which frees the output VC from s + 2; the second head, behind it,
    requests in s + 2 and is granted in s + 3, crossing in s + 4: the output VC carries
    nothing in s + 2 and s + 3 (vct: granted in s + 1, pipelined: in s + 2)."""
    net = mesh(2, vcs=1)
    rows = [(0, 0, 1, 4), (0, 0, 1, 4)]
    a, b = 0 << 32, (0 << 32) | 1
    ev = events(net, rows, 60, buffer=8, length=4, router="registered")
    assert crossing(ev, 0, b, 0) - crossing(ev, 0, a, 3) == 3
    # at router 1 (ejection needs no VC) each packet's flits leave one a cycle, the gap kept
    at1 = [crossing(ev, 1, tag, s) for tag in (a, b) for s in range(4)]
    assert at1[:4] == list(range(at1[0], at1[0] + 4))
    assert at1[4:] == list(range(at1[4], at1[4] + 4)) and at1[4] - at1[3] == 3


def test_registered_sole_requester_is_granted_in_its_vc_allocation_cycle_two_contend():
    """A column of three chips, one VC. Packet A from chip 0 to chip 2 is written into router
    1 (input port 4, -y) in cycle 3; packet B from chip 1 to chip 2 is created there in cycle
    3 too: both request output 3 (+y) VC 0 for cycle 4. Alone, B is VC-allocated and granted
    the switch in cycle 4 (its speculation holds: the only requester of a free output VC).
    Together, VC allocation grants B (round robin from requester 0) but the switch grant of
    cycle 4, B's too (round robin from input 0), is void: neither was sure. Every grant moves
    the pointers, and A, whose request was formed from the start of cycle 4 (the VC free),
    requests again and wins output 3's round robin in cycle 5 (void: it holds no VC), so B
    is granted in cycle 6; A waits for B's tail (granted 9, crossing 10, the VC free from
    11, A granted 12)."""
    net = mesh(3, vcs=1)
    a, b = 0 << 32, 1 << 32
    alone = events(net, [(3, 1, 2, 4)], 40, buffer=8, length=4, router="registered")
    assert crossing(alone, 1, b, 0) == 4
    for allocator in ("separable", "wavefront"):
        ev = events(net, [(0, 0, 2, 4), (3, 1, 2, 4)], 60, buffer=8, length=4,
                    router="registered", allocator=allocator)
        assert crossing(ev, 0, a, 0) == 1
        if allocator == "separable":
            assert crossing(ev, 1, b, 0) == 6
            assert crossing(ev, 1, b, 3) == 9 and crossing(ev, 1, a, 0) == 12
        else:
            # the wave front: in 4 one of the two speculative grants, void; in 5 B (now
            # holding the VC) and A (speculating again) contend and the diagonal picks one;
            # in 6 A has no request (formed from 5's start, the VC held) and B is alone
            assert crossing(ev, 1, b, 0) in (5, 6)
