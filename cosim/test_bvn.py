"""cocotb testbench: the BvN engine RTL against ``decompose(d, "wavefront")``.

A frame driver loads matrices through the ``load`` stream (random idle cycles between beats);
a step monitor drains the ``steps`` stream under random back-pressure (always ready, random
ready, long stalls). Every step is compared with the golden model's step of the same index
(permutation, weight, last), and an invariant checker asserts on the RTL output alone: each
permutation is a partial matching over entries still nonzero, maximal over them; weights are
positive and no larger than any matched residual; the steps sum to the loaded matrix; ``last``
is on the final step only and ``done`` follows it. Bad frames (too few beats, too many beats,
an entry wider than W) must raise their error flag and emit no step: the flags read 0 from
the cycle after a frame's first beat is taken to the cycle its last beat is taken, and the
frame's flag from the cycle after. Frames queued back to back load into the engine's second
bank while the matrix before them runs: a stream with the output always ready is timed cycle
for cycle against the golden model's ``engine_cycles``. The boundaries are drawn on purpose:
a short frame ending after its first beat and one a beat early, long frames one and three
beats too long, 2^W in the last lane of the last beat and 2^32 - 1 in the first lane of the
first (the full matrix sends 2^W - 1).

Stimulus per N: 200 random matrices (300 below N = 8; density 2% .. 100%; entries small,
large or log-uniform up to 2**W - 1), 100 Chronos MoE matrices (``moe_traffic_matrix`` in tokens, scaled into W
bits when needed) and 100 slot-quantised MoE byte matrices (``quantize`` to a budget of 64 ..
512 slots, the budgets whose counts fit W bits), interleaved with the zero matrix, the
all-maximum matrix and bad frames. The CI step budget (``AIFABRIC_TRANSACTIONS``) thins the
random and MoE matrices only; every quantised matrix is always checked.

On ``cosim.testbench`` (one simulator callback a clock, at the falling edge): the engine's
registered outputs are read, then a ``StreamSource`` drives the next beat, a ``StreamSink``
the ``ready`` (the random draws of ``cosim.stream``'s components, in the same order) and
takes each step payload as its bit string, and a ``StreamMonitor`` after each records its
stream. The step checks run in numpy every 256 steps and at the end of each frame
(``cosim.batch_bvn.StepBatch``), the stream rules every 512 cycles (``cosim.batch.StreamLog``);
a failure names the cycle it happened in.
"""

from __future__ import annotations

import os
import time

import cocotb
import numpy as np

from aifabric.cosim.batch import BatchFailure, ProtocolError, bits_to_array
from aifabric.cosim.batch_bvn import StepBatch, decode_steps
from aifabric.cosim.codec import LANE_BITS, dest_bits, encode_row, step_bits
from aifabric.cosim.stats import block_params
from aifabric.cosim.testbench import StreamMonitor, StreamSink, StreamSource, Testbench
from aifabric.rtl.chronos.bvn import BvnEngine
from aifabric.models.chronos.bvn import decompose, quantize
from aifabric.models.chronos.experiments import QUANT_BUDGETS
from aifabric.models.chronos.setting import engine_cycles
from aifabric.models.chronos.moe import moe_traffic_matrix

RANDOM_MATRICES = 200


def random_matrices(n: int) -> int:
    """Random matrices per run: 200, and half as many again below N = 8, where a matrix is
    a few steps (the regression checks at least 10,000 handshakes per parameter set)."""
    return RANDOM_MATRICES if n >= 8 else RANDOM_MATRICES * 3 // 2
