"""Formal harness of the endpoint slot timer (:mod:`rtl.chronos.slot_endpoint`).

Promise, from the block's docstring: the send ``window`` opens at phase (G - m) mod T and stays
open T - G cycles, so it is open only at phases (G - m + k) mod T, k < T - G: the words it
launches reach the crossbar inside the slot's [G, T). The phase is the docstring's timer, kept
by the harness: 0 in the cycle a sync pulse arrives, else one more than the cycle before, back
to 0 after a cycle whose phase is >= T - 1. A launched word (``tx.valid``) follows an open
window.

The round trip, against the harness's own count m from the ping to the first echo:
``rtt`` reads 0 until the echo, then min(m, 2**rtt_bits - 1) - at a width the bounded check
reaches (3 bits: the count saturates 7 cycles after the ping), so an echo later than that
(or never) is in the proof: the count saturates and never wraps.

The flags in both directions, each against the harness's own reading: ``rtt_error`` exactly
while that round trip exceeds T; ``missed``
exactly after a cycle where a pulse was expected (locked, phase 0 of the timer) and none came,
sticky until ``clear`` or ``start`` falls. ``locked`` (the ready output) only while started
and measured, after a sync pulse.

Environment: T and G are constant (the docstring allows a change of T to upset one slot);
sync pulses come only at expected cycles (phase 0 of the timer) or as the first pulse, and may
be missing; ``start``, ``echo``, ``clear``, ``send_*`` and the slot numbers are free.
"""

from amaranth.hdl import Assume, Module, Mux, Signal

from . import Harness, Property, any_const, any_seq, block_module, elaborate

MODULE = "aifabric.rtl.chronos.slot_endpoint"
TB = 16


def build(params, mutant_spec=None):
    mod = block_module(MODULE, mutant_spec)
    dut = mod.SlotEndpoint(d=params["d"], rtt_bits=params["rtt_bits"])
    frag = elaborate(dut)
    m = Module()
    m.submodules.dut = frag
    T, G = Signal(TB), Signal(TB)
    m.d.comb += [T.eq(any_const(TB)), G.eq(any_const(TB))]
    m.d.comb += Assume(T <= params["t_max"])
    sync = Signal()
    m.d.comb += [
        dut.period.eq(T), dut.guard.eq(G), dut.start.eq(any_seq(1)), sync.eq(any_seq(1)),
        dut.sync.eq(sync), dut.sync_slot.eq(any_seq(len(dut.sync_slot))),
        dut.echo.eq(any_seq(1)), dut.clear.eq(any_seq(1)), dut.send_valid.eq(any_seq(1)),
        dut.send_data.eq(any_seq(params["d"])),
    ]
    # the docstring's timer
    seen = Signal()               # a sync pulse has arrived
    cnt = Signal(TB)              # this cycle's phase unless a pulse arrives
    phase = Signal(TB)
    m.d.comb += phase.eq(Mux(sync, 0, cnt))
    m.d.sync += cnt.eq(Mux(phase >= T - 1, 0, phase + 1))
    with m.If(sync):
        m.d.sync += seen.eq(1)
    m.d.comb += Assume(~sync | ~seen | (cnt == 0))
    # offset of this cycle from the opening phase (G - m) mod T, in 0..T-1
    rtt = dut.rtt
    off = Signal(TB + 2)
    raw = Signal(TB + 2)
    m.d.comb += raw.eq(phase + rtt + T - G)
    m.d.comb += off.eq(Mux(raw >= 2 * T, raw - 2 * T, Mux(raw >= T, raw - T, raw)))
    in_window = (seen | sync) & (G < T) & (rtt <= T) & (off < T - G)
    win_q = Signal()
    m.d.sync += win_q.eq(dut.window & dut.send_valid)
    checks = {
        "window_in_slot": ~dut.window | in_window,
        "tx_only_in_window": ~dut.tx.valid | win_q,
    }

    # the round trip as the docstring defines it: one ping in the cycle after start is first
    # seen high, m = the cycles from that ping to the first echo; everything over when start
    # falls
    start = dut.start
    pinged, counting, measured = Signal(), Signal(), Signal()
    m_h = Signal(TB)
    with m.If(~start):
        m.d.sync += [pinged.eq(0), counting.eq(0), measured.eq(0)]
    with m.Elif(~pinged):
        m.d.sync += [pinged.eq(1), counting.eq(1), m_h.eq(0)]
    with m.Elif(counting & dut.echo):
        m.d.sync += [counting.eq(0), measured.eq(1)]
    with m.Elif(counting):
        m.d.sync += m_h.eq(m_h + 1)
    top = (1 << params["rtt_bits"]) - 1
    rtt_ref = Signal(TB)
    m.d.comb += rtt_ref.eq(Mux(measured, Mux(m_h >= top, top, m_h), 0))
    rtt_error_ref = measured & (rtt_ref > T)
    # missed: a cycle where a pulse is expected (locked, phase 0 of the timer) without one,
    # while the endpoint runs (started, measured, no rtt_error, G < T, T >= 2); sticky until
    # clear or start falls
    active = start & measured & ~rtt_error_ref & (G < T) & (T >= 2)
    missed_h = Signal()
    missed_ref = Signal()
    clear_q, start_q, miss_q = Signal(), Signal(), Signal()
    m.d.sync += [clear_q.eq(dut.clear), start_q.eq(start),
                 miss_q.eq(active & dut.locked & seen & (cnt == 0) & ~sync),
                 missed_h.eq(missed_ref)]
    m.d.comb += missed_ref.eq(Mux(clear_q | ~start_q, 0, missed_h | miss_q))
    checks.update({
        "rtt_saturates": dut.rtt == rtt_ref,
        "rtt_error_rises": ~rtt_error_ref | dut.rtt_error,
        "rtt_error_only": ~dut.rtt_error | rtt_error_ref,
        "missed_rises": ~missed_ref | dut.missed,
        "missed_only": ~dut.missed | missed_ref,
        # locked (a ready output): only while the endpoint runs and after a sync pulse came
        "locked_only_when_synced": ~dut.locked | (seen & start_q & measured),
    })
    return Harness(m, checks, [])


