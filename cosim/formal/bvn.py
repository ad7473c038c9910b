"""Formal harness of the BvN decomposition engine (:mod:`rtl.chronos.bvn`).

Promises, from the block's docstring:

- ``partial_permutation``: an emitted step connects no two inputs to one output (the
  arbiter's matching);
- ``weight_nonzero`` and ``connects_some``: an emitted step has a non-zero weight and at least
  one connection (a step is emitted only while the residual has a non-zero entry, and the
  weight is the smallest matched entry);
- ``no_frame_begins_while_final_pending``: while a final step waits in the output register,
  no frame's first beat is taken (it would clear ``done`` before ``done`` rose);
- ``steps_sum_to_matrix``: when the final step of a matrix is taken, the weighted sum of its
  steps equals the matrix, with frames loading into the second bank while the one before
  runs: the harness queues each good non-zero frame at its last beat (at most two are due
  at once: the one whose steps are being taken and the one behind it) and the step marked
  last ends the head of the queue (bounded model check: any W-bit matrix to 7 cycles, a
  load and a one-step decomposition; entries <= 3 to 10 cycles, a load and up to four steps);
- ``error_rises_on_bad_frame`` and ``error_only_on_bad_frame``: the error flags in both
  directions, against the harness's own reading of the frames it sent (cleared at a frame's
  first beat; at its ``last`` beat ``long`` after N beats without it, else ``short`` before N
  beats, else ``overflow`` for a lane >= 2**W);
- ``rejected_frame_emits_nothing``: while a frame's flag stands no frame waits in the second
  bank (a rejected matrix is never decomposed; the good one before it may still run);
- ``done_means_idle``: ``done`` implies no step waits and ``busy`` is low;
- ``last_step_leaves_nothing`` and ``only_last_step_leaves_something``: the ``last`` flag in
  both directions, against the residual (read by name): the step committed latest is marked
  last exactly when every entry is 0 after it;
- ``done_means_decomposed``: ``done`` implies every entry is 0 and the step taken last
  since the frame began (if any) was marked last (an engine that stops early, with no
  final step, breaks no other promise: the sum is compared only at a final step).

Induction needs the rotation counters to stay those of one priority diagonal (as in the
arbiter), the second bank's "anything left" to be the OR of its rows, and a frame half
loaded or drained never to have a good frame waiting in the bank.
"""

from amaranth.hdl import Assume, Cat, Module, Mux, Signal
from amaranth.lib import data

from . import Harness, Property, any_seq, block_module, elaborate, named

MODULE = "aifabric.rtl.chronos.bvn"


