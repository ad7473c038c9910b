"""cocotb testbench: the OCS transceiver controller RTL (``rtl/optics/ocstrx.py``) against
its behaviour ``models.infinitehbd.ocstrx.OCSTrx``, cycle for cycle.

Commands go in through ``cosim.stream`` (random gaps, protocol monitor), encoded from the
documented layout (``cosim.codec.ocs_command``); every output is decoded from the documented
layout and compared with the model in every cycle. Stimulus: random commands of every kind,
valid and malformed (unknown ops, groups and elements out of range, path 0, backup = path,
non-permutations, element states that do not realise the permutation, zero timing values),
issued whenever the stream allows (so they wait through reconfigurations: back-pressure);
photodetectors that light late, never, flicker or go dark while up; resets at random
moments, also mid-reconfiguration.

Invariants on the RTL alone, from what the testbench drove:

- the element states change only in the cycle after a command that changes them was taken,
  or when a group fails over (a FAULT group becomes SETTLING with ``failover``) -- never
  otherwise, and never after a command the testbench knows to be malformed;
- an applied command is applied exactly: the group's two elements follow the documented path
  table, the matrix states and ``perm`` are the commanded ones;
- a link is UP no earlier than settle + debounce cycles after its reconfiguration began;
- ``heater`` = the calibration code the testbench wrote (or the reset default) for each
  element's state; ``perm`` is the permutation the matrix states realise whenever READY.
"""

from __future__ import annotations

import os
import time

import cocotb
import numpy as np

from cosim.codec import field, ocs_command
from cosim.control import ControlBench, start_clock, value
from cosim.stats import block_params, record_stats
from models.infinitehbd import topology
from models.infinitehbd.ocstrx import (Command, OCSTrx, benes_route, benes_size, benes_trace,
                                       trx_commands)

DEFAULT_TRANSACTIONS = 12_000
PATH_AB = {1: (1, 0), 2: (1, 1), 3: (0, 0)}          # the documented path table


class Light:
    """One photodetector: segments of dark, lit and flicker of random length."""

    def __init__(self, rng) -> None:
        self.rng = rng
        self.left = 0
        self.mode = "lit"

    def step(self) -> bool:
        if self.left <= 0:
            self.mode = self.rng.choice(["lit", "lit", "lit", "dark", "flicker"])
            self.left = int(self.rng.geometric(1 / 60))
        self.left -= 1
        if self.mode == "flicker":
            return bool(self.rng.random() < 0.6)
        return self.mode == "lit"