MOE_MATRICES = 100
QUANTISED_MATRICES = 100
DENSITIES = (0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
# Sparse matrices are drawn more often than dense ones: a dense N = 64 matrix takes ~N² steps,
# so an even mix would spend most of the regression's time on a few dense matrices.
DENSITY_WEIGHTS = (0.2, 0.2, 0.2, 0.2, 0.1, 0.1)
ERRORS = {"short": 0b001, "long": 0b010, "overflow": 0b100}
BACK_TO_BACK = 22   # matrices queued back to back
HELD = 3           # final steps held on purpose among them
STREAM = 8          # quantised matrices streamed with the output always ready


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
    # the overflow boundary on purpose: 2^W itself (one past the largest value, 2^W - 1,
    # which the "full" matrix sends) and the lane's maximum, then one drawn between them
    items.append(("overflow", random_matrix(rng, n, w)))
    over = iter([1 << w, (1 << LANE_BITS) - 1])
    # and where they sit: 2^W in the last lane of the last beat, the lane's maximum in the
    # first lane of the first beat, the drawn value anywhere
    where = iter([(-1, -1), (0, 0)])
    # the frame-length boundaries: a short frame ending after its first beat and one ending a
    # beat early; a long frame one beat too long and one three beats too long
    cuts, extras = iter([1, -1]), iter([1, 3])
    order = rng.permutation(len(items))
    for k in order:
        kind, mat = items[k]
        beats = beats_of(mat, rows)
        error = ERRORS.get(kind, 0)
        if kind == "short" and len(beats) > 1:
            cut = next(cuts, None) or int(rng.integers(1, len(beats)))
            cut %= len(beats)
            beats = beats[:cut - 1] + [(beats[cut - 1][0], True)]
        elif kind == "short":
            error = 0  # one beat per matrix: a frame cannot end early
        elif kind == "long":
            extra = next(extras)
            beats = [(v, False) for v, _ in beats] + \
                [(beats[e % len(beats)][0], e == extra - 1) for e in range(extra)]
        elif kind == "overflow" and w < LANE_BITS:
            b, j = next(where, None) or (int(rng.integers(len(beats))),
                                         int(rng.integers(rows * n)))
            beats[b][0][j] = next(over, None) or int(rng.integers(1 << w, 1 << LANE_BITS))
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
        assert all(j < self.n for j in cols), f"{where}: output out of range: {perm}"
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


StepFailure = BatchFailure     # a step check failed: the message names the cycle first


class Outputs:
    """The engine's registered outputs read at each falling edge (the bench's first
    component): ``load_ready``, ``steps_valid``; ``done`` must be low while a step waits;
    with ``flags`` a list, (cycle, error flags) of each cycle is appended to it."""

    def __init__(self, tb: "Harness") -> None:
        self.tb = tb
        self._load_ready = tb.load_bus.reader("ready")
        self._steps_valid = tb.steps_bus.reader("valid")
        self._done = tb.io.reader("done")
        self._error = tb.io.reader("error")
        self.load_ready = self.steps_valid = 0
        self.flags: list | None = None

    def edge(self, t: int) -> None:
        self.load_ready = self._load_ready()
        self.steps_valid = steps_valid = self._steps_valid()
        # done promises every step of the matrix taken: never while one still waits
        if steps_valid and self._done():
            raise AssertionError(f"cycle {t}: done is high while a step waits")
        if self.flags is not None:
            self.flags.append((t, self._error()))


class Harness(Testbench):
    """The engine on the testbench layer: a source on ``load`` (random idle cycles), a sink
    on ``steps`` (random back-pressure; each step taken, as its payload's bit string, goes
    to the frame's :class:`~cosim.batch_bvn.StepBatch`) and the stream rules on both
    (``logs``: ``load``, ``steps``). The draws of the source and the sink are those of
    ``cosim.stream.StreamSource``/``StreamSink``, in the same order. Payloads are encoded
    and decoded with ``cosim.codec``'s documented layout, not with the RTL's helpers.
    ``count``: the cycle last sampled (:attr:`Testbench.cycle`)."""

    def __init__(self, dut, rng: np.random.Generator | None = None, *, seed: int = 0,
                 every: int = 256) -> None:
        super().__init__(dut, BvnEngine, seed=seed)
        if rng is not None:
            self.rng = rng
        self.n, self.w = self.params["n"], self.params["w"]
        self.rows = int(self.params.get("rows", 1))
        assert (self.n, self.w) == dims(dut), "the ports' widths differ from the parameters"
        self.every = every
        self.io, self.load_bus, self.steps_bus = self.bus(), self.bus("load"), self.bus("steps")
        self.outputs = Outputs(self)
        self.check_readers()
        self.source = StreamSource(self.load_bus, self.rng)
        self.sink = StreamSink(self.steps_bus, self.rng, bits=True, tb=self,
                               on_beat=self._beat)
        self.monitors = [StreamMonitor(self.load_bus, self),
                         StreamMonitor(self.steps_bus, self)]
        # outputs first; each monitor after the driver of its stream; the source draws
        # before the sink (the order of the per-cycle components)
        self.add(self.outputs, self.source, self.monitors[0], self.sink, self.monitors[1])
        self.logs = [m.log for m in self.monitors]
        self.beats: list[tuple[int, str]] = []            # (cycle taken, payload bits)
        self.batch: StepBatch | None = None               # the frame's step checks
        self._steps_bits = self.steps_bus.bits_reader("payload")

    def check_readers(self) -> None:
        """The fast readers the components use agree with cocotb's value of the same handle
        (at the start, and in :meth:`finish`, where the engine has left its reset state)."""
        out = self.outputs
        for bus, name, fast in ((self.load_bus, "ready", out._load_ready),
                                (self.steps_bus, "valid", out._steps_valid),
                                (self.io, "done", out._done), (self.io, "error", out._error)):
            assert fast() == bus.read(name), \
                f"raw read of {bus.prefix or 'top'}.{name} differs from its value"

    def finish(self, test: str, **kw) -> None:
        self.check_readers()
        super().finish(test, **kw)

    def _beat(self, t: int, bits: str) -> None:
        self.beats.append((t, bits))
        if self.batch is not None:
            self.batch.add(t, bits)

    # the stimulus knobs and what the components saw, by their old names
    count = property(lambda self: self.cycle)
    idle = property(lambda self: self.source.idle)
    sent = property(lambda self: self.source.sent)
    load_valid = property(lambda self: self.source.valid)
    load_ready = property(lambda self: self.outputs.load_ready)
    steps_valid = property(lambda self: self.outputs.steps_valid)

    @property
    def current(self):
        return self.source.current

    @current.setter
    def current(self, value) -> None:
        self.source.current = value

    @property
    def flags(self):
        return self.outputs.flags

    @flags.setter
    def flags(self, value) -> None:
        self.outputs.flags = value

    def set_stimulus(self, *, gap_p: float | None = None, ready_p: float | None = None,
                     enabled: bool | None = None) -> None:
        if gap_p is not None:
            self.source.gap_p = gap_p
        if ready_p is not None:
            self.sink.ready_p = ready_p
        if enabled is not None:
            self.sink.enabled = enabled

    def done(self) -> int:
        return self.outputs._done()

    def error(self) -> int:
        return self.outputs._error()

    def check_streams(self) -> None:
        for m in self.monitors:
            m.check()

    def send(self, beats) -> None:
        self.source.send(encode_row(values, last) for values, last in beats)

    def steps(self, since: int = 0):
        """The steps taken since beat ``since``: (perm, weight, last) each."""
        words = [bits for _, bits in self.beats[since:]]
        if not words:
            return []
        perm, weight, last = decode_steps(bits_to_array(words, step_bits(self.n, self.w)),
                                          self.n, self.w)
        return [(p.tolist(), int(wt), bool(lst)) for p, wt, lst in zip(perm, weight, last)]

    def batch_for(self, mat: np.ndarray, expect, label: str) -> StepBatch:
        return StepBatch(mat, expect, self.n, self.w, label=label, checker=StepChecker,
                         every=self.every)

    async def run_frame(self, beats, *, gap_p: float, ready_p: float, expect_steps: bool,
                        limit: int, batch: StepBatch | None = None):
        """Send one frame, take its steps until ``done`` (or an error flag when no step is
        expected); with ``batch`` each step goes to its checks as it is taken. Returns (steps
        taken, cycle the first beat was taken, cycle of the last step)."""
        since, sent = len(self.beats), len(self.source.sent)
        self.set_stimulus(gap_p=gap_p, ready_p=ready_p)
        self.batch = batch
        self.send(beats)
        source, out = self.source, self.outputs
        settled = False
        finished = False

        def until(t: int) -> bool:
            nonlocal settled, finished
            if not source.idle:
                assert not out.steps_valid, f"cycle {self.cycle}: a step appeared during a load"
                return False
            if not settled:
                # The last beat's handshake was sampled this cycle; the engine registers it
                # at the next rising edge. Until then done/error still show the previous
                # frame (a one-beat frame would otherwise be judged by its predecessor's
                # flags).
                settled = True
                return False
            finished = not out.steps_valid and bool(
                out._done() or (not expect_steps and out._error()))
            return finished

        try:
            await self.run(None, limit, until=until)
        finally:
            self.batch = None
        if not finished:
            raise AssertionError(f"no done after {limit} cycles "
                                 f"({len(self.beats) - since} steps received)")
        first = self.source.sent[sent][0]
        last = self.beats[-1][0] if len(self.beats) > since else None
        return len(self.beats) - since, first, last


async def started(dut, rng=None, *, seed: int = 0) -> Harness:
    """A :class:`Harness` (drawing from ``rng``, else from the test's seed + ``seed``), out
    of reset."""
    h = Harness(dut, rng, seed=seed)
    await h.reset()
    return h


@cocotb.test()
async def decompositions(dut):
    """Random and MoE matrices step for step against the golden model, with back-pressure."""
    n, w = dims(dut)
    budget = int(os.environ.get("AIFABRIC_TRANSACTIONS", 0)) or None
    h = await started(dut)
    rng = h.rng
    h.log.info("n=%d w=%d; %s", n, w, h.seed_text())

    steps_total, beats_total = 0, 0
    checked, start = {"random": 0, "moe": 0, "quantised": 0}, time.perf_counter()
    start_cpu = time.process_time()
    moe_cycles, quantised_cycles = [], []
    randoms = random_matrices(n)
    for kind, mat, beats, error in frames(rng, n, w, randoms, MOE_MATRICES,
                                          QUANTISED_MATRICES, h.rows):
        if budget is not None and steps_total >= budget and kind in ("random", "moe"):
            continue
        ready_p = float(rng.choice([1.0, 1.0, 0.9, 0.5]))
        gap_p = float(rng.choice([0.0, 0.0, 0.3]))
        beats_total += len(beats)
        if error:
            h.flags = []
            count, first, _ = await h.run_frame(beats, gap_p=gap_p, ready_p=ready_p,
                                                expect_steps=False, limit=50 + 4 * len(beats))
            assert not count, f"{kind} frame: {count} steps emitted"
            got = h.error()
            assert got == error, f"{kind} frame: error flags {got:03b}, expected {error:03b}"
            assert not h.done(), f"{kind} frame: done raised"
            # the flags clear when the first beat is taken and the frame's rises in the
            # cycle after its last beat is taken, not before
            last = h.sent[-1][0]
            for c, flags in h.flags:
                if c > first:
                    assert flags == (error if c > last else 0), \
                        (f"cycle {c}: {kind} frame, beats taken {first}..{last}: error flags "
                         f"{flags:03b}")
            h.flags = None
            continue
        expect = decompose(mat, "wavefront")
        limit = int(4 * (len(expect) + 10) / ready_p) + 4 * n + 100
        batch = h.batch_for(mat, expect, f"{kind} matrix")
        try:
            count, first, last_cycle = await h.run_frame(beats, gap_p=gap_p, ready_p=ready_p,
                                                         expect_steps=True, limit=limit,
                                                         batch=batch)
        except StepFailure:
            raise
        except AssertionError as e:
            raise AssertionError(f"{kind} matrix: {e}") from None
        assert h.error() == 0
        batch.finish(h.count)
        h.beats.clear()                     # checked: the frame's payloads are not kept
        if kind in checked:
            checked[kind] += 1
        if kind in ("moe", "quantised") and ready_p == 1.0 and gap_p == 0.0 and count:
            (moe_cycles if kind == "moe" else quantised_cycles).append(last_cycle - first + 1)
        steps_total += count
        done_count = sum(checked.values())
        if done_count % 50 == 0 and kind in checked:
            h.log.info("%d of %d matrices, %d steps, %.0f s", done_count,
                          randoms + MOE_MATRICES + QUANTISED_MATRICES, steps_total,
                          time.perf_counter() - start)
    h.check_streams()
    elapsed = time.perf_counter() - start
    assert checked["quantised"] == QUANTISED_MATRICES, checked
    if budget is None:
        assert checked == {"random": randoms, "moe": MOE_MATRICES,
                           "quantised": QUANTISED_MATRICES}, checked
    assert h.logs[0].beats == beats_total and h.logs[1].beats == steps_total
    h.log.info("%d steps of %s matrices checked in %.1f s (%d cycles)",
                  steps_total, checked, elapsed, h.meter.cycles)
    # transactions: handshakes on both streams (load beats and steps), as the monitors saw them
    h.finish("decompositions", transactions=h.logs[0].beats + h.logs[1].beats,
             seconds=elapsed, cpu_seconds=time.process_time() - start_cpu, steps=steps_total,
             matrices=checked, moe_cycles=moe_cycles, quantised_cycles=quantised_cycles)


@cocotb.test()
async def back_to_back_frames(dut):
    """Frames queued back to back (the next frame offered while the previous matrix's final
    step still waits under back-pressure): every matrix is decomposed step for step and
    ``done`` rises once per matrix."""
    n, w = dims(dut)
    h = await started(dut, seed=2)
    rng = h.rng
    mats = [random_matrix(rng, n, min(w, 6)) for _ in range(BACK_TO_BACK)]
    mats[len(mats) // 2] = np.zeros((n, n), dtype=np.int64)     # no step, still a done
    for mat in mats:
        h.send(beats_of(mat, h.rows))
    h.set_stimulus(gap_p=0.1, ready_p=0.6)
    expects = [decompose(mat, "wavefront") for mat in mats]
    dones, was_done = 0, False    # done is low after reset (no matrix loaded yet)
    idle_before = False
    overlaps = 0                  # cycles a new frame waits behind an untaken final step
    during_run = 0                # load beats taken while a matrix is decomposed
    busy = h.io.reader("busy")
    finished = False
    # the corner drawn on purpose, not left to the draws: ready is held low from the step
    # before the final one of matrices 1, 3, 5 (by the golden step counts), until a frame
    # has waited 2 cycles behind that final step, or for ``hold_max`` cycles (long enough
    # for the frame loading into the second bank to finish: the one after it then waits)
    ends = np.cumsum([len(e) for e in expects if len(e)])     # steps taken at each end
    hold_max = 2 * (n // h.rows) + 20
    held, forced, hold, waited = 0, 0, 0, 0
    limit = sum(4 * (len(e) + n + 10) for e in expects) + HELD * hold_max + 1000

    def until(t: int) -> bool:
        nonlocal dones, was_done, idle_before, overlaps, during_run, finished
        nonlocal held, forced, hold, waited
        done = bool(h.done())
        dones += done and not was_done
        final = h.steps_valid and h._steps_bits()[0] == "1"    # ``last``: the top bit
        if h.load_valid and not h.load_ready and final:
            overlaps += 1
            waited += hold > 0
        if hold:
            hold -= 1
            if not hold or waited >= 2:
                forced += waited >= 2
                hold = 0
                h.set_stimulus(enabled=True)
        elif held < HELD and len(h.beats) == ends[2 * held + 1] - 1:
            held, hold, waited = held + 1, hold_max, 0
            h.set_stimulus(enabled=False)
        during_run += bool(h.load_valid and h.load_ready and busy())
        was_done = done
        # idle at the previous sample too: the last beat's handshake has been registered;
        # done rises between matrices too (before the next is copied out of the bank)
        finished = idle_before and dones == len(mats) and done and not h.steps_valid
        idle_before = h.idle
        return finished
    await h.run(None, limit, until=until)
    if not finished:
        raise AssertionError(f"not finished after {limit} cycles")
    h.check_streams()
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
    assert forced == HELD, f"a frame waited behind {forced} of {HELD} held final steps"
    assert overlaps >= 5, f"only {overlaps} cycles with a frame waiting behind a final step"
    # the second bank: frames load while the matrix before them is decomposed (small N has
    # many runs shorter than a load, so a fifth of the beats is the floor)
    beats = len(mats) * (n // h.rows)
    assert during_run >= beats // 5, f"only {during_run} of {beats} beats loaded during a run"
    h.finish("back_to_back_frames", transactions=h.logs[0].beats + h.logs[1].beats,
             beats_during_run=during_run, final_step_waits=overlaps)


@cocotb.test()
async def stream_hides_the_load(dut):
    """Slot-quantised MoE matrices streamed back to back with the output always ready and no
    idle cycle between beats, a one-step and the zero matrix among them: each frame loads into
    the second bank while the matrix before it runs, so a matrix occupies the engine exactly
    the golden model's ``engine_cycles(N, steps, R)`` = max(steps + 2, N / R) cycles (from
    ``busy`` rising, the cycle after its copy out of the bank, to the next matrix's); a
    stream pays its load once. Every step equals the model's; ``done`` rises once per
    matrix."""
    n, w = dims(dut)
    h = await started(dut, seed=4)
    rng = h.rng
    mats = [quantised_matrix(rng, n, w) for _ in range(STREAM)]
    mats[2] = np.zeros((n, n), dtype=np.int64)                  # no step: 2 cycles
    mats[5] = np.diag(np.arange(1, n + 1))                      # one step: the load's N / R
    expects = [decompose(mat, "wavefront") for mat in mats]
    for mat in mats:
        h.send(beats_of(mat, h.rows))
    h.set_stimulus(gap_p=0.0, ready_p=1.0)
    busy = h.io.reader("busy")
    rises, was_busy, dones, was_done = [], False, 0, False

    def until(t: int) -> bool:
        nonlocal was_busy, dones, was_done
        now = bool(busy())
        if now and not was_busy:
            rises.append(t)
        was_busy = now
        done = bool(h.done())
        dones += done and not was_done
        was_done = done
        return len(rises) == len(mats) and done and not h.steps_valid
    limit = sum(engine_cycles(n, len(e), h.rows) for e in expects) + 2 * n + 100
    await h.run(None, limit, until=until)
    h.check_streams()
    assert len(rises) == len(mats), f"{len(rises)} runs of {len(mats)} in {limit} cycles"
    want = [engine_cycles(n, len(e), h.rows) for e in expects[:-1]]
    assert np.diff(rises).tolist() == want, (np.diff(rises).tolist(), want)
    assert [(p, wt) for p, wt, _ in h.steps()] == \
        [(list(map(int, p)), int(wt)) for e in expects for p, wt in e]
    assert dones == len(mats), f"done rose {dones} times for {len(mats)} matrices"
    h.finish("stream_hides_the_load", transactions=h.logs[0].beats + h.logs[1].beats,
             cycles_per_matrix=want)


@cocotb.test()
async def stall_keeps_every_step(dut):
    """A long stall in the middle of a decomposition loses and repeats nothing, and the engine
    emits one step per cycle when the output is always ready."""
    n, w = dims(dut)
    h = await started(dut, seed=1)
    rng = h.rng
    mat = rng.integers(1, 1 << min(w, 12), (n, n))
    expect = decompose(mat, "wavefront")
    h.send(beats_of(mat, h.rows))
    stalled_from = None

    def body(t: int) -> None:   # accept every cycle except a 3n-cycle stall after step 3
        nonlocal stalled_from
        taken = len(h.beats)
        stall = taken == 3 and (stalled_from is None or h.count - stalled_from < 3 * n)
        if taken == 3 and stalled_from is None:
            stalled_from = h.count
        h.set_stimulus(enabled=not stall)

    limit = 4 * (len(expect) + 3 * n) + 1000
    calls = await h.run(body, limit, until=lambda t: h.done() and not h.steps_valid)
    assert calls < limit, f"no done after {limit} cycles"
    h.check_streams()
    got = h.steps()
    assert [s[0] for s in got] == expect.perms.tolist()
    assert [s[1] for s in got] == expect.weights.tolist()
    gaps = np.diff([c for c, _ in h.beats])
    assert (gaps[:2] == 1).all() and (gaps[3:] == 1).all(), f"not one step per cycle: {gaps}"
    assert gaps[2] >= 3 * n, f"the stall did not hold the output: {gaps[2]}"
    h.finish("stall_keeps_every_step", transactions=len(got))


@cocotb.test()
async def monitor_catches_a_dropped_beat(dut):
    """The stream rules are live: a source that withdraws a beat before it is taken (valid
    falls while ready is low) fails with the stream, the cycle and the signal named, although
    the rules are checked in a batch many cycles later."""
    n, _ = dims(dut)
    h = await started(dut, np.random.default_rng(0))
    h.set_stimulus(ready_p=0.0)
    # two full frames of an all-ones matrix: the first runs and stalls with its steps
    # waiting, the second fills the second bank, so load.ready stays low after
    mat = np.ones((n, n), dtype=np.int64)
    h.send(beats_of(mat, h.rows) * 2)
    await h.run(None, 8 * n + 100, until=lambda t: h.idle and h.steps_valid)
    assert h.idle and h.steps_valid, "the steps do not wait"
    h.send([([1] * n * h.rows, False)])
    await h.tick()
    assert h.current is not None and not h.sent[-1][0] == h.count, "the beat was taken"
    h.current = None                   # withdraw the beat: a protocol violation
    await h.tick()
    withdrawn = h.count
    await h.tick(5)                    # the batch is checked later, not in this cycle
    try:
        h.check_streams()
    except ProtocolError as e:
        message = str(e)
    else:
        raise AssertionError("the stream rules missed valid falling before ready")
    assert "stream 'load'" in message and "load__valid" in message and \
        f"cycle {withdrawn}:" in message, message
    assert h.logs[0].beats == 2 * n // h.rows
    h.stream_monitors.remove(h.monitors[0])     # its violation is the one planted above
    h.finish("monitor_catches_a_dropped_beat", transactions=h.logs[0].beats)


@cocotb.test()
async def batch_check_names_the_cycle(dut):
    """A planted wrong model value (step k's weight one more than the model's) fails the
    batched step check with the per-step message and the cycle step k was taken in, found
    many cycles after it (k is in the second batch of 256 steps where the matrix has them)."""
    n, w = dims(dut)
    h = await started(dut, seed=3)
    rng = h.rng
    mat = rng.integers(1, 1 << min(w, 6), (n, n))
    expect = decompose(mat, "wavefront")
    k = min(len(expect) - 1, 300)
    weights = np.asarray(expect.weights).copy()
    weights[k] += 1
    wrong = _Expect(expect.perms, weights)
    batch = h.batch_for(mat, wrong, "planted matrix")
    try:
        await h.run_frame(beats_of(mat, h.rows), gap_p=0.0, ready_p=0.9, expect_steps=True,
                          limit=4 * len(expect) + 4 * n + 1000, batch=batch)
        batch.finish(h.count)
    except StepFailure as e:
        message = str(e)
    else:
        raise AssertionError("the planted model value was not caught")
    cycle = h.beats[k][0]
    perm, weight = expect.perms[k].tolist(), int(expect.weights[k])
    message = message.splitlines()[0]    # pytest's explanation of the assert follows
    assert message == (f"cycle {cycle}: planted matrix, step {k}: RTL {perm} x{weight}, "
                       f"model {perm} x{weight + 1}"), message
    assert h.count >= cycle, (h.count, cycle)
    h.finish("batch_check_names_the_cycle", transactions=len(h.beats), planted_step=k,
             planted_cycle=cycle, found_at=h.count)


class _Expect:
    """A decomposition with the model's steps and a planted weight."""

    def __init__(self, perms, weights) -> None:
        self.perms, self.weights = np.asarray(perms), np.asarray(weights)

    def __len__(self) -> int:
        return len(self.weights)
