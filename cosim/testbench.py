"""The testbench layer every ``cosim/test_<block>.py`` is written on.

One shape for every block (the shape of cocotbext-axi's testbenches):

- :class:`Testbench`, built from the DUT and the block's component class: the clock started
  in the simulator, the reset, the parameters read once (``$AIFABRIC_PARAMS``), the
  stimulus generator seeded from the test's seed, the cycles and loop time measured, the
  functional :class:`Coverage` with its minimums, the :class:`Scoreboard`, and
  :meth:`Testbench.finish`, which checks both and records the test's statistics.
- :class:`Bus`: the handles of one interface, found from the component's own signature
  (``tb.bus("load")``, ``tb.buses("inject")`` for an array of interfaces) or from a name
  prefix where no component is at hand (``Bus.from_prefix``). A name the DUT lacks fails at
  once, naming it.
- Drivers and monitors are objects with an ``edge(t)`` method, added with
  :meth:`Testbench.add`. They run on one per-cycle mechanism: at each falling edge of the
  clock (``cosim.batch.each_falling_edge``: one simulator callback a clock, no cocotb
  trigger) the test's own ``body(t)`` runs first, then every component in the order added.
  Everything at a falling edge reads what the DUT shows (registered outputs: what the next
  rising edge takes) and drives the inputs of that rising edge; a monitor added after a
  driver sees what the driver drove. :meth:`Testbench.run` runs many cycles that way;
  :meth:`Testbench.tick` steps a few at a time from a scripted test (the same components
  at the same point of the clock, through a cocotb trigger). A DUT with outputs that follow
  its inputs combinationally (a flag of this cycle's configuration) is sampled after the
  drive, in the read-only phase of the same time step: :meth:`Testbench.run_sampled` (the
  same falling-edge callback, and one read-only callback a cycle).
- Streams (``amaranth.lib.stream``: ``valid``, ``ready``, ``payload``): :class:`StreamSource`
  (queued payloads, random idle cycles), :class:`StreamSink` (random back-pressure, the
  beats taken) and :class:`StreamMonitor` (the stream rules of ``cosim.stream``, checked in
  batches by ``cosim.batch.StreamLog``), with the random draws of ``cosim.stream``'s
  components in the same order.
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np

from aifabric.cosim.batch import (bits_reader, bits_writer, each_falling_edge, gc_paused,
                                  reader, start_clock, writer, StreamLog)
from aifabric.cosim.stats import CycleMeter, block_params, record_stats, seed_text
from aifabric.cosim.stream import sink_ready

__all__ = ["Testbench", "Bus", "Coverage", "Scoreboard", "StreamSource", "StreamSink",
           "StreamMonitor"]


class Bus:
    """The handles of one interface of the DUT: ``bus.valid``, ``bus.payload`` (cocotb
    handles, named as the interface names its members; a nested member ``a.b`` is ``a__b``).
    ``prefix`` is the interface's path in the generated Verilog (``inject__3``; "" for the
    top level). :meth:`reader`/:meth:`writer` give the fast accessors of ``cosim.batch``."""

    def __init__(self, dut, prefix: str, names) -> None:
        self.prefix = prefix
        self.handles = {}
        for name in names:
            full = f"{prefix}__{name}" if prefix else name
            try:
                handle = getattr(dut, full)
            except AttributeError:
                raise AttributeError(f"the DUT has no port {full!r} (interface "
                                     f"{prefix or 'top level'!r})") from None
            self.handles[name] = handle
            setattr(self, name, handle)

    @classmethod
    def from_prefix(cls, dut, prefix: str) -> "Bus":
        """Every port whose name starts with ``<prefix>__`` (no component needed)."""
        start = prefix + "__"
        names = sorted(h._name[len(start):] for h in dut if h._name.startswith(start))
        if not names:
            raise AttributeError(f"the DUT has no port named {start}*")
        return cls(dut, prefix, names)

    @classmethod
    def from_signature(cls, dut, component, *path, ports=None) -> "Bus":
        """The ports of the member at ``path`` of ``component``'s signature (``("inject",
        3)``: the fourth of the ``inject`` array; no path: every port). ``ports``: the
        signature's port paths, flattened once by the caller (a large system's signature
        takes tens of milliseconds to flatten)."""
        path = tuple(path)
        if ports is None:
            ports = [p for p, _, _ in component.signature.flatten(component)]
        names = ["__".join(map(str, p[len(path):]))
                 for p in ports if p[:len(path)] == path and len(p) > len(path)]
        if not names:
            raise AttributeError(f"{type(component).__name__} has no interface "
                                 f"{'.'.join(map(str, path))!r}")
        return cls(dut, "__".join(map(str, path)), names)

    def __contains__(self, name: str) -> bool:
        return name in self.handles

    def __repr__(self) -> str:
        return f"Bus({self.prefix!r}: {', '.join(self.handles)})"

    def width(self, name: str) -> int:
        return len(self.handles[name])

    def read(self, name: str) -> int:
        """The signal's value as an int (through cocotb's value: for scripted code)."""
        value = self.handles[name].value
        return value.to_unsigned() if hasattr(value, "to_unsigned") else int(value)

    def reader(self, name: str):
        """``cosim.batch.reader`` of the signal: a function returning its value, an int."""
        return reader(self.handles[name])

    def bits_reader(self, name: str):
        return bits_reader(self.handles[name])

    def writer(self, name: str):
        """``cosim.batch.writer``: a function writing an int, applied at once."""
        return writer(self.handles[name])

    def bits_writer(self, name: str):
        return bits_writer(self.handles[name])


class Coverage:
    """Functional coverage: counts by bin, each with the least a run must reach.

    ``minimums``: ``{bin: least count}`` (a bin without a minimum is counted, not
    required); ``scale`` multiplies every minimum (a shorter run), rounded down, and never
    to below 1 for a minimum that was at least 1."""

    def __init__(self, minimums: dict | None = None, scale: float = 1.0) -> None:
        self.minimums = dict(minimums or {})
        self.scale = scale
        self.counts = dict.fromkeys(self.minimums, 0)

    def hit(self, name: str, count: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + count

    def __getitem__(self, name: str) -> int:
        return self.counts.get(name, 0)

    def required(self, name: str) -> int:
        least = self.minimums.get(name, 0)
        return max(1, int(least * self.scale)) if least >= 1 else 0

    def check(self) -> None:
        """AssertionError naming every bin below its minimum."""
        short = [f"{k} {self[k]} < {self.required(k)}" for k in self.minimums
                 if self[k] < self.required(k)]
        assert not short, "coverage below its minimum: " + ", ".join(short)


class Scoreboard:
    """Expected transactions in order; each one received must equal the oldest expected.

    ``expect(item)`` queues; ``compare(got, where)`` checks (an AssertionError starting with
    ``where``, e.g. ``"cycle 12: "``, naming both); ``check_empty()`` at the end: nothing
    expected was left unreceived."""

    def __init__(self, name: str = "scoreboard") -> None:
        self.name = name
        self.expected: deque = deque()
        self.matched = 0

    def expect(self, item) -> None:
        self.expected.append(item)

    def compare(self, got, where: str = "") -> None:
        if not self.expected:
            raise AssertionError(f"{where}{self.name}: received {got!r}, nothing expected")
        want = self.expected.popleft()
        if got != want:
            raise AssertionError(f"{where}{self.name}: received {got!r}, expected {want!r}")
        self.matched += 1

    def check_empty(self) -> None:
        assert not self.expected, (f"{self.name}: {len(self.expected)} expected never "
                                   f"received, the first {self.expected[0]!r}")


class Testbench:
    """A DUT with its clock running and everything a test needs around it.

    ``component``: the block's component class (built here with the parameters, never
    elaborated: only its signature is read) or an instance; None finds buses by prefix.
    ``params``: the block's parameters (default: ``$AIFABRIC_PARAMS``, read once).
    ``seed``: added to the test's seed (``cocotb.RANDOM_SEED``) for :attr:`rng`.
    ``coverage``: the coverage bins' minimums (:class:`Coverage`), scaled by
    ``coverage_scale``. ``start``: False where an earlier bench of the same test started
    the clock already.
    """

    def __init__(self, dut, component=None, *, params: dict | None = None, seed: int = 0,
                 clock: str = "clk", reset: str | None = "rst", period_ns: int = 10,
                 coverage: dict | None = None, coverage_scale: float = 1.0,
                 start: bool = True) -> None:
        import cocotb
        self.dut, self.log = dut, dut._log
        self.params = dict(block_params() if params is None else params)
        self.seed = cocotb.RANDOM_SEED + seed
        self.rng = np.random.default_rng(self.seed)
        if isinstance(component, type):
            from aifabric.rtl._util import not_elaborated
            component = not_elaborated(component(**self.params))
        self.component = component
        self._ports = None
        self.clk = getattr(dut, clock)
        self.rst = getattr(dut, reset) if reset else None
        self._put_rst = writer(self.rst) if reset else None
        self.in_reset = 0
        self.period_ns = period_ns
        if start:
            start_clock(self.clk, period_ns)
        self.meter = CycleMeter(period_ns)
        self.coverage = Coverage(coverage, coverage_scale)
        self.scoreboard = Scoreboard()
        self.components: list = []
        self.stream_monitors: list = []   # every StreamMonitor on this bench (finish checks)
        self.cycle = -1                   # falling edges seen by this bench (the last one's)
        self.seconds = self.cpu_seconds = 0.0    # in run(): the cycle loops' wall and CPU
        self._edge = None
        self._release = False             # the reset falls at the next edge (reset())

    # -- interfaces -------------------------------------------------------------------------
    def bus(self, *path) -> Bus:
        """The interface at ``path`` (``"load"``, ``("inject", 3)``; none: the top level's
        ports), from the component's signature, else from the prefix."""
        if self.component is not None:
            return Bus.from_signature(self.dut, self.component, *path, ports=self.ports)
        return Bus.from_prefix(self.dut, "__".join(map(str, path)))

    @property
    def ports(self) -> list[tuple]:
        """The component's port paths (``("inject", 3, "valid")``), flattened once."""
        if self._ports is None:
            c = self.component
            self._ports = [p for p, _, _ in c.signature.flatten(c)]
        return self._ports

    def buses(self, name: str) -> list[Bus]:
        """Every interface of the array ``name`` (``inject__0``, ``inject__1``, ...)."""
        if self.component is not None:
            count = 1 + max((p[1] for p in self.ports
                             if p[0] == name and len(p) > 1 and isinstance(p[1], int)),
                            default=-1)
        else:
            count = 0
            while any(True for h in self.dut if h._name.startswith(f"{name}__{count}__")):
                count += 1
        return [self.bus(name, i) for i in range(count)]

    def add(self, *components):
        """Drivers and monitors (objects with ``edge(t)``), run at every falling edge after
        the test's body, in the order added. Returns the first."""
        self.components.extend(components)
        return components[0] if components else None

    def seed_text(self) -> str:
        return seed_text(self.seed)

    # -- the clock --------------------------------------------------------------------------
    async def tick(self, cycles: int = 1) -> None:
        """Step ``cycles`` falling edges, running the components at each; the caller then
        reads and drives at the last of them (cocotb handles, or the fast accessors)."""
        from cocotb.triggers import FallingEdge
        if self._edge is None:
            self._edge = FallingEdge(self.clk)
        comps = self.components
        for _ in range(cycles):
            await self._edge
            if self._release:
                self._release = False
                self.set_reset(0)
            self.cycle = t = self.cycle + 1
            for c in comps:
                c.edge(t)

    async def run(self, body, cycles: int, *, until=None, gc_off: bool = True) -> int:
        """Call ``body(t)`` (t = 0 at the next falling edge) and then every component at up
        to ``cycles`` falling edges, until ``body`` returns True (that edge's components are
        not run) or ``until(t)``, called after the components, does; returns the number of
        edges ``body`` saw. The run ends at that edge: what follows (a tick, another run)
        continues from the next. ``body`` and ``until`` may be None. The cycle loop's wall
        and CPU time add to :attr:`seconds` and :attr:`cpu_seconds`; the garbage collector
        is paused in it (``gc_off``, ``cosim.batch.gc_paused``)."""
        comps = tuple(self.components)
        base = self.cycle + 1
        if not comps and until is None and body is not None:
            step = body
        else:
            def step(t):
                if body is not None and body(t):
                    return True
                self.cycle = n = base + t
                for c in comps:
                    c.edge(n)
                return until is not None and until(t)
        if self._release:                 # the reset falls first, at t = 0 (reset())
            self._release = False
            inner = step

            def step(t):
                if t == 0:
                    self.set_reset(0)
                return inner(t)
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            if gc_off:
                with gc_paused():
                    calls = await each_falling_edge(self.clk, step, cycles, self.period_ns)
            else:
                calls = await each_falling_edge(self.clk, step, cycles, self.period_ns)
        finally:
            self.seconds += time.perf_counter() - wall
            self.cpu_seconds += time.process_time() - cpu
        self.cycle = base + calls - 1
        return calls

    async def run_sampled(self, drive, sample, cycles: int, *, gc_off: bool = True) -> int:
        """The per-cycle mechanism with a read-only phase, for a DUT with outputs that depend
        combinationally on its inputs (a comparison of such an output needs the inputs of
        the same cycle applied). At each falling edge (t = 0 the next): ``drive(t)``, then
        every component; in the read-only phase of that time step, once the DUT has
        settled on those inputs, ``sample(t)``, which returns True to stop. Both run in
        simulator callbacks (``cosim.batch.each_falling_edge`` with its ``sample``: no cocotb
        trigger per cycle), up to ``cycles`` cycles; returns the number sampled. The test
        resumes in the read-only phase of the last cycle: it may read there; it drives at
        the next :meth:`tick` or run. Wall and CPU time and the
        garbage collector as :meth:`run`."""
        comps = tuple(self.components)
        base = self.cycle + 1

        def on_edge(t: int) -> None:
            if self._release:             # a reset() before: it falls at the first edge
                self._release = False
                self.set_reset(0)
            self.cycle = n = base + t
            drive(n)
            for c in comps:
                c.edge(n)

        def on_sample(t: int) -> bool:
            return sample(base + t)

        wall, cpu = time.perf_counter(), time.process_time()
        try:
            if gc_off:
                with gc_paused():
                    calls = await each_falling_edge(self.clk, on_edge, cycles,
                                                    sample=on_sample)
            else:
                calls = await each_falling_edge(self.clk, on_edge, cycles, sample=on_sample)
        finally:
            self.seconds += time.perf_counter() - wall
            self.cpu_seconds += time.process_time() - cpu
        return calls

    def set_reset(self, value: int) -> None:
        self._put_rst(value)
        self.in_reset = value

    async def reset(self, cycles: int = 2) -> None:
        """Reset: high at once (before the first falling edge, in a new bench) for
        ``cycles`` rising edges. It returns at the edge before the last of them, where the
        inputs the reset's last rising edge takes are still driven; the reset falls at the
        next edge (the first of the next :meth:`tick` or :meth:`run`, before anything else
        runs there), so what runs next starts in the first cycle out of reset."""
        self.set_reset(1)
        if self.cycle < 0:                # no edge yet: the first falls before any rising
            await self.tick()
        await self.tick(cycles - 1)
        self._release = True

    # -- the end of a test ------------------------------------------------------------------
    def finish(self, test: str, *, transactions: int, cycles: int | None = None,
               seconds: float | None = None, **extra) -> None:
        """Check the stream rules to the last cycle on every :class:`StreamMonitor` of this
        bench, that the scoreboard is empty and the coverage minimums are reached, then record
        the test's statistics (``cosim.stats.record_stats``): cycles from simulation time
        (``cycles`` overrides), the cycle loops' time (``seconds`` overrides), the coverage
        counts when there are bins."""
        for monitor in self.stream_monitors:
            monitor.check()
        self.scoreboard.check_empty()
        self.coverage.check()
        if self.coverage.counts:
            extra.setdefault("coverage", dict(self.coverage.counts))
        record_stats(test, transactions=transactions,
                     cycles=self.meter.cycles if cycles is None else cycles,
                     seconds=(self.seconds or None) if seconds is None else seconds, **extra)