class Harness(ControlBench):
    def __init__(self, dut, rng) -> None:
        p = block_params()
        self.N, self.G = p.get("lanes", 8), p.get("groups", 2)
        self.H, self.T = p.get("code_bits", 12), p.get("timer_bits", 20)
        self.settle0 = p.get("settle", 100_000)
        self.M = benes_size(self.N)[1]
        self.E = 2 * self.G + self.M
        super().__init__(dut, rng, OCSTrx(self.N, self.G, self.H, self.T, self.settle0))
        self.lights = [[Light(rng) for _ in range(3)] for _ in range(self.G)]
        self.prev = None
        self.ups = 0
        self.failovers = 0
        self.on_reset()

    def on_reset(self) -> None:
        top = (1 << self.T) - 1
        self.prev = None
        self.tb_timing = [self.settle0, min(8, top), min(1000, top)]
        self.tb_cal = [[0, 1 << (self.H - 1)] for _ in range(self.E)]
        self.began = [None] * self.G       # cycle a group's reconfiguration began
        self.timing_at = [None] * self.G   # (settle, debounce) then

    def encode(self, c: Command) -> int:
        return ocs_command(c.op, lanes=self.N, groups=self.G, group=c.group, path=c.path,
                           backup=c.backup, perm=c.perm, states=c.states, element=c.element,
                           state=c.state, code=c.code, which=c.which, value=c.value)

    def drive(self, lit=None) -> tuple:
        pd = [[(lt[k] if lit is None else lit[g][k]) for k in range(3)]
              for g, lt in enumerate([[x.step() for x in row] for row in self.lights])]
        self.dut.pd.value = sum(int(pd[g][k]) << (3 * g + k) for g in range(self.G)
                                for k in range(3))
        return (pd,)

    def read(self) -> dict:
        dut, G, E, H = self.dut, self.G, self.E, self.H
        v = value
        mzi, heater = v(dut.mzi), v(dut.heater)
        k = self.N.bit_length() - 1
        return {
            "ready": bool(int(dut.cmd__ready.value)),
            "mzi": [mzi >> e & 1 for e in range(E)],
            "heater": [field(heater, e, H) for e in range(E)],
            "path": [field(v(dut.path), g, 2) for g in range(G)],
            "backup": [field(v(dut.backup), g, 2) for g in range(G)],
            "link": [field(v(dut.link), g, 3) for g in range(G)],
            "cause": [field(v(dut.cause), g, 2) for g in range(G)],
            "failover": [v(dut.failover) >> g & 1 for g in range(G)],
            "mstate": v(dut.mstate),
            "perm": [field(v(dut.perm), i, k) for i in range(self.N)],
            "busy": bool(int(dut.busy.value)), "error": v(dut.error),
            "reconfigs": v(dut.reconfigs),
        }

    # -- invariants on the RTL alone -------------------------------------------------------
    def valid(self, c: Command) -> bool:
        """The testbench's own reading of the command table."""
        if c.op == 1:
            return c.group < self.G and c.path in (1, 2, 3) and c.backup != c.path
        if c.op == 2:
            if sorted(c.perm) != list(range(self.N)):
                return False
            return benes_trace(list(c.states), self.N) == list(c.perm)
        if c.op == 3:
            return c.element < self.E
        if c.op == 4:
            return c.which < 3 and c.value >= 1
        return c.op == 5

    def invariants(self, t: int, got: dict, taken: Command | None) -> None:
        prev, self.prev = self.prev, (got, taken)
        for e in range(self.E):
            assert got["heater"][e] == self.tb_cal[e][got["mzi"][e]], \
                f"cycle {t}: heater of element {e} is not its calibration code"
        if got["mstate"] == 2:
            assert benes_trace(got["mzi"][2 * self.G:], self.N) == got["perm"], \
                f"cycle {t}: the matrix states do not realise perm {got['perm']}"
        if prev is not None:
            before, cmd = prev
            changed = [e for e in range(self.E) if got["mzi"][e] != before["mzi"][e]]
            failed_over = [g for g in range(self.G) if before["link"][g] == 4 and
                           got["link"][g] == 1 and got["failover"][g]]
            if cmd is not None and self.valid(cmd) and cmd.op in (1, 2):
                if cmd.op == 1:
                    g = cmd.group
                    assert (got["mzi"][2 * g], got["mzi"][2 * g + 1]) == PATH_AB[cmd.path], \
                        f"cycle {t}: group {g} elements are not path {cmd.path}'s"
                    assert got["path"][g] == cmd.path and got["link"][g] == 1
                    allowed = {2 * g, 2 * g + 1}
                    self.began[g] = t
                    self.timing_at[g] = tuple(self.tb_timing[:2])
                else:
                    assert got["mzi"][2 * self.G:] == list(cmd.states), \
                        f"cycle {t}: matrix states are not the commanded ones"
                    assert got["perm"] == list(cmd.perm)
                    allowed = set(range(2 * self.G, self.E))
            elif failed_over:
                g = failed_over[0]
                assert got["path"][g] == before["backup"][g], \
                    f"cycle {t}: group {g} failed over to {got['path'][g]}, not its backup"
                allowed = {2 * g, 2 * g + 1}
                self.began[g] = t
                self.timing_at[g] = tuple(self.tb_timing[:2])
                self.failovers += 1
            else:
                allowed = set()
                if cmd is not None and not self.valid(cmd):
                    assert got["error"] != 0, f"cycle {t}: malformed command raised no error"
            stray = [e for e in changed if e not in allowed]
            assert not stray, f"cycle {t}: elements {stray} changed outside a reconfiguration"
            for g in range(self.G):
                if got["link"][g] == 3 and before["link"][g] != 3:
                    assert self.began[g] is not None, f"cycle {t}: group {g} UP unconfigured"
                    settle, deb = self.timing_at[g]
                    assert t - self.began[g] >= settle + deb, (
                        f"cycle {t}: group {g} UP {t - self.began[g]} cycles after its "
                        f"reconfiguration (settle {settle} + debounce {deb})")
                    self.ups += 1
        # the testbench's shadow of what it wrote (applied at this edge)
        if taken is not None and self.valid(taken):
            if taken.op == 3:
                self.tb_cal[taken.element][taken.state] = taken.code
            elif taken.op == 4:
                self.tb_timing[taken.which] = taken.value

    # -- stimulus --------------------------------------------------------------------------
    def random_command(self) -> Command:
        rng, N, G = self.rng, self.N, self.G
        kind = rng.choice(["path", "path", "path", "perm", "cal", "timing", "bad", "clear"])
        if kind == "path":
            path = int(rng.integers(1, 4))
            backup = int(rng.choice([0, 0] + [b for b in (1, 2, 3) if b != path]))
            return Command.set_path(int(rng.integers(G)), path, backup)
        if kind == "perm":
            return Command.load_perm(rng.permutation(N).tolist())
        if kind == "cal":
            return Command.write_cal(int(rng.integers(self.E)), int(rng.integers(2)),
                                     int(rng.integers(1 << self.H)))
        if kind == "timing":
            which = int(rng.integers(3))
            hi = {0: 24, 1: 6, 2: 48}[which]
            return Command.set_timing(which, int(rng.integers(1, min(hi, (1 << self.T) - 1) + 1)))
        if kind == "clear":
            return Command(5)
        return self.bad_command()

    def bad_command(self) -> Command:
        rng, N, G = self.rng, self.N, self.G
        what = rng.choice(["op", "group", "path0", "same", "notperm", "states", "element",
                           "which", "zero"])
        if what == "op":
            return Command(int(rng.choice([0, 6, 7])))
        if what == "group":
            return Command.set_path(int(rng.integers(G, 16)), 1)
        if what == "path0":
            return Command.set_path(int(rng.integers(G)), 0)
        if what == "same":
            p = int(rng.integers(1, 4))
            return Command.set_path(int(rng.integers(G)), p, p)
        if what == "notperm":
            perm = rng.permutation(N).tolist()
            perm[int(rng.integers(N))] = perm[(int(rng.integers(N)) + 1) % N] if N > 1 else 0
            if sorted(perm) == list(range(N)):
                perm[0] = perm[1]
            return Command(2, perm=tuple(perm), states=tuple(benes_route(list(range(N)))))
        if what == "states":
            perm = rng.permutation(N).tolist()
            states = benes_route(perm)
            while True:          # flip elements until the setting realises another permutation
                states[int(rng.integers(len(states)))] ^= 1
                if benes_trace(states, N) != perm:
                    break
            return Command(2, perm=tuple(perm), states=tuple(states))
        if what == "element":
            eb = self.E.bit_length()
            return Command.write_cal(int(rng.integers(self.E, 1 << eb)), 0, 1)
        if what == "which":
            return Command.set_timing(3, 5)
        return Command.set_timing(int(rng.integers(3)), 0)


