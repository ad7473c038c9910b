"""cocotb testbench: the OCS transceiver controller RTL (``rtl/optics/ocstrx.py``) against the
contract in ``models.infinitehbd.ocstrx``, checked by a transaction-level scoreboard.

The bench is built on the controllers' cycle (``cosim.control``, on the testbench layer
``cosim.testbench``). Commands go in through the layer's stream source (random gaps) and
monitor (the stream rules, with the reset), encoded from the documented layout
(``cosim.codec.ocs_command``); the outputs are decoded from the documented layout. The
scoreboard is built from behaviour, not from the RTL's registers: what was commanded and
accepted (by the testbench's own reading of the command table), which element states realise
it (the path table; ``benes_trace`` of the matrix states for the permutation), what the
photodetectors showed, and the documented timing windows. Every cycle it checks, for each group:

- the elements are the path table's for the group's path; the path and backup are the
  commanded ones, or after a failover the old backup and none; the heater codes are the
  calibration codes written for each element's state; the matrix states are the commanded
  ones and realise ``perm``;
- a reconfiguration starts (SETTLING) exactly when one was commanded (SET_PATH, not to the
  path a group has UP; a calibration write of a live path element), or when an armed group
  in FAULT has a backup (then in the next cycle, every such group together) -- never
  otherwise; a held group never fails over;
- SETTLING lasts exactly S cycles; UP never earlier than S + D cycles after the command and
  only after D consecutive lit samples, and no later than S + D + 1 when the light was
  there for the D samples; FAULT (no light) never before W samples and by S + W + 1;
  UP -> FAULT (light lost) only after D dark samples while watched, and then at once;
  loopback groups are not watched while the matrix settles and are checked again (UP or
  FAULT -> CHECKING) when it is READY;
- a malformed command sets its own error bit (the sticky word is compared exactly) and
  changes nothing; ``reconfigs`` counts every settle started; ``ready`` is high exactly
  when nothing settles or checks and no failover waits, and low from a reset's first edge
  through the first cycle after it (registered).

Stimulus: random commands of every kind, valid and malformed, issued whenever the stream
allows (back-pressure); settle, debounce and window drawn log-uniformly up to the timer's
full width; photodetectors that light late, never, flicker or go dark while up, each path
also through a light shared by every group (a cut fibre darkens all groups at once); holds
and re-arms; resets at random moments, also mid-reconfiguration.
"""

from __future__ import annotations

import math
import os
import time

import cocotb

from aifabric.cosim.codec import field, ocs_command
from aifabric.cosim.control import ControlBench
from aifabric.models.infinitehbd import topology
from aifabric.models.infinitehbd.ocstrx import (ERRORS, Command, benes_route, benes_size, benes_trace,
                                       ring_commands)
from aifabric.rtl.optics.ocstrx import Link, OCSTrxController

DEFAULT_TRANSACTIONS = 10_000
PATH_AB = {1: (1, 0), 2: (1, 1), 3: (0, 0)}          # the documented path table
DOWN, SETTLING, CHECKING, UP, FAULT = Link
# what the random test must have seen at least once (the layer's coverage minimums): every
# error, every event the contract names
RANDOM_COVERAGE = {**{f"error {e}": 1 for e in ERRORS},
                   **{what: 1 for what in ("up", "no light", "light lost", "failover",
                                           "path in use: no settle", "live calibration write",
                                           "loopback checked again", "held in FAULT",
                                           "SET_PATH every group",
                                           "groups fail over together")}}


class Light:
    """One photodetector: segments of dark, lit and flicker of log-uniform length up to
    ``longest`` cycles."""

    def __init__(self, rng, longest: int) -> None:
        self.rng, self.longest = rng, longest
        self.left = 0
        self.mode = "lit"

    def step(self) -> bool:
        if self.left <= 0:
            self.mode = self.rng.choice(["lit", "lit", "lit", "dark", "flicker"])
            self.left = int(math.exp(self.rng.uniform(0, math.log(self.longest))))
        self.left -= 1
        if self.mode == "flicker":
            return bool(self.rng.random() < 0.6)
        return self.mode == "lit"


