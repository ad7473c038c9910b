"""Wavelength-selective switch controller (Flex-SiPAC §3.B-C): a staging table loaded one
wavelength column at a time, a checked commit (coherent crosstalk, own port, output
budgets; the first conflict named by port and wavelength, nothing applied), the micro-ring
drive applied one wavelength per cycle, and a settle timer. It follows the contract in
``models.flexsipac.wss``'s docstring (commands, scan order, timing, what is dark during a
reconfiguration), which ``cosim/test_wss.py`` checks with a scoreboard built from behaviour.

Command payload (``cmd``; bit 0 upwards), c = 1 + p bits per cell, p = bits of r - 1
==================================================================================
``op`` (3 bits, :class:`Op`), then from bit 3 (:func:`cmd_layout`):

- 1 LOAD_COLUMN: ``lam`` (the bit length of w), then r cells, input 0 first: ``enable``
  (1) and ``port`` (p).
- 3 SET_BUDGET: ``port`` (the bit length of r), ``value`` (the bit length of w).
- 4 SET_SETTLE: ``value`` (T). 2 COMMIT and 5 CLEAR carry nothing; other ops are rejected.

``cmd.ready`` is high while the controller is idle, and low from a reset edge through the
first cycle after the reset (a register, ``running``, gates it: no reset signal in the
logic). The stream holds ``valid`` low in reset: the staging memory has no reset, so a column
written in a reset's first cycle would stick.

Status
======
``drive`` (:func:`drive_layout`): the active table, cell (i, lam) at index ``lam * r + i``
(c bits: ``enable`` then ``port``) -- the ring of output ``port`` in row i tuned to lam;
``state`` (:class:`State`: 0 IDLE, 1 SCAN, 2 APPLY, 3 SETTLE); ``error`` (sticky, the bits of
:class:`Error`: 0 OPCODE, 1 RANGE, 2 SELF, 3 DUPLICATE, 4 BUDGET,
5 TIMING); ``err_port``, ``err_lambda`` (the last conflict a commit found); ``configs``
(``counter_bits`` bits, 16 by default, wraps: a narrow counter lets a test reach the wrap).
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .._util import check_params, eq_const, ge_const, or_tree, two_or_more

__all__ = ["WSSController", "Op", "Error", "State", "cell_layout", "cmd_layout", "cmd_width",
           "drive_layout"]


# IntEnums: a field of one of these shapes is a plain Value, and a testbench compares the
# integers it reads with the members directly.
class Op(enum.IntEnum, shape=3):
    """``op``, the command's first field; 0, 6 and 7 are rejected (OPCODE)."""
    LOAD_COLUMN = 1
    COMMIT = 2
    SET_BUDGET = 3
    SET_SETTLE = 4
    CLEAR = 5


class Error(enum.IntEnum, shape=3):
    """The bit of the sticky ``error`` vector each refusal sets."""
    OPCODE = 0
    RANGE = 1
    SELF = 2
    DUPLICATE = 3
    BUDGET = 4
    TIMING = 5


class State(enum.IntEnum, shape=2):
    """``state``."""
    IDLE = 0
    SCAN = 1
    APPLY = 2
    SETTLE = 3


def _bits(count):
    return max(1, (count - 1).bit_length())


def cell_layout(ports):
    """One cell of the table: input i drops the wavelength at output ``port``."""
    return data.StructLayout({"enable": 1, "port": _bits(ports)})


def drive_layout(ports, wavelengths):
    """The table, ``[lam][i]`` (cell (i, lam) at index ``lam * r + i``)."""
    return data.ArrayLayout(data.ArrayLayout(cell_layout(ports), ports), wavelengths)


def cmd_layout(ports, wavelengths, timer_bits):
    """The command payload: ``op``, then the operation's fields from bit 3 (the members of
    ``arg``; COMMIT and CLEAR carry none)."""
    lb = wavelengths.bit_length()
    return data.StructLayout({"op": Op, "arg": data.UnionLayout({
        "load_column": data.StructLayout({
            "lam": lb, "cells": data.ArrayLayout(cell_layout(ports), ports)}),
        "set_budget": data.StructLayout({"port": ports.bit_length(), "value": lb}),
        "set_settle": data.StructLayout({"value": timer_bits}),
    })})


def cmd_width(ports, wavelengths, timer_bits):
    return cmd_layout(ports, wavelengths, timer_bits).size


