"""cocotb benchmark of the BvN engine on Verilator (run by ``make bench``, not by the
regression): clock cycles per decomposition of Chronos MoE matrices with the output always
ready, from the cycle the first load beat is taken to the cycle the last step is taken (both
included), checked step for step against the model.

``moe_cycles``: MoE token matrices scaled into W bits (unquantised). ``quantised_moe_cycles``:
MoE byte matrices quantised to each slot budget of 64 .. 512 whose counts fit W bits, with the
makespan overhead the quantisation costs (against the byte matrix's lower bound).

``AIFABRIC_TRANSACTIONS`` is the number of matrices (default 20; per budget for the quantised
case).
"""

from __future__ import annotations

import os
import time

import cocotb
import numpy as np

from aifabric.cosim.test_bvn import Harness, beats_of, dims, moe_matrix
from aifabric.models.chronos.bvn import decompose, lower_bound, quantize
from aifabric.models.chronos.experiments import QUANT_BUDGETS
from aifabric.models.chronos.moe import moe_traffic_matrix


async def timed_frame(h: Harness, mat: np.ndarray):
    """Load ``mat`` with no idle beat, take every step at once; check the steps against the
    model; return (cycles from the first beat to the last step, both included, steps)."""
    n = h.n
    expect = decompose(mat, "wavefront")
    batch = h.batch_for(mat, expect, "moe matrix")
    count, first, last_cycle = await h.run_frame(
        beats_of(mat, h.rows), gap_p=0.0, ready_p=1.0,
        expect_steps=True, limit=4 * len(expect) + 4 * n + 100, batch=batch)
    batch.finish(h.count)
    h.beats.clear()
    return last_cycle - first + 1, count


async def start_bench(dut):
    """Clock, harness and reset; returns (harness, matrices to run, rng)."""
    count = int(os.environ.get("AIFABRIC_TRANSACTIONS", 20))
    h = Harness(dut)
    await h.reset()
    return h, count, h.rng


@cocotb.test()
async def moe_cycles(dut):
    n, w = dims(dut)
    h, count, rng = await start_bench(dut)
    # The model's kernel is compiled on first use: compile it before anything is timed (on a
    # matrix of its own, so the measured stimulus does not depend on the warm-up).
    decompose(moe_matrix(np.random.default_rng(0), n, w), "wavefront")
    cycles, steps, software = [], [], []
    start = time.perf_counter()
    for _ in range(count):
        mat = moe_matrix(rng, n, w)
        t0 = time.perf_counter()
        decompose(mat, "wavefront")
        software.append(time.perf_counter() - t0)
        c, k = await timed_frame(h, mat)
        cycles.append(c)
        steps.append(k)
    h.finish("moe_cycles", transactions=sum(steps),
             seconds=time.perf_counter() - start, n=n, w=w, per_matrix_cycles=cycles,
                 per_matrix_steps=steps, model_wavefront_s=software)


@cocotb.test()
async def quantised_moe_cycles(dut):
    n, w = dims(dut)
    h, count, rng = await start_bench(dut)
    per_budget = {}
    start = time.perf_counter()
    for budget in (b for b in QUANT_BUDGETS if b < 1 << w):
        cycles, steps, overhead = [], [], []
        for _ in range(count):
            d = moe_traffic_matrix(n, rng, unit="bytes")
            q = quantize(d, budget)
            c, k = await timed_frame(h, q.counts)
            cycles.append(c)
            steps.append(k)
            overhead.append(q.makespan_bytes(decompose(q.counts, "wavefront"))
                            / lower_bound(d) - 1)
        per_budget[budget] = {"cycles": cycles, "steps": steps, "overhead": overhead}
    h.finish("quantised_moe_cycles",
             transactions=sum(sum(v["steps"]) for v in per_budget.values()),
             seconds=time.perf_counter() - start, n=n, w=w, per_budget=per_budget)
