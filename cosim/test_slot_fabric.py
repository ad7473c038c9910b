"""cocotb testbench: the slot synchronizer and scheduled crossbar (``slot_fabric``: one
``slot_switch`` and N ``slot_endpoint``s over fibres of run-time delay) against the cycle-level
model ``models.chronos.slotsync``.

Every cycle the same inputs go to the RTL and the model and every output is compared: crossbar
words, send windows and their tags, late/missed/locked flags, round-trip times, slot and phase.
Independently of the model, an end-to-end checker follows every word an endpoint launches: from
the launch cycle and the fibre delay it computes the slot and phase the word reaches the
crossbar in, and asserts that the word comes out on the output the stack names for that slot,
one cycle later, and nowhere else - or, when it arrived in the guard time or with another
slot's tag, that it is not delivered at all and ``late`` is set. Nothing may appear on an
output during the guard time.

Scenarios: aligned random runs (random T, G, fibre lengths, stacks with hold counts including
0), dropped sync pulses, an endpoint whose fibre grows or shrinks after calibration, a stack
from the BvN model, and bad configurations / stack overflow.
"""

from __future__ import annotations

import re
import time

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from cosim.stats import record_stats
from models.chronos.bvn import decompose
from models.chronos.slotsync import TAG_MOD, SlotFabric, expected_permutations
from rtl.chronos.bvn import pack_step
from rtl.chronos.slot import TAG_BITS, TIME_BITS

DELAY_BITS = 7


def params(dut) -> dict:
    found = dict(re.findall(r"(?:^|_)(depth|hold_bits|n|d)(\d+)", dut._name.removeprefix(
        "slot_fabric")))
    return {k: int(v) for k, v in found.items()}


def field(value: int, index: int, width: int) -> int:
    return value >> (index * width) & ((1 << width) - 1)


