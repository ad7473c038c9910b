"""cocotb testbench: the BvN engine RTL against ``decompose(d, "wavefront")``.

A frame driver loads matrices through the ``load`` stream (random idle cycles between beats);
a step monitor drains the ``steps`` stream under random back-pressure (always ready, random
ready, long stalls). Every step is compared with the golden model's step of the same index
(permutation, weight, last), and an invariant checker asserts on the RTL output alone: each
permutation is a partial matching over entries still nonzero, maximal over them; weights are
positive and no larger than any matched residual; the steps sum to the loaded matrix; ``last``
is on the final step only and ``done`` follows it. Bad frames (too few beats, too many beats,
an entry wider than W) must raise their error flag and emit no step.

Stimulus per N: 200 random matrices (density 2% .. 100%; entries small, large or log-uniform
up to 2**W - 1) and 100 Chronos MoE matrices (``moe_traffic_matrix`` in tokens, scaled into W
bits when needed), interleaved with the zero matrix, the all-maximum matrix and bad frames.
"""

from __future__ import annotations

import os
import time

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from cosim.stats import record_stats
from models.chronos.bvn import decompose
from models.chronos.moe import moe_traffic_matrix
from rtl.chronos.bvn import LANE_BITS, pack_row, unpack_step

RANDOM_MATRICES = 200
MOE_MATRICES = 100
DENSITIES = (0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
# Sparse matrices are drawn more often than dense ones: a dense N = 64 matrix takes ~N² steps,
# so an even mix would spend most of the regression's time on a few dense matrices.
DENSITY_WEIGHTS = (0.2, 0.2, 0.2, 0.2, 0.1, 0.1)
ERRORS = {"short": 0b001, "long": 0b010, "overflow": 0b100}


def dims(dut) -> tuple[int, int]:
    n = (len(dut.load__payload) - 1) // LANE_BITS
    b = max(1, (n - 1).bit_length())
    w = len(dut.steps__payload) - n * b - n - 1
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


def frames(rng: np.random.Generator, n: int, w: int, random_count: int, moe_count: int):
    """(kind, matrix, beats, expected error) in a shuffled order; a few bad frames and the
    corner matrices mixed in."""
    items = [("random", random_matrix(rng, n, w)) for _ in range(random_count)]
    items += [("moe", moe_matrix(rng, n, w)) for _ in range(moe_count)]
    items += [("zero", np.zeros((n, n), dtype=np.int64)),
              ("full", np.full((n, n), (1 << w) - 1, dtype=np.int64))]
    items += [(bad, random_matrix(rng, n, w)) for bad in ERRORS for _ in range(2)]
    order = rng.permutation(len(items))
    for k in order:
        kind, mat = items[k]
        beats = [(list(map(int, mat[i])), i == n - 1) for i in range(n)]
        error = ERRORS.get(kind, 0)
        if kind == "short":
            cut = int(rng.integers(1, n))
            beats = beats[:cut - 1] + [(beats[cut - 1][0], True)]
        elif kind == "long":
            extra = int(rng.integers(1, 4))
            beats = [(v, False) for v, _ in beats] + \
                [(beats[e][0], e == extra - 1) for e in range(extra)]
        elif kind == "overflow" and w < LANE_BITS:
            i, j = rng.integers(n, size=2)
            beats[i][0][j] = int(rng.integers(1 << w, 1 << LANE_BITS))
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
    """Driver and monitor of the engine's two streams with one trigger per cycle: at each
    falling edge the outputs the last rising edge registered are read and the inputs for the
    next rising edge are written (every output of the engine but ``load.ready`` comes from a
    register, and ``load.ready`` only from state registers)."""

    def __init__(self, dut, rng: np.random.Generator) -> None:
        self.dut, self.rng = dut, rng
        self.n, self.w = dims(dut)
        self.cycle = 0

    async def tick(self) -> None:
        await FallingEdge(self.dut.clk)
        self.cycle += 1

    async def reset(self) -> None:
        self.dut.load__valid.value = 0
        self.dut.steps__ready.value = 0
        self.dut.rst.value = 1
        await self.tick()
        await self.tick()
        self.dut.rst.value = 0
        await self.tick()

    async def load(self, beats, gap_p: float = 0.0) -> int:
        """Send ``beats``; return the cycle that took the first beat. Asserts that no step
        appears while loading."""
        dut, first = self.dut, None
        for values, last in beats:
            while gap_p and self.rng.random() < gap_p:
                dut.load__valid.value = 0
                await self.tick()
            dut.load__valid.value = 1
            dut.load__payload.value = pack_row(values, last, self.n)
            while True:
                assert not dut.steps__valid.value, "a step appeared during a load"
                taken = bool(dut.load__ready.value)
                await self.tick()
                if taken:
                    first = self.cycle if first is None else first
                    break
        dut.load__valid.value = 0
        return first

    async def drain(self, ready_p: float, expect_steps: bool, limit: int):
        """Collect steps until ``done`` (or an error) with ``ready`` high with probability
        ``ready_p`` each cycle (stalls come in bursts); return (steps, cycle of last step)."""
        dut, words, last_cycle = self.dut, [], None
        ready, written = 1, None
        for _ in range(limit):
            if ready_p < 1.0 and self.rng.random() < 0.1:  # ready changes in bursts
                ready = int(self.rng.random() < ready_p)
            if ready != written:
                dut.steps__ready.value = written = ready
            valid = dut.steps__valid.value
            if valid and ready:
                words.append(dut.steps__payload.value.to_unsigned())
                last_cycle = self.cycle
            stop = not valid and (dut.done.value or (not expect_steps and
                                                     dut.error.value.to_unsigned()))
            await self.tick()
            if stop:
                dut.steps__ready.value = 0
                return [unpack_step(int(x), self.n, self.w) for x in words], last_cycle
        raise AssertionError(f"no done after {limit} cycles ({len(words)} steps received)")


@cocotb.test()
async def decompositions(dut):
    """Random and MoE matrices step for step against the golden model, with back-pressure."""
    n, w = dims(dut)
    rng = np.random.default_rng(cocotb.RANDOM_SEED)
    budget = int(os.environ.get("AIFABRIC_TRANSACTIONS", 0)) or None
    dut._log.info("n=%d w=%d seed=%d", n, w, cocotb.RANDOM_SEED)
    Clock(dut.clk, 10, unit="ns").start()
    h = Harness(dut, rng)
    await h.reset()

    steps_total, beats_total = 0, 0
    checked, start = {"random": 0, "moe": 0}, time.perf_counter()
    moe_cycles = []
    for kind, mat, beats, error in frames(rng, n, w, RANDOM_MATRICES, MOE_MATRICES):
        if budget is not None and steps_total >= budget and kind in checked:
            continue
        ready_p = float(rng.choice([1.0, 1.0, 0.9, 0.5]))
        first = await h.load(beats, gap_p=float(rng.choice([0.0, 0.0, 0.3])))
        beats_total += len(beats)
        if error:
            steps, _ = await h.drain(ready_p, False, 50)
            assert not steps, f"{kind} frame: {len(steps)} steps emitted"
            got = int(dut.error.value.to_unsigned())
            assert got == error, f"{kind} frame: error flags {got:03b}, expected {error:03b}"
            assert not int(dut.done.value), f"{kind} frame: done raised"
            continue
        expect = decompose(mat, "wavefront")
        limit = int(4 * (len(expect) + 10) / ready_p) + 100
        steps, last_cycle = await h.drain(ready_p, True, limit)
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
        if kind == "moe" and ready_p == 1.0 and steps:
            moe_cycles.append(last_cycle - first + 1)
        steps_total += len(steps)
        done_count = sum(checked.values())
        if done_count % 50 == 0 and kind in checked:
            dut._log.info("%d of %d matrices, %d steps, %.0f s", done_count,
                          RANDOM_MATRICES + MOE_MATRICES, steps_total,
                          time.perf_counter() - start)
    elapsed = time.perf_counter() - start
    if budget is None:
        assert checked == {"random": RANDOM_MATRICES, "moe": MOE_MATRICES}, checked
    dut._log.info("%d steps of %s matrices checked in %.1f s (%d cycles)",
                  steps_total, checked, elapsed, h.cycle)
    # transactions: handshakes on both streams (load beats and steps)
    record_stats("decompositions", transactions=steps_total + beats_total, cycles=h.cycle,
                 seconds=elapsed, steps=steps_total, matrices=checked, moe_cycles=moe_cycles)


@cocotb.test()
async def stall_keeps_every_step(dut):
    """A long stall in the middle of a decomposition loses and repeats nothing, and the engine
    emits one step per cycle when the output is always ready."""
    n, w = dims(dut)
    rng = np.random.default_rng(cocotb.RANDOM_SEED + 1)
    Clock(dut.clk, 10, unit="ns").start()
    h = Harness(dut, rng)
    await h.reset()
    mat = rng.integers(1, 1 << min(w, 12), (n, n))
    expect = decompose(mat, "wavefront")
    await h.load([(list(map(int, mat[i])), i == n - 1) for i in range(n)])
    got, stalled_from = [], h.cycle
    while True:  # accept every cycle except a 3n-cycle stall after the third step
        stall = len(got) == 3 and h.cycle - stalled_from < 3 * n
        if len(got) < 3:
            stalled_from = h.cycle
        dut.steps__ready.value = 0 if stall else 1
        if dut.steps__valid.value and not stall:
            got.append((h.cycle, unpack_step(int(dut.steps__payload.value.to_unsigned()), n, w)))
        done = dut.done.value and not dut.steps__valid.value
        await h.tick()
        if done:
            break
    assert [s[1][0] for s in got] == expect.perms.tolist()
    assert [s[1][1] for s in got] == expect.weights.tolist()
    cycles = [c for c, _ in got]
    gaps = np.diff(cycles)
    assert (gaps[:2] == 1).all() and (gaps[3:] == 1).all(), f"not one step per cycle: {gaps}"
    assert gaps[2] >= 3 * n, f"the stall did not hold the output: {gaps[2]}"
    record_stats("stall_keeps_every_step", transactions=len(got), cycles=h.cycle)
