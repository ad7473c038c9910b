"""cocotb testbench: the wrapped wave-front arbiter RTL against ``models.chronos.wwfa``.

Driver -> DUT -> monitor -> scoreboard. Every cycle the driver presents a random request matrix
and queues the golden model's answer; the monitor samples ``grants`` one cycle later and hands
it to a cocotb-bus ``Scoreboard`` (grant-for-grant equality) and to an invariant checker that
asserts, on the RTL output alone: grants are a subset of requests, at most one grant per row and
per column, the matching is maximal, and no request held for N consecutive cycles goes
ungranted. Run through ``cosim.runner`` (which sets the seed and the transaction count).
"""

from __future__ import annotations

import math
import os
import time
from collections import deque

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge
from cocotb_bus.monitors import Monitor
from cocotb_bus.scoreboard import Scoreboard

from aifabric.cosim.stats import CycleMeter, record_stats, seed_text
from aifabric.models.chronos.wwfa import WavefrontArbiter

DEFAULT_TRANSACTIONS = 10_000
DENSITIES = (0.0, 0.02, 0.1, 0.25, 0.5, 0.75, 0.95, 1.0)


def pack(matrix: np.ndarray) -> int:
    """N x N bool -> integer with bit i*N + j = matrix[i, j]."""
    return int.from_bytes(np.packbits(matrix.ravel(), bitorder="little").tobytes(), "little")


