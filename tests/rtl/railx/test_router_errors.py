"""The router's protocol error (bit 3) for each of its causes, one directed case each, in
Amaranth's simulator: an extra credit on a mesh port (credits beyond ``depth``), a flit on a
VC >= V, a credit whose ``credit_vc`` >= V; and the quiet cases that must not set it. The
co-simulation's random stimulus only ever provokes the full-VC cause."""

import pytest

from aifabric.cosim.pysim import run_sync
from aifabric.rtl.railx.router import ERROR_BITS, Router

# V = 3 on 2-bit VC fields: VC number 3 is encodable and out of range
PARAMS = dict(ports=5, vcs=3, depth=4, data=16, dst_width=4, packet=4)
MESH = 2                                   # a mesh port (0 is the local port)


def drive(case):
    """Reset, hold the case's inputs high for one cycle, then return (error after that
    cycle, error three cycles later, error after ``clear``)."""
    dut = Router(**PARAMS)
    seen = {}

    async def bench(ctx):
        await ctx.tick().repeat(2)
        assert ctx.get(dut.error) == 0
        o, i = dut.o[MESH], dut.i[MESH]
        if case == "extra_credit":            # no flit was sent: the VC already has depth
            ctx.set(o.credit, 1)
            ctx.set(o.credit_vc, 1)
        elif case == "flit_vc_out_of_range":
            ctx.set(i.valid, 1)
            ctx.set(i.flit.vc, 3)             # a body flit: no head checks apply
        elif case == "credit_vc_out_of_range":
            ctx.set(o.credit, 1)
            ctx.set(o.credit_vc, 3)
        elif case == "credit_vc_without_credit":   # credit_vc is only read with credit
            ctx.set(o.credit_vc, 3)
        elif case == "flit_vc_without_valid":      # a flit's VC is only read with valid
            ctx.set(i.flit.vc, 3)
        await ctx.tick()
        for s in (o.credit, o.credit_vc, i.valid, i.flit.vc):
            ctx.set(s, 0)
        seen["now"] = ctx.get(dut.error)
        await ctx.tick().repeat(3)
        seen["later"] = ctx.get(dut.error)
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        await ctx.tick()
        seen["cleared"] = ctx.get(dut.error)

    run_sync(bench, dut=dut)
    return seen


PROTOCOL = 1 << ERROR_BITS["protocol"]


@pytest.mark.parametrize("case", ["flit_vc_out_of_range", "credit_vc_out_of_range"])
def test_each_cause_sets_the_protocol_bit_alone_and_it_sticks_until_clear(case):
    seen = drive(case)
    assert seen == {"now": PROTOCOL, "later": PROTOCOL, "cleared": 0}


def test_an_extra_credit_sets_the_protocol_bit_and_is_dropped():
    """The extra credit is flagged and dropped (the count stays at depth: a router that kept
    it could send depth + 1 flits into a buffer of depth), so the flag sticks until
    ``clear`` and does not come back."""
    assert drive("extra_credit") == {"now": PROTOCOL, "later": PROTOCOL, "cleared": 0}


@pytest.mark.parametrize("case", ["credit_vc_without_credit", "flit_vc_without_valid"])
def test_out_of_range_fields_without_their_strobe_are_not_errors(case):
    assert drive(case) == {"now": 0, "later": 0, "cleared": 0}
