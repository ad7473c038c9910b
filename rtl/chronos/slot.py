"""Time-slot synchronizer and scheduled circuit crossbar (Chronos, NAIC'25, §6-§7).

Three components, one clock; all times are in clock cycles.

:class:`SlotSwitch` - the switch side
    *Slot master*: run-time ``period`` T and ``guard`` G; while ``enable`` is high it starts a
    slot every T cycles and drives ``sync`` (one cycle, phase 0) with ``sync_slot``, the slot
    number mod 2**TAG. ``config_error`` (and no slot) when G >= T or T < 2.
    *Ping echo*: ``echo[i]`` repeats ``ping[i]`` one cycle later (registered).
    *Schedule sequencer*: a stack of up to ``depth`` entries (permutation, hold count) played in
    order, entry k held for ``hold_k`` consecutive slots, the stack repeating. Loaded through
    ``schedule``, a stream with the BvN engine's step layout (``weight`` = hold count, ``last``
    ends the stack), so the engine's output can be played directly. An entry with hold 0 is
    dropped at load (it would last no slot); entries beyond ``depth`` set ``overflow``. Loading
    is possible only while ``enable`` is low.
    *Crossbar*: N x N, D-bit words with a valid bit and a TAG-bit slot tag. A word arriving on
    input i in phase p >= G of slot s with tag s mod 2**TAG, while the slot's permutation
    connects i, leaves on output ``perm[i]`` one cycle later (outputs are registered). Every
    other arriving word - in the guard time, with another slot's tag, or on an input the slot
    leaves idle - is dropped and sets ``late[i]`` (sticky until ``clear``); nothing is ever
    delivered during the guard time or to another output.

:class:`SlotEndpoint` - the NIC side
    After ``start`` it sends one ping and counts the cycles m until the echo: m = 2d + 1 for a
    link of d cycles each way (``rtt`` = m). It follows ``sync`` with its own slot timer and
    opens a send ``window`` of T - G cycles that begins m - G cycles before it expects the
    sync of the slot (equivalently G - m after it when G > m): a word presented while the
    window is open is launched (registered, one cycle) with the window's slot tag and reaches
    the crossbar in phases G .. T-1 of that slot. A missing sync pulse at the expected cycle
    sets ``missed`` (sticky) and the timer carries on alone; a sync pulse resynchronizes it.
    ``rtt_error`` when m > T (the window cannot be placed).

:class:`SlotFabric` - a test fabric
    One switch and N endpoints joined by fibres of run-time delay ``delay[i]`` cycles (1..64;
    each direction), with ``sync_drop[i]`` to suppress the sync pulses on a fibre. It is the
    co-simulation top of the two blocks above and synthesizes, but the delay lines model fibre.
"""

from amaranth.hdl import Cat, Module, Mux, Shape, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ._util import check_param, eq_const, or_tree
from .bvn import step_layout

__all__ = ["SlotSwitch", "SlotEndpoint", "SlotFabric", "word_layout", "TIME_BITS", "TAG_BITS",
           "ECHO_LATENCY", "MAX_DELAY"]

TIME_BITS = 16     # period, guard and phase counters
TAG_BITS = 2       # slot tag carried by sync pulses and data words
ECHO_LATENCY = 1   # the switch answers a ping one cycle after it arrives
MAX_DELAY = 64     # the test fabric's longest fibre, cycles


def word_layout(d):
    return data.StructLayout({"valid": 1, "tag": TAG_BITS, "data": d})


class _Checked(wiring.Component):
    def _validate(self, checks):
        try:
            for check in checks:
                check_param(*check)
        except (TypeError, ValueError):
            self._MustUse__silence = True
            raise


