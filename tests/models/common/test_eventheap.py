"""The event heap the compiled engines share: entries leave in (time, sequence) order, the
order of a plain ``heapq`` of ``(time, seq, kind, a, b)`` tuples, through any mix of pushes
and pops (ties in time included), with every entry's payload intact."""

import heapq

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from aifabric.models.common import eventheap as heap

# a push (time drawn from few values, so ties are common) or a pop
OPS = st.lists(st.one_of(st.tuples(st.just("push"), st.integers(0, 5)), st.just(("pop",))),
               max_size=200)


@given(OPS)
def test_entries_leave_in_time_then_sequence_order(ops):
    times, ints = heap.new(len(ops) + 1)
    n, seq, ref = 0, 0, []
    for op in ops:
        if op[0] == "push":
            t = float(op[1])
            entry = (t, seq, seq % 7, 3 * seq, -seq)
            pos = heap.push(times, ints, n, t, seq, entry[2], entry[3], entry[4])
            heapq.heappush(ref, entry)
            n += 1
            seq += 1
            assert (pos == 0) == (ref[0] == entry)      # 0: the new entry is the top
        elif n:
            t, kind, a, b = heap.top(times, ints)
            want = heapq.heappop(ref)
            assert (t, kind, a, b) == (want[0], want[2], want[3], want[4])
            heap.pop(times, ints, n)
            n -= 1
    while n:
        want = heapq.heappop(ref)
        assert heap.top(times, ints) == (want[0], want[2], want[3], want[4])
        heap.pop(times, ints, n)
        n -= 1
    assert not ref


def test_storage_is_four_integers_per_entry():
    times, ints = heap.new(3)
    assert times.shape == (3,) and ints.shape == (12,) and ints.dtype == np.int64


def test_every_engine_names_the_heap_version_it_inlines():
    """numba caches an engine by its own file: an engine that inlines the heap names the
    heap's version, so a change to the heap (its version line) forces a change to each
    engine's file and a fresh compile, never a warm cache running the old heap."""
    import re
    from pathlib import Path
    root = Path(heap.__file__).resolve().parents[1]
    version = re.search(r"Version: (\S+)\.", Path(heap.__file__).read_text()).group(1)
    for engine in ("common/dctcp.py", "flexsipac/_engine.py", "chronos/_roce_engine.py"):
        text = (root / engine).read_text()
        assert f"eventheap as heap   # inlined: its version {version} " in text, engine