def start(dut) -> tuple[Harness, np.random.Generator]:
    rng = start_clock(dut)
    return Harness(dut, rng), rng


@cocotb.test()
async def reset_state(dut):
    """After reset: every group on the loopback, DOWN; matrix bar (identity); default
    calibration codes; nothing taken while the stream is idle. Checked from the documented
    reset state, then against the model for 200 cycles of light."""
    h, _ = start(dut)
    await h.reset()
    got = await h.step()
    assert got["path"] == [3] * h.G and got["link"] == [0] * h.G
    assert got["mzi"] == [0] * h.E and got["perm"] == list(range(h.N))
    assert got["heater"] == [0] * h.E and got["ready"] and not got["busy"]
    assert got["error"] == 0 and got["reconfigs"] == 0
    for _ in range(200):
        await h.step()
    record_stats("reset_state", transactions=1, cycles=h.meter.cycles)


@cocotb.test()
async def random_commands(dut):
    """Random commands (valid and malformed) under random light and random resets."""
    h, rng = start(dut)
    count = int(os.environ.get("AIFABRIC_TRANSACTIONS", DEFAULT_TRANSACTIONS))
    await h.reset()
    # short timings first (the reset values are meant for hardware, not a regression)
    h.send([Command.set_timing(0, 3), Command.set_timing(1, 2), Command.set_timing(2, 20)])
    t0 = time.perf_counter()
    resets = await h.run_random(
        count, lambda: [h.random_command() for _ in range(int(rng.integers(1, 6)))],
        reset_p=0.0015, after_reset=lambda: [Command.set_timing(0, int(rng.integers(1, 8))),
                                             Command.set_timing(2, 30)])
    elapsed = time.perf_counter() - t0
    dut._log.info("%d commands (%d rejected), %d links up, %d failovers, %d resets in %d "
                  "cycles, %.1f s", h.taken, h.rejected, h.ups, h.failovers, resets,
                  h.meter.cycles, elapsed)
    assert h.rejected > count // 20 and h.ups > count // 50 and h.failovers > 10
    assert h.monitor.beats >= count
    record_stats("random_commands", transactions=h.taken, cycles=h.meter.cycles,
                 seconds=elapsed, rejected=h.rejected, ups=h.ups, failovers=h.failovers)


