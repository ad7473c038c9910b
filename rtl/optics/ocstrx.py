"""OCS transceiver controller (InfiniteHBD §4.1, Fig 3): path MZIs per lane group, an N x N
Benes MZI matrix for cross-lane loopback, heater drive from a run-time calibration table, a
settle timer and the photodetector link check with automatic failover to a backup path.
The behaviour is the contract in ``models.infinitehbd.ocstrx`` (commands, checks, order of
events, failover, reset state); the co-simulation checks it transaction by transaction.

Command payload (``cmd``, a stream of :func:`cmd_layout`; bit 0 upwards)
=======================================================================
``op`` (3 bits, :class:`Op`), then by op (l = log2 N; e = the bit length of E, so every
field can name an element or group that does not exist):

- 1 SET_PATH: ``group`` (4 bits), ``path`` (2), ``backup`` (2), ``every`` (1: all groups).
- 2 LOAD_PERM: ``perm[i]`` (l bits each, lane 0 first) then the matrix ``states`` (one bit
  per element, element 0 first).
- 3 WRITE_CAL: ``element`` (e bits), ``state`` (1), ``code`` (H).
- 4 SET_TIMING: ``which`` (2, :class:`Timing`: 0 settle, 1 debounce, 2 window),
  ``value`` (T).
- 5 CLEAR.
- 6 ARM: ``mask`` (8 bits; bit g arms group g, 0 holds it). Other ops are rejected
  (OPCODE).

The payload is as wide as the widest command. ``cmd.ready`` is high while no group settles
or checks, the matrix does not settle and no failover waits, and it is low from a reset
edge through the first cycle after the reset (a register, ``running``, gates it: no reset
signal in the logic; the stream holds ``valid`` low in reset); a command is checked in the
cycle it is taken.

Status (outputs, field k of a vector at bits ``k * width``)
==========================================================
``mzi`` (one state bit per element: A, B of group 0, A, B of group 1, ..., then the matrix),
``heater`` (H bits per element: ``cal[e][mzi[e]]``), per group ``path`` (2 bits),
``backup`` (2), ``link`` (3, :class:`Link`: 0 DOWN, 1 SETTLING, 2 CHECKING, 3 UP, 4 FAULT),
``cause`` (2, :class:`Cause`: 0 none, 1 no light after a reconfiguration, 2 light lost),
``failover`` (1); ``mstate`` (2, :class:`MatrixState`: 0 IDLE, 1 SETTLING, 2 READY), ``perm``
(the applied lane permutation, l bits per lane), ``busy``, ``error`` (sticky, the bits of
:class:`Error`: 0 OPCODE, 1 GROUP, 2 PATH, 3 PERM, 4 STATES, 5 ELEMENT, 6 TIMING),
``reconfigs`` (16 bits, wraps). ``pd``: three photodetectors per group (bit 3g path 1,
3g + 1 path 2, 3g + 2 loopback).

Every group has its own settle/check counter and light-run counter (a bundle fails over in
one settle); the matrix has its own settle counter. All are T = ``timer_bits`` wide: at
100 MHz the paper's 1 ms reconfiguration is ``settle`` = 100,000 cycles (T >= 17).
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params, eq_const, ge_const, not_elaborated

__all__ = ["OCSTrxController", "BenesCheck", "Op", "Error", "Link", "Cause", "MatrixState",
           "Timing", "cmd_layout", "cmd_width"]

GROUP_BITS = 4
MASK_BITS = 8


# IntEnums: a field of one of these shapes is a plain Value (the decoders below compare it
# bit by bit), and a testbench compares the integers it reads with the members directly.
class Op(enum.IntEnum, shape=3):
    """``op``, the command's first field; 0 and 7 are rejected (OPCODE)."""
    SET_PATH = 1
    LOAD_PERM = 2
    WRITE_CAL = 3
    SET_TIMING = 4
    CLEAR = 5
    ARM = 6


class Error(enum.IntEnum, shape=3):
    """The bit of the sticky ``error`` vector each rejected command sets."""
    OPCODE = 0
    GROUP = 1
    PATH = 2
    PERM = 3
    STATES = 4
    ELEMENT = 5
    TIMING = 6