class SlotSwitch(_Checked):
    """Slot master, ping echo, schedule sequencer and N x N crossbar.

    Parameters (keyword-only): ``n`` 2..64 ports, ``d`` 1..512 data bits, ``depth`` 2..1024
    stack entries, ``hold_bits`` 1..32 (width of a hold count).
    """

    def __init__(self, *, n, d, depth, hold_bits):
        self._validate([("n", n, 2, 64), ("d", d, 1, 512), ("depth", depth, 2, 1024),
                        ("hold_bits", hold_bits, 1, 32)])
        self.n, self.d, self.depth, self.hold_bits = n, d, depth, hold_bits
        super().__init__({
            "period": In(TIME_BITS), "guard": In(TIME_BITS), "enable": In(1),
            "config_error": Out(1),
            "sync": Out(1), "sync_slot": Out(TAG_BITS),
            "slot": Out(32), "phase": Out(TIME_BITS),
            "ping": In(n), "echo": Out(n),
            "schedule": In(stream.Signature(step_layout(n, hold_bits))),
            "entries": Out(range(depth + 1)), "overflow": Out(1),
            "rx": In(data.ArrayLayout(word_layout(d), n)),
            "tx": Out(data.ArrayLayout(data.StructLayout({"valid": 1, "data": d}), n)),
            "late": Out(n), "clear": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        n, depth = self.n, self.depth
        entry = step_layout(n, self.hold_bits)
        m.submodules.stack = stack = memory.Memory(shape=entry, depth=depth, init=[])
        wr = stack.write_port()
        # Transparent: a stack loaded in the cycle before enable is read correctly.
        rd = stack.read_port(transparent_for=(wr,))

        # ---- slot master -------------------------------------------------------------------
        running = Signal()
        bad = Signal()
        m.d.comb += [bad.eq((self.guard >= self.period) | ~self.period[1:].any()),
                     self.config_error.eq(bad)]
        boundary = Signal()     # this edge starts a new slot
        last_phase = Signal()
        period_m1 = Signal(TIME_BITS)
        m.d.comb += [period_m1.eq(self.period - 1),
                     last_phase.eq(self.phase == period_m1),
                     boundary.eq(self.enable & ~bad & (~running | last_phase)
                                 & self.entries.any())]
        slot_p1, phase_p1 = Signal(32), Signal(TIME_BITS)
        m.d.comb += [slot_p1.eq(self.slot + 1), phase_p1.eq(self.phase + 1)]
        with m.If(~self.enable | bad | ~self.entries.any()):
            m.d.sync += [running.eq(0), self.phase.eq(0), self.slot.eq(0)]
        with m.Elif(boundary):
            m.d.sync += [running.eq(1), self.phase.eq(0),
                         self.slot.eq(Mux(running, slot_p1, 0))]
        with m.Else():
            m.d.sync += self.phase.eq(phase_p1)
        m.d.comb += [self.sync.eq(running & ~self.phase.any()),
                     self.sync_slot.eq(self.slot[:TAG_BITS])]

        m.d.sync += self.echo.eq(self.ping)

        # ---- loading the stack (only while disabled) ---------------------------------------
        m.d.comb += self.schedule.ready.eq(~self.enable)
        loading = Signal()      # inside a stack frame
        keep = Signal()         # a nonzero hold count: the entry is stored
        fill = Signal(range(depth + 1))
        fill_next = Signal(range(depth + 1))
        full = Signal()
        m.d.comb += [keep.eq(self.schedule.payload.weight.any()),
                     fill.eq(Mux(loading, self.entries, 0)),
                     full.eq(eq_const(fill, depth)),
                     fill_next.eq(fill + (keep & ~full))]
        with m.If(self.schedule.valid & self.schedule.ready):
            with m.If(keep & ~full):
                m.d.comb += [wr.addr.eq(fill), wr.data.eq(self.schedule.payload), wr.en.eq(1)]
            m.d.sync += [self.entries.eq(fill_next),
                         loading.eq(~self.schedule.payload.last)]
            with m.If(~loading):
                m.d.sync += self.overflow.eq(0)
            with m.If(keep & full):
                m.d.sync += self.overflow.eq(1)

        # ---- sequencer: entry index, hold left, next entry prefetched ----------------------
        nidx = Signal(range(depth))     # the entry the next new permutation comes from
        left = Signal(self.hold_bits)   # slots left for the current entry after this one
        cur = Signal(entry)
        # The read address is the index nidx takes at this edge, so rd.data = stack[nidx]
        # in every cycle.
        nidx_next = Signal(range(depth))
        m.d.comb += [rd.addr.eq(nidx_next), nidx_next.eq(nidx)]
        stopped = Signal()
        m.d.comb += stopped.eq(~self.enable | bad | ~self.entries.any())
        nxt_idx, nidx_p1 = Signal(range(depth)), Signal(range(depth + 1))
        left_m1, hold_m1 = Signal(self.hold_bits), Signal(self.hold_bits)
        m.d.comb += [nidx_p1.eq(nidx + 1),
                     nxt_idx.eq(Mux(nidx_p1 >= self.entries, 0, nidx_p1)),
                     left_m1.eq(left - 1), hold_m1.eq(rd.data.weight - 1)]
        m.d.sync += nidx.eq(nidx_next)
        with m.If(stopped):
            m.d.comb += nidx_next.eq(0)
            m.d.sync += [left.eq(0), cur.eq(0)]
        with m.Elif(boundary):
            with m.If(running & left.any()):
                m.d.sync += left.eq(left_m1)
            with m.Else():
                m.d.comb += nidx_next.eq(nxt_idx)
                m.d.sync += [cur.eq(rd.data), left.eq(hold_m1)]

        # ---- crossbar ----------------------------------------------------------------------
        in_window = Signal()
        m.d.comb += in_window.eq(running & (self.phase >= self.guard))
        ok = Signal(n)
        for i in range(n):
            word = self.rx[i]
            m.d.comb += ok[i].eq(word.valid & in_window & cur.connected[i]
                                 & (word.tag == self.slot[:TAG_BITS]))
            with m.If(self.clear):
                m.d.sync += self.late[i].eq(0)
            with m.Elif(word.valid & ~ok[i]):
                m.d.sync += self.late[i].eq(1)
        for j in range(n):
            pick = [Signal(name=f"pick{i}_{j}") for i in range(n)]
            for i in range(n):
                m.d.comb += pick[i].eq(ok[i] & eq_const(cur.dest[i], j))
            m.d.sync += [
                self.tx[j].valid.eq(Cat(*pick).any()),
                self.tx[j].data.eq(or_tree(m, [Mux(pick[i], self.rx[i].data, 0)
                                                for i in range(n)], self.d)),
            ]
        return m


class SlotEndpoint(_Checked):
    """Endpoint slot timer with start-up ping, send window and missed-sync detection.

    Parameters (keyword-only): ``d`` 1..512 data bits.
    """

    def __init__(self, *, d):
        self._validate([("d", d, 1, 512)])
        self.d = d
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
        count = Signal(TIME_BITS)
        count_p1 = Signal(TIME_BITS)   # (one operation per named signal keeps -Wall quiet)
        m.d.comb += count_p1.eq(count + 1)
        with m.If(~self.start):
            m.d.sync += [pinged.eq(0), counting.eq(0), self.measured.eq(0), self.ping.eq(0)]
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
        m.d.comb += active.eq(self.start & self.measured & ~self.rtt_error)
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
        opens_at = Signal(TIME_BITS)
        p_plus_g, late_open, same_open = Signal(TIME_BITS), Signal(TIME_BITS), Signal(TIME_BITS)
        m.d.comb += [early.eq(self.rtt > guard),
                     p_plus_g.eq(period + guard),
                     late_open.eq(p_plus_g - self.rtt),
                     same_open.eq(guard - self.rtt),
                     opens_at.eq(Mux(early, late_open, same_open))]
        tag_open = Signal(TAG_BITS)   # the slot the opening window belongs to
        m.d.comb += tag_open.eq(slot_now + early)
        left = Signal(TIME_BITS)
        wtag = Signal(TAG_BITS)    # tag of the open window (after its first cycle)
        span = Signal(TIME_BITS)   # T - G, the window length
        span_m1, left_m1 = Signal(TIME_BITS), Signal(TIME_BITS)
        m.d.comb += [span.eq(period - guard), span_m1.eq(span - 1), left_m1.eq(left - 1)]
        opening = Signal()
        m.d.comb += opening.eq(active & (self.sync | self.locked) & (phase == opens_at))
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
        m.d.comb += [self.window.eq(opening | open_reg),
                     self.window_tag.eq(Mux(opening, tag_open, wtag))]

        # ---- launch: registered, one cycle ------------------------------------------------
        m.d.sync += [self.tx.valid.eq(self.send_valid & self.window),
                     self.tx.tag.eq(self.window_tag), self.tx.data.eq(self.send_data)]
        return m


class SlotFabric(_Checked):
    """Test fabric: a :class:`SlotSwitch` and N :class:`SlotEndpoint` joined by fibres of
    run-time delay (``delay[i]``, 1..64 cycles each way).

    Parameters (keyword-only): ``n`` 2..16, ``d`` 1..64, ``depth`` 2..256, ``hold_bits`` 1..16.
    """

    def __init__(self, *, n, d, depth, hold_bits):
        self._validate([("n", n, 2, 16), ("d", d, 1, 64), ("depth", depth, 2, 256),
                        ("hold_bits", hold_bits, 1, 16)])
        self.n, self.d, self.depth, self.hold_bits = n, d, depth, hold_bits
        delay_bits = Shape.cast(range(MAX_DELAY + 1)).width
        super().__init__({
            "period": In(TIME_BITS), "guard": In(TIME_BITS), "enable": In(1),
            "start": In(n), "clear": In(1),
            "delay": In(data.ArrayLayout(delay_bits, n)), "sync_drop": In(n),
            "schedule": In(stream.Signature(step_layout(n, hold_bits))),
            "send_valid": In(n), "send_data": In(data.ArrayLayout(d, n)),
            "window": Out(n), "window_tag": Out(data.ArrayLayout(TAG_BITS, n)),
            "tx": Out(data.ArrayLayout(data.StructLayout({"valid": 1, "data": d}), n)),
            "late": Out(n), "missed": Out(n), "locked": Out(n), "rtt_error": Out(n),
            "rtt": Out(data.ArrayLayout(TIME_BITS, n)),
            "config_error": Out(1), "slot": Out(32), "phase": Out(TIME_BITS),
            "entries": Out(range(depth + 1)), "overflow": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n
        m.submodules.switch = sw = SlotSwitch(n=n, d=self.d, depth=self.depth,
                                              hold_bits=self.hold_bits)
        wiring.connect(m, wiring.flipped(self.schedule), sw.schedule)
        m.d.comb += [sw.period.eq(self.period), sw.guard.eq(self.guard),
                     sw.enable.eq(self.enable), sw.clear.eq(self.clear),
                     self.config_error.eq(sw.config_error), self.slot.eq(sw.slot),
                     self.phase.eq(sw.phase), self.entries.eq(sw.entries),
                     self.overflow.eq(sw.overflow), self.tx.eq(sw.tx), self.late.eq(sw.late)]
        for i in range(n):
            ep = SlotEndpoint(d=self.d)
            m.submodules[f"ep{i}"] = ep
            delay = self.delay[i]
            down = Cat(sw.sync & ~self.sync_drop[i], sw.sync_slot, sw.echo[i])
            down_i = _fibre(m, down, delay, f"down{i}")
            sync_i, slot_i, echo_i = down_i[0], down_i[1:1 + TAG_BITS], down_i[1 + TAG_BITS]
            up = _fibre(m, Cat(ep.ping, ep.tx.as_value()), delay, f"up{i}")
            m.d.comb += [
                ep.period.eq(self.period), ep.guard.eq(self.guard), ep.start.eq(self.start[i]),
                ep.clear.eq(self.clear),
                ep.sync.eq(sync_i),
                ep.sync_slot.eq(slot_i), ep.echo.eq(echo_i),
                sw.ping[i].eq(up[0]), sw.rx[i].eq(up[1:]),
                ep.send_valid.eq(self.send_valid[i]), ep.send_data.eq(self.send_data[i]),
                self.window[i].eq(ep.window), self.window_tag[i].eq(ep.window_tag),
                self.missed[i].eq(ep.missed), self.locked[i].eq(ep.locked),
                self.rtt_error[i].eq(ep.rtt_error), self.rtt[i].eq(ep.rtt),
            ]
        return m


def _fibre(m, value, delay, name):
    """``value`` delayed by ``delay`` (1..MAX_DELAY) cycles: a shift register and a tap."""
    stages = []
    prev = value
    for k in range(MAX_DELAY):
        s = Signal(len(value), name=f"{name}_d{k + 1}")
        m.d.sync += s.eq(prev)
        stages.append(s)
        prev = s
    out = Signal(len(value), name=f"{name}_out")
    # delay 0 behaves as 1
    m.d.comb += out.eq(or_tree(m, [Mux(eq_const(delay, k + 1) | (k == 0 and ~delay.any()),
                                         stages[k], 0) for k in range(MAX_DELAY)], len(value)))
    return out