class StreamSource:
    """Sends queued payloads on a stream (``valid``, ``payload``; ``ready`` read), holding
    each beat until taken. ``gap_p``: the probability of an idle cycle before a beat (drawn
    again after each idle cycle), the draws of ``cosim.stream.StreamSource``. ``hold``:
    while set, ``valid`` is low (the beat waits; e.g. in reset). ``sent``: (cycle, payload)
    of each beat taken; ``current``: the beat offered, None when none."""

    def __init__(self, bus: Bus, rng, *, gap_p: float = 0.0) -> None:
        self.bus, self.rng, self.gap_p = bus, rng, gap_p
        self._ready = bus.reader("ready")
        self._put_valid = bus.writer("valid")
        self._put_payload = bus.writer("payload")
        self.queue: deque = deque()
        self.sent: list[tuple[int, int]] = []
        self.current = None
        self.valid = 0
        self.hold = False
        self._put_valid(0)

    def send(self, payloads) -> None:
        self.queue.extend(int(p) for p in payloads)

    @property
    def idle(self) -> bool:
        return self.current is None and not self.queue

    def edge(self, t: int) -> None:
        ready = self._ready()
        if self.current is None and self.queue and not (self.gap_p and
                                                        self.rng.random() < self.gap_p):
            self.current = self.queue.popleft()
            self._put_payload(self.current)
        valid = int(self.current is not None and not self.hold)
        if valid != self.valid:
            self._put_valid(valid)
            self.valid = valid
        if valid and ready:
            self.sent.append((t, self.current))
            self.current = None


