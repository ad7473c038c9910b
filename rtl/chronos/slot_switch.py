"""The switch side of Chronos's time-slot synchronization: slot master, ping echo, schedule
stack and N x N scheduled crossbar (Chronos, NAIC'25, §6-§7). All times are clock cycles.

:class:`SlotSwitch` composes five sub-components, each usable on its own:

:class:`SlotMaster`
    Run-time ``period`` T and ``guard`` G. The master acts on ``enable``, T and G one cycle
    after they are applied (its ``start`` and ``accept`` flags are registers computed from
    them): with enable', T' and G' the values of the previous cycle, while enable' is high,
    the configuration T', G' is good (T' >= 2, G' < T') and a stack is loaded, slot 0 starts
    in the cycle after the first such cycle (two cycles after ``enable`` is first applied)
    and slot s + 1 starts the cycle after the first cycle of slot s whose phase is
    ``>= T' - 1`` (lowering T while running ends the current slot one cycle after the change
    instead of letting its phase run on). ``sync`` is high in phase 0 with ``sync_slot``, the
    slot number mod 2**TAG_BITS. ``config_error`` when G >= T or T < 2, combinational from T
    and G as applied; the slot stops in the cycle after (no slot while it stays).

:class:`PingEcho`
    ``echo[i]`` repeats ``ping[i]`` one cycle later (registered).

:class:`StackLoader`
    The schedule: up to ``depth`` entries (partial permutation, hold count), loaded through
    ``schedule``, a stream with the BvN engine's step layout (``weight`` = hold count, ``last``
    ends the stack), so the engine's output can be played directly. Loading is possible only
    while ``enable`` is low (``ready`` = not ``enable``). The first beat of a frame discards
    the stack held so far (``entries`` reads 0 until the frame ends). Every entry is checked:
    the connected inputs must name distinct outputs below N. One malformed entry rejects the
    whole frame: ``stack_error`` rises at its ``last`` beat, ``entries`` stays 0 and nothing
    of it is ever played; ``stack_error`` stays high until the next frame starts. An entry with
    hold 0 is checked and then dropped (it would last no slot); kept entries beyond ``depth``
    set ``overflow`` and the first ``depth`` are played.

:class:`Sequencer`
    Plays the stack: entry k is held for ``hold_k`` consecutive slots, the stack repeating.

:class:`Crossbar`
    N x N, D-bit words with a valid bit and a slot tag (:func:`~.slot_layout.word_layout`). A
    word arriving on input i in phase p >= G' (G of the cycle before) of slot s with tag
    s mod 2**TAG_BITS, while the slot's permutation connects i, leaves on output ``perm[i]``
    one cycle later (outputs are registered). Every other arriving word - in the guard time,
    with another slot's tag, or on an input the slot leaves idle - is dropped and sets
    ``late[i]`` (sticky until ``clear``): nothing is delivered during the guard time or to
    another output, and no output ever carries two words (the stack check guarantees
    distinct destinations).
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params, eq_const, or_tree, two_or_more
from .bvn import step_layout
from .slot_layout import TAG_BITS, TIME_BITS, out_layout, word_layout

__all__ = ["SlotSwitch", "SlotMaster", "PingEcho", "StackLoader", "Sequencer", "Crossbar",
           "perm_layout", "route_layout", "entry_layout"]


def perm_layout(n):
    """The permutation part of a stack entry: ``dest[i]`` is input i's output when
    ``connected[i]``."""
    return data.StructLayout({"dest": data.ArrayLayout(range(n), n), "connected": n})


def route_layout(n):
    """A permutation decoded for the crossbar: ``sel[j]`` holds the inputs routed to output j
    (one-hot or 0: the stack check guarantees distinct outputs), ``connected[i]`` says input i
    is routed."""
    return data.StructLayout({"sel": data.ArrayLayout(n, n), "connected": n})


def _stack_params(n, depth, hold_bits):
    """The (name, value, low, high) checks of the stack's parameters."""
    return [("n", n, 2, 64), ("depth", depth, 2, 1024), ("hold_bits", hold_bits, 1, 32)]