class Scoreboard:
    """What the controller must do, from the commands taken and the light seen."""

    def __init__(self, N, G, H, T, settle0, coverage) -> None:
        self.N, self.G, self.H, self.T, self.settle0 = N, G, H, T, settle0
        self.M = benes_size(N)[1]
        self.E = 2 * G + self.M
        self.coverage = coverage          # the events seen (the layer's coverage bins)
        self.seen = coverage.counts
        self.reset()

    def note(self, what: str, n: int = 1) -> None:
        self.coverage.hit(what, n)

    def reset(self) -> None:
        top = (1 << self.T) - 1
        G = self.G
        self.timing = [self.settle0, min(8, top), min(1000, top)]
        self.cal = [[0, 1 << (self.H - 1)] for _ in range(self.E)]
        self.armed = [1] * G
        self.path, self.backup = [3] * G, [0] * G
        self.mat = [0] * self.M
        self.perm = list(range(self.N))
        self.traced = (None, None)
        self.err = 0
        self.ep = [None] * G         # the group's reconfiguration or re-check in progress
        self.drun = [0] * G          # dark samples in a row while UP and watched
        self.mep = None              # (edge cycle, settle) of the matrix settle
        self.prev = None
        self.pending_cmd = None      # (command, verdict) taken at the last edge
        self.pd = None               # photodetectors at the last edge

    # -- the command table, as the testbench reads it -------------------------------------
    def verdict(self, c: Command) -> str | None:
        G = self.G
        if c.op == 1:
            if c.group >= G or (c.every and c.group):
                return "GROUP"
            if c.path not in (1, 2, 3) or c.backup == c.path:
                return "PATH"
        elif c.op == 2:
            if sorted(c.perm) != list(range(self.N)):
                return "PERM"
            if benes_trace(list(c.states), self.N) != list(c.perm):
                return "STATES"
        elif c.op == 3:
            if c.element >= self.E:
                return "ELEMENT"
        elif c.op == 4:
            if c.which > 2 or c.value < 1:
                return "TIMING"
            new = list(self.timing)
            new[c.which] = c.value
            if new[2] < new[1]:
                return "TIMING"
        elif c.op == 6:
            if c.mask >> G:
                return "GROUP"
        elif c.op != 5:
            return "OPCODE"
        return None

    def take(self, c: Command | None, pd) -> str | None:
        """The command taken at this edge (if any) and the photodetectors: returns the
        verdict ("ok" or the error)."""
        self.pd = pd
        if c is None:
            self.pending_cmd = None
            return None
        v = self.verdict(c)
        self.pending_cmd = (c, v)
        return "ok" if v is None else v

    # -- the check of one cycle ------------------------------------------------------------
    def check(self, t: int, got: dict) -> None:
        if self.prev is None:
            self._check_reset(t, got)
        else:
            self._check_edge(t, self.prev, got)
        self._check_static(t, got)
        self.prev = got

    def _check_reset(self, t, got) -> None:
        G = self.G
        want = {"path": [3] * G, "backup": [0] * G, "link": [DOWN] * G, "cause": [0] * G,
                "failover": [0] * G, "armed": [1] * G, "mstate": 0,
                "perm": list(range(self.N)), "error": 0, "reconfigs": 0,
                "mzi": [0] * self.E}
        bad = {k: (got[k], v) for k, v in want.items() if got[k] != v}
        assert not bad, f"cycle {t}: not the documented reset state (rtl, documented): {bad}"

    def _check_static(self, t, got) -> None:
        G = self.G
        for g in range(G):
            ab = (got["mzi"][2 * g], got["mzi"][2 * g + 1])
            assert got["path"][g] == self.path[g] and got["backup"][g] == self.backup[g], (
                f"cycle {t}: group {g} path/backup {got['path'][g]}/{got['backup'][g]}, "
                f"commanded {self.path[g]}/{self.backup[g]}")
            assert ab == PATH_AB[self.path[g]], \
                f"cycle {t}: group {g} elements {ab} are not path {self.path[g]}'s"
        assert got["mzi"][2 * G:] == self.mat, f"cycle {t}: matrix states not the commanded"
        if self.traced[0] != self.mat:            # (traced once per matrix setting)
            self.traced = (list(self.mat), benes_trace(self.mat, self.N))
        assert got["perm"] == self.perm == self.traced[1], \
            f"cycle {t}: perm {got['perm']} (commanded {self.perm}) not the states' permutation"
        cal, mzi = self.cal, got["mzi"]
        heater = [cal[e][mzi[e]] for e in range(self.E)]
        if got["heater"] != heater:
            e = next(e for e in range(self.E) if got["heater"][e] != heater[e])
            raise AssertionError(f"cycle {t}: heater of element {e} is not its calibration "
                                 f"code")
        assert got["error"] == self.err, \
            f"cycle {t}: error word {got['error']:#b}, expected {self.err:#b}"
        assert got["armed"] == self.armed, f"cycle {t}: armed {got['armed']} != {self.armed}"
        busy = got["mstate"] == 1 or any(x in (SETTLING, CHECKING) for x in got["link"])
        waits = any(got["link"][g] == FAULT and self.backup[g] and self.armed[g]
                    for g in range(G))
        assert got["busy"] == busy, f"cycle {t}: busy {got['busy']}, settling/checking {busy}"
        assert got["ready"] == (not busy and not waits), \
            f"cycle {t}: ready {got['ready']} (busy {busy}, a failover waits {waits})"

    def _check_edge(self, t, prev, got) -> None:
        G, (S, D, W) = self.G, self.timing
        cmd, verdict = self.pending_cmd or (None, None)
        pd = self.pd
        ok = cmd is not None and verdict is None
        if cmd is not None and verdict is not None:
            self.err |= 1 << ERRORS.index(verdict)
            self.note(f"error {verdict}")
        # reconfigurations this edge starts, and the matrix
        starts = {}
        for g in range(G):
            if prev["link"][g] == FAULT and prev["backup"][g] and self.armed[g]:
                starts[g] = (prev["backup"][g], 0, 1, "failover")
        mstart = False
        if ok and cmd.op == 1:
            for g in (range(G) if cmd.every else [cmd.group]):
                if cmd.path == prev["path"][g] and prev["link"][g] == UP:
                    self.backup[g] = cmd.backup
                    self.note("path in use: no settle")
                else:
                    starts[g] = (cmd.path, cmd.backup, 0, "command")
            if cmd.every:
                self.note("SET_PATH every group")
        elif ok and cmd.op == 2:
            self.mat, self.perm, mstart = list(cmd.states), list(cmd.perm), True
        elif ok and cmd.op == 3:
            e, s = cmd.element, cmd.state & 1
            self.cal[e][s] = cmd.code
            if prev["mzi"][e] == s:
                self.note("live calibration write")
                if e < 2 * G:
                    g = e // 2
                    starts[g] = (prev["path"][g], prev["backup"][g], 0, "command")
                else:
                    mstart = True
        elif ok and cmd.op == 4:
            self.timing[cmd.which] = cmd.value
        elif ok and cmd.op == 5:
            self.err = 0
        elif ok and cmd.op == 6:
            self.armed = [cmd.mask >> g & 1 for g in range(G)]
            self.note("hold" if cmd.mask != (1 << G) - 1 else "arm all")
        # the matrix
        msettling = prev["mstate"] == 1
        if mstart:
            assert got["mstate"] == 1, f"cycle {t}: the matrix does not settle"
            self.mep = (t - 1, S)
        elif msettling:
            due = t == self.mep[0] + self.mep[1] + 1
            assert got["mstate"] == (2 if due else 1), (
                f"cycle {t}: matrix state {got['mstate']}, settle of {self.mep[1]} from "
                f"{self.mep[0]}")
        else:
            assert got["mstate"] == prev["mstate"], f"cycle {t}: matrix state changed"
        ready_now = msettling and got["mstate"] == 2
        # each group
        for g in range(G):
            p0, l0, l1 = prev["path"][g], prev["link"][g], got["link"][g]
            lit = bool(pd[g][p0 - 1])
            ep = self.ep[g]
            if l0 == UP:
                watched = not (msettling and p0 == 3)
                self.drun[g] = (0 if lit else self.drun[g] + 1) if watched else 0
                if not watched and not lit:
                    self.note("loopback unwatched while the matrix settles")
            elif l0 == CHECKING:
                ep["samples"] += 1
                ep["lrun"] = ep["lrun"] + 1 if lit else 0
                ep["all_lit"] &= lit
            if g in starts:
                path, backup, fo, why = starts[g]
                assert l1 == SETTLING, f"cycle {t}: group {g} does not start its {why} settle"
                assert got["failover"][g] == fo, f"cycle {t}: group {g} failover bit"
                if fo:
                    assert got["cause"][g] == prev["cause"][g]
                    self.note("failover")
                else:
                    assert got["cause"][g] == 0, f"cycle {t}: group {g} cause not cleared"
                self.path[g], self.backup[g], self.drun[g] = path, backup, 0
                self.ep[g] = {"tk": t - 1, "S": S, "c0": t + S, "samples": 0, "lrun": 0,
                              "all_lit": True}
                continue
            if ready_now and p0 == 3 and l0 in (UP, FAULT):
                assert l1 == CHECKING and got["cause"][g] == 0, \
                    f"cycle {t}: loopback group {g} not checked again when the matrix is READY"
                self.ep[g] = {"tk": None, "S": 0, "c0": t, "samples": 0, "lrun": 0,
                              "all_lit": True}
                self.drun[g] = 0
                self.note("loopback checked again")
                continue
            assert got["failover"][g] == prev["failover"][g], f"cycle {t}: failover bit"
            if l0 == SETTLING:
                due = t == ep["c0"]
                assert l1 == (CHECKING if due else SETTLING), (
                    f"cycle {t}: group {g} link {l1}, settle of {ep['S']} from {ep['tk']}")
            elif l0 == CHECKING:
                if l1 == UP:
                    assert ep["lrun"] >= D, \
                        f"cycle {t}: group {g} UP after {ep['lrun']} lit samples (D = {D})"
                    if ep["tk"] is not None:
                        assert t - ep["tk"] >= ep["S"] + D, f"cycle {t}: group {g} UP early"
                    self.note("up")
                elif l1 == FAULT:
                    assert ep["samples"] >= W and got["cause"][g] == 1, (
                        f"cycle {t}: group {g} FAULT after {ep['samples']} samples "
                        f"(W = {W}), cause {got['cause'][g]}")
                    self.note("no light")
                else:
                    assert l1 == CHECKING, f"cycle {t}: group {g} CHECKING -> {l1}"
                    assert not (ep["all_lit"] and ep["samples"] >= D), (
                        f"cycle {t}: group {g} lit for {ep['samples']} samples, not UP "
                        f"(S + D + 1 passed)")
                    assert ep["samples"] < W, f"cycle {t}: group {g} not FAULT after W samples"
            elif l0 == UP:
                if self.drun[g] >= D:
                    assert l1 == FAULT and got["cause"][g] == 2, \
                        f"cycle {t}: group {g} dark for {self.drun[g]} samples, still {l1}"
                    self.note("light lost")
                else:
                    assert l1 == UP, f"cycle {t}: group {g} left UP (dark run {self.drun[g]})"
            else:
                assert l1 == l0, f"cycle {t}: group {g} {l0} -> {l1} with nothing commanded"
                if l0 == FAULT and prev["backup"][g] and not self.armed[g]:
                    self.note("held in FAULT")
            if l1 != UP:
                self.drun[g] = 0
            if l1 in (UP, FAULT, DOWN) and l0 in (SETTLING, CHECKING):
                self.ep[g] = None
            if l1 == l0 and l0 in (UP, FAULT, DOWN):
                assert got["cause"][g] == prev["cause"][g], f"cycle {t}: group {g} cause"
        if len([g for g in starts if starts[g][3] == "failover"]) > 1:
            self.note("groups fail over together")
        want_rc = (prev["reconfigs"] + len(starts) + mstart) % (1 << 16)
        assert got["reconfigs"] == want_rc, \
            f"cycle {t}: reconfigs {got['reconfigs']}, {len(starts) + mstart} settles started"


