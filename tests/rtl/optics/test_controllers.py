"""The optics controllers in Amaranth's simulator with hand-worked timelines (commands
encoded from the documented layouts by ``cosim.codec``), and their parameter checks."""

import pytest
from amaranth.hdl import Value

from aifabric.cosim.codec import dix_command, field, ocs_command, wss_command
from aifabric.cosim.pysim import run_sync
from aifabric.rtl.catalog import get_block
from aifabric.rtl.optics.deinterleaver import DeinterleaverController
from aifabric.rtl.optics.ocstrx import OCSTrxController
from aifabric.rtl.optics.wss import WSSController


def drive(dut, words, cycles, probe, inputs=None):
    """Offer ``words`` on ``dut.cmd`` back to back; record ``probe(ctx)`` every cycle."""
    trace = []

    async def bench(ctx):
        # the first cycle out of reset: ready (registered) is low; the timelines count from
        # the cycle after it
        assert not ctx.get(dut.cmd.ready)
        await ctx.tick()
        queue = list(words)
        for t in range(cycles):
            for sig, value in (inputs(t) if inputs else ()):
                ctx.set(sig, value)
            ctx.set(dut.cmd.valid, int(bool(queue)))
            if queue:
                ctx.set(Value.cast(dut.cmd.payload), queue[0])
            await ctx.delay(0)
            trace.append(probe(ctx))
            if queue and ctx.get(dut.cmd.ready):
                queue.pop(0)
            await ctx.tick()

    run_sync(bench, dut=dut)
    return trace


def test_ocstrx_link_up_after_settle_and_debounce():
    dut = OCSTrxController(lanes=4, groups=1, code_bits=4, timer_bits=8, settle=4)
    words = [ocs_command(4, lanes=4, groups=1, which=1, value=3),      # debounce 3
             ocs_command(1, lanes=4, groups=1, group=0, path=2, backup=0)]
    tr = drive(dut, words, 14, lambda ctx: (ctx.get(dut.link), ctx.get(dut.mzi) & 3),
               inputs=lambda t: [(dut.pd, 0b010)])                          # path 2 lit
    links = [x[0] for x in tr]
    # timing taken at 0, path at 1: SETTLING 2..5, CHECKING 6..8, UP from 9 = 1 + 4 + 3 + 1
    assert links == [0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3]
    assert tr[2][1] == 0b11                       # A = 1 (out), B = 1 (path 2)


def test_ocstrx_rejects_states_that_do_not_realise_the_permutation():
    dut = OCSTrxController(lanes=4, groups=1, code_bits=4, timer_bits=8, settle=2)
    bad = ocs_command(2, lanes=4, groups=1, perm=(1, 0, 2, 3), states=(0,) * 6)
    good = ocs_command(2, lanes=4, groups=1, perm=(1, 0, 2, 3), states=(1, 0, 0, 0, 0, 0))
    tr = drive(dut, [bad, good], 6, lambda ctx: (ctx.get(dut.error), ctx.get(dut.perm)))
    assert tr[1][0] == 1 << 4 and tr[1][1] == 0b11_10_01_00     # STATES; perm unchanged
    assert tr[2][1] == 0b11_10_00_01                             # lanes 0 and 1 swapped


def test_wss_names_the_first_conflict():
    dut = WSSController(ports=3, wavelengths=2, timer_bits=4, settle=1)
    words = [wss_command(1, ports=3, wavelengths=2, lam=0, cells=[1, 2, 0]),
             wss_command(1, ports=3, wavelengths=2, lam=1, cells=[2, 2, None]),
             wss_command(2, ports=3, wavelengths=2)]
    tr = drive(dut, words, 10, lambda ctx: (ctx.get(dut.state), ctx.get(dut.error),
                                            ctx.get(dut.err_port), ctx.get(dut.err_lambda),
                                            ctx.get(Value.cast(dut.drive))))
    # commit at 2; scan from 3 (a three-stage pipeline): wavelength 0 checked at 6 (ok), 1 at
    # 7 (output 2 twice: DUPLICATE); idle at 8
    assert [x[0] for x in tr[:9]] == [0, 0, 0, 1, 1, 1, 1, 1, 0]
    assert tr[8][1:4] == (1 << 3, 2, 1)
    assert all(x[4] == 0 for x in tr)


