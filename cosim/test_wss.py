"""cocotb testbench: the wavelength-selective switch controller RTL (``rtl/optics/wss.py``)
against the contract in ``models.flexsipac.wss``'s docstring, checked by a transaction-level
scoreboard.

The bench is built on the controllers' cycle (``cosim.control``, on the testbench layer
``cosim.testbench``). Commands go in through the layer's stream source (random gaps) and
monitor (the stream rules, with the reset), encoded from the documented layout
(``cosim.codec.wss_command``); the drive and status are decoded from the documented layout.
The scoreboard is built from behaviour, not from the RTL's registers or the model's code: the
staging table the testbench loaded (one column a LOAD_COLUMN), the budgets and settle time it
set, and the documented timing. On a COMMIT taken in cycle t it judges the table by its own
plain reading of the rules (no input dropped at its own port, no wavelength twice on one
output, no output over its budget; the first conflict in scan order: lowest wavelength, then
lowest output, SELF before DUPLICATE before BUDGET) and checks every cycle:

- a valid table: ``ready`` low and ``state`` SCAN (t + 1 .. t + w + 3), APPLY
  (t + w + 4 .. t + 2w + 5), SETTLE (S cycles); the drive of wavelength lam is the old
  column before cycle t + w + 7 + lam and exactly the loaded column from then on; a cell
  whose setting does not change is never dark nor different in between; ``configs`` counts
  one and ``ready`` returns in t + 2w + 6 + S; the error word and last conflict unchanged;
- an invalid table: nothing in the drive changes; the controller scans until the conflicting
  wavelength lam is checked and is idle in t + 5 + lam with the kind's own bit added to the
  sticky word (compared exactly) and ``err_port``/``err_lambda`` the conflict the rules name;
- a malformed command (unknown op; a wavelength, port or budget out of range; a zero settle)
  sets its own bit and changes nothing; CLEAR clears the word; idle: ``ready`` high, drive,
  errors, ``configs`` as expected; after a reset the documented reset state (the staging
  table is a memory and keeps its contents).

Stimulus: valid tables (random partial matchings per wavelength under the budgets) and
invalid ones (an own port, a wavelength twice on one output, an output over its budget, at
random wavelengths), partial reloads of random columns, budgets, settle times drawn
log-uniformly up to the timer's full width, malformed commands issued while the controller is
busy (back-pressure), and resets at random moments, also mid-commit. Disabled cells carry
random port fields (out of range too), which must change nothing. ``commit_counter`` applies
2^b + 3 commits in a row for a ``configs`` of b = ``counter_bits`` bits up to 12 (so every
bit carries and the count wraps to 3: a counter a bit short, or one that stops at its top,
shows), 4,099 for a wider one (every bit up to bit 12 carries).
"""

from __future__ import annotations

import math
import os
import time

import cocotb

from aifabric.cosim.codec import wss_command, wss_drive
from aifabric.cosim.control import ControlBench
from aifabric.cosim.stats import block_params
from aifabric.models.flexsipac import allocation, traffic
from aifabric.models.flexsipac.topology import SiPAC
from aifabric.models.flexsipac.wss import WSSCommand, load_commands
from aifabric.rtl.optics.wss import Error, State, WSSController

DEFAULT_TRANSACTIONS = 10_000
IDLE, SCAN, APPLY, SETTLE = State


def random_coverage(r: int) -> dict:
    """What the random test must have seen (the layer's coverage minimums): three of each
    conflict the commit's check names, every other error bit, lit cells kept through a
    reconfiguration, disabled cells with a port field (one that does not exist, where r
    leaves such port numbers in the field)."""
    need = {(f"conflict {e}" if e in ("SELF", "DUPLICATE", "BUDGET") else f"error {e}"):
            (3 if e in ("SELF", "DUPLICATE", "BUDGET") else 1) for e in Error.__members__}
    need.update({"lit cells kept through a reconfiguration": 1,
                 "disabled cells with a port field": 1})
    if r < 1 << (r - 1).bit_length():
        need["disabled cells with a port that does not exist"] = 1
    return need


