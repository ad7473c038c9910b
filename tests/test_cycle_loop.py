"""The per-cycle mechanism of the testbenches (``cosim.batch.each_falling_edge``) has two
paths: the fast one, a chain of simulator callbacks that wakes the waiting task through two of
cocotb's private names, and the one on cocotb's public triggers (``FallingEdge`` and
``ReadOnly`` awaited each cycle), taken where a cocotb lacks one of the private parts. A
cocotb upgrade must only slow the regression, never break it: the lookup reports what is
missing, and the two paths see the same cycles and values, also when a run stops early or a
check fails."""

import logging

import cocotb
import cocotb._event_loop
import cocotb._gpi_triggers
import cocotb.handle
import cocotb.simulator
import cocotb.triggers
import pytest

from aifabric.cosim import batch
from aifabric.cosim.runner import run

# (module, name) of every private part the fast path takes
PRIVATE = [(cocotb._event_loop, "_inst"), (cocotb._gpi_triggers, "_current_gpi_trigger"),
           (cocotb.simulator, "register_value_change_callback"),
           (cocotb.simulator, "register_readonly_callback"), (cocotb.simulator, "FALLING"),
           (cocotb.handle, "_GPISetAction")]


def test_this_cocotb_has_every_private_part_the_fast_path_takes():
    hooks, why = batch.cocotb_internals()
    assert hooks is not None, why
    assert hooks.no_delay == 3 and hooks.falling == cocotb.simulator.FALLING
    assert batch._FAST is not None        # the module's own lookup, made at import


@pytest.mark.parametrize("module,name", PRIVATE, ids=[n for _, n in PRIVATE])
def test_a_missing_private_part_is_named(monkeypatch, module, name):
    monkeypatch.delattr(module, name)
    hooks, why = batch.cocotb_internals()
    assert hooks is None and name in why, why


def test_a_current_trigger_not_read_from_the_private_name_is_found(monkeypatch):
    """The name still there, but no longer what the public function reports."""
    monkeypatch.setattr(cocotb.triggers, "current_gpi_trigger", lambda: None)
    hooks, why = batch.cocotb_internals()
    assert hooks is None and "current_gpi_trigger" in why, why
    assert cocotb._gpi_triggers._current_gpi_trigger is not None     # restored


class _Raw:
    """A simulator handle's raw accessors, which the public path must not use."""

    def get_signal_val_binstr(self):
        raise AssertionError("raw accessor read")

    get_signal_val_long = get_signal_val_binstr


class _Handle:
    def __init__(self, value):
        self._handle, self.value = _Raw(), value

    def __len__(self):
        return 8


def test_without_the_private_parts_the_readers_use_the_public_value(monkeypatch):
    monkeypatch.setattr(batch, "_FAST", None)
    assert batch.reader(_Handle(0x5A))() == 0x5A
    assert batch.bits_reader(_Handle("01011010"))() == "01011010"
    monkeypatch.undo()
    with pytest.raises(AssertionError, match="raw accessor"):
        batch.reader(_Handle(0x5A))()