class Link(enum.IntEnum, shape=3):
    """A group's ``link`` state."""
    DOWN = 0
    SETTLING = 1
    CHECKING = 2
    UP = 3
    FAULT = 4


class Cause(enum.IntEnum, shape=2):
    """Why a group's link is in FAULT."""
    NONE = 0
    NO_LIGHT = 1          # no light within the window after a reconfiguration
    LIGHT_LOST = 2        # an UP link dark for the debounce


class MatrixState(enum.IntEnum, shape=2):
    """``mstate``, the Benes matrix's settle state."""
    IDLE = 0
    SETTLING = 1
    READY = 2


class Timing(enum.IntEnum, shape=2):
    """SET_TIMING's ``which``; 3 is rejected (TIMING)."""
    SETTLE = 0
    DEBOUNCE = 1
    WINDOW = 2


def _bits(count):
    return max(1, (count - 1).bit_length())


def _sizes(lanes, groups):
    k = lanes.bit_length() - 1
    matrix = (lanes // 2) * (2 * k - 1)
    return k, matrix, 2 * groups + matrix


def cmd_layout(lanes, groups, code_bits, timer_bits):
    """The command payload: ``op``, then the operation's fields from bit 3 (the members of
    ``arg``, one per operation that carries any; CLEAR carries none)."""
    k, matrix, elements = _sizes(lanes, groups)
    return data.StructLayout({"op": Op, "arg": data.UnionLayout({
        "set_path": data.StructLayout({"group": GROUP_BITS, "path": 2, "backup": 2,
                                       "every": 1}),
        "load_perm": data.StructLayout({"perm": data.ArrayLayout(k, lanes), "states": matrix}),
        "write_cal": data.StructLayout({"element": elements.bit_length(), "state": 1,
                                        "code": code_bits}),
        "set_timing": data.StructLayout({"which": Timing, "value": timer_bits}),
        "arm": data.StructLayout({"mask": MASK_BITS}),
    })})


def cmd_width(lanes, groups, code_bits, timer_bits):
    return cmd_layout(lanes, groups, code_bits, timer_bits).size


def _benes(m, values, states, n, stage0, offset, half):
    """Route ``values`` (one Signal per input lane) through a Benes sub-network of ``n``
    lanes whose first stage is ``stage0`` and whose elements sit at ``offset`` in their
    stages (element id ``stage * half + position``); returns the values at its outputs."""

    def element(e, a, b):
        # expressions, not signals: the network is one expression per output (evaluated
        # in one pass by the simulator)
        return Mux(states[e], b, a), Mux(states[e], a, b)

    if n == 2:
        return list(element(stage0 * half + offset, values[0], values[1]))
    top, bottom = [], []
    for j in range(n // 2):
        x, y = element(stage0 * half + offset + j, values[2 * j], values[2 * j + 1])
        top.append(x)
        bottom.append(y)
    inner = 2 * (n.bit_length() - 1) - 3
    top = _benes(m, top, states, n // 2, stage0 + 1, offset, half)
    bottom = _benes(m, bottom, states, n // 2, stage0 + 1, offset + n // 4, half)
    out = []
    for j in range(n // 2):
        out += element((stage0 + 1 + inner) * half + offset + j, top[j], bottom[j])
    return out


class BenesCheck(wiring.Component):
    """The LOAD_PERM checks, combinational: ``is_perm`` (each lane named once in ``perm``,
    l bits per lane) and ``realised`` (the lane values pushed through the Benes matrix set
    to ``states`` arrive each at the output lane it names)."""

    def __init__(self, lanes):
        self.lanes = lanes
        self.k = lanes.bit_length() - 1
        super().__init__({"perm": In(lanes * self.k), "states": In(benes_elements(lanes)),
                          "is_perm": Out(1), "realised": Out(1)})

    def elaborate(self, platform):
        m = Module()
        N, k = self.lanes, self.k
        f_perm = [self.perm[i * k:(i + 1) * k] for i in range(N)]
        onehot = Signal(N)
        for i in range(N):
            for o in range(N):
                with m.If(eq_const(f_perm[i], o)):
                    m.d.comb += onehot[o].eq(1)
        # the lane values routed (a submodule: the simulator settles the network in one
        # pass before the comparison reads it)
        m.submodules.route = route = _BenesRoute(N)
        m.d.comb += [route.values.eq(self.perm), route.states.eq(self.states)]
        m.d.comb += [self.is_perm.eq(onehot.all()),
                     self.realised.eq(Cat(*[eq_const(route.routed[o * k:(o + 1) * k], o)
                                            for o in range(N)]).all())]
        return m


class _BenesRoute(wiring.Component):
    """Lane values (l bits each) through a Benes matrix set to ``states``."""

    def __init__(self, lanes):
        self.lanes, self.k = lanes, lanes.bit_length() - 1
        super().__init__({"values": In(lanes * self.k), "states": In(benes_elements(lanes)),
                          "routed": Out(lanes * self.k)})

    def elaborate(self, platform):
        m = Module()
        N, k = self.lanes, self.k
        values = [self.values[i * k:(i + 1) * k] for i in range(N)]
        m.d.comb += self.routed.eq(Cat(*_benes(m, values, self.states, N, 0, 0, N // 2)))
        return m


def benes_elements(lanes):
    k = lanes.bit_length() - 1
    return (lanes // 2) * (2 * k - 1)


class OCSTrxController(wiring.Component):
    """Parameters (keyword-only): ``lanes`` N (a power of two, 2..16), ``groups`` G (1..8),
    ``code_bits`` H (1..16, heater DAC), ``timer_bits`` T (2..32), ``settle`` (the settle
    time at reset, 1..2^T - 1 cycles)."""

    def __init__(self, *, lanes=8, groups=2, code_bits=12, timer_bits=20, settle=100_000):
        check_params(self, [("lanes", lanes, 2, 16), ("groups", groups, 1, 8),
                            ("code_bits", code_bits, 1, 16), ("timer_bits", timer_bits, 2, 32)])
        if lanes & (lanes - 1):
            not_elaborated(self)
            raise ValueError(f"Parameter 'lanes' must be a power of two (a Benes matrix), "
                             f"not {lanes}")
        check_params(self, [("settle", settle, 1, (1 << timer_bits) - 1)])
        self.lanes, self.groups, self.code_bits, self.timer_bits = lanes, groups, code_bits, \
            timer_bits
        self.settle = settle
        self.k, self.matrix, self.elements = _sizes(lanes, groups)
        E, G = self.elements, groups
        super().__init__({
            "cmd": In(stream.Signature(cmd_layout(lanes, groups, code_bits, timer_bits))),
            "pd": In(3 * G),
            "mzi": Out(E), "heater": Out(E * code_bits),
            "path": Out(2 * G), "backup": Out(2 * G), "link": Out(3 * G), "cause": Out(2 * G),
            "failover": Out(G), "armed": Out(G),
            "mstate": Out(2), "perm": Out(lanes * self.k),
            "busy": Out(1), "error": Out(len(Error)), "reconfigs": Out(16),
        })

    def elaborate(self, platform):
        m = Module()
        N, G, H, T, E, k = (self.lanes, self.groups, self.code_bits, self.timer_bits,
                            self.elements, self.k)
        top = (1 << T) - 1

        # ---- registers
        path = [Signal(2, name=f"path{g}", init=3) for g in range(G)]
        backup = [Signal(2, name=f"backup{g}") for g in range(G)]
        link = [Signal(Link, name=f"link{g}") for g in range(G)]
        cause = [Signal(Cause, name=f"cause{g}") for g in range(G)]
        failover = [Signal(name=f"failover{g}") for g in range(G)]
        armed = Signal(G, init=(1 << G) - 1)
        tmr = [Signal(T, name=f"tmr{g}") for g in range(G)]    # settle left / samples taken
        run = [Signal(T, name=f"run{g}") for g in range(G)]    # lit (checking) / dark (up) run
        states = Signal(E)
        cal = [[Signal(H, name=f"cal{e}_{s}", init=s << (H - 1)) for s in (0, 1)]
               for e in range(E)]
        perm = Signal(N * k, init=sum(i << (i * k) for i in range(N)))
        mstate = Signal(MatrixState)
        mtmr = Signal(T)
        settle = Signal(T, init=self.settle)
        debounce = Signal(T, init=min(8, top))
        window = Signal(T, init=min(1000, top))
        errors = Signal(len(Error))
        reconfigs = Signal(16)

        m.d.comb += [
            self.mzi.eq(states), self.perm.eq(perm), self.mstate.eq(mstate),
            self.error.eq(errors), self.reconfigs.eq(reconfigs), self.armed.eq(armed),
            self.path.eq(Cat(*path)), self.backup.eq(Cat(*backup)), self.link.eq(Cat(*link)),
            self.cause.eq(Cat(*cause)), self.failover.eq(Cat(*failover)),
            self.heater.eq(Cat(*[Mux(states[e], cal[e][1], cal[e][0]) for e in range(E)])),
        ]

        # ---- light on each group's active Rx path; busy groups; waiting failovers
        lit, gbusy, pending, on_loop = Signal(G), Signal(G), Signal(G), Signal(G)
        is_up, is_fault = Signal(G), Signal(G)
        for g in range(G):
            pd = self.pd[3 * g:3 * g + 3]
            m.d.comb += [
                lit[g].eq((eq_const(path[g], 1) & pd[0]) | (eq_const(path[g], 2) & pd[1]) |
                          (eq_const(path[g], 3) & pd[2])),
                gbusy[g].eq(eq_const(link[g], Link.SETTLING) |
                            eq_const(link[g], Link.CHECKING)),
                is_up[g].eq(eq_const(link[g], Link.UP)),
                is_fault[g].eq(eq_const(link[g], Link.FAULT)),
                pending[g].eq(is_fault[g] & backup[g].any() & armed[g]),
                on_loop[g].eq(eq_const(path[g], 3)),
            ]
        msettling = Signal()
        mdone = Signal()
        busy = Signal()
        ready = Signal()
        running = Signal()                   # low from a reset edge to the first cycle after it
        m.d.sync += running.eq(1)
        m.d.comb += [msettling.eq(eq_const(mstate, MatrixState.SETTLING)),
                     mdone.eq(msettling & ~mtmr[1:].any()),
                     busy.eq(gbusy.any() | msettling), self.busy.eq(busy),
                     ready.eq(~busy & ~pending.any() & running),
                     self.cmd.ready.eq(ready)]

        # ---- command fields and checks
        op, arg = self.cmd.payload.op, self.cmd.payload.arg
        f_group, f_path, f_backup, f_every = (arg.set_path.group, arg.set_path.path,
                                              arg.set_path.backup, arg.set_path.every)
        f_mask = arg.arm.mask
        f_perm = [arg.load_perm.perm[i] for i in range(N)]
        f_states = arg.load_perm.states
        f_elem, f_state, f_code = arg.write_cal.element, arg.write_cal.state, arg.write_cal.code
        f_which, f_value = arg.set_timing.which, arg.set_timing.value

        m.submodules.benes = chk = BenesCheck(N)
        m.d.comb += [chk.perm.eq(Cat(*f_perm)), chk.states.eq(f_states)]
        is_perm, realised = chk.is_perm, chk.realised
        group_bad = Signal()
        elem_bad = Signal()
        timing_bad = Signal()
        m.d.comb += [group_bad.eq(ge_const(f_group, G) | (f_every & f_group.any())),
                     elem_bad.eq(ge_const(f_elem, E)),
                     # the window never below the debounce: a link could never come up
                     timing_bad.eq(f_which.all() | ~f_value.any() |
                                   (eq_const(f_which, Timing.DEBOUNCE) & (f_value > window)) |
                                   (eq_const(f_which, Timing.WINDOW) & (f_value < debounce)))]
        mask_bad = Const(0) if G >= MASK_BITS else f_mask[G:].any()
        # (decoders as literal-bit ANDs, not Switch/Case: the Verilog then has no narrowed
        # constants for Verilator's -Wall to flag)
        is_op = {code: Signal(name=f"is_{code.name.lower()}") for code in Op}
        for code in Op:
            m.d.comb += is_op[code].eq(eq_const(op, code))
        err = Signal(len(Error))
        m.d.comb += [
            err[Error.GROUP].eq((is_op[Op.SET_PATH] & group_bad) | (is_op[Op.ARM] & mask_bad)),
            err[Error.PATH].eq(is_op[Op.SET_PATH] & ~group_bad &
                               (~f_path.any() | (f_backup == f_path))),
            err[Error.PERM].eq(is_op[Op.LOAD_PERM] & ~is_perm),
            err[Error.STATES].eq(is_op[Op.LOAD_PERM] & is_perm & ~realised),
            err[Error.ELEMENT].eq(is_op[Op.WRITE_CAL] & elem_bad),
            err[Error.TIMING].eq(is_op[Op.SET_TIMING] & timing_bad),
            err[Error.OPCODE].eq(~Cat(*is_op.values()).any()),
        ]
        take = Signal()
        m.d.comb += take.eq(ready & self.cmd.valid & ~err.any())
        with m.If(ready & self.cmd.valid & err.any()):
            m.d.sync += errors.eq(errors | err)

        # ---- what starts a settle in this cycle
        live = Signal()                      # WRITE_CAL of the code an element is driven with
        m.d.comb += live.eq(Cat(*[eq_const(f_elem, e) & (states[e] == f_state)
                                  for e in range(E)]).any())
        cmd_path = Signal(G)                 # groups SET_PATH reconfigures
        cmd_keep = Signal(G)                 # groups SET_PATH leaves up (backup only)
        cmd_cal = Signal(G)                  # groups a live calibration write re-settles
        starts = Signal(G)
        mat_start = Signal()
        for g in range(G):
            sel, same = Signal(name=f"sel{g}"), Signal(name=f"same{g}")
            m.d.comb += [
                sel.eq(take & is_op[Op.SET_PATH] & (f_every | eq_const(f_group, g))),
                same.eq((f_path == path[g]) & is_up[g]),
                cmd_path[g].eq(sel & ~same), cmd_keep[g].eq(sel & same),
                cmd_cal[g].eq(take & is_op[Op.WRITE_CAL] & live &
                              (eq_const(f_elem, 2 * g) | eq_const(f_elem, 2 * g + 1))),
                starts[g].eq(pending[g] | cmd_path[g] | cmd_cal[g]),
            ]
        m.d.comb += mat_start.eq(take & (is_op[Op.LOAD_PERM] |
                                         (is_op[Op.WRITE_CAL] & live & ge_const(f_elem, 2 * G))))
        # + one per settle started (wraps): the starts counted by a balanced tree of small
        # adders, then one 16-bit add
        counts = [starts[g] for g in range(G)] + [mat_start]
        while len(counts) > 1:
            pairs = []
            for a, b in zip(counts[0::2], counts[1::2]):
                total = Signal(max(len(a), len(b)) + 1, name="_starts")
                m.d.comb += total.eq(a + b)
                pairs.append(total)
            counts = pairs + counts[len(pairs) * 2:]
        m.d.sync += reconfigs.eq(reconfigs + counts[0])

        # ---- each group: settle, check, watch, re-check, start
        deb_m1, win_m1 = Signal(T), Signal(T)
        m.d.comb += [deb_m1.eq(debounce - 1), win_m1.eq(window - 1)]
        for g in range(G):
            run1, tmr1, tmr_m1 = (Signal(T, name=f"run1_{g}"), Signal(T, name=f"tmr1_{g}"),
                                  Signal(T, name=f"tmrm1_{g}"))
            m.d.comb += [run1.eq(run[g] + 1), tmr1.eq(tmr[g] + 1), tmr_m1.eq(tmr[g] - 1)]
            with m.If(eq_const(link[g], Link.SETTLING)):
                with m.If(~tmr[g][1:].any()):
                    m.d.sync += [link[g].eq(Link.CHECKING), tmr[g].eq(0), run[g].eq(0)]
                with m.Else():
                    m.d.sync += tmr[g].eq(tmr_m1)
            with m.Elif(eq_const(link[g], Link.CHECKING)):
                with m.If(lit[g] & (run[g] >= deb_m1)):
                    m.d.sync += [link[g].eq(Link.UP), run[g].eq(0)]
                with m.Elif(tmr[g] >= win_m1):
                    m.d.sync += [link[g].eq(Link.FAULT), cause[g].eq(Cause.NO_LIGHT)]
                with m.Else():
                    m.d.sync += [tmr[g].eq(tmr1), run[g].eq(Mux(lit[g], run1, 0))]
            with m.Elif(is_up[g]):
                # a loopback group is not watched while the matrix settles
                with m.If(msettling & on_loop[g]):
                    m.d.sync += run[g].eq(0)
                with m.Else():
                    m.d.sync += run[g].eq(Mux(lit[g], 0, run1))
                    with m.If(~lit[g] & (run[g] >= deb_m1)):
                        m.d.sync += [link[g].eq(Link.FAULT), cause[g].eq(Cause.LIGHT_LOST)]
            # the matrix is READY: loopback groups up or in fault are checked again
            with m.If(mdone & on_loop[g] & (is_up[g] | is_fault[g]) & ~pending[g]):
                m.d.sync += [link[g].eq(Link.CHECKING), cause[g].eq(Cause.NONE), tmr[g].eq(0),
                             run[g].eq(0)]
            new_path, new_backup = Signal(2, name=f"np{g}"), Signal(2, name=f"nb{g}")
            m.d.comb += [new_path.eq(Mux(pending[g], backup[g], Mux(cmd_path[g], f_path,
                                                                     path[g]))),
                         new_backup.eq(Mux(pending[g], 0, Mux(cmd_path[g], f_backup,
                                                              backup[g])))]
            with m.If(starts[g]):
                a, b = Signal(name=f"a{g}"), Signal(name=f"b{g}")
                m.d.comb += [a.eq(~eq_const(new_path, 3)), b.eq(eq_const(new_path, 2))]
                m.d.sync += [path[g].eq(new_path), backup[g].eq(new_backup),
                             failover[g].eq(pending[g]), link[g].eq(Link.SETTLING),
                             tmr[g].eq(settle), states[2 * g].eq(a), states[2 * g + 1].eq(b)]
                with m.If(~pending[g]):
                    m.d.sync += cause[g].eq(Cause.NONE)
            with m.If(cmd_keep[g]):
                m.d.sync += backup[g].eq(f_backup)

        # ---- the matrix
        with m.If(msettling):
            with m.If(mdone):
                m.d.sync += mstate.eq(MatrixState.READY)
            with m.Else():
                m.d.sync += mtmr.eq(mtmr - 1)
        with m.If(mat_start):
            m.d.sync += [mstate.eq(MatrixState.SETTLING), mtmr.eq(settle)]

        # ---- the other commands
        with m.If(take):
            with m.If(is_op[Op.LOAD_PERM]):
                m.d.sync += [states[2 * G:].eq(f_states), perm.eq(Cat(*f_perm))]
            with m.Elif(is_op[Op.WRITE_CAL]):
                for e in range(E):
                    with m.If(eq_const(f_elem, e)):
                        m.d.sync += Array(cal[e])[f_state].eq(f_code)
            with m.Elif(is_op[Op.SET_TIMING]):
                for which, reg in zip(Timing, (settle, debounce, window)):
                    with m.If(eq_const(f_which, which)):
                        m.d.sync += reg.eq(f_value)
            with m.Elif(is_op[Op.CLEAR]):
                m.d.sync += errors.eq(0)
            with m.Elif(is_op[Op.ARM]):
                m.d.sync += armed.eq(f_mask[:G])
        return m
