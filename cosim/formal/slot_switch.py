"""Formal harness of the slot switch (:mod:`rtl.chronos.slot_switch`): slot master, checked
schedule stack, sequencer and crossbar together.

Promises, from the block's docstring (the harness marks input i's words with data bit i, so
a delivered word names its input):

- ``one_output_per_word``: a word leaves on at most one output;
- ``one_word_per_output``: no output carries two words (the stack check guarantees distinct
  destinations);
- ``only_valid_words``: a delivered word arrived on its input, valid, one cycle before;
- ``no_delivery_in_guard``: nothing is delivered from a word that arrived in the guard time
  (phase < G) or outside a slot;
- ``rejected_never_plays``: after a frame with a malformed entry (an output named twice),
  nothing is delivered and no slot runs until the next frame starts (from the second cycle
  after ``stack_error`` rises: the master acts on ``enable`` one cycle late);
- ``out_of_range_never_delivers``: likewise after a frame in which a connected input names
  an output >= N;
- the error flags in both directions (``<flag>_rises``: the flag is high whenever its cause
  says so; ``<flag>_only``: never otherwise), each against its definition: ``late[i]`` from
  the words the harness sees dropped (arrived valid, left on no output; sticky until
  ``clear``), ``config_error`` from G >= T or T < 2, ``stack_error`` from the frames sent (a
  malformed entry, from the frame's last beat until the next frame starts) and ``overflow``
  from the kept entries counted (more than ``depth`` in the frame).

Environment: T <= ``t_max`` and G constant; everything else free. Bounded model check.
"""

from amaranth.hdl import Assume, Cat, Module, Mux, Signal

from . import Harness, Property, any_const, any_seq, block_module, elaborate

MODULE = "aifabric.rtl.chronos.slot_switch"
TB = 16


