"""cocotb benchmark of the BvN engine on Verilator (run by ``make bench``, not by the
regression): clock cycles per decomposition of Chronos MoE matrices with the output always
ready, from the cycle the first load beat is taken to the cycle the last step is taken (both
included), checked step for step against the model.

``AIFABRIC_TRANSACTIONS`` is the number of matrices (default 20).
"""

from __future__ import annotations

import os
import time

import cocotb
import numpy as np
from cocotb.clock import Clock

from cosim.stats import record_stats
from cosim.test_bvn import Harness, dims, moe_matrix
from models.chronos.bvn import decompose


@cocotb.test()
async def moe_cycles(dut):
    n, w = dims(dut)
    count = int(os.environ.get("AIFABRIC_TRANSACTIONS", 20))
    rng = np.random.default_rng(cocotb.RANDOM_SEED)
    Clock(dut.clk, 10, unit="ns").start()
    h = Harness(dut, rng)
    await h.reset()
    # The model's kernel is compiled on first use: compile it before anything is timed (on a
    # matrix of its own, so the measured stimulus does not depend on the warm-up).
    decompose(moe_matrix(np.random.default_rng(0), n, w), "wavefront")
    cycles, steps, software = [], [], []
    start = time.perf_counter()
    for _ in range(count):
        mat = moe_matrix(rng, n, w)
        t0 = time.perf_counter()
        expect = decompose(mat, "wavefront")
        software.append(time.perf_counter() - t0)
        got, first, last_cycle = await h.run_frame(
            [(list(map(int, mat[i])), i == n - 1) for i in range(n)], gap_p=0.0, ready_p=1.0,
            expect_steps=True, limit=4 * len(expect) + 4 * n + 100)
        assert [g[0] for g in got] == expect.perms.tolist()
        assert [g[1] for g in got] == expect.weights.tolist()
        cycles.append(last_cycle - first + 1)
        steps.append(len(got))
    record_stats("moe_cycles", transactions=sum(steps), cycles=h.meter.cycles,
                 seconds=time.perf_counter() - start, n=n, w=w, per_matrix_cycles=cycles,
                 per_matrix_steps=steps, model_wavefront_s=software)