# The small bench, run in the simulator on the wave-front arbiter (its 64-bit request and
# grant buses take the wide accessors): each run resets the DUT and drives the same random
# requests, recording at every edge and sample the cycle, the time since the run began, the
# grants read and whether the call ran in a task; both paths must record the same, stop at
# the same cycle, resume the test in the same phase and re-raise a check's failure there.
PROBE = '''
import logging
from contextlib import contextmanager

import cocotb
import cocotb._event_loop
import cocotb._gpi_triggers
import numpy as np
from cocotb.task import current_task
from cocotb.triggers import current_gpi_trigger
from cocotb.utils import get_sim_time

from aifabric.cosim import batch
from aifabric.cosim.testbench import Testbench

CYCLES = 150


def in_task():
    try:
        current_task()
    except RuntimeError:
        return False
    return True


@contextmanager
def awaited(why):
    """The module as a cocotb without the private parts leaves it; the warnings logged."""
    saved = batch._FAST, batch._WHY_SLOW, batch._warned
    batch._FAST, batch._WHY_SLOW, batch._warned = None, why, False
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logging.getLogger("aifabric.cosim.batch").addHandler(handler)
    try:
        yield lines
    finally:
        logging.getLogger("aifabric.cosim.batch").removeHandler(handler)
        batch._FAST, batch._WHY_SLOW, batch._warned = saved


async def trace(tb, *, sampled=False, stop=None, fail=None):
    n = tb.params["n"]
    rng = np.random.default_rng(7)
    reqs = [int(x) for x in rng.integers(0, 1 << 62, size=CYCLES)]
    put, grants = batch.writer(tb.dut.requests), batch.reader(tb.dut.grants)
    mask = (1 << n * n) - 1
    await tb.tick()                     # a falling edge: a sampled run ended in read-only
    await tb.reset()
    t0, base = get_sim_time("ns"), tb.cycle + 1
    seen = []

    def drive(t):
        t -= base if sampled else 0
        if t == fail:
            raise ValueError(f"planted failure at {t}")
        seen.append(("edge", t, get_sim_time("ns") - t0, grants(), in_task()))
        put(reqs[t] & mask)
        return t == stop

    def sample(t):
        t -= base
        seen.append(("sample", t, get_sim_time("ns") - t0, grants(), in_task()))
        return t == stop

    error = None
    try:
        if sampled:
            calls = await tb.run_sampled(drive, sample, CYCLES)
        else:
            calls = await tb.run(drive, CYCLES)
    except ValueError as e:
        calls, error = None, str(e)
    end = (get_sim_time("ns") - t0, type(current_gpi_trigger()).__name__)
    return calls, error, end, seen


CASES = [dict(), dict(stop=97), dict(fail=41), dict(sampled=True),
         dict(sampled=True, stop=64), dict(sampled=True, fail=23)]


def same(fast, slow, case):
    calls, error, end, seen = fast
    assert (calls, error, end) == slow[:3], (case, fast[:3], slow[:3])
    assert [s[:4] for s in seen] == [s[:4] for s in slow[3]], case
    assert not any(s[4] for s in seen) and all(s[4] for s in slow[3]), case
    assert any(s[3] for s in seen), "no grant seen: the bench checks nothing"


@cocotb.test()
async def the_awaited_loop_sees_what_the_callback_chain_sees(dut):
    tb = Testbench(dut)
    for case in CASES:
        fast = await trace(tb, **case)
        with awaited("forced") as lines:
            slow = await trace(tb, **case)
        same(fast, slow, case)
        assert len(lines) == 1 and "forced" in lines[0], lines
        want = (CYCLES if "stop" not in case else case["stop"] + 1) if "fail" not in case \\
            else None
        assert fast[0] == want and len([s for s in fast[3] if s[0] == "sample"]) == (
            0 if not case.get("sampled") else (want or case["fail"])), (case, fast[:3])
        assert fast[2][1] == ("ReadOnly" if case.get("sampled") and "fail" not in case
                              else "FallingEdge"), (case, fast[2])


@cocotb.test()
async def without_a_private_name_the_awaited_loop_runs(dut):
    tb = Testbench(dut)
    fast = await trace(tb, stop=60)
    for module, name in [(cocotb._event_loop, "_inst"),
                         (cocotb._gpi_triggers, "_current_gpi_trigger")]:
        saved = getattr(module, name)
        delattr(module, name)           # no await before it is back: cocotb itself uses it
        try:
            hooks, why = batch.cocotb_internals()
        finally:
            setattr(module, name, saved)
        assert hooks is None and name in why, why
        with awaited(why) as lines:
            slow = await trace(tb, stop=60)
            again = await trace(tb, stop=60)
        same(fast, slow, name)
        same(fast, again, name)
        assert len(lines) == 1 and name in lines[0], lines     # one line a run, not a cycle
'''


@pytest.mark.cosim
def test_fast_and_awaited_loops_agree_in_a_simulation(tmp_path, monkeypatch, cosim_seed):
    (tmp_path / "cycle_loop_probe.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = run("wwfa", {"band": 0, "n": 8}, seed=cosim_seed, test_module="cycle_loop_probe")
    assert result.passed and result.tests == 2, (result.describe(), result.first_failure)
