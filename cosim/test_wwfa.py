"""cocotb testbench: the wrapped wave-front arbiter RTL against ``models.chronos.wwfa``.

The model states the matchings (which requests are granted under which priority); the RTL
delivers them ``latency`` cycles after the requests, a parameter of the check: 1 for the
one-cycle arbiter (``band = 0``), ``ceil(N / band) + 2`` for the pipelined one, taken from the
block's documented rule, not from the RTL.

On ``cosim.testbench``: every cycle, at the falling edge, the driver presents a random
request matrix and queues the golden model's answer on the scoreboard; the monitor reads
``grants`` (registered) and from the ``latency``-th edge on hands each answer to an invariant
checker and to the scoreboard (grant-for-grant equality); the grants read before the first
answer must be zero (the pipeline is empty after reset). The invariant checker asserts, on
the RTL output alone: grants are a subset of requests, at most one grant per row and per
column, the matching is maximal, and no request held for N consecutive cycles goes
ungranted. ``request_grant_loop`` closes the loop: virtual output queues request from what
the grants left them, and must all drain. Run through ``cosim.runner`` (which sets the seed
and the transaction count).
"""

from __future__ import annotations

import inspect
import os
from collections import deque

import cocotb
import numpy as np

from aifabric.cosim.testbench import Testbench
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


class WwfaBench(Testbench):
    """The arbiter on the testbench layer: ``n`` and ``lat`` (the documented latency) from
    the parameters, ``io`` the ports (``requests``, ``grants``) with their fast accessors."""

    def __init__(self, dut, **kw) -> None:
        super().__init__(dut, rtl_wwfa.WavefrontArbiter, **kw)
        self.n, self.lat = self.params["n"], latency(self.params)
        self.io = self.bus()
        self.put_requests = self.io.writer("requests")
        self.get_grants = self.io.reader("grants")
        self.put_requests(0)


class RequestDriver:
    """Presents one request matrix a cycle from ``matrices`` (then none) and queues, per
    matrix, the golden model's grants on the scoreboard and (cycle, matrix) in ``driven``."""

    def __init__(self, tb: WwfaBench, matrices) -> None:
        self.tb, self.matrices = tb, iter(matrices)
        self.model = WavefrontArbiter(tb.n)
        self.driven: deque = deque()
        self.count = 0

    def edge(self, t: int) -> None:
        req = next(self.matrices, None)
        if req is None:
            self.tb.put_requests(0)
            return
        self.tb.put_requests(pack(req))
        self.driven.append((self.count, req))
        self.tb.scoreboard.expect(GrantTxn(self.count, pack(self.model.arbitrate(req)),
                                           self.tb.n))
        self.count += 1


class GrantMonitor:
    """Reads ``grants`` at every falling edge from the run's first: those read at the first
    ``latency`` edges come before the first answer (kept in ``early``: they must be zero);
    from then on the grants of edge ``latency + k`` answer the matrix of the monitor's own
    step k: checked by ``checker`` against the oldest matrix driven, and compared on the
    scoreboard as step k's (an answer a cycle early or late names the wrong cycle)."""

    def __init__(self, tb: WwfaBench, driver: RequestDriver, checker) -> None:
        self.tb, self.driver, self.checker = tb, driver, checker
        self.early: list[int] = []
        self.seen = 0
        self.received = 0

    def edge(self, t: int) -> None:
        bits = self.tb.get_grants()
        self.seen += 1
        if self.seen <= self.tb.lat:
            self.early.append(bits)
            return
        if not self.driver.driven:
            return                    # no driven request is answered here (the run is over)
        step = self.seen - self.tb.lat - 1
        cycle, req = self.driver.driven.popleft()
        assert cycle == step, (f"edge {t}: grants of step {step} read, the oldest request "
                               f"unanswered is of cycle {cycle}")
        txn = GrantTxn(step, bits, self.tb.n)
        self.checker.check_matching(cycle, req, unpack(bits, self.tb.n))
        self.tb.scoreboard.compare(txn, f"requests of cycle {cycle}: ")
        self.received += 1