class Scoreboard:
    """What the controller must do, from the commands taken (the testbench's own reading)."""

    def __init__(self, r, w, T, settle0, coverage, counter_bits=16) -> None:
        self.r, self.w, self.T, self.settle0 = r, w, T, settle0
        self.counter_bits = counter_bits
        self.staging = [[None] * r for _ in range(w)]   # a memory: survives resets
        self.coverage = coverage          # the outcomes seen (the layer's coverage bins)
        self.seen = coverage.counts
        self.commits = 0
        self.reset()

    def note(self, what: str, n: int = 1) -> None:
        self.coverage.hit(what, n)

    def reset(self) -> None:
        r, w = self.r, self.w
        self.active = [[None] * r for _ in range(w)]
        self.budget = [w] * r
        self.settle = self.settle0
        self.err = self.err_port = self.err_lambda = self.configs = 0
        self.job = None          # the commit in progress: t0, S, old, new, conflict
        self.last = "no commit since reset"

    # -- the command table and the configuration rules, as the testbench reads them --------
    def verdict(self, c: WSSCommand) -> str | None:
        r, w = self.r, self.w
        if c.op == 1:
            return None if c.lam < w and all(o is None or o < r for o in c.cells) else "RANGE"
        if c.op == 3:
            return None if c.port < r and c.value <= w else "RANGE"
        if c.op == 4:
            return None if c.value >= 1 else "TIMING"
        return None if c.op in (2, 5) else "OPCODE"

    def conflict(self, table, budget) -> tuple[str, int, int] | None:
        """The first rule a table breaks, (kind, output, wavelength), in scan order."""
        received = [0] * self.r                  # wavelengths each output got so far
        for lam, column in enumerate(table):
            for o in range(self.r):
                senders = [i for i, x in enumerate(column) if x == o]
                if column[o] == o:
                    return "SELF", o, lam
                if len(senders) > 1:
                    return "DUPLICATE", o, lam
                if senders and received[o] + 1 > budget[o]:
                    return "BUDGET", o, lam
            for o in column:
                if o is not None:
                    received[o] += 1
        return None

    def take(self, t: int, c: WSSCommand | None) -> str | None:
        """The command taken in cycle t (its effect shows from t + 1): "ok" or its error."""
        if c is None:
            return None
        bad = self.verdict(c)
        if bad:
            self.err |= 1 << Error[bad]
            self.note(f"error {bad}")
            return bad
        if c.op == 1:
            self.staging[c.lam] = list(c.cells)
        elif c.op == 2:
            table = [list(col) for col in self.staging]
            self.job = (t, self.settle, [list(col) for col in self.active], table,
                        self.conflict(table, self.budget))
        elif c.op == 3:
            self.budget[c.port] = c.value
        elif c.op == 4:
            self.settle = c.value
        else:
            self.err = 0
        return "ok"

    # -- the check of one cycle ------------------------------------------------------------
    def check(self, t: int, got: dict) -> None:
        w = self.w
        if self.job is not None:
            t0, S, old, new, bad = self.job
            d = t - t0
            if bad is None and d == 2 * w + 6 + S:          # applied and settled
                self.last = self.where(t) + ": done"
                self.active, self.job = new, None
                self.configs = (self.configs + 1) % (1 << self.counter_bits)
                self.commits += 1
                self.note("commit applied")
                kept = sum(a == b and a is not None for ca, cb in zip(old, new)
                           for a, b in zip(ca, cb))
                changed = sum(a != b for ca, cb in zip(old, new) for a, b in zip(ca, cb))
                if kept and changed:
                    self.note("lit cells kept through a reconfiguration", kept)
            elif bad is not None and d == 5 + bad[2]:       # the conflict found: idle
                self.last = self.where(t) + ": stopped"
                kind, o, lam = bad
                self.err |= 1 << Error[kind]
                self.err_port, self.err_lambda = o, lam
                self.job = None
                self.note(f"conflict {kind}")
        want = {"error": self.err, "err_port": self.err_port,
                "err_lambda": self.err_lambda, "configs": self.configs}
        for k, v in want.items():
            assert got[k] == v, f"cycle {t}: {k} {got[k]}, expected {v} ({self.where(t)})"
        if self.job is None:
            assert got["ready"] and got["state"] == IDLE, \
                f"cycle {t}: not idle (ready {got['ready']}, state {got['state']})"
            assert got["drive"] == self.active, \
                f"cycle {t}: drive {got['drive']} != the active table {self.active}"
            return
        t0, S, old, new, bad = self.job
        d = t - t0
        assert not got["ready"], f"cycle {t}: ready while busy ({self.where(t)})"
        if bad is not None:
            assert got["state"] == SCAN, f"cycle {t}: state {got['state']} ({self.where(t)})"
            assert got["drive"] == old, f"cycle {t}: the drive changed on an invalid table"
            return
        phase = SCAN if d <= w + 3 else APPLY if d <= 2 * w + 5 else SETTLE
        assert got["state"] == phase, \
            f"cycle {t}: state {got['state']}, expected {phase} ({self.where(t)})"
        if got["drive"] == self.expected_drive(t):
            return
        for lam in range(w):                      # name the first cell that is wrong
            due = t0 + w + 7 + lam           # the documented cycle wavelength lam changes
            for i, (a, b, x) in enumerate(zip(old[lam], new[lam], got["drive"][lam])):
                assert a != b or x == a, (
                    f"cycle {t}: cell (input {i}, wavelength {lam}) keeps output {a} but "
                    f"drives {x} ({self.where(t)})")
                want_x = b if t >= due else a
                assert x == want_x, (
                    f"cycle {t}: cell (input {i}, wavelength {lam}) drives {x}, expected "
                    f"{want_x}: wavelength {lam} changes in cycle {due} ({self.where(t)})")
        raise AssertionError(f"cycle {t}: drive")        # not reached

    def expected_drive(self, t: int) -> list:
        """During a valid commit: wavelength lam is the old column before cycle
        t0 + w + 7 + lam and the loaded one from then on (a column whose cells keep their
        setting is the same in both, so those cells never go dark)."""
        t0, _, old, new, _ = self.job
        n = min(self.w, max(0, t - t0 - self.w - 6))     # wavelengths already changed
        return new[:n] + old[n:]

    def where(self, t: int) -> str:
        if self.job is None:
            return f"idle; last: {self.last}"
        t0, S, _, _, bad = self.job
        return (f"commit taken in cycle {t0}, S = {S}, now t0 + {t - t0}, "
                f"{'conflict ' + str(bad) if bad else 'valid table'}")