class Harness(ControlBench):
    def __init__(self, dut, coverage: dict | None = None) -> None:
        super().__init__(dut, OCSTrxController, coverage=coverage)
        p, rng = self.params, self.rng
        self.N, self.G = p.get("lanes", 8), p.get("groups", 2)
        self.H, self.T = p.get("code_bits", 12), p.get("timer_bits", 20)
        self.settle0 = p.get("settle", 100_000)
        self.M = benes_size(self.N)[1]
        self.E = 2 * self.G + self.M
        self.board = Scoreboard(self.N, self.G, self.H, self.T, self.settle0, self.coverage)
        top = (1 << self.T) - 1
        self.lights = [[Light(rng, 4 * top) for _ in range(3)] for _ in range(self.G)]
        self.fibres = [Light(rng, 4 * top) for _ in range(3)]     # shared by the groups
        self.drawn: list[int] = []
        self._put_pd = self.io.writer("pd")
        self._outputs = [self.io.bits_reader(n) for n in self.OUTPUTS]

    def on_reset(self) -> None:
        self.board.reset()

    def encode(self, c: Command) -> int:
        return ocs_command(c.op, lanes=self.N, groups=self.G, group=c.group, path=c.path,
                           backup=c.backup, perm=c.perm, states=c.states, element=c.element,
                           state=c.state, code=c.code, which=c.which, value=c.value,
                           every=c.every, mask=c.mask)

    def drive(self, lit=None) -> tuple:
        fibre = [f.step() for f in self.fibres]
        pd = [[(lt[k] and fibre[k] if lit is None else lit[g][k]) for k in range(3)]
              for g, lt in enumerate([[x.step() for x in row] for row in self.lights])]
        self._put_pd(sum(int(pd[g][k]) << (3 * g + k) for g in range(self.G)
                                for k in range(3)))
        return (pd,)

    OUTPUTS = ("cmd__ready", "mzi", "heater", "path", "backup", "link", "cause", "failover",
               "armed", "mstate", "perm", "busy", "error", "reconfigs")

    def read(self) -> dict:
        """The outputs, decoded from the documented layout (each port read once a cycle, as
        its bit string: Verilator's values are two-state)."""
        (ready, mzi, heater, path, backup, link, cause, failover, armed, mstate, perm, busy,
         error, reconfigs) = [int(read(), 2) for read in self._outputs]
        G, E, H = self.G, self.E, self.H
        k = self.N.bit_length() - 1
        return {
            "ready": bool(ready),
            "mzi": [mzi >> e & 1 for e in range(E)],
            "heater": [field(heater, e, H) for e in range(E)],
            "path": [field(path, g, 2) for g in range(G)],
            "backup": [field(backup, g, 2) for g in range(G)],
            "link": [field(link, g, 3) for g in range(G)],
            "cause": [field(cause, g, 2) for g in range(G)],
            "failover": [failover >> g & 1 for g in range(G)],
            "armed": [armed >> g & 1 for g in range(G)],
            "mstate": mstate,
            "perm": [field(perm, i, k) for i in range(self.N)],
            "busy": bool(busy), "error": error, "reconfigs": reconfigs,
        }

    def compare(self, t: int, got: dict) -> None:
        self.board.check(t, got)

    def advance(self, taken, inputs, rst: bool = False):
        if rst:
            return None
        return self.board.take(taken, inputs[0])

    def invariants(self, t: int, got: dict, taken) -> None:
        pass                       # the scoreboard checks everything in ``compare``

    # -- stimulus --------------------------------------------------------------------------
    def log_uniform(self, low: int = 1) -> int:
        top = (1 << self.T) - 1
        v = max(low, min(top, int(math.exp(self.rng.uniform(0, math.log(top + 1))))))
        self.drawn.append(v)
        return v

    def random_command(self) -> Command:
        rng, N, G = self.rng, self.N, self.G
        kind = rng.choice(["path", "path", "every", "perm", "cal", "cal", "timing", "arm",
                           "bad", "bad", "clear"])
        if kind in ("path", "every"):
            path = int(rng.integers(1, 4))
            backup = int(rng.choice([0, 0] + [b for b in (1, 2, 3) if b != path]))
            if kind == "every":
                return Command.set_path(0, path, backup, every=1)
            return Command.set_path(int(rng.integers(G)), path, backup)
        if kind == "perm":
            return Command.load_perm(rng.permutation(N).tolist())
        if kind == "cal":
            return Command.write_cal(int(rng.integers(self.E)), int(rng.integers(2)),
                                     int(rng.integers(1 << self.H)))
        if kind == "timing":
            which = int(rng.integers(3))
            S, D, W = self.board.timing
            value = self.log_uniform()
            if which == 1 and rng.random() < 0.8:
                value = min(value, W)                 # mostly valid
            elif which == 2 and rng.random() < 0.8:
                value = max(value, D)
            return Command.set_timing(which, value)
        if kind == "arm":
            full = (1 << G) - 1
            return Command.arm(full if rng.random() < 0.6 else int(rng.integers(full + 1)))
        if kind == "clear":
            return Command(5)
        return self.bad_command()

    def bad_command(self) -> Command:
        rng, N, G = self.rng, self.N, self.G
        what = rng.choice(["op", "group", "every", "path0", "same", "notperm", "states",
                           "element", "which", "zero", "window", "mask"])
        if what == "op":
            return Command(int(rng.choice([0, 7])))
        if what == "group":
            return Command.set_path(int(rng.integers(G, 16)), 1)
        if what == "every":
            return Command.set_path(int(rng.integers(1, 16)), 1, 0, every=1)
        if what == "path0":
            return Command.set_path(int(rng.integers(G)), 0)
        if what == "same":
            p = int(rng.integers(1, 4))
            return Command.set_path(int(rng.integers(G)), p, p)
        if what == "notperm":
            perm = rng.permutation(N).tolist()
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
        if what == "window":
            D = self.board.timing[1]
            return Command.set_timing(2, D - 1) if D > 1 else Command.set_timing(0, 0)
        if what == "mask":
            return Command.arm(int(rng.integers(1 << G, 256))) if G < 8 else Command(0)
        return Command.set_timing(int(rng.integers(3)), 0)


