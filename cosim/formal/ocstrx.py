"""Formal harness of the OCS transceiver controller (:mod:`rtl.optics.ocstrx`).

Promises, from the contract the block names (``models.infinitehbd.ocstrx``'s docstring):

- ``elements_only_on_command``: the MZI elements change only in the cycle after an accepted
  SET_PATH / LOAD_PERM or when a failover starts (a group goes from FAULT to SETTLING with
  ``failover`` set), or after a reset;
- ``malformed_changes_nothing``: a command taken with any of the contract's errors (OPCODE,
  GROUP, PATH, PERM, STATES, ELEMENT, TIMING -- also a window below the debounce, an ARM
  mask naming a group that does not exist, ``every`` with a group) changes no element, path,
  backup, permutation, matrix state, heater code nor the reconfiguration count, and leaves
  the controller idle;
- ``error_bits_exact``: the sticky error word gains exactly the bits of a command taken
  with errors (each from the harness's own reading of the fields), a good CLEAR clears it,
  nothing else changes it: each bit rises on its violation and never otherwise;
- ``up_not_before_settle_debounce``: a link comes UP no earlier than S + D cycles after its
  SETTLING began (UP in t + S + D + 1 at the earliest for a command taken in t), with S and D
  as set (a loopback group checked again when the matrix is READY starts no new settle: its
  UP is not counted from one).

The harness checks commands itself: STATES by pushing the permutation through the Benes
network of the model's element layout (``models.infinitehbd.ocstrx._layout``), and keeps S
and D (and the window W) from the SET_TIMING commands it sees accepted. k-induction, with
invariants that tie each group's link to its own timers (``tmr<g>``: settle cycles left,
then samples taken; ``run<g>``: lit samples in a row) and the harness's S, D and W to the
block's ``settle``, ``debounce`` and ``window``.
"""

from amaranth.hdl import Cat, Module, Mux, ResetSignal, Signal, Value

from aifabric.models.infinitehbd.ocstrx import _layout
from aifabric.rtl.optics.ocstrx import Link, Op, Timing

from . import Harness, Property, any_seq, block_module, elaborate, named

MODULE = "aifabric.rtl.optics.ocstrx"


