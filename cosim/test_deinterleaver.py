"""cocotb testbench: the de-interleaver cascade controller RTL (``rtl/optics/deinterleaver.py``)
against its behaviour ``models.flexsipac.transceiver.Deinterleaver``, cycle for cycle.

The bench is built on the controllers' cycle (``cosim.control``, on the testbench layer
``cosim.testbench``). Commands go in through the layer's stream source (random gaps) and
monitor (the stream rules), encoded from the documented layout (``cosim.codec.dix_command``);
outputs are decoded from the documented layout and compared with the model every cycle.
Stimulus: realisable and unrealisable splits, raw modes (including mode 3: the front
interleaver at unit 0 of a "_uniform" form, undefined elsewhere), settle times, unknown ops,
commands while the cascade settles (back-pressure), resets at random moments.

Invariants on the RTL alone, from what the testbench drove and its own reading of Fig 4
(unit k drops everything, nothing, or the wavelengths whose index has bit k clear):

- the modes and MZIs change only in the cycle after a command that sets them was taken;
- the modes applied are the commanded ones (SET_MODES), or modes whose wavelength trace
  gives exactly the commanded split (SET_SPLIT); ``split`` is that trace's counts; the MZIs
  follow the documented mode table; a malformed command raises an error and changes nothing;
- ``configs`` counts a reconfiguration no earlier than settle cycles after it was taken.
"""

from __future__ import annotations

import itertools
import os
import time

import cocotb

from aifabric.cosim.codec import dix_command, field
from aifabric.cosim.control import ControlBench
from aifabric.models.flexsipac import allocation, traffic
from aifabric.models.flexsipac.topology import SiPAC
from aifabric.models.flexsipac.transceiver import Deinterleaver, DIXCommand, cu_splits
from aifabric.rtl.optics.deinterleaver import DeinterleaverController

DEFAULT_TRANSACTIONS = 10_000
MZI = {0: (0, 0), 1: (0, 1), 2: (1, 0), 3: (1, 1)}   # mode -> (in, sel), as documented


def tb_counts(modes, w, form="chain"):
    """The testbench's own trace of Fig 4's cascade: a chain, or (``form="tree"``, four
    ports) unit 0 feeding unit 1 from its drop side and unit 2 from its pass side, those two
    dropping at ports 0 and 2 and passing to ports 1 and 3; in a "_uniform" form unit 0's
    mode 3 deals the comb round-robin over the ports (the front interleaver)."""
    got = [0] * (len(modes) + 1)
    for lam in range(w):
        def drop(mode, bit):
            return mode == 0 or (mode == 2 and (lam >> bit) % 2 == 0)
        if form.endswith("_uniform") and modes[0] == 3:
            port = lam % len(got)
        elif form.startswith("tree") and len(modes) == 3:
            side = 0 if drop(modes[0], 0) else 1
            port = 2 * side + (0 if drop(modes[1 + side], 1) else 1)
        else:
            port = len(modes)
            for k, mode in enumerate(modes):
                if drop(mode, k):
                    port = k
                    break
        got[port] += 1
    return got


