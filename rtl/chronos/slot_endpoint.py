"""The endpoint (NIC) side of Chronos's time-slot synchronization (NAIC'25, §6).

:class:`SlotEndpoint`
    After ``start`` it sends one ping and counts the cycles m until the echo: m = 2d + 1 for a
    link of d cycles each way. ``rtt`` reads 0 until the echo, m from the cycle after the echo
    arrives, and ``measured`` rises with it. The count saturates at 2**rtt_bits - 1: an echo
    that comes that many cycles or more after the ping reads 2**rtt_bits - 1 (never a
    wrapped value); an echo that never comes leaves the endpoint unmeasured (no window, no
    lock) until ``start`` falls and rises again, which sends a new ping.
    It follows ``sync`` with its own slot timer: the cycle a sync pulse arrives is phase 0 of slot
    ``sync_slot``; without a pulse the slot ends at the first cycle whose phase is >= T - 1
    (T as it is then) and the next is expected one cycle later. A missing pulse at an expected
    cycle sets ``missed`` (sticky until ``clear``) and the timer carries on alone. Changing T
    while running may set ``missed`` once (the endpoint applies the new T d cycles off the
    switch's timeline); the next pulse resynchronizes the timer.

    The send ``window`` opens at phase (G - m) mod T and stays open T - G cycles (T and G as
    they are at the opening): a word presented while it is open is launched on ``tx``
    (registered, one cycle) with the window's slot tag, and reaches the crossbar in phases
    G .. T-1 of that slot. The window belongs to the slot whose sync it follows when G >= m,
    to the next slot otherwise. ``rtt_error`` when ``rtt`` > T (no window can be placed); nothing is
    sent while G >= T or T < 2 (the switch's ``config_error``).

    ``window`` and ``window_tag`` are combinational from ``sync`` and ``sync_slot``: a pulse
    that arrives in the cycle the window opens (opening phase 0) opens it in that cycle with
    that slot's tag, which a registered output would show one cycle late. The path is short
    (the phase compares are made from the registers, T, G and m before the pulse selects one):
    sync -> select -> ``window`` -> ``tx`` (registered). In the fabric ``sync`` comes from a
    fibre register.
"""

from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params
from .slot_layout import TAG_BITS, TIME_BITS, word_layout

__all__ = ["SlotEndpoint"]


