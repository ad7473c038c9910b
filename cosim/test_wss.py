"""cocotb testbench: the wavelength-selective switch controller RTL (``rtl/optics/wss.py``)
against its behaviour ``models.flexsipac.wss.WSS``, cycle for cycle.

Commands go in through ``cosim.stream`` (random gaps, protocol monitor), encoded from the
documented layout (``cosim.codec.wss_command``); the drive and status are decoded from the
documented layout and compared with the model in every cycle. Stimulus: valid
configurations (random partial matchings per wavelength under the output budgets) and
invalid ones (an input dropped at its own port, a wavelength twice on one output, an output
over its budget, at random wavelengths), partial reloads, random columns, budgets, settle
times, malformed commands (unknown ops, a wavelength or port out of range, a budget over w,
a zero settle time) -- issued while the controller is busy (back-pressure) -- and resets at
random moments, also mid-commit.

Invariants on the RTL alone, from what the testbench drove:

- the drive changes only while a commit applies (``state`` APPLY in the cycle before);
- a commit that completes (``configs`` counts) leaves exactly the table the testbench
  loaded, and that table is valid by the testbench's own reading: no own port, no output
  bus with a wavelength twice, no output over the budget it set;
- a commit completes no earlier than 2w + 5 + settle cycles after it was taken.
"""

from __future__ import annotations

import os
import time

import cocotb

from cosim.codec import wss_command, wss_drive
from cosim.control import ControlBench, start_clock, value
from cosim.stats import block_params, record_stats
from models.flexsipac import allocation, traffic
from models.flexsipac.topology import SiPAC
from models.flexsipac.wss import WSS, WSSCommand, load_commands

DEFAULT_TRANSACTIONS = 10_000


class Harness(ControlBench):
    def __init__(self, dut, rng) -> None:
        p = block_params()
        self.r, self.w = p.get("ports", 16), p.get("wavelengths", 60)
        self.T, self.settle0 = p.get("timer_bits", 20), p.get("settle", 100_000)
        super().__init__(dut, rng, WSS(self.r, self.w, self.T, self.settle0))
        self.staging = [[None] * self.r for _ in range(self.w)]   # the testbench's shadow
        self.commits = self.conflicts = 0
        self.kinds: dict = {}
        self.on_reset()

    def on_reset(self) -> None:
        self.prev = None
        self.budget = [self.w] * self.r
        self.settle = self.settle0
        self.commit_at = None        # (cycle taken, settle then, staging then, budgets then)

    def encode(self, c: WSSCommand) -> int:
        return wss_command(c.op, ports=self.r, wavelengths=self.w, lam=c.lam, cells=c.cells,
                           port=c.port, value=c.value)

    def read(self) -> dict:
        dut = self.dut
        return {"ready": bool(value(dut.cmd__ready)),
                "drive": wss_drive(value(dut.drive), self.r, self.w),
                "state": value(dut.state), "error": value(dut.error),
                "err_port": value(dut.err_port), "err_lambda": value(dut.err_lambda),
                "configs": value(dut.configs)}

    # -- invariants on the RTL alone -------------------------------------------------------
    def tb_valid(self, c: WSSCommand) -> bool:
        if c.op == 1:
            return c.lam < self.w and all(o is None or o < self.r for o in c.cells)
        if c.op == 3:
            return c.port < self.r and c.value <= self.w
        if c.op == 4:
            return c.value >= 1
        return c.op in (2, 5)

    def table_ok(self, table, budget) -> bool:
        recv = [0] * self.r
        for column in table:
            outs = [o for o in column if o is not None]
            if len(set(outs)) != len(outs) or any(column[o] == o for o in outs):
                return False
            for o in outs:
                recv[o] += 1
        return all(recv[o] <= budget[o] for o in range(self.r))

    def invariants(self, t: int, got: dict, taken: WSSCommand | None) -> None:
        prev, self.prev = self.prev, got
        if prev is not None:
            if got["drive"] != prev["drive"]:
                assert prev["state"] == 2, f"cycle {t}: the drive changed outside APPLY"
            if got["configs"] != prev["configs"]:
                assert self.commit_at is not None, f"cycle {t}: a commit nobody sent"
                t0, settle, table, budget = self.commit_at
                assert t - t0 >= 2 * self.w + 5 + settle, \
                    f"cycle {t}: commit done {t - t0} cycles after it was taken"
                assert got["drive"] == table, f"cycle {t}: applied table != the loaded one"
                assert self.table_ok(table, budget), f"cycle {t}: an invalid table applied"
                self.commits += 1
                self.commit_at = None
            if prev["state"] == 1 and got["state"] == 0:      # a scan that found a conflict
                self.conflicts += 1
                for bit, kind in ((2, "SELF"), (3, "DUPLICATE"), (4, "BUDGET")):
                    if got["error"] >> bit & 1 and not prev["error"] >> bit & 1:
                        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if taken is not None and self.tb_valid(taken):
            if taken.op == 1:
                self.staging[taken.lam] = list(taken.cells)
            elif taken.op == 2:
                self.commit_at = (t, self.settle, [list(c) for c in self.staging],
                                  list(self.budget))
            elif taken.op == 3:
                self.budget[taken.port] = taken.value
            elif taken.op == 4:
                self.settle = taken.value
            elif taken.op == 5:
                pass

    # -- stimulus --------------------------------------------------------------------------
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
            table = (self.valid_table if kind == "table" else self.broken_table)(self.budget)
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
            return [WSSCommand.settle(int(rng.integers(1, min(12, (1 << self.T) - 1) + 1)))]
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


