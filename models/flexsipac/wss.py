"""The Flex-SiPAC wavelength-selective switch (§3.B) and its controller, as behaviour.

An r-port WSS over w wavelengths drops wavelength ``lam`` of input port ``i`` at one output
port (or nowhere). The drive vector is one entry per (wavelength, input): ``active[lam][i]``
= the output port, or dark. The device it maps to is the first of §3.B's options, the
spatial-and-wavelength selective switch of double-crosspoint micro-resonators (the paper's
ref. [44]): every (input, wavelength) has its own selector that drops that one wavelength at
any one output, so an input can send several wavelengths to one output (an allocation's
lambda_ij > 1: 2-15 per (input, output) in the experiments) and each is switched on its
own. (§3.B's other option, a cross-bar with one tunable-FSR cell per (input, output) that
drops a *number* of wavelengths, does not map onto this vector: changing how many
wavelengths one (input, output) carries retunes that cell and interrupts all of them.)
A configuration is valid when

- no input drops at its own port (SELF: a CU does not talk to itself through its WSS),
- no output bus carries a wavelength twice (DUPLICATE: coherent crosstalk),
- no output receives more wavelengths than its budget (BUDGET: the receiving transceiver's
  share at this level; w unless set).

Controller: the contract of ``rtl/optics/wss.py``
=================================================
:class:`WSS` gives what each command does once it has completed (a COMMIT applies the
staging table or names its first conflict); the timing below says in which cycles, and the
co-simulation (``cosim/test_wss.py``) checks the RTL against both from its own scoreboard.
Commands arrive on a stream, taken while the controller is idle (``ready``):

=====  ===========  ======================================================================
op     command      effect / checks (error)
=====  ===========  ======================================================================
1      LOAD_COLUMN  writes wavelength ``lam``'s column (one cell per input) into the
                    staging table; ``lam`` < w and every enabled cell's port < r (RANGE)
2      COMMIT       checks the staging table, then applies it (below)
3      SET_BUDGET   output ``port`` < r, ``value`` <= w (RANGE)
4      SET_SETTLE   ``value`` >= 1 (TIMING)
5      CLEAR        clears the sticky error bits
other               (OPCODE)
=====  ===========  ======================================================================

COMMIT taken in cycle t: the staging table is *scanned*, one wavelength per cycle through a
three-stage pipeline (memory, column register, per-output flags), wavelength lam checked in
cycle t + 4 + lam, keeping per output the number of wavelengths it receives. The first
conflict of wavelength lam is the lowest output port o with SELF (input o drops at o),
DUPLICATE (two inputs drop at o) or BUDGET (o receives one more than its budget), in that
order for the same o: the kind's sticky bit is set, ``err_port`` = o, ``err_lambda`` = lam,
and the controller is idle in the next cycle with the active table untouched. With no
conflict (the scan takes w + 3 cycles, t + 1 .. t + w + 3) the table is *applied* in w + 2
cycles (t + w + 4 .. t + 2w + 5; the drive of wavelength lam changes in cycle
t + w + 7 + lam), then the rings *settle* for S cycles (t + 2w + 6 .. t + 2w + 5 + S) and
``configs`` counts one in t + 2w + 6 + S. Dark during a reconfiguration: every
(input, wavelength) selector whose output changes, from the cycle its wavelength is applied
to the end of the settle time -- at most w + S cycles. A selector that keeps its output is
not retuned (its drive entry is rewritten with the same value), so it carries light
throughout and needs no make-before-break: this holds because each wavelength of each input
has its own selector (the double-crosspoint device above); on a per-(input, output)
tunable-FSR cross-bar every wavelength of a changed (input, output) cell would go dark.

Reset: active table all dark (no cell enabled), budgets w, settle the parameter, errors and
counters 0, idle. The staging table keeps its contents (it is a memory; all dark at
power-up).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..common.controller import check_ranges, check_settle

__all__ = ["Op", "ERRORS", "STATES", "WSSCommand", "WSS", "check_params", "first_conflict",
           "load_commands", "check_assignment_configs"]

ERRORS = ("OPCODE", "RANGE", "SELF", "DUPLICATE", "BUDGET", "TIMING")


class Op(enum.IntEnum):
    """The command codes (``op``); the RTL's own enumeration must match it
    (``tests/rtl/optics``)."""
    LOAD_COLUMN = 1
    COMMIT = 2
    SET_BUDGET = 3
    SET_SETTLE = 4
    CLEAR = 5


STATES = ("IDLE", "SCAN", "APPLY", "SETTLE")
COUNTER_BITS = 16


def check_params(ports: int, wavelengths: int, timer_bits: int, settle: int) -> None:
    check_ranges(("ports", ports, 2, 32), ("wavelengths", wavelengths, 1, 128),
                 ("timer_bits", timer_bits, 2, 32))
    check_settle(settle, timer_bits)


@dataclass(frozen=True)
class WSSCommand:
    """Raw fields; ``cells``: per input port the output port or None (LOAD_COLUMN)."""

    op: int
    lam: int = 0
    cells: tuple = ()
    port: int = 0
    value: int = 0

    @classmethod
    def load(cls, lam, cells):
        return cls(Op.LOAD_COLUMN, lam=lam, cells=tuple(cells))

    @classmethod
    def commit(cls):
        return cls(Op.COMMIT)

    @classmethod
    def budget(cls, port, value):
        return cls(Op.SET_BUDGET, port=port, value=value)

    @classmethod
    def settle(cls, value):
        return cls(Op.SET_SETTLE, value=value)


def first_conflict(table, r: int, budget) -> tuple[str, int, int] | None:
    """The first conflict of a configuration in the controller's scan order: ``table[lam][i]``
    = input i's output port for wavelength lam, or None. Returns (kind, port, lam)."""
    count = [0] * r
    for lam, column in enumerate(table):
        hits = [0] * r
        for i, o in enumerate(column):
            if o is not None:
                hits[o] += 1
        for o in range(r):
            if column[o] == o:
                return "SELF", o, lam
            if hits[o] >= 2:
                return "DUPLICATE", o, lam
            if hits[o] and count[o] >= budget[o]:
                return "BUDGET", o, lam
        for o in range(r):
            count[o] += hits[o]
    return None


