"""A test fabric for the slot blocks: one :class:`~.slot_switch.SlotSwitch` and N
:class:`~.slot_endpoint.SlotEndpoint` blocks joined by fibres of run-time delay ``delay[i]``
cycles (1..64 each way; 0 acts as 1 and anything above 64 as 64), with ``sync_drop[i]`` to
suppress the sync pulses on a fibre and ``echo_drop[i]`` its echoes (a lost echo).

It is the co-simulation top of the two blocks and synthesizes, but the delay lines model
fibre. ``launch[i]`` is endpoint i's word as it enters its fibre (the endpoint's ``tx``), so a
testbench can follow every word from launch to delivery.
"""

from amaranth.hdl import Cat, Module, Mux, Shape, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params, eq_const, or_tree
from .bvn import step_layout
from .slot_endpoint import SlotEndpoint
from .slot_layout import MAX_DELAY, TAG_BITS, TIME_BITS, out_layout, word_layout
from .slot_switch import SlotSwitch

__all__ = ["SlotFabric"]


class SlotFabric(wiring.Component):
    """Test fabric: a :class:`SlotSwitch` and N :class:`SlotEndpoint` joined by fibres of
    run-time delay (``delay[i]``, 1..64 cycles each way).

    Parameters (keyword-only): ``n`` 2..16, ``d`` 1..64, ``depth`` 2..256, ``hold_bits`` 1..16,
    ``rtt_bits`` 1..16 (the endpoints' round-trip counter, default 16).
    """

    def __init__(self, *, n, d, depth, hold_bits, rtt_bits=TIME_BITS):
        check_params(self, [("n", n, 2, 16), ("d", d, 1, 64), ("depth", depth, 2, 256),
                            ("hold_bits", hold_bits, 1, 16),
                            ("rtt_bits", rtt_bits, 1, TIME_BITS)])
        self.n, self.d, self.depth, self.hold_bits = n, d, depth, hold_bits
        self.rtt_bits = rtt_bits
        delay_bits = Shape.cast(range(MAX_DELAY + 1)).width
        super().__init__({
            "period": In(TIME_BITS), "guard": In(TIME_BITS), "enable": In(1),
            "start": In(n), "clear": In(1),
            "delay": In(data.ArrayLayout(delay_bits, n)), "sync_drop": In(n), "echo_drop": In(n),
            "schedule": In(stream.Signature(step_layout(n, hold_bits))),
            "send_valid": In(n), "send_data": In(data.ArrayLayout(d, n)),
            "window": Out(n), "window_tag": Out(data.ArrayLayout(TAG_BITS, n)),
            "launch": Out(data.ArrayLayout(word_layout(d), n)),
            "tx": Out(data.ArrayLayout(out_layout(d), n)),
            "late": Out(n), "missed": Out(n), "locked": Out(n), "rtt_error": Out(n),
            "rtt": Out(data.ArrayLayout(TIME_BITS, n)),
            "config_error": Out(1), "slot": Out(32), "phase": Out(TIME_BITS),
            "entries": Out(range(depth + 1)), "overflow": Out(1), "stack_error": Out(1),
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
                     self.overflow.eq(sw.overflow), self.stack_error.eq(sw.stack_error),
                     self.tx.eq(sw.tx), self.late.eq(sw.late)]
        for i in range(n):
            ep = SlotEndpoint(d=self.d, rtt_bits=self.rtt_bits)
            m.submodules[f"ep{i}"] = ep
            delay = self.delay[i]
            down = Cat(sw.sync & ~self.sync_drop[i], sw.sync_slot, sw.echo[i] & ~self.echo_drop[i])
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
                self.launch[i].eq(ep.tx),
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
    longest = Signal(name=f"{name}_longest")
    m.d.comb += longest.eq(delay >= MAX_DELAY)
    # delay 0 behaves as 1, delays above MAX_DELAY as MAX_DELAY
    taps = []
    for k in range(MAX_DELAY):
        pick = eq_const(delay, k + 1)
        if k == 0:
            pick = pick | ~delay.any()
        if k == MAX_DELAY - 1:
            pick = longest
        taps.append(Mux(pick, stages[k], 0))
    m.d.comb += out.eq(or_tree(m, taps, len(value)))
    return out
