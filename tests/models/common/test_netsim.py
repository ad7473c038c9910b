"""The cycle-level network simulator: the compiled kernel equals the reference step event for
event; the invariant checks and the deadlock watchdog fire on broken runs; textbook results
(zero-load latency, bisection-limited saturation); traffic; the core imports no system.
RailX's networks on this simulator are tested in tests/models/railx/test_netsim_railx.py."""

import dataclasses

import numpy as np
import pytest

from aifabric.models.common.netsim import (DeadlockError, InvariantError, NetworkError, Simulator,
                                  Traffic, TrafficError, load_trace, mesh, simulate, torus)
from aifabric.models.common.netsim import kernel as K
from aifabric.models.common.netsim.network import channel_load_bound, check_deadlock_free
from aifabric.models.common.netsim.reference import ReferenceNetwork
from aifabric.models.common.netsim.traffic import uniform, uniform_py


def reference_events(net, traffic, cycles, **kw):
    ref = ReferenceNetwork(net, traffic, **kw)
    for _ in range(cycles):
        ref.step()
    return np.array(sorted(ref.events), dtype=np.int64).reshape(-1, 9), ref


def kernel_events(net, traffic, cycles, **kw):
    sim = Simulator(net, traffic, check=True, log=400_000, **kw)
    sim.advance(cycles)
    return sim.events(), sim


CASES = [
    ("3x3 mesh, 2 VCs", lambda: mesh(3, vcs=2), "uniform", 0.6, 8, 3),
    ("4x4 mesh, 2-flit links", lambda: mesh(4, vcs=3, width=2, inject=2, delay=2), "uniform",
     1.6, 6, 4),
    ("4x4 torus, dateline", lambda: torus(4, vcs=4), "transpose", 0.5, 5, 2),
    ("4x4 mesh, hotspot", lambda: mesh(4, vcs=2), "hotspot", 0.5, 4, 4),
    # 5 ports x 14 VCs: the kernel's per-router VC bit sets span two 64-bit words
    ("3x3 mesh, 14 VCs", lambda: mesh(3, vcs=14), "uniform", 0.9, 3, 2),
    # the widest links: a VC returns up to 64 credits in one cycle (the credit ring's int8)
    ("2x2 mesh, 64-lane links", lambda: mesh(2, vcs=2, width=64, inject=64), "uniform", 48,
     128, 64),
]


@pytest.mark.parametrize("name,make,pattern,rate,buffer,length", CASES,
                         ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seed,allocator", [(1, "separable"), (7, "separable"),
                                            (3, "wavefront")])
def test_kernel_equals_reference_event_for_event(name, make, pattern, rate, buffer, length,
                                                 seed, allocator):
    net = make()
    tr = Traffic.make(pattern, net.coords, net.grid, hot=(5,), hot_frac=0.3, perm_seed=seed)
    kw = dict(rate=rate, buffer=buffer, length=length, seed=seed, allocator=allocator)
    a, sim = kernel_events(net, tr, 250, **kw)
    b, _ = reference_events(net, tr, 250, **kw)
    assert len(a) > 1000                                   # loaded, not idle
    assert (a[:, 1] == K.EV_SWITCH).sum() > 500
    assert a.shape == b.shape and (a == b).all()


def test_kernel_equals_reference_on_a_trace_of_mixed_lengths():
    net = mesh(4, vcs=2)
    rng = np.random.default_rng(3)
    rows = [(int(rng.integers(0, 120)), int(s), int((s + rng.integers(1, 16)) % 16),
             int(rng.integers(1, 7))) for s in rng.integers(0, 16, size=300)]
    tr = Traffic.make("trace", net.coords, net.grid, trace=rows)
    a, sim = kernel_events(net, tr, 600, buffer=8, length=4)
    b, ref = reference_events(net, tr, 600, buffer=8, length=4)
    assert a.shape == b.shape and (a == b).all()
    assert len(ref.ejected) == 300                         # every packet delivered
    assert sim.ctr[K.K_PKT_DONE] == 300


def packet_latencies(events):
    """tag -> (creation cycle from the trace, tail ejection cycle) from the event log."""
    ej = events[(events[:, 1] == K.EV_SWITCH) & (events[:, 5] == 0)]
    return {int(tag): int(t) for t, tag in zip(ej[:, 0], ej[:, 7])}