def build(params, mutant_spec=None):
    mod = block_module(MODULE, mutant_spec)
    n, w = params["n"], params["w"]
    dut = mod.BvnEngine(n=n, w=w)
    frag = elaborate(dut)
    m = Module()
    m.submodules.dut = frag
    lv, last = Signal(), Signal()
    lanes = [Signal(32, name=f"h_lane{j}") for j in range(n)]
    m.d.comb += [lv.eq(any_seq(1)), last.eq(any_seq(1)), dut.load.valid.eq(lv),
                 dut.load.payload.last.eq(last), dut.steps.ready.eq(any_seq(1))]
    for j in range(n):
        m.d.comb += [lanes[j].eq(any_seq(32)), dut.load.payload.row[j].eq(lanes[j])]
        if "entry_max" in params:              # small entries: more steps within the depth
            m.d.comb += Assume(lanes[j] <= params["entry_max"])
    st = dut.steps
    dest = [st.payload.dest[i] for i in range(n)]
    conn = st.payload.connected

    def clash_of(dest, conn):
        return Cat(*[conn[a] & conn[b] & (dest[a] == dest[b])
                     for a in range(n) for b in range(a + 1, n)]).any()

    clash = clash_of(dest, conn)
    checks = {
        "partial_permutation": ~st.valid | ~clash,
        "weight_nonzero": ~st.valid | (st.payload.weight != 0),
        "connects_some": ~st.valid | conn.any(),
    }

    taken = lv & dut.load.ready
    beat = Signal(range(n + 1))           # beats of this frame so far (n: too many)
    bad = Signal()                        # an entry of this frame so far does not fit W bits
    wide = Cat(*[lanes[j][w:] for j in range(n)]).any()
    # The frame being loaded, row by row, and this cycle's beat in place: ``fresh`` is the
    # whole frame at its last beat.
    inc = [[Signal(w, name=f"h_inc{i}_{j}") for j in range(n)] for i in range(n)]
    fresh = [[Mux(beat == i, lanes[j][:w], inc[i][j]) for j in range(n)] for i in range(n)]
    with m.If(taken):
        with m.If(last):
            m.d.sync += [beat.eq(0), bad.eq(0)]
        with m.Else():
            m.d.sync += [beat.eq(Mux(beat == n, n, beat + 1)),
                         bad.eq(Mux(beat == 0, wide, bad | wide))]
        for i in range(n):
            with m.If(beat == i):
                m.d.sync += [inc[i][j].eq(lanes[j][:w]) for j in range(n)]
    good = taken & last & (beat == n - 1) & ~((bad & (beat != 0)) | wide)

    # The matrices whose steps are due, in order: ``cur`` (its steps are being taken) and
    # ``nxt`` (loaded behind it). A good non-zero frame joins at its last beat; the step
    # marked last ends ``cur``, and its steps, this one included, must sum to it. A zero
    # matrix has no step and joins nothing. A third matrix due at once fails the check.
    cur = [[Signal(w, name=f"h_cur{i}_{j}") for j in range(n)] for i in range(n)]
    nxt = [[Signal(w, name=f"h_nxt{i}_{j}") for j in range(n)] for i in range(n)]
    cur_v, nxt_v = Signal(name="h_cur_v"), Signal(name="h_nxt_v")
    acc = [[Signal(w + 1, name=f"h_acc{i}_{j}") for j in range(n)] for i in range(n)]
    step_taken = st.valid & st.ready
    pop = step_taken & st.payload.last
    plus = [[acc[i][j] + Mux(conn[i] & (dest[i] == j), st.payload.weight, 0)
             for j in range(n)] for i in range(n)]
    with m.If(step_taken):
        m.d.sync += [acc[i][j].eq(Mux(pop, 0, plus[i][j])) for i in range(n) for j in range(n)]
    # after this cycle's pop, before this cycle's push
    kept_v = Mux(pop, nxt_v, cur_v)
    more_v = nxt_v & ~pop
    with m.If(pop):
        m.d.sync += [cur_v.eq(nxt_v), nxt_v.eq(0)]
        m.d.sync += [cur[i][j].eq(nxt[i][j]) for i in range(n) for j in range(n)]
    nonzero = Cat(*[v != 0 for row in fresh for v in row]).any()
    crowded = good & nonzero & kept_v & more_v
    with m.If(good & nonzero):
        with m.If(~kept_v):
            m.d.sync += cur_v.eq(1)
            m.d.sync += [cur[i][j].eq(fresh[i][j]) for i in range(n) for j in range(n)]
        with m.Elif(~more_v):
            m.d.sync += nxt_v.eq(1)
            m.d.sync += [nxt[i][j].eq(fresh[i][j]) for i in range(n) for j in range(n)]
    equal = Cat(*[plus[i][j] == cur[i][j] for i in range(n) for j in range(n)]).all()
    checks["steps_sum_to_matrix"] = (~pop | (cur_v & equal)) & ~crowded

    # The error flags as the docstring defines them, from the frames the harness sent: all
    # cleared when a frame's first beat is taken; at its ``last`` beat ``long`` when N beats
    # came without it (the rest dropped), else ``short`` when fewer than N came, else
    # ``overflow`` when a lane of the frame was >= 2**W.
    ref = Signal(3, name="h_error")               # short, long, overflow (the port's order)
    with m.If(taken):
        with m.If(beat == 0):
            m.d.sync += ref.eq(0)
        with m.If(last):
            with m.If(beat == n):
                m.d.sync += ref[1].eq(1)
            with m.Elif(beat != n - 1):
                m.d.sync += ref[0].eq(1)
            with m.Elif((bad & (beat != 0)) | wide):
                m.d.sync += ref[2].eq(1)
    error = dut.error.as_value()
    checks["error_rises_on_bad_frame"] = (ref & ~error) == 0
    checks["error_only_on_bad_frame"] = (error & ~ref) == 0

    rot = [named(frag, f"rot{i}") for i in range(n)]
    draining, running, full, finished = (named(frag, x) for x in
                                         ("draining", "running", "full", "finished"))
    row_at, overflow = named(frag, "load_row"), named(frag, "load_overflow")
    resid = [[named(frag, f"r{i}_{t}") for t in range(n)] for i in range(n)]
    nz = [[named(frag, f"nz{i}_{t}") for t in range(n)] for i in range(n)]
    bank = [[named(frag, f"b{i}_{t}") for t in range(n)] for i in range(n)]
    left, bank_left = named(frag, "left"), named(frag, "bank_left")
    skid_valid, skid = named(frag, "skid_valid"), named(frag, "skid")
    skid = data.View(mod.step_layout(n, w), skid)       # the register read as a step
    skid_dest = [skid.dest[i] for i in range(n)]
    skid_conn, skid_weight, skid_last = skid.connected, skid.weight, skid.last
    pending = st.valid | skid_valid
    latest_last = Mux(skid_valid, skid_last, st.payload.last)

    # a rejected frame is never decomposed: while its flag stands no frame waits in the
    # second bank (the engine may still be decomposing the good matrix before it)
    checks["rejected_frame_emits_nothing"] = ~ref.any() | ~full
    # done: every step of the matrix taken, so none waits and the engine is idle
    checks["done_means_idle"] = ~dut.done | ~(dut.busy | st.valid)
    # while the final step of a run waits, no frame begins (its first beat would clear
    # ``done`` before it rose)
    checks["no_frame_begins_while_final_pending"] = ~(st.valid & st.payload.last) | ~(
        dut.load.ready & (beat == 0))

    # (at an N that is not a power of two the counter's field also holds N .. 2^b - 1,
    # values no reset reaches)
    invariants = [rot[0] < n] + [rot[i] == (rot[0] + n - i) % n for i in range(1, n)]
    # a frame half loaded or drained never has a good frame waiting in the bank
    invariants += [~(draining & full), ~(full & ~row_at[0]), ~finished | ~running]
    # the registered non-zero flags are those of the residual; "anything left" is the OR of
    # them while running (and low otherwise); the bank's is the OR of its rows taken so far
    invariants += [nz[i][t] == resid[i][t].any() for i in range(n) for t in range(n)]
    row_any = [Cat(*nz[i]).any() for i in range(n)]
    bank_any = [Cat(*[b.any() for b in bank[i]]).any() for i in range(n)]
    invariants += [Cat(*[row_at == (1 << k) for k in range(n)]).any(),   # one-hot
                   ~draining | (row_at == 1)]
    invariants += [~running | (left == Cat(*row_any).any()), running | ~left,
                   ~full | (bank_left == Cat(*bank_any).any()),
                   row_at[0] | (bank_left == Cat(*[
                       bank_any[i] & row_at[i + 1:].any() for i in range(n - 1)]).any())]
    # the skid register holds a step only behind a waiting one, never behind the final
    # step, and what it holds is a step as the output register's promises describe it; a
    # final step waits only once nothing is left (the run ends in the cycle after it)
    invariants += [~skid_valid | st.valid, ~(skid_valid & st.payload.last),
                   ~(skid_valid & skid_last) | finished | (running & ~left),
                   ~(st.valid & st.payload.last) | finished | (running & ~left),
                   ~skid_valid | ~clash_of(skid_dest, skid_conn),
                   ~skid_valid | (skid_weight != 0), ~skid_valid | skid_conn.any()]
    # the harness's beat count is the engine's beat pointer, its overflow so far the engine's
    mid = (beat != 0) & (beat != n)
    frame = [~mid | ((row_at == (1 << beat)[:n]) & (overflow == bad) & ~draining),
             ~(beat == n) | (draining & (row_at == 1)), (beat != 0) | ~draining,
             (beat != 0) | (row_at == 1), beat <= n]
    # the flags under induction: they are the harness's, clear mid-frame, and while one
    # stands the bank holds no frame
    flags = frame + [error == ref, (beat == 0) | (ref == 0), ~ref.any() | ~full]
    # the last flag against the residual: the step committed latest (the skid register's
    # when it holds one, else the output register's) is marked last exactly when it left
    # every entry 0 (the registered non-zero flags, which equal the residual's)
    empty = ~Cat(*[f for row in nz for f in row]).any()
    checks["last_step_leaves_nothing"] = ~(pending & latest_last) | empty
    checks["only_last_step_leaves_something"] = ~(pending & ~latest_last) | ~empty
    # done: the matrix is decomposed, so every entry is 0, and the step taken last (if any
    # since the frame began) was marked last
    stepped, taken_last = Signal(name="h_stepped"), Signal(name="h_taken_last")
    with m.If(taken & (beat == 0)):
        m.d.sync += stepped.eq(0)
    with m.Elif(step_taken):
        m.d.sync += [stepped.eq(1), taken_last.eq(st.payload.last)]
    checks["done_means_decomposed"] = ~dut.done | (empty & (~stepped | taken_last))
    # under induction: the latest step waiting is the final one exactly when nothing is left
    last_flags = [~(pending & latest_last & left), ~(pending & ~latest_last) | (running & left)]
    own = {"last_step_leaves_nothing": last_flags,
           "only_last_step_leaves_something": last_flags,
           "no_frame_begins_while_final_pending": frame + last_flags,
           # the harness's step record: a step not marked last was taken only while its run
           # goes on, and a run that has ended left every entry 0
           "done_means_decomposed": last_flags + frame + [
               ~finished | empty, ~(stepped & ~taken_last) | running | pending]}
    own.update((name, flags) for name in ("error_rises_on_bad_frame", "error_only_on_bad_frame",
                                          "rejected_frame_emits_nothing"))
    return Harness(m, checks, invariants, own)