def _trace(n, ids, states, values):
    """The model's ``_trace`` on signals: the values at the network's output lanes."""
    if n == 2:
        return [Mux(states[ids], values[1], values[0]), Mux(states[ids], values[0], values[1])]
    first, upper, lower, last = ids
    top, bottom = [], []
    for j, e in enumerate(first):
        a, b = values[2 * j], values[2 * j + 1]
        top.append(Mux(states[e], b, a))
        bottom.append(Mux(states[e], a, b))
    top = _trace(n // 2, upper, states, top)
    bottom = _trace(n // 2, lower, states, bottom)
    out = []
    for j, e in enumerate(last):
        a, b = top[j], bottom[j]
        out += [Mux(states[e], b, a), Mux(states[e], a, b)]
    return out


def build(params, mutant_spec=None):
    mod = block_module(MODULE, mutant_spec)
    N, G, T = params["lanes"], params["groups"], params["timer_bits"]
    dut = mod.OCSTrxController(**params)
    frag = elaborate(dut)
    m = Module()
    m.submodules.dut = frag
    k, matrix, E = dut.k, dut.matrix, dut.elements
    width = len(Value.cast(dut.cmd.payload))
    valid, p = Signal(), Signal(width)
    m.d.comb += [valid.eq(any_seq(1)), p.eq(any_seq(width)), dut.cmd.valid.eq(valid),
                 dut.cmd.payload.eq(p), dut.pd.eq(any_seq(3 * G))]
    took = valid & dut.cmd.ready
    op = p[0:3]
    group, path, backup, every = p[3:7], p[7:9], p[9:11], p[11]
    mask = p[3:11]
    perm = [p[3 + i * k:3 + (i + 1) * k] for i in range(N)]
    states = p[3 + N * k:3 + N * k + matrix]
    eb = E.bit_length()
    elem = p[3:3 + eb]
    which, value = p[3:5], p[5:5 + T]
    is_perm = Cat(*[Cat(*[perm[i] == o for i in range(N)]).any() for o in range(N)]).all()
    routed = _trace(N, _layout(N), states, perm)
    realised = Cat(*[routed[o] == o for o in range(N)]).all()
    top = (1 << T) - 1
    S = Signal(T, init=params["settle"])
    D = Signal(T, init=min(8, top))
    W = Signal(T, init=min(1000, top))
    malformed = ((op == 0) | (op > 6) |
                 ((op == Op.SET_PATH) & ((group >= G) | (every & (group != 0)) | (path == 0) |
                                         (backup == path))) |
                 ((op == Op.LOAD_PERM) & ~(is_perm & realised)) |
                 ((op == Op.WRITE_CAL) & (elem >= E)) |
                 ((op == Op.SET_TIMING) & ((which == 3) | (value == 0) |
                                           ((which == Timing.DEBOUNCE) & (value > W)) |
                                           ((which == Timing.WINDOW) & (value < D)))) |
                 ((op == Op.ARM) & ((mask >> G) != 0)))

    rst_q = Signal(reset_less=True)               # a reset in the cycle before
    m.d.sync += rst_q.eq(ResetSignal())
    took_q, bad_q, op_q = Signal(), Signal(), Signal(3)
    m.d.sync += [took_q.eq(took), bad_q.eq(took & malformed), op_q.eq(op)]
    watched = Cat(dut.mzi, dut.path, dut.backup, dut.perm, dut.mstate, dut.heater,
                  dut.reconfigs)
    watched_q = Signal(len(watched))
    mzi_q = Signal(len(dut.mzi))
    link = [dut.link[3 * g:3 * g + 3] for g in range(G)]
    link_q = [Signal(3, name=f"h_link{g}") for g in range(G)]
    m.d.sync += [watched_q.eq(watched), mzi_q.eq(dut.mzi)] + \
        [lq.eq(lk) for lq, lk in zip(link_q, link)]
    failover_start = Cat(*[(link[g] == Link.SETTLING) & (link_q[g] == Link.FAULT) & dut.failover[g]
                           for g in range(G)]).any()
    by_command = took_q & ~bad_q & ((op_q == Op.SET_PATH) | (op_q == Op.LOAD_PERM))
    only_on_command = (dut.mzi == mzi_q) | rst_q | by_command | failover_start
    nothing = ~bad_q | rst_q | ((watched == watched_q) & ~dut.busy)

    # S, D and W as set, and each group's cycles since its SETTLING began
    with m.If(took & ~malformed & (op == Op.SET_TIMING)):
        with m.If(which == Timing.SETTLE):
            m.d.sync += S.eq(value)
        with m.If(which == Timing.DEBOUNCE):
            m.d.sync += D.eq(value)
        with m.If(which == Timing.WINDOW):
            m.d.sync += W.eq(value)
    # induction: each group's timers against its age since the SETTLING began
    invariants = [S == named(frag, "settle"), D == named(frag, "debounce"),
                  W == named(frag, "window"), D <= W, S != 0, D != 0]
    ok_up = []
    for g in range(G):
        tmr, run = named(frag, f"tmr{g}"), named(frag, f"run{g}")
        age = Signal(T + 2, name=f"h_age{g}")
        settled = Signal(name=f"h_settled{g}")    # this check follows a settle
        onset = (link[g] == Link.SETTLING) & (link_q[g] != Link.SETTLING)
        recheck = (link[g] == Link.CHECKING) & (link_q[g] != Link.CHECKING) & \
            (link_q[g] != Link.SETTLING)
        m.d.sync += age.eq(Mux(onset, 1, Mux(age.all(), age, age + 1)))
        with m.If(onset):
            m.d.sync += settled.eq(1)
        with m.Elif(recheck):
            m.d.sync += settled.eq(0)
        ok_up.append(~((link[g] == Link.UP) & (link_q[g] == Link.CHECKING) & settled) | rst_q |
                     (age >= S + D))
        path_g = dut.path[2 * g:2 * g + 2]
        invariants += [
            # a group's two elements are its path's (a live calibration write re-drives them)
            (path_g != 0) & (dut.mzi[2 * g] == (path_g != 3)) &
            (dut.mzi[2 * g + 1] == (path_g == 2)),
            ~(link[g] == Link.SETTLING) | ((tmr != 0) & (tmr <= S)),
            ~((link[g] == Link.SETTLING) & (link_q[g] == Link.SETTLING)) | (age + tmr == S),
            ~((link[g] == Link.CHECKING) & (link_q[g] != Link.CHECKING)) |
            ((tmr == 0) & (run == 0)),
            ~((link[g] == Link.CHECKING) & settled & (link_q[g] == Link.CHECKING)) |
            ((age == S + tmr) & (run <= tmr)),
            ~((link[g] == Link.CHECKING) & (link_q[g] == Link.SETTLING)) | (age == S),
        ]
    # the sticky error word, bit by bit from the harness's own reading of the command: a
    # command taken with errors adds exactly its bits, a good CLEAR clears, nothing else
    # changes it
    cause = Cat(
        (op == 0) | (op == 7),
        ((op == Op.SET_PATH) & ((group >= G) | (every & (group != 0)))) |
        ((op == Op.ARM) & ((mask >> G) != 0)),
        (op == Op.SET_PATH) & ~((group >= G) | (every & (group != 0))) &
        ((path == 0) | (backup == path)),
        (op == Op.LOAD_PERM) & ~is_perm,
        (op == Op.LOAD_PERM) & is_perm & ~realised,
        (op == Op.WRITE_CAL) & (elem >= E),
        (op == Op.SET_TIMING) & ((which == 3) | (value == 0) |
                                 ((which == Timing.DEBOUNCE) & (value > W)) |
                                 ((which == Timing.WINDOW) & (value < D))))
    want = Signal(len(cause), name="h_errors")
    with m.If(took & cause.any()):
        m.d.sync += want.eq(want | cause)
    with m.Elif(took & (op == Op.CLEAR)):
        m.d.sync += want.eq(0)
    checks = {"error_bits_exact": dut.error == want,
              "elements_only_on_command": only_on_command,
              "malformed_changes_nothing": nothing,
              "up_not_before_settle_debounce": Cat(*ok_up).all(),
              # registered ready: low from a reset's first edge through the cycle after it
              "not_ready_in_reset": ~(rst_q & dut.cmd.ready)}
    return Harness(m, checks, invariants)


MUTANTS = {
    "elements_only_on_command": ("[link[g].eq(Link.FAULT), cause[g].eq(Cause.NO_LIGHT)]",
                                 "[link[g].eq(Link.FAULT), cause[g].eq(Cause.NO_LIGHT), "
                                 "states[2 * g].eq(0)]"),
    "malformed_changes_nothing": ("(~f_path.any() | (f_backup == f_path))",
                                  "(~f_path.any())"),
    "up_not_before_settle_debounce": ("with m.If(lit[g] & (run[g] >= deb_m1)):",
                                      "with m.If(lit[g] & (run1 >= deb_m1)):"),
    "error_bits_exact": ("elem_bad.eq(ge_const(f_elem, E)),",
                         "elem_bad.eq(ge_const(f_elem, E + 1)),"),
    "not_ready_in_reset": ("ready.eq(~busy & ~pending.any() & running)",
                           "ready.eq(~busy & ~pending.any())"),
    # N = 8: the lower Benes sub-network's elements at the wrong offset in their stages
    ("malformed_changes_nothing", 8): ("offset + n // 4, half)", "offset + n // 2, half)"),
}
MUTANT_TEXT = {
    "elements_only_on_command": "a link check that times out also switches the path element A",
    "malformed_changes_nothing": "SET_PATH accepts a backup equal to the path",
    "up_not_before_settle_debounce": "the link check counts one lit sample too many "
                                     "(UP one cycle early)",
    "not_ready_in_reset": "ready ignores reset",
    "error_bits_exact": "WRITE_CAL accepts element E, one beyond the last",
    ("malformed_changes_nothing", 8): "the lower Benes sub-network's elements at offset n/2 "
                                      "instead of n/4",
}


def _builder(name, lanes):
    def build_one(params, mutant):
        return build(params, MUTANTS.get((name, lanes), MUTANTS[name]) if mutant else None)
    return build_one


PROPERTIES = [
    Property("ocstrx", name, promise, params, "prove", 6,
             _builder(name, params["lanes"]), MUTANT_TEXT.get((name, params["lanes"]),
                                                               MUTANT_TEXT[name]),
             mutant_depth=16, ci=ci and params["lanes"] == 4)
    for params in ({"lanes": 4, "groups": 2, "code_bits": 1, "timer_bits": 2, "settle": 1},
                   {"lanes": 8, "groups": 2, "code_bits": 1, "timer_bits": 2, "settle": 1})
    for name, promise, ci in (
        ("elements_only_on_command", "MZI elements change only after an accepted SET_PATH / "
         "LOAD_PERM, a failover start or a reset", False),
        ("malformed_changes_nothing", "a command with any contract error changes no element, "
         "path, backup, permutation, heater code or count", False),
        ("up_not_before_settle_debounce", "a link is UP no earlier than S + D cycles after "
         "its SETTLING began", True),
        ("not_ready_in_reset", "no command is taken after a reset edge until the cycle after "
         "the reset (ready low)", False),
        ("error_bits_exact", "each error bit rises exactly on a command taken with its "
         "error, a good CLEAR clears them, nothing else changes them", False),
    )
]