class Harness(ControlBench):
    def __init__(self, dut) -> None:
        super().__init__(dut, DeinterleaverController)
        p = self.params
        self.P, self.w = p.get("ports", 3), p.get("wavelengths", 60)
        self.T, self.settle0 = p.get("timer_bits", 20), p.get("settle", 100_000)
        self.U = self.P - 1
        self.form = p.get("form", "chain")
        self.model = Deinterleaver(self.P, self.w, self.T, self.settle0, form=self.form)
        self._outputs = [self.io.reader(n) for n in ("cmd__ready", "modes", "mzi", "split",
                                                        "state", "error", "configs")]
        self.uniform = self.form.endswith("_uniform")
        self.codes = [range(4 if k == 0 and self.uniform else 3) for k in range(self.U)]
        self.splits = sorted({tuple(tb_counts(ms, self.w, self.form))
                              for ms in itertools.product(*self.codes)})
        self.applied = 0
        self.on_reset()

    def on_reset(self) -> None:
        self.prev, self.settle, self.started = None, self.settle0, None

    def encode(self, c: DIXCommand) -> int:
        return dix_command(c.op, wavelengths=self.w, split=c.split, modes=c.modes,
                           value=c.value)

    def read(self) -> dict:
        U, c = self.U, self.w.bit_length()
        ready, modes, mzi, split, state, error, configs = [read() for read in self._outputs]
        return {"ready": bool(ready),
                "modes": [field(modes, k, 2) for k in range(U)],
                "mzi": [mzi >> b & 1 for b in range(2 * U)],
                "split": [field(split, p, c) for p in range(self.P)],
                "state": state, "error": error, "configs": configs}

    def tb_valid(self, c: DIXCommand) -> bool:
        if c.op == 1:
            return tuple(c.split) in self.splits
        if c.op == 2:
            return all(m in codes for m, codes in zip(c.modes, self.codes))
        if c.op == 3:
            return c.value >= 1
        return c.op == 4

    def invariants(self, t: int, got: dict, taken: DIXCommand | None) -> None:
        prev, self.prev = self.prev, (got, taken)
        assert got["mzi"] == [b for m in got["modes"] for b in MZI[m]], \
            f"cycle {t}: MZIs do not follow the modes"
        assert got["split"] == tb_counts(got["modes"], self.w, self.form), \
            f"cycle {t}: split {got['split']} is not what modes {got['modes']} give"
        if prev is not None:
            before, cmd = prev
            if cmd is not None and self.tb_valid(cmd) and cmd.op in (1, 2):
                if cmd.op == 1:
                    assert got["split"] == list(cmd.split), f"cycle {t}: split not applied"
                else:
                    assert got["modes"] == list(cmd.modes), f"cycle {t}: modes not applied"
                self.started = (t, self.settle)
                self.applied += 1
            else:
                assert got["modes"] == before["modes"], \
                    f"cycle {t}: modes changed without a command"
                if cmd is not None and not self.tb_valid(cmd):
                    assert got["error"], f"cycle {t}: malformed command raised no error"
            if got["configs"] != before["configs"]:
                t0, settle = self.started
                assert t - t0 >= settle, f"cycle {t}: settled after {t - t0} < {settle}"
        if taken is not None and taken.op == 3 and taken.value >= 1:
            self.settle = taken.value

    def random_command(self) -> DIXCommand:
        rng, P, U, w = self.rng, self.P, self.U, self.w
        kind = rng.choice(["split", "split", "badsplit", "modes", "badmode", "settle", "op",
                           "zero", "clear"])
        if kind == "split":
            return DIXCommand(1, split=self.splits[int(rng.integers(len(self.splits)))])
        if kind == "badsplit":
            while True:
                cut = sorted(rng.integers(0, w + 1, P - 1).tolist())
                split = tuple(b - a for a, b in zip([0] + cut, cut + [w]))
                if rng.random() < 0.3:
                    split = tuple(int(x) for x in rng.integers(0, 1 << w.bit_length(), P))
                if split not in self.splits:
                    return DIXCommand(1, split=split)
        if kind == "modes":
            return DIXCommand(2, modes=tuple(int(rng.integers(len(c))) for c in self.codes))
        if kind == "badmode":
            modes = [int(x) for x in rng.integers(0, 3, U)]
            bad = [k for k in range(U) if 3 not in self.codes[k]]
            if bad:
                modes[int(rng.choice(bad))] = 3
            return DIXCommand(2, modes=tuple(modes))
        if kind == "settle":
            return DIXCommand(3, value=int(rng.integers(1, min(10, (1 << self.T) - 1) + 1)))
        if kind == "op":
            return DIXCommand(int(rng.choice([0, 5, 6, 7])))
        if kind == "zero":
            return DIXCommand(3, value=0)
        return DIXCommand(4)


@cocotb.test()
async def reset_state(dut):
    """After reset every unit passes: the whole comb at the last port, idle, no errors."""
    h = Harness(dut)
    await h.reset()
    got = await h.step()
    assert got["modes"] == [1] * h.U and got["split"] == [0] * (h.P - 1) + [h.w]
    assert not got["ready"], "ready in the first cycle after reset"
    assert got["state"] == 0 and got["error"] == 0 and got["configs"] == 0
    got = await h.step()
    assert got["ready"], "ready did not rise in the second cycle after reset"
    for _ in range(50):
        await h.step()
    h.finish("reset_state", transactions=1)


@cocotb.test()
async def random_commands(dut):
    """Random splits and modes, valid and malformed, under random resets."""
    h = Harness(dut)
    rng = h.rng
    count = int(os.environ.get("AIFABRIC_TRANSACTIONS", DEFAULT_TRANSACTIONS))
    await h.reset()
    t0 = time.perf_counter()
    h.send([DIXCommand(3, value=2)])
    resets = await h.run_random(
        count, lambda: [h.random_command() for _ in range(int(rng.integers(1, 5)))],
        reset_p=0.003)
    elapsed = time.perf_counter() - t0
    dut._log.info("%d commands (%d rejected), %d applied, %d resets in %d cycles, %.1f s",
                  h.taken, h.rejected, h.applied, resets, h.meter.cycles, elapsed)
    assert h.rejected > count // 10 and h.applied > count // 10
    h.finish("random_commands", transactions=h.taken, seconds=elapsed, rejected=h.rejected,
             applied=h.applied)