MUTANTS = {
    "partial_permutation": ("from_steps(m, grants[i], rot[i], ",
                            "from_steps(m, grants[i], rot[0], "),
    "weight_nonzero": ("Mux(row_has[i], sel[i], Const((1 << w) - 1, w))",
                       "Mux(row_has[i], sel[i], Const(0, w))"),
    "connects_some": ("commit.eq(running & left & ~skid_valid)",
                      "commit.eq(running & ~skid_valid)"),
    "no_frame_begins_while_final_pending": ("& ~draining & ~(final_waits & first_row)",
                                            "& ~draining"),
    "steps_sum_to_matrix": ("below = {(a, b): group[a] < group[b]",
                            "below = {(a, b): group[a] > group[b]"),
    "error_rises_on_bad_frame": ("lanes[j][w:] for j in range(n * rows)",
                                 "lanes[j][w + 1:] for j in range(n * rows)"),
    "error_only_on_bad_frame": ("frame_overflow.eq(beat_overflow | (overflow & ~first_row))",
                                "frame_overflow.eq(beat_overflow | overflow)"),
    "rejected_frame_emits_nothing": (
        "m.d.sync += self.error.overflow.eq(1)",
        "m.d.sync += [self.error.overflow.eq(1), full.eq(1)]"),
    "done_means_idle": ("self.done.eq(finished & ~pending)", "self.done.eq(finished)"),
    "last_step_leaves_nothing": ("row_has[i] & ~emptied[i] for i in range(n)]).any())",
                                 "row_has[i] & ~emptied[i] & 0 for i in range(n)]).any())"),
    "only_last_step_leaves_something": (
        "row_has[i] & ~emptied[i] for i in range(n)]).any())",
        "row_has[i] for i in range(n)]).any())"),
    "done_means_decomposed": ("m.d.sync += left.eq(remaining)",
                              "m.d.sync += left.eq(unmatched)"),
}
MUTANT_TEXT = {
    "partial_permutation": "every row's grants rotated back to column order by row 0's amount",
    "weight_nonzero": "unmatched rows count as 0 in the minimum tree",
    "connects_some": "a step is committed without checking that anything is left",
    "no_frame_begins_while_final_pending": "a frame's first beat is taken while the final "
                                           "step of the run before waits",
    "steps_sum_to_matrix": "the minimum tree picks the larger value",
    "error_rises_on_bad_frame": "the overflow check starts one bit high (a lane of 2**W fits)",
    "error_only_on_bad_frame": "the overflow of the previous frame is not cleared at a new one",
    "rejected_frame_emits_nothing": "an overflowed frame is flagged and queued in the "
                                    "second bank anyway",
    "done_means_idle": "done rises with the final step still in an output register",
    "last_step_leaves_nothing": "'anything left' from the unmatched entries only (a matched "
                                "entry above the weight is forgotten)",
    "only_last_step_leaves_something": "a matched entry counts as left even when the step "
                                       "empties it",
    "done_means_decomposed": "the registered 'anything left' from the unmatched entries "
                             "only: the engine stops with a matched entry above the weight "
                             "left and its last step unmarked",
}