class Harness(ControlBench):
    def __init__(self, dut, coverage: dict | None = None) -> None:
        super().__init__(dut, WSSController, coverage=coverage)
        p = self.params
        self.r, self.w = p.get("ports", 16), p.get("wavelengths", 60)
        self.T, self.settle0 = p.get("timer_bits", 20), p.get("settle", 100_000)
        self.counter_bits = p.get("counter_bits", 16)
        self.board = Scoreboard(self.r, self.w, self.T, self.settle0, self.coverage,
                                self.counter_bits)
        self.drawn: list[int] = []
        self._outputs = [self.io.reader(n) for n in ("cmd__ready", "drive", "state",
                                                        "error", "err_port", "err_lambda",
                                                        "configs")]

    @property
    def commits(self) -> int:
        return self.board.commits

    def on_reset(self) -> None:
        self.board.reset()

    def encode(self, c: WSSCommand) -> int:
        """The documented word; in half the columns each disabled cell carries a random port
        field (out of range too, where the field holds ports that do not exist), which the
        contract ignores: it must neither be flagged nor reach the drive."""
        dark = ()
        if c.op == 1 and self.rng.random() < 0.5:
            dark = self.rng.integers(1 << max(1, (self.r - 1).bit_length()),
                                     size=self.r).tolist()
            junk = [d for d, o in zip(dark, c.cells) if o is None and d]
            self.board.note("disabled cells with a port field", bool(junk))
            self.board.note("disabled cells with a port that does not exist",
                            any(d >= self.r for d in junk))
        return wss_command(c.op, ports=self.r, wavelengths=self.w, lam=c.lam, cells=c.cells,
                           port=c.port, value=c.value, dark_ports=dark)

    def read(self) -> dict:
        ready, drive, state, error, err_port, err_lambda, configs = \
            [read() for read in self._outputs]
        return {"ready": bool(ready), "drive": wss_drive(drive, self.r, self.w),
                "state": state, "error": error, "err_port": err_port,
                "err_lambda": err_lambda, "configs": configs}

    def compare(self, t: int, got: dict) -> None:
        self.board.check(t, got)

    def advance(self, taken, inputs, rst: bool = False):
        return None if rst else self.board.take(self.cycle, taken)

    def invariants(self, t: int, got: dict, taken) -> None:
        pass                       # the scoreboard checks everything in ``compare``

    # -- stimulus --------------------------------------------------------------------------
    def log_uniform(self) -> int:
        top = (1 << self.T) - 1
        v = max(1, min(top, int(math.exp(self.rng.uniform(0, math.log(top + 1))))))
        self.drawn.append(v)
        return v

    def valid_table(self, budget) -> list[list]:
        """Random partial matchings, one per wavelength, no own port, within budgets."""
        rng, r = self.rng, self.r
        left = list(budget)
        table = []
        density = rng.random()
        for _ in range(self.w):
            outs = [o for o in rng.permutation(r).tolist() if left[o] > 0]
            column = [None] * r
            for i in rng.permutation(r).tolist():
                if rng.random() > density:
                    continue
                choice = [o for o in outs if o != i]
                if choice:
                    o = choice[0]
                    outs.remove(o)
                    column[i] = o
                    left[o] -= 1
            table.append(column)
        return table

    def broken_table(self, budget) -> list[list]:
        table = self.valid_table(budget)
        rng, r = self.rng, self.r
        lam = int(rng.integers(self.w))
        kind = rng.choice(["self", "dup", "budget"])
        if kind == "self":
            i = int(rng.integers(r))
            table[lam][i] = i
        elif kind == "dup":
            a, b = rng.choice(r, 2, replace=False).tolist()
            o = next(x for x in range(r) if x not in (a, b)) if r > 2 else None
            if o is None:
                table[lam][a] = b
                table[lam][b] = b        # also an own port: any conflict will do
            else:
                table[lam][a] = table[lam][b] = o
        else:
            o = int(rng.integers(r))
            for column in table:
                senders = [i for i in range(r) if i != o and column[i] is None]
                if senders and o not in column:
                    column[senders[0]] = o
        return table

    def random_commands(self) -> list[WSSCommand]:
        rng, r, w = self.rng, self.r, self.w
        kind = rng.choice(["table", "table", "broken", "columns", "budget", "settle", "bad",
                           "clear"])
        if kind in ("table", "broken"):
            table = (self.valid_table if kind == "table" else self.broken_table)(self.board.budget)
            return [WSSCommand.load(lam, table[lam]) for lam in range(w)] + \
                [WSSCommand.commit()]
        if kind == "columns":      # a few random columns (maybe invalid), then commit
            cmds = []
            for lam in rng.choice(w, int(rng.integers(1, w + 1)), replace=False).tolist():
                cells = [None if rng.random() < 0.5 else int(rng.integers(r)) for _ in range(r)]
                cmds.append(WSSCommand.load(lam, cells))
            return cmds + [WSSCommand.commit()]
        if kind == "budget":
            return [WSSCommand.budget(int(rng.integers(r)), int(rng.integers(1, w + 1)))]
        if kind == "settle":
            return [WSSCommand.settle(self.log_uniform())]
        if kind == "clear":
            return [WSSCommand(5)]
        what = rng.choice(["op", "lam", "port", "bport", "bvalue", "zero"])
        lb, rb = w.bit_length(), r.bit_length()
        if what == "op":
            return [WSSCommand(int(rng.choice([0, 6, 7])))]
        if what == "lam":
            return [WSSCommand.load(int(rng.integers(w, 1 << lb)), [None] * r)] \
                if w < 1 << lb else [WSSCommand(0)]
        if what == "port":
            p = max(1, (r - 1).bit_length())
            if r == 1 << p:
                return [WSSCommand(7)]
            cells = [None] * r
            cells[int(rng.integers(r))] = int(rng.integers(r, 1 << p))
            return [WSSCommand.load(int(rng.integers(w)), cells)]
        if what == "bport":
            return [WSSCommand.budget(int(rng.integers(r, 1 << rb)), 1)]
        if what == "bvalue":
            return [WSSCommand.budget(0, int(rng.integers(w + 1, 1 << lb)))] \
                if w + 1 < 1 << lb else [WSSCommand(6)]
        return [WSSCommand.settle(0)]


