"""Permutation stacks: ring collectives per parallel axis, Genstack log import, switch-local
permutations of a leaf/spine fabric, and the checker that guards them."""

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from aifabric.models.chronos.stack import (Collective, ParallelSpec, Slot, check_stack, compose_local,
                                  generate_stack, stack_from_genstack, switch_local,
                                  training_iteration)

SPECS = [ParallelSpec.of(16, tp=4, dp=4), ParallelSpec.of(16, tp=2, cp=2, pp=2, dp=2),
         ParallelSpec.of(24, tp=2, pp=3, dp=4), ParallelSpec.of(8, order=("dp", "tp"), dp=8)]


def test_hand_worked_four_gpus():
    # tp varies fastest: tp groups {0,1}, {2,3}; dp groups {0,2}, {1,3}.
    spec = ParallelSpec.of(4, tp=2, dp=2)
    stack = generate_stack(spec, [Collective("all_reduce", "dp", 1000),
                                  Collective("send_recv", "tp", 64)])
    assert [s.perm.tolist() for s in stack] == [[2, 3, 0, 1], [2, 3, 0, 1], [1, -1, 3, -1]]
    assert stack.bytes.tolist() == [500, 500, 64]


def test_ring_of_four_is_figure_1():
    stack = generate_stack(ParallelSpec.of(4, dp=4), [Collective("reduce_scatter", "dp", 40)])
    assert [s.perm.tolist() for s in stack] == [[1, 2, 3, 0]] * 3
    assert stack.bytes.tolist() == [10] * 3


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_training_iteration_checks_out(spec):
    cols = training_iteration(spec, layers=6 if "pp', 3" in str(spec) else 4,
                              params_per_layer=10_000, hidden=32, seq_len=16, microbatches=2)
    stack = generate_stack(spec, cols)
    check_stack(stack, spec, cols)
    # Ring volume: each rank sends (steps x chunk) per call, counted independently.
    expected = 0
    for c in cols:
        g = dict(spec.degrees).get(c.axis, 1)
        if g == 1:
            continue
        if c.op == "send_recv":
            expected += spec.n // g * (g - 1) * c.bytes
        else:
            steps = 2 * (g - 1) if c.op == "all_reduce" else g - 1
            expected += spec.n * steps * -(-c.bytes // g)
    assert stack.total_bytes() == expected


def test_all_to_all_and_broadcast():
    spec = ParallelSpec.of(6, ep=3, dp=2, order=("ep", "dp"))
    cols = [Collective("all_to_all", "ep", 30), Collective("broadcast", "dp", 8)]
    stack = generate_stack(spec, cols)
    check_stack(stack, spec, cols)
    assert [s.perm.tolist() for s in stack] == [[1, 2, 0, 4, 5, 3], [2, 0, 1, 5, 3, 4],
                                                [3, 4, 5, -1, -1, -1]]


def test_checker_catches_every_corruption():
    spec = ParallelSpec.of(8, tp=2, dp=4)
    cols = [Collective("all_reduce", "dp", 4096), Collective("all_gather", "tp", 100)]
    good = generate_stack(spec, cols)
    check_stack(good, spec, cols)

    def broken(edit):
        stack = generate_stack(spec, cols)
        edit(stack.slots)
        with pytest.raises(ValueError):
            check_stack(stack, spec, cols)

    broken(lambda s: s.pop(2))                                    # a ring step missing
    broken(lambda s: s.insert(1, s[0]))                           # delivered twice
    broken(lambda s: s.__setitem__(0, replace(s[0], bytes=4095)))  # wrong chunk
    perm = good.slots[1].perm.copy()
    perm[[0, 1]] = perm[[1, 0]]
    broken(lambda s: s.__setitem__(1, replace(s[1], perm=perm)))   # wrong destination
    clash = good.slots[0].perm.copy()
    clash[0] = clash[1]
    broken(lambda s: s.__setitem__(0, replace(s[0], perm=clash)))  # not a permutation


def test_spec_errors():
    with pytest.raises(ValueError, match=r"degrees tp=4 x cp=1 x pp=1 x dp=3 = 12 do not "
                                         r"match N = 16 accelerators"):
        ParallelSpec.of(16, tp=4, dp=3)
    with pytest.raises(ValueError, match=r"parallelism \['xp'\] not in order"):
        ParallelSpec.of(4, xp=4)
    with pytest.raises(ValueError, match="unknown parallelism axis 'ep'"):
        generate_stack(ParallelSpec.of(4, tp=4), [Collective("all_reduce", "ep", 8)])
    with pytest.raises(ValueError, match="unknown collective 'gather'"):
        Collective("gather", "tp", 8)


def genstack_log(spec, cols):
    """The log every rank would write for these calls (one event per rank and call)."""
    events = []
    for call, c in enumerate(cols, start=1):
        for group in spec.groups(c.axis):
            for _rank in group:
                events.append({"op": c.op, "call_id": call, "ranks": group.tolist(),
                               "shape": [c.bytes // 2], "dtype": "torch.bfloat16",
                               "reduce_op": "SUM"})
    return events


def test_genstack_log_gives_the_generated_stack(tmp_path):
    spec = ParallelSpec.of(16, tp=4, dp=4)
    cols = [Collective("all_reduce", "tp", 2048), Collective("reduce_scatter", "dp", 512),
            Collective("all_gather", "dp", 512), Collective("all_to_all", "tp", 64)]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(genstack_log(spec, cols)))
    imported = stack_from_genstack(path)
    generated = generate_stack(spec, cols)
    np.testing.assert_array_equal(imported.perms, generated.perms)
    np.testing.assert_array_equal(imported.bytes, generated.bytes)


def test_genstack_paper_example_and_send_recv():
    log = [[{"op": "broadcast", "call_id": 1, "ranks": [0, 1], "shape": [1024, 4096],
             "dtype": "float16"},
            {"op": "all_reduce", "call_id": 2, "ranks": [0, 1, 2, 3], "shape": [1024, 4096],
             "dtype": "float16", "reduce_op": "MIN"}],
           [{"op": "send", "call_id": 3, "ranks": [1, 3], "shape": [8], "dtype": "float32"},
            {"op": "recv", "call_id": 3, "ranks": [1, 3], "shape": [8], "dtype": "float32"},
            {"op": "barrier", "call_id": 4, "ranks": [0, 1, 2, 3]}]]
    stack = stack_from_genstack(log)
    assert stack.n == 4
    assert [s.perm.tolist() for s in stack][:2] == [[1, -1, -1, -1], [1, 2, 3, 0]]
    assert stack.bytes.tolist() == [2 * 1024 * 4096] + [2 * 1024 * 1024] * 6 + [32]
    assert stack.slots[-1].perm.tolist() == [-1, 3, -1, -1]


@pytest.mark.parametrize("log,message", [
    ("[{", "not valid JSON"),
    ('{"op": "all_reduce"}', "a JSON list of events"),
    ('[{"op": "all_reduce", "ranks": [0, 1]}]', "event 0: missing key 'call_id'"),
    ('[{"op": "gather", "call_id": 1, "ranks": [0, 1], "shape": [2], "dtype": "float32"}]',
     "unknown op 'gather'"),
    ('[{"op": "all_reduce", "call_id": 1, "ranks": [0, 0], "shape": [2], "dtype": "float32"}]',
     "distinct non-negative integers"),
    ('[{"op": "all_reduce", "call_id": 1, "ranks": [0, 1], "shape": [2], "dtype": "complex7"}]',
     "unknown dtype 'complex7'"),
    ('[{"op": "all_reduce", "call_id": 1, "ranks": [0, 1], "shape": [2], "dtype": "int8"},'
     ' {"op": "all_reduce", "call_id": 1, "ranks": [1, 2], "shape": [2], "dtype": "int8"}]',
     "rank groups overlap"),
    ('[{"op": "all_reduce", "call_id": 1, "ranks": [0, 1], "shape": [2], "dtype": "int8"},'
     ' {"op": "all_gather", "call_id": 1, "ranks": [2, 3], "shape": [2], "dtype": "int8"}]',
     "disagree on the op"),
])
def test_genstack_bad_logs(log, message):
    with pytest.raises(ValueError, match=message):
        stack_from_genstack(log)


def test_genstack_missing_file(tmp_path):
    with pytest.raises(ValueError, match="cannot read Genstack log"):
        stack_from_genstack(tmp_path / "nope.json")


@st.composite
def leaf_permutations(draw):
    leaf_size = draw(st.sampled_from([1, 2, 4, 8]))
    n = leaf_size * draw(st.integers(1, 8))
    perm = np.array(draw(st.permutations(range(n))))
    perm[draw(arrays(np.bool_, n))] = -1
    perm[perm == np.arange(n)] = -1
    return leaf_size, perm


@given(leaf_permutations())
def test_switch_local_carries_every_permutation(case):
    leaf_size, perm = case
    local = switch_local(perm, leaf_size)
    for table in (*local.leaf, *local.spine):
        active = table[table >= 0]
        assert len(set(active.tolist())) == len(active)
    np.testing.assert_array_equal(compose_local(local), perm)
    same_leaf = sum(1 for s, d in enumerate(perm) if d >= 0 and s // leaf_size == d // leaf_size)
    assert local.local_transfers == same_leaf


def test_switch_local_full_shift_uses_every_spine():
    # 8 accelerators, leaves of 4, everyone sends to the other leaf: all 4 spines busy.
    perm = (np.arange(8) + 4) % 8
    local = switch_local(perm, 4)
    assert (local.spine >= 0).all()
    assert local.local_transfers == 0


def test_switch_local_errors():
    with pytest.raises(ValueError, match="multiple of leaf_size 4"):
        switch_local(np.arange(6)[::-1], 4)
    with pytest.raises(ValueError, match="two sources send to the same destination"):
        switch_local(np.array([1, 1, -1, -1]), 2)


def test_stack_unique_permutations():
    spec = ParallelSpec.of(8, tp=2, dp=4)
    stack = generate_stack(spec, [Collective("all_reduce", "dp", 64)] * 3)
    uniq, index = stack.unique()
    assert len(uniq) == 1 and len(index) == 18 and (index == 0).all()
    assert isinstance(stack.slots[0], Slot)


def test_stack_switch_local_per_slot():
    from aifabric.models.chronos.stack import stack_switch_local
    spec = ParallelSpec.of(16, tp=4, dp=4)
    cols = [Collective("all_reduce", "tp", 64), Collective("all_gather", "dp", 64)]
    stack = generate_stack(spec, cols)
    local = stack_switch_local(stack, leaf_size=4)
    assert len(local) == len(stack)
    for slot, lp in zip(stack, local):
        np.testing.assert_array_equal(compose_local(lp), slot.perm)
    # Leaves of 4 hold the tp groups: tp rings stay on their leaf, dp rings all go up.
    assert local[0].local_transfers == 16 and (local[0].spine < 0).all()
    assert local[-1].local_transfers == 0 and (local[-1].spine >= 0).all()