@cocotb.test()
async def reset_state(dut):
    """After reset: the documented reset state (checked by the scoreboard in the first
    cycle out of reset), nothing taken while the stream is idle, 50 cycles of light."""
    h = Harness(dut)
    await h.reset()
    got = await h.step()
    assert not got["ready"] and not got["busy"] and got["heater"] == [0] * h.E
    got = await h.step()
    assert got["ready"], "ready did not rise in the second cycle after reset"
    for _ in range(50):
        await h.step()
    h.finish("reset_state", transactions=1)


@cocotb.test()
async def random_commands(dut):
    """Random commands (valid and malformed) under random light, log-uniform timings up to
    the timer's full width and random resets; every error and every event the contract names
    happens (``RANDOM_COVERAGE``, checked by ``finish``)."""
    h = Harness(dut, RANDOM_COVERAGE)
    rng = h.rng
    count = int(os.environ.get("AIFABRIC_TRANSACTIONS", DEFAULT_TRANSACTIONS))
    await h.reset()
    h.send([Command.set_timing(1, 2), Command.set_timing(2, 20)])
    t0 = time.perf_counter()
    resets = await h.run_random(
        count, lambda: [h.random_command() for _ in range(int(rng.integers(1, 6)))],
        reset_p=0.001, after_reset=lambda: [Command.set_timing(1, h.log_uniform()),
                                            Command.set_timing(2, (1 << h.T) - 1)])
    elapsed = time.perf_counter() - t0
    seen = h.board.seen
    dut._log.info("%d commands (%d rejected), %d resets in %d cycles, %.1f s; seen %s",
                  h.taken, h.rejected, resets, h.meter.cycles, elapsed, seen)
    assert h.rejected > count // 20 and h.monitor.beats >= count
    assert resets > 0
    top = (1 << h.T) - 1
    assert max(h.drawn) > top // 2, "timings never reached the upper half of the timer"
    h.finish("random_commands", transactions=h.taken, seconds=elapsed, rejected=h.rejected,
             ups=seen.get("up", 0), failovers=seen.get("failover", 0))