class StreamSink:
    """Drives a stream's ``ready`` with random back-pressure and collects the beats taken,
    (cycle, payload), in :attr:`beats` (or hands each to ``on_beat(t, payload)``).

    ``ready_p`` and ``burst`` as ``cosim.stream.StreamSink`` (same draws, ``sink_ready``);
    ``enabled`` False holds ``ready`` low. ``bits``: payloads as bit strings (a wide bus
    read once, decoded later in a batch) instead of ints. A handshake in reset (the bench's
    reset high) is no beat."""

    def __init__(self, bus: Bus, rng, *, ready_p: float = 1.0, burst: bool = True,
                 bits: bool = False, tb: Testbench | None = None, on_beat=None) -> None:
        self.bus, self.rng, self.ready_p, self.burst = bus, rng, ready_p, burst
        self.enabled = True
        self.tb, self.on_beat = tb, on_beat
        self._valid = bus.reader("valid")
        self._payload = bus.bits_reader("payload") if bits else bus.reader("payload")
        self._put_ready = bus.writer("ready")
        self.beats: list = []
        self._ready = None
        self.ready = 0
        self._put_ready(0)

    def edge(self, t: int) -> None:
        ready = sink_ready(self)
        if ready != self._ready:
            self._put_ready(ready)
            self._ready = ready
        self.ready = ready
        if ready and self._valid() and not (self.tb is not None and self.tb.in_reset):
            payload = self._payload()
            if self.on_beat is not None:
                self.on_beat(t, payload)
            else:
                self.beats.append((t, payload))


class StreamMonitor:
    """The stream rules on one stream, whoever drives it (``cosim.batch.StreamLog``: valid
    low in reset, held until ready, the payload unchanged while waiting), checked every
    ``every`` cycles and by :meth:`check`; a violation raises ``ProtocolError`` naming the
    stream, the cycle and the signal; :meth:`Testbench.finish` checks the cycles left. Add
    it after the stream's driver. ``beats``: the
    handshakes seen."""

    def __init__(self, bus: Bus, tb: Testbench, *, name: str | None = None,
                 every: int = 512) -> None:
        self.tb = tb
        self.log = StreamLog(name or bus.prefix, every)
        tb.stream_monitors.append(self)
        self._valid, self._ready = bus.reader("valid"), bus.reader("ready")
        self._payload = bus.bits_reader("payload")

    @property
    def beats(self) -> int:
        return self.log.beats

    def edge(self, t: int) -> None:
        self.log.record(t, self.tb.in_reset, self._valid(), self._ready(), self._payload)

    def gap(self, cycles: int) -> None:
        """``cycles`` cycles not seen (``cosim.batch.StreamLog.gap``)."""
        self.log.gap(cycles)

    def check(self) -> None:
        self.log.check()