def _builder(name):
    def build_one(params, mutant):
        return build(params, MUTANTS[name] if mutant else None)
    return build_one


PROPERTIES = [
    Property("bvn", name, promise, params, mode, depth, _builder(name), MUTANT_TEXT[name],
             mutant_depth=params["n"] + mdepth, ci=ci and params["n"] == 4)
    for params in ({"n": 4, "w": 8}, {"n": 8, "w": 8})
    for name, promise, mode, depth, mdepth, ci in (
        ("partial_permutation", "an emitted step connects no two inputs to one output",
         "prove", 3, 6, True),
        ("weight_nonzero", "an emitted step has a non-zero weight", "prove", 3, 6, False),
        ("connects_some", "an emitted step connects at least one input", "prove", 3, 6, False),
        ("no_frame_begins_while_final_pending", "no frame's first beat is taken while a "
         "final step waits", "prove", 3, 8, False),
        ("steps_sum_to_matrix", "the weighted steps sum to the loaded matrix", "bmc", 7, 5,
         False),
    )
    if not (name == "steps_sum_to_matrix" and params["n"] != 4)
] + [
    # the error flags in both directions and what they promise, at a size that is not a
    # power of two (a 3-bit destination field holding 0..4, W = 9); the negative controls'
    # traces: a bad frame and a good one after it fit in 2N + 4 cycles
    Property("bvn", name, promise, {"n": 5, "w": 9}, "prove", 3, _builder(name),
             MUTANT_TEXT[name], mutant_depth=14, ci=ci)
    for name, promise, ci in (
        ("error_rises_on_bad_frame", "each error flag rises at the last beat of a frame "
         "with its fault (short, long, a lane >= 2**W)", True),
        ("error_only_on_bad_frame", "no error flag rises for a frame without its fault",
         False),
        ("rejected_frame_emits_nothing", "while a frame's error flag stands no frame waits "
         "in the second bank", False),
        ("done_means_idle", "done implies no step waits and the engine is idle", False),
        ("last_step_leaves_nothing", "a step marked last leaves every entry 0", False),
        ("only_last_step_leaves_something", "a step not marked last leaves a non-zero "
         "entry", False),
        ("done_means_decomposed", "done implies every entry is 0 and the step taken last "
         "was marked last", True),
    )
] + [
    # the sum deeper: entries 0..3 (an environment bound), 10 cycles = a load and four steps
    Property("bvn", "steps_sum_to_matrix", "the weighted steps sum to the loaded matrix "
             "(entries <= 3)", {"n": 4, "w": 8, "entry_max": 3}, "bmc", 10,
             _builder("steps_sum_to_matrix"), MUTANT_TEXT["steps_sum_to_matrix"],
             mutant_depth=10),
]
