"""The cycle-level slot/crossbar model on its own: stack rules, fibre delays, round-trip
measurement, and the alignment property (every word launched in a window reaches the
scheduled output in that slot's data phase) over random configurations."""

import numpy as np
import pytest

from models.chronos.slotsync import TAG_MOD, Fibre, SlotFabric, Switch, expected_permutations


def test_expected_permutations_skips_hold_zero_and_repeats():
    a, b, c = [1, 0], [0, 1], [-1, 0]
    assert expected_permutations([(a, 2), (b, 0), (c, 1)], 7) == [a, a, c, a, a, c, a]
    assert expected_permutations([(a, 0)], 3) == []


def test_switch_load_drops_hold_zero_and_overflows():
    sw = Switch(2, depth=2)
    sw.load([([0, 1], 0), ([1, 0], 1), ([0, 1], 3)])
    assert sw.stack == [([1, 0], 1), ([0, 1], 3)] and not sw.overflow
    sw.load([([0, 1], 1)] * 3)
    assert len(sw.stack) == 2 and sw.overflow


def test_fibre_delays_by_d_cycles():
    f = Fibre(0)
    seen = []
    for t in range(10):
        seen.append(f.seen(3))
        f.push(t + 1)
    assert seen == [0, 0, 0, 1, 2, 3, 4, 5, 6, 7]
    assert Fibre(0).seen(0) == Fibre(0).seen(1)


def run(fabric, cycles, **kw):
    return [fabric.cycle(**kw) for _ in range(cycles)]


@pytest.mark.parametrize("delay", [1, 4, 9])
def test_round_trip_is_2d_plus_1(delay):
    f = SlotFabric(2, 4)
    f.load([([1, 0], 1)])
    run(f, 2 * delay + 4, period=32, guard=2, enable=False, start=[True, True],
        delay=[delay, delay], sync_drop=[False, False], send=[(False, 0)] * 2)
    assert [e.rtt for e in f.endpoints] == [2 * delay + 1] * 2


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
        for i in range(n):
            if out["window"][i]:
                launched.append((t, i, out["window_tag"][i]))
    assert not any(f.switch.late)
    perms = expected_permutations(stack, 20)
    by_word = {x: (t, j) for t, j, x in delivered}
    for t, i, tag in launched:
        arrive = t + 1 + delays[i]
        s, p = divmod(arrive - t0, period)
        if arrive + 1 >= 12 * period:  # still in flight when the run ends
            continue
        assert guard <= p and tag == s % TAG_MOD
        assert by_word[(t << 4) | i] == (arrive + 1, perms[s][i])
    assert len(delivered) == len([w for w in launched if (w[0] << 4 | w[1]) in by_word])