@cocotb.test()
async def reset_state(dut):
    """After reset every cell is dark, the controller idle and error free (the scoreboard's
    reset state, checked in the first cycle out of reset); then a valid table loads,
    commits and is driven in the documented cycles."""
    h = Harness(dut)
    await h.reset()
    got = await h.step()
    assert got["drive"] == [[None] * h.r for _ in range(h.w)] and not got["ready"]
    got = await h.step()
    assert got["ready"], "ready did not rise in the second cycle after reset"
    table = h.valid_table([h.w] * h.r)
    h.send([WSSCommand.load(lam, table[lam]) for lam in range(h.w)] + [WSSCommand.commit()])
    await h.step_until(lambda got: h.commits)
    got = await h.step()
    assert got["drive"] == table and got["configs"] == 1
    h.finish("reset_state", transactions=h.taken)


@cocotb.test()
async def random_commands(dut):
    """Random tables, columns, budgets and malformed commands under random resets; every
    error and outcome the contract names happens (``random_coverage``, checked by
    ``finish``)."""
    h = Harness(dut, random_coverage(block_params().get("ports", 16)))
    rng = h.rng
    count = int(os.environ.get("AIFABRIC_TRANSACTIONS", DEFAULT_TRANSACTIONS))
    await h.reset()
    # The staging table is a memory that survives resets, so it still holds what an earlier
    # test loaded; this scoreboard starts from dark columns, so load them (a commit drawn
    # before a column was reloaded applied the earlier test's column: seed 1019567265).
    h.send([WSSCommand.load(lam, [None] * h.r) for lam in range(h.w)] + [WSSCommand.settle(3)])
    t0 = time.perf_counter()
    resets = await h.run_random(count, h.random_commands, reset_p=0.002)
    elapsed = time.perf_counter() - t0
    seen = h.board.seen
    dut._log.info("%d commands (%d rejected), %d resets in %d cycles, %.1f s; seen %s",
                  h.taken, h.rejected, resets, h.meter.cycles, elapsed, seen)
    assert h.rejected > count // 100 and h.commits > count // (10 * h.w)
    assert resets > 0
    assert max(h.drawn) > (1 << h.T) // 2, "settle times never reached the timer's upper half"
    h.finish("random_commands", transactions=h.taken, seconds=elapsed, rejected=h.rejected,
             commits=h.commits)