class SlotEndpoint(wiring.Component):
    """Endpoint slot timer with start-up ping, send window and missed-sync detection.

    Parameters (keyword-only): ``d`` 1..512 data bits, ``rtt_bits`` 1..16 (default 16): the
    round-trip counter's width (``rtt`` saturates at 2**rtt_bits - 1; the port stays
    TIME_BITS wide).
    """

    def __init__(self, *, d, rtt_bits=TIME_BITS):
        check_params(self, [("d", d, 1, 512), ("rtt_bits", rtt_bits, 1, TIME_BITS)])
        self.d, self.rtt_bits = d, rtt_bits
        super().__init__({
            "period": In(TIME_BITS), "guard": In(TIME_BITS), "start": In(1),
            "sync": In(1), "sync_slot": In(TAG_BITS),
            "ping": Out(1), "echo": In(1),
            "rtt": Out(TIME_BITS), "measured": Out(1), "rtt_error": Out(1),
            "locked": Out(1), "missed": Out(1), "clear": In(1),
            "window": Out(1), "window_tag": Out(TAG_BITS),
            "send_valid": In(1), "send_data": In(d),
            "tx": Out(word_layout(d)),
        })

    def elaborate(self, platform):
        m = Module()
        period, guard = self.period, self.guard

        # ---- round trip: one ping after start, count until the echo ------------------------
        pinged = Signal()
        counting = Signal()
        count = Signal(self.rtt_bits)
        count_p1 = Signal(self.rtt_bits)  # (one operation per named signal keeps -Wall quiet)
        m.d.comb += count_p1.eq(count + 1)
        with m.If(~self.start):
            m.d.sync += [pinged.eq(0), counting.eq(0), self.measured.eq(0), self.ping.eq(0),
                         self.rtt.eq(0)]
        with m.Elif(~pinged):
            m.d.sync += [pinged.eq(1), self.ping.eq(1), counting.eq(1), count.eq(0)]
        with m.Else():
            m.d.sync += self.ping.eq(0)
            with m.If(counting):
                with m.If(self.echo):
                    m.d.sync += [counting.eq(0), self.measured.eq(1), self.rtt.eq(count)]
                with m.Elif(~count.all()):
                    m.d.sync += count.eq(count_p1)
        m.d.comb += self.rtt_error.eq(self.measured & (self.rtt > period))
        bad = Signal()      # the switch's config_error condition: no slots run
        m.d.comb += bad.eq((guard >= period) | ~period[1:].any())

        # ---- slot timer --------------------------------------------------------------------
        # phase: this cycle's position in the slot (0 = the cycle a sync pulse is expected).
        cnt = Signal(TIME_BITS)          # phase of this cycle unless a sync pulse arrives
        own_slot = Signal(TAG_BITS)      # slot tag of the current slot
        phase = Signal(TIME_BITS)
        slot_now = Signal(TAG_BITS)
        expected = Signal()
        slot_p1, phase_p1, period_m1 = Signal(TAG_BITS), Signal(TIME_BITS), Signal(TIME_BITS)
        m.d.comb += [
            slot_p1.eq(own_slot + 1), phase_p1.eq(phase + 1), period_m1.eq(period - 1),
            expected.eq(self.locked & ~cnt.any()),
            phase.eq(Mux(self.sync, 0, cnt)),
            slot_now.eq(Mux(self.sync, self.sync_slot, Mux(expected, slot_p1, own_slot))),
        ]
        active = Signal()
        m.d.comb += active.eq(self.start & self.measured & ~self.rtt_error & ~bad)
        with m.If(~active):
            m.d.sync += [self.locked.eq(0), cnt.eq(0)]
        with m.Elif(self.sync | self.locked):
            m.d.sync += [self.locked.eq(1), own_slot.eq(slot_now),
                         cnt.eq(Mux(phase >= period_m1, 0, phase_p1))]
        with m.If(self.clear | ~self.start):
            m.d.sync += self.missed.eq(0)
        with m.Elif(active & expected & ~self.sync):
            m.d.sync += self.missed.eq(1)

        # ---- send window: T - G cycles from phase (G - m) mod T ----------------------------
        early = Signal()          # m > G: the window opens in the previous slot
        # The opening phase (G - m) mod T is G - m when m <= G, else T - (m - G) (at most T
        # while active: m <= T). Compared one bit wider without a subtraction: phase == G - m
        # as phase + m == G, phase == T + G - m as phase + m == T + G.
        reach, target = Signal(TIME_BITS + 1), Signal(TIME_BITS + 1)
        guard_w, late_target = Signal(TIME_BITS + 1), Signal(TIME_BITS + 1)
        m.d.comb += [early.eq(self.rtt > guard),
                     guard_w.eq(Cat(guard, C(0, 1))),
                     reach.eq(cnt + self.rtt), late_target.eq(period + guard),
                     target.eq(Mux(early, late_target, guard_w))]
        tag_open = Signal(TAG_BITS)   # the slot the opening window belongs to
        m.d.comb += tag_open.eq(slot_now + early)
        left = Signal(TIME_BITS)
        wtag = Signal(TAG_BITS)    # tag of the open window (after its first cycle)
        span = Signal(TIME_BITS)   # T - G, the window length
        span_m1, left_m1 = Signal(TIME_BITS), Signal(TIME_BITS)
        m.d.comb += [span.eq(period - guard), span_m1.eq(span - 1), left_m1.eq(left - 1)]
        # the compares ahead of the sync select (phase 0 when a pulse arrives): a pulse
        # reaches the window through two gates
        opening, hit_cnt, hit_zero = Signal(), Signal(), Signal()
        m.d.comb += [hit_cnt.eq(reach == target),
                     hit_zero.eq(~target[TIME_BITS] & (self.rtt == target[:TIME_BITS])),
                     opening.eq(active & (self.sync | self.locked)
                                & Mux(self.sync, hit_zero, hit_cnt))]
        with m.If(~active):
            m.d.sync += left.eq(0)
        with m.Elif(opening):
            m.d.sync += [left.eq(span_m1),
                         wtag.eq(tag_open)]
        with m.Elif(left.any()):
            m.d.sync += left.eq(left_m1)
        # The window is open from the opening cycle for T - G cycles.
        open_reg = Signal()
        with m.If(~active):
            m.d.sync += open_reg.eq(0)
        with m.Elif(opening):
            m.d.sync += open_reg.eq(span[1:].any())
        with m.Elif(~left[1:].any()):
            m.d.sync += open_reg.eq(0)
        m.d.comb += [self.window.eq(opening | (open_reg & active)),
                     self.window_tag.eq(Mux(opening, tag_open, wtag))]

        # ---- launch: registered, one cycle ------------------------------------------------
        m.d.sync += [self.tx.valid.eq(self.send_valid & self.window),
                     self.tx.tag.eq(self.window_tag), self.tx.data.eq(self.send_data)]
        return m
