"""The controller testbenches' cycle (``test_ocstrx``, ``test_wss``, ``test_deinterleaver``) on
the testbench layer (``cosim.testbench``): commands through the layer's stream source
(random gaps) and stream monitor (the rules, with the reset: ``valid`` is held low in reset),
``ready`` registered: low from the first reset edge (in every reset cycle but a reset's first)
through the first cycle after the reset, in which every block is idle (the model's and
scoreboard's ``ready``), the outputs checked every cycle, the testbench's own invariants,
resets at any moment.

One cycle is the work of one falling edge: read what the DUT shows (its outputs are
registered, so that is this cycle's state), offer the next command, drive the other inputs
and the reset for the rising edge that follows, check. :meth:`ControlBench.step` does one
from a scripted test (one trigger); :meth:`ControlBench.step_until` and
:meth:`ControlBench.run_random` run many on the layer's per-cycle mechanism
(``Testbench.run``: one simulator callback a cycle).

A bench subclasses :class:`ControlBench` and provides ``encode`` (command -> payload word,
from ``cosim.codec``), ``read`` (the outputs, decoded from the documented layout),
``invariants`` and optionally ``drive`` (other inputs; what it returns goes to the model's
``edge``) and ``on_reset``. By default the outputs are compared with the golden model's
:meth:`outputs` every cycle (``compare``/``advance``); a bench that checks transactions
against a scoreboard instead overrides those two (``test_ocstrx``, ``test_wss``).
"""

from __future__ import annotations

from abc import abstractmethod

from aifabric.cosim.testbench import StreamMonitor, StreamSource, Testbench

__all__ = ["ControlBench"]


class ControlBench(Testbench):
    """``model.edge(cmd, *inputs, rst=...)`` / ``model.outputs()`` once per clock.

    ``component``: the block's component class (its ``cmd`` stream and its ports are found
    from its signature); ``model``: the golden model (None for a scoreboard bench, or set
    after the parameters are known: :attr:`params`); ``coverage``: the layer's coverage
    minimums."""

    def __init__(self, dut, component, model=None, *, gap_p: float = 0.3,
                 coverage: dict | None = None) -> None:
        super().__init__(dut, component, coverage=coverage)
        self.log.info("stimulus from this test's seed; %s", self.seed_text())
        self.model = model
        cmd = self.bus("cmd")
        self.source = StreamSource(cmd, self.rng, gap_p=gap_p)
        self.monitor = StreamMonitor(cmd, self)
        self.io = self.bus()                    # every port, for the benches' readers
        self.sent: dict = {}         # payload word -> command (the last one sent)
        self.taken = self.rejected = 0
        self.after_reset = False     # the cycle before was a reset cycle

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

    # -- one cycle -------------------------------------------------------------------------
    def send(self, cmds) -> None:
        words = []
        for c in cmds:
            word = self.encode(c)
            self.sent[word] = c
            words.append(word)
        self.source.send(words)

    def cycle_at(self, t: int, rst: int = 0, **kw) -> dict:
        """Cycle ``t``, at its falling edge: the outputs it shows, then the command offered,
        the other inputs and the reset for the next rising edge; returns the outputs."""
        got = self.read()
        source = self.source
        source.hold = bool(rst)           # no command is offered in reset
        sent = len(source.sent)
        source.edge(t)
        inputs = self.drive(**kw)
        if rst != self.in_reset:
            self.set_reset(rst)
        if rst and source.current is not None and got["ready"]:
            source.current = None    # dropped in a reset's first cycle (ready still high)
        self.monitor.edge(t)
        if rst:      # the state before a reset edge is not compared (at power-up the RTL's
            if self.after_reset and got["ready"]:               # registers hold anything)
                raise AssertionError(f"cycle {t}: cmd ready is high in reset after its "
                                     f"first edge")
            self.after_reset = True
            self.advance(None, inputs, rst=True)
            self.on_reset()
            return got
        if self.after_reset:
            self.after_reset = False
            if got["ready"]:
                raise AssertionError(f"cycle {t}: cmd ready is high in the first cycle after "
                                     f"a reset (it rises the cycle after)")
            self.compare(t, dict(got, ready=True))        # otherwise idle
        else:
            self.compare(t, got)
        taken = self.sent[source.sent[-1][1]] if len(source.sent) > sent else None
        self.invariants(t, got, taken)
        result = self.advance(taken, inputs)
        if result is not None:
            self.taken += 1
            self.rejected += result != "ok"
        return got

    async def step(self, rst: int = 0, **kw) -> dict:
        """One cycle from a scripted test (at the next falling edge)."""
        await self.tick()
        return self.cycle_at(self.cycle, rst, **kw)

    async def reset(self, cycles: int = 2, **kw) -> None:
        for _ in range(cycles):
            await self.step(rst=1, **kw)

    async def step_until(self, done, limit: int = 10_000_000, **kw) -> dict:
        """Cycles (on the layer's per-cycle mechanism) until ``done(got)`` holds for a
        cycle's outputs; returns those. Fails after ``limit`` cycles."""
        base, last = self.cycle + 1, None

        def body(t: int) -> bool:
            nonlocal last
            self.cycle = base + t
            last = self.cycle_at(self.cycle, **kw)
            return bool(done(last))

        calls = await self.run(body, limit)
        assert last is not None and done(last), f"not done after {calls} cycles"
        return last

    async def run_random(self, count: int, commands, *, reset_p: float,
                         after_reset=(), limit: int | None = None) -> int:
        """Offer ``commands()`` (a list) whenever the stream is idle until ``count``
        commands were taken, with a reset (1-3 cycles) at probability ``reset_p`` per
        cycle; returns the number of resets. Fails when ``limit`` cycles (default: 1,000 a
        command) take fewer."""
        resets = left = 0
        rng = self.rng
        base = self.cycle + 1

        def body(t: int) -> bool:
            nonlocal resets, left
            self.cycle = n = base + t
            if not left:
                if self.source.idle:
                    self.send(commands())
                if rng.random() < reset_p:
                    resets += 1
                    left = int(rng.integers(1, 4))
            if left:
                self.cycle_at(n, 1)
                left -= 1
                if not left:
                    self.source.queue.clear()
                    self.send(after_reset() if callable(after_reset) else after_reset)
            else:
                self.cycle_at(n)
            return self.taken >= count and not left

        if self.taken < count:
            limit = 1_000 * count if limit is None else limit
            calls = await self.run(body, limit)
            assert self.taken >= count, \
                f"{self.taken} of {count} commands taken in {calls} cycles"
        self.monitor.check()
        return resets

