"""De-interleaver cascade controller (Flex-SiPAC §3.B, Fig 4): a chain (or, at P = 4, a
tree: ``form``) of P - 1 reconfigurable 1 x 2 units (two MZIs each) that splits the
transmitter's comb over P ports.
It takes a per-port wavelength split, finds the unit modes that realise it (a table of every
realisable split, built when the Verilog is generated: 3^(P-1) entries), sets the MZIs and
waits the settle time. Cycle for cycle the behaviour of ``models.flexsipac.transceiver``
(its docstring is the contract: modes, which wavelengths each unit drops, commands, timing).

Command payload (``cmd``, :func:`cmd_layout`; bit 0 upwards), c = the bit length of w
====================================================================================
``op`` (3 bits, :class:`Op`), then from bit 3: 1 SET_SPLIT ``count[p]`` (c bits each, port 0
first); 2 SET_MODES ``mode[k]`` (2 bits each, :class:`Mode`, unit 0 first: 0 ALL_DROP,
1 ALL_PASS, 2 EVEN; 3 UNIFORM at unit 0 of a "_uniform" form, else a MODE error);
3 SET_SETTLE ``value`` (T); 4 CLEAR. ``cmd.ready``: idle (``busy``, a register,
low), and low from a reset edge through the first cycle after the reset (a register,
``running``: no reset signal in the logic; the stream holds ``valid`` low in reset).

Status
======
``modes`` (2 bits per unit), ``mzi`` (per unit ``in`` then ``sel``), ``split`` (the counts
the applied modes give, c bits per port), ``state`` (:class:`State`: 0 IDLE, 1 SETTLE),
``error`` (sticky, the bits of :class:`Error`: 0 OPCODE, 1 SPLIT, 2 MODE, 3 TIMING),
``configs`` (16 bits, wraps).
"""

import itertools

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params, eq_const, not_elaborated

__all__ = ["DeinterleaverController", "Op", "Error", "Mode", "State", "FORMS", "cmd_layout",
           "cmd_width", "split_table"]


# IntEnums: a field of one of these shapes is a plain Value, and the split table below
# computes with the modes as integers.
class Op(enum.IntEnum, shape=3):
    """``op``, the command's first field; 0 and 5..7 are rejected (OPCODE)."""
    SET_SPLIT = 1
    SET_MODES = 2
    SET_SETTLE = 3
    CLEAR = 4


class Error(enum.IntEnum, shape=2):
    """The bit of the sticky ``error`` vector each refusal sets."""
    OPCODE = 0
    SPLIT = 1
    MODE = 2
    TIMING = 3


class Mode(enum.IntEnum, shape=2):
    """A unit's mode; UNIFORM only at unit 0 of a "_uniform" form."""
    ALL_DROP = 0
    ALL_PASS = 1
    EVEN = 2
    UNIFORM = 3


class State(enum.IntEnum, shape=1):
    """``state``."""
    IDLE = 0
    SETTLE = 1


ALL_DROP, ALL_PASS, EVEN, UNIFORM = Mode
FORMS = ("chain", "tree", "chain_uniform", "tree_uniform")


def cmd_layout(ports, wavelengths, timer_bits):
    """The command payload: ``op``, then the operation's fields from bit 3 (the members of
    ``arg``; CLEAR carries none)."""
    return data.StructLayout({"op": Op, "arg": data.UnionLayout({
        "set_split": data.StructLayout({
            "count": data.ArrayLayout(wavelengths.bit_length(), ports)}),
        "set_modes": data.StructLayout({"mode": data.ArrayLayout(Mode, ports - 1)}),
        "set_settle": data.StructLayout({"value": timer_bits}),
    })})


def cmd_width(ports, wavelengths, timer_bits):
    return cmd_layout(ports, wavelengths, timer_bits).size


def _drops(mode, lam, bit):
    return mode == ALL_DROP or (mode == EVEN and not lam >> bit & 1)


