"""The BvN engine's co-simulation as it was before the batched testbench (kept unchanged for
``make bench``, which times it against ``cosim/test_bvn.py`` in the same run: two triggers
per clock, a Python clock, each output checked in the cycle it appears). Not run by the
regression. Changed only to draw the seeds cocotb gives the new module's tests (``_seed``)
and to report the cycle loop's CPU seconds beside its wall seconds (``cpu_seconds``).

cocotb testbench: the BvN engine RTL against ``decompose(d, "wavefront")``.

A frame driver loads matrices through the ``load`` stream (random idle cycles between beats);
a step monitor drains the ``steps`` stream under random back-pressure (always ready, random
ready, long stalls). Every step is compared with the golden model's step of the same index
(permutation, weight, last), and an invariant checker asserts on the RTL output alone: each
permutation is a partial matching over entries still nonzero, maximal over them; weights are
positive and no larger than any matched residual; the steps sum to the loaded matrix; ``last``
is on the final step only and ``done`` follows it. Bad frames (too few beats, too many beats,
an entry wider than W) must raise their error flag and emit no step.

Stimulus per N: 200 random matrices (density 2% .. 100%; entries small, large or log-uniform
up to 2**W - 1), 100 Chronos MoE matrices (``moe_traffic_matrix`` in tokens, scaled into W
bits when needed) and 100 slot-quantised MoE byte matrices (``quantize`` to a budget of 64 ..
512 slots, the budgets whose counts fit W bits), interleaved with the zero matrix, the
all-maximum matrix and bad frames. The CI step budget (``AIFABRIC_TRANSACTIONS``) thins the
random and MoE matrices only; every quantised matrix is always checked.
"""

from __future__ import annotations

import hashlib
import os
import time

import cocotb
import numpy as np
from cocotb.clock import Clock

from aifabric.cosim.codec import LANE_BITS, decode_step, dest_bits, encode_row
from aifabric.cosim.stats import CycleMeter, block_params, record_stats
from aifabric.cosim.stream import ClockCycle, ProtocolError, StreamMonitor, StreamSink, StreamSource
from aifabric.models.chronos.bvn import decompose, quantize
from aifabric.models.chronos.experiments import QUANT_BUDGETS
from aifabric.models.chronos.moe import moe_traffic_matrix