def start(dut):
    rng = start_clock(dut)
    return Harness(dut, rng), rng


@cocotb.test()
async def reset_state(dut):
    """After reset every cell is dark, the controller idle and error free; then a valid
    table loads, commits and is driven after 2w + settle cycles."""
    h, _ = start(dut)
    await h.reset()
    got = await h.step()
    assert got["drive"] == [[None] * h.r for _ in range(h.w)] and got["ready"]
    assert got["state"] == 0 and got["error"] == 0 and got["configs"] == 0
    table = h.valid_table([h.w] * h.r)
    h.send([WSSCommand.load(lam, table[lam]) for lam in range(h.w)] + [WSSCommand.commit()])
    while h.commits == 0:
        await h.step()
    record_stats("reset_state", transactions=h.taken, cycles=h.meter.cycles)


@cocotb.test()
async def random_commands(dut):
    """Random tables, columns, budgets and malformed commands under random resets."""
    h, rng = start(dut)
    count = int(os.environ.get("AIFABRIC_TRANSACTIONS", DEFAULT_TRANSACTIONS))
    await h.reset()
    h.send([WSSCommand.settle(3)])
    t0 = time.perf_counter()
    resets = await h.run_random(count, h.random_commands, reset_p=0.002)
    elapsed = time.perf_counter() - t0
    dut._log.info("%d commands (%d rejected), %d commits applied, %d conflicts, %d resets in "
                  "%d cycles, %.1f s", h.taken, h.rejected, h.commits, h.conflicts, resets,
                  h.meter.cycles, elapsed)
    dut._log.info("conflicts first seen by kind: %s", h.kinds)
    assert h.rejected > count // 100 and h.commits > count // (10 * h.w) and h.conflicts > 5
    assert set(h.kinds) == {"SELF", "DUPLICATE", "BUDGET"}, h.kinds
    record_stats("random_commands", transactions=h.taken, cycles=h.meter.cycles,
                 seconds=elapsed, rejected=h.rejected, commits=h.commits)


@cocotb.test()
async def allocation_configs(dut):
    """Configurations from the Flex-SiPAC wavelength allocation (the heuristic's lambda,
    DSatur colouring, §3.C) for every WSS of SiPAC(r, 2) with two jobs: each loads, commits
    and is driven exactly; a reconfiguration to another job mapping keeps the cells it does
    not change lit (they never change during APPLY)."""
    h, _ = start(dut)
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
            while h.commits == before:
                await h.step()
            got = await h.step()
            want = [[None] * r for _ in range(w)]
            for (i, lm), o in config.items():
                want[lm][i] = o
            assert got["drive"] == want, f"WSS {key}: drive != the allocation's configuration"
            done += 1
    assert done >= 3
    record_stats("allocation_configs", transactions=h.taken, cycles=h.meter.cycles)