class InvariantChecker:
    """Asserts the arbiter's contract on the RTL output, independently of the model."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.waiting = np.zeros((n, n), dtype=np.int64)  # consecutive cycles requested, ungranted
        self.checked = 0

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


def transactions() -> int:
    return int(os.environ.get("AIFABRIC_TRANSACTIONS", DEFAULT_TRANSACTIONS))


@cocotb.test()
async def reset_clears_grants(dut):
    """Under reset nothing is granted; the pipeline is empty after it (grants zero until the
    first answer, ``latency`` cycles after the first request), which is served at priority 0;
    a reset in mid-run discards the matchings in flight."""
    tb = WwfaBench(dut)
    n, lat = tb.n, tb.lat
    full = np.ones((n, n), dtype=bool)
    tb.put_requests(pack(full))

    async def reset_then_answers(cycles_in_reset: int, answers: int) -> None:
        tb.set_reset(1)
        for t in range(cycles_in_reset):
            await tb.tick()               # a rising edge in reset has passed
            assert tb.get_grants() == 0, f"grants not zero in reset ({t})"
        tb.set_reset(0)
        model = WavefrontArbiter(n)
        for t in range(lat - 1 + answers):
            await tb.tick()
            got = unpack(tb.get_grants(), n)
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

    await tb.tick()
    await reset_then_answers(3, lat + 2)
    # one cycle of reset with `latency` matchings in flight: none of them may come out
    await tb.tick()
    await reset_then_answers(1, 2)
    tb.finish("reset_clears_grants", transactions=lat + 4)


@cocotb.test()
async def random_requests(dut):
    """Random request matrices, grant-for-grant equal to the golden model ``latency`` cycles
    later."""
    tb = WwfaBench(dut)
    n, lat = tb.n, tb.lat
    count = max(2, round(transactions() * RANDOM_SHARE))
    tb.log.info("n=%d latency=%d transactions=%d; %s", n, lat, count, tb.seed_text())
    await tb.reset()
    checker = InvariantChecker(n)
    monitor = GrantMonitor(tb, None, checker)
    driver = RequestDriver(tb, stimulus(tb.rng, n, count))
    monitor.driver = driver
    tb.add(monitor, driver)        # the monitor reads before the driver drives
    await tb.run(None, count + lat)
    assert len(monitor.early) == lat and not any(monitor.early), (
        f"grants before the first answer (pipeline not empty after reset): {monitor.early}")
    assert not driver.driven, f"{len(driver.driven)} driven cycles never answered"
    assert checker.checked == count == monitor.received == tb.scoreboard.matched
    tb.log.info("%d transactions checked in %.2f s (%.0f cycles/s)",
                count, tb.seconds, (count + lat) / tb.seconds)
    tb.finish("random_requests", transactions=checker.checked)


@cocotb.test()
async def request_grant_loop(dut):
    """Closed loop: N x N virtual output queues of packets. A queue requests while it holds
    more packets than it has requests in flight (so no packet is granted twice); an answer
    frees its request and a grant takes one packet. Arrivals at random loads (past
    saturation among them), then none until every queue drains. Every matching equals the
    model's; every grant finds a packet; the queues drain within ``latency`` x (packets
    left + 1) cycles (in every ``latency`` consecutive matchings one has a request and
    grants, a maximal matching being non-empty)."""
    tb = WwfaBench(dut)
    n, lat, rng = tb.n, tb.lat, tb.rng
    total = transactions()
    arrive_for = max(3, total - round(total * RANDOM_SHARE))
    tb.log.info("n=%d latency=%d arrival cycles=%d; %s", n, lat, arrive_for, tb.seed_text())
    await tb.reset()
    model = WavefrontArbiter(n)
    checker = InvariantChecker(n)
    queue = np.zeros((n, n), dtype=np.int64)
    asked = np.zeros((n, n), dtype=np.int64)      # requests in flight
    flight: deque = deque()                         # (cycle, requests, the model's grants)
    arrived = granted = 0
    drain_start = drain_left = None

    def answer(cycle: int) -> None:
        """The grants the rising edge after cycle ``cycle``'s requests registered."""
        nonlocal granted, queue, asked
        got = unpack(tb.get_grants(), n)
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
        if drain_start is not None:
            assert cycle + 1 - drain_start <= lat * (drain_left + 1), (
                f"{int(queue.sum())} packets left {cycle + 1 - drain_start} cycles after the "
                f"last arrival ({drain_left} then, latency {lat})")

    def cycle(t: int) -> bool:
        """Falling edge t: the answer to cycle t - 1's requests, then cycle t's requests."""
        nonlocal arrived, drain_start, drain_left, queue, asked
        if t:
            answer(t - 1)
        if t < arrive_for:
            load = (0.3, 0.9, 1.5)[t * 3 // arrive_for]     # packets per input and cycle
            new = rng.random((n, n)) < load / n
            queue += new
            arrived += int(new.sum())
        elif drain_start is None:
            drain_start, drain_left = t, int(queue.sum())
        if drain_start is not None and not queue.any() and not asked.any():
            return True
        req = queue > asked
        asked += req
        flight.append((t, req, model.arbitrate(req)))
        tb.put_requests(int(pack(req)))
        return False

    # the drain's bound (asserted above) bounds the run: every arrival, at most n * n a cycle
    calls = await tb.run(cycle, arrive_for + lat * (arrive_for * n * n + 1) + 2)
    end = calls - 1
    assert drain_start is not None and not queue.any() and not asked.any(), \
        "the run ended before the queues drained"
    assert granted == arrived > 0
    tb.log.info("%d packets through %d matchings (%d draining) in %.2f s", arrived,
                checker.checked, end - drain_start, tb.seconds)
    tb.finish("request_grant_loop", transactions=checker.checked)