async def settle(h, lit) -> dict:
    """Step until the commands are taken and nothing settles or checks."""
    while not h.source.idle:
        await h.step(lit=lit)
    got = await h.step(lit=lit)
    while got["busy"]:
        got = await h.step(lit=lit)
    return got


@cocotb.test()
async def ring_configuration(dut):
    """The commands the InfiniteHBD ring builder gives a node's bundles (TP rings on a
    K = 2 line around a faulty node), applied with light present: each bundle comes up on
    its configured path with its derived backup, the loopback's matrix READY; then the
    path goes dark and both groups fail over together (one settle) to the backup."""
    h = Harness(dut)
    if h.G < 2:
        h.finish("ring_configuration", transactions=0, cycles=0)
        return
    await h.reset()
    h.send([Command.set_timing(0, 10), Command.set_timing(1, 3), Command.set_timing(2, 40)])
    hbd = topology.HBD(nodes=8, R=8, K=2, ring=False)
    rings = topology.build_rings(hbd, faulty=[3], tp=24)
    lit = [[True] * 3 for _ in range(h.G)]
    checked = 0
    for (side, node), seq in sorted(ring_commands(hbd, rings, lanes=h.N).items()):
        setting = next(r.config[(side, node)] for r in rings if (side, node) in r.config)
        h.send([c for _, c in seq])
        got = await settle(h, lit)
        want = 3 if setting == topology.LOOP else int(setting)
        assert got["path"][:2] == [want, want], (side, node, setting, got["path"])
        assert got["link"][:2] == [3, 3], (side, node, setting, got["link"])
        if setting == topology.LOOP or any(c.op == 2 for _, c in seq):
            assert got["perm"] == [(i + h.N // 2) % h.N for i in range(h.N)]
        checked += 1
    # both groups on hop 1 with backup hop 2; hop 1 goes dark: one failover for the bundle
    h.send([Command.set_path(0, 1, 2, every=1)])
    await settle(h, lit)
    dark = [[False, True, True]] * h.G
    for _ in range(60):
        got = await h.step(lit=dark)
    assert got["path"][:2] == [2, 2] and got["failover"][:2] == [1, 1], got
    assert got["link"][:2] == [3, 3] and got["cause"][:2] == [2, 2], got
    h.finish("ring_configuration", transactions=checked + 1)


@cocotb.test()
async def long_timers(dut):
    """Every timer at the top of its width, drawn on purpose (the random test draws them
    log-uniformly and seldom gets there): settle S and window W at 2^T - 1, debounce D at
    2^(T-1) + 1 (a run counter one bit short cannot count to it). One SET_PATH for every
    group: group 0's light comes for the last D samples of the window (UP at its very end,
    cycle tk + S + W + 1 for the command taken in tk), group 1's never comes (the lost
    light: FAULT in the same cycle), a third group's comes for D - 1 samples (FAULT). Then
    group 0 goes dark for D - 1 samples (still UP), lit for one, dark for D: FAULT exactly
    then. The scoreboard checks every cycle besides."""
    h = Harness(dut)
    await h.reset()
    top = (1 << h.T) - 1
    S, W, D = top, top, (1 << (h.T - 1)) + 1
    G = h.G
    dark = [[False] * 3 for _ in range(G)]
    h.send([Command.set_timing(2, W), Command.set_timing(1, D), Command.set_timing(0, S)])
    await settle(h, dark)
    assert h.board.timing == [S, D, W]
    before = h.taken
    h.send([Command.set_path(0, 1, 0, every=1)])
    while h.taken == before:
        await h.step(lit=dark)
    tk = h.cycle
    last = {g: D if g == 0 else 0 if g == 1 else D - 1 for g in range(G)}   # lit samples
    ends: dict = {}
    for _ in range(S + W + 3):
        t = h.cycle + 1
        j = t - tk - S                       # the sample this cycle gives (1..W)
        lit = [[W - last[g] < j <= W, False, False] for g in range(G)]
        got = await h.step(lit=lit)
        for g in range(G):
            if g not in ends and got["link"][g] in (UP, FAULT):
                ends[g] = (t, got["link"][g])
    due = tk + S + W + 1
    want = {g: (due, UP if g == 0 else FAULT) for g in range(G)}
    assert ends == want, f"(cycle, link) of each group {ends}, documented {want}"
    tu = due
    for k in range(2 * D + 2):
        t = h.cycle + 1
        lit0 = t == tu + D - 1 or t >= tu + 2 * D + 1
        got = await h.step(lit=[[lit0 and g == 0, False, False] for g in range(G)])
        want0 = FAULT if t >= tu + 2 * D else UP
        assert got["link"][0] == want0, (f"cycle {t}: group 0 link {got['link'][0]}, UP at "
                                         f"{tu}, dark D - 1, lit 1, dark D: {want0}")
    assert got["cause"][0] == 2 and got["cause"][1] == 1
    h.finish("long_timers", transactions=h.taken)
