"""DCQCN tuned as Chronos §8.1 tuned it: the six parameters the paper names (K_min, K_max,
P_max, R_AI, R_HAI, g) searched with a hyperparameter optimiser (Optuna's TPE sampler, seeded)
to minimise the mean all-to-all completion time on a *training* set of MoE matrices; the
comparison with the circuit switch is then run on a disjoint *test* set (other seeds).

Search space (log-uniform; rates at the 800 Gb/s link, bytes of switch queue):
``k_min`` 1 KB .. 2 MB; ``k_max`` = ``k_min`` x 1.2 .. 100; ``p_max`` 0.001 .. 1;
``r_ai`` 5 Mb/s .. 40 Gb/s; ``r_hai`` 10 Mb/s .. 200 Gb/s; ``g`` 1/1024 .. 1/2. The other
DCQCN parameters (timers, byte counter, PFC thresholds) keep their defaults. A trial whose
simulation does not finish within ``limit_s`` of simulated time scores ``limit_s``.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, replace

import numpy as np

from .packet import DCQCN, dcqcn_completion

__all__ = ["TUNED", "Tuning", "tune_dcqcn", "params_from"]

# The six parameters the paper tunes, as names of DCQCN fields.
TUNED = ("k_min", "k_max", "p_max", "r_ai", "r_hai", "g")


@dataclass(frozen=True)
class Tuning:
    """The best parameters found, with what it took: ``trials`` objective evaluations on
    ``train`` matrices each (``simulations`` DCQCN runs), the best mean completion (s) and the
    default parameters' mean on the same training set."""

    params: DCQCN
    trials: int
    train: int
    simulations: int
    best_train_s: float
    default_train_s: float
    history: tuple[float, ...]

    def changed(self) -> dict[str, tuple[float, float]]:
        """{name: (default, tuned)} for the six tuned parameters."""
        d, t = asdict(DCQCN()), asdict(self.params)
        return {k: (d[k], t[k]) for k in TUNED}


def params_from(values: dict) -> DCQCN:
    """A DCQCN with the six tuned fields from ``values`` (``k_max`` may be given as
    ``k_max_ratio`` times ``k_min``)."""
    v = dict(values)
    if "k_max_ratio" in v:
        v["k_max"] = v.pop("k_max_ratio") * v["k_min"]
    unknown = set(v) - set(TUNED)
    if unknown:
        raise ValueError(f"not a tuned DCQCN parameter: {', '.join(sorted(unknown))}; "
                         f"tuned: {', '.join(TUNED)}")
    return replace(DCQCN(), **v)


def _mean_completion(mats, link_bps, params, limit_s, seed) -> float:
    total = 0.0
    for k, d in enumerate(mats):
        try:
            total += dcqcn_completion(d, link_bps, params=params, seed=seed + k,
                                      max_time_s=limit_s)
        except RuntimeError:           # did not finish within limit_s
            total += limit_s
    return total / len(mats)


def tune_dcqcn(train: list[np.ndarray], link_bps: float, *, trials: int = 100, seed: int = 0,
               limit_s: float = 0.25, progress: bool = True) -> Tuning:
    """Search the six parameters with Optuna's TPE sampler (``seed``), ``trials`` evaluations,
    each the mean completion over the ``train`` matrices (the k-th matrix's ECN marking draws
    seeded with ``seed + k``, the same in every trial). The first trial is the defaults, so
    the result is never worse than them on the training set."""
    import optuna
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"'trials' must be an int >= 1, not {trials!r}")
    if not train:
        raise ValueError("'train' must hold at least one matrix")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    default = DCQCN()

    def objective(trial) -> float:
        values = {
            "k_min": trial.suggest_float("k_min", 1e3, 2e6, log=True),
            "k_max_ratio": trial.suggest_float("k_max_ratio", 1.2, 100.0, log=True),
            "p_max": trial.suggest_float("p_max", 1e-3, 1.0, log=True),
            "r_ai": trial.suggest_float("r_ai", 5e6, 40e9, log=True),
            "r_hai": trial.suggest_float("r_hai", 10e6, 200e9, log=True),
            "g": trial.suggest_float("g", 1 / 1024, 0.5, log=True),
        }
        return _mean_completion(train, link_bps, params_from(values), limit_s, seed)

    study = optuna.create_study(direction="minimize",
                                sampler=optuna.samplers.TPESampler(seed=seed))
    study.enqueue_trial({"k_min": default.k_min, "k_max_ratio": default.k_max / default.k_min,
                         "p_max": default.p_max, "r_ai": default.r_ai, "r_hai": default.r_hai,
                         "g": default.g})
    from tqdm import tqdm
    bar = tqdm(total=trials, desc="DCQCN tuning", disable=None if progress else True,
               file=sys.stderr)
    study.optimize(objective, n_trials=trials, callbacks=[lambda s, t: bar.update(1)])
    bar.close()
    history = tuple(float(t.value) for t in study.trials)
    return Tuning(params=params_from(study.best_params), trials=trials, train=len(train),
                  simulations=trials * len(train), best_train_s=float(study.best_value),
                  default_train_s=history[0], history=history)
