"""The slot endpoint in Amaranth's simulator, driven by hand-made sync pulses and echoes and
checked against the numbers §6 specifies: round trip m, a window of T - G cycles opening at
phase (G - m) mod T with the right slot tag, the missed-pulse flag, and no window while the
configuration is bad."""

import pytest

from aifabric.cosim.pysim import run_sync
from aifabric.rtl.chronos.slot_endpoint import SlotEndpoint


def run(period, guard, echo_after, cycles, *, drop=(), bad_from=None, rtt_bits=16):
    """Sync pulses every ``period`` cycles from cycle 10 (slot numbers 0, 1, ...; pulses of
    slots in ``drop`` suppressed); the echo ``echo_after`` cycles after the ping (None: never).
    Returns a trace of per-cycle dicts."""
    dut = SlotEndpoint(d=8, rtt_bits=rtt_bits)
    trace = []

    async def bench(ctx):
        ctx.set(dut.period, period)
        ctx.set(dut.guard, guard)
        ctx.set(dut.start, 1)
        ctx.set(dut.send_valid, 1)
        ping_at = None
        for t in range(cycles):
            if bad_from is not None and t == bad_from:
                ctx.set(dut.guard, period)
            slot, phase = divmod(t - 10, period) if t >= 10 else (None, None)
            ctx.set(dut.sync, int(phase == 0 and slot not in drop))
            ctx.set(dut.sync_slot, (slot or 0) % 4)
            ctx.set(dut.echo, int(ping_at is not None and echo_after is not None
                                  and t == ping_at + echo_after))
            ctx.set(dut.send_data, t % 256)
            await ctx.delay(0)
            if ctx.get(dut.ping):
                ping_at = t
            trace.append({"t": t, "window": ctx.get(dut.window), "tag": ctx.get(dut.window_tag),
                          "rtt": ctx.get(dut.rtt), "missed": ctx.get(dut.missed),
                          "ping": ping_at, "measured": ctx.get(dut.measured),
                          "locked": ctx.get(dut.locked), "rtt_error": ctx.get(dut.rtt_error),
                          "tx_valid": ctx.get(dut.tx.valid), "tx_tag": ctx.get(dut.tx.tag),
                          "tx_data": ctx.get(dut.tx.data), "slot": slot, "phase": phase})
            await ctx.tick()

    run_sync(bench, dut=dut)
    return trace


@pytest.mark.parametrize("period,guard,m", [(12, 3, 5), (12, 6, 5), (20, 2, 11), (9, 4, 9)])
def test_window_follows_the_slot_timing(period, guard, m):
    trace = run(period, guard, m, 10 + 6 * period)
    assert trace[-1]["rtt"] == m
    opens = (guard - m) % period
    for c in trace[10 + 2 * period:]:   # a slot to measure m, a slot to lock
        # the window covers phases opens .. opens + T - G - 1 (mod T)
        inside = (c["phase"] - opens) % period < period - guard
        assert c["window"] == inside, c
        if inside:
            # the slot the word reaches the crossbar in: launched at t + 1, seen at t + 1 + d
            # with m = 2d + 1, i.e. at phase G + k of slot (t + m - (phase origin)) // T
            arrival = c["t"] - 10 + m
            assert c["tag"] == (arrival // period) % 4, c
            assert guard <= arrival % period, c
    # launch: registered, the window's tag and the offered data
    for a, b in zip(trace, trace[1:]):
        assert b["tx_valid"] == a["window"]
        if a["window"]:
            assert (b["tx_tag"], b["tx_data"]) == (a["tag"], a["t"] % 256)


def test_missed_pulse_is_flagged_and_the_timer_carries_on():
    period, guard, m = 10, 3, 5
    clean = run(period, guard, m, 10 + 8 * period)
    dropped = run(period, guard, m, 10 + 8 * period, drop={4, 5})
    assert [c["window"] for c in clean] == [c["window"] for c in dropped]
    first_missed = next(c["t"] for c in dropped if c["missed"])
    assert first_missed == 10 + 4 * period + 1
    assert not any(c["missed"] for c in clean)


def test_rtt_reads_zero_until_measured_and_no_window_when_guard_reaches_period():
    trace = run(12, 3, 7, 80, bad_from=50)
    ping = next(c["t"] for c in trace if c["rtt"])
    assert all(c["rtt"] == 0 for c in trace[:ping]) and trace[ping]["rtt"] == 7
    assert any(c["window"] for c in trace[30:50])
    assert not any(c["window"] or c["tx_valid"] for c in trace[51:])


def test_rtt_beyond_the_period_is_an_error_and_opens_no_window():
    trace = run(8, 2, 11, 80)
    assert trace[-1]["rtt"] == 11
    assert not any(c["window"] for c in trace)


@pytest.mark.parametrize("m", [13, 14, 15, 16, 17, 40])
def test_round_trip_saturates_at_the_counter_top(m):
    """A 4-bit counter (top 15): echoes at 2**4 - 3, - 2, - 1 (the top itself), 2**4 and past
    it read min(m, 15) from the cycle after the echo (a wrapped count would read m - 16), and
    the saturated 15 is measured against T like any round trip (T = 15: no error, 14: error)."""
    for period in (15, 14):
        trace = run(period, 2, m, 80, rtt_bits=4)
        ping = next(c["ping"] for c in trace if c["ping"] is not None)
        for c in trace:
            after = c["t"] > ping + m
            assert c["rtt"] == (min(m, 15) if after else 0), (m, c)
            assert c["measured"] == after and c["rtt_error"] == (after and min(m, 15) > period)


def test_lost_echo_leaves_the_endpoint_unmeasured():
    """No echo: rtt 0, never measured, never locked, no window and no launch, long after the
    counter's top (4 bits: 15 cycles), with sync pulses coming."""
    trace = run(12, 3, None, 120, rtt_bits=4)
    assert all(c["rtt"] == 0 and not c["measured"] and not c["locked"] and not c["window"]
               and not c["tx_valid"] and not c["missed"] and not c["rtt_error"] for c in trace)


def test_round_trip_counter_width_is_checked():
    with pytest.raises(ValueError, match="rtt_bits"):
        SlotEndpoint(d=8, rtt_bits=17)
    with pytest.raises(ValueError, match="rtt_bits"):
        SlotEndpoint(d=8, rtt_bits=0)