def _port_counts(modes, w, form="chain"):
    """Wavelengths per port under ``modes``. Chain: wavelength lam drops at the first unit k
    in ALL_DROP, or in EVEN with bit k of lam clear; otherwise it reaches the last port.
    Tree (P = 4): unit 0 (bit 0) sends lam to unit 1 (drop) or unit 2 (pass); units 1 and 2
    (bit 1) drop at ports 0 and 2, pass to ports 1 and 3. "_uniform" forms: unit 0 in
    UNIFORM sends lam through the front 1 x P interleaver to port lam mod P."""
    got = [0] * (len(modes) + 1)
    for lam in range(w):
        if form.endswith("_uniform") and modes[0] == UNIFORM:
            port = lam % len(got)
        elif form.startswith("tree"):
            a = 0 if _drops(modes[0], lam, 0) else 1
            port = 2 * a + (0 if _drops(modes[1 + a], lam, 1) else 1)
        else:
            port = next((k for k, mode in enumerate(modes) if _drops(mode, lam, k)),
                        len(modes))
        got[port] += 1
    return tuple(got)


def split_table(ports, w, form="chain"):
    """[(split, modes)] for every realisable split, with the first modes (lexicographic,
    unit 0 first) that give it."""
    seen = {}
    for modes in _settings(ports - 1, form):
        seen.setdefault(_port_counts(modes, w, form), modes)
    return list(seen.items())


def _settings(units, form):
    """The cascade's settings (unit 0 first), then unit 0 in UNIFORM in a "_uniform" form."""
    yield from itertools.product((ALL_DROP, ALL_PASS, EVEN), repeat=units)
    if form.endswith("_uniform"):
        yield from itertools.product((UNIFORM,), *[(ALL_DROP, ALL_PASS, EVEN)] * (units - 1))