class WSSController(wiring.Component):
    """Parameters (keyword-only): ``ports`` r (2..32), ``wavelengths`` w (1..128),
    ``timer_bits`` T (2..32), ``settle`` (the settle time at reset, 1..2^T - 1 cycles),
    ``counter_bits`` (the width of ``configs``, 1..32)."""

    def __init__(self, *, ports=16, wavelengths=60, timer_bits=20, settle=100_000,
                 counter_bits=16):
        check_params(self, [("ports", ports, 2, 32), ("wavelengths", wavelengths, 1, 128),
                            ("timer_bits", timer_bits, 2, 32),
                            ("counter_bits", counter_bits, 1, 32)])
        check_params(self, [("settle", settle, 1, (1 << timer_bits) - 1)])
        self.r, self.w, self.T, self.settle = ports, wavelengths, timer_bits, settle
        self.counter_bits = counter_bits
        self.p = _bits(ports)
        self.cell = 1 + self.p
        super().__init__({
            "cmd": In(stream.Signature(cmd_layout(ports, wavelengths, timer_bits))),
            "drive": Out(drive_layout(ports, wavelengths)),
            "state": Out(State), "error": Out(len(Error)),
            "err_port": Out(self.p), "err_lambda": Out(_bits(wavelengths)),
            "configs": Out(counter_bits),
        })

    def elaborate(self, platform):
        m = Module()
        r, w, T, p, c = self.r, self.w, self.T, self.p, self.cell
        kb = _bits(w)
        row_bits = r * c
        row_layout = data.ArrayLayout(cell_layout(r), r)

        m.submodules.staging = staging = Memory(shape=row_bits, depth=w, init=[])
        rd = staging.read_port()          # synchronous: the block RAM's output register
        wr = staging.write_port()

        active = [Signal(row_layout, name=f"active{lam}") for lam in range(w)]
        budget = [Signal(w.bit_length(), name=f"budget{o}", init=w) for o in range(r)]
        count = [Signal(w.bit_length(), name=f"count{o}") for o in range(r)]
        settle = Signal(T, init=self.settle)
        state = Signal(State)
        j = Signal((w + 2).bit_length())  # scan / apply step
        timer = Signal(T)               # settle cycles left
        errors = Signal(len(Error))
        err_port, err_lambda = Signal(p), Signal(kb)
        configs = Signal(self.counter_bits)
        m.d.comb += [self.drive.eq(Cat(*active)), self.state.eq(state),
                     self.error.eq(errors), self.err_port.eq(err_port),
                     self.err_lambda.eq(err_lambda), self.configs.eq(configs)]

        in_idle, in_scan, in_apply, in_settle = (eq_const(state, s)
                                                  for s in State)
        ready = Signal()
        running = Signal()                 # low from a reset edge to the first cycle after it
        m.d.sync += running.eq(1)
        m.d.comb += [ready.eq(in_idle & running), self.cmd.ready.eq(ready)]

        # ---- command fields and checks
        op, arg = self.cmd.payload.op, self.cmd.payload.arg
        f_lam, f_cells = arg.load_column.lam, arg.load_column.cells
        f_port, f_value = arg.set_budget.port, arg.set_budget.value
        f_settle = arg.set_settle.value
        is_op = {code: Signal(name=f"is_{code.name.lower()}") for code in Op}
        for code in Op:
            m.d.comb += is_op[code].eq(eq_const(op, code))
        cell_bad = Cat(*[f_cells[i].enable & ge_const(f_cells[i].port, r)
                         for i in range(r)]).any()
        e_range, e_timing, e_opcode = Signal(), Signal(), Signal()
        m.d.comb += [
            e_range.eq((is_op[Op.LOAD_COLUMN] & (ge_const(f_lam, w) | cell_bad)) |
                       (is_op[Op.SET_BUDGET] & (ge_const(f_port, r) | ge_const(f_value, w + 1)))),
            e_timing.eq(is_op[Op.SET_SETTLE] & ~f_settle.any()),
            e_opcode.eq(~Cat(*is_op.values()).any()),
        ]
        err_any = Signal()
        m.d.comb += err_any.eq(e_range | e_timing | e_opcode)
        take = Signal()
        m.d.comb += take.eq(ready & self.cmd.valid)

        # ---- staging writes (LOAD_COLUMN); scan and apply read column j (a pipeline: the
        # memory's registered output in j + 1, ``row`` in j + 2, the column's flags in j + 3)
        m.d.comb += [wr.addr.eq(f_lam[:kb]), wr.data.eq(f_cells),
                     wr.en.eq(take & is_op[Op.LOAD_COLUMN] & ~err_any)]
        j1 = Signal(len(j))
        m.d.comb += [j1.eq(j + 1), rd.addr.eq(Mux(ge_const(j, w), 0, j[:kb]))]
        row = Signal(row_layout)
        m.d.sync += row.eq(rd.data)

        # ---- stage A: per output, from ``row``: hit, SELF, DUPLICATE (registered)
        hq, sq, dq = Signal(r), Signal(r), Signal(r)
        for o in range(r):
            to_o = [row[i].enable & eq_const(row[i].port, o) for i in range(r)]
            m.d.sync += [hq[o].eq(or_tree(m, to_o, 1)), dq[o].eq(two_or_more(m, to_o)),
                         sq[o].eq(to_o[o])]

        # ---- stage B: BUDGET against the counts so far; the first conflict
        bad = Signal(r)
        kind = []                                # one-hot SELF, DUPLICATE, BUDGET
        for o in range(r):
            full, dup, over = Signal(name=f"full{o}"), Signal(name=f"dup{o}"), \
                Signal(name=f"over{o}")
            m.d.comb += [full.eq(count[o] >= budget[o]), dup.eq(~sq[o] & dq[o]),
                         over.eq(~sq[o] & ~dq[o] & hq[o] & full),
                         bad[o].eq(sq[o] | dup | over)]
            kind.append(Cat(sq[o], dup, over))
        first = Signal(p)
        first_kind = Signal(3)
        for o in reversed(range(r)):
            with m.If(bad[o]):
                m.d.comb += [first.eq(o), first_kind.eq(kind[o])]
        checking = Signal()                       # stage B holds column j - 3
        m.d.comb += checking.eq(ge_const(j, 3))
        lam_b = Signal(kb)                        # the wavelength stage B checks (j - 3)

        timer1 = Signal(T)
        m.d.comb += timer1.eq(timer - 1)

        with m.If(in_scan):
            with m.If(checking & bad.any()):
                m.d.sync += [errors[Error.SELF].eq(errors[Error.SELF] | first_kind[0]),
                             errors[Error.DUPLICATE].eq(errors[Error.DUPLICATE] |
                                                        first_kind[1]),
                             errors[Error.BUDGET].eq(errors[Error.BUDGET] | first_kind[2]),
                             err_port.eq(first), err_lambda.eq(lam_b), state.eq(State.IDLE)]
            with m.Else():
                with m.If(checking):
                    for o in range(r):
                        m.d.sync += count[o].eq(count[o] + hq[o])
                    m.d.sync += lam_b.eq(lam_b + 1)
                with m.If(eq_const(j, w + 2)):
                    m.d.sync += [state.eq(State.APPLY), j.eq(0)]
                with m.Else():
                    m.d.sync += j.eq(j1)
        with m.Elif(in_apply):
            for lam in range(w):                  # ``row`` holds column j - 2
                with m.If(eq_const(j, lam + 2)):
                    m.d.sync += active[lam].eq(row)
            with m.If(eq_const(j, w + 1)):
                m.d.sync += [state.eq(State.SETTLE), timer.eq(settle)]
            with m.Else():
                m.d.sync += j.eq(j1)
        with m.Elif(in_settle):
            with m.If(~timer[1:].any()):
                m.d.sync += [state.eq(State.IDLE), configs.eq(configs + 1)]
            with m.Else():
                m.d.sync += timer.eq(timer1)
        with m.Elif(take):
            with m.If(err_any):
                m.d.sync += [errors[Error.RANGE].eq(errors[Error.RANGE] | e_range),
                             errors[Error.TIMING].eq(errors[Error.TIMING] | e_timing),
                             errors[Error.OPCODE].eq(errors[Error.OPCODE] | e_opcode)]
            with m.Elif(is_op[Op.COMMIT]):
                m.d.sync += [state.eq(State.SCAN), j.eq(0), lam_b.eq(0)] + [cnt.eq(0) for cnt
                                                                             in count]
            with m.Elif(is_op[Op.SET_BUDGET]):
                for o in range(r):
                    with m.If(eq_const(f_port, o)):
                        m.d.sync += budget[o].eq(f_value)
            with m.Elif(is_op[Op.SET_SETTLE]):
                m.d.sync += settle.eq(f_settle)
            with m.Elif(is_op[Op.CLEAR]):
                m.d.sync += errors.eq(0)
        return m
