"""Behaviour of a Chronos endpoint's slot timer (NAIC'25, §6): round trip, slot timing from
sync pulses, missed-pulse detection and the send window, as times and slot numbers.

Time is the model's own integer cycle count (nothing wraps). Widths appear only where the
interface documents them: slot tags are mod :data:`~.slot_switch.TAG_MOD`, ``rtt`` saturates
at 2**rtt_bits - 1 (:data:`RTT_MAX` at the default 16 bits).

Round trip
    The ping is sent in the cycle after ``start`` is first seen; ``rtt`` m is the number of
    cycles from the ping to the echo (2d + 1 over a fibre of d cycles each way), read from the
    cycle after the echo, at most 2**rtt_bits - 1. Without an echo the endpoint stays
    unmeasured until ``start`` falls.
Active
    Started, m measured, m <= T, T >= 2 and G < T. An inactive endpoint has no timer and no
    window.
Timer
    A sync pulse marks phase 0 of slot ``sync_slot``. Once locked (the first pulse), a slot
    with no pulse ends at its first cycle of phase >= T - 1 and the next slot is expected in
    the following cycle; a pulse that does not come when expected sets ``missed``.
Window
    Opens at phase (G - m) mod T of a slot (T, G as they are at that cycle), for T - G cycles,
    with the tag of that slot if G >= m and of the next one otherwise. A word offered while the
    window is open is launched one cycle later with the window's tag.
"""

from __future__ import annotations

from dataclasses import dataclass

from .slot_switch import TAG_MOD, Word, config_error

__all__ = ["SlotEndpoint", "Window", "RTT_MAX"]

RTT_MAX = (1 << 16) - 1


@dataclass(frozen=True)
class Window:
    opens: int     # time of its first cycle
    span: int      # cycles
    tag: int

    def open_at(self, t: int) -> bool:
        return self.opens <= t < self.opens + self.span


class SlotEndpoint:
    """One endpoint, one :meth:`outputs` / :meth:`edge` pair per clock."""

    def __init__(self, rtt_bits: int = 16) -> None:
        self.rtt_max = (1 << rtt_bits) - 1
        self.t = 0
        self.started = False
        self.ping_at: int | None = None    # time the ping was sent
        self.rtt: int | None = None        # measured round trip
        self.locked = False
        self.zero_at: int | None = None    # time of the current (or next expected) phase 0
        self.slot = 0                      # tag of the current slot
        self.missed = False
        self.window: Window | None = None
        self.tx: Word | None = None        # the launched word (registered)

    def active(self, period: int, guard: int, start: bool) -> bool:
        return (start and self.rtt is not None and self.rtt <= period
                and not config_error(period, guard))

    def _now(self, period, guard, start, sync, sync_slot):
        """This cycle's (phase, slot tag, expected, window opening or None); phase is None
        when the endpoint does not know it."""
        t = self.t
        if sync:
            phase, slot = 0, sync_slot
        elif self.locked:
            phase = t - self.zero_at
            slot = (self.slot + 1) % TAG_MOD if t == self.zero_at else self.slot
        else:
            phase, slot = None, self.slot
        expected = self.locked and t == self.zero_at
        opening = None
        if self.active(period, guard, start) and phase is not None:
            early = self.rtt > guard
            if phase == (guard - self.rtt) % period:
                opening = Window(t, period - guard, (slot + early) % TAG_MOD)
        return phase, slot, expected, opening

    def outputs(self, *, period, guard, start, sync, sync_slot) -> dict:
        *_, opening = self._now(period, guard, start, sync, sync_slot)
        window = opening or self.window
        is_open = (self.active(period, guard, start) and window is not None
                   and window.open_at(self.t))
        return {"window": is_open, "window_tag": window.tag if is_open else None,
                "ping": self.ping_at == self.t, "tx": self.tx,
                "rtt": 0 if self.rtt is None else min(self.rtt, self.rtt_max),
                "measured": self.rtt is not None, "locked": self.locked,
                "missed": self.missed,
                "rtt_error": self.rtt is not None and self.rtt > period}

    def edge(self, *, period, guard, start, sync, sync_slot, echo, send, clear) -> None:
        """``send``: (valid, data) offered this cycle."""
        t = self.t
        out = self.outputs(period=period, guard=guard, start=start, sync=sync,
                           sync_slot=sync_slot)
        phase, slot, expected, opening = self._now(period, guard, start, sync, sync_slot)
        active = self.active(period, guard, start)
        valid, data = send
        self.tx = Word(out["window_tag"], data) if valid and out["window"] else None
        self.window = opening or (self.window if active else None)
        if clear or not start:
            self.missed = False
        elif active and expected and not sync:
            self.missed = True
        if active and phase is not None:
            self.locked, self.slot = True, slot
            if sync:
                self.zero_at = t
            if phase >= period - 1:
                self.zero_at = t + 1
        else:
            self.locked = False
        if not start:
            self.started, self.ping_at, self.rtt = False, None, None
        elif not self.started:
            self.started, self.ping_at = True, t + 1
        elif echo and self.rtt is None and self.ping_at is not None and t >= self.ping_at:
            self.rtt = min(t - self.ping_at, self.rtt_max)
        self.t += 1
