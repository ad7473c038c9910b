"""Behaviour of the Chronos switch side (NAIC'25, §6-§7): slot timeline, schedule stack and
scheduled crossbar, as times, slot numbers and permutations.

Time is an integer cycle count ``t`` (the model's own clock; nothing wraps). Bit widths appear
only where the interface documents them: slot tags are slot numbers mod :data:`TAG_MOD`.

Slot timeline
    The switch acts on enable, T and G one cycle after they are applied (its decisions are
    registered): with enable', T' and G' the values of the cycle before, while enable' is
    high, T' and G' are good (T' >= 2, G' < T') and a stack is loaded, slot 0 starts in the
    cycle after the first such cycle; slot s ends at the first cycle whose phase (cycles since
    the slot started) is >= T' - 1, and slot s + 1 starts in the next cycle. Phases >= G' of
    a slot are its data phase. ``config_error`` reads T and G as applied.

Stack
    A stack is a list of (perm, hold): ``perm[i]`` is input i's output or -1. It must be a
    partial permutation (connected inputs name distinct outputs in 0..N-1); one malformed entry
    rejects the whole stack, which is then never played. Entries with hold 0 are dropped,
    entries beyond ``depth`` overflow (the first ``depth`` are kept). Slot s plays the entry
    that covers s when entry k lasts ``hold_k`` slots and the stack repeats.

Crossbar
    A word on input i at time t, in slot s at phase p, is delivered on output ``perm_s[i]`` at
    t + 1 iff p >= G' (G of time t - 1), its tag is s mod TAG_MOD and ``perm_s[i] >= 0``;
    every other word is dropped and flags ``late[i]``. ``perm_s`` is read from the stack when
    slot s starts (a slot that runs on while the next stack's first beat is taken plays the
    permutation it started with).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TAG_MOD", "Word", "malformed", "slot_permutations", "slot_permutation",
           "StackLoader", "SlotSwitch", "config_error"]

TAG_MOD = 4


@dataclass(frozen=True)
class Word:
    """A word on an up fibre: the slot tag it was sent for and its data."""
    tag: int
    data: int


def malformed(perm, n: int) -> str | None:
    """Why ``perm`` is not a partial permutation of 0..n-1, or None."""
    used = set()
    for i, j in enumerate(perm):
        if j < 0:
            continue
        if j >= n:
            return f"input {i} names output {j} (outputs are 0..{n - 1})"
        if j in used:
            return f"output {j} named twice"
        used.add(j)
    return None


def slot_permutations(entries, slots: int) -> list[list[int]]:
    """The permutation of each slot 0..slots-1 when entry k of ``entries`` (perm, hold) lasts
    ``hold`` slots and the stack repeats (hold-0 entries last no slot)."""
    out: list[list[int]] = []
    playable = [(list(p), h) for p, h in entries if h > 0]
    while playable and len(out) < slots:
        for perm, hold in playable:
            out.extend([perm] * hold)
    return out[:slots]


def slot_permutation(entries, slot: int) -> list[int]:
    """The permutation slot ``slot`` plays (as :func:`slot_permutations`, without the list)."""
    playable = [(p, h) for p, h in entries if h > 0]
    r = slot % sum(h for _, h in playable)
    for perm, hold in playable:
        if r < hold:
            return list(perm)
        r -= hold
    raise AssertionError("unreachable")


class StackLoader:
    """The stack as loaded beat by beat: a frame replaces the stack when its last beat arrives
    and every entry in it is a partial permutation."""

    def __init__(self, n: int, depth: int) -> None:
        self.n, self.depth = n, depth
        self.stack: list[tuple[list[int], int]] = []   # the committed, playable stack
        self.overflow = False
        self.stack_error = False
        self._frame: list | None = None
        self._bad = False

    def beat(self, perm, hold: int, last: bool) -> None:
        if self._frame is None:
            self._frame, self._bad = [], False
            self.stack, self.overflow, self.stack_error = [], False, False
        self._bad |= malformed(perm, self.n) is not None
        if hold > 0:
            if len(self._frame) == self.depth:
                self.overflow = True
            else:
                self._frame.append((list(perm), int(hold)))
        if last:
            self.stack = [] if self._bad else self._frame
            self.stack_error = self._bad
            self._frame = None

    def load(self, entries) -> None:
        """A whole stack of (perm, hold) entries, as one frame."""
        entries = list(entries)
        for k, (perm, hold) in enumerate(entries):
            self.beat(perm, hold, k == len(entries) - 1)


def config_error(period: int, guard: int) -> bool:
    return period < 2 or guard >= period


class SlotSwitch:
    """Slot master, ping echo, stack and crossbar, one :meth:`cycle` per clock."""

    def __init__(self, n: int, depth: int) -> None:
        self.n = n
        self.loader = StackLoader(n, depth)
        self.t = 0
        self.slot_start: int | None = None   # time slot ``slot`` started; None when stopped
        self.slot = 0
        self.perm: list[int] | None = None   # the permutation slot ``slot`` plays
        self.applied = (0, 0, False)         # (period, guard, enable) of the cycle before
        self.echo = [False] * n
        self.tx: list[int | None] = [None] * n
        self.late = [False] * n

    @property
    def stack(self):
        return self.loader.stack

    def phase(self) -> int:
        return 0 if self.slot_start is None else self.t - self.slot_start

    def outputs(self, period: int, guard: int, enable: bool) -> dict:
        running = self.slot_start is not None
        return {"sync": running and self.phase() == 0, "sync_slot": self.slot % TAG_MOD,
                "slot": self.slot, "phase": self.phase(), "echo": list(self.echo),
                "tx": list(self.tx), "late": list(self.late),
                "config_error": config_error(period, guard), "ready": not enable,
                "entries": len(self.loader.stack), "overflow": self.loader.overflow,
                "stack_error": self.loader.stack_error}

    def edge(self, *, period, guard, enable, ping, rx, clear, beat=None) -> None:
        """Advance one cycle. ``rx[i]``: the :class:`Word` on input i or None; ``beat``: the
        schedule beat (perm, hold, last) taken in this cycle, or None."""
        n = self.n
        period_a, guard_a, enable_a = self.applied
        running = self.slot_start is not None
        accept = running and self.phase() >= guard_a
        tx: list[int | None] = [None] * n
        for i, word in enumerate(rx):
            if word is None:
                continue
            if accept and self.perm[i] >= 0 and word.tag == self.slot % TAG_MOD:
                tx[self.perm[i]] = word.data
            else:
                self.late[i] = True
        if clear:
            self.late = [False] * n
        self.tx, self.echo = tx, list(ping)

        # the stack as it is before this cycle's beat (a beat is taken only while enable is
        # low, and the master stops in the cycle after that anyway)
        if not enable_a or config_error(period_a, guard_a) or not self.stack:
            self.slot_start, self.slot, self.perm = None, 0, None
        elif not running or self.phase() >= period_a - 1:
            self.slot = self.slot + 1 if running else 0
            self.slot_start = self.t + 1
            self.perm = slot_permutation(self.stack, self.slot)
        if beat is not None:
            self.loader.beat(*beat)
        self.applied = (period, guard, enable)
        self.t += 1