def build(params, mutant_spec=None):
    mod = block_module(MODULE, mutant_spec)
    n = params["n"]
    dut = mod.SlotSwitch(n=n, d=n, depth=params["depth"], hold_bits=params["hold_bits"])
    frag = elaborate(dut)
    m = Module()
    m.submodules.dut = frag
    T, G = Signal(TB), Signal(TB)
    m.d.comb += [T.eq(any_const(TB)), G.eq(any_const(TB)), Assume(T <= params["t_max"])]
    m.d.comb += [dut.period.eq(T), dut.guard.eq(G), dut.enable.eq(any_seq(1)),
                 dut.ping.eq(any_seq(n)), dut.clear.eq(any_seq(1))]
    sv = Signal()
    beat = dut.schedule.payload
    m.d.comb += [sv.eq(any_seq(1)), dut.schedule.valid.eq(sv),
                 beat.as_value().eq(any_seq(len(beat.as_value())))]
    valid = Signal(n)
    for i in range(n):
        m.d.comb += [valid[i].eq(any_seq(1)), dut.rx[i].valid.eq(valid[i]),
                     dut.rx[i].tag.eq(any_seq(len(dut.rx[i].tag))),
                     dut.rx[i].data.eq(1 << i)]
    checks = {}
    tx_valid = Cat(*[dut.tx[j].valid for j in range(n)])
    tx_data = [dut.tx[j].data for j in range(n)]

    one_output = [sum((dut.tx[j].valid & tx_data[j][i] for j in range(n)), start=0) <= 1
                  for i in range(n)]
    one_word = [~dut.tx[j].valid | (sum((tx_data[j][i] for i in range(n)), start=0) <= 1)
                for j in range(n)]
    valid_q = Signal(n)
    accept_q = Signal()
    # the master acts on enable a cycle late: a slot runs in a cycle after one with a stack
    # loaded (it may run on while the first beat of the next frame is taken)
    entries_q = Signal.like(dut.entries)
    m.d.sync += [valid_q.eq(valid), entries_q.eq(dut.entries),
                 accept_q.eq((dut.phase >= G) & ~dut.config_error & (entries_q != 0))]
    only_valid = [~dut.tx[j].valid | ((tx_data[j] != 0) & ((tx_data[j] & ~valid_q) == 0))
                  for j in range(n)]
    in_guard = ~tx_valid.any() | accept_q

    # the frames as the harness sees them
    take = sv & dut.schedule.ready
    dests = [beat.dest[i] for i in range(n)]
    conn = beat.connected
    shared = Cat(*[conn[a] & conn[b] & (dests[a] == dests[b])
                   for a in range(n) for b in range(a + 1, n)]).any()
    stray = Cat(*[conn[i] & (dests[i] >= n) for i in range(n)]).any()
    in_frame, had_shared, had_stray = Signal(), Signal(), Signal()
    bad_shared, bad_stray = Signal(), Signal()    # the last complete frame was malformed
    # kept entries of this frame (weight != 0), saturating at depth + 1, and the overflow
    depth = params["depth"]
    kept, over = Signal(range(depth + 2)), Signal()
    kept_now = Signal(range(depth + 2))
    m.d.comb += kept_now.eq(Mux(in_frame, kept, 0))
    with m.If(take):
        m.d.sync += [in_frame.eq(~beat.last),
                     had_shared.eq((had_shared & in_frame) | shared),
                     had_stray.eq((had_stray & in_frame) | stray)]
        with m.If(~in_frame):          # a new frame discards the stack (a one-beat frame
            m.d.sync += [bad_shared.eq(0), bad_stray.eq(0), over.eq(0)]   # is judged below)
        with m.If(beat.last):
            m.d.sync += [bad_shared.eq((had_shared & in_frame) | shared),
                         bad_stray.eq((had_stray & in_frame) | stray)]
        with m.If(beat.weight.any()):
            with m.If(kept_now == depth):
                m.d.sync += [over.eq(1), kept.eq(depth)]
            with m.Else():
                m.d.sync += kept.eq(kept_now + 1)
        with m.Else():
            m.d.sync += kept.eq(kept_now)
    silent = ~tx_valid.any() & ~dut.sync
    shared_q, stray_q, shared_qq, stray_qq = Signal(), Signal(), Signal(), Signal()
    m.d.sync += [shared_q.eq(bad_shared), stray_q.eq(bad_stray),
                 shared_qq.eq(shared_q), stray_qq.eq(stray_q)]

    # the error flags from their definitions. late[i]: a word that arrived valid on input i
    # and left on no output (the harness sees where every word goes: its data bit i) sets it,
    # clear clears it (a word arriving in a clear cycle is not flagged)
    clear_q, late_h = Signal(), Signal(n)
    delivered = Cat(*[Cat(*[dut.tx[j].valid & tx_data[j][i] for j in range(n)]).any()
                      for i in range(n)])
    late_ref = Signal(n)
    m.d.comb += late_ref.eq(Mux(clear_q, 0, late_h | (valid_q & ~delivered)))
    m.d.sync += [clear_q.eq(dut.clear), late_h.eq(late_ref)]
    config_ref = (G >= T) | (T < 2)
    stack_ref = bad_shared | bad_stray
    for name, flag, ref in (("late", dut.late, late_ref),
                            ("config_error", dut.config_error, config_ref),
                            ("stack_error", dut.stack_error, stack_ref),
                            ("overflow", dut.overflow, over)):
        checks[f"{name}_rises"] = (ref & ~flag) == 0
        checks[f"{name}_only"] = (flag & ~ref) == 0
    checks.update({
        "one_output_per_word": Cat(*one_output).all(),
        "one_word_per_output": Cat(*one_word).all(),
        "only_valid_words": Cat(*only_valid).all(),
        "no_delivery_in_guard": in_guard,
        # from the second cycle after the flag is set: the master acts on enable a cycle
        # late, so the old stack's slot may run on in the cycle after the frame's last beat
        # came (a one-beat frame), and a word it took then leaves in the next
        "rejected_never_plays": ~(bad_shared & shared_q & shared_qq) | silent,
        "out_of_range_never_delivers": ~(bad_stray & stray_q & stray_qq) | silent,
    })
    return Harness(m, checks, [])


