"""The de-interleaver controller RTL built as a tree (P = 4, rtl/optics/deinterleaver.py
``form="tree"``) and with the front interleaver (``"chain_uniform"``, P = 3, w = 60) against
the model's controller, cycle for cycle, on the uniform splits the chain cannot give. (The
cocotb bench co-simulates "chain_uniform" at P = 3 and the chain at P = 4:
cosim/test_deinterleaver.py.)"""

import pytest
from amaranth.hdl import Value

from aifabric.cosim.codec import dix_command
from aifabric.cosim.pysim import run_sync
from aifabric.models.flexsipac.transceiver import Deinterleaver, DIXCommand
from aifabric.rtl.optics.deinterleaver import DeinterleaverController


def _run(form, splits, cycles=12, ports=4, w=64, modes=()):
    dut = DeinterleaverController(ports=ports, wavelengths=w, timer_bits=4, settle=2,
                                  form=form)
    model = Deinterleaver(ports=ports, wavelengths=w, timer_bits=4, settle=2, form=form)
    words = [dix_command(1, wavelengths=w, split=s) for s in splits] + \
        [dix_command(2, wavelengths=w, modes=m) for m in modes]
    cmds = [DIXCommand(1, split=s) for s in splits] + [DIXCommand(2, modes=m) for m in modes]
    c = w.bit_length()
    trace = []

    async def bench(ctx):
        queue = list(zip(words, cmds))
        # cmd.ready is a register: low in the first cycle out of reset (the block's page), a
        # cycle the model's controller does not have; the run starts after it
        await ctx.delay(0)
        assert ctx.get(dut.cmd.ready) == 0
        await ctx.tick()
        for _ in range(cycles):
            ctx.set(dut.cmd.valid, int(bool(queue)))
            if queue:
                ctx.set(Value.cast(dut.cmd.payload), queue[0][0])
            await ctx.delay(0)
            split = ctx.get(dut.split)
            got = {"modes": ctx.get(dut.modes), "error": ctx.get(dut.error),
                   "split": [(split >> (p * c)) & ((1 << c) - 1) for p in range(ports)],
                   "ready": ctx.get(dut.cmd.ready), "mzi": ctx.get(dut.mzi)}
            want = model.outputs()
            assert got["split"] == want["split"] and got["error"] == want["error"]
            assert got["modes"] == sum(m << (2 * k) for k, m in enumerate(want["modes"]))
            assert bool(got["ready"]) == want["ready"]
            assert got["mzi"] == sum(b << i for i, b in enumerate(want["mzi"]))
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


def test_front_interleaver_applies_the_static_split():
    # P = 3, w = 60: no halving gives (20, 20, 20); the front interleaver (unit 0 in mode 3,
    # both MZIs set) does, and the cascade's splits stay available after it
    tr = _run("chain_uniform", [(20, 20, 20), (30, 15, 15)], ports=3, w=60)
    assert tr[1]["split"] == [20, 20, 20] and tr[1]["modes"] & 0b11 == 3
    assert tr[1]["mzi"] & 0b11 == 0b11
    assert tr[-1]["split"] == [30, 15, 15] and tr[-1]["error"] == 0
    # mode 3 is the interleaver only at unit 0: at unit 1 it is a MODE error
    tr = _run("chain_uniform", [], ports=3, w=60, modes=[(3, 2), (0, 3)])
    assert tr[1]["split"] == [20, 20, 20] and tr[-1]["error"] == 0b100


def test_chain_without_the_interleaver_refuses_the_static_split():
    tr = _run("chain", [(20, 20, 20)], ports=3, w=60, modes=[(3, 0)])
    assert tr[-1]["error"] == 0b110 and tr[-1]["split"] == [0, 0, 60]


def test_bad_form():
    with pytest.raises(ValueError, match="form must be"):
        DeinterleaverController(ports=4, form="ring")


def test_the_uniform_setting_sends_the_static_sipacs_wavelengths():
    # the static SiPAC's fixed 1 x L interleaver and Flex-SiPAC's front interleaver send
    # the same wavelengths to each port: Flex-SiPAC can be exactly the static fabric
    from aifabric.models.flexsipac.fabrics import static_sets
    from aifabric.models.flexsipac.transceiver import port_sets, setting_for
    modes = setting_for((20, 20, 20), 60, "chain_uniform")
    assert modes is not None and setting_for((20, 20, 20), 60, "chain") is None
    assert port_sets(modes, 60, "chain_uniform") == static_sets(3, 60)
