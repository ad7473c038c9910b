"""Cycle-level model of Chronos's time-slot synchronization and scheduled crossbar (§6-§7).

The behaviour ``rtl/chronos/slot.py`` must have, written as a clock-by-clock simulation:
:meth:`SlotFabric.cycle` takes one cycle's inputs and returns that cycle's outputs (the values
registers hold during the cycle), then advances to the next cycle.

Timing rules (all in clock cycles)
----------------------------------
- Fibres delay everything by ``d >= 1`` cycles each way: a value at one end in cycle t is seen
  at the other end in cycle t + d.
- Slot master: while enabled (valid ``period`` T >= 2, ``guard`` G < T, a non-empty stack),
  slot s occupies cycles ``t0 + s*T .. t0 + s*T + T - 1``; ``sync`` is high in its first cycle
  (phase 0), with the slot number mod 4. The first slot begins the cycle after ``enable`` is
  first seen high.
- Stack: entries (permutation, hold) in load order, entries with hold 0 dropped, at most
  ``depth`` kept (``overflow`` otherwise). Slot s uses the entry covering s when each entry
  lasts ``hold`` slots and the stack repeats.
- Crossbar: a word seen on input i in cycle t of slot s, phase p, is delivered on output
  ``perm_s[i]`` in cycle t + 1 iff p >= G, its tag is s mod 4 and ``perm_s[i] >= 0``;
  otherwise it is dropped and ``late[i]`` is set (sticky until ``clear``).
- Ping: an endpoint started in cycle c sends its ping in cycle c + 1; the switch echoes it
  one cycle after it arrives; ``rtt`` = cycles from the ping to the echo = 2d + 1.
- Endpoint timer: the cycle a sync is seen is phase 0 and sets the slot number; without a
  sync the timer wraps at T by itself, and a missing pulse where one is expected (once
  locked) sets ``missed``. The send window is T - G cycles from phase (G - rtt) mod T of the
  slot whose sync precedes it; it belongs to that slot when G >= rtt and to the next one
  otherwise. A word offered in a window cycle t is on the fibre in cycle t + 1 and reaches the
  crossbar in cycle t + 1 + d = phase G + k of its slot.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

TAG_MOD = 4


@dataclass
class Word:
    valid: bool = False
    tag: int = 0
    data: int = 0


class Switch:
    """Slot master, ping echo, stack sequencer and crossbar."""

    def __init__(self, n: int, depth: int) -> None:
        self.n, self.depth = n, depth
        self.stack: list[tuple[list[int], int]] = []
        self.overflow = False
        self.running, self.phase, self.slot = False, 0, 0
        self.perm = [-1] * n
        self.next_entry, self.hold_left = 0, 0
        self.echo = [False] * n
        self.tx = [None] * n
        self.late = [False] * n

    def load(self, entries) -> None:
        """A whole stack: (perm, hold) pairs."""
        self.stack, self.overflow = [], False
        for perm, hold in entries:
            if hold == 0:
                continue
            if len(self.stack) == self.depth:
                self.overflow = True
            else:
                self.stack.append((list(perm), int(hold)))

    def outputs(self) -> dict:
        return {"sync": self.running and self.phase == 0, "sync_slot": self.slot % TAG_MOD,
                "echo": list(self.echo), "tx": list(self.tx), "late": list(self.late),
                "slot": self.slot, "phase": self.phase}

    def edge(self, period, guard, enable, ping, rx, clear) -> None:
        n = self.n
        window = self.running and self.phase >= guard
        tx = [None] * n
        for i, word in enumerate(rx):
            if not word.valid:
                continue
            j = self.perm[i]
            if window and j >= 0 and word.tag == self.slot % TAG_MOD:
                tx[j] = word.data
            else:
                self.late[i] = True
        if clear:
            self.late = [False] * n
        self.tx = tx
        self.echo = list(ping)

        valid = period >= 2 and guard < period and self.stack
        if not (enable and valid):
            self.running, self.phase, self.slot = False, 0, 0
            self.perm, self.next_entry, self.hold_left = [-1] * n, 0, 0
        elif not self.running or self.phase == period - 1:
            self.slot = self.slot + 1 if self.running else 0
            if self.running and self.hold_left:
                self.hold_left -= 1
            else:
                perm, hold = self.stack[self.next_entry]
                self.perm, self.hold_left = perm, hold - 1
                self.next_entry = (self.next_entry + 1) % len(self.stack)
            self.running, self.phase = True, 0
        else:
            self.phase += 1


class Endpoint:
    """Ping, slot timer, missed-sync detection and send window of one endpoint."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.started = False
        self.ping = False
        self.count = None          # cycles since the ping, while waiting for the echo
        self.rtt = 0
        self.measured = False
        self.locked = False
        self.cnt = 0
        self.own_slot = 0
        self.missed = False
        self.window_left = 0       # window cycles left after this one
        self.window_tag = 0
        self.tx = Word()

    def rtt_error(self, period: int) -> bool:
        return self.measured and self.rtt > period

    def window(self, period, guard, sync, sync_slot, start):
        """(open, tag, phase, slot number) of this cycle."""
        active = start and self.measured and not self.rtt_error(period)
        expected = self.locked and self.cnt == 0
        phase = 0 if sync else self.cnt
        slot = sync_slot if sync else (self.own_slot + 1) % TAG_MOD if expected else self.own_slot
        early = self.rtt > guard
        opens = (period + guard - self.rtt) if early else (guard - self.rtt)
        opening = active and (sync or self.locked) and phase == opens % (1 << 16)
        if opening:
            return True, (slot + early) % TAG_MOD, phase, slot, opening, active, expected
        return self.window_left > 0, self.window_tag, phase, slot, opening, active, expected

    def outputs(self, period, guard, sync, sync_slot, start) -> dict:
        is_open, tag, *_ = self.window(period, guard, sync, sync_slot, start)
        return {"window": is_open, "window_tag": tag if is_open else None, "tx": self.tx,
                "ping": self.ping, "rtt": self.rtt, "locked": self.locked,
                "missed": self.missed, "rtt_error": self.rtt_error(period)}

    def edge(self, period, guard, start, sync, sync_slot, echo, send, clear) -> None:
        is_open, tag, phase, slot, opening, active, expected = \
            self.window(period, guard, sync, sync_slot, start)
        # launch register
        valid, data = send
        self.tx = Word(bool(valid and is_open), tag, data)
        # window counter
        if not active:
            self.window_left = 0
        elif opening:
            self.window_left = period - guard - 1
            self.window_tag = tag
        elif self.window_left:
            self.window_left -= 1
        # missed sync
        if clear or not start:
            self.missed = False
        elif active and expected and not sync:
            self.missed = True
        # timer
        if not active:
            self.locked, self.cnt = False, 0
        elif sync or self.locked:
            self.locked = True
            self.own_slot = slot
            self.cnt = 0 if phase >= period - 1 else phase + 1
        # ping and round trip
        if not start:
            self.started, self.count, self.measured, self.ping = False, None, False, False
        elif not self.started:
            self.started, self.ping, self.count = True, True, 0
        else:
            self.ping = False
            if self.count is not None:
                if echo:
                    self.rtt, self.measured, self.count = self.count, True, None
                else:
                    self.count = min(self.count + 1, (1 << 16) - 1)


