"""The BvN engine in Amaranth's simulator at small N: step for step against
``decompose(d, "wavefront")`` under random back-pressure, the load errors, one step per
cycle, and parameter validation. Large N runs on Verilator (cosim/test_bvn.py)."""

import numpy as np
import pytest

from aifabric.cosim.codec import decode_step, encode_row
from aifabric.cosim.pysim import run_sync
from aifabric.models.chronos.bvn import decompose
from aifabric.models.chronos.setting import engine_cycles, engine_latency
from aifabric.rtl.chronos.bvn import BvnEngine


def simulate(n, w, frames, *, ready_p=1.0, seed=0, max_cycles=20_000, rows=1):
    """Send each frame (a list of (row values, last) beats), collect the steps of each.

    Returns one dict per frame: steps (perm, weight, last), error flags, done, and the cycles
    from the beat with ``last`` to the final step (or to ``done``)."""
    rng = np.random.default_rng(seed)
    dut = BvnEngine(n=n, w=w, rows=rows)
    results = []

    async def bench(ctx):
        for beats in frames:
            steps = []
            for values, last in beats:
                ctx.set(dut.load.valid, 1)
                ctx.set(dut.load.payload.as_value(), encode_row(values, last))
                await ctx.tick().until(dut.load.ready)   # the edge that takes the beat
            ctx.set(dut.load.valid, 0)
            t0 = first = None
            cycles = 0
            while cycles < max_cycles:
                ready = bool(rng.random() < ready_p)
                ctx.set(dut.steps.ready, ready)
                await ctx.delay(0)
                if ctx.get(dut.steps.valid) and ready:
                    steps.append(decode_step(ctx.get(dut.steps.payload.as_value()), n, w))
                    t0 = cycles
                    first = cycles if first is None else first
                if (ctx.get(dut.done) or ctx.get(dut.error.as_value())) \
                        and not ctx.get(dut.steps.valid):
                    break
                await ctx.tick()
                cycles += 1
            ctx.set(dut.steps.ready, 0)
            results.append({"steps": steps, "error": ctx.get(dut.error.as_value()),
                            "done": ctx.get(dut.done), "cycles": t0, "first": first})
            await ctx.tick()

    run_sync(bench, dut=dut)
    return results