def test_wss_applies_one_wavelength_per_cycle():
    dut = WSSController(ports=2, wavelengths=2, timer_bits=4, settle=2)
    words = [wss_command(1, ports=2, wavelengths=2, lam=0, cells=[1, None]),
             wss_command(1, ports=2, wavelengths=2, lam=1, cells=[None, 0]),
             wss_command(2, ports=2, wavelengths=2)]
    tr = drive(dut, words, 16, lambda ctx: (ctx.get(Value.cast(dut.drive)), ctx.get(dut.configs)))
    cell = lambda d, lam, i: field(d, lam * 2 + i, 2)  # noqa: E731
    # commit at 2, scan 3-7, apply 8-11 (wavelength 0 driven from 11, 1 from 12), settle
    # 12-13, counted at 14
    assert cell(tr[10][0], 0, 0) == 0 and cell(tr[11][0], 0, 0) == 0b11
    assert cell(tr[11][0], 1, 1) == 0 and cell(tr[12][0], 1, 1) == 0b01
    assert tr[13][1] == 0 and tr[14][1] == 1


def test_deinterleaver_split_to_modes():
    dut = DeinterleaverController(ports=3, wavelengths=8, timer_bits=4, settle=2)
    words = [dix_command(1, wavelengths=8, split=(4, 2, 2)),
             dix_command(1, wavelengths=8, split=(2, 2, 4))]
    tr = drive(dut, words, 6, lambda ctx: (ctx.get(dut.modes), ctx.get(dut.mzi),
                                           ctx.get(dut.state), ctx.get(dut.error)))
    assert tr[1][:3] == (0b10_10, 0b01_01, 1)          # EVEN, EVEN; in = 1, sel = 0
    assert tr[4][3] == 0b10 and tr[4][0] == 0b10_10   # (2, 2, 4) is no cascade split


@pytest.mark.parametrize("block,params,match", [
    ("ocstrx", {"lanes": 6}, "power of two"), ("ocstrx", {"lanes": 32}, "lanes"),
    ("ocstrx", {"settle": 0}, "settle"), ("ocstrx", {"groups": 9}, "groups"),
    ("wss", {"ports": 1}, "ports"), ("wss", {"wavelengths": 0}, "wavelengths"),
    ("wss", {"settle": 0}, "settle"), ("deinterleaver", {"ports": 5}, "ports"),
    ("deinterleaver", {"timer_bits": 3, "settle": 8}, "settle")])
def test_parameters_out_of_range(block, params, match):
    with pytest.raises(ValueError, match=match):
        get_block(block).validate(params)


def test_the_models_codes_are_the_rtls():
    """The golden models keep their own command codes, error bits, states and modes (they
    never import the RTL); each must name what the RTL's enumeration names, code for code."""
    from aifabric.models.flexsipac import transceiver as dix_model
    from aifabric.models.flexsipac import wss as wss_model
    from aifabric.models.infinitehbd import ocstrx as ocs_model
    from aifabric.rtl.optics import deinterleaver, ocstrx, wss

    def codes(enum):
        return {m.name: int(m) for m in enum}

    for model, rtl in ((ocs_model, ocstrx), (wss_model, wss), (dix_model, deinterleaver)):
        assert codes(model.Op) == codes(rtl.Op), rtl.__name__
        assert model.ERRORS == tuple(rtl.Error.__members__), rtl.__name__
    assert ocs_model.LINK == tuple(ocstrx.Link.__members__)
    assert wss_model.STATES == tuple(wss.State.__members__)
    assert dix_model.MODES == tuple(deinterleaver.Mode.__members__)
    assert dix_model.UNIFORM == deinterleaver.Mode.UNIFORM
