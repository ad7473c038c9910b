"""The Flex-SiPAC reconfigurable transceiver's de-interleaver cascade (§3.B, Fig 4) and its
controller, as behaviour.

Optics
======
A comb of w wavelengths (indices 0..w-1) leaves the transmitter on one fibre. A chain of
P - 1 reconfigurable 1 x 2 units splits it over P output ports (P = the levels L of the
SiPAC, one port per level): unit k passes what it receives either to its *drop* output
(port k) or on to unit k + 1 (the last unit's second output is port P - 1). Each unit has
two MZIs -- ``in`` (0: bypass, 1: through the broadband de-interleaver) and ``sel`` (the
bypass goes to 0: drop, 1: pass) -- and three modes:

- ALL_DROP (in 0, sel 0): everything to port k;
- ALL_PASS (in 0, sel 1): everything on;
- EVEN (in 1, sel 0): the de-interleaver of unit k has period 2^(k+1): wavelengths whose
  index has bit k clear drop at port k, the others pass (the odd-even interleaving of Fig
  4(b) at unit 0; each later unit halves what reaches it).

So a cascade realises only some per-port splits (for w = 60, P = 3: e.g. (30, 15, 15),
(30, 30, 0), (0, 60, 0), but not (20, 20, 20)). :func:`trace` follows every wavelength to
its port; :func:`realisable` lists the splits, each with the first setting that gives it
(lexicographic, unit 0 first, ALL_DROP < ALL_PASS < EVEN).

Chain or tree (§3.B: the 1 x 2 unit "can be cascaded into multiple stages, hierarchically
achieving more reconfigurable output ports"). The chain above is the default (the
controller's and the RTL's, a choice); ``form="tree"`` (model, controller and RTL) is the
other arrangement of the same units at P = 4: unit
0 (period 2, bit 0) feeds unit 1 from its drop output and unit 2 from its pass output, and
units 1 and 2 (period 4, bit 1) drop at ports 0 and 2 and pass to ports 1 and 3. At P = 2
and P = 3 the two are the same device (a two-unit tree is a chain). What the chain cannot
do: at P = 4, w = 64 the uniform (16, 16, 16, 16) (the tree's all-EVEN setting); its finest
split is (32, 16, 8, 8). What neither can do: the paper's "initially uniformly distributed"
comb when w is not split evenly by halving (P = 3: (20, 20, 20) at w = 60; the nearest is
(30, 15, 15)); the controller's reset is ALL_PASS (the whole comb at port P - 1), a state
the control plane replaces with the job's split before any traffic.

The front interleaver (``form="chain_uniform"`` or ``"tree_uniform"``: Flex-SiPAC's form in
the packet-level study). The comb the paper starts from ("initially uniformly
distributed") comes from a fixed 1 x P cyclic interleaver (wavelength c to port c mod P, as
the static SiPAC's transceiver) that unit 0's input MZIs can select: mode UNIFORM (code 3,
in 1 and sel 1, the combination no cascade mode uses) sends the whole comb through it and
its P outputs join the cascade's ports (the other units' modes then do not matter). So the
form realises every split of its cascade and the uniform one: (20, 20, 20) at w = 60,
P = 3, with the static SiPAC's wavelength sets. Mode 3 at another unit, or in a form
without the interleaver, is a MODE error. Every allocation the
models report is coloured from the wavelength sets a cascade setting sends to each port
(:func:`port_sets`; :func:`joint_report` checks an assignment against them).

Controller (``rtl/optics/deinterleaver.py``, cycle for cycle)
=============================================================
Commands, taken while idle: 1 SET_SPLIT (a wavelength count per port: the first setting that
realises it is applied, else SPLIT error), 2 SET_MODES (a mode per unit; mode code 3 is a
MODE error except at unit 0 of a "_uniform" form), 3 SET_SETTLE (``value`` >= 1, else
TIMING), 4 CLEAR (the sticky errors); other ops OPCODE. A rejected command changes nothing. An accepted SET_SPLIT / SET_MODES taken in
cycle t: the modes and MZIs are new in t + 1, the cascade settles for S cycles (t + 1 ..
t + S, ``state`` SETTLE; wavelengths that change port are dark then), and in t + S + 1 it is
idle with ``configs`` + 1 and ``split`` = the counts the modes give. Reset: every unit
ALL_PASS (the whole comb at port P - 1), split (0, .., 0, w), settle = the parameter.
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass

from ..common.controller import check_ranges, check_settle

__all__ = ["Op", "MODES", "ERRORS", "FORMS", "UNIFORM", "settings", "trace", "counts", "realisable",
           "setting_for",
           "port_sets", "DIXCommand", "Deinterleaver", "check_params", "cu_splits",
           "split_report", "joint_report"]

FORMS = ("chain", "tree", "chain_uniform", "tree_uniform")

MODES = ("ALL_DROP", "ALL_PASS", "EVEN", "UNIFORM")
UNIFORM = 3                                      # unit 0 only, in a "_uniform" form
MZI = {0: (0, 0), 1: (0, 1), 2: (1, 0), 3: (1, 1)}   # mode -> (in, sel)
ERRORS = ("OPCODE", "SPLIT", "MODE", "TIMING")


class Op(enum.IntEnum):
    """The command codes (``op``); the RTL's own enumeration must match it
    (``tests/rtl/optics``)."""
    SET_SPLIT = 1
    SET_MODES = 2
    SET_SETTLE = 3
    CLEAR = 4


COUNTER_BITS = 16


def check_params(ports: int, wavelengths: int, timer_bits: int, settle: int) -> None:
    check_ranges(("ports", ports, 2, 4), ("wavelengths", wavelengths, 1, 128),
                 ("timer_bits", timer_bits, 2, 32))
    check_settle(settle, timer_bits)


def _form(form: str, units: int) -> str:
    if form not in FORMS:
        raise ValueError(f"form (de-interleaver cascade) must be one of {', '.join(FORMS)}, "
                         f"not {form!r}")
    if form.startswith("tree") and units != 3:
        return form.replace("tree", "chain")    # P = 2, 3: the tree is the chain
    return form


def _uniform(form: str) -> bool:
    return form.endswith("_uniform")


def settings(units: int, form: str = "chain"):
    """Every setting of the units, in the order :func:`realisable` takes them: the cascade's
    (unit 0 first, ALL_DROP < ALL_PASS < EVEN), then, in a "_uniform" form, unit 0 in
    UNIFORM (the front interleaver; the other units' modes do not matter)."""
    yield from itertools.product(range(3), repeat=units)
    if _uniform(form) and units:
        yield from itertools.product((UNIFORM,), *[range(3)] * (units - 1))


def _unit(mode: int, lam: int, bit: int) -> int:
    """0: the unit's drop output, 1: its pass output."""
    return 0 if mode == 0 or (mode == 2 and not lam >> bit & 1) else 1


def trace(modes, w: int, form: str = "chain") -> list[int]:
    """The output port of each of the w wavelengths under the units' ``modes``."""
    form = _form(form, len(modes))
    if _uniform(form) and modes and modes[0] == UNIFORM:
        return [lam % (len(modes) + 1) for lam in range(w)]   # the front interleaver
    if form.startswith("tree"):
        out = []
        for lam in range(w):
            a = _unit(modes[0], lam, 0)
            out.append(2 * a + _unit(modes[1 + a], lam, 1))
        return out
    ports = []
    for lam in range(w):
        port = len(modes)                  # reaches the end of the chain
        for k, mode in enumerate(modes):
            if mode == 0 or (mode == 2 and not lam >> k & 1):
                port = k
                break
        ports.append(port)
    return ports


def counts(modes, w: int, form: str = "chain") -> tuple[int, ...]:
    got = [0] * (len(modes) + 1)
    for p in trace(modes, w, form):
        got[p] += 1
    return tuple(got)


def realisable(ports: int, w: int, form: str = "chain") -> dict[tuple, tuple]:
    """Every split a cascade of ``ports`` - 1 units realises -> the first setting for it."""
    out: dict = {}
    for modes in settings(ports - 1, _form(form, ports - 1)):
        out.setdefault(counts(modes, w, form), modes)
    return out


def setting_for(split, w: int, form: str = "chain") -> tuple | None:
    return realisable(len(split), w, form).get(tuple(int(c) for c in split))


def port_sets(modes, w: int, form: str = "chain") -> tuple[tuple[int, ...], ...]:
    """The wavelengths (indices) the setting ``modes`` sends to each port, ascending."""
    got: list = [[] for _ in range(len(modes) + 1)]
    for lam, p in enumerate(trace(modes, w, form)):
        got[p].append(lam)
    return tuple(tuple(g) for g in got)


@dataclass(frozen=True)
class DIXCommand:
    op: int
    split: tuple = ()
    modes: tuple = ()
    value: int = 0


class Deinterleaver:
    """The controller's behaviour, one :meth:`outputs` / :meth:`edge` pair per clock."""

    def __init__(self, ports: int = 3, wavelengths: int = 60, timer_bits: int = 20,
                 settle: int = 100_000, form: str = "chain") -> None:
        check_params(ports, wavelengths, timer_bits, settle)
        self.form = _form(form, ports - 1)
        self.P, self.w, self.T, self.settle0 = ports, wavelengths, timer_bits, settle
        self.table = realisable(ports, wavelengths, self.form)
        self.reset()

    def reset(self) -> None:
        self.modes = [1] * (self.P - 1)
        self.settle = self.settle0
        self.errors = 0
        self.configs = 0
        self.timer = 0            # settle cycles left (0: idle)

    @property
    def ready(self) -> bool:
        return self.timer == 0

    def outputs(self) -> dict:
        return {"ready": self.ready, "modes": list(self.modes),
                "mzi": [b for m in self.modes for b in MZI[m]],
                "split": list(counts(self.modes, self.w, self.form)),
                "state": int(self.timer > 0),
                "error": self.errors, "configs": self.configs}

    def check(self, c: DIXCommand) -> str | None:
        if c.op == Op.SET_SPLIT:
            return None if tuple(c.split) in self.table else "SPLIT"
        if c.op == Op.SET_MODES:
            ok = [(0, 1, 2, UNIFORM) if k == 0 and _uniform(self.form) else (0, 1, 2)
                  for k in range(self.P - 1)]
            return "MODE" if any(m not in o for m, o in zip(c.modes, ok)) else None
        if c.op == Op.SET_SETTLE:
            return "TIMING" if c.value < 1 else None
        return None if c.op == Op.CLEAR else "OPCODE"

    def edge(self, cmd: DIXCommand | None, rst: bool = False) -> str | None:
        if rst:
            self.reset()
            return None
        if self.timer:
            self.timer -= 1
            if self.timer == 0:
                self.configs = (self.configs + 1) % (1 << COUNTER_BITS)
            return None
        if cmd is None:
            return None
        err = self.check(cmd)
        if err:
            self.errors |= 1 << ERRORS.index(err)
            return err
        if cmd.op in (Op.SET_SPLIT, Op.SET_MODES):
            self.modes = list(self.table[tuple(cmd.split)] if cmd.op == Op.SET_SPLIT
                              else cmd.modes)
            self.timer = self.settle
        elif cmd.op == Op.SET_SETTLE:
            self.settle = cmd.value
        else:
            self.errors = 0
        return "ok"


# ------------------------------------------------------------ system-model interface -----

def cu_splits(topo, lam) -> list[tuple[int, ...]]:
    """Per CU the wavelengths its transmitter sends into each level (port) under the
    allocation ``lam`` (the sum of lambda_xy over its neighbours at that level)."""
    import numpy as np
    lam = np.asarray(lam)
    out = []
    for x in range(topo.N):
        out.append(tuple(int(sum(lam[x, y] for y in topo.neighbours(x, l)))
                         for l in range(topo.L)))
    return out


def split_report(topo, lam, w: int) -> dict:
    """How many CUs' per-level demands under ``lam`` a cascade serves *by counts*: some
    realisable split gives every port at least the wavelengths the CU sends through it.
    Which wavelength goes where is not matched against the WSS colouring here: an upper bound
    only. :func:`joint_report` is the check that an assignment is one the hardware emits."""
    table = list(realisable(topo.L, w)) if topo.L >= 2 else [(w,)]
    ok = 0
    splits = cu_splits(topo, lam)
    for s in splits:
        ok += any(all(v >= d for v, d in zip(split, s)) for split in table)
    return {"cus": len(splits), "served": ok, "share": ok / len(splits) if splits else 1.0}


def joint_report(topo, assignment: dict, w: int, form: str = "chain") -> dict:
    """How many CUs a cascade setting serves *with the wavelengths the assignment gives
    them*: CU x is served when one setting sends every wavelength x transmits at level l to
    port l (the WSS of level l). ``assignment["signals"]``: ``{(src, dst, k): wavelength}``.
    Returns the counts and, per served CU, the first such setting."""
    need: dict = {x: {} for x in range(topo.N)}
    bad: set = set()
    for (i, j, _k), c in assignment["signals"].items():
        l = topo.level(i, j)
        if need[i].setdefault(c, l) != l:
            bad.add(i)                      # one wavelength at two ports: no setting
    units = max(topo.L - 1, 0)
    traces = [(modes, trace(modes, w, form)) for modes in settings(units, _form(form, units))] \
        if units else [((), [0] * w)]
    served = {}
    for x in range(topo.N):
        if x in bad:
            continue
        for modes, tr in traces:
            if all(tr[c] == l for c, l in need[x].items()):
                served[x] = modes
                break
    return {"cus": topo.N, "served": len(served), "settings": served,
            "share": len(served) / topo.N if topo.N else 1.0}
