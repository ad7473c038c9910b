"""The cycle loop shared by the controller testbenches (``test_ocstrx``, ``test_wss``,
``test_deinterleaver``): commands through ``cosim.stream`` (random gaps, a protocol monitor
that knows the reset: ``valid`` is held low in reset), ``ready`` registered: low from the
first reset edge (in every reset cycle but a reset's first) through the first cycle after
the reset, in which every block is idle (the model's and scoreboard's ``ready``),
the outputs checked every cycle, the testbench's own invariants, resets at any moment.

A bench subclasses :class:`ControlBench` and provides ``encode`` (command -> payload word,
from ``cosim.codec``), ``read`` (the outputs, decoded from the documented layout),
``invariants`` and optionally ``drive`` (other inputs; what it returns goes to the model's
``edge``) and ``on_reset``. By default the outputs are compared with the golden model's
:meth:`outputs` every cycle (``compare``/``advance``); a bench that checks transactions
against a scoreboard instead overrides those two (``test_ocstrx``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import cocotb
import numpy as np
from cocotb.clock import Clock

from aifabric.cosim.stats import CycleMeter, seed_text
from aifabric.cosim.stream import ClockCycle, StreamMonitor, StreamSource

__all__ = ["ControlBench", "value", "start_clock"]


def value(signal) -> int:
    """A port's value as an int (1-bit ports are ``Logic``, wider ones ``LogicArray``)."""
    return int(signal.value) if len(signal) == 1 else int(signal.value.to_unsigned())


def start_clock(dut) -> np.random.Generator:
    Clock(dut.clk, 10, unit="ns").start()
    dut._log.info("stimulus from this test's seed; %s", seed_text())
    return np.random.default_rng(cocotb.RANDOM_SEED)


class ControlBench(ABC):
    """``model.edge(cmd, *inputs, rst=...)`` / ``model.outputs()`` once per clock."""

    def __init__(self, dut, rng, model, *, gap_p: float = 0.3) -> None:
        self.dut, self.rng, self.model = dut, rng, model
        self.source = StreamSource(dut, "cmd", rng, gap_p=gap_p)
        self.monitor = StreamMonitor(dut, "cmd", rst=dut.rst)
        self.clock = ClockCycle(dut.clk, [self.source, self.monitor])
        self.meter = CycleMeter(10)
        self.sent: dict = {}         # payload word -> command (the last one sent)
        self.taken = self.rejected = 0
        self.in_reset = False        # the cycle before was a reset cycle

    # -- provided by each bench ------------------------------------------------------------
    @abstractmethod
    def encode(self, cmd) -> int:
        """The command's payload word (``cosim.codec``)."""

    @abstractmethod
    def read(self) -> dict:
        """This cycle's outputs, decoded from the documented layout."""

    @abstractmethod
    def invariants(self, t: int, got: dict, taken) -> None:
        """The bench's own checks on the RTL's outputs (``taken``: the command taken)."""

    def drive(self, **kw) -> tuple:
        """Set the inputs other than the command stream and reset for this cycle; returns
        the extra arguments of the model's ``edge``."""
        return ()

    def on_reset(self) -> None:
        """Forget the testbench's own state when a reset edge comes."""

    def compare(self, t: int, got: dict) -> None:
        """This cycle's outputs against the model's (every output, every cycle)."""
        want = self.model.outputs()
        if got != want:
            diff = {k: (got[k], want[k]) for k in got if got[k] != want[k]}
            raise AssertionError(f"cycle {t}: RTL != model (rtl, model): {diff}")

    def advance(self, taken, inputs, rst: bool = False):
        """Step the reference one clock: the model's ``edge`` (its result: None when no
        command was taken, "ok" or the error of a taken one)."""
        return self.model.edge(taken, *inputs, rst=rst) if rst else \
            self.model.edge(taken, *inputs)

    # -- the loop --------------------------------------------------------------------------
    def send(self, cmds) -> None:
        words = []
        for c in cmds:
            word = self.encode(c)
            self.sent[word] = c
            words.append(word)
        self.source.send(words)

    async def step(self, rst: int = 0, **kw) -> dict:
        dut = self.dut
        await self.clock.drive()
        inputs = self.drive(**kw)
        dut.rst.value = rst
        if rst:                  # no command is offered in reset (the source's beat waits)
            dut.cmd__valid.value = 0
        await self.clock.sample()
        t = self.clock.count
        got = self.read()
        if rst:      # the state before a reset edge is not compared (at power-up the RTL's
            if self.in_reset and int(dut.cmd__ready.value):     # registers hold anything)
                raise AssertionError(f"cycle {t}: cmd ready is high in reset after its "
                                     f"first edge")
            self.in_reset = True
            self.advance(None, inputs, rst=True)
            self.on_reset()
            return got
        if self.in_reset:
            self.in_reset = False
            if got["ready"]:
                raise AssertionError(f"cycle {t}: cmd ready is high in the first cycle after "
                                     f"a reset (it rises the cycle after)")
            self.compare(t, dict(got, ready=True))        # otherwise idle
        else:
            self.compare(t, got)
        cmd = None
        if int(dut.cmd__valid.value):
            cmd = self.sent[value(dut.cmd__payload)]
        taken = cmd if cmd is not None and got["ready"] else None
        self.invariants(t, got, taken)
        result = self.advance(taken, inputs)
        if result is not None:
            self.taken += 1
            self.rejected += result != "ok"
        return got

    async def reset(self, cycles: int = 2, **kw) -> None:
        for _ in range(cycles):
            await self.step(rst=1, **kw)

    async def run_random(self, count: int, commands, *, reset_p: float,
                         after_reset=()) -> int:
        """Offer ``commands()`` (a list) whenever the stream is idle until ``count``
        commands were taken, with a reset (1-3 cycles) at probability ``reset_p`` per
        cycle; returns the number of resets."""
        resets = 0
        while self.taken < count:
            if self.source.idle:
                self.send(commands())
            if self.rng.random() < reset_p:
                resets += 1
                await self.reset(int(self.rng.integers(1, 4)))
                self.source.queue.clear()
                self.send(after_reset() if callable(after_reset) else after_reset)
                continue
            await self.step()
        return resets
