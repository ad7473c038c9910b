"""The BvN engine's batched step checks (``cosim.batch_bvn.StepBatch``), on steps encoded with
the documented payload layout (``cosim.codec.encode_step``): the model's own decomposition
passes, and each kind of wrong step fails with the per-step message and the cycle it was
taken in, wherever it falls in a batch."""

from types import SimpleNamespace

import numpy as np
import pytest

from aifabric.cosim.batch import BatchFailure
from aifabric.cosim.batch_bvn import StepBatch
from aifabric.cosim.codec import encode_step, step_bits
from aifabric.cosim.test_bvn import StepChecker
from aifabric.models.chronos.bvn import decompose

N, W = 6, 8


def _matrix(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mat = rng.integers(0, 20, size=(N, N))
    mat[rng.random((N, N)) < 0.3] = 0
    return mat


def _steps(expect, n=N):
    perms = np.asarray(expect.perms).reshape(-1, n)
    k = len(perms)
    return [(list(map(int, perms[i])), int(expect.weights[i]), i == k - 1) for i in range(k)]


def _run(mat, expect, steps, every):
    """Feed ``steps`` ((perm, weight, last) each) taken at cycles 100, 103, 106, ..."""
    batch = StepBatch(mat, expect, N, W, label="random matrix", checker=StepChecker,
                      every=every)
    width = step_bits(N, W)
    for k, (perm, weight, last) in enumerate(steps):
        batch.add(100 + 3 * k, format(encode_step(perm, weight, last, N, W), f"0{width}b"))
    batch.finish(100 + 3 * len(steps) + 5)
    return batch


@pytest.mark.parametrize("every", [1, 4, 256])
def test_the_models_decomposition_passes(every):
    for seed in range(5):
        mat = _matrix(seed)
        expect = decompose(mat, "wavefront")
        batch = _run(mat, expect, _steps(expect), every)
        assert batch.count == len(expect.weights) and not batch.resid.any()


def _drop_one(step):
    perm, weight, last = step
    i = next(i for i, j in enumerate(perm) if j >= 0)
    perm = list(perm)
    perm[i] = -1
    return perm, weight, last


def _twice(step):
    perm, weight, last = step
    rows = [i for i, j in enumerate(perm) if j >= 0]
    perm = list(perm)
    if len(rows) >= 2:
        perm[rows[1]] = perm[rows[0]]
    else:                                   # one matched input: give an idle one its output
        perm[(rows[0] + 1) % N] = perm[rows[0]]
    return perm, weight, last


def _outside(step):
    """A destination field holding no output (N = 6 leaves 6 and 7 in its 3 bits)."""
    perm, weight, last = step
    i = next(i for i, j in enumerate(perm) if j >= 0)
    perm = list(perm)
    perm[i] = 7
    return perm, weight, last


# (how the step is spoiled, what the per-step message says)
SPOILERS = {
    "output out of range": (_outside, "output out of range"),
    "dropped connection": (_drop_one, "not maximal"),
    "output twice": (_twice, "output used twice"),
    "weight zero": (lambda s: (s[0], 0, s[2]), "weight 0 vs"),
    "weight above the entry": (lambda s: (s[0], s[1] + 200, s[2]), "weight"),
    "last too early": (lambda s: (s[0], s[1], True), "last=True"),
    "empty": (lambda s: ([-1] * N, s[1], s[2]), "empty permutation"),
}


@pytest.mark.parametrize("model", ["right", "wrong too"])
@pytest.mark.parametrize("every", [1, 3, 256])
@pytest.mark.parametrize("name", sorted(SPOILERS))
def test_a_wrong_step_fails_with_its_message_and_cycle(name, every, model):
    """``model="wrong too"``: the model's steps are the spoiled ones, so only the checks on
    the RTL's steps alone (the residual's invariants) can find the fault."""
    spoil, says = SPOILERS[name]
    mat = _matrix(7)
    expect = decompose(mat, "wavefront")
    steps = _steps(expect)
    assert len(steps) > 4
    k = 2 if name != "last too early" else 1
    steps[k] = spoil(steps[k])
    if model == "wrong too":
        expect = SimpleNamespace(perms=np.array([p for p, _, _ in steps]),
                                 weights=np.array([w for _, w, _ in steps]))
    with pytest.raises(BatchFailure) as info:
        _run(mat, expect, steps, every)
    message = str(info.value)
    assert message.startswith(f"cycle {100 + 3 * k}: "), message
    assert says in message and f"step {k}" in message, message


def test_a_valid_but_different_decomposition_names_the_models_step():
    """Steps that keep every invariant but are not the model's (another maximal matching)
    fail on the comparison with the model, at the first step that differs."""
    mat = np.array([[1, 1], [1, 1]])
    expect = decompose(mat, "wavefront")
    model = _steps(expect, 2)
    other = [([1 - j if j >= 0 else -1 for j in perm], w, last) for perm, w, last in model]
    assert other != model
    batch = StepBatch(mat, expect, 2, W, label="random matrix", checker=StepChecker)
    width = step_bits(2, W)
    for k, (perm, weight, last) in enumerate(other):
        batch.add(50 + k, format(encode_step(perm, weight, last, 2, W), f"0{width}b"))
    with pytest.raises(BatchFailure, match=r"^cycle 50: random matrix, step 0: RTL \[1, 0\] "
                                           r"x1, model \[0, 1\] x1$"):
        batch.finish(60)


def test_steps_that_do_not_empty_the_matrix_fail_at_the_frames_end():
    mat = _matrix(3)
    expect = decompose(mat, "wavefront")
    steps = _steps(expect)[:-1]
    with pytest.raises(BatchFailure, match=r"^cycle 999: random: \d+ steps, model \d+$"):
        batch = StepBatch(mat, expect, N, W, label="random matrix", checker=StepChecker)
        width = step_bits(N, W)
        for k, (perm, weight, last) in enumerate(steps):
            batch.add(k, format(encode_step(perm, weight, last, N, W), f"0{width}b"))
        batch.finish(999)


def _first_line(error) -> str:
    """An assertion's message (pytest's rewriting appends what it evaluated, with object
    addresses, on the lines after)."""
    return str(error).split("\n")[0]


def _reference(mat, expect, steps):
    """The per-step checks, one step at a time (``StepChecker``, then the model's step):
    the message of the first failure with its step's cycle, the frame-end checks after."""
    checker = StepChecker(np.asarray(mat))
    perms = np.asarray(expect.perms).reshape(-1, N)
    for k, (perm, weight, last) in enumerate(steps):
        try:
            checker.check(list(perm), weight, last)
            if k < len(perms):
                mp, mw = perms[k].tolist(), int(expect.weights[k])
                assert list(perm) == mp and weight == mw, (
                    f"random matrix, step {k}: RTL {list(perm)} x{weight}, model {mp} x{mw}")
        except AssertionError as e:
            return f"cycle {100 + 3 * k}: {_first_line(e)}"
    if len(steps) != len(perms):
        return f"cycle {100 + 3 * len(steps) + 5}: random: {len(steps)} steps, model {len(perms)}"
    if checker.resid.any():
        return f"cycle {100 + 3 * len(steps) + 5}: steps do not sum to the loaded matrix"
    return None


@pytest.mark.parametrize("every", [1, 5, 256])
def test_batches_agree_with_the_per_step_checks_on_random_faults(every):
    """Random decompositions, each spoiled at random (a step's connection moved, dropped or
    added, its weight changed, its last flag flipped, a step inserted or deleted), against
    the model or against a model wrong the same way: the batch raises exactly what the
    per-step checks raise first, or passes where they pass."""
    rng = np.random.default_rng(11)
    outcomes = set()
    for case in range(150):
        mat = _matrix(1000 + case)
        expect = decompose(mat, "wavefront")
        steps = _steps(expect)
        k = int(rng.integers(len(steps)))
        perm, weight, last = steps[k]
        perm = list(perm)
        kind = int(rng.integers(7))
        if kind == 0:
            perm[int(rng.integers(N))] = int(rng.integers(-1, 8))
        elif kind == 1:
            weight = max(0, weight + int(rng.choice([-2, -1, 1, 2])))
        elif kind == 2:
            last = not last
        elif kind == 3:
            steps.insert(k, (perm, weight, last))
        elif kind == 4:
            del steps[k]
        elif kind == 5:
            i, j = rng.choice(N, 2, replace=False)
            perm[i], perm[j] = perm[j], perm[i]
        if kind not in (3, 4):
            steps[k] = (perm, weight, last)
        if rng.random() < 0.5:                  # the model wrong the same way
            expect = SimpleNamespace(perms=np.array([p for p, _, _ in steps]).reshape(-1, N),
                                     weights=np.array([w for _, w, _ in steps]))
        want = _reference(mat, expect, steps)
        try:
            _run(mat, expect, steps, every)
            got = None
        except BatchFailure as e:
            got = _first_line(e)
        assert got == want, (case, kind, k)
        outcomes.add(want is None or want.split(": ", 2)[1].split(",")[0])
    assert len(outcomes) >= 4, outcomes           # passes and several kinds of failure