@cocotb.test()
async def ring_configuration(dut):
    """The commands the InfiniteHBD ring builder gives a node's two bundles (a TP ring on a
    K = 2 line with a faulty node), applied with light present: each link comes up on the
    configured path; then the east path goes dark and the group fails over to its backup
    (the K-hop bypass), which is lit."""
    h, _ = start(dut)
    if h.G < 2:
        record_stats("ring_configuration", transactions=0, cycles=0)
        return
    await h.reset()
    h.send([Command.set_timing(0, 10), Command.set_timing(1, 3), Command.set_timing(2, 40)])
    hbd = topology.HBD(nodes=8, R=8, K=2, ring=False)
    rings = topology.build_rings(hbd, faulty=[3], tp=16)
    settings = [v for ring in rings for v in ring.config.items()]
    lit = [[True] * 3 for _ in range(h.G)]
    checked = 0
    for (side, node), setting in settings:
        cmds = [c for bundle, c in trx_commands(side, setting, lanes=h.N, groups=2, K=2)
                if bundle == 0]
        h.send(cmds)
        while not h.source.idle or h.model.busy is not None:
            await h.step(lit=lit)
        for _ in range(5):
            got = await h.step(lit=lit)
        want = 3 if setting == topology.LOOP else int(setting)
        assert got["path"][:2] == [want, want], (side, node, setting, got["path"])
        if setting != topology.LOOP:
            assert got["link"][:2] == [3, 3], (side, node, setting, got["link"])
        else:
            assert got["perm"] == [(i + h.N // 2) % h.N for i in range(h.N)]
        checked += 1
    # the hop-1 path of group 0 goes dark: failover to hop 2
    h.send([Command.set_path(0, 1, 2)])
    while not h.source.idle or h.model.busy is not None:
        await h.step(lit=lit)
    dark = [[False, True, True]] + lit[1:]
    for _ in range(80):
        got = await h.step(lit=dark)
    assert got["path"][0] == 2 and got["failover"][0] == 1 and got["link"][0] == 3, got
    assert got["cause"][0] == 2
    record_stats("ring_configuration", transactions=checked + 1, cycles=h.meter.cycles)