class Fibre:
    """A link of run-time delay: ``push`` this cycle's value, get the one sent ``delay``
    cycles ago (delay 0 behaves as 1)."""

    MAX = 64

    def __init__(self, idle) -> None:
        self.idle = idle
        self.history = deque([idle] * self.MAX, maxlen=self.MAX)

    def seen(self, delay: int):
        return self.history[-max(1, delay)]

    def push(self, value) -> None:
        self.history.append(value)


class SlotFabric:
    """The RTL test fabric: one switch, N endpoints, a fibre of run-time delay each way."""

    def __init__(self, n: int, depth: int) -> None:
        self.n = n
        self.switch = Switch(n, depth)
        self.endpoints = [Endpoint() for _ in range(n)]
        self.down = [Fibre((False, 0, False)) for _ in range(n)]   # sync, slot, echo
        self.up = [Fibre((False, Word())) for _ in range(n)]       # ping, word

    def load(self, entries) -> None:
        self.switch.load(entries)

    def cycle(self, *, period, guard, enable, start, delay, sync_drop, send, clear=False):
        """One clock cycle. ``start``, ``delay``, ``sync_drop``: per endpoint; ``send``: per
        endpoint (valid, data). Returns the cycle's outputs."""
        n, sw = self.n, self.switch
        so = sw.outputs()
        seen_down = [f.seen(d) for f, d in zip(self.down, delay)]
        seen_up = [f.seen(d) for f, d in zip(self.up, delay)]
        eo = [ep.outputs(period, guard, s[0], s[1], start[i])
              for i, (ep, s) in enumerate(zip(self.endpoints, seen_down))]
        out = {
            "tx": so["tx"], "late": so["late"], "slot": so["slot"], "phase": so["phase"],
            "window": [e["window"] for e in eo], "window_tag": [e["window_tag"] for e in eo],
            "locked": [e["locked"] for e in eo], "missed": [e["missed"] for e in eo],
            "rtt": [e["rtt"] for e in eo], "rtt_error": [e["rtt_error"] for e in eo],
            "sync": so["sync"],
        }
        # fibres carry this cycle's outputs
        for i in range(n):
            self.down[i].push((so["sync"] and not sync_drop[i], so["sync_slot"],
                               so["echo"][i]))
            self.up[i].push((eo[i]["ping"], eo[i]["tx"]))
        # clock edge
        sw.edge(period, guard, enable, [u[0] for u in seen_up], [u[1] for u in seen_up], clear)
        for i, ep in enumerate(self.endpoints):
            s = seen_down[i]
            ep.edge(period, guard, start[i], s[0], s[1], s[2], send[i], clear)
        return out


def expected_permutations(entries, slots: int) -> list[list[int]]:
    """The permutation of each slot 0..slots-1 for a stack of (perm, hold) entries (hold 0
    skipped, the stack repeating): the schedule the crossbar must follow."""
    playable = [(list(p), h) for p, h in entries if h > 0]
    out = []
    while len(out) < slots and playable:
        for perm, hold in playable:
            out.extend([perm] * hold)
    return out[:slots]
