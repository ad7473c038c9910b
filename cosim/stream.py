"""Reusable cocotb components for ``amaranth.lib.stream`` interfaces (``<name>__valid``,
``<name>__ready``, ``<name>__payload`` in the generated Verilog).

All components follow one clock discipline, :class:`ClockCycle`: at each falling edge every
component drives the inputs the next rising edge will take; then, in the read-only phase of
that same time step, every component samples what that rising edge will see. One loop steps
every component together (two triggers per clock, however many components), so a testbench
that also steps a golden model cycle by cycle stays in lock-step with them.

- :class:`StreamSource`: sends queued payloads with random idle cycles between beats and holds
  each beat until it is taken.
- :class:`StreamSink`: drives ``ready`` with random back-pressure (bursts of stalls, or a fixed
  probability per cycle) and collects the beats taken.
- :class:`StreamMonitor`: asserts the stream rules on any stream, whoever drives it: ``valid``
  is low during reset; once ``valid`` is high it stays high until ``ready``; the payload does
  not change while ``valid`` is high and ``ready`` low. A violation raises
  :class:`ProtocolError` naming the stream, the cycle and the signal.
"""

from __future__ import annotations

from collections import deque

from cocotb.triggers import FallingEdge, ReadOnly

__all__ = ["ClockCycle", "StreamSource", "StreamSink", "sink_ready", "StreamMonitor", "ProtocolError"]


class ProtocolError(AssertionError):
    """A stream rule broken."""


def _signals(dut, name):
    return (getattr(dut, f"{name}__valid"), getattr(dut, f"{name}__ready"),
            getattr(dut, f"{name}__payload"))


class ClockCycle:
    """Steps components one clock at a time; ``count`` is the cycle being sampled (0 = the
    first cycle stepped)."""

    def __init__(self, clk, components=()) -> None:
        self.clk = clk
        self.components = list(components)
        self.count = -1

    async def drive(self) -> None:
        """Wait for the falling edge and let every component drive."""
        await FallingEdge(self.clk)
        self.count += 1
        for c in self.components:
            c.drive(self.count)

    async def sample(self) -> None:
        """Wait for the read-only phase and let every component sample."""
        await ReadOnly()
        for c in self.components:
            c.sample(self.count)

    async def step(self) -> None:
        await self.drive()
        await self.sample()


class StreamSource:
    """Drives a stream's ``valid`` and ``payload`` from a queue of integers.

    ``gap_p``: probability of an idle cycle before each beat (drawn again after each idle
    cycle, so gaps have random length). ``sent``: (cycle taken, payload) of every beat taken.
    """

    def __init__(self, dut, name: str, rng, *, gap_p: float = 0.0) -> None:
        self.name = name
        self.valid, self.ready, self.payload = _signals(dut, name)
        self.rng, self.gap_p = rng, gap_p
        self.queue: deque[int] = deque()
        self.sent: list[tuple[int, int]] = []
        self.current: int | None = None
        self.valid.value = 0

    def send(self, payloads) -> None:
        self.queue.extend(int(p) for p in payloads)

    @property
    def idle(self) -> bool:
        return self.current is None and not self.queue

    def drive(self, cycle: int) -> None:
        if self.current is None and self.queue and not (self.gap_p and
                                                        self.rng.random() < self.gap_p):
            self.current = self.queue.popleft()
            self.payload.value = self.current
        self.valid.value = int(self.current is not None)

    def sample(self, cycle: int) -> None:
        if self.current is not None and int(self.ready.value):
            self.sent.append((cycle, self.current))
            self.current = None


def sink_ready(sink) -> int:
    """A sink's ``ready`` for this cycle from its ``enabled``, ``ready_p``, ``burst``, ``rng``
    and last value ``_ready``: 0 when disabled, 1 at ``ready_p`` >= 1, else a draw with
    probability ``ready_p``, kept for a burst (redrawn with probability 0.1 per cycle)."""
    if not sink.enabled:
        return 0
    if sink.ready_p >= 1.0:
        return 1
    if not sink.burst or sink._ready is None or sink.rng.random() < 0.1:
        return int(sink.rng.random() < sink.ready_p)
    return sink._ready


class StreamSink:
    """Drives a stream's ``ready`` and collects the beats taken as (cycle, payload).

    ``ready_p``: probability that ``ready`` is high; with ``burst`` it changes state with
    probability 0.1 per cycle (stalls come in bursts), otherwise it is drawn every cycle.
    """

    def __init__(self, dut, name: str, rng, *, ready_p: float = 1.0, burst: bool = True) -> None:
        self.name = name
        self.valid, self.ready, self.payload = _signals(dut, name)
        self.rng, self.ready_p, self.burst = rng, ready_p, burst
        self.beats: list[tuple[int, int]] = []
        self._ready = None
        self.enabled = True
        self.ready.value = 0

    def drive(self, cycle: int) -> None:
        ready = sink_ready(self)
        if ready != self._ready:
            self.ready.value = self._ready = ready

    def sample(self, cycle: int) -> None:
        if int(self.valid.value) and self._ready:
            self.beats.append((cycle, int(self.payload.value.to_unsigned())))


class StreamMonitor:
    """Checks the stream rules every cycle; ``rst`` is the reset signal (active high).
    ``beats`` counts the handshakes it saw."""

    def __init__(self, dut, name: str, rst=None) -> None:
        self.name = name
        self.valid, self.ready, self.payload = _signals(dut, name)
        self.rst = rst
        self.prev = None          # (valid, ready, payload) of the previous cycle, out of reset
        self.beats = 0

    def drive(self, cycle: int) -> None:
        pass

    def _fail(self, cycle, signal, what):
        raise ProtocolError(f"stream {self.name!r}, cycle {cycle}: {self.name}__{signal} "
                            f"{what}")

    def sample(self, cycle: int) -> None:
        valid = int(self.valid.value)
        if self.rst is not None and int(self.rst.value):
            if valid:
                self._fail(cycle, "valid", "is high during reset")
            self.prev = None
            return
        ready = int(self.ready.value)
        waited = self.prev is not None and self.prev[0] and not self.prev[1]
        # the payload matters only while a beat waits (wide payloads are costly to read)
        payload = int(self.payload.value.to_unsigned()) if valid and (waited or not ready) \
            else None
        if waited:
            if not valid:
                self._fail(cycle, "valid", "fell before the beat was taken (ready was low)")
            if payload != self.prev[2]:
                self._fail(cycle, "payload", f"changed while valid and not ready: "
                           f"{self.prev[2]:#x} -> {payload:#x}")
        self.beats += valid and ready
        self.prev = (valid, ready, payload)