class Harness:
    def __init__(self, dut, rng) -> None:
        p = params(dut)
        self.dut, self.rng = dut, rng
        self.n, self.d, self.depth, self.hold_bits = p["n"], p["d"], p["depth"], p["hold_bits"]
        self.model = SlotFabric(self.n, self.depth)
        self.cycle = 0
        self.period, self.guard, self.enable = 16, 2, False
        self.start = [False] * self.n
        self.delay = [1] * self.n
        self.believed = [1] * self.n   # fibre delays as measured at calibration
        self.mute = set()              # hosts that send nothing
        self.sync_drop = [False] * self.n
        self.clear = False
        self.entries = []
        self.t0 = None            # cycle of slot 0, phase 0 (the master's clock)
        self.inflight = []        # (arrival cycle at the output, output, data, source)
        self.checker_on = True
        self.stats = {"delivered": 0, "dropped": 0, "words": 0}

    # -- inputs ------------------------------------------------------------------------------
    def apply_static(self) -> None:
        dut = self.dut
        dut.period.value = self.period
        dut.guard.value = self.guard
        dut.enable.value = int(self.enable)
        dut.start.value = sum(1 << i for i, s in enumerate(self.start) if s)
        dut.delay.value = sum(d << (i * DELAY_BITS) for i, d in enumerate(self.delay))
        dut.sync_drop.value = sum(1 << i for i, s in enumerate(self.sync_drop) if s)
        dut.clear.value = int(self.clear)

    async def reset(self) -> None:
        dut = self.dut
        self.apply_static()
        dut.schedule__valid.value = 0
        dut.send_valid.value = 0
        dut.send_data.value = 0
        dut.rst.value = 1
        await RisingEdge(dut.clk)
        await RisingEdge(dut.clk)
        dut.rst.value = 0

    async def load(self, entries, hold_bits=None) -> None:
        """Stream a stack into the switch (the master must be disabled)."""
        dut, n = self.dut, self.n
        w = hold_bits or self.hold_bits
        idle = [(False, 0)] * n
        for k, (perm, hold) in enumerate(entries):
            self.apply_static()
            dut.send_valid.value = 0
            dut.schedule__valid.value = 1
            dut.schedule__payload.value = pack_step(perm, hold, k == len(entries) - 1, n, w)
            expect = self.model.cycle(period=self.period, guard=self.guard, enable=self.enable,
                                      start=self.start, delay=self.delay,
                                      sync_drop=self.sync_drop, send=idle, clear=self.clear)
            await ReadOnly()
            assert int(dut.schedule__ready.value), "stack not accepted while disabled"
            self.compare(self.read(), expect, loading=True)
            await RisingEdge(dut.clk)
            self.cycle += 1
        dut.schedule__valid.value = 0
        # what the stack holds: hold-0 entries dropped, at most `depth` kept
        self.entries = [e for e in entries if e[1] > 0][: self.depth]
        self.model.load(entries)

    # -- one cycle ---------------------------------------------------------------------------
    async def step(self, offer_p: float = 0.8) -> dict:
        dut, n, rng = self.dut, self.n, self.rng
        self.apply_static()
        send = [(bool(rng.random() < offer_p) and self.scheduled(i),
                 int(rng.integers(1 << self.d))) for i in range(n)]
        dut.send_valid.value = sum(1 << i for i, (v, _) in enumerate(send) if v)
        dut.send_data.value = sum(x << (i * self.d) for i, (_, x) in enumerate(send))
        expect = self.model.cycle(period=self.period, guard=self.guard, enable=self.enable,
                                  start=self.start, delay=self.delay,
                                  sync_drop=self.sync_drop, send=send, clear=self.clear)
        await ReadOnly()
        got = self.read()
        self.compare(got, expect)
        self.end_to_end(got, send)
        await RisingEdge(dut.clk)
        self.cycle += 1
        return got

    def read(self) -> dict:
        dut, n, d = self.dut, self.n, self.d
        tx = int(dut.tx.value.to_unsigned())
        window = int(dut.window.value.to_unsigned())
        tags = int(dut.window_tag.value.to_unsigned())
        bits = lambda v: [bool(v >> i & 1) for i in range(n)]  # noqa: E731
        rtt = int(dut.rtt.value.to_unsigned())
        return {
            "tx": [field(tx, j, d + 1) >> 1 if field(tx, j, d + 1) & 1 else None
                   for j in range(n)],
            "window": bits(window),
            "window_tag": [field(tags, i, TAG_BITS) if window >> i & 1 else None
                           for i in range(n)],
            "late": bits(int(dut.late.value.to_unsigned())),
            "missed": bits(int(dut.missed.value.to_unsigned())),
            "locked": bits(int(dut.locked.value.to_unsigned())),
            "rtt_error": bits(int(dut.rtt_error.value.to_unsigned())),
            "rtt": [field(rtt, i, TIME_BITS) for i in range(n)],
            "slot": int(dut.slot.value.to_unsigned()),
            "phase": int(dut.phase.value.to_unsigned()),
            "config_error": bool(int(dut.config_error.value)),
            "entries": int(dut.entries.value.to_unsigned()),
            "overflow": bool(int(dut.overflow.value)),
        }

    def compare(self, got: dict, expect: dict, loading: bool = False) -> None:
        """RTL outputs == model outputs; the stack size only once a load is complete (the
        RTL counts entries as they arrive, the model takes the stack whole)."""
        expect = dict(expect, entries=len(self.model.switch.stack),
                      overflow=self.model.switch.overflow)
        keys = ["tx", "window", "window_tag", "late", "missed", "locked", "rtt_error", "rtt",
                "slot", "phase"] + ([] if loading else ["entries", "overflow"])
        for key in keys:
            assert got[key] == expect[key], (
                f"cycle {self.cycle}: {key}: RTL {got[key]}, model {expect[key]}")

    # -- the end-to-end checker (uses the stack and the fibre delays, not the model) ---------
    def end_to_end(self, got: dict, send) -> None:
        if self.t0 is None and self.enable and got["slot"] == 0 and got["phase"] == 0 \
                and got["tx"] is not None and self._running(got):
            self.t0 = self.cycle
        # words delivered this cycle must be exactly the ones due now
        due = [w for w in self.inflight if w[0] == self.cycle]
        self.inflight = [w for w in self.inflight if w[0] > self.cycle]
        want = [None] * self.n
        for _, j, data, _ in due:
            want[j] = data
        if self.checker_on:
            assert got["tx"] == want, (f"cycle {self.cycle}: outputs {got['tx']}, the "
                                       f"schedule says {want}")
            if self.t0 is not None:
                phase = (self.cycle - 1 - self.t0) % self.period
                if phase < self.guard:
                    assert not any(x is not None for x in got["tx"]), \
                        f"cycle {self.cycle}: delivered during the guard time"
        self.stats["delivered"] += sum(x is not None for x in got["tx"])
        # words launched this cycle (offered while the window is open)
        for i, (valid, data) in enumerate(send):
            if not (valid and got["window"][i]):
                continue
            self.stats["words"] += 1
            arrive = self.cycle + 1 + max(1, self.delay[i])   # at the crossbar input
            if self.t0 is None:
                continue
            s, p = divmod(arrive - self.t0, self.period)
            perms = expected_permutations(self.entries, s + 1)
            j = perms[s][i] if s < len(perms) and s >= 0 else -1
            if p >= self.guard and j >= 0 and got["window_tag"][i] == s % TAG_MOD:
                self.inflight.append((arrive + 1, j, data, i))
            else:
                self.stats["dropped"] += 1

    def scheduled(self, i: int) -> bool:
        """The host's view: is input i connected in the slot a word offered now would reach
        the crossbar in (by the fibre delay measured at calibration)? Hosts know the stack,
        as Chronos endpoints do; they send only into their own circuits."""
        if i in self.mute:
            return False
        if self.t0 is None or not self.enable:
            return True   # before slot 0 the endpoint has no window anyway
        s = (self.cycle + 1 + max(1, self.believed[i]) - self.t0) // self.period
        perms = expected_permutations(self.entries, s + 1)
        return s < len(perms) and perms[s][i] >= 0

    def _running(self, got) -> bool:
        return not got["config_error"] and bool(self.entries)

    async def run(self, cycles: int, offer_p: float = 0.8) -> None:
        for _ in range(cycles):
            await self.step(offer_p)

    async def calibrate(self) -> None:
        """Start every endpoint and wait until all have measured their round trip."""
        self.start = [True] * self.n
        self.believed = list(self.delay)
        await self.run(2 * max(self.delay) + 6, offer_p=0.0)
        rtt = self.model.endpoints
        for i, ep in enumerate(rtt):
            assert ep.measured and ep.rtt == 2 * max(1, self.delay[i]) + 1, \
                (i, ep.rtt, self.delay[i])

    async def go(self) -> None:
        """Enable the master; the checker learns slot 0's first cycle from the outputs."""
        self.enable = True
        self.t0 = self.cycle + 1