class WSS:
    """The controller's behaviour, one command at a time: :meth:`command` applies a taken
    command as it stands once complete (a COMMIT scanned, applied and settled, or stopped
    at its first conflict); ``active``, ``errors``, ``err_port``, ``err_lambda``,
    ``configs`` are the status it leaves."""

    def __init__(self, ports: int = 16, wavelengths: int = 60, timer_bits: int = 20,
                 settle: int = 100_000, counter_bits: int = COUNTER_BITS) -> None:
        check_params(ports, wavelengths, timer_bits, settle)
        check_ranges(("counter_bits", counter_bits, 1, 32))
        self.r, self.w, self.T, self.settle0 = ports, wavelengths, timer_bits, settle
        self.counter_bits = counter_bits
        self.staging = [[None] * ports for _ in range(wavelengths)]
        self.reset()

    def reset(self) -> None:
        """The reset state; the staging table (a memory) keeps its contents."""
        self.active = [[None] * self.r for _ in range(self.w)]
        self.budget = [self.w] * self.r
        self.settle = self.settle0
        self.errors = 0
        self.err_port = self.err_lambda = 0
        self.configs = 0

    def check(self, c: WSSCommand) -> str | None:
        """The error a malformed command sets, or None."""
        if c.op == Op.LOAD_COLUMN:
            if not 0 <= c.lam < self.w or any(o is not None and not 0 <= o < self.r
                                              for o in c.cells):
                return "RANGE"
        elif c.op == Op.SET_BUDGET:
            if not 0 <= c.port < self.r or not 0 <= c.value <= self.w:
                return "RANGE"
        elif c.op == Op.SET_SETTLE:
            if c.value < 1:
                return "TIMING"
        elif c.op not in (Op.COMMIT, Op.CLEAR):
            return "OPCODE"
        return None

    def command(self, c: WSSCommand) -> str:
        """Apply one taken command: "ok", the error of a malformed one (its sticky bit set,
        nothing else changed), or for a COMMIT that found a conflict its kind (nothing
        applied; ``err_port``/``err_lambda`` name it)."""
        err = self.check(c)
        if err:
            self.errors |= 1 << ERRORS.index(err)
            return err
        if c.op == Op.LOAD_COLUMN:
            self.staging[c.lam] = list(c.cells)
        elif c.op == Op.COMMIT:
            bad = first_conflict(self.staging, self.r, self.budget)
            if bad:
                kind, self.err_port, self.err_lambda = bad
                self.errors |= 1 << ERRORS.index(kind)
                return kind
            self.active = [list(col) for col in self.staging]
            self.configs = (self.configs + 1) % (1 << self.counter_bits)
        elif c.op == Op.SET_BUDGET:
            self.budget[c.port] = c.value
        elif c.op == Op.SET_SETTLE:
            self.settle = c.value
        else:
            self.errors = 0
        return "ok"

    def commit_cycles(self, settle: int | None = None) -> int:
        """Cycles from a COMMIT taken to ``ready`` again when the table is valid (the
        timing above): 2w + 6 + S."""
        return 2 * self.w + 6 + (self.settle if settle is None else settle)


# ------------------------------------------------------------ system-model interface -----

def load_commands(config: dict, r: int, w: int) -> list[WSSCommand]:
    """The commands that load and commit one WSS configuration in the allocation's format
    (``{(input port, wavelength): output port}``, :func:`allocation.assign_wavelengths`):
    one LOAD_COLUMN per wavelength (all w, so the columns a previous configuration used are
    cleared), then COMMIT."""
    cols = [[None] * r for _ in range(w)]
    for (i, lam), o in config.items():
        if not (0 <= i < r and 0 <= lam < w and 0 <= o < r):
            raise ValueError(f"WSS cell ({i}, {lam}) -> {o} is outside {r} ports x "
                             f"{w} wavelengths")
        cols[lam][i] = o
    return [WSSCommand.load(lam, cols[lam]) for lam in range(w)] + [WSSCommand.commit()]


def check_assignment_configs(assignment: dict, r: int, w: int) -> int:
    """Run every WSS configuration of an allocation (``assign_wavelengths(...)``) through
    the controller's checks; returns how many WSSs were checked. ValueError naming the WSS
    and its first conflict otherwise."""
    for key, config in assignment["wss"].items():
        cols = [[None] * r for _ in range(w)]
        for (i, lam), o in config.items():
            cols[lam][i] = o
        bad = first_conflict(cols, r, [w] * r)
        if bad:
            kind, port, lam = bad
            raise ValueError(f"WSS {key}: {kind} at output {port}, wavelength {lam}")
    return len(assignment["wss"])
