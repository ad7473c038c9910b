"""cocotb testbench: the wrapped wave-front arbiter RTL against ``models.chronos.wwfa``.

The model states the matchings (which requests are granted under which priority); the RTL
delivers them ``latency`` cycles after the requests, a parameter of the check: 1 for the
one-cycle arbiter (``band = 0``), ``ceil(N / band) + 2`` for the pipelined one, taken from the
block's documented rule, not from the RTL.

Driver -> DUT -> monitor -> scoreboard. Every cycle the driver presents a random request matrix
and queues the golden model's answer; the monitor samples ``grants`` ``latency`` cycles later
(and checks that the grants read before the first answer are zero: the pipeline is empty after
reset) and hands them to a cocotb-bus ``Scoreboard`` (grant-for-grant equality) and to an
invariant checker that asserts, on the RTL output alone: grants are a subset of requests, at
most one grant per row and per column, the matching is maximal, and no request held for N
consecutive cycles goes ungranted. ``request_grant_loop`` closes the loop: virtual output
queues request from what the grants left them, and must all drain. Run through
``cosim.runner`` (which sets the seed and the transaction count).
"""

from __future__ import annotations

import inspect
import math
import os
import time
from collections import deque

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge
from cocotb_bus.monitors import Monitor
from cocotb_bus.scoreboard import Scoreboard

from aifabric.cosim.stats import CycleMeter, block_params, record_stats, seed_text
from aifabric.models.chronos.wwfa import WavefrontArbiter
from aifabric.rtl.chronos import wwfa as rtl_wwfa

# Matchings of the whole run: this share of them random; the request/grant loop takes arrivals
# for the rest's number of cycles, then drains
DEFAULT_TRANSACTIONS = 10_000
RANDOM_SHARE = 0.7
DENSITIES = (0.0, 0.02, 0.1, 0.25, 0.5, 0.75, 0.95, 1.0)


