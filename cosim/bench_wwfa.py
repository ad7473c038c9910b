"""cocotb benchmark of the WWFA on Verilator (run by ``make bench``, not by the regression).

``drive_only`` measures the raw simulation rate seen from cocotb: a fresh random request
matrix written and the grant matrix read every cycle, nothing checked. The checked rate (with
the golden model and scoreboard) comes from the regular testbench, ``test_wwfa``.
"""

from __future__ import annotations

import math
import os
import time

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from aifabric.cosim.stats import CycleMeter, record_stats
from aifabric.cosim.test_wwfa import pack, reset


@cocotb.test()
async def drive_only(dut):
    n = math.isqrt(len(dut.requests))
    cycles = int(os.environ.get("AIFABRIC_TRANSACTIONS", 20_000))
    rng = np.random.default_rng(cocotb.RANDOM_SEED)
    # Pre-generate the stimulus so that only the simulation is timed.
    stimulus = [pack(rng.random((n, n)) < 0.5) for _ in range(min(cycles, 1024))]
    Clock(dut.clk, 10, unit="ns").start()
    await reset(dut)
    meter = CycleMeter(10)
    # One trigger per cycle: at each falling edge read the grants the last rising edge
    # registered and present the next request matrix.
    granted = 0
    start = time.perf_counter()
    for t in range(cycles):
        await FallingEdge(dut.clk)
        granted += int(dut.grants.value.to_unsigned()).bit_count()
        dut.requests.value = stimulus[t % len(stimulus)]
    elapsed = time.perf_counter() - start
    assert granted > 0, "a busy arbiter granted nothing"
    record_stats("drive_only", transactions=cycles, cycles=meter.cycles, seconds=elapsed)