RANDOM_MATRICES = 200
MOE_MATRICES = 100
QUANTISED_MATRICES = 100
DENSITIES = (0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
# Sparse matrices are drawn more often than dense ones: a dense N = 64 matrix takes ~N² steps,
# so an even mix would spend most of the regression's time on a few dense matrices.
DENSITY_WEIGHTS = (0.2, 0.2, 0.2, 0.2, 0.1, 0.1)
ERRORS = {"short": 0b001, "long": 0b010, "overflow": 0b100}
BACK_TO_BACK = 24   # matrices queued back to back

def _seed(test: str) -> int:
    """The seed cocotb gives ``cosim.test_bvn.<test>`` (it hashes a test's module and name into its
    seed), so that this copy draws the same stimulus as the testbench it is timed against."""
    own = int(hashlib.sha1(f"{__name__}.{test}".encode()).hexdigest(), 16)
    theirs = int(hashlib.sha1(f"aifabric.cosim.test_bvn.{test}".encode()).hexdigest(), 16)
    return cocotb.RANDOM_SEED - own + theirs



def load_rows() -> int:
    """Matrix rows per load beat: the block's ``rows`` parameter (its default, 1, when the
    parameter set leaves it out)."""
    return int(block_params().get("rows", 1))


def dims(dut) -> tuple[int, int]:
    n = (len(dut.load__payload) - 1) // LANE_BITS // load_rows()
    w = len(dut.steps__payload) - n * dest_bits(n) - n - 1
    return n, w


def random_matrix(rng: np.random.Generator, n: int, w: int) -> np.ndarray:
    density = DENSITIES[rng.choice(len(DENSITIES), p=DENSITY_WEIGHTS)]
    top = (1 << w) - 1
    kind = rng.integers(3)
    if kind == 0:    # small entries: many equal minima, many entries empty together
        values = rng.integers(1, 8, (n, n))
    elif kind == 1:  # large entries up to the widest W-bit value
        values = rng.integers(top // 2, top, (n, n), endpoint=True)
    else:            # log-uniform: every magnitude
        values = np.exp2(rng.uniform(0, w, (n, n))).astype(np.int64).clip(1, top)
    return np.where(rng.random((n, n)) < density, values, 0).astype(np.int64)


def moe_matrix(rng: np.random.Generator, n: int, w: int) -> np.ndarray:
    d = moe_traffic_matrix(n, rng, unit="tokens")
    top = (1 << w) - 1
    if d.max() > top:  # keep the shape, fit the width: scale, keep nonzero entries nonzero
        d = np.where(d > 0, np.maximum(1, d * top // d.max()), 0)
    return d.astype(np.int64)


def quantised_matrix(rng: np.random.Generator, n: int, w: int) -> np.ndarray:
    """A MoE byte matrix in slot counts, at a budget drawn from the ones whose counts fit W
    bits (an entry is at most its line sum, so at most the budget)."""
    budgets = [b for b in QUANT_BUDGETS if b < 1 << w]
    return quantize(moe_traffic_matrix(n, rng, unit="bytes"), int(rng.choice(budgets))).counts


def beats_of(mat: np.ndarray, rows: int = 1) -> list[tuple[list[int], bool]]:
    """The load beats of ``mat`` in the documented order: ``rows`` rows per beat, lane
    k N + j of beat b = entry (b R + k, j); ``last`` on the final beat."""
    n = len(mat)
    flat = [int(v) for v in np.asarray(mat).reshape(-1)]
    return [(flat[b * rows * n:(b + 1) * rows * n], b == n // rows - 1)
            for b in range(n // rows)]


def frames(rng: np.random.Generator, n: int, w: int, random_count: int, moe_count: int,
           quantised_count: int = 0, rows: int = 1):
    """(kind, matrix, beats, expected error) in a shuffled order; a few bad frames and the
    corner matrices mixed in."""
    items = [("random", random_matrix(rng, n, w)) for _ in range(random_count)]
    items += [("moe", moe_matrix(rng, n, w)) for _ in range(moe_count)]
    items += [("quantised", quantised_matrix(rng, n, w)) for _ in range(quantised_count)]
    items += [("zero", np.zeros((n, n), dtype=np.int64)),
              ("full", np.full((n, n), (1 << w) - 1, dtype=np.int64))]
    items += [(bad, random_matrix(rng, n, w)) for bad in ERRORS for _ in range(2)]
    order = rng.permutation(len(items))
    for k in order:
        kind, mat = items[k]
        beats = beats_of(mat, rows)
        error = ERRORS.get(kind, 0)
        if kind == "short" and len(beats) > 1:
            cut = int(rng.integers(1, len(beats)))
            beats = beats[:cut - 1] + [(beats[cut - 1][0], True)]
        elif kind == "short":
            error = 0  # one beat per matrix: a frame cannot end early
        elif kind == "long":
            extra = int(rng.integers(1, 4))
            beats = [(v, False) for v, _ in beats] + \
                [(beats[e % len(beats)][0], e == extra - 1) for e in range(extra)]
        elif kind == "overflow" and w < LANE_BITS:
            b, j = int(rng.integers(len(beats))), int(rng.integers(rows * n))
            beats[b][0][j] = int(rng.integers(1 << w, 1 << LANE_BITS))
        elif kind == "overflow":
            error = 0  # W = 32: every lane value fits
        yield kind, mat, beats, error


class StepChecker:
    """Invariants on the RTL's steps alone, against the matrix that was loaded."""

    def __init__(self, matrix: np.ndarray) -> None:
        self.resid = matrix.astype(np.int64).copy()
        self.n = len(matrix)
        self.count = 0

    def check(self, perm: list[int], weight: int, last: bool) -> None:
        where = f"step {self.count}"
        rows = [i for i, j in enumerate(perm) if j >= 0]
        cols = [perm[i] for i in rows]
        assert rows, f"{where}: empty permutation"
        assert len(set(cols)) == len(cols), f"{where}: output used twice: {perm}"
        matched = self.resid[rows, cols]
        assert (matched > 0).all(), f"{where}: matched an empty entry: {perm}"
        assert 0 < weight <= matched.min(), f"{where}: weight {weight} vs {matched.min()}"
        free_rows = np.ones(self.n, dtype=bool)
        free_cols = np.ones(self.n, dtype=bool)
        free_rows[rows] = False
        free_cols[cols] = False
        left = self.resid[np.ix_(free_rows, free_cols)]
        assert not (left > 0).any(), f"{where}: not maximal, a nonzero entry left unmatched"
        self.resid[rows, cols] -= weight
        assert last == (not self.resid.any()), f"{where}: last={last}, residual sum " \
                                               f"{self.resid.sum()}"
        self.count += 1


class Harness:
    """The engine's two streams through ``cosim.stream``: a source on ``load`` (random idle
    cycles), a sink on ``steps`` (random back-pressure) and a protocol monitor on each, all
    stepped once per clock by one :class:`~cosim.stream.ClockCycle`. Payloads are encoded and
    decoded with ``cosim.codec`` (the documented layout), not with the RTL's helpers."""

    def __init__(self, dut, rng: np.random.Generator) -> None:
        self.dut, self.rng = dut, rng
        self.n, self.w = dims(dut)
        self.rows = load_rows()
        self.source = StreamSource(dut, "load", rng)
        self.sink = StreamSink(dut, "steps", rng)
        self.monitors = [StreamMonitor(dut, "load", dut.rst), StreamMonitor(dut, "steps", dut.rst)]
        self.clock = ClockCycle(dut.clk, [self.source, self.sink, *self.monitors])
        self.meter = CycleMeter(10)

    async def reset(self) -> None:
        for rst in (1, 1, 0):
            await self.clock.drive()
            self.dut.rst.value = rst
            await self.clock.sample()

    def send(self, beats) -> None:
        self.source.send(encode_row(values, last) for values, last in beats)

    def steps(self, since: int = 0):
        return [decode_step(word, self.n, self.w) for _, word in self.sink.beats[since:]]

    async def run_frame(self, beats, *, gap_p: float, ready_p: float, expect_steps: bool,
                        limit: int):
        """Send one frame, collect its steps until ``done`` (or an error flag when no step is
        expected); return (steps, cycle the first beat was taken, cycle of the last step)."""
        dut, since, sent = self.dut, len(self.sink.beats), len(self.source.sent)
        self.source.gap_p, self.sink.ready_p = gap_p, ready_p
        self.send(beats)
        settled = False
        for _ in range(limit):
            await self.clock.step()
            if not self.source.idle:
                assert not int(dut.steps__valid.value), "a step appeared during a load"
                continue
            if not settled:
                # The last beat's handshake was sampled this cycle; the engine registers it at
                # the next rising edge. Until then done/error still show the previous frame
                # (a one-beat frame would otherwise be judged by its predecessor's flags).
                settled = True
                continue
            valid = int(dut.steps__valid.value)
            if not valid and (int(dut.done.value) or
                              (not expect_steps and int(dut.error.value.to_unsigned()))):
                first = self.source.sent[sent][0]
                last = self.sink.beats[-1][0] if len(self.sink.beats) > since else None
                return self.steps(since), first, last
        raise AssertionError(f"no done after {limit} cycles "
                             f"({len(self.sink.beats) - since} steps received)")


@cocotb.test()
async def decompositions(dut):
    """Random and MoE matrices step for step against the golden model, with back-pressure."""
    n, w = dims(dut)
    rng = np.random.default_rng(_seed("decompositions"))
    budget = int(os.environ.get("AIFABRIC_TRANSACTIONS", 0)) or None
    dut._log.info("n=%d w=%d seed=%d", n, w, _seed("decompositions"))
    Clock(dut.clk, 10, unit="ns").start()
    h = Harness(dut, rng)
    await h.reset()

    steps_total, beats_total = 0, 0
    checked, start = {"random": 0, "moe": 0, "quantised": 0}, time.perf_counter()
    start_cpu = time.process_time()
    moe_cycles, quantised_cycles = [], []
    for kind, mat, beats, error in frames(rng, n, w, RANDOM_MATRICES, MOE_MATRICES,
                                          QUANTISED_MATRICES, h.rows):
        if budget is not None and steps_total >= budget and kind in ("random", "moe"):
            continue
        ready_p = float(rng.choice([1.0, 1.0, 0.9, 0.5]))
        gap_p = float(rng.choice([0.0, 0.0, 0.3]))
        beats_total += len(beats)
        if error:
            steps, _, _ = await h.run_frame(beats, gap_p=gap_p, ready_p=ready_p,
                                            expect_steps=False, limit=50 + 4 * len(beats))
            assert not steps, f"{kind} frame: {len(steps)} steps emitted"
            got = int(dut.error.value.to_unsigned())
            assert got == error, f"{kind} frame: error flags {got:03b}, expected {error:03b}"
            assert not int(dut.done.value), f"{kind} frame: done raised"
            continue
        expect = decompose(mat, "wavefront")
        limit = int(4 * (len(expect) + 10) / ready_p) + 4 * n + 100
        try:
            steps, first, last_cycle = await h.run_frame(beats, gap_p=gap_p, ready_p=ready_p,
                                                         expect_steps=True, limit=limit)
        except AssertionError as e:
            raise AssertionError(f"{kind} matrix: {e}") from None
        assert int(dut.error.value.to_unsigned()) == 0
        checker = StepChecker(mat)
        for k, (perm, weight, last) in enumerate(steps):
            checker.check(perm, weight, last)
            if k < len(expect):
                p, wt = expect.perms[k], int(expect.weights[k])
                assert perm == p.tolist() and weight == wt, (
                    f"{kind} matrix, step {k}: RTL {perm} x{weight}, model {p.tolist()} x{wt}")
        assert len(steps) == len(expect), f"{kind}: {len(steps)} steps, model {len(expect)}"
        assert not checker.resid.any(), "steps do not sum to the loaded matrix"
        if kind in checked:
            checked[kind] += 1
        if kind in ("moe", "quantised") and ready_p == 1.0 and gap_p == 0.0 and steps:
            (moe_cycles if kind == "moe" else quantised_cycles).append(last_cycle - first + 1)
        steps_total += len(steps)
        done_count = sum(checked.values())
        if done_count % 50 == 0 and kind in checked:
            dut._log.info("%d of %d matrices, %d steps, %.0f s", done_count,
                          RANDOM_MATRICES + MOE_MATRICES + QUANTISED_MATRICES, steps_total,
                          time.perf_counter() - start)
    elapsed = time.perf_counter() - start
    assert checked["quantised"] == QUANTISED_MATRICES, checked
    if budget is None:
        assert checked == {"random": RANDOM_MATRICES, "moe": MOE_MATRICES,
                           "quantised": QUANTISED_MATRICES}, checked
    assert h.monitors[0].beats == beats_total and h.monitors[1].beats == steps_total
    dut._log.info("%d steps of %s matrices checked in %.1f s (%d cycles)",
                  steps_total, checked, elapsed, h.meter.cycles)
    # transactions: handshakes on both streams (load beats and steps), as the monitors saw them
    record_stats("decompositions", transactions=h.monitors[0].beats + h.monitors[1].beats,
                 cycles=h.meter.cycles, seconds=elapsed,
                 cpu_seconds=time.process_time() - start_cpu, steps=steps_total, matrices=checked,
                 moe_cycles=moe_cycles, quantised_cycles=quantised_cycles)


@cocotb.test()
async def back_to_back_frames(dut):
    """Frames queued back to back (the next frame offered while the previous matrix's final
    step still waits under back-pressure): every matrix is decomposed step for step and
    ``done`` rises once per matrix."""
    n, w = dims(dut)
    rng = np.random.default_rng(_seed("back_to_back_frames") + 2)
    Clock(dut.clk, 10, unit="ns").start()
    h = Harness(dut, rng)
    await h.reset()
    mats = [random_matrix(rng, n, min(w, 6)) for _ in range(BACK_TO_BACK)]
    mats[len(mats) // 2] = np.zeros((n, n), dtype=np.int64)     # no step, still a done
    for mat in mats:
        h.send(beats_of(mat, h.rows))
    h.source.gap_p, h.sink.ready_p = 0.1, 0.6
    expects = [decompose(mat, "wavefront") for mat in mats]
    dones, was_done = 0, False    # done is low after reset (no matrix loaded yet)
    idle_before = False
    overlaps = 0                  # cycles a new frame waits behind an untaken final step
    limit = sum(4 * (len(e) + n + 10) for e in expects) + 1000
    for _ in range(limit):
        await h.clock.step()
        done = bool(int(dut.done.value))
        dones += done and not was_done
        if int(dut.load__valid.value) and not int(dut.load__ready.value) \
                and int(dut.steps__valid.value) and decode_step(
                    int(dut.steps__payload.value.to_unsigned()), n, w)[2]:
            overlaps += 1
        was_done = done
        # idle at the previous sample too: the last beat's handshake has been registered
        if idle_before and done and not int(dut.steps__valid.value):
            break
        idle_before = h.source.idle
    else:
        raise AssertionError(f"not finished after {limit} cycles")
    got, current = [], []
    for step in h.steps():
        current.append(step)
        if step[2]:
            got.append(current)
            current = []
    nonzero = [(mat, e) for mat, e in zip(mats, expects) if len(e)]
    assert not current and len(got) == len(nonzero), (len(got), len(nonzero))
    for k, (steps, (mat, expect)) in enumerate(zip(got, nonzero)):
        assert [(p, wt) for p, wt, _ in steps] == \
            [(list(map(int, p)), int(wt)) for p, wt in expect], f"matrix {k}"
    assert dones == len(mats), f"done rose {dones} times for {len(mats)} matrices"
    assert overlaps >= 5, f"only {overlaps} cycles with a frame waiting behind a final step"
    record_stats("back_to_back_frames",
                 transactions=h.monitors[0].beats + h.monitors[1].beats, cycles=h.meter.cycles)


@cocotb.test()
async def stall_keeps_every_step(dut):
    """A long stall in the middle of a decomposition loses and repeats nothing, and the engine
    emits one step per cycle when the output is always ready."""
    n, w = dims(dut)
    rng = np.random.default_rng(_seed("stall_keeps_every_step") + 1)
    Clock(dut.clk, 10, unit="ns").start()
    h = Harness(dut, rng)
    await h.reset()
    mat = rng.integers(1, 1 << min(w, 12), (n, n))
    expect = decompose(mat, "wavefront")
    h.send(beats_of(mat, h.rows))
    stalled_from = None
    while True:  # accept every cycle except a 3n-cycle stall after the third step
        taken = len(h.sink.beats)
        stall = taken == 3 and (stalled_from is None or h.clock.count - stalled_from < 3 * n)
        if taken == 3 and stalled_from is None:
            stalled_from = h.clock.count
        h.sink.enabled = not stall
        await h.clock.step()
        if int(dut.done.value) and not int(dut.steps__valid.value):
            break
    got = h.steps()
    assert [s[0] for s in got] == expect.perms.tolist()
    assert [s[1] for s in got] == expect.weights.tolist()
    gaps = np.diff([c for c, _ in h.sink.beats])
    assert (gaps[:2] == 1).all() and (gaps[3:] == 1).all(), f"not one step per cycle: {gaps}"
    assert gaps[2] >= 3 * n, f"the stall did not hold the output: {gaps[2]}"
    record_stats("stall_keeps_every_step", transactions=len(got), cycles=h.meter.cycles)


@cocotb.test()
async def monitor_catches_a_dropped_beat(dut):
    """The protocol monitor is live: a source that withdraws a beat before it is taken (valid
    falls while ready is low) fails with the stream, the cycle and the signal named."""
    n, _ = dims(dut)
    Clock(dut.clk, 10, unit="ns").start()
    h = Harness(dut, np.random.default_rng(0))
    await h.reset()
    monitor = h.monitors[0]
    h.sink.ready_p = 0.0
    # a full frame of an all-ones matrix: the final step waits, so load.ready stays low after
    mat = np.ones((n, n), dtype=np.int64)
    h.send(beats_of(mat, h.rows))
    while not (h.source.idle and int(dut.steps__valid.value)):
        await h.clock.step()
    h.send([([1] * n * h.rows, False)])
    await h.clock.step()
    assert int(dut.load__valid.value) and not int(dut.load__ready.value)
    h.source.current = None            # withdraw the beat: a protocol violation
    try:
        await h.clock.step()
    except ProtocolError as e:
        message = str(e)
    else:
        raise AssertionError("the monitor missed valid falling before ready")
    assert "stream 'load'" in message and "load__valid" in message and \
        f"cycle {h.clock.count}" in message, message
    assert monitor.beats == n // h.rows
    record_stats("monitor_catches_a_dropped_beat", transactions=monitor.beats,
                 cycles=h.meter.cycles)