def unpack(value: int, n: int) -> np.ndarray:
    raw = np.frombuffer(value.to_bytes((n * n + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[: n * n].astype(bool).reshape(n, n)


class GrantTxn:
    """One cycle's grant matrix, compared by cycle index and bits."""

    __slots__ = ("cycle", "bits", "n")

    def __init__(self, cycle: int, bits: int, n: int) -> None:
        self.cycle, self.bits, self.n = cycle, bits, n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GrantTxn) and (self.cycle, self.bits) == (other.cycle, other.bits)

    def __hash__(self) -> int:
        return hash((self.cycle, self.bits))

    def __repr__(self) -> str:
        pairs = [(k // self.n, k % self.n) for k in range(self.n * self.n) if self.bits >> k & 1]
        return f"GrantTxn(cycle={self.cycle}, grants(i->j)={pairs})"


class GrantMonitor(Monitor):
    """Samples ``grants`` after every rising edge that took a driven request matrix."""

    def __init__(self, dut, n: int, driven: deque) -> None:
        self.dut, self.n, self.driven = dut, n, driven
        self.cycle = 0
        self.name = "grants"  # the scoreboard names its log after this
        super().__init__()

    async def _monitor_recv(self):
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            if not self.driven or self.driven[0][0] != self.cycle:
                continue  # this edge took no driven request (reset or idle)
            self._recv(GrantTxn(self.cycle, int(self.dut.grants.value.to_unsigned()), self.n))
            self.cycle += 1


class InvariantChecker:
    """Asserts the arbiter's contract on the RTL output, independently of the model."""

    def __init__(self, n: int, driven: deque) -> None:
        self.n, self.driven = n, driven
        self.waiting = np.zeros((n, n), dtype=np.int64)  # consecutive cycles requested, ungranted
        self.checked = 0

    def check(self, txn: GrantTxn) -> None:
        cycle, req = self.driven.popleft()
        assert cycle == txn.cycle, f"monitor out of step: cycle {txn.cycle} vs driven {cycle}"
        g = unpack(txn.bits, self.n)
        where = f"cycle {cycle}"
        assert not (g & ~req).any(), f"{where}: grant without request at {np.argwhere(g & ~req)}"
        assert (g.sum(axis=1) <= 1).all(), f"{where}: row granted twice"
        assert (g.sum(axis=0) <= 1).all(), f"{where}: column granted twice"
        free = req & ~g.any(axis=1)[:, None] & ~g.any(axis=0)[None, :]
        assert not free.any(), f"{where}: not maximal, request {np.argwhere(free)[0]} left free"
        self.waiting = np.where(req & ~g, self.waiting + 1, 0)
        assert self.waiting.max() < self.n, (
            f"{where}: request {np.unravel_index(self.waiting.argmax(), g.shape)} held for "
            f"{self.n} cycles without a grant")
        self.checked += 1


def stimulus(rng: np.random.Generator, n: int, count: int):
    """Request matrices in segments: fresh random matrices at a random density, held matrices
    (to exercise fairness), permutations, and the empty and full matrix."""
    produced = 0
    yield np.zeros((n, n), dtype=bool)
    yield np.ones((n, n), dtype=bool)
    produced = 2
    while produced < count:
        length = int(rng.integers(1, 3 * n + 1))
        kind = rng.integers(4)
        density = DENSITIES[rng.integers(len(DENSITIES))]
        if kind == 0:  # held constant: every request must be served within n cycles
            held = rng.random((n, n)) < density
            seg = [held] * length
        elif kind == 1:  # random permutation (one request per row and column)
            seg = [np.eye(n, dtype=bool)[rng.permutation(n)] for _ in range(length)]
        else:
            seg = [rng.random((n, n)) < density for _ in range(length)]
        for m in seg[: count - produced]:
            yield m
        produced += min(length, count - produced)


async def reset(dut) -> None:
    dut.requests.value = 0
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    dut.rst.value = 0


@cocotb.test()
async def reset_clears_grants(dut):
    """Under reset nothing is granted; the first request after reset is served at priority 0."""
    n = math.isqrt(len(dut.requests))
    Clock(dut.clk, 10, unit="ns").start()
    meter = CycleMeter(10)
    dut.requests.value = (1 << (n * n)) - 1
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert int(dut.grants.value.to_unsigned()) == 0, "grants not zero under reset"
    await RisingEdge(dut.clk)  # leave the ReadOnly phase before writing
    dut.rst.value = 0
    await RisingEdge(dut.clk)
    await ReadOnly()
    # Full request matrix at priority 0: the whole diagonal (i + j) mod n == 0 is granted.
    expected = WavefrontArbiter(n).arbitrate(np.ones((n, n), dtype=bool))
    got = unpack(int(dut.grants.value.to_unsigned()), n)
    assert (got == expected).all(), f"first grant after reset: {np.argwhere(got)}"
    assert all(got[i, (-i) % n] for i in range(n))
    record_stats("reset_clears_grants", transactions=1, cycles=meter.cycles)


@cocotb.test()
async def random_requests(dut):
    """Random request matrices, grant-for-grant equal to the golden model."""
    n = math.isqrt(len(dut.requests))
    count = int(os.environ.get("AIFABRIC_TRANSACTIONS", DEFAULT_TRANSACTIONS))
    rng = np.random.default_rng(cocotb.RANDOM_SEED)
    dut._log.info("n=%d transactions=%d; %s", n, count, seed_text())

    Clock(dut.clk, 10, unit="ns").start()
    meter = CycleMeter(10)
    await reset(dut)

    model = WavefrontArbiter(n)
    expected: list[GrantTxn] = []
    driven: deque = deque()
    monitor = GrantMonitor(dut, n, driven)
    checker = InvariantChecker(n, driven)
    scoreboard = Scoreboard(dut, fail_immediately=True)
    # The invariant checker runs first: it also pops the driven queue the monitor consults.
    monitor.add_callback(checker.check)
    scoreboard.add_interface(monitor, expected)

    start = time.perf_counter()
    for cycle, req in enumerate(stimulus(rng, n, count)):
        dut.requests.value = pack(req)
        driven.append((cycle, req))
        expected.append(GrantTxn(cycle, pack(model.arbitrate(req)), n))
        await RisingEdge(dut.clk)
    dut.requests.value = 0
    await RisingEdge(dut.clk)  # by now the monitor has taken the last answer
    await ReadOnly()
    elapsed = time.perf_counter() - start
    monitor.kill()

    assert not driven, f"{len(driven)} driven cycles never answered"
    assert not expected, f"{len(expected)} expected grant matrices never received"
    assert scoreboard.errors == 0, f"{scoreboard.errors} scoreboard errors"
    assert checker.checked == count == monitor.stats.received_transactions
    dut._log.info("%d transactions checked in %.2f s (%.0f cycles/s)",
                  count, elapsed, (count + 1) / elapsed)
    record_stats("random_requests", transactions=checker.checked, cycles=meter.cycles,
                 seconds=elapsed)
