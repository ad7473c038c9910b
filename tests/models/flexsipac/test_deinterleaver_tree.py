"""The de-interleaver controller RTL built as a tree (P = 4, rtl/optics/deinterleaver.py
``form="tree"``) against the model's controller, cycle for cycle, on the uniform split the
chain cannot give. (The chain is co-simulated under cocotb: cosim/test_deinterleaver.py.)"""

import pytest

from aifabric.cosim.codec import dix_command
from aifabric.cosim.pysim import run_sync
from aifabric.models.flexsipac.transceiver import Deinterleaver, DIXCommand
from aifabric.rtl.optics.deinterleaver import DeinterleaverController


def _run(form, splits, cycles=12):
    dut = DeinterleaverController(ports=4, wavelengths=64, timer_bits=4, settle=2, form=form)
    model = Deinterleaver(ports=4, wavelengths=64, timer_bits=4, settle=2, form=form)
    words = [dix_command(1, wavelengths=64, split=s) for s in splits]
    cmds = [DIXCommand(1, split=s) for s in splits]
    c = (64).bit_length()
    trace = []

    async def bench(ctx):
        queue = list(zip(words, cmds))
        for _ in range(cycles):
            ctx.set(dut.cmd.valid, int(bool(queue)))
            if queue:
                ctx.set(dut.cmd.payload, queue[0][0])
            await ctx.delay(0)
            split = ctx.get(dut.split)
            got = {"modes": ctx.get(dut.modes), "error": ctx.get(dut.error),
                   "split": [(split >> (p * c)) & ((1 << c) - 1) for p in range(4)],
                   "ready": ctx.get(dut.cmd.ready)}
            want = model.outputs()
            assert got["split"] == want["split"] and got["error"] == want["error"]
            assert got["modes"] == sum(m << (2 * k) for k, m in enumerate(want["modes"]))
            assert bool(got["ready"]) == want["ready"]
            trace.append(got)
            taken = queue and got["ready"]
            model.edge(queue[0][1] if taken else None)
            if taken:
                queue.pop(0)
            await ctx.tick()

    run_sync(bench, dut=dut)
    return trace


def test_tree_applies_the_uniform_split():
    tr = _run("tree", [(16, 16, 16, 16), (32, 0, 16, 16)])
    assert tr[1]["split"] == [16, 16, 16, 16] and tr[1]["modes"] == 0b10_10_10
    assert tr[-1]["error"] == 0


def test_chain_refuses_it():
    tr = _run("chain", [(16, 16, 16, 16)])
    assert tr[-1]["error"] == 0b10 and tr[-1]["split"] == [0, 0, 0, 64]


def test_bad_form():
    with pytest.raises(ValueError, match="form must be"):
        DeinterleaverController(ports=4, form="ring")