MUTANTS = {
    "rtt_saturates": ("with m.Elif(~count.all()):", "with m.Else():"),
    "window_in_slot": ("span.eq(period - guard)", "span.eq(period - guard + 1)"),
    "tx_only_in_window": ("self.tx.valid.eq(self.send_valid & self.window)",
                          "self.tx.valid.eq(self.send_valid)"),
    "rtt_error_rises": ("(self.rtt > period)", "(self.rtt > period + 1)"),
    "rtt_error_only": ("(self.rtt > period)", "(self.rtt >= period)"),
    "missed_rises": ("with m.If(self.clear | ~self.start):",
                     "with m.If(self.clear | ~self.start | self.sync):"),
    "missed_only": ("expected.eq(self.locked & ~cnt.any())",
                    "expected.eq(self.locked & ~cnt[1:].any())"),
    "locked_only_when_synced": ("with m.Elif(self.sync | self.locked):",
                                "with m.Elif(self.sync | self.locked | self.measured):"),
}
MUTANT_TEXT = {
    "rtt_saturates": "the round-trip count wraps at 2**rtt_bits instead of saturating",
    "window_in_slot": "the window stays open T - G + 1 cycles",
    "tx_only_in_window": "a word is launched whether the window is open or not",
    "rtt_error_rises": "rtt_error only from T + 2 (m = T + 1 passes)",
    "rtt_error_only": "rtt_error already at m = T",
    "missed_rises": "every sync pulse clears missed (not sticky)",
    "missed_only": "a pulse is also expected at phase 1",
    "locked_only_when_synced": "the endpoint locks once measured, without a sync pulse",
}


def _builder(name):
    def build_one(p, mutant):
        return build(p, MUTANTS[name] if mutant else None)
    return build_one


PROPERTIES = [
    Property("slot_endpoint", name, promise, params, "bmc", depth,
             _builder(name), MUTANT_TEXT[name], mutant_depth=depth, ci=ci)
    # T up to 8 passes the 3-bit count's top (7): a saturated round trip of T or less
    for params in ({"d": 1, "t_max": 8, "rtt_bits": 3},)
    for name, promise, depth, ci in (
        ("window_in_slot", "the send window is open only at phases (G - m + k) mod T, "
         "k < T - G (words reach the crossbar in [G, T))", 24, True),
        ("tx_only_in_window", "a word is launched only from an open window", 24, False),
        ("rtt_saturates", "rtt reads 0 until the echo, then the round trip m, saturating at "
         "2**rtt_bits - 1 (an echo after the count's top reads the top, never a wrap)", 24,
         False),
        ("rtt_error_rises", "rtt_error whenever the round trip rtt reads > T", 16, False),
        ("rtt_error_only", "rtt_error only when rtt > T", 16, False),
        ("missed_rises", "a pulse missing at an expected cycle sets missed in the next "
         "cycle, sticky until clear", 24, False),
        ("missed_only", "missed rises only for a missing pulse", 24, False),
        ("locked_only_when_synced", "locked only while started and measured, after a sync "
         "pulse", 24, False),
    )
]