def latency(params: dict) -> int:
    """Cycles from a request matrix to its grants, by the block's documented rule: 1 for the
    one-cycle arbiter (``band = 0``), else rotate in + ``ceil(n / band)`` bands + rotate out.
    Only the default of ``band`` is read from the component (a missing parameter)."""
    band = params.get("band", inspect.signature(rtl_wwfa.WavefrontArbiter.__init__)
                      .parameters["band"].default)
    return 1 if band == 0 else -(-params["n"] // band) + 2


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
    """Samples ``grants`` after every rising edge from the one that took the first driven
    request matrix: the grants after edge ``e`` answer the matrix of cycle ``e - latency + 1``;
    those read before the first answer are kept in ``early`` (they must be zero)."""

    def __init__(self, dut, n: int, driven: deque, lat: int) -> None:
        self.dut, self.n, self.driven, self.lat = dut, n, driven, lat
        self.cycle = 0
        self.early: list[int] = []
        self.name = "grants"  # the scoreboard names its log after this
        super().__init__()

    async def _monitor_recv(self):
        edge = 0
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            bits = int(self.dut.grants.value.to_unsigned())
            edge += 1
            if edge < self.lat:
                self.early.append(bits)
                continue
            if not self.driven or self.driven[0][0] != self.cycle:
                continue  # no driven request is answered at this edge (the run is over)
            self._recv(GrantTxn(self.cycle, bits, self.n))
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
        self.check_matching(cycle, req, unpack(txn.bits, self.n))

    def check_matching(self, cycle: int, req: np.ndarray, g: np.ndarray) -> None:
        where = f"requests of cycle {cycle}"
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
    """Under reset nothing is granted; the pipeline is empty after it (grants zero until the
    first answer, ``latency`` cycles after the first request), which is served at priority 0;
    a reset in mid-run discards the matchings in flight."""
    n = math.isqrt(len(dut.requests))
    lat = latency(block_params())
    Clock(dut.clk, 10, unit="ns").start()
    meter = CycleMeter(10)
    full = np.ones((n, n), dtype=bool)
    dut.requests.value = pack(full)

    async def reset_then_answers(cycles_in_reset: int, answers: int) -> None:
        dut.rst.value = 1
        for t in range(cycles_in_reset):
            await RisingEdge(dut.clk)
            await ReadOnly()
            assert int(dut.grants.value.to_unsigned()) == 0, f"grants not zero in reset ({t})"
        await FallingEdge(dut.clk)  # leave the ReadOnly phase before writing
        dut.rst.value = 0
        model = WavefrontArbiter(n)
        for t in range(lat - 1 + answers):
            await RisingEdge(dut.clk)
            await ReadOnly()
            got = unpack(int(dut.grants.value.to_unsigned()), n)
            if t < lat - 1:
                assert not got.any(), f"{t + 1} cycles after reset: grants {np.argwhere(got)}"
                continue
            # The full request matrix: the whole priority diagonal is granted, diagonal 0
            # (i + j) mod n == 0 first.
            expected = model.arbitrate(full)
            assert (got == expected).all(), (
                f"answer {t - lat + 1} after reset: {np.argwhere(got)} vs {np.argwhere(expected)}")
            p = t - lat + 1
            assert all(got[i, (p - i) % n] for i in range(n))

    await reset_then_answers(3, lat + 2)
    # one cycle of reset with `latency` matchings in flight: none of them may come out
    await FallingEdge(dut.clk)
    await reset_then_answers(1, 2)
    record_stats("reset_clears_grants", transactions=lat + 4, cycles=meter.cycles)


@cocotb.test()
async def random_requests(dut):
    """Random request matrices, grant-for-grant equal to the golden model ``latency`` cycles
    later."""
    n = math.isqrt(len(dut.requests))
    lat = latency(block_params())
    total = int(os.environ.get("AIFABRIC_TRANSACTIONS", DEFAULT_TRANSACTIONS))
    count = max(2, round(total * RANDOM_SHARE))
    rng = np.random.default_rng(cocotb.RANDOM_SEED)
    dut._log.info("n=%d latency=%d transactions=%d; %s", n, lat, count, seed_text())

    Clock(dut.clk, 10, unit="ns").start()
    meter = CycleMeter(10)
    await reset(dut)

    model = WavefrontArbiter(n)
    expected: list[GrantTxn] = []
    driven: deque = deque()
    monitor = GrantMonitor(dut, n, driven, lat)
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
    for _ in range(lat):
        await RisingEdge(dut.clk)  # by the last the monitor has taken the last answer
    await ReadOnly()
    elapsed = time.perf_counter() - start
    monitor.kill()

    assert len(monitor.early) == lat - 1 and not any(monitor.early), (
        f"grants before the first answer (pipeline not empty after reset): {monitor.early}")
    assert not driven, f"{len(driven)} driven cycles never answered"
    assert not expected, f"{len(expected)} expected grant matrices never received"
    assert scoreboard.errors == 0, f"{scoreboard.errors} scoreboard errors"
    assert checker.checked == count == monitor.stats.received_transactions
    dut._log.info("%d transactions checked in %.2f s (%.0f cycles/s)",
                  count, elapsed, (count + 1) / elapsed)
    record_stats("random_requests", transactions=checker.checked, cycles=meter.cycles,
                 seconds=elapsed)


@cocotb.test()
async def request_grant_loop(dut):
    """Closed loop: N x N virtual output queues of packets. A queue requests while it holds
    more packets than it has requests in flight (so no packet is granted twice); an answer
    frees its request and a grant takes one packet. Arrivals at random loads (past
    saturation among them), then none until every queue drains. Every matching equals the
    model's; every grant finds a packet; the queues drain within ``latency`` x (packets
    left + 1) cycles (in every ``latency`` consecutive matchings one has a request and
    grants, a maximal matching being non-empty)."""
    n = math.isqrt(len(dut.requests))
    lat = latency(block_params())
    total = int(os.environ.get("AIFABRIC_TRANSACTIONS", DEFAULT_TRANSACTIONS))
    arrive_for = max(3, total - round(total * RANDOM_SHARE))
    rng = np.random.default_rng(cocotb.RANDOM_SEED)
    dut._log.info("n=%d latency=%d arrival cycles=%d; %s", n, lat, arrive_for, seed_text())

    Clock(dut.clk, 10, unit="ns").start()
    meter = CycleMeter(10)
    await reset(dut)
    await FallingEdge(dut.clk)   # from here: write at a falling edge, read at the next
    model = WavefrontArbiter(n)
    checker = InvariantChecker(n, deque())
    queue = np.zeros((n, n), dtype=np.int64)
    asked = np.zeros((n, n), dtype=np.int64)      # requests in flight
    flight: deque = deque()                         # (cycle, requests, the model's grants)
    arrived = granted = 0
    drain_start = drain_left = None
    start = time.perf_counter()
    cycle = 0
    while True:
        if cycle < arrive_for:
            load = (0.3, 0.9, 1.5)[cycle * 3 // arrive_for]     # packets per input and cycle
            new = rng.random((n, n)) < load / n
            queue += new
            arrived += int(new.sum())
        elif drain_start is None:
            drain_start, drain_left = cycle, int(queue.sum())
        if drain_start is not None and not queue.any() and not asked.any():
            break
        req = queue > asked
        asked += req
        flight.append((cycle, req, model.arbitrate(req)))
        dut.requests.value = pack(req)
        await FallingEdge(dut.clk)  # the rising edge took req; read what it registered
        got = unpack(int(dut.grants.value.to_unsigned()), n)
        if len(flight) == lat:
            c, creq, want = flight.popleft()
            assert (got == want).all(), (
                f"requests of cycle {c}: grants {np.argwhere(got).tolist()}, model "
                f"{np.argwhere(want).tolist()}")
            checker.check_matching(c, creq, got)
            asked -= creq
            assert (queue[got] > 0).all(), f"cycle {c}: a grant without a packet"
            queue -= got
            granted += int(got.sum())
        else:
            assert not got.any(), f"cycle {cycle}: grants before the first answer"
        cycle += 1
        if drain_start is not None:
            assert cycle - drain_start <= lat * (drain_left + 1), (
                f"{int(queue.sum())} packets left {cycle - drain_start} cycles after the last "
                f"arrival ({drain_left} then, latency {lat})")
    elapsed = time.perf_counter() - start
    assert granted == arrived > 0 and not queue.any() and not asked.any()
    dut._log.info("%d packets through %d matchings (%d draining) in %.2f s", arrived,
                  checker.checked, cycle - drain_start, elapsed)
    record_stats("request_grant_loop", transactions=checker.checked, cycles=meter.cycles,
                 seconds=elapsed)
