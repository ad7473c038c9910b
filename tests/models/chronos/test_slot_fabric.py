"""The behaviour-level slot models on their own: stack rules and checks, fibre delays, round
trips, run-time period changes, missed pulses, and the alignment property of §6 (every word
launched in a window reaches the scheduled output in that slot's data phase)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.models.chronos.slot_fabric import Fibre, SlotFabric
from aifabric.models.chronos.slot_switch import (TAG_MOD, StackLoader, malformed, slot_permutation,
                                        slot_permutations)


def test_slot_permutations_skip_hold_zero_and_repeat():
    a, b, c = [1, 0], [0, 1], [-1, 0]
    assert slot_permutations([(a, 2), (b, 0), (c, 1)], 7) == [a, a, c, a, a, c, a]
    assert slot_permutations([(a, 0)], 3) == []


@given(st.lists(st.integers(0, 3), min_size=1, max_size=6).filter(any), st.integers(0, 200))
def test_slot_permutation_is_the_listed_one(holds, slot):
    entries = [([k], h) for k, h in enumerate(holds)]
    assert slot_permutation(entries, slot) == slot_permutations(entries, slot + 1)[slot]


@pytest.mark.parametrize("perm,why", [([1, 1, 2], "output 1 named twice"),
                                      ([0, 3, -1], "names output 3"),
                                      ([2, -1, 2], "output 2 named twice")])
def test_malformed_entries_are_named(perm, why):
    assert why in malformed(perm, 3)
    assert malformed([2, -1, 0], 3) is None


def test_loader_drops_hold_zero_overflows_and_rejects_a_malformed_stack():
    s = StackLoader(2, depth=2)
    s.load([([0, 1], 0), ([1, 0], 1), ([0, 1], 3)])
    assert s.stack == [([1, 0], 1), ([0, 1], 3)] and not s.overflow and not s.stack_error
    s.load([([0, 1], 1)] * 3)
    assert len(s.stack) == 2 and s.overflow
    # a malformed entry anywhere rejects the whole frame, even one with hold 0
    s.load([([0, 1], 1), ([1, 1], 0), ([1, 0], 2)])
    assert s.stack == [] and s.stack_error
    s.beat([1, 0], 1, False)           # the next frame clears the flag at its first beat
    assert not s.stack_error and s.stack == []
    s.beat([0, 1], 1, True)
    assert s.stack == [([1, 0], 1), ([0, 1], 1)]


def test_fibre_delays_by_d_cycles():
    f = Fibre(0)
    seen = []
    for t in range(10):
        seen.append(f.seen(3))
        f.push(t + 1)
    assert seen == [0, 0, 0, 1, 2, 3, 4, 5, 6, 7]
    assert Fibre(0).seen(0) == Fibre(0).seen(1)
    long = Fibre(None)
    for t in range(200):
        long.push(t)
    assert long.seen(100) == long.seen(64) == 200 - 64     # above 64 acts as 64


def run(fabric, cycles, **kw):
    return [fabric.cycle(**kw) for _ in range(cycles)]


def idle(n, **kw):
    base = dict(period=32, guard=2, enable=False, start=[True] * n, delay=[1] * n,
                sync_drop=[False] * n, send=[(False, 0)] * n)
    base.update(kw)
    return base


@pytest.mark.parametrize("delay", [1, 4, 9])
def test_round_trip_is_2d_plus_1(delay):
    f = SlotFabric(2, 4)
    f.load([([1, 0], 1)])
    out = run(f, 2 * delay + 4, **idle(2, delay=[delay, delay]))
    assert out[-1]["rtt"] == [2 * delay + 1] * 2


def test_no_slot_without_a_good_configuration_or_stack():
    f = SlotFabric(2, 4)
    assert not any(o["sync"] for o in run(f, 20, **idle(2, enable=True)))   # no stack
    f.load([([1, 0], 1)])
    for period, guard in ((8, 8), (1, 0)):
        out = run(f, 20, **idle(2, enable=True, period=period, guard=guard))
        # config_error at once; the switch acts on the cycle before's good configuration
        # (and the stack just loaded) once more: a slot may start in cycle 1, none later
        assert all(o["config_error"] for o in out) and not any(o["sync"] for o in out[2:])
    f.load([([1, 1], 1)])                                                  # malformed
    assert not any(o["sync"] for o in run(f, 20, **idle(2, enable=True)))


def test_lowering_the_period_ends_the_slot_at_once():
    f = SlotFabric(2, 4)
    f.load([([1, 0], 1)])
    out = run(f, 30, **idle(2, enable=True, period=40, guard=2))
    assert out[1]["phase"] == 0 and not out[1]["sync"] and out[2]["sync"]  # enable acts late
    assert out[-1]["phase"] == 27
    out = run(f, 30, **idle(2, enable=True, period=10, guard=2))
    # T = 10 is acted on in the cycle after it is applied, at phase 29: that slot ends
    assert out[1]["phase"] == 29 and out[2]["phase"] == 0 and out[2]["sync"]
    assert max(o["phase"] for o in out[2:]) == 9
    starts = [k for k, o in enumerate(out) if o["sync"]]
    assert np.diff(starts).tolist() == [10] * (len(starts) - 1)


def test_a_dropped_sync_pulse_is_flagged_and_the_timer_carries_on():
    n, period = 2, 12
    f = SlotFabric(n, 4)
    f.load([([1, 0], 1)])
    kw = idle(n, period=period, delay=[3, 3])
    run(f, 10, **kw)
    run(f, 3 * period, **dict(kw, enable=True))
    windows = [o["window"][0] for o in run(f, 3 * period, **dict(kw, enable=True))]
    out = run(f, 3 * period, **dict(kw, enable=True, sync_drop=[True, False]))
    assert out[-1]["missed"] == [True, False]
    assert [o["window"][0] for o in out] == windows   # same windows without the pulses


@pytest.mark.parametrize("seed", range(12))
def test_every_launched_word_arrives_in_its_slot(seed):
    """The alignment claim of §6, checked from first principles on the model's outputs."""
    rng = np.random.default_rng(seed)
    n = 4
    guard = int(rng.integers(1, 6))
    period = int(rng.integers(guard + 3, 30))
    delays = [int(rng.integers(1, (period - 1) // 2 + 1)) for _ in range(n)]
    stack = [([int(j) for j in rng.permutation(n)], int(rng.integers(1, 3))) for _ in range(3)]
    f = SlotFabric(n, 8)
    f.load(stack)
    kw = dict(period=period, guard=guard, start=[True] * n, delay=delays,
              sync_drop=[False] * n)
    run(f, 2 * max(delays) + 4, enable=False, send=[(False, 0)] * n, **kw)
    t0 = None
    launched, delivered = [], []
    for t in range(12 * period):
        send = [(True, (t << 4) | i) for i in range(n)]
        out = f.cycle(enable=True, send=send, **kw)
        if t0 is None and out["sync"]:
            t0 = t
        for j, x in enumerate(out["tx"]):
            if x is not None:
                phase = (t - 1 - t0) % period
                assert phase >= guard, f"delivered in the guard time (phase {phase})"
                delivered.append((t, j, x))
        for i, word in enumerate(out["launch"]):
            if word is not None:
                launched.append((t, i, word.tag, word.data))
    assert launched and not any(f.switch.late)
    perms = slot_permutations(stack, 20)
    by_word = {x: (t, j) for t, j, x in delivered}
    for t, i, tag, data in launched:
        arrive = t + delays[i]            # launched words enter the fibre at t
        s, p = divmod(arrive - t0, period)
        if arrive + 1 >= 12 * period:     # still in flight when the run ends
            continue
        assert guard <= p and tag == s % TAG_MOD
        assert by_word[data] == (arrive + 1, perms[s][i])
