"""The event heap the compiled event engines share (numba): the DCTCP transport
(:mod:`models.common.dctcp`), Flex-SiPAC's credit transport (:mod:`models.flexsipac._engine`)
and the RoCE/DCQCN switch (:mod:`models.chronos._roce_engine`, where it holds the timers and
whatever leaves the per-resource timelines).

An entry is a time and four integers: its sequence number, its kind and two arguments. Entries
leave in (time, sequence number) order; with sequence numbers counting pushes, that is the
order of the plain-Python references' one ``heapq`` of ``(time, seq, ...)`` tuples, so an
engine and its reference see the same events in the same order. The storage is two flat
arrays the caller owns (and may grow): ``times[i]`` and ``ints[4 i : 4 i + 4]``.

The engines inline these functions, and numba's on-disk cache of an engine is keyed by the
engine's own file only: a change here must also change each engine's file (the line naming
this module's version there), or a warm cache keeps running the old heap. Version: 2026-11-28b.
"""

from __future__ import annotations

import numpy as np
from numba import njit

WIDTH = 4       # integers per entry: sequence number, kind, a, b


def new(capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty storage for ``capacity`` entries: (times, ints)."""
    return np.empty(capacity, np.float64), np.empty(WIDTH * capacity, np.int64)


@njit(cache=True, inline="always")
def _move(times, ints, dst, src):
    """Entry ``src`` copied over entry ``dst``."""
    times[dst] = times[src]
    for k in range(WIDTH):
        ints[WIDTH * dst + k] = ints[WIDTH * src + k]


@njit(cache=True, inline="always")
def push(times, ints, n, t, seq, kind, a, b):
    """Add entry (t, seq, kind, a, b) to the heap of ``n`` entries (the caller checks the
    capacity and counts ``n``). Returns the entry's final position: 0 if it is the new top."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if t < times[p] or (t == times[p] and seq < ints[4 * p]):
            _move(times, ints, i, p)
            i = p
        else:
            break
    times[i] = t
    ints[4 * i] = seq
    ints[4 * i + 1] = kind
    ints[4 * i + 2] = a
    ints[4 * i + 3] = b
    return i


@njit(cache=True, inline="always")
def top(times, ints):
    """The first entry: (t, kind, a, b)."""
    return times[0], ints[1], ints[2], ints[3]


@njit(cache=True, inline="always")
def pop(times, ints, n):
    """Remove the first entry of a heap of ``n`` entries (read it with :func:`top` before)."""
    n -= 1
    t, q = times[n], ints[4 * n]
    k, a, b = ints[4 * n + 1], ints[4 * n + 2], ints[4 * n + 3]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (times[c + 1] < times[c] or (times[c + 1] == times[c]
                                                      and ints[4 * c + 4] < ints[4 * c])):
            c += 1
        if times[c] < t or (times[c] == t and ints[4 * c] < q):
            _move(times, ints, i, c)
            i = c
        else:
            break
    if n > 0:
        times[i] = t
        ints[4 * i] = q
        ints[4 * i + 1] = k
        ints[4 * i + 2] = a
        ints[4 * i + 3] = b
