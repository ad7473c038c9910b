"""Formal harness of the wavelength-selective switch controller (:mod:`rtl.optics.wss`).

Promises, from the contract the block names (``models.flexsipac.wss``'s docstring): a table
is applied only when it is valid, so the active table (``drive``) never

- ``no_duplicate``: carries a wavelength twice on one output (coherent crosstalk), nor names
  an output that does not exist;
- ``no_self``: drops an input's wavelength at its own port;
- ``budget``: once applied (the settle time), sends an output more wavelengths than its
  budget. (While a table is applied column by column, old and new columns mix and may
  exceed a budget for a few cycles; the contract promises the budget of the table.)

And the error bits in both directions (``<bit>_rises``: the sticky bit is high from its
documented cycle until a CLEAR is taken or a reset; ``<bit>_only``: never otherwise), each
against the harness's own reading: OPCODE, RANGE and TIMING from the command taken in t
(high in t + 1); SELF, DUPLICATE and BUDGET from the first conflict of the table a COMMIT
taken in t applies (high in t + 5 + lam for a conflict at wavelength lam), judged on the
harness's own copy of the staging table (the memory starts at zero and keeps its contents
through a reset) and its own budgets.

The budgets are the harness's own: w at reset, set by an accepted SET_BUDGET (port < r,
value <= w). Bounded model check: a commit scans w + 3 and applies w + 2 cycles, so the depth
covers loads, a commit refused or applied, and the next commit.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value

from aifabric.rtl.optics.wss import Op, State

from . import Harness, Property, any_seq, block_module, elaborate

MODULE = "aifabric.rtl.optics.wss"


def build(params, mutant_spec=None):
    mod = block_module(MODULE, mutant_spec)
    r, w = params["ports"], params["wavelengths"]
    dut = mod.WSSController(**params)
    frag = elaborate(dut)
    m = Module()
    m.submodules.dut = frag
    width = len(Value.cast(dut.cmd.payload))
    valid, payload = Signal(), Signal(width)
    m.d.comb += [valid.eq(any_seq(1)), payload.eq(any_seq(width)),
                 dut.cmd.valid.eq(valid), dut.cmd.payload.eq(payload)]
    c = dut.cell
    cell = {(i, lam): dut.drive[lam][i] for i in range(r) for lam in range(w)}

    def to(i, lam, o):
        return cell[i, lam].enable & (cell[i, lam].port == o)

    no_dup = []
    for lam in range(w):
        for o in range(r):
            hits = sum((to(i, lam, o) for i in range(r)), start=0)
            no_dup.append(hits <= 1)
        for i in range(r):
            no_dup.append(~cell[i, lam].enable | (cell[i, lam].port < r))
    no_self = [~to(o, lam, o) for lam in range(w) for o in range(r)]

    # the budgets in force
    lb, rb = w.bit_length(), r.bit_length()
    budget = [Signal(lb + 1, name=f"h_budget{o}", init=w) for o in range(r)]
    f_port, f_value = payload[3:3 + rb], payload[3 + rb:3 + rb + lb]
    with m.If(valid & dut.cmd.ready & (payload[0:3] == Op.SET_BUDGET) & (f_port < r) &
              (f_value <= w)):
        for o in range(r):
            with m.If(f_port == o):
                m.d.sync += budget[o].eq(f_value)
    within = [sum((to(i, lam, o) for i in range(r) for lam in range(w)), start=0) <= budget[o]
              for o in range(r)]
    settling = dut.state == State.SETTLE
    checks = {"no_duplicate": Cat(*no_dup).all(), "no_self": Cat(*no_self).all(),
              "budget": ~settling | Cat(*within).all()}

    # ---- the error bits from the harness's own reading of the commands taken
    took = valid & dut.cmd.ready
    op = payload[0:3]
    f_lam = payload[3:3 + lb]
    f_cells = [payload[3 + lb + i * c:3 + lb + (i + 1) * c] for i in range(r)]
    T = params["timer_bits"]
    cause = Signal(6, name="h_cause")              # OPCODE, RANGE, -, -, -, TIMING
    m.d.comb += [
        cause[0].eq((op == 0) | (op > Op.CLEAR)),
        cause[1].eq(((op == Op.LOAD_COLUMN) & ((f_lam >= w) |
                                  Cat(*[cl[0] & (cl[1:] >= r) for cl in f_cells]).any())) |
                    ((op == Op.SET_BUDGET) & ((f_port >= r) | (f_value > w)))),
        cause[5].eq((op == Op.SET_SETTLE) & (payload[3:3 + T] == 0)),
    ]
    # the staging table as loaded (a memory: no reset, zero at power-up)
    stage = [[Signal(c, name=f"h_stage{lam}_{i}", reset_less=True) for i in range(r)]
             for lam in range(w)]
    with m.If(took & (op == Op.LOAD_COLUMN) & ~cause.any()):
        for lam in range(w):
            with m.If(f_lam == lam):
                m.d.sync += [stage[lam][i].eq(f_cells[i]) for i in range(r)]
    # the first conflict of the staged table in scan order (lowest wavelength, then lowest
    # output; SELF before DUPLICATE before BUDGET), with the budgets in force
    entries, got = [], [Const(0, lb + 1)] * r
    for lam in range(w):
        to_o = [[stage[lam][i][0] & (stage[lam][i][1:] == o) for i in range(r)]
                for o in range(r)]
        for o in range(r):
            n_in = sum(to_o[o], start=Const(0, 2 + r.bit_length()))
            own, dup = to_o[o][o], n_in > 1
            over = (n_in != 0) & (got[o] + 1 > budget[o])
            entries.append((own | dup | over, lam, Mux(own, 0b001, Mux(dup, 0b010, 0b100))))
            got[o] = got[o] + n_in
    kind, at = Const(0, 3), Const(0, max(1, (w - 1).bit_length()))
    for cond, lam, kv in reversed(entries):
        kind, at = Mux(cond, kv, kind), Mux(cond, lam, at)
    # a commit in flight: cycles since it was taken, and the conflict it will find
    age = Signal(range(w + 6), name="h_age")
    pend_kind, pend_at = Signal(3, name="h_kind"), Signal(len(at), name="h_at")
    found = (pend_kind != 0) & (age == 4 + pend_at)
    with m.If(took & (op == Op.COMMIT)):
        m.d.sync += [age.eq(1), pend_at.eq(at),
                     pend_kind.eq(Mux(Cat(*[e[0] for e in entries]).any(), kind, 0))]
    with m.Elif(found):
        m.d.sync += [age.eq(0), pend_kind.eq(0)]
    with m.Elif(age != 0):
        m.d.sync += age.eq(age + 1)
    # the error word expected in this cycle
    want = Signal(6, name="h_errors")
    with m.If(took & cause.any()):
        m.d.sync += want.eq(want | cause)
    with m.Elif(took & (op == Op.CLEAR)):
        m.d.sync += want.eq(0)
    with m.Elif(found):
        m.d.sync += want.eq(want | (pend_kind << 2))
    # configs counts the commits applied, modulo 2^counter_bits: it steps by one exactly as
    # a commit's settle time ends, and holds otherwise
    b_cfg = len(dut.configs)
    last_cfg = Signal(b_cfg, name="h_configs")
    was_settling = Signal(name="h_was_settling")
    m.d.sync += [last_cfg.eq(dut.configs), was_settling.eq(settling)]
    step = (last_cfg + 1)[:b_cfg]
    checks["configs_counts"] = dut.configs == Mux(was_settling & ~settling, step, last_cfg)
    for b, bit in enumerate(ERR_BITS):
        checks[f"{bit}_rises"] = ~want[b] | dut.error[b]
        checks[f"{bit}_only"] = ~dut.error[b] | want[b]
    return Harness(m, checks, [])


ERR_BITS = ("opcode", "range", "self", "duplicate", "budget", "timing")


MUTANTS = {
    "no_duplicate": ("dq[o].eq(two_or_more(m, to_o))", "dq[o].eq(0)"),
    "no_self": ("sq[o].eq(to_o[o])", "sq[o].eq(0)"),
    "budget": ("full.eq(count[o] >= budget[o])", "full.eq(count[o] > budget[o])"),
    "opcode_rises": ("e_opcode.eq(~Cat(*is_op.values()).any())", "e_opcode.eq(op > 5)"),
    "opcode_only": ("e_opcode.eq(~Cat(*is_op.values()).any())", "e_opcode.eq(op > 4)"),
    "range_rises": ("ge_const(f_value, w + 1)", "ge_const(f_value, w + 2)"),
    "range_only": ("ge_const(f_lam, w)", "ge_const(f_lam, w - 1)"),
    "self_rises": ("sq[o].eq(to_o[o])", "sq[o].eq(to_o[o] if o else 0)"),
    "self_only": ("sq[o].eq(to_o[o])", "sq[o].eq(to_o[(o + 1) % r])"),
    "duplicate_rises": ("dq[o].eq(two_or_more(m, to_o))", "dq[o].eq(two_or_more(m, to_o[:-1]))"),
    "duplicate_only": ("dup.eq(~sq[o] & dq[o])", "dup.eq(dq[o])"),
    "budget_rises": ("full.eq(count[o] >= budget[o])", "full.eq(count[o] > budget[o])"),
    "budget_only": ("over.eq(~sq[o] & ~dq[o] & hq[o] & full)", "over.eq(~sq[o] & ~dq[o] & full)"),
    "timing_rises": ("f_settle = arg.set_settle.value",
                     "f_settle = self.cmd.payload.as_value()[3:4 + T]"),
    "timing_only": ("f_settle = arg.set_settle.value",
                    "f_settle = self.cmd.payload.as_value()[3:2 + T]"),
    "configs_counts": ("configs = Signal(self.counter_bits)",
                       "configs = Signal(self.counter_bits - 1)"),
}
MUTANT_TEXT = {
    "no_duplicate": "the scan does not flag two inputs on one output",
    "no_self": "the scan does not flag an input dropping at its own port",
    "budget": "the budget check lets an output take one wavelength over its budget",
    "opcode_rises": "the opcode check as op > 5 (op 0 taken)",
    "opcode_only": "the opcode check as op > 4 (CLEAR refused)",
    "range_rises": "SET_BUDGET takes a budget of w + 1",
    "range_only": "LOAD_COLUMN refuses the last wavelength",
    "self_rises": "output 0's own input is not flagged",
    "self_only": "SELF flags input o + 1 dropping at o, not input o",
    "duplicate_rises": "the duplicate count leaves out the last input",
    "duplicate_only": "DUPLICATE also raised beside a SELF at the same output",
    "budget_rises": "the budget check lets an output take one wavelength over its budget",
    "budget_only": "a full output is flagged in a column that sends it nothing",
    "timing_rises": "the settle field one bit too wide (a zero settle with a bit past the "
                    "field taken)",
    "timing_only": "the settle field one bit short (2^(T-1) refused as zero)",
    "configs_counts": "configs one bit short (a 2-bit count wraps after 2 commits)",
}


def _builder(name):
    def build_one(params, mutant):
        return build(params, MUTANTS[name] if mutant else None)
    return build_one


PROPERTIES = [
    Property("wss", name, promise, params, "bmc", depth, _builder(name), MUTANT_TEXT[name],
             mutant_depth=depth, ci=ci)
    for params, depth in (({"ports": 3, "wavelengths": 2, "timer_bits": 2, "settle": 1}, 24),)
    for name, promise, ci in (
        ("no_duplicate", "the active table never carries a wavelength twice on an output "
         "(nor a port >= r)", False),
        ("no_self", "the active table never drops an input at its own port", True),
        ("budget", "an applied table (settle time) respects every output's budget", False),
    )
] + [
    # each error bit both ways (r = 3: a port field that holds a port that does not exist)
    Property("wss", f"{bit}_{way}", promise.format(bit=bit.upper()),
             {"ports": 3, "wavelengths": 2, "timer_bits": 2, "settle": 1}, "bmc", 14,
             _builder(f"{bit}_{way}"), MUTANT_TEXT[f"{bit}_{way}"], mutant_depth=14)
    for bit in ERR_BITS
    for way, promise in (
        ("rises", "{bit} is set from its documented cycle after the command or conflict "
         "that causes it, until a CLEAR or reset"),
        ("only", "{bit} is set only by its cause"))
] + [
    # the commit counter at a width whose wrap the proof reaches (4 commits take under 64
    # cycles at this size: a counter that saturates at 3 instead of wrapping fails at 64)
    Property("wss", "configs_counts", "configs counts the commits applied, modulo "
             "2^counter_bits, and steps exactly as a commit's settle time ends",
             {"ports": 3, "wavelengths": 2, "timer_bits": 2, "settle": 1, "counter_bits": 2},
             "bmc", 64, _builder("configs_counts"), MUTANT_TEXT["configs_counts"],
             mutant_depth=24)
]
