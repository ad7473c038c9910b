"""The router component: parameter checks, its interface, and its round-robin helper in
Amaranth's simulator against the simulator's rule (the co-simulation checks the rest)."""

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from aifabric.cosim.pysim import run_sync
from aifabric.rtl._util import not_elaborated
from aifabric.rtl.railx.router import Router, _after, round_robin

GOOD = dict(ports=5, vcs=2, depth=16, data=64, dst_width=11, packet=8)


@pytest.mark.parametrize("change,error,match", [
    ({"ports": 4}, ValueError, r"Parameter 'ports' must be in 5\.\.16, not 4"),
    ({"vcs": 0}, ValueError, r"Parameter 'vcs' must be in 1\.\.8, not 0"),
    ({"vcs": 2.0}, TypeError, r"Parameter 'vcs' must be an int"),
    ({"depth": 4, "packet": 8}, ValueError, r"depth 4 < packet 8"),
    ({"data": 12}, ValueError, r"'data' must hold a head's destination \(11 bits\) and "
                               r"length \(4 bits\): 12 < 15"),
    ({"dst_width": 17}, ValueError, r"'dst_width' must be in 1\.\.16"),
    ({"allocator": "islip"}, ValueError, r"'allocator' must be one of separable, wavefront"),
])
def test_bad_parameters_are_refused(change, error, match):
    with pytest.raises(error, match=match):
        Router(**{**GOOD, **change})


def test_ports_are_arrays_of_credit_links():
    r = not_elaborated(Router(**{**GOOD, "ports": 7, "vcs": 3}))
    assert len(r.i) == len(r.o) == 7
    members = dict(r.signature.members["i"].signature.members)
    assert set(members) == {"valid", "flit", "route", "credit", "credit_vc"}
    assert members["credit"].flow == wiring.Out        # In(link): the credit goes back out
    assert members["route"].flow == wiring.In           # the route comes with the flit
    assert r.o[0].flit.vc.shape().width == 2
    assert (r.i[0].route.port.shape().width, r.i[0].route.vcs.shape().width) == (3, 3)


def test_round_robin_picks_the_first_requester_after_the_last_grant():
    """The helper in hardware against ``min(x - start mod n)``, the simulator's rule, with the
    start kept as a mask updated from each grant."""
    n = 6
    m = Module()
    req = Signal(n)
    mask = Signal(n, init=(1 << n) - 1)
    g = round_robin(m, req, mask, "rr")
    with m.If(req.any()):
        m.d.sync += mask.eq(_after(m, g, "rr_n"))
    rng = random.Random(4)
    seen = []

    async def bench(ctx):
        start = 0
        for _ in range(300):
            r = rng.getrandbits(n)
            ctx.set(req, r)
            got = ctx.get(g)
            who = [x for x in range(n) if r >> x & 1]
            if who:
                win = min(who, key=lambda x: (x - start) % n)
                assert got == 1 << win, (r, start, got)
                start = (win + 1) % n
                seen.append(win)
            else:
                assert got == 0
            await ctx.tick()

    run_sync(bench, top=m)
    assert len(set(seen)) == n


@pytest.mark.parametrize("out", [0, 2])
def test_one_vc_router_delivers_to_the_local_and_a_mesh_port(out):
    """V = 1, where a VC number is one bit of nothing to choose: a one-flit packet entering
    on port 1 with its route to port ``out`` leaves there (0: ejection, 2: a mesh port)
    three cycles after it is written, the documented zero-load timing, and on the mesh port
    with its route at the next router, read from the table loaded for output 2 (port 3 at
    row 0, one bit of row address that is always 0). The co-simulated sets all have V >= 2,
    where a wrong constant in the ejection port's one-hot output VC lands in a bit nobody
    reads; at V = 1 it is cut off and the packet would never leave."""
    dut = Router(ports=5, vcs=1, depth=2, data=16, dst_width=2, packet=2)
    dst = 1

    async def bench(ctx):
        await ctx.tick().repeat(2)
        e = dut.table.payload
        ctx.set(dut.table.valid, 1)
        for field, value in (("row", 0), ("dst", dst), ("port", 3), ("vc_lo", 0),
                             ("vc_hi", 0), ("outs", 0b0010)):
            ctx.set(getattr(e, field), value)
        await ctx.tick()
        ctx.set(dut.table.valid, 0)
        f, r = dut.i[1].flit, dut.i[1].route
        ctx.set(dut.i[1].valid, 1)
        ctx.set(f.head, 1)
        ctx.set(f.tail, 1)
        ctx.set(f.data, dst | 1 << 2)          # destination, then length 1
        ctx.set(r.valid, 1)
        ctx.set(r.port, out)
        ctx.set(r.vcs, 1 if out else 0)
        await ctx.tick()                       # the edge that ends cycle t: written
        ctx.set(dut.i[1].valid, 0)
        seen = []
        for t in range(2, 8):                  # the cycle after each further edge
            await ctx.tick()
            if ctx.get(dut.o[out].valid):
                seen.append(t)
                if out:
                    route = dut.o[out].route
                    assert (ctx.get(route.valid), ctx.get(route.port), ctx.get(route.vcs)) \
                        == (1, 3, 1), "not the route of the table downstream"
        assert seen == [3], f"on output {out} in cycles t + {seen}, not t + 3"
        assert ctx.get(dut.error) == 0

    run_sync(bench, dut=dut)


