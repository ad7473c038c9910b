"""Batched checking for the long co-simulations: one trigger per clock, outputs recorded per
cycle, checked every few hundred cycles in numpy.

The per-cycle testbenches (``cosim.stream.ClockCycle``) cross from the simulator into Python
several times a clock: a falling edge to drive, a read-only phase to sample, the ReadWrite
phase cocotb adds to apply every write, and the Python clock's two timers. Here:

- the clock runs in the simulator (``Clock(..., impl="gpi")``, :func:`start_clock`);
- a testbench awaits only the falling edge. There it first reads what the DUT shows, which
  is what the next rising edge will take as long as those outputs are registered (a Moore
  output: ``valid``, ``ready``, flags that depend on state, not on this cycle's inputs), then
  drives the inputs for that edge. Reading before driving is what makes one trigger enough;
  a DUT output that depended combinationally on an input would need the read-only phase;
- reads and writes go straight to the simulator handle (:func:`reader`, :func:`writer`:
  no ``Logic``/``LogicArray`` object per access, a write applied at once instead of queued
  for a ReadWrite phase); a wide bus is read once, as its bit string;
- what the checks need is recorded per cycle (:class:`StreamLog` packs a stream's ``rst``,
  ``valid`` and ``ready`` into one small integer per cycle) and checked in batches, in numpy,
  every ``every`` cycles and at the end of a test. A failure names the exact cycle it
  happened in and carries the message the per-cycle check gives.
"""

from __future__ import annotations

import gc
import logging
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np

from aifabric.cosim.stream import ProtocolError

__all__ = ["reader", "bits_reader", "writer", "bits_writer", "start_clock", "gc_paused",
           "each_falling_edge", "StreamLog", "ProtocolError", "BatchFailure"]


class BatchFailure(AssertionError):
    """A check of a batch failed; the message starts with the cycle (``cycle 1234: ...``)."""


def cocotb_internals():
    """The private parts of cocotb the fast paths use, all looked up here and nowhere else,
    or None and the reason where this cocotb lacks one of them.

    cocotb has no public way to run Python in a simulator callback and then resume a waiting
    task in that same phase: its triggers do it after their own callbacks, by setting the
    trigger that ``cocotb.triggers.current_gpi_trigger()`` reports and running the event
    loop (``cocotb._gpi_triggers._current_gpi_trigger``, ``cocotb._event_loop._inst``; cocotb
    2.1). The simulator's callbacks (``cocotb.simulator``, documented as not public), a
    handle's raw accessors (``handle._handle``) and the immediate-write action
    (``cocotb.handle._GPISetAction.NO_DELAY``) are private too. Where one is missing,
    :func:`each_falling_edge` awaits a ``FallingEdge`` trigger each cycle and the readers and
    writers go through ``handle.value``: slower, with the same cycles and values."""
    try:
        import cocotb.triggers
        from cocotb import _event_loop, _gpi_triggers, simulator
        from cocotb.handle import _GPISetAction
        hooks = SimpleNamespace(
            no_delay=_GPISetAction.NO_DELAY.value,
            falling=simulator.FALLING,
            on_value_change=simulator.register_value_change_callback,
            on_readonly=simulator.register_readonly_callback,
            run_event_loop=_event_loop._inst.run)
        # the name must be what the public current_gpi_trigger() reads
        saved, probe = _gpi_triggers._current_gpi_trigger, object()
        _gpi_triggers._current_gpi_trigger = probe
        try:
            if cocotb.triggers.current_gpi_trigger() is not probe:
                raise AttributeError("cocotb.triggers.current_gpi_trigger() does not read "
                                     "cocotb._gpi_triggers._current_gpi_trigger")
        finally:
            _gpi_triggers._current_gpi_trigger = saved
    except (ImportError, AttributeError) as e:
        return None, str(e)

    def wake(trigger):
        # resume the tasks woken in this callback now, as a cocotb trigger firing in this
        # phase would (the one thing cocotb's GPI triggers do after their callbacks)
        _gpi_triggers._current_gpi_trigger = trigger
        hooks.run_event_loop()

    hooks.wake = wake
    return hooks, ""


_FAST, _WHY_SLOW = cocotb_internals()
_warned = False