class DeinterleaverController(wiring.Component):
    """Parameters (keyword-only): ``ports`` P (2..4: the SiPAC levels), ``wavelengths`` w
    (1..128), ``timer_bits`` T (2..32), ``settle`` (the settle time at reset, 1..2^T - 1),
    ``form`` ("chain", or "tree": at P = 4 the units as a tree, unit 0 feeding units 1
    and 2; at P < 4 the tree is the chain; either with "_uniform": a front 1 x P cyclic
    interleaver that unit 0's mode UNIFORM (code 3, MZIs in 1 and sel 1) selects, giving the
    uniform split). The form changes the elaboration-time split table, the split the modes
    give and whether code 3 is a mode at unit 0; commands and the MZI layout are the same."""

    def __init__(self, *, ports=3, wavelengths=60, timer_bits=20, settle=100_000,
                 form="chain"):
        check_params(self, [("ports", ports, 2, 4), ("wavelengths", wavelengths, 1, 128),
                            ("timer_bits", timer_bits, 2, 32)])
        check_params(self, [("settle", settle, 1, (1 << timer_bits) - 1)])
        if form not in FORMS:
            not_elaborated(self)
            raise ValueError(f"{type(self).__name__}: form must be one of "
                             f"{', '.join(map(repr, FORMS))}, not {form!r}")
        self.form = form if ports == 4 else form.replace("tree", "chain")
        self.uniform = form.endswith("_uniform")
        self.P, self.w, self.T, self.settle = ports, wavelengths, timer_bits, settle
        c = wavelengths.bit_length()
        super().__init__({
            "cmd": In(stream.Signature(cmd_layout(ports, wavelengths, timer_bits))),
            "modes": Out(2 * (ports - 1)), "mzi": Out(2 * (ports - 1)),
            "split": Out(ports * c), "state": Out(State), "error": Out(len(Error)),
            "configs": Out(16),
        })

    def elaborate(self, platform):
        m = Module()
        P, w, T = self.P, self.w, self.T
        U, c = P - 1, w.bit_length()
        modes = [Signal(Mode, name=f"mode{k}", init=ALL_PASS) for k in range(U)]
        settle = Signal(T, init=self.settle)
        timer = Signal(T)
        errors = Signal(len(Error))
        configs = Signal(16)
        busy = Signal()               # registered: a settle runs (the timer is not 0)
        running = Signal()            # low from a reset edge to the first cycle after it
        m.d.sync += running.eq(1)
        ready = Signal()
        m.d.comb += [self.state.eq(busy), ready.eq(~busy & running),
                     self.cmd.ready.eq(ready),
                     self.modes.eq(Cat(*modes)), self.error.eq(errors),
                     self.configs.eq(configs)]
        for k in range(U):            # in = EVEN or UNIFORM, sel = ALL_PASS or UNIFORM
            uni = eq_const(modes[k], UNIFORM) if k == 0 and self.uniform else 0
            m.d.comb += [self.mzi[2 * k].eq(eq_const(modes[k], EVEN) | uni),
                         self.mzi[2 * k + 1].eq(eq_const(modes[k], ALL_PASS) | uni)]

        table = split_table(P, w, self.form)
        split = Signal(P * c, init=w << ((P - 1) * c))        # registered: see below
        m.d.comb += self.split.eq(split)

        # ---- command fields and checks
        op, arg = self.cmd.payload.op, self.cmd.payload.arg
        f_counts = [arg.set_split.count[p] for p in range(P)]
        f_modes = [arg.set_modes.mode[k] for k in range(U)]
        f_settle = arg.set_settle.value
        is_op = {code: Signal(name=f"is_{code.name.lower()}") for code in Op}
        for code in Op:
            m.d.comb += is_op[code].eq(eq_const(op, code))
        # the table entry equal to the commanded split (the table's splits are distinct, so
        # at most one matches) and its modes. Separate 1-bit signals throughout: bits that
        # share their logic would otherwise alias each other inside one Verilog vector.
        hit = [Signal(name=f"hit{n}") for n in range(len(table))]
        for n, (counts, _) in enumerate(table):
            m.d.comb += hit[n].eq(Cat(*[eq_const(f, x) for f, x in zip(f_counts, counts)]).all())
        found = [Signal(name=f"found{b}") for b in range(2 * U)]
        for b in range(2 * U):
            sel = [hit[n] for n, (_, mds) in enumerate(table) if mds[b // 2] >> (b % 2) & 1]
            m.d.comb += found[b].eq(Cat(*sel).any() if sel else 0)
        # the modes a command applies, and the split they give (a one-hot match of the mode
        # combination, OR-ed per bit of the counts), registered with the modes
        nxt = [Signal(2, name=f"next_mode{k}") for k in range(U)]
        for k in range(U):
            m.d.comb += nxt[k].eq(Mux(is_op[Op.SET_SPLIT], Cat(found[2 * k], found[2 * k + 1]),
                                      f_modes[k]))
        nxt_eq = [[eq_const(nxt[k], v) for v in range(4)] for k in range(U)]
        bits = [[] for _ in range(P * c)]
        for n, combo in enumerate(_settings(U, self.form)):
            match = Signal(name=f"combo{n}")
            m.d.comb += match.eq(Cat(*[nxt_eq[k][v] for k, v in enumerate(combo)]).all())
            word = sum(x << (p * c) for p, x in enumerate(_port_counts(combo, w, self.form)))
            for b in range(P * c):
                if word >> b & 1:
                    bits[b].append(match)
        split_next = [Signal(name=f"split_next{b}") for b in range(P * c)]
        for b in range(P * c):
            m.d.comb += split_next[b].eq(Cat(*bits[b]).any() if bits[b] else 0)
        e_split, e_mode, e_timing, e_opcode = Signal(), Signal(), Signal(), Signal()
        m.d.comb += [
            e_split.eq(is_op[Op.SET_SPLIT] & ~Cat(*hit).any()),
            e_mode.eq(is_op[Op.SET_MODES] & Cat(*[f.all() for k, f in enumerate(f_modes)
                                                  if k or not self.uniform]).any()),
            e_timing.eq(is_op[Op.SET_SETTLE] & ~f_settle.any()),
            e_opcode.eq(~Cat(*is_op.values()).any()),
        ]
        err = Cat(*({Error.OPCODE: e_opcode, Error.SPLIT: e_split, Error.MODE: e_mode,
                     Error.TIMING: e_timing}[bit] for bit in Error))

        with m.If(busy):
            with m.If(~timer[1:].any()):
                m.d.sync += [configs.eq(configs + 1), busy.eq(0)]
            m.d.sync += timer.eq(timer - 1)
        with m.Elif(ready & self.cmd.valid):
            with m.If(err.any()):
                m.d.sync += errors.eq(errors | err)
            with m.Elif(is_op[Op.SET_SPLIT] | is_op[Op.SET_MODES]):
                m.d.sync += [modes[k].eq(nxt[k]) for k in range(U)]
                m.d.sync += [split.eq(Cat(*split_next)), timer.eq(settle), busy.eq(1)]
            with m.Elif(is_op[Op.SET_SETTLE]):
                m.d.sync += settle.eq(f_settle)
            with m.Elif(is_op[Op.CLEAR]):
                m.d.sync += errors.eq(0)
        return m