@cocotb.test()
async def allocation_configs(dut):
    """Configurations from the Flex-SiPAC wavelength allocation (the heuristic's lambda,
    DSatur colouring, §3.C) for every WSS of SiPAC(r, 2) with two jobs: each loads, commits
    and is driven exactly (the allocation's own cells, not the scoreboard's); a
    reconfiguration to another job mapping keeps the cells it does not change lit (the
    scoreboard checks every cycle of the apply and settle)."""
    h = Harness(dut)
    r, w = h.r, h.w
    await h.reset()
    h.send([WSSCommand.settle(2)])
    topo = SiPAC(r, 2)
    done = 0
    for sizes in ([r * r // 2, r * r // 2], [r * r]):
        if sum(sizes) != topo.N:
            continue
        lam = allocation.heuristic(topo, traffic.traffic_matrix(topo, sizes, "sipco"), w)
        assign = allocation.assign_wavelengths(topo, lam, w)
        for key in sorted(assign["wss"])[:3]:
            config = assign["wss"][key]
            h.send(load_commands(config, r, w))
            before = h.commits
            await h.step_until(lambda got: h.commits != before)
            got = await h.step()
            want = [[None] * r for _ in range(w)]
            for (i, lm), o in config.items():
                want[lm][i] = o
            assert got["drive"] == want, f"WSS {key}: drive != the allocation's configuration"
            done += 1
    assert done >= 3
    h.finish("allocation_configs", transactions=h.taken)


COUNTER_TOP = 12      # commits up to 2^12 + 3: bit 12 set (or the wrap), three past it


@cocotb.test()
async def commit_counter(dut):
    """``configs`` counts every applied commit, bit by bit: 2^b + 3 valid commits in a row
    with no reset for a b-bit counter, b <= 12 (each carry, then the wrap to 3), 4,099 for a
    wider one (each carry from bit 0 to bit 12 happens), one column reloaded before each
    from one of two valid tables (any mix of their columns is valid at full budgets: each
    output gets at most one wavelength per column), settle 1. The scoreboard checks the
    count, the drive and the timing in every cycle."""
    h = Harness(dut)
    rng = h.rng
    await h.reset()
    tables = [h.valid_table([h.w] * h.r) for _ in range(2)]
    # the staging memory keeps what the test before loaded: load every column first
    h.send([WSSCommand.load(lam, tables[0][lam]) for lam in range(h.w)] +
           [WSSCommand.settle(1)])
    bits = min(h.counter_bits, COUNTER_TOP)
    commits = (1 << bits) + 3
    for k in range(commits):
        lam = k % h.w
        h.send([WSSCommand.load(lam, tables[int(rng.integers(2))][lam]), WSSCommand.commit()])
        before = h.commits
        await h.step_until(lambda got: h.commits != before)
    got = await h.step()
    assert got["configs"] == commits % (1 << h.counter_bits) and got["error"] == 0
    h.finish("commit_counter", transactions=h.taken)
