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
  nothing is delivered and no slot runs until the next frame starts;
- ``out_of_range_never_delivers``: likewise after a frame in which a connected input names
  an output >= N.

Environment: T <= ``t_max`` and G constant; everything else free. Bounded model check.
"""

from amaranth.hdl import Assume, Cat, Module, Signal

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
    tx_valid = Cat(*[dut.tx[j].valid for j in range(n)])
    tx_data = [dut.tx[j].data for j in range(n)]

    one_output = [sum((dut.tx[j].valid & tx_data[j][i] for j in range(n)), start=0) <= 1
                  for i in range(n)]
    one_word = [~dut.tx[j].valid | (sum((tx_data[j][i] for i in range(n)), start=0) <= 1)
                for j in range(n)]
    valid_q = Signal(n)
    accept_q = Signal()
    m.d.sync += [valid_q.eq(valid),
                 accept_q.eq((dut.phase >= G) & ~dut.config_error & (dut.entries != 0))]
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
    with m.If(take):
        m.d.sync += [in_frame.eq(~beat.last),
                     had_shared.eq((had_shared & in_frame) | shared),
                     had_stray.eq((had_stray & in_frame) | stray)]
        with m.If(beat.last):
            m.d.sync += [bad_shared.eq((had_shared & in_frame) | shared),
                         bad_stray.eq((had_stray & in_frame) | stray)]
        with m.If(~in_frame):          # a new frame discards the stack
            m.d.sync += [bad_shared.eq(0), bad_stray.eq(0)]
    silent = ~tx_valid.any() & ~dut.sync
    checks = {
        "one_output_per_word": Cat(*one_output).all(),
        "one_word_per_output": Cat(*one_word).all(),
        "only_valid_words": Cat(*only_valid).all(),
        "no_delivery_in_guard": in_guard,
        "rejected_never_plays": ~bad_shared | silent,
        "out_of_range_never_delivers": ~bad_stray | silent,
    }
    return Harness(m, checks, [])


MUTANTS = {
    "one_output_per_word": ("pick[i].eq(ok[i] & eq_const(self.perm.dest[i], j))",
                            "pick[i].eq(ok[i] & (eq_const(self.perm.dest[i], j) | "
                            "eq_const(self.perm.dest[i], (j + 1) % n)))"),
    "one_word_per_output": ("two_or_more(m, [hit[i][j] for i in range(n)])", "0"),
    "only_valid_words": ("ok[i].eq(word.valid & self.accept", "ok[i].eq(self.accept"),
    "no_delivery_in_guard": ("self.accept.eq(self.running & (self.phase >= self.guard))",
                             "self.accept.eq(self.running)"),
    "rejected_never_plays": ("bad_frame.eq((in_frame & rejected) | malformed)",
                             "bad_frame.eq(malformed)"),
    "out_of_range_never_delivers": (
        "stray.eq(Cat(*[beat.connected[i] & ~Cat(*hit[i]).any() for i in range(n)]).any())",
        "stray.eq(0)"),
}
MUTANT_TEXT = {
    "one_output_per_word": "the crossbar also sends input i's word to the next output",
    "one_word_per_output": "the stack check misses an output named twice",
    "only_valid_words": "the crossbar passes words whatever their valid bit",
    "no_delivery_in_guard": "the crossbar accepts words in the guard time",
    "rejected_never_plays": "a malformed entry rejects its frame only when it is the last",
    "out_of_range_never_delivers": "the stack check misses a destination >= N",
}


def _builder(name):
    def build_one(params, mutant):
        return build(params, MUTANTS[name] if mutant else None)
    return build_one


PROPERTIES = [
    Property("slot_switch", name, promise, params, "bmc", 16, _builder(name), MUTANT_TEXT[name],
             mutant_depth=16, ci=ci)
    for params in ({"n": 3, "depth": 2, "hold_bits": 2, "t_max": 4},)
    for name, promise, ci in (
        ("one_output_per_word", "a word leaves on at most one output", False),
        ("one_word_per_output", "no output carries two words", False),
        ("only_valid_words", "a delivered word arrived valid on its input", False),
        ("no_delivery_in_guard", "no word from the guard time or outside a slot is "
         "delivered", False),
        ("rejected_never_plays", "a stack rejected for a shared output never plays", True),
        ("out_of_range_never_delivers", "a stack naming an output >= N never plays", False),
    )
]