@pytest.mark.parametrize("width,delay,length", [(1, 1, 4), (2, 3, 5)])
def test_zero_load_latency_equals_the_hop_count_formula(width, delay, length):
    """Packets spaced far apart never meet: each takes 2 cycles per router, ``delay`` per
    link and ceil(L / width) - 1 to serialise, from creation to tail ejection."""
    k = 6
    net = mesh(k, vcs=2, width=width, delay=delay, inject=width)
    rng = np.random.default_rng(5)
    pairs = [(int(s), int(d)) for s, d in rng.integers(0, k * k, size=(40, 2)) if s != d]
    rows = [(i * 100, s, d, length) for i, (s, d) in enumerate(pairs)]
    tr = Traffic.make("trace", net.coords, net.grid, trace=rows)
    sim = Simulator(net, tr, buffer=8, length=length, check=True, log=100_000)
    sim.advance(len(rows) * 100 + 100)
    done = packet_latencies(sim.events())
    serialise = -(-length // width) - 1       # a VC sends up to `width` flits a cycle
    for i, (s, d) in enumerate(pairs):
        hops = abs(s // k - d // k) + abs(s % k - d % k)
        tag = (s << 32) | sum(1 for s2, _ in pairs[:i] if s2 == s)
        assert done[tag] - i * 100 == 2 * (hops + 1) + hops * delay + serialise, (s, d)


def test_wavefront_allocator_matches_more_than_one_iteration_of_separable():
    """The wave-front arbiter finds a maximal matching of ports, the separable allocator one
    iteration of round robin: on an 8x8 mesh at saturation the wavefront accepts at least as
    much."""
    net = mesh(8, vcs=4)
    kw = dict(warmup=1000, window=2000, drain=0, seed=4)
    sep = simulate(net, "uniform", 0.7, allocator="separable", **kw)
    wf = simulate(net, "uniform", 0.7, allocator="wavefront", **kw)
    assert wf.accepted >= 0.98 * sep.accepted and wf.accepted <= 0.5


def test_uniform_saturation_of_an_8x8_mesh_is_near_the_bisection_bound():
    net = mesh(8, vcs=4)
    assert net.max_throughput == pytest.approx(0.5)        # 4 * k / k^2 with k = 8
    low = simulate(net, "uniform", 0.1, warmup=500, window=1500, drain=3000, seed=2)
    assert low.accepted == pytest.approx(0.1, rel=0.08) and not low.saturated
    # measured 0.396 (0.395-0.404 over seeds 2-4): 81 % of the tables' channel-load bound
    # 0.492 (the bisection's 0.5 x 63/64 on the middle links); the rest is lost to
    # single-iteration separable allocation (head-of-line blocking at the inputs), which
    # the wave-front allocator and 2-8 VCs move by < 0.01
    assert channel_load_bound(net) == pytest.approx(0.4921875)
    sat = simulate(net, "uniform", 0.7, warmup=1000, window=2000, drain=0, seed=2)
    assert sat.accepted == pytest.approx(0.396, abs=0.02)
    # transpose concentrates DOR traffic on the links next to the diagonal: at half the
    # uniform bound it is already past saturation while uniform is stable
    tp = simulate(net, "transpose", 0.25, warmup=1000, window=2000, drain=3000, seed=2)
    un = simulate(net, "uniform", 0.25, warmup=1000, window=2000, drain=3000, seed=2)
    assert tp.saturated and tp.accepted < 0.9 * tp.offered
    assert not un.saturated and un.accepted == pytest.approx(un.offered, rel=0.05)


def test_offered_load_and_latency_percentiles_are_measured():
    res = simulate(mesh(4, vcs=2), "uniform", 0.3, warmup=300, window=3000, drain=3000)
    assert res.offered == pytest.approx(0.3, rel=0.06)
    assert res.delivered_packets == res.measured_packets > 500
    assert res.latency_p50 <= res.latency_p99 <= res.latency_max
    assert res.latency_p50 <= res.latency_mean * 1.5


def test_trace_measurement_counts_the_trace_flits():
    net = mesh(4, vcs=2)
    rng = np.random.default_rng(8)
    rows = [(int(t), int(s), int((s + rng.integers(1, 16)) % 16), 1)
            for t, s in rng.integers(0, 3000, size=(1000, 2)) % [3000, 16]]
    tr = Traffic.make("trace", net.coords, net.grid, trace=rows)
    sim = Simulator(net, tr, buffer=4, length=4)
    res = sim.measure(warmup=500, window=2000, drain=2000)
    in_window = sum(1 for t, *_ in rows if 500 <= t < 2500)
    assert res.measured_packets == res.delivered_packets == in_window
    assert not res.saturated
    assert res.offered == pytest.approx(in_window / (2000 * 16))
    assert res.accepted == pytest.approx(res.offered, rel=0.05)
    with pytest.raises(NetworkError, match="measure\\(\\) runs once per Simulator"):
        sim.measure(10, 10, 0)


def loaded(net=None, **kw):
    net = net or mesh(4, vcs=2)
    sim = Simulator(net, Traffic.make("uniform", net.coords, net.grid), rate=0.45, buffer=8,
                    check=True, **kw)
    sim.advance(300)
    return sim


def test_credit_check_fires_on_a_corrupted_credit_count():
    sim = loaded()
    st = sim.state
    # every output VC believes its downstream buffer is empty: the next returning credit
    # overflows the count
    st["credits"][sim.net.nbr >= 0] = sim.buffer
    with pytest.raises(InvariantError, match="credit count 9 .* outside 0..8"):
        sim.advance(200)


def test_conservation_check_fires_on_a_lost_flit():
    sim = loaded()
    st = sim.state
    r, p, v = (int(x[0]) for x in np.nonzero(st["b_cnt"][:, 1:, :] > 1))
    p += 1
    st["b_cnt"][r, p, v] -= 1                              # the buffer forgets its last flit
    st["occ"][r] -= 1
    with pytest.raises(InvariantError, match="flits not conserved"):
        sim.advance(50)


def test_contiguity_check_fires_on_reordered_flits():
    sim = loaded()
    st = sim.state
    for r, v in zip(*np.nonzero(st["b_cnt"][:, 0, :] >= 2)):   # local port: never ejects
        h = st["b_head"][r, 0, v]
        i, j = h, (h + 1) % sim.buffer
        f = st["buf"][r, 0, v]                             # flit: packet, seq (+ tail), ready
        if f[i, 0] == f[j, 0]:
            f[[i, j], 1] = f[[j, i], 1]
            break
    else:
        pytest.fail("no VC held two flits of one packet")
    with pytest.raises(InvariantError, match="out of order"):
        sim.advance(100)


def test_cyclic_routing_is_refused_and_forced_it_deadlocks_with_a_report():
    net = torus(4, vcs=1)                                  # no dateline with one VC
    cycle = check_deadlock_free(net, 1)
    assert cycle is not None and len(cycle) >= 4
    tr = Traffic.make("uniform", net.coords, net.grid)
    with pytest.raises(NetworkError, match="can deadlock .* pass force"):
        Simulator(net, tr, rate=0.9)
    sim = Simulator(net, tr, rate=0.9, buffer=4, force=True, watchdog=200)
    with pytest.raises(DeadlockError, match=r"deadlock at cycle \d+: no flit moved for 200 "
                                            r"cycles .* router \d+ input \d VC 0 waits for"):
        sim.advance(20_000)
    assert check_deadlock_free(torus(4, vcs=2), 2) is None
    assert check_deadlock_free(mesh(4, vcs=1), 1) is None


def test_channel_load_bound_of_dor_on_a_mesh():
    # uniform traffic on a k x k mesh under DOR: the middle links carry k^2/4 * k/2 ... per
    # direction; the bound equals the bisection bound for even k
    assert channel_load_bound(mesh(6, vcs=1)) == pytest.approx(4 * 6 / 36 * 35 / 36, rel=1e-9)


def test_compiled_uniform_equals_the_reference_definition():
    rng = np.random.default_rng(1)
    for seed, a, b, c in rng.integers(-2, 2**40, size=(200, 4)):
        assert uniform(int(seed), int(a), int(b), int(c)) == \
            uniform_py(int(seed), int(a), int(b), int(c))


def test_routes_missing_from_a_table_are_refused():
    net = mesh(4, vcs=2)
    net.route_port[5, 0, 10] = -1                       # chip 5 cannot reach chip 10
    with pytest.raises(NetworkError, match="chip 10 can reach router 5 on VC 0, where the "
                                           "routing table has no entry"):
        check_deadlock_free(net, 2)
    with pytest.raises(TrafficError, match="4 integers"):
        Traffic.make("trace", net.coords, net.grid, trace=[(1, 2, 3)] * 4)


def test_patterns():
    net = mesh(4)
    tp = Traffic.make("transpose", net.coords, net.grid)
    assert all(tp.perm[x * 4 + y] == y * 4 + x for x in range(4) for y in range(4))
    bc = Traffic.make("bitcomp", net.coords, net.grid)
    assert list(bc.perm) == [15 - i for i in range(16)]
    perm = Traffic.make("permutation", net.coords, net.grid, perm_seed=3).perm
    assert sorted(perm) == list(range(16))
    with pytest.raises(TrafficError, match="power-of-two"):
        Traffic.make("bitcomp", mesh(3).coords, (3, 3))
    with pytest.raises(TrafficError, match="unknown traffic 'zipf'"):
        Traffic.make("zipf", net.coords, net.grid)


def test_hotspot_sends_its_share_to_the_hot_chip():
    net = mesh(4, vcs=2)
    tr = Traffic.make("hotspot", net.coords, net.grid, hot=(6,), hot_frac=0.5)
    sim = Simulator(net, tr, rate=0.1, log=200_000)
    sim.advance(3000)
    ev = sim.events()
    ej = ev[(ev[:, 1] == K.EV_SWITCH) & (ev[:, 5] == 0) & (ev[:, 8] == 0)]
    to_hot = (ej[:, 2] == 6).mean()
    assert 0.45 < to_hot < 0.6                             # 50 % + 1/15 of the uniform rest


@pytest.mark.parametrize("text,message", [
    ("cycle,src,dst\n", "the first line must be the header"),
    ("cycle,src,dst,flits\n1,2,3\n", "t.csv:2: expected 4 integers"),
    ("cycle,src,dst,flits\n1,2,x,4\n", "t.csv:2: expected 4 integers"),
    ("cycle,src,dst,flits\n0,1,2,4\n5,99,2,4\n", r"t\.csv:3: .* src and dst in 0\.\.15"),
    ("cycle,src,dst,flits\n0,1,2,4\n5,3,3,4\n", r"t\.csv:3: \(5, 3, 3, 4\) .* src != dst"),
    ("cycle,src,dst,flits\n99999999999999999999,1,2,4\n", "t.csv:2: expected 4 integers"),
    (b"cycle,src,dst,flits\n\xff\xfe,1\n", "not a CSV text file"),
])
def test_malformed_traces_are_named(tmp_path, text, message):
    path = tmp_path / "t.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(TrafficError, match=message):
        load_trace(path, 16)


@pytest.mark.parametrize("kw,message", [
    (dict(buffer=3), "buffer 3 < 4 flits"),
    (dict(allocator="islip"), "unknown allocator 'islip'; registered: separable, wavefront"),
    (dict(seed=2 ** 70), "seed must be an integer in 0..2"),
    (dict(rate=1.5), r"rate must be in \(0, 1\]"),
    (dict(rate=0), r"rate must be in \(0, 1\]"),
])
def test_bad_parameters(kw, message):
    net = mesh(4)
    args = {"rate": 0.2, **kw}
    with pytest.raises(NetworkError, match=message):
        Simulator(net, Traffic.make("uniform", net.coords, net.grid), **args)


@pytest.mark.parametrize("pattern,width", [("uniform", 1), ("transpose", 1), ("hotspot", 2)])
def test_synthesized_trace_replays_the_pattern_run(pattern, width):
    """``synthesize`` lists the packets the simulator's own source creates: replayed as a
    trace they give the pattern run's events, cycle for cycle, up to the cycle it stops."""
    from aifabric.models.common.netsim.traffic import synthesize
    net = mesh(4, vcs=2, width=width, inject=width)
    tr = Traffic.make(pattern, net.coords, net.grid, hot=(5,), hot_frac=0.4)
    cycles = 300
    rows = synthesize(tr, 0.5 * width, 4, cycles, seed=9, width=width)
    assert len(rows) > 200 and rows[:, 0].max() < cycles
    a = Simulator(net, tr, rate=0.5 * width, seed=9, log=200_000)
    a.advance(cycles)
    b = Simulator(net, Traffic.make("trace", net.coords, net.grid, trace=rows), log=200_000)
    b.advance(cycles)
    ea, eb = a.events(), b.events()
    assert len(ea) > 1000 and ea.shape == eb.shape and (ea == eb).all()


def test_the_kernel_is_compiled_without_the_negative_index_fix_up(monkeypatch):
    import re

    import numba
    from numba.np import arrayobj

    def get(a, i):
        return a[i]

    inside, outside = numba.njit(get), numba.njit(get)
    a = np.arange(5)
    fix = arrayobj.fix_integer_index
    with K.nonnegative_indices():
        assert arrayobj.fix_integer_index is not fix
        with K.nonnegative_indices():                 # nested: the outer one restores
            pass
        assert arrayobj.fix_integer_index is not fix
        assert inside(a, 3) == 3
    assert arrayobj.fix_integer_index is fix
    assert outside(a, -1) == 4                    # compiled outside: -1 counts from the end
    wraps = re.compile(r"icmp slt i64 %arg\.i, 0")
    assert wraps.search(outside.inspect_llvm(outside.signatures[0]))
    assert not wraps.search(inside.inspect_llvm(inside.signatures[0]))
    with pytest.raises(ZeroDivisionError), K.nonnegative_indices():
        1 // 0
    assert arrayobj.fix_integer_index is fix      # restored when the block raises
    # compile_run compiles (or loads) the kernel inside the context, once per signature
    stand_in = numba.njit(get)
    monkeypatch.setattr(K, "run", stand_in)
    K.compile_run((a, 3))
    K.compile_run((a, 4))
    assert len(stand_in.overloads) == 1
    assert not wraps.search(stand_in.inspect_llvm(stand_in.signatures[0]))


def test_the_index_fix_up_is_replaced_for_one_thread_at_a_time():
    # two threads' contexts never overlap (numba's compiler lock), so numba's own fix-up
    # is back once both have closed, whatever the interleaving
    import threading

    from numba.np import arrayobj

    fix = arrayobj.fix_integer_index
    a_in, a_out, b_in = threading.Event(), threading.Event(), threading.Event()

    def a():
        with K.nonnegative_indices():
            a_in.set()
            a_out.wait(10)

    def b():
        a_in.wait(10)
        with K.nonnegative_indices():
            b_in.set()

    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start()
    tb.start()
    assert a_in.wait(10)
    assert not b_in.wait(0.3)                    # b waits while a's context is open
    a_out.set()
    ta.join(10)
    tb.join(10)
    assert b_in.is_set()
    assert arrayobj.fix_integer_index is fix


def test_the_simulator_compiles_the_kernel_through_compile_run(monkeypatch):
    calls = []
    real = K.compile_run
    monkeypatch.setattr(K, "compile_run",
                        lambda args, kern=None: calls.append(len(args)) or real(args, kern))
    net = mesh(2, vcs=2)
    sim = Simulator(net, Traffic.make("uniform", net.coords, net.grid), rate=0.1)
    sim.advance(5)
    sim.advance(5)
    assert calls == [2 + len(sim._args())]        # once per simulator, with run()'s arguments


def test_a_network_of_one_chip_is_refused():
    # its only destination would be none (-1), an index the kernel does not fix up
    net = mesh(2, vcs=2)
    one = dataclasses.replace(net, name="one chip", **{
        f: getattr(net, f)[:1] for f in ("nbr", "nbr_port", "width", "delay", "kind",
                                         "route_port", "route_vc_lo", "route_vc_hi",
                                         "coords")})
    with pytest.raises(NetworkError, match=r"^one chip: 1 chip; a packet needs a chip to go "
                                           r"to \(at least 2\)$"):
        Simulator(one, Traffic.make("uniform", one.coords, one.grid), rate=0.1)
