"""DCQCN tuning (§8.1): the search starts from the defaults and never returns worse, the tuned
parameters are the six the paper names, and bad budgets are refused."""

import numpy as np
import pytest

from aifabric.models.chronos.packet import DCQCN, dcqcn_completion
from aifabric.models.chronos.tuning import TUNED, params_from, tune_dcqcn

LINK = 800e9


def small_matrices(count):
    rng = np.random.default_rng(3)
    out = []
    for _ in range(count):
        d = rng.integers(1, 4, (4, 4)) * 2_000_000     # an incast-heavy 4 x 4, MB-sized
        d[:, 0] *= 4
        np.fill_diagonal(d, 0)
        out.append(d.astype(np.int64))
    return out


def test_tuning_starts_from_the_defaults_and_keeps_the_best():
    train = small_matrices(2)
    t = tune_dcqcn(train, LINK, trials=6, seed=1, progress=False)
    default = np.mean([dcqcn_completion(d, LINK, seed=1 + k) for k, d in enumerate(train)])
    assert t.history[0] == pytest.approx(default, rel=1e-12)     # trial 0: the defaults
    assert t.best_train_s == min(t.history) <= t.default_train_s == t.history[0]
    assert t.trials == 6 and t.train == 2 and t.simulations == 12
    tuned = np.mean([dcqcn_completion(d, LINK, params=t.params, seed=1 + k)
                     for k, d in enumerate(train)])
    assert tuned == pytest.approx(t.best_train_s, rel=1e-12)     # the params it reports
    changed = t.changed()
    assert set(changed) == set(TUNED)
    # everything else keeps its default
    for name in ("cnp_interval", "rate_timer", "byte_counter", "pfc_xoff", "mtu"):
        assert getattr(t.params, name) == getattr(DCQCN(), name)


def test_params_from():
    p = params_from({"k_min": 1e4, "k_max_ratio": 3.0, "g": 0.1})
    assert p.k_min == 1e4 and p.k_max == 3e4 and p.g == 0.1 and p.p_max == DCQCN().p_max
    with pytest.raises(ValueError, match="not a tuned DCQCN parameter: mtu"):
        params_from({"mtu": 9000})
    with pytest.raises(ValueError, match="k_min < k_max"):
        params_from({"k_min": 1e6, "k_max": 1e5})


@pytest.mark.parametrize("trials", [0, -1, 2.5, True])
def test_tune_rejects_bad_trials(trials):
    with pytest.raises(ValueError, match="'trials' must be an int >= 1"):
        tune_dcqcn(small_matrices(1), LINK, trials=trials, progress=False)


def test_tune_needs_matrices():
    with pytest.raises(ValueError, match="'train' must hold at least one matrix"):
        tune_dcqcn([], LINK, trials=1, progress=False)