def _warn_slow(why: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        import cocotb
        logging.getLogger("aifabric.cosim.batch").warning(
            "cocotb %s lacks what the fast cycle loop uses (%s): every cycle awaits a "
            "FallingEdge trigger instead (slower, same cycles)", cocotb.__version__, why)


def _raw(handle):
    if _FAST is None:
        return None
    raw = getattr(handle, "_handle", None)
    return raw if raw is not None and hasattr(raw, "get_signal_val_binstr") else None


def reader(handle):
    """A function returning ``handle``'s value as an int, read straight from the simulator
    (falls back to ``handle.value`` where the handle has no raw accessor)."""
    raw = _raw(handle)
    if raw is None:
        def read():
            value = handle.value
            return value.to_unsigned() if hasattr(value, "to_unsigned") else int(value)
        return read
    if len(handle) <= 32:
        return raw.get_signal_val_long
    get = raw.get_signal_val_binstr
    return lambda: int(get(), 2)


def bits_reader(handle):
    """A function returning ``handle``'s value as its bit string (MSB first, one character a
    bit): a wide bus read once, decoded later for many cycles at a time."""
    raw = _raw(handle)
    if raw is not None:
        return raw.get_signal_val_binstr
    return lambda: str(handle.value)


def writer(handle):
    """A function writing an int to ``handle`` at once (no ReadWrite phase); the caller
    writes only in the falling-edge callback, where the next rising edge takes the value."""
    raw = _raw(handle)
    width = len(handle)
    if raw is None:
        from cocotb.handle import Immediate

        def write(value):
            handle.value = Immediate(value)
        return write
    action = _FAST.no_delay
    if width <= 32:
        put = raw.set_signal_val_int
        return lambda value: put(action, value)
    put_str = raw.set_signal_val_binstr
    return lambda value: put_str(action, format(value, f"0{width}b"))


def bits_writer(handle):
    """A function writing a bit string (MSB first, ``len(handle)`` characters) to ``handle``
    at once: a wide bus whose values were formatted ahead of the cycle loop."""
    raw = _raw(handle)
    if raw is None:
        from cocotb.handle import Immediate
        from cocotb.types import LogicArray

        def write(bits):
            handle.value = Immediate(LogicArray(bits))
        return write
    put_str, action = raw.set_signal_val_binstr, _FAST.no_delay
    return lambda bits: put_str(action, bits)


@contextmanager
def gc_paused():
    """Python's cyclic garbage collector paused for a cycle loop (restored on exit, also on
    a failure). The loop allocates many small objects (records, tuples), so the collector
    runs often, and each run of its oldest generation walks every live object: the model's
    records of a run, hundreds of thousands. The loop builds no reference cycles (its
    objects are freed by reference counting as before), so pausing the collector loses
    nothing; it was 17 % of the mesh testbench's loop time (``make bench``: +21 % cycles/s)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


async def each_falling_edge(clk, body, cycles: int, period_ns: int = 10, *,
                            sample=None) -> int:
    """Call ``body(t)`` at the falling edges of ``clk``, t = 0, 1, ... up to ``cycles - 1``,
    until it returns True; returns the number of calls, re-raises what ``body`` raised.

    With ``sample``, ``body(t)`` only drives, and ``sample(t)`` runs in the read-only phase
    of the same time step (the DUT settled on what ``body`` wrote: outputs that follow the
    inputs combinationally are this cycle's) and returns True to stop; the count is of the
    samples, and the task resumes in that read-only phase (it may read; what drives next
    waits for a falling edge).

    ``body`` runs in the simulator's own value-change callback, re-armed from inside it:
    no cocotb trigger, task switch or event-loop pass per cycle (about 4 % of the mesh bench's
    loop). t = 0 is the next falling edge. The task waits on an event the last call sets
    (the call that stops, fails or is the ``cycles``-th): it resumes in that falling edge's
    time step, as after ``await FallingEdge(clk)``, so what follows continues from the edge
    the loop ended at, with no idle cycle after an early stop. If the task is cancelled,
    the chain is not re-armed: nothing drives the DUT after it. ``period_ns`` is unused
    (kept for callers that pass it).

    Where this cocotb lacks the private parts that takes (:func:`cocotb_internals`), the
    same calls run in the task, each after ``await FallingEdge(clk)`` (and ``await
    ReadOnly()`` before ``sample``), with one warning line in the log."""
    if cycles <= 0:
        return 0
    raw = getattr(clk, "_handle", None) if _FAST is not None else None
    if raw is None:
        _warn_slow(_WHY_SLOW or f"{clk!r} has no attribute '_handle'")
        return await _each_falling_edge_awaited(clk, body, cycles, sample)
    from cocotb.triggers import Event, FallingEdge, ReadOnly
    fast = _FAST
    calls, alive, error = 0, True, None
    done, edge = Event(), FallingEdge(clk)

    def arm():
        if fast.on_value_change(raw, callback, fast.falling) is None:
            raise RuntimeError(f"cannot set a falling-edge callback on {clk!r}")

    def callback():
        nonlocal calls, error
        if not alive:
            return
        t = calls
        try:
            if sample is not None:
                body(t)
                if fast.on_readonly(sampled) is None:
                    raise RuntimeError("cannot set a read-only callback")
                return
            calls += 1
            stop = body(t)
            if not stop and calls < cycles:
                arm()
                return
        except BaseException as e:       # noqa: BLE001 -- re-raised in the test's task
            error = e
        done.set()
        fast.wake(edge)

    def sampled():
        nonlocal calls, error
        if not alive:
            return
        t = calls
        calls += 1
        try:
            if not sample(t) and calls < cycles:
                arm()
                return
        except BaseException as e:       # noqa: BLE001 -- re-raised in the test's task
            error = e
        done.set()
        fast.wake(ReadOnly())

    arm()
    try:
        await done.wait()
    finally:
        alive = False
    if error is not None:
        raise error
    return calls


async def _each_falling_edge_awaited(clk, body, cycles: int, sample=None) -> int:
    """:func:`each_falling_edge` on cocotb's public triggers: one ``FallingEdge`` (and one
    ``ReadOnly`` with ``sample``) awaited per cycle, ``body`` and ``sample`` called in the
    task."""
    from cocotb.triggers import FallingEdge, ReadOnly
    edge = FallingEdge(clk)
    calls = 0
    while calls < cycles:
        await edge
        t = calls
        if sample is None:
            calls += 1
            if body(t):
                break
            continue
        body(t)
        await ReadOnly()
        calls += 1
        if sample(t):
            break
    return calls


def start_clock(clk, period_ns: int = 10):
    """The clock in the simulator (no Python per edge); returns the started Clock."""
    from cocotb.clock import Clock
    clock = Clock(clk, period_ns, unit="ns", impl="gpi")
    clock.start()
    return clock


def bits_to_array(strings: list[str], width: int) -> np.ndarray:
    """Bit strings (MSB first) -> uint8 array (rows, width), column k = bit k."""
    if not strings:
        return np.zeros((0, width), dtype=np.uint8)
    flat = np.frombuffer("".join(strings).encode("ascii"), dtype=np.uint8)
    bits = (flat.reshape(len(strings), width) - ord("0"))[:, ::-1]
    if (bits > 1).any():
        row = int(np.argwhere((bits > 1).any(axis=1))[0, 0])
        raise AssertionError(f"an undefined bit (X/Z) in {strings[row]!r}")
    return bits


def field_values(bits: np.ndarray, lo: int, width: int) -> np.ndarray:
    """Unsigned field ``[lo, lo + width)`` of each row of a bit array, as int64."""
    weights = np.left_shift(np.int64(1), np.arange(width, dtype=np.int64))
    return bits[:, lo:lo + width].astype(np.int64) @ weights


def _int(payload) -> int:
    """A payload recorded as an int or as its bit string."""
    return int(payload, 2) if isinstance(payload, str) else int(payload)


class StreamLog:
    """The stream rules of :class:`cosim.stream.StreamMonitor`, checked in batches.

    ``record(cycle, rst, valid, ready, payload)`` once a cycle (cycles consecutive from the
    first record): one small integer per cycle, and the payload only where the rules need it
    (``valid`` high and ``ready`` low, and the cycle after), as an int or as its bit string.
    ``check()`` tests the cycles recorded since the last check and raises
    :class:`~cosim.stream.ProtocolError` for the first violation, with the monitor's message
    (stream, cycle, signal). ``beats`` counts the handshakes checked (up to the failing
    cycle when one fails, as the per-cycle monitor counts them).
    """

    def __init__(self, name: str, every: int = 512) -> None:
        self.name, self.every = name, every
        self.codes: list[int] = []        # rst | valid << 1 | ready << 2, one per cycle
        self.payloads: dict[int, int] = {}
        self.first = None                 # cycle of codes[0]
        self.prev = None                  # (code, payload) of the cycle before codes[0]
        self.beats = 0
        self._wait = False                # the last cycle recorded had valid and not ready

    def record(self, cycle: int, rst: int, valid: int, ready: int, payload=None) -> None:
        """``payload``: the value, or a function returning it (read only where needed)."""
        if self.first is None:
            self.first = cycle
        self.codes.append(rst | valid << 1 | ready << 2)
        wait = valid and not ready and not rst
        if valid and (wait or self._wait) and not rst:
            self.payloads[cycle] = payload() if callable(payload) else payload
        self._wait = wait
        if len(self.codes) >= self.every:
            self.check()

    def gap(self, cycles: int) -> None:
        """The next ``cycles`` cycles go unrecorded (the simulator runs alone, the stream's
        ``valid`` held low by its caller): what was recorded is checked now, and the next
        record is the cycle after the gap (the rules across it taken as kept)."""
        self.check()
        if self.first is not None:
            self.first += cycles

    def _fail(self, cycle, signal, what):
        raise ProtocolError(f"stream {self.name!r}, cycle {cycle}: {self.name}__{signal} "
                            f"{what}")

    def check(self) -> None:
        """Check every cycle recorded since the last check."""
        if not self.codes:
            return
        codes = np.asarray(self.codes, dtype=np.uint8)
        rst, valid, ready = codes & 1, codes >> 1 & 1, codes >> 2 & 1
        # the previous cycle's code (none before the very first record: no beat waited)
        before = np.empty_like(codes)
        before[1:] = codes[:-1]
        before[0] = self.prev[0] if self.prev is not None else 1   # "in reset": nothing waits
        waited = ((before & 1) == 0) & ((before >> 1 & 1) == 1) & ((before >> 2 & 1) == 0)
        in_reset = rst == 1
        # valid must be low once a rising edge has taken the reset: in a cycle whose reset was
        # also driven in the cycle before (the first cycle of a reset still shows the outputs
        # of before it, as the first cycle recorded does)
        was_reset = np.empty_like(in_reset)
        was_reset[1:] = in_reset[:-1]
        was_reset[0] = bool(self.prev[0] & 1) if self.prev is not None else False
        bad_reset = in_reset & was_reset & (valid == 1)
        fell = ~in_reset & waited & (valid == 0)
        # payload changes: only where a beat waited and valid stayed high (few cycles)
        changed = np.zeros_like(fell)
        for k in np.flatnonzero(~in_reset & waited & (valid == 1)):
            cycle = self.first + int(k)
            old = self.payloads.get(cycle - 1) if k else (self.prev[1] if self.prev else None)
            if self.payloads.get(cycle) != old:
                changed[k] = True
        bad = bad_reset | fell | changed
        beats = ~in_reset & (valid == 1) & (ready == 1)
        if bad.any():
            k = int(np.argmax(bad))
            cycle = self.first + k
            self.beats += int(beats[:k].sum())    # as the per-cycle monitor: up to the cycle
            if bad_reset[k]:
                self._fail(cycle, "valid", "is high during reset")
            if fell[k]:
                self._fail(cycle, "valid", "fell before the beat was taken (ready was low)")
            old = self.payloads.get(cycle - 1) if k else self.prev[1]
            self._fail(cycle, "payload", f"changed while valid and not ready: "
                       f"{_int(old):#x} -> {_int(self.payloads[cycle]):#x}")
        self.beats += int(beats.sum())
        last = self.first + len(self.codes) - 1
        self.prev = (int(codes[-1]), self.payloads.get(last))
        self.first = last + 1
        self.codes = []
        self.payloads = {c: p for c, p in self.payloads.items() if c == last}