def frame(matrix, rows=1):
    """The load beats of ``matrix``: ``rows`` rows per beat, row by row (the documented
    lane order: lane k N + j of beat b is entry (b R + k, j))."""
    n = len(matrix)
    flat = [int(v) for v in np.asarray(matrix).reshape(-1)]
    return [(flat[b * rows * n:(b + 1) * rows * n], b == n // rows - 1)
            for b in range(n // rows)]


def check_against_model(matrix, result):
    expect = decompose(np.asarray(matrix), "wavefront")
    got = result["steps"]
    assert len(got) == len(expect), (len(got), len(expect))
    for k, ((perm, weight, last), (p, wgt)) in enumerate(zip(got, expect)):
        assert perm == list(p) and weight == wgt, f"step {k}: {perm} x{weight} vs {list(p)} x{wgt}"
        assert last == (k == len(expect) - 1), f"step {k}: last={last}"
    assert result["done"] and result["error"] == 0


@pytest.mark.parametrize("n,w", [(4, 8), (5, 12)])
def test_steps_equal_model_with_backpressure(n, w):
    rng = np.random.default_rng(n)
    mats = [rng.integers(0, 1 << w, (n, n)) * (rng.random((n, n)) < d)
            for d in (0.3, 0.7, 1.0, 1.0)]
    mats.append(np.diag(rng.integers(1, 4, n)))
    mats.append(np.zeros((n, n), dtype=np.int64))   # nothing to emit, still done
    mats.append(np.full((n, n), (1 << w) - 1))       # the largest entry
    res = simulate(n, w, [frame(x) for x in mats], ready_p=0.6, seed=n)
    for x, r in zip(mats, res):
        check_against_model(x, r)


def test_one_step_per_cycle_without_backpressure():
    n, w = 4, 8
    x = np.arange(1, n * n + 1).reshape(n, n)
    (r,) = simulate(n, w, [frame(x)], ready_p=1.0)
    check_against_model(x, r)
    # cycle 0 is the cycle after the edge that took the last beat (the engine copies the
    # second bank into the residual in it, and computes the first step in cycle 1); the
    # first step is valid in cycle 2, then one step per cycle
    assert r["first"] == 2
    assert r["cycles"] == len(r["steps"]) + 1


@pytest.mark.parametrize("rows", [1, 3])
def test_a_matrix_alone_takes_engine_latency_from_its_first_beat(rows):
    """§8.1's circuit times each matrix alone (``engine_latency``): on a fresh engine its
    N / R beats are taken one per cycle, the last in cycle -1, and the final step is taken
    in cycle ``cycles``: from the first beat that is N / R + cycles cycles, at N = 6."""
    n, w = 6, 8
    x = np.arange(1, n * n + 1).reshape(n, n)
    (r,) = simulate(n, w, [frame(x, rows)], ready_p=1.0, rows=rows)
    check_against_model(x, r)
    assert n // rows + r["cycles"] == engine_latency(n, len(r["steps"]), rows)


@pytest.mark.parametrize("case,flag", [("short", 0b001), ("long", 0b010), ("overflow", 0b100)])
def test_bad_loads_raise_error_and_emit_nothing(case, flag):
    n, w = 4, 8
    good = np.arange(1, n * n + 1).reshape(n, n)
    beats = frame(good)
    if case == "short":
        beats = beats[:2] + [(beats[2][0], True)]
    elif case == "long":
        beats = [(v, False) for v, _ in beats] + [(beats[0][0], False), (beats[1][0], True)]
    else:
        beats[1] = ([1, 2, 1 << w, 3], False)
    res = simulate(n, w, [beats, frame(good)])
    assert res[0]["steps"] == [] and res[0]["error"] == flag and not res[0]["done"]
    check_against_model(good, res[1])  # the next good frame clears the error


@pytest.mark.parametrize("kw", [{"n": 3, "w": 8}, {"n": 65, "w": 8}, {"n": 8, "w": 7},
                                {"n": 8, "w": 33}, {"n": 8.0, "w": 8}, {"n": True, "w": 8},
                                {"n": 8, "w": 8, "rows": 0}, {"n": 8, "w": 8, "rows": 16}])
def test_bad_parameters(kw):
    with pytest.raises((TypeError, ValueError), match="Parameter '(n|w|rows)'"):
        BvnEngine(**kw)


def test_rows_must_divide_n():
    with pytest.raises(ValueError, match="'rows' must divide n = 6, not 4"):
        BvnEngine(n=6, w=8, rows=4)


@pytest.mark.parametrize("n,rows", [(4, 2), (4, 4), (6, 3)])
def test_wide_load_equals_model(n, rows):
    """N / R beats of R rows each: a beat count the engine did not expect would raise
    short/long and emit nothing, so matching the model also checks the framing."""
    w = 8
    rng = np.random.default_rng(n * rows)
    mats = [rng.integers(0, 1 << w, (n, n)) * (rng.random((n, n)) < d) for d in (0.4, 1.0)]
    mats.append(np.arange(1, n * n + 1).reshape(n, n))
    mats.append(np.zeros((n, n), dtype=np.int64))
    res = simulate(n, w, [frame(x, rows) for x in mats], ready_p=0.7, seed=rows, rows=rows)
    for x, r in zip(mats, res):
        check_against_model(x, r)
    (r,) = simulate(n, w, [frame(mats[2], rows)], rows=rows)
    # one step per cycle after the bank's copy and the first step's computation
    assert r["first"] == 2 and r["cycles"] == len(r["steps"]) + 1


@pytest.mark.parametrize("case,flag", [("short", 0b001), ("long", 0b010), ("overflow", 0b100)])
def test_wide_load_errors(case, flag):
    n, w, rows = 4, 8, 2
    good = np.arange(1, n * n + 1).reshape(n, n)
    beats = frame(good, rows)                       # two beats of two rows
    if case == "short":
        beats = [(beats[0][0], True)]
    elif case == "long":
        beats = [(v, False) for v, _ in beats] + [(beats[0][0], True)]
    else:
        values = list(beats[1][0])
        values[n + 2] = 1 << w                      # row 3, column 2 of the second beat
        beats[1] = (values, True)
    res = simulate(n, w, [beats, frame(good, rows)], rows=rows)
    assert res[0]["steps"] == [] and res[0]["error"] == flag and not res[0]["done"]
    check_against_model(good, res[1])


def test_done_waits_for_the_final_step_to_be_taken():
    """With the final step held in the output register (ready low), done stays low; it rises
    in the cycle after the step is taken and stays high."""
    n, w = 4, 8
    matrix = np.diag([3, 5, 7, 9])           # one step: the identity, weight 3, then ...
    expect = decompose(matrix, "wavefront")
    dut = BvnEngine(n=n, w=w)
    seen = []

    async def bench(ctx):
        for values, last in frame(matrix):
            ctx.set(dut.load.valid, 1)
            ctx.set(dut.load.payload.as_value(), encode_row(values, last))
            await ctx.tick().until(dut.load.ready)
        ctx.set(dut.load.valid, 0)
        taken = 0
        while taken < len(expect):
            if ctx.get(dut.steps.valid):
                step = decode_step(ctx.get(dut.steps.payload.as_value()), n, w)
                if step[2]:                   # the final step: hold it for 5 cycles
                    for _ in range(5):
                        assert ctx.get(dut.steps.valid) and not ctx.get(dut.done)
                        await ctx.tick()
                ctx.set(dut.steps.ready, 1)
                await ctx.tick()
                ctx.set(dut.steps.ready, 0)
                seen.append(step)
                taken += 1
            else:
                assert not ctx.get(dut.done)
                await ctx.tick()
        for _ in range(3):
            assert ctx.get(dut.done) and not ctx.get(dut.steps.valid)
            await ctx.tick()

    run_sync(bench, dut=dut)
    assert [s[:2] for s in seen] == [(list(p), wt) for p, wt in expect]
    assert seen[-1][2] and len(seen) == len(expect) > 1


def test_next_frame_loads_during_a_run():
    """The next frame loads into the second bank while the current matrix is decomposed: B's
    beats are all taken from the cycle A leaves the bank, while A runs; B starts only once A's final step is taken (held in
    the output register for 6 cycles: no B step, ``done`` low, the full bank refusing a
    third frame), ``done`` rises for A in the cycle after, B's first step is valid two cycles
    after that, and both are decomposed step for step."""
    n, w = 5, 8
    a = np.arange(1, n * n + 1).reshape(n, n)      # 13 steps: B's 5 beats fit in A's run
    b = np.diag([3, 5, 7, 9, 11])
    dut = BvnEngine(n=n, w=w)
    got = {"a": [], "b": []}
    log = {"b_beats_busy": 0, "held": 0, "done_a": None, "b_first": None}

    async def bench(ctx):
        for values, last in frame(a):
            ctx.set(dut.load.valid, 1)
            ctx.set(dut.load.payload.as_value(), encode_row(values, last))
            await ctx.tick().until(dut.load.ready)
        ctx.set(dut.steps.ready, 1)
        beats = list(frame(b))
        while True:                     # B's beats offered back to back, A's steps taken
            ctx.set(dut.load.valid, bool(beats))
            if beats:
                ctx.set(dut.load.payload.as_value(), encode_row(*beats[0]))
            await ctx.delay(0)
            if beats and ctx.get(dut.load.ready):
                log["b_beats_busy"] += ctx.get(dut.busy)
                beats.pop(0)
            if ctx.get(dut.steps.valid):
                step = decode_step(ctx.get(dut.steps.payload.as_value()), n, w)
                if step[2]:
                    break
                got["a"].append(step)
            await ctx.tick()
        assert not beats, "B was not loaded during A's run"
        ctx.set(dut.load.valid, 1)      # a third frame offered: the bank is full
        ctx.set(dut.load.payload.as_value(), encode_row(frame(b)[0][0], False))
        ctx.set(dut.steps.ready, 0)     # hold A's final step for 6 cycles
        for _ in range(6):
            await ctx.tick()
            await ctx.delay(0)
            assert ctx.get(dut.steps.valid) and decode_step(
                ctx.get(dut.steps.payload.as_value()), n, w)[2]
            assert not (ctx.get(dut.busy) or ctx.get(dut.done) or ctx.get(dut.load.ready))
            log["held"] += 1
        got["a"].append(decode_step(ctx.get(dut.steps.payload.as_value()), n, w))
        ctx.set(dut.load.valid, 0)
        ctx.set(dut.steps.ready, 1)
        await ctx.tick()                # A's final step taken
        await ctx.delay(0)
        log["done_a"] = bool(ctx.get(dut.done))
        for cycle in range(1, 200):
            await ctx.tick()
            await ctx.delay(0)
            if ctx.get(dut.steps.valid):
                if log["b_first"] is None:
                    log["b_first"] = cycle
                got["b"].append(decode_step(ctx.get(dut.steps.payload.as_value()), n, w))
            if ctx.get(dut.done) and not ctx.get(dut.steps.valid):
                break

    run_sync(bench, dut=dut)
    # B's first beat is taken in the cycle A is copied out of the bank (busy rises at its
    # end), the others while A runs
    assert log["b_beats_busy"] == n - 1 and log["held"] == 6 and log["done_a"]
    assert log["b_first"] == 2, log
    for name, mat in (("a", a), ("b", b)):
        expect = decompose(mat, "wavefront")
        assert [(p, wt) for p, wt, _ in got[name]] == [(list(p), wt) for p, wt in expect], name
        assert [last for *_, last in got[name]] == [False] * (len(expect) - 1) + [True]


def test_one_beat_frames_after_an_overflow():
    """rows = n: every frame is one beat, so the beat that starts a frame also ends it; an
    overflow in one frame must not leak into the next (good) frame."""
    n, w = 4, 8
    good = np.arange(1, n * n + 1).reshape(n, n)
    (values, last), = frame(good, n)
    bad = [(values[:5] + [1 << w] + values[6:], True)]
    res = simulate(n, w, [bad, frame(good, n), bad, bad, frame(good, n)], rows=n)
    for k in (0, 2, 3):
        assert res[k]["steps"] == [] and res[k]["error"] == 0b100, k
    check_against_model(good, res[1])
    check_against_model(good, res[4])


@pytest.mark.parametrize("rows", [1, 3])
def test_stream_hides_the_load(rows):
    """Frames offered back to back with the output always ready, at N = 6 (a size that is not
    a power of two): each frame loads into the second bank while the one before runs, so a
    matrix occupies the engine ``engine_cycles(n, steps, rows)`` = max(steps + 2, N / R)
    cycles (busy rising at each copy out of the bank measures it: a long run hides the whole
    load, a one-step matrix and the zero matrix wait for theirs); the steps equal the
    model's."""
    n, w = 6, 8
    rng = np.random.default_rng(rows)
    mats = [rng.integers(1, 1 << w, (n, n)),            # ~N^2 steps: the load hidden
            np.diag(np.full(n, 5)),                     # one step: shorter than the load
            rng.integers(0, 1 << w, (n, n)) * (rng.random((n, n)) < 0.3),
            np.zeros((n, n), dtype=np.int64),           # no step
            np.arange(1, n * n + 1).reshape(n, n),
            np.diag(np.arange(1, n + 1))]
    expects = [decompose(x, "wavefront") for x in mats]
    dut = BvnEngine(n=n, w=w, rows=rows)
    rises, steps = [], []

    async def bench(ctx):
        beats = [b for x in mats for b in frame(x, rows)]
        ctx.set(dut.steps.ready, 1)
        was_busy, cycle = 0, 0
        while cycle < 2000:
            ctx.set(dut.load.valid, bool(beats))
            if beats:
                ctx.set(dut.load.payload.as_value(), encode_row(*beats[0]))
            await ctx.delay(0)
            busy = ctx.get(dut.busy)
            if busy and not was_busy:
                rises.append(cycle)
            was_busy = busy
            if beats and ctx.get(dut.load.ready):
                beats.pop(0)
            if ctx.get(dut.steps.valid):
                steps.append(decode_step(ctx.get(dut.steps.payload.as_value()), n, w))
            if len(rises) == len(mats) and ctx.get(dut.done) and not ctx.get(dut.steps.valid):
                break
            await ctx.tick()
            cycle += 1

    run_sync(bench, dut=dut)
    assert len(rises) == len(mats), rises
    assert np.diff(rises).tolist() == [engine_cycles(n, len(e), rows) for e in expects[:-1]]
    assert [(p, wt) for p, wt, _ in steps] == \
        [(list(p), wt) for e in expects for p, wt in e]
    assert sum(last for *_, last in steps) == sum(1 for e in expects if len(e))
