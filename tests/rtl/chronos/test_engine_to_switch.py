"""The BvN engine's ``steps`` stream wired straight into the slot switch's ``schedule`` input
(Amaranth simulator): the switch stores the engine's decomposition as its stack and plays it,
entry k for weight_k slots, the stack repeating; every word sent in a slot leaves on the output
that the model's decomposition names for that slot, and nowhere else."""

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring

from aifabric.cosim.codec import encode_row
from aifabric.cosim.pysim import run_sync
from aifabric.models.chronos.bvn import decompose
from aifabric.rtl.chronos.bvn import BvnEngine
from aifabric.rtl.chronos.slot_layout import TAG_BITS, word_layout
from aifabric.rtl.chronos.slot_switch import SlotSwitch

N, W, D = 4, 8, 8
PERIOD, GUARD = 6, 2


def pack_words(words):
    """rx payload: ``words[i]`` = data of input i, or None for no word; tags from the caller."""
    layout = word_layout(D)
    value = 0
    for i, w in enumerate(words):
        if w is not None:
            data, tag = w
            word = (1 << layout["valid"].offset) | (tag << layout["tag"].offset) \
                | (data << layout["data"].offset)
            value |= word << (i * layout.size)
    return value


def unpack_tx(value):
    """tx payload -> per output: data, or None when not valid."""
    size = D + 1
    out = []
    for j in range(N):
        word = value >> (j * size) & ((1 << size) - 1)
        out.append(word >> 1 if word & 1 else None)      # StructLayout: valid (bit 0), data
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_switch_plays_the_engines_schedule(seed):
    rng = np.random.default_rng(seed)
    matrix = rng.integers(1, 4, (N, N)) * (rng.random((N, N)) < 0.6)
    expect = decompose(matrix, "wavefront")
    slots = [list(p) for p, wt in expect for _ in range(int(wt))]   # slot -> permutation

    m = Module()
    m.submodules.engine = engine = BvnEngine(n=N, w=W)
    m.submodules.switch = switch = SlotSwitch(n=N, d=D, depth=64, hold_bits=W)
    wiring.connect(m, engine.steps, switch.schedule)
    seen = {"delivered": 0, "slots": set()}

    async def bench(ctx):
        ctx.set(switch.period, PERIOD)
        ctx.set(switch.guard, GUARD)
        for i in range(N):
            ctx.set(engine.load.valid, 1)
            ctx.set(engine.load.payload.as_value(), encode_row(matrix[i], i == N - 1))
            await ctx.tick().until(engine.load.ready)
        ctx.set(engine.load.valid, 0)
        for _ in range(10 * N * N):
            if ctx.get(engine.done):
                break
            await ctx.tick()
        # done means every step has been taken: the whole stack is in the switch.
        assert ctx.get(engine.done) and ctx.get(engine.error.as_value()) == 0
        assert ctx.get(switch.entries) == len(expect)
        assert not ctx.get(switch.overflow)

        ctx.set(switch.enable, 1)
        await ctx.tick()
        for _ in range(2 * len(slots) * PERIOD + 1):
            s, p = ctx.get(switch.slot), ctx.get(switch.phase)
            perm = slots[s % len(slots)]
            words = [((s * N + i) % 256, s % (1 << TAG_BITS))
                     if p >= GUARD and perm[i] >= 0 else None for i in range(N)]
            ctx.set(switch.rx.as_value(), pack_words(words))
            await ctx.tick()
            got = unpack_tx(ctx.get(switch.tx.as_value()))
            want = [None] * N
            for i, w in enumerate(words):
                if w is not None:
                    want[perm[i]] = w[0]
            assert got == want, f"slot {s} phase {p}: {got} != {want} (perm {perm})"
            assert ctx.get(switch.late) == 0, f"slot {s} phase {p}: late words"
            seen["delivered"] += sum(x is not None for x in got)
            seen["slots"].add(s)

    run_sync(bench, top=m)
    # Two rounds of the whole stack were played, every slot carried words.
    assert len(seen["slots"]) >= 2 * len(slots)
    assert seen["delivered"] >= 2 * len(slots) * (PERIOD - GUARD)