MUTANTS = {
    "one_output_per_word": ("pick[i].eq(ok[i] & self.route.sel[j][i])",
                            "pick[i].eq(ok[i] & (self.route.sel[j][i] | "
                            "self.route.sel[(j + 1) % n][i]))"),
    "one_word_per_output": ("two_or_more(m, [hit[i][j] for i in range(n)])", "0"),
    "only_valid_words": ("ok[i].eq(word.valid & self.accept", "ok[i].eq(self.accept"),
    "no_delivery_in_guard": ("| (phase_n[:TIME_BITS] >= self.guard))),", "| 1)),"),
    "rejected_never_plays": ("bad_frame.eq((in_frame & rejected) | malformed)",
                             "bad_frame.eq(malformed)"),
    "out_of_range_never_delivers": (
        "stray.eq(Cat(*[beat.connected[i] & ~Cat(*hit[i]).any() for i in range(n)]).any())",
        "stray.eq(0)"),
    "late_rises": ("m.d.sync += self.late[i].eq(1)", "m.d.sync += self.late[i].eq(i < n - 1)"),
    "late_only": ("with m.Elif(word.valid & ~ok[i]):", "with m.Elif(word.valid):"),
    "config_error_rises": ("bad.eq((self.guard >= self.period)", "bad.eq((self.guard > self.period)"),
    "config_error_only": ("~self.period[1:].any())", "~self.period[2:].any())"),
    "stack_error_rises": ("~Cat(*hit[i]).any() for i in range(n)]",
                          "~Cat(*hit[i]).any() for i in range(n - 1)]"),
    "stack_error_only": ("hit[i][j].eq(beat.connected[i] & eq_const(beat.dest[i], j))",
                         "hit[i][j].eq(eq_const(beat.dest[i], j))"),
    "overflow_rises": ("full.eq(eq_const(fill_now, depth))",
                       "full.eq(eq_const(fill_now, depth + 1))"),
    "overflow_only": ("full.eq(eq_const(fill_now, depth))",
                      "full.eq(eq_const(fill_now, depth - 1))"),
}
MUTANT_TEXT = {
    "one_output_per_word": "the crossbar also sends input i's word to the next output",
    "one_word_per_output": "the stack check misses an output named twice",
    "only_valid_words": "the crossbar passes words whatever their valid bit",
    "no_delivery_in_guard": "the crossbar accepts words in the guard time",
    "rejected_never_plays": "a malformed entry rejects its frame only when it is the last",
    "out_of_range_never_delivers": "the stack check misses a destination >= N",
    "late_rises": "the last input's dropped words do not set late",
    "late_only": "every arriving word sets late, delivered ones too",
    "config_error_rises": "G = T is taken for a good configuration",
    "config_error_only": "T = 2 and 3 are taken for bad configurations",
    "stack_error_rises": "the range check leaves out the last input",
    "stack_error_only": "an idle input's destination field counts in the duplicate check",
    "overflow_rises": "the stack is full one entry late (overflow never rises)",
    "overflow_only": "the stack is full one entry early (depth entries overflow)",
}


def _builder(name):
    def build_one(params, mutant):
        return build(params, MUTANTS[name] if mutant else None)
    return build_one


PROPERTIES = [
    Property("slot_switch", name, promise,
             # N = 3 and depth 3: 2-bit fields that hold values past the last output and
             # entry; the duplicate check's proof at depth 2 (at 3 it takes twenty times as
             # long, and the stack's depth is not in it)
             {"n": 3, "depth": 2 if name == "one_word_per_output" else 3, "hold_bits": 2,
              "t_max": 4},
             "bmc", 16, _builder(name), MUTANT_TEXT[name], mutant_depth=16, ci=ci)
    for name, promise, ci in (
        ("one_output_per_word", "a word leaves on at most one output", False),
        ("one_word_per_output", "no output carries two words", False),
        ("only_valid_words", "a delivered word arrived valid on its input", False),
        ("no_delivery_in_guard", "no word from the guard time or outside a slot is "
         "delivered", False),
        ("rejected_never_plays", "a stack rejected for a shared output never plays", True),
        ("out_of_range_never_delivers", "a stack naming an output >= N never plays", False),
        ("late_rises", "a word that arrives valid and leaves on no output sets late[i] in "
         "the next cycle (unless clear)", False),
        ("late_only", "late[i] rises only for such a word", False),
        ("config_error_rises", "config_error whenever G >= T or T < 2", False),
        ("config_error_only", "config_error only when G >= T or T < 2", False),
        ("stack_error_rises", "stack_error from the last beat of a frame with a malformed "
         "entry until the next frame starts", False),
        ("stack_error_only", "stack_error only after such a frame", False),
        ("overflow_rises", "overflow from a kept entry beyond depth until the next frame",
         False),
        ("overflow_only", "overflow only after more than depth kept entries", False),
    )
]
