"""The OCS transceiver controller at the paper's real timing parameters (InfiniteHBD §4.1:
a 1 ms reconfiguration at 100 MHz = 100,000 cycles of settle, T = 20 timer bits, and the
reset-time debounce of 8 and check window of 1,000 samples), in Amaranth's simulator.

Directed at a mutant the regression's short timers cannot see (issue 34): the per-group
timer counters cut to fewer bits (settle/check counter ``tmr`` to 6, light-run counter
``run`` to 3). With short timers every value fits either width; at the real ones the
settle is cut short (100,000 mod 64) and the window of 1,000 samples is never reached, so
a dark link never faults and the controller never takes another command (a livelock).
The promises checked are the documented ones: UP exactly 1 + S + D cycles after a
SET_PATH is taken on a lit path, FAULT (cause 1, no light after a reconfiguration)
exactly 1 + S + W cycles after it on a dark one, ``ready`` again after that."""

from amaranth.hdl import ClockDomain, Module, Value
from amaranth.sim import Simulator

from aifabric.cosim.codec import field, ocs_command
from aifabric.rtl.optics.ocstrx import Link, OCSTrxController

SETTLING, CHECKING, UP, FAULT = Link.SETTLING, Link.CHECKING, Link.UP, Link.FAULT
# the paper's timing (catalog synth parameters of the block)
REAL = dict(lanes=8, groups=2, code_bits=12, timer_bits=20, settle=100_000)
DEBOUNCE, WINDOW = 8, 1000                     # the documented reset values
# the planted mutant: both per-group counters narrowed (to 6 and 3 bits)
CUT = [("tmr = [Signal(T, name=f\"tmr{g}\")", "tmr = [Signal(min(T, 6), name=f\"tmr{g}\")"),
       ("run = [Signal(T, name=f\"run{g}\")", "run = [Signal(min(T, 3), name=f\"run{g}\")")]


def component(cut=False):
    if not cut:
        return OCSTrxController(**REAL)
    import types
    import aifabric.rtl.optics.ocstrx as original
    from pathlib import Path
    source = Path(original.__file__).read_text()
    for old, new in CUT:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    module = types.ModuleType("aifabric.rtl.optics.ocstrx_cut")
    module.__package__ = original.__package__
    module.__file__ = original.__file__
    exec(compile(source, original.__file__, "exec"), module.__dict__)
    return module.OCSTrxController(**REAL)


def timeline(dut, horizon):
    """SET_PATH of both groups to path 1 (``every``) at cycle 0; group 0's path-1
    photodetector lit, group 1's dark. Returns the cycle each group's link first reads UP /
    FAULT (None: never within ``horizon`` cycles after the command), group 1's cause then,
    and the cycle ready is high again after the command."""
    out = {"taken": None, "up0": None, "fault1": None, "cause1": None, "ready": None}
    word = ocs_command(1, lanes=REAL["lanes"], groups=REAL["groups"], group=0, path=1,
                       every=1)

    async def bench(ctx):
        ctx.set(dut.pd, 0b000_001)             # group 0: path 1 lit; group 1: dark
        ctx.set(Value.cast(dut.cmd.payload), word)
        ctx.set(dut.cmd.valid, 1)
        t = 0
        while out["taken"] is None and t < 10:
            await ctx.delay(0)
            if ctx.get(dut.cmd.ready):
                out["taken"] = t
            await ctx.tick()
            t += 1
        ctx.set(dut.cmd.valid, 0)
        assert out["taken"] is not None, "the SET_PATH was never taken"
        # nothing to look at while both settle: skip most of it in one call
        skip = REAL["settle"] - 50
        await ctx.tick().repeat(skip)
        t += skip
        while t < out["taken"] + horizon:
            await ctx.delay(0)
            links = ctx.get(dut.link)
            l0, l1 = field(links, 0, 3), field(links, 1, 3)
            if out["up0"] is None and l0 == UP:
                out["up0"] = t
            if out["fault1"] is None and l1 == FAULT:
                out["fault1"] = t
                out["cause1"] = field(ctx.get(dut.cause), 1, 2)
            if out["fault1"] is not None and ctx.get(dut.cmd.ready):
                out["ready"] = t
                break
            await ctx.tick()
            t += 1

    m = Module()
    m.domains.sync = ClockDomain("sync")
    m.submodules.dut = dut
    sim = Simulator(m)
    sim.add_clock(1e-8)                        # 100 MHz
    sim.add_testbench(bench)
    sim.run()
    return out


def check(out):
    S, D, W = REAL["settle"], DEBOUNCE, WINDOW
    t0 = out["taken"]
    assert out["up0"] == t0 + 1 + S + D, \
        f"lit group UP at {out['up0']}, not {t0 + 1 + S + D} (1 + S + D after the command)"
    assert out["fault1"] == t0 + 1 + S + W, \
        f"dark group FAULT at {out['fault1']}, not {t0 + 1 + S + W} (1 + S + W after it)"
    assert out["cause1"] == 1, f"dark group's cause {out['cause1']}, not 1 (no light)"
    assert out["ready"] is not None, "ready never returned after the fault"


HORIZON = 1 + REAL["settle"] + WINDOW + 20


def test_real_timings_up_fault_and_ready():
    check(timeline(component(), HORIZON))


def test_timer_counters_cut_to_3_and_6_bits_are_caught():
    """The issue's survivor, planted: the same check fails on it (it never faults)."""
    out = timeline(component(cut=True), HORIZON)
    try:
        check(out)
    except AssertionError as e:
        assert "not" in str(e) or "never" in str(e)
    else:
        raise AssertionError(f"the cut-counter mutant passed the real-timing check: {out}")
