"""The slot switch's sub-components in Amaranth's simulator: the stack loader's checks against
the model's (random stacks, malformed ones included), the slot master under run-time period
changes, and the crossbar's delivery rule."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.cosim.codec import encode_step
from aifabric.cosim.pysim import run_sync
from aifabric.models.chronos.slot_switch import StackLoader as ModelLoader
from aifabric.rtl._util import not_elaborated
from aifabric.rtl.chronos.slot_switch import Crossbar, SlotMaster, SlotSwitch, StackLoader


@st.composite
def frames(draw):
    """(n, depth, frames): each frame a list of (raw dest list, hold); a dest of -1 is idle,
    any other value goes into the dest field as it is (so outputs >= n and repeats occur)."""
    n = draw(st.sampled_from([3, 4, 5]))
    field = max(1, (n - 1).bit_length())
    entry = st.tuples(st.lists(st.integers(-1, (1 << field) - 1), min_size=n, max_size=n),
                      st.integers(0, 3))
    return n, draw(st.integers(2, 4)), draw(st.lists(st.lists(entry, min_size=1, max_size=6),
                                                      min_size=1, max_size=4))


@settings(max_examples=30, deadline=None)
@given(frames())
def test_stack_loader_agrees_with_the_model(case):
    n, depth, stacks = case
    hb = 2
    dut = StackLoader(n=n, depth=depth, hold_bits=hb)
    model = ModelLoader(n, depth)

    async def bench(ctx):
        for stack in stacks:
            for k, (dest, hold) in enumerate(stack):
                last = k == len(stack) - 1
                raw = [(i, j) for i, j in enumerate(dest) if j >= 0]
                ctx.set(dut.schedule.payload.as_value(),
                        encode_step([-1] * n, hold, last, n, hb, raw_dest=raw))
                ctx.set(dut.schedule.valid, 1)
                await ctx.tick()
                model.beat(dest, hold, last)
                got = (ctx.get(dut.entries), ctx.get(dut.overflow), ctx.get(dut.stack_error))
                want = (len(model.stack), model.overflow, model.stack_error)
                assert got == want, f"after beat {k} of {stack}: RTL {got}, model {want}"
            ctx.set(dut.schedule.valid, 0)
            # the committed entries read back as loaded
            for a, (perm, hold) in enumerate(model.stack):
                ctx.set(dut.rd_addr, a)
                await ctx.tick()
                e = ctx.get(dut.rd_data)
                got = [int(e.dest[i]) if e.connected >> i & 1 else -1 for i in range(n)]
                assert (got, int(e.rest) + 1) == (perm, hold)    # stored as hold - 1

    run_sync(bench, dut=dut)


def test_loading_refused_while_enabled():
    dut = StackLoader(n=3, depth=4, hold_bits=2)

    async def bench(ctx):
        ctx.set(dut.enable, 1)
        ctx.set(dut.schedule.valid, 1)
        ctx.set(dut.schedule.payload.as_value(), encode_step([0, 1, 2], 1, True, 3, 2))
        for _ in range(3):
            await ctx.delay(0)
            assert not ctx.get(dut.schedule.ready)
            await ctx.tick()
        assert ctx.get(dut.entries) == 0
        ctx.set(dut.enable, 0)
        await ctx.tick()
        assert ctx.get(dut.entries) == 1

    run_sync(bench, dut=dut)


def test_slot_master_ends_a_slot_when_the_period_drops_below_its_phase():
    dut = SlotMaster()
    trace = []

    async def bench(ctx):
        ctx.set(dut.period, 20)
        ctx.set(dut.guard, 2)
        ctx.set(dut.stack_ready, 1)
        ctx.set(dut.enable, 1)
        for t in range(60):
            if t == 30:
                ctx.set(dut.period, 5)          # phase 8 here, 9 when the master acts on it
            await ctx.tick()
            trace.append((ctx.get(dut.slot), ctx.get(dut.phase), ctx.get(dut.sync)))

    run_sync(bench, dut=dut)
    # trace[t]: cycle t + 1. Enable applied in cycle 0 is acted on in cycle 1: slot 0 from
    # cycle 2; T = 5 applied in cycle 30 is acted on in cycle 31 (phase 9): slot 2 in 32.
    assert trace[0] == (0, 0, 0) and trace[1] == (0, 0, 1)
    assert trace[20] == (0, 19, 0) and trace[21] == (1, 0, 1)
    assert trace[29] == (1, 8, 0) and trace[30] == (1, 9, 0) and trace[31] == (2, 0, 1)
    assert max(p for _, p, _ in trace[31:]) == 4
    assert [s for s, p, _ in trace[31:] if p == 0] == list(range(2, 8))


@pytest.mark.parametrize("period,guard", [(8, 8), (8, 9), (1, 0), (0, 0)])
def test_slot_master_bad_configuration(period, guard):
    dut = SlotMaster()

    async def bench(ctx):
        ctx.set(dut.period, period)
        ctx.set(dut.guard, guard)
        ctx.set(dut.stack_ready, 1)
        ctx.set(dut.enable, 1)
        for _ in range(10):
            await ctx.tick()
            assert ctx.get(dut.config_error) and not ctx.get(dut.running)
            assert not ctx.get(dut.sync) and not ctx.get(dut.accept)

    run_sync(bench, dut=dut)


def test_crossbar_delivers_only_accepted_tagged_connected_words():
    n, d = 3, 8
    dut = Crossbar(n=n, d=d)

    async def bench(ctx):
        # route: 0 -> 2, 1 -> 0, 2 idle (output j's select holds its input's bit)
        ctx.set(dut.route.sel[2], 0b001)
        ctx.set(dut.route.sel[0], 0b010)
        ctx.set(dut.route.connected, 0b011)
        ctx.set(dut.tag, 1)
        cases = [  # accept, (valid, tag) per input, expected outputs, expected late
            (1, [(1, 1), (1, 1), (0, 0)], [0x11, None, 0x10], 0b000),
            (0, [(1, 1), (0, 0), (0, 0)], [None, None, None], 0b001),   # guard time
            (1, [(0, 0), (1, 2), (1, 1)], [None, None, None], 0b111),   # wrong tag, idle
        ]
        for accept, words, want, late in cases:
            ctx.set(dut.accept, accept)
            for i, (valid, tag) in enumerate(words):
                ctx.set(dut.rx[i].valid, valid)
                ctx.set(dut.rx[i].tag, tag)
                ctx.set(dut.rx[i].data, 0x10 + i)
            await ctx.tick()
            got = [int(ctx.get(dut.tx[j].data)) if ctx.get(dut.tx[j].valid) else None
                   for j in range(n)]
            assert got == want and ctx.get(dut.late) == late, (got, want, ctx.get(dut.late))
        ctx.set(dut.clear, 1)
        await ctx.tick()
        assert ctx.get(dut.late) == 0

    run_sync(bench, dut=dut)


@pytest.mark.parametrize("kw", [{"n": 1, "d": 8, "depth": 4, "hold_bits": 4},
                                {"n": 4, "d": 0, "depth": 4, "hold_bits": 4},
                                {"n": 4, "d": 8, "depth": 1, "hold_bits": 4},
                                {"n": 4, "d": 8, "depth": 4, "hold_bits": 33},
                                {"n": 4.0, "d": 8, "depth": 4, "hold_bits": 4}])
def test_bad_parameters(kw):
    with pytest.raises((TypeError, ValueError), match="Parameter '"):
        SlotSwitch(**kw)


def test_signature():
    dut = not_elaborated(SlotSwitch(n=3, d=8, depth=4, hold_bits=4))
    assert {"schedule", "stack_error", "entries", "overflow", "tx", "rx", "late", "sync",
            "period", "guard", "enable", "ping", "echo"} <= set(dut.signature.members)