def random_stack(rng, n: int, count: int, max_hold: int):
    entries = []
    for _ in range(count):
        perm = [int(j) if rng.random() < 0.85 else -1 for j in rng.permutation(n)]
        entries.append((perm, int(rng.integers(0, max_hold + 1))))
    if all(h == 0 for _, h in entries):
        entries[0] = (entries[0][0], 1)
    return entries


async def setup(dut, seed_offset: int):
    rng = np.random.default_rng(cocotb.RANDOM_SEED + seed_offset)
    Clock(dut.clk, 10, unit="ns").start()
    h = Harness(dut, rng)
    await h.reset()
    return h, rng


def configure(h: Harness, rng) -> None:
    h.guard = int(rng.integers(1, 9))
    h.period = int(rng.integers(h.guard + 4, 49))
    dmax = min(64, (h.period - 1) // 2)
    h.delay = [int(rng.integers(1, dmax + 1)) for _ in range(h.n)]


async def restart(h: Harness) -> None:
    """Stop sending, let every word arrive, stop master and endpoints, drain the fibres."""
    await h.run(3 * h.period + 70, offer_p=0.0)
    assert not h.inflight, f"{len(h.inflight)} words never delivered"
    h.enable = False
    h.start = [False] * h.n
    h.t0 = None
    await h.run(70, offer_p=0.0)


@cocotb.test()
async def aligned_random(dut):
    """Random T, G, fibres and stacks: every launched word reaches the scheduled output."""
    h, rng = await setup(dut, 0)
    start = time.perf_counter()
    for _ in range(8):
        configure(h, rng)
        await h.load(random_stack(rng, h.n, int(rng.integers(1, min(h.depth, 12) + 1)), 3))
        await h.calibrate()
        await h.go()
        await h.run(20 * h.period)
        assert not any(h.model.switch.late), "late words on an aligned fabric"
        assert h.stats["dropped"] == 0, f"{h.stats['dropped']} aligned words dropped"
        await restart(h)
    assert h.stats["delivered"] == h.stats["words"] > 0, h.stats
    record_stats("aligned_random", transactions=h.stats["delivered"], cycles=h.cycle,
                 seconds=time.perf_counter() - start)


@cocotb.test()
async def missed_sync(dut):
    """Dropped sync pulses: the endpoint flags them, keeps time, and its words still arrive."""
    h, rng = await setup(dut, 1)
    configure(h, rng)
    await h.load(random_stack(rng, h.n, 4, 2))
    await h.calibrate()
    await h.go()
    await h.run(3 * h.period)
    victim = int(rng.integers(h.n))
    h.sync_drop[victim] = True
    await h.run(5 * h.period)
    h.sync_drop[victim] = False
    got = await h.step()
    assert got["missed"][victim], "missed sync pulses not flagged"
    assert sum(got["missed"]) == 1, got["missed"]
    await h.run(3 * h.period)
    h.clear = True
    await h.step()
    h.clear = False
    got = await h.step()
    assert not any(got["missed"]), "clear did not reset missed"
    assert h.stats["dropped"] == 0 and not any(h.model.switch.late)
    record_stats("missed_sync", transactions=h.stats["delivered"], cycles=h.cycle)


@cocotb.test()
async def late_endpoint(dut):
    """A fibre that grows (or shrinks) after calibration: the crossbar drops and flags the
    misaligned words and delivers nothing to a wrong output or in the guard time."""
    h, rng = await setup(dut, 2)
    flagged = 0
    for shift in (1, 3, -2, 9):
        configure(h, rng)
        h.delay = [max(h.delay[0], 3)] * h.n if shift < 0 else h.delay
        await h.load(random_stack(rng, h.n, 3, 2))
        await h.calibrate()
        await h.go()
        await h.run(2 * h.period)
        victim = int(rng.integers(h.n))
        # change the fibre only while it is empty (a delay line re-emits what it holds)
        h.mute = {victim}
        await h.run(70)
        h.delay[victim] = min(64, max(1, h.delay[victim] + shift))
        await h.run(70)
        h.mute = set()
        await h.run(6 * h.period)
        got = await h.step(offer_p=0.0)
        # every late word was predicted dropped by the checker and matched by the model
        if h.stats["dropped"]:
            assert got["late"][victim], "late words not flagged"
            flagged += 1
        assert [k for k, x in enumerate(got["late"]) if x] in ([], [victim]), got["late"]
        h.stats["dropped"] = 0
        await restart(h)
        h.clear = True
        await h.step(offer_p=0.0)
        h.clear = False
    assert flagged >= 3, f"only {flagged} of 4 misaligned fibres produced late words"
    record_stats("late_endpoint", transactions=h.stats["delivered"], cycles=h.cycle)


@cocotb.test()
async def bvn_stack(dut):
    """A stack made by the BvN model (weights = hold counts) is played slot by slot."""
    h, rng = await setup(dut, 3)
    configure(h, rng)
    demand = rng.integers(0, 3, (h.n, h.n)) * (rng.random((h.n, h.n)) < 0.6)
    schedule = decompose(demand, "wavefront")
    entries = [(list(map(int, p)), int(wt)) for p, wt in schedule][: h.depth]
    entries.insert(1, (list(range(h.n)), 0))   # a hold-0 entry is skipped
    await h.load(entries)
    got = await h.step(offer_p=0.0)
    assert got["entries"] == len(entries) - 1, got["entries"]
    await h.calibrate()
    await h.go()
    slots = 2 * sum(wt for _, wt in entries) + 2
    await h.run(slots * h.period)
    assert h.stats["dropped"] == 0 and h.stats["delivered"] > 0
    record_stats("bvn_stack", transactions=h.stats["delivered"], cycles=h.cycle)


@cocotb.test()
async def bad_configuration(dut):
    """guard >= period, period < 2: config_error, no slot, nothing delivered. More entries
    than the stack holds: overflow, the first ``depth`` entries are played."""
    h, rng = await setup(dut, 4)
    configure(h, rng)
    await h.load(random_stack(rng, h.n, 2, 1))
    await h.calibrate()
    for period, guard in ((8, 8), (8, 12), (1, 0)):
        h.period, h.guard = period, guard
        h.enable = True
        for _ in range(40):
            got = await h.step()
            assert got["config_error"] and got["slot"] == 0 and got["phase"] == 0
            assert not any(x is not None for x in got["tx"])
    await restart(h)
    configure(h, rng)
    entries = random_stack(rng, h.n, h.depth + 3, 1)
    entries = [(p, 1) for p, _ in entries]
    await h.load(entries)
    got = await h.step(offer_p=0.0)
    assert got["overflow"] and got["entries"] == h.depth, (got["overflow"], got["entries"])
    await h.calibrate()
    await h.go()
    await h.run((h.depth + 4) * h.period)
    assert h.stats["dropped"] == 0
    record_stats("bad_configuration", transactions=h.stats["delivered"], cycles=h.cycle)
