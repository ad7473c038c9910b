"""cocotb benchmark of the WWFA on Verilator (run by ``make bench``, not by the regression).

``drive_only`` measures the raw simulation rate seen from cocotb: a fresh random request
matrix written and the grant matrix read every cycle, nothing checked. The checked rate (with
the golden model and scoreboard) comes from the regular testbench, ``test_wwfa``.
"""

from __future__ import annotations

import os

import cocotb

from aifabric.cosim.test_wwfa import WwfaBench, pack


@cocotb.test()
async def drive_only(dut):
    tb = WwfaBench(dut)
    n = tb.n
    cycles = int(os.environ.get("AIFABRIC_TRANSACTIONS", 20_000))
    # Pre-generate the stimulus so that only the simulation is timed.
    stimulus = [pack(tb.rng.random((n, n)) < 0.5) for _ in range(min(cycles, 1024))]
    await tb.reset()
    start = tb.meter.cycles
    get, put = tb.get_grants, tb.put_requests
    granted = 0

    def cycle(t):
        # read the grants the last rising edge registered, present the next request matrix
        nonlocal granted
        granted += get().bit_count()
        put(stimulus[t % len(stimulus)])
    await tb.run(cycle, cycles)
    assert granted > 0, "a busy arbiter granted nothing"
    tb.finish("drive_only", transactions=cycles, cycles=tb.meter.cycles - start)
