"""Formal harness of the wavelength-selective switch controller (:mod:`rtl.optics.wss`).

Promises, from the contract the block names (``models.flexsipac.wss``'s docstring): a table
is applied only when it is valid, so the active table (``drive``) never

- ``no_duplicate``: carries a wavelength twice on one output (coherent crosstalk), nor names
  an output that does not exist;
- ``no_self``: drops an input's wavelength at its own port;
- ``budget``: once applied (the settle time), sends an output more wavelengths than its
  budget. (While a table is applied column by column, old and new columns mix and may
  exceed a budget for a few cycles; the contract promises the budget of the table.)

The budgets are the harness's own: w at reset, set by an accepted SET_BUDGET (port < r,
value <= w). Bounded model check: a commit scans w + 3 and applies w + 2 cycles, so the depth
covers loads, a commit refused or applied, and the next commit.
"""

from amaranth.hdl import Cat, Module, Signal

from . import Harness, Property, any_seq, block_module, elaborate

MODULE = "aifabric.rtl.optics.wss"


def build(params, mutant_spec=None):
    mod = block_module(MODULE, mutant_spec)
    r, w = params["ports"], params["wavelengths"]
    dut = mod.WSSController(**params)
    frag = elaborate(dut)
    m = Module()
    m.submodules.dut = frag
    width = len(dut.cmd.payload)
    valid, payload = Signal(), Signal(width)
    m.d.comb += [valid.eq(any_seq(1)), payload.eq(any_seq(width)),
                 dut.cmd.valid.eq(valid), dut.cmd.payload.eq(payload)]
    c = dut.cell
    cell = {(i, lam): dut.drive[(lam * r + i) * c:(lam * r + i + 1) * c]
            for i in range(r) for lam in range(w)}

    def to(i, lam, o):
        return cell[i, lam][0] & (cell[i, lam][1:] == o)

    no_dup = []
    for lam in range(w):
        for o in range(r):
            hits = sum((to(i, lam, o) for i in range(r)), start=0)
            no_dup.append(hits <= 1)
        for i in range(r):
            no_dup.append(~cell[i, lam][0] | (cell[i, lam][1:] < r))
    no_self = [~to(o, lam, o) for lam in range(w) for o in range(r)]

    # the budgets in force
    lb, rb = w.bit_length(), r.bit_length()
    budget = [Signal(lb + 1, name=f"h_budget{o}", init=w) for o in range(r)]
    f_port, f_value = payload[3:3 + rb], payload[3 + rb:3 + rb + lb]
    with m.If(valid & dut.cmd.ready & (payload[0:3] == 3) & (f_port < r) & (f_value <= w)):
        for o in range(r):
            with m.If(f_port == o):
                m.d.sync += budget[o].eq(f_value)
    within = [sum((to(i, lam, o) for i in range(r) for lam in range(w)), start=0) <= budget[o]
              for o in range(r)]
    settling = dut.state == 3
    checks = {"no_duplicate": Cat(*no_dup).all(), "no_self": Cat(*no_self).all(),
              "budget": ~settling | Cat(*within).all()}
    return Harness(m, checks, [])


MUTANTS = {
    "no_duplicate": ("dq[o].eq(two_or_more(m, to_o))", "dq[o].eq(0)"),
    "no_self": ("sq[o].eq(to_o[o])", "sq[o].eq(0)"),
    "budget": ("full.eq(count[o] >= budget[o])", "full.eq(count[o] > budget[o])"),
}
MUTANT_TEXT = {
    "no_duplicate": "the scan does not flag two inputs on one output",
    "no_self": "the scan does not flag an input dropping at its own port",
    "budget": "the budget check lets an output take one wavelength over its budget",
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
]