def _send_to_port_2(ctx, link, head, tail, length):
    """Drive a flit on input ``link`` (V = 1), routed to output 2 on its one VC; a head's
    data: destination 1 and ``length``."""
    for sig, value in ((link.valid, 1), (link.flit.head, head), (link.flit.tail, tail),
                       (link.flit.data, 1 | length << 2), (link.route.valid, 1),
                       (link.route.port, 2), (link.route.vcs, 1)):
        ctx.set(sig, value)


def test_a_credit_counts_in_the_cycle_it_arrives():
    """The contract's credit timing: a credit arriving on an output in cycle t counts for
    the VC requests formed in cycle t. Output 2 (depth 2, V = 1) is left without credits by
    a two-flit packet; a one-flit packet behind it waits, and the credit returned in cycle
    t has it granted in t + 1 and on the output in t + 3 (t + 4 if the credit were
    registered before it counts)."""
    dut = Router(ports=5, vcs=1, depth=2, data=16, dst_width=2, packet=2)

    async def bench(ctx):
        await ctx.tick().repeat(2)
        i, o, out = dut.i[1], dut.o[2], []
        # the two-flit packet, gone before the third flit comes (the input VC holds two)
        for head, tail, length, gap in ((1, 0, 2, 0), (0, 1, 0, 4), (1, 1, 1, 0)):
            _send_to_port_2(ctx, i, head, tail, length)
            await ctx.tick()
            out.append(ctx.get(o.valid))
            ctx.set(i.valid, 0)
            for _ in range(gap):
                await ctx.tick()
                out.append(ctx.get(o.valid))
        ctx.set(i.valid, 0)
        for _ in range(6):
            await ctx.tick()
            out.append(ctx.get(o.valid))
        assert sum(out) == 2, f"{sum(out)} flits left on two credits"
        ctx.set(o.credit, 1)
        await ctx.tick()
        ctx.set(o.credit, 0)
        late = []
        for _ in range(4):
            late.append(bool(ctx.get(o.valid)))
            await ctx.tick()
        assert late == [False, False, True, False], \
            f"the waiting packet left {late} after the credit came back, not in t + 3"
        assert ctx.get(dut.error) == 0

    run_sync(bench, dut=dut)


@pytest.mark.parametrize("length", [2, 3])
def test_cut_through_needs_the_whole_packet_counted_after_a_send(length):
    """Virtual cut-through at its boundary, right after flits left: output 2 (depth 4,
    V = 1) keeps 2 credits after a two-flit packet crossed. A packet of 2 flits behind it
    fits exactly and leaves without a credit back; one of 3 waits (its head never leaves)
    until one credit comes back in some cycle t, which counts in that cycle's VC requests:
    the head is granted the switch in t + 1 and on the output in t + 3."""
    dut = Router(ports=5, vcs=1, depth=4, data=16, dst_width=2, packet=4)

    async def bench(ctx):
        await ctx.tick().repeat(2)
        i, o = dut.i[1], dut.o[2]
        heads = []
        flits = [(1, 0, 2), (0, 1, 0)] + [(int(s == 0), int(s == length - 1), length)
                                          for s in range(length)]
        for head, tail, n in flits:
            _send_to_port_2(ctx, i, head, tail, n)
            await ctx.tick()
            heads.append(ctx.get(o.valid) and ctx.get(o.flit.head))
        ctx.set(i.valid, 0)
        for _ in range(10):
            await ctx.tick()
            heads.append(ctx.get(o.valid) and ctx.get(o.flit.head))
        if length == 2:
            assert sum(heads) == 2, "the packet that fits the 2 credits left did not leave"
            return
        assert sum(heads) == 1, "a head left with 2 credits for a packet of 3"
        ctx.set(o.credit, 1)
        await ctx.tick()
        ctx.set(o.credit, 0)
        late = []
        for _ in range(4):
            late.append(bool(ctx.get(o.valid) and ctx.get(o.flit.head)))
            await ctx.tick()
        assert late == [False, False, True, False], \
            f"the head left {late} after the credit came back, not in t + 3"
        assert ctx.get(dut.error) == 0

    run_sync(bench, dut=dut)
