"""Formal harness of the BvN decomposition engine (:mod:`rtl.chronos.bvn`).

Promises, from the block's docstring:

- ``partial_permutation``: an emitted step connects no two inputs to one output (the
  arbiter's matching);
- ``weight_nonzero`` and ``connects_some``: an emitted step has a non-zero weight and at least
  one connection (a step is emitted only while the residual has a non-zero entry, and the
  weight is the smallest matched entry);
- ``ready_low_while_final_pending``: ``load.ready`` is low while a final step waits in the
  output register;
- ``steps_sum_to_matrix``: when the final step of a matrix is taken, the weighted sum of the
  steps taken since the matrix was loaded equals the matrix (bounded model check: any W-bit
  matrix to 7 cycles, a load and a one-step decomposition; entries <= 3 to 10 cycles, a load
  and up to four steps);
- ``error_rises_on_bad_frame`` and ``error_only_on_bad_frame``: the error flags in both
  directions, against the harness's own reading of the frames it sent (cleared at a frame's
  first beat; at its ``last`` beat ``long`` after N beats without it, else ``short`` before N
  beats, else ``overflow`` for a lane >= 2**W);
- ``rejected_frame_emits_nothing``: while a frame's flag stands the engine is idle and no step
  is out (a rejected matrix is never decomposed);
- ``done_means_idle``: ``done`` implies no step waits and ``busy`` is low;
- ``last_step_leaves_nothing`` and ``only_last_step_leaves_something``: the ``last`` flag in
  both directions, against the residual (read by name): the step committed latest is marked
  last exactly when every entry is 0 after it;
- ``done_means_decomposed``: ``done`` implies every entry is 0 and the step taken last
  since the frame began (if any) was marked last (an engine that stops early, with no
  final step, breaks no other promise: the sum is compared only at a final step).

Induction needs the rotation counters to stay those of one priority diagonal (as in the
arbiter) and the load/run/drain states to be exclusive.
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
        "ready_low_while_final_pending": ~(st.valid & st.payload.last & dut.load.ready),
    }

    # the matrix of the frame taken last, and the sum of the steps taken since it began
    taken = lv & dut.load.ready
    beat = Signal(range(n + 1))           # beats of this frame so far (n: too many)
    bad = Signal()                        # an entry of this frame so far does not fit W bits
    live = Signal()                       # a good frame was taken: its steps are coming
    matrix = [[Signal(w, name=f"h_m{i}_{j}") for j in range(n)] for i in range(n)]
    acc = [[Signal(w + 1, name=f"h_acc{i}_{j}") for j in range(n)] for i in range(n)]
    wide = Cat(*[lanes[j][w:] for j in range(n)]).any()
    with m.If(taken):
        with m.If(beat == 0):
            m.d.sync += [a.eq(0) for row in acc for a in row]
            m.d.sync += live.eq(0)
        with m.If(last):
            m.d.sync += [beat.eq(0), bad.eq(0),
                         live.eq((beat == n - 1) & ~((bad & (beat != 0)) | wide))]
        with m.Else():
            m.d.sync += [beat.eq(Mux(beat == n, n, beat + 1)),
                         bad.eq(Mux(beat == 0, wide, bad | wide))]
        for i in range(n):
            with m.If(beat == i):
                m.d.sync += [matrix[i][j].eq(lanes[j][:w]) for j in range(n)]
    step_taken = st.valid & st.ready
    with m.If(step_taken):
        for i in range(n):
            for j in range(n):
                with m.If(conn[i] & (dest[i] == j)):
                    m.d.sync += acc[i][j].eq(acc[i][j] + st.payload.weight)
    # compare once the final step is in: the cycle after it is taken
    final_q = Signal()
    m.d.sync += final_q.eq(step_taken & st.payload.last & live)
    equal = Cat(*[acc[i][j] == matrix[i][j] for i in range(n) for j in range(n)]).all()
    checks["steps_sum_to_matrix"] = ~final_q | equal

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
    # a rejected frame has no effect: while its flag stands nothing runs and no step is out
    checks["rejected_frame_emits_nothing"] = ~ref.any() | ~(dut.busy | st.valid)
    # done: every step of the matrix taken, so none waits and the engine is idle
    checks["done_means_idle"] = ~dut.done | ~(dut.busy | st.valid)

    rot = [named(frag, f"rot{i}") for i in range(n)]
    loading, draining, running = (named(frag, x) for x in ("loading", "draining", "running"))
    row_at, overflow = named(frag, "load_row"), named(frag, "load_overflow")
    resid = [[named(frag, f"r{i}_{t}") for t in range(n)] for i in range(n)]
    nz = [[named(frag, f"nz{i}_{t}") for t in range(n)] for i in range(n)]
    left, skid_valid, skid = (named(frag, x) for x in ("left", "skid_valid", "skid"))
    skid = data.View(mod.step_layout(n, w), skid)       # the register read as a step
    skid_dest = [skid.dest[i] for i in range(n)]
    skid_conn, skid_weight, skid_last = skid.connected, skid.weight, skid.last
    # (at an N that is not a power of two the counter's field also holds N .. 2^b - 1,
    # values no reset reaches)
    invariants = [rot[0] < n] + [rot[i] == (rot[0] + n - i) % n for i in range(1, n)]
    invariants += [~(loading & running), ~(loading & draining), ~(draining & running),
                   ~(draining & st.valid)]
    # the registered non-zero flags are those of the residual; "anything left" is the OR of
    # them while running, and of the rows taken so far while a frame loads
    invariants += [nz[i][t] == resid[i][t].any() for i in range(n) for t in range(n)]
    row_any = [Cat(*nz[i]).any() for i in range(n)]
    invariants += [Cat(*[row_at == (1 << k) for k in range(n)]).any(),   # one-hot
                   ~draining | (row_at == 1), ~running | (row_at == 1)]
    invariants += [~running | (left == Cat(*row_any).any()),
                   ~(loading & ~row_at[0]) | (left == Cat(*[
                       row_any[i] & row_at[i + 1:].any() for i in range(n - 1)]).any())]
    # the skid register holds a step only behind a waiting one, never behind the final
    # step, and what it holds is a step as the output register's promises describe it
    invariants += [~skid_valid | st.valid, ~(skid_valid & st.payload.last),
                   ~(skid_valid & skid_last & running), ~(st.valid & st.payload.last & running),
                   ~skid_valid | ~clash_of(skid_dest, skid_conn),
                   ~skid_valid | (skid_weight != 0), ~skid_valid | skid_conn.any()]
    # the sum under induction: every entry is what the steps took, the step waiting in the
    # output register and the residual (stored in wave order: entry (i, j) at step
    # (j - a_i) mod n of row i)
    sums = [~final_q | live]
    for i in range(n):
        for j in range(n):
            here = 0
            for t in range(n):
                here = here | Mux(((t + rot[i]) % n) == j, resid[i][t], 0)
            waiting = Mux(st.valid & conn[i] & (dest[i] == j), st.payload.weight, 0)
            skidded = Mux(skid_valid & skid_conn[i] & (skid_dest[i] == j), skid_weight, 0)
            sums.append(~live | (acc[i][j] + waiting + skidded + here == matrix[i][j]))
    zero = Cat(*[r == 0 for row in resid for r in row]).all()
    sums += [~live | running | zero, ~(live & st.valid & st.payload.last) | zero,
             ~(live & skid_valid & skid_last) | zero,
             ~live | ~loading | ~draining, ~(live & draining)]
    # a frame half loaded: the rows taken are in the residual registers (in load order,
    # a_i = -i), nothing has been summed yet, the beat pointer and the overflow flag agree
    mid = (beat != 0) & (beat != n)
    sums += [~mid | (loading & ~live & ~st.valid & (row_at == (1 << beat)[:n]) & (overflow == bad)),
             ~(beat == n) | (draining & ~live & (row_at == 1)),
             (beat != 0) | ~draining | live, (beat != 0) | (row_at == 1), beat <= n,
             ~(beat != 0) | Cat(*[a == 0 for row in acc for a in row]).all()]
    for i in range(n):
        sums += [~(mid & (beat > i)) | (matrix[i][j] == resid[i][(i + j) % n])
                 for j in range(n)]
    # the flags under induction: the harness's beat count is the engine's beat pointer and
    # state, its overflow so far the engine's; the flags are the harness's, clear mid-frame,
    # and while one stands the engine is loading with no step out
    frame = [~mid | (loading & ~st.valid & (row_at == (1 << beat)[:n]) & (overflow == bad)),
             ~(beat == n) | (draining & (row_at == 1)), (beat != 0) | ~draining,
             (beat != 0) | (row_at == 1), beat <= n]
    flags = frame + [error == ref, (beat == 0) | (ref == 0),
                     ~ref.any() | (loading & ~running & ~st.valid)]
    # the last flag against the residual: the step committed latest (the skid register's
    # when it holds one, else the output register's) is marked last exactly when it left
    # every entry 0 (the registered non-zero flags, which equal the residual's)
    pending = st.valid | skid_valid
    latest_last = Mux(skid_valid, skid_last, st.payload.last)
    empty = ~Cat(*[f for row in nz for f in row]).any()
    checks["last_step_leaves_nothing"] = ~(pending & latest_last) | empty
    checks["only_last_step_leaves_something"] = ~(pending & ~latest_last) | ~empty
    # done: the matrix is decomposed, so every entry is 0, and the step taken last since
    # the frame began (if any) was marked last
    stepped, taken_last = Signal(name="h_stepped"), Signal(name="h_taken_last")
    with m.If(taken & (beat == 0)):
        m.d.sync += stepped.eq(0)
    with m.Elif(step_taken):
        m.d.sync += [stepped.eq(1), taken_last.eq(st.payload.last)]
    checks["done_means_decomposed"] = ~dut.done | (empty & (~stepped | taken_last))
    # under induction: a step waits while running only behind a non-empty residual, and
    # once the engine stops, what waits ends with the final step
    last_flags = [~(running & pending & ~left), running | ~pending | latest_last]
    finished = named(frag, "finished")
    own = {"steps_sum_to_matrix": sums,
           "done_means_idle": [~finished | (loading & (row_at == 1)),
                               ~running | (row_at == 1)],
           "last_step_leaves_nothing": last_flags,
           "only_last_step_leaves_something": last_flags,
           # the harness's step record: a frame's steps come only while it runs, and once
           # it has stopped the latest was the final one (a zero matrix has none)
           "done_means_decomposed": last_flags + frame + [
               ~finished | (loading & (row_at == 1)), ~finished | empty,
               ~finished | ~stepped | taken_last | st.valid,
               ~(stepped & running) | ~taken_last, (beat == 0) | ~stepped,
               ~pending | running | finished]}
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
    "ready_low_while_final_pending": ("accept.eq(loading & ~pending)", "accept.eq(loading)"),
    "steps_sum_to_matrix": ("below = {(a, b): group[a] < group[b]",
                            "below = {(a, b): group[a] > group[b]"),
    "error_rises_on_bad_frame": ("lanes[j][w:] for j in range(n * rows)",
                                 "lanes[j][w + 1:] for j in range(n * rows)"),
    "error_only_on_bad_frame": ("frame_overflow.eq(beat_overflow | (overflow & ~first_row))",
                                "frame_overflow.eq(beat_overflow | overflow)"),
    "rejected_frame_emits_nothing": (
        "m.d.sync += self.error.overflow.eq(1)",
        "m.d.sync += [self.error.overflow.eq(1), loading.eq(0), running.eq(1)]"),
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
    "ready_low_while_final_pending": "a new frame is accepted while a step waits",
    "steps_sum_to_matrix": "the minimum tree picks the larger value",
    "error_rises_on_bad_frame": "the overflow check starts one bit high (a lane of 2**W fits)",
    "error_only_on_bad_frame": "the overflow of the previous frame is not cleared at a new one",
    "rejected_frame_emits_nothing": "an overflowed frame is flagged and decomposed anyway",
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
        ("ready_low_while_final_pending", "load.ready is low while a final step waits",
         "prove", 3, 8, False),
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
        ("rejected_frame_emits_nothing", "while a frame's error flag stands the engine is "
         "idle and emits no step", False),
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
