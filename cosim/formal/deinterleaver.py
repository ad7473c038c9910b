"""Formal harness of the de-interleaver cascade controller (:mod:`rtl.optics.deinterleaver`).

Promises, from the contract the block names (``models.flexsipac.transceiver``'s docstring;
the realisable splits and the counts a setting gives are that model's :func:`counts` and
:func:`realisable`):

- ``only_realisable``: the applied modes are modes (no code 3, except unit 0's UNIFORM in a
  "_uniform" form) and ``split`` is the counts they give: only realisable splits are ever
  applied;
- ``set_split_applies``: an accepted SET_SPLIT of a realisable split applies the first setting
  that realises it (so ``split`` becomes the commanded counts); of another split, nothing;
- ``rejected_changes_nothing``: a command refused with an error leaves the modes and the
  split as they were;
- the error bits in both directions (``<bit>_rises``: the sticky bit is high in the cycle
  after a command taken with its cause and stays high until a CLEAR is taken or a reset;
  ``<bit>_only``: never otherwise), each against the harness's own reading of the command:
  OPCODE (op 0 or above 4), SPLIT (a SET_SPLIT of no realisable split), MODE (a SET_MODES
  with code 3 at a unit where it is not UNIFORM), TIMING (a SET_SETTLE of 0).

``only_realisable`` is also the invariant the other two need under induction.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value

from aifabric.models.flexsipac.transceiver import counts, realisable, settings
from aifabric.rtl.optics.deinterleaver import Mode, Op

from . import Harness, Property, any_seq, block_module, elaborate

MODULE = "aifabric.rtl.optics.deinterleaver"


def build(params, mutant_spec=None):
    mod = block_module(MODULE, mutant_spec)
    P, w = params["ports"], params["wavelengths"]
    form = params.get("form", "chain")
    uni = form.endswith("_uniform")
    U, c = P - 1, w.bit_length()
    dut = mod.DeinterleaverController(**params)
    frag = elaborate(dut)
    m = Module()
    m.submodules.dut = frag
    width = len(Value.cast(dut.cmd.payload))
    valid, payload = Signal(), Signal(width)
    m.d.comb += [valid.eq(any_seq(1)), payload.eq(any_seq(width)),
                 dut.cmd.valid.eq(valid), dut.cmd.payload.eq(payload)]
    modes = [dut.modes[2 * k:2 * k + 2] for k in range(U)]
    split = dut.split

    def word(cnts):
        return sum(x << (p * c) for p, x in enumerate(cnts))

    def is_combo(combo, vals=modes):
        return Cat(*[v == x for v, x in zip(vals, combo)]).all()

    legal = Cat(*[md != 3 for k, md in enumerate(modes) if k or not uni] or [Const(1)]).all()
    consistent = Cat(*[~is_combo(combo) | (split == word(counts(combo, w, form)))
                       for combo in settings(U, form)]).all()
    only_realisable = legal & consistent

    # the command taken last cycle and the state before it
    took = Signal()
    cmd_q = Signal(width)
    modes_q = Signal(len(dut.modes))
    split_q = Signal(len(split))
    m.d.sync += [took.eq(valid & dut.cmd.ready), cmd_q.eq(payload), modes_q.eq(dut.modes),
                 split_q.eq(split)]
    op = cmd_q[0:3]
    f_counts = cmd_q[3:3 + P * c]
    f_modes = [cmd_q[3 + 2 * k:5 + 2 * k] for k in range(U)]
    table = realisable(P, w, form)
    hit = Cat(*[f_counts == word(s) for s in table]).any()
    # the setting the model applies for the commanded split (when realisable)
    want = Signal(2 * U)
    for k in range(U):
        acc = Const(0, 2)
        for s, setting in table.items():
            acc = acc | ((f_counts == word(s)).replicate(2) & Const(setting[k], 2))
        m.d.comb += want[2 * k:2 * k + 2].eq(acc)
    unchanged = (dut.modes == modes_q) & (split == split_q)
    is_split = op == Op.SET_SPLIT
    applies = ~(took & is_split) | (Cat(hit & (dut.modes == want) & (split == f_counts),
                                        ~hit & unchanged).any())
    bad_mode = [f == Mode.UNIFORM for k, f in enumerate(f_modes) if k or not uni] or [Const(0)]
    cause = Cat((op == 0) | (op > Op.CLEAR), (op == Op.SET_SPLIT) & ~hit,
                (op == Op.SET_MODES) & Cat(*bad_mode).any(),
                (op == Op.SET_SETTLE) & (cmd_q[3:3 + params["timer_bits"]] == 0))
    rejected = ~(took & cause.any()) | unchanged
    checks = {"only_realisable": only_realisable, "set_split_applies": applies,
              "rejected_changes_nothing": rejected}

    # the sticky error word from the commands taken (read a cycle late, as above): a taken
    # command adds its causes' bits, a good CLEAR clears them, nothing else changes them
    want = Signal(len(ERR_BITS), name="h_errors")
    want_now = Signal(len(ERR_BITS))
    m.d.comb += want_now.eq(Mux(took & cause.any(), want | cause,
                                Mux(took & (op == Op.CLEAR), 0, want)))
    m.d.sync += want.eq(want_now)
    for b, bit in enumerate(ERR_BITS):
        checks[f"{bit}_rises"] = ~want_now[b] | dut.error[b]
        checks[f"{bit}_only"] = ~dut.error[b] | want_now[b]
    return Harness(m, checks, [only_realisable],
                   {f"{bit}_{way}": [dut.error == want_now]
                    for bit in ERR_BITS for way in ("rises", "only")})


ERR_BITS = ("opcode", "split", "mode", "timing")


MUTANTS = {
    "only_realisable": ("e_mode.eq(is_op[Op.SET_MODES] &", 'e_mode.eq(0 &'),
    "set_split_applies": ("mds[b // 2] >> (b % 2) & 1", "mds[U - 1 - b // 2] >> (b % 2) & 1"),
    "rejected_changes_nothing": ("e_split.eq(is_op[Op.SET_SPLIT] & ~Cat(*hit).any())",
                                 "e_split.eq(0)"),
    "opcode_rises": ("e_opcode.eq(~Cat(*is_op.values()).any())", "e_opcode.eq(op > 4)"),
    "opcode_only": ("e_opcode.eq(~Cat(*is_op.values()).any())", "e_opcode.eq(op > 3)"),
    "split_rises": ("for f, x in zip(f_counts, counts)", "for f, x in zip(f_counts[:-1], counts)"),
    "split_only": ("for n, (counts, _) in enumerate(table):",
                   "for n, (counts, _) in enumerate(table[:-1]):"),
    "mode_rises": ("f.all() for k, f in enumerate(f_modes)",
                   "f.all() for k, f in enumerate(f_modes[:-1])"),
    "mode_only": ("f.all() for k, f in enumerate(f_modes)", "f[1] for k, f in enumerate(f_modes)"),
    "timing_rises": ("f_settle = arg.set_settle.value",
                     "f_settle = self.cmd.payload.as_value()[3:4 + T]"),
    "timing_only": ("f_settle = arg.set_settle.value",
                    "f_settle = self.cmd.payload.as_value()[3:2 + T]"),
}
MUTANT_TEXT = {
    "only_realisable": "SET_MODES does not refuse mode code 3",
    "set_split_applies": "the split table's settings with the units' order reversed",
    "rejected_changes_nothing": "an unrealisable SET_SPLIT is not refused",
    "opcode_rises": "the opcode check as op > 4 (op 0 taken)",
    "opcode_only": "the opcode check as op > 3 (CLEAR refused)",
    "split_rises": "the split match ignores the last port's count",
    "split_only": "the last realisable split never matches (refused)",
    "mode_rises": "code 3 at the last unit is not refused",
    "mode_only": "the mode check reads the code's high bit only (EVEN refused)",
    "timing_rises": "the settle field one bit wide too many (a zero settle with a bit past "
                    "the field taken)",
    "timing_only": "the settle field one bit short (2^(T-1) refused as zero)",
}


def _builder(name):
    def build_one(params, mutant):
        return build(params, MUTANTS[name] if mutant else None)
    return build_one


PROPERTIES = [
    Property("deinterleaver", name, promise, params, "prove", 4, _builder(name),
             MUTANT_TEXT[name], mutant_depth=6, ci=ci and params["ports"] == 3)
    for params in ({"ports": 3, "wavelengths": 6, "timer_bits": 2, "settle": 1},
                   {"ports": 3, "wavelengths": 6, "timer_bits": 2, "settle": 1,
                    "form": "chain_uniform"},
                   {"ports": 4, "wavelengths": 13, "timer_bits": 3, "settle": 2})
    for name, promise, ci in (
        ("only_realisable", "the applied modes are modes and split is the counts they give "
         "(only realisable splits applied)", True),
        ("set_split_applies", "an accepted SET_SPLIT applies the first setting realising its "
         "split, or nothing when none does", False),
        ("rejected_changes_nothing", "a refused command changes neither modes nor split",
         False),
    )
] + [
    # each error bit both ways, at P = 3 (the chain) and P = 4 with the odd comb
    Property("deinterleaver", f"{bit}_{way}", promise.format(bit=bit.upper()), params,
             "prove", 4, _builder(f"{bit}_{way}"), MUTANT_TEXT[f"{bit}_{way}"],
             mutant_depth=6)
    for params in ({"ports": 3, "wavelengths": 6, "timer_bits": 2, "settle": 1},
                   {"ports": 4, "wavelengths": 13, "timer_bits": 3, "settle": 2})
    for bit in ERR_BITS
    for way, promise in (
        ("rises", "{bit} is set the cycle after a command taken with its cause, until a "
         "CLEAR or reset"),
        ("only", "{bit} is set only by a command taken with its cause"))
]