def entry_layout(n, hold_bits):
    """A stored stack entry: the permutation and ``rest``, the slots it is held after its
    first (hold count - 1: entries of hold 0 are not stored), so the sequencer loads its slot
    counter straight from the memory."""
    return data.StructLayout({"dest": data.ArrayLayout(range(n), n), "connected": n,
                              "rest": hold_bits})


class SlotMaster(wiring.Component):
    """Slot timeline. ``stack_ready``: a stack is loaded (no slot runs without one).
    ``start``: this clock edge starts a slot (``running`` says whether one was running).
    ``stopped``: no slot runs after this edge. ``accept``: the current cycle is in a slot,
    past the guard time. ``start``, ``stopped`` and ``accept`` are registers: each is computed
    a cycle ahead from this cycle's ``enable``, ``period`` and ``guard``, which is why those
    act one cycle after they are applied."""

    def __init__(self):
        super().__init__({
            "period": In(TIME_BITS), "guard": In(TIME_BITS), "enable": In(1),
            "stack_ready": In(1),
            "config_error": Out(1), "running": Out(1), "stopped": Out(1, init=1),
            "start": Out(1), "accept": Out(1),
            "sync": Out(1), "sync_slot": Out(TAG_BITS),
            "slot": Out(32), "phase": Out(TIME_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        bad, stopped_next, last_next = Signal(), Signal(), Signal()
        slot_p1 = Signal(32)
        # phase + 1 and phase + 2 kept in registers beside the phase (one bit wider: they
        # never wrap), so the next cycle's "phase >= T - 1" is "phase + 2 >= T" and its
        # "phase >= G" is "phase + 1 >= G", compares of registers with this cycle's inputs
        # and no adder after them
        phase_n = Signal(TIME_BITS + 1, init=1)
        phase_n2, phase_n2_p1 = Signal(TIME_BITS + 1, init=2), Signal(TIME_BITS + 1)
        m.d.comb += [
            bad.eq((self.guard >= self.period) | ~self.period[1:].any()),
            self.config_error.eq(bad),
            # A stack loads only while enable is low, and then the master stops at the next
            # edge anyway: this cycle's stack_ready stands for the next one's.
            stopped_next.eq(~self.enable | bad | ~self.stack_ready),
            # the next cycle ends its slot: it continues this one (no start now) and its
            # phase + 1 (this cycle's phase + 2) reaches T
            last_next.eq(~self.start & (phase_n2[TIME_BITS]
                                          | (phase_n2[:TIME_BITS] >= self.period))),
            phase_n2_p1.eq(phase_n2 + 1), slot_p1.eq(self.slot + 1),
            self.sync.eq(self.running & ~self.phase.any()),
            self.sync_slot.eq(self.slot[:TAG_BITS]),
        ]
        # running in the next cycle is "not stopped now" (a start follows any stopped cycle)
        m.d.sync += [
            self.stopped.eq(stopped_next),
            self.running.eq(~self.stopped),
            self.start.eq(~stopped_next & (self.stopped | last_next)),
            self.accept.eq(~self.stopped & Mux(self.start, ~self.guard.any(),
                                               phase_n[TIME_BITS]
                                               | (phase_n[:TIME_BITS] >= self.guard))),
        ]
        with m.If(self.stopped):
            m.d.sync += [self.phase.eq(0), self.slot.eq(0), phase_n.eq(1), phase_n2.eq(2)]
        with m.Elif(self.start):
            m.d.sync += [self.phase.eq(0), phase_n.eq(1), phase_n2.eq(2),
                         self.slot.eq(Mux(self.running, slot_p1, 0))]
        with m.Else():
            m.d.sync += [self.phase.eq(phase_n[:TIME_BITS]), phase_n.eq(phase_n2),
                         phase_n2.eq(phase_n2_p1)]
        return m


class PingEcho(wiring.Component):
    """``echo`` = ``ping`` one cycle later. Parameter: ``n`` 1..64 ports."""

    def __init__(self, *, n):
        check_params(self, [("n", n, 1, 64)])
        super().__init__({"ping": In(n), "echo": Out(n)})

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.echo.eq(self.ping)
        return m


class StackLoader(wiring.Component):
    """Stack memory with its checked loader and one read port (``rd_addr`` -> ``rd_data``,
    transparent: an entry written in the cycle before it is read is read correctly).

    Parameters (keyword-only): ``n`` 2..64, ``depth`` 2..1024, ``hold_bits`` 1..32.
    """

    def __init__(self, *, n, depth, hold_bits):
        check_params(self, _stack_params(n, depth, hold_bits))
        self.n, self.depth, self.hold_bits = n, depth, hold_bits
        super().__init__({
            "schedule": In(stream.Signature(step_layout(n, hold_bits))),
            "enable": In(1),
            "entries": Out(range(depth + 1)), "overflow": Out(1), "stack_error": Out(1),
            "rd_addr": In(range(depth)), "rd_data": Out(entry_layout(n, hold_bits)),
        })

    def elaborate(self, platform):
        m = Module()
        n, depth = self.n, self.depth
        m.submodules.mem = mem = memory.Memory(shape=entry_layout(n, self.hold_bits),
                                               depth=depth, init=[])
        wr = mem.write_port()
        rd = mem.read_port(transparent_for=(wr,))
        m.d.comb += [rd.addr.eq(self.rd_addr), self.rd_data.eq(rd.data)]

        beat = self.schedule.payload
        m.d.comb += self.schedule.ready.eq(~self.enable)
        take = Signal()
        m.d.comb += take.eq(self.schedule.valid & self.schedule.ready)

        # ---- entry check: connected inputs name distinct outputs < n ------------------------
        hit = [[Signal(name=f"hit{i}_{j}") for j in range(n)] for i in range(n)]
        for i in range(n):
            for j in range(n):
                m.d.comb += hit[i][j].eq(beat.connected[i] & eq_const(beat.dest[i], j))
        stray = Signal()    # a connected input names no output < n
        shared = Signal()   # an output named twice
        m.d.comb += [
            stray.eq(Cat(*[beat.connected[i] & ~Cat(*hit[i]).any() for i in range(n)]).any()),
            shared.eq(Cat(*[two_or_more(m, [hit[i][j] for i in range(n)])
                            for j in range(n)]).any()),
        ]
        malformed = Signal()
        m.d.comb += malformed.eq(stray | shared)

        # ---- frame: fill count, overflow, rejection -----------------------------------------
        in_frame = Signal()     # a frame has started and its last beat is still to come
        fill = Signal(range(depth + 1))       # entries written in this frame so far
        rejected = Signal()     # a malformed entry seen earlier in this frame
        fill_now, fill_next = Signal(range(depth + 1)), Signal(range(depth + 1))
        keep, full, bad_frame = Signal(), Signal(), Signal()
        weight_m1 = Signal(self.hold_bits)
        m.d.comb += [
            weight_m1.eq(beat.weight - 1),
            keep.eq(beat.weight.any()),
            fill_now.eq(Mux(in_frame, fill, 0)),
            full.eq(eq_const(fill_now, depth)),
            fill_next.eq(fill_now + (keep & ~full)),
            bad_frame.eq((in_frame & rejected) | malformed),
        ]
        with m.If(take):
            with m.If(keep & ~full):
                m.d.comb += [wr.addr.eq(fill_now), wr.en.eq(1),
                             wr.data.dest.eq(beat.dest), wr.data.connected.eq(beat.connected),
                             wr.data.rest.eq(weight_m1)]
            m.d.sync += [fill.eq(fill_next), rejected.eq(bad_frame), in_frame.eq(~beat.last)]
            with m.If(~in_frame):
                m.d.sync += [self.entries.eq(0), self.overflow.eq(0), self.stack_error.eq(0)]
            with m.If(keep & full):
                m.d.sync += self.overflow.eq(1)
            with m.If(beat.last):
                m.d.sync += [self.entries.eq(Mux(bad_frame, 0, fill_next)),
                             self.stack_error.eq(bad_frame)]
        return m


class Sequencer(wiring.Component):
    """Plays the stack slot by slot: ``route`` is the current slot's permutation, decoded
    into one-hot output selects as it is loaded (so the crossbar compares no fields).

    ``start``/``running``/``stopped`` come from :class:`SlotMaster`, ``entries`` from
    :class:`StackLoader`; ``rd_addr``/``rd_data`` go to the stack's read port.

    Parameters (keyword-only): ``n`` 2..64, ``depth`` 2..1024, ``hold_bits`` 1..32.
    """

    def __init__(self, *, n, depth, hold_bits):
        check_params(self, _stack_params(n, depth, hold_bits))
        self.n, self.depth, self.hold_bits = n, depth, hold_bits
        super().__init__({
            "start": In(1), "running": In(1), "stopped": In(1),
            "entries": In(range(depth + 1)),
            "rd_addr": Out(range(depth)), "rd_data": In(entry_layout(n, hold_bits)),
            "route": Out(route_layout(n)),
        })

    def elaborate(self, platform):
        m = Module()
        n, depth, hb = self.n, self.depth, self.hold_bits
        # the next entry's permutation as one-hot selects: dec[j] bit i = input i -> output j
        dec = [Signal(n, name=f"dec{j}") for j in range(n)]
        for j in range(n):
            m.d.comb += dec[j].eq(Cat(*[self.rd_data.connected[i]
                                        & eq_const(self.rd_data.dest[i], j)
                                        for i in range(n)]))
        nidx = Signal(range(depth))     # the entry the next new permutation comes from
        left = Signal(hb)               # slots left for the current entry after this one
        # The read address is the index nidx takes at this edge, so rd_data = stack[nidx]
        # in every cycle.
        nidx_next, nxt_idx = Signal(range(depth)), Signal(range(depth))
        nidx_p1 = Signal(range(depth + 1))
        left_m1 = Signal(hb)
        m.d.comb += [self.rd_addr.eq(nidx_next), nidx_next.eq(nidx),
                     nidx_p1.eq(nidx + 1),
                     nxt_idx.eq(Mux(nidx_p1 >= self.entries, 0, nidx_p1)),
                     left_m1.eq(left - 1)]
        m.d.sync += nidx.eq(nidx_next)
        with m.If(self.stopped):
            m.d.comb += nidx_next.eq(0)
            m.d.sync += [left.eq(0), self.route.eq(0)]
        with m.Elif(self.start):
            with m.If(self.running & left.any()):
                m.d.sync += left.eq(left_m1)
            with m.Else():
                m.d.comb += nidx_next.eq(nxt_idx)
                m.d.sync += [self.route.connected.eq(self.rd_data.connected),
                             left.eq(self.rd_data.rest)]
                m.d.sync += [self.route.sel[j].eq(dec[j]) for j in range(n)]
        return m


class Crossbar(wiring.Component):
    """N x N crossbar with registered outputs and per-input ``late`` flags. ``route``: the
    slot's permutation as one-hot output selects (:func:`route_layout`); ``accept``: the
    cycle is in a slot past its guard time; ``tag``: that slot's tag.

    Parameters (keyword-only): ``n`` 2..64, ``d`` 1..512.
    """

    def __init__(self, *, n, d):
        check_params(self, [("n", n, 2, 64), ("d", d, 1, 512)])
        self.n, self.d = n, d
        super().__init__({
            "route": In(route_layout(n)), "accept": In(1), "tag": In(TAG_BITS),
            "rx": In(data.ArrayLayout(word_layout(d), n)),
            "tx": Out(data.ArrayLayout(out_layout(d), n)),
            "late": Out(n), "clear": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n
        ok = Signal(n)
        for i in range(n):
            word = self.rx[i]
            m.d.comb += ok[i].eq(word.valid & self.accept & self.route.connected[i]
                                 & (word.tag == self.tag))
            with m.If(self.clear):
                m.d.sync += self.late[i].eq(0)
            with m.Elif(word.valid & ~ok[i]):
                m.d.sync += self.late[i].eq(1)
        for j in range(n):
            pick = [Signal(name=f"pick{i}_{j}") for i in range(n)]
            for i in range(n):
                m.d.comb += pick[i].eq(ok[i] & self.route.sel[j][i])
            m.d.sync += [
                self.tx[j].valid.eq(Cat(*pick).any()),
                self.tx[j].data.eq(or_tree(m, [Mux(pick[i], self.rx[i].data, 0)
                                                for i in range(n)], self.d)),
            ]
        return m


class SlotSwitch(wiring.Component):
    """Slot master, ping echo, checked schedule stack, sequencer and N x N crossbar.

    Parameters (keyword-only): ``n`` 2..64 ports, ``d`` 1..512 data bits, ``depth`` 2..1024
    stack entries, ``hold_bits`` 1..32 (width of a hold count).
    """

    def __init__(self, *, n, d, depth, hold_bits):
        check_params(self, [("d", d, 1, 512), *_stack_params(n, depth, hold_bits)])
        self.n, self.d, self.depth, self.hold_bits = n, d, depth, hold_bits
        super().__init__({
            "period": In(TIME_BITS), "guard": In(TIME_BITS), "enable": In(1),
            "config_error": Out(1),
            "sync": Out(1), "sync_slot": Out(TAG_BITS),
            "slot": Out(32), "phase": Out(TIME_BITS),
            "ping": In(n), "echo": Out(n),
            "schedule": In(stream.Signature(step_layout(n, hold_bits))),
            "entries": Out(range(depth + 1)), "overflow": Out(1), "stack_error": Out(1),
            "rx": In(data.ArrayLayout(word_layout(d), n)),
            "tx": Out(data.ArrayLayout(out_layout(d), n)),
            "late": Out(n), "clear": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        n, depth, hb = self.n, self.depth, self.hold_bits
        m.submodules.master = master = SlotMaster()
        m.submodules.echo = echo = PingEcho(n=n)
        m.submodules.stack = stack = StackLoader(n=n, depth=depth, hold_bits=hb)
        m.submodules.sequencer = seq = Sequencer(n=n, depth=depth, hold_bits=hb)
        m.submodules.crossbar = xbar = Crossbar(n=n, d=self.d)

        wiring.connect(m, wiring.flipped(self.schedule), stack.schedule)
        m.d.comb += [
            master.period.eq(self.period), master.guard.eq(self.guard),
            master.enable.eq(self.enable), master.stack_ready.eq(stack.entries.any()),
            self.config_error.eq(master.config_error),
            self.sync.eq(master.sync), self.sync_slot.eq(master.sync_slot),
            self.slot.eq(master.slot), self.phase.eq(master.phase),

            echo.ping.eq(self.ping), self.echo.eq(echo.echo),

            stack.enable.eq(self.enable), stack.rd_addr.eq(seq.rd_addr),
            self.entries.eq(stack.entries), self.overflow.eq(stack.overflow),
            self.stack_error.eq(stack.stack_error),

            seq.start.eq(master.start), seq.running.eq(master.running),
            seq.stopped.eq(master.stopped), seq.entries.eq(stack.entries),
            seq.rd_data.eq(stack.rd_data),

            xbar.route.eq(seq.route), xbar.accept.eq(master.accept),
            xbar.tag.eq(master.sync_slot), xbar.rx.eq(self.rx), xbar.clear.eq(self.clear),
            self.tx.eq(xbar.tx), self.late.eq(xbar.late),
        ]
        return m