@cocotb.test()
async def allocation_splits(dut):
    """The per-level wavelength demands of Flex-SiPAC CUs (the allocation heuristic on
    SiPAC(4, P), by counts): a demand equal to a cascade split is applied, any other is
    refused with SPLIT and changes nothing; the splits of the plans the model reports
    (``allocation.allocate``) are all applied. Both outcomes must occur: on the paper's 60-line comb the
    allocation's demands give both; where they give only one (the odd 13-line comb: no
    demand is a cascade split), a split from the testbench's own table of realisable splits,
    or one outside it, is added."""
    h = Harness(dut)
    await h.reset()
    topo = SiPAC(4, h.P)
    seen = {True: 0, False: 0}

    async def offer(split):
        h.send([DIXCommand(4), DIXCommand(1, split=split)])
        while not h.source.idle or h.model.timer:
            await h.step()
        got = await h.step()
        ok = split in h.splits
        assert (got["split"] == list(split)) == ok and bool(got["error"]) == (not ok)
        seen[ok] += 1

    for sizes in ([topo.N // 4] * 4, [topo.N // 2] * 2, [topo.N]):
        lam = allocation.heuristic(topo, traffic.traffic_matrix(topo, sizes, "sipco"), h.w)
        for split in sorted(set(cu_splits(topo, lam)))[:4]:
            if sum(split) != h.w:
                continue
            await offer(split)
    from_allocation = dict(seen)
    # the plans the model reports (allocation.allocate: each job's cascade setting): every
    # CU's split is one the RTL applies
    planned = 0
    for sizes in ([topo.N // 4] * 4, [topo.N // 2, topo.N // 4, topo.N // 4]):
        plan = allocation.allocate(topo, traffic.traffic_matrix(topo, sizes, "sipco"), h.w,
                                   form=h.form)
        for split in sorted({tuple(len(s) for s in sets) for sets in plan["sets"].values()}):
            assert split in h.splits, split
            await offer(split)
            planned += 1
    assert planned > 0
    if not seen[True]:
        await offer(sorted(h.splits)[0])
    if not seen[False]:
        await offer(next(x for x in ((1, h.w - 1) + (0,) * (h.P - 2),
                                     (h.w - 1, 1) + (0,) * (h.P - 2)) if x not in h.splits))
    dut._log.info("allocation demands: %d applied, %d refused (then %s)", from_allocation[True],
                  from_allocation[False], seen)
    assert seen[True] > 0 and seen[False] > 0, seen
    if h.w == 60:          # the paper's comb: the allocation's demands alone give both
        assert from_allocation[True] > 0 and from_allocation[False] > 0, from_allocation
    h.finish("allocation_splits", transactions=sum(seen.values()))


@cocotb.test()
async def error_flags(dut):
    """Each error bit provoked alone, in turn: the command is taken in cycle t, the sticky
    word is 0 up to t and exactly that bit from t + 1 (the modes and split unchanged); a
    CLEAR taken in t' clears it in t' + 1. The causes, from the testbench's own tables: an
    unknown op (0, 5, 6, 7 in turn), a split no setting gives, code 3 at a unit where it is
    no mode (P = 2 in a "_uniform" form has none), a zero settle (also with every bit above
    its field set). Then a command offered in
    the first cycle after a reset waits (ready low) and is taken in the next."""
    h = Harness(dut)
    await h.reset()
    await h.step()
    bad_split = next(s for s in itertools.product(range(h.w + 1), repeat=h.P)
                     if sum(s) == h.w and s not in h.splits)
    cases = [("OPCODE", 0, DIXCommand(op)) for op in (0, 5, 6, 7)]
    cases.append(("SPLIT", 1, DIXCommand(1, split=bad_split)))
    bad = [k for k in range(h.U) if 3 not in h.codes[k]]
    if bad:
        modes = [1] * h.U
        modes[bad[-1]] = 3
        cases.append(("MODE", 2, DIXCommand(2, modes=tuple(modes))))
    cases.append(("TIMING", 3, DIXCommand(3, value=0)))
    # a zero settle with every unused bit above the T-bit field set: still TIMING (the
    # field alone is the value)
    width = len(dut.cmd__payload)
    junk = ((1 << width) - 1) ^ ((1 << (3 + h.T)) - 1) | h.encode(DIXCommand(3, value=0))
    cases.append(("TIMING", 3, junk))
    for name, bit, cmd in cases:
        for want, c in ((1 << bit, cmd), (0, DIXCommand(4))):
            if isinstance(c, int):                   # a raw word: the command it carries
                h.sent[c] = DIXCommand(3, value=0)
                h.source.send([c])
            else:
                h.send([c])
            while True:
                got = await h.step()
                if got["ready"] and h.source.idle:     # taken in this cycle
                    break
                assert got["error"] == (0 if want else 1 << bit), f"{name}: flag early"
            before = got
            got = await h.step()
            assert got["error"] == want, f"{name}: error {got['error']:#b} in t + 1, " \
                                         f"expected {want:#b}"
            assert got["modes"] == before["modes"] and got["split"] == before["split"]
    # a command offered in the first cycle after a reset is taken one cycle later
    await h.reset()
    h.source.gap_p = 0
    h.send([DIXCommand(3, value=0)])
    got = await h.step()
    assert not got["ready"] and not h.source.idle, "a command taken in the first cycle out " \
                                                   "of reset"
    got = await h.step()
    assert got["ready"] and h.source.idle
    got = await h.step()
    assert got["error"] == 1 << 3
    h.finish("error_flags", transactions=h.taken)
