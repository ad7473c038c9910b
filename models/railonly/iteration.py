"""Training iteration time of a GPT model under PTD-P parallelism on HB domains joined by a
network (Rail-only appendix, eq 6-11), and the search for the best parallelisation.

For a strategy (t, p, d tensor/pipeline/data degrees; t_h, p_h, d_h the parts inside one HB
domain, t_l = t / t_h ...; micro-batch b, interleaving v, m = B / (d b) micro-batches):

    T_iter   = T_bubble + T_LS + T_sync                                          (6)
    T_bubble = (p - 1) t(b) / v                                                  (7)
             + 2 (p_l - 1) D_p / C_S + 2 p_l (p_h - 1) D_p / C_F                 (8)
    T_LS     = m t(b)                                                            (9)
             + 8 l m AGtime(D_t, t_h, t_l) / p + 2 m v D_p / C_*                 (10)
    T_sync   = 2 AGtime(D_d, d_h, d_l)                                           (11)

with D_p = 2 b h s / t, D_t = 2 b h s, D_d = 2 l S_T / (p t), C_* = C_S if p_l > 1 else C_F,
AGtime = eq 1 (:func:`models.railonly.collectives.ag_time`). ``t(b)`` is one micro-batch's
forward and backward on one GPU: its hardware FLOPs (selective recomputation, Korthikanti et
al.) over ``p t`` GPUs at ``efficiency`` x peak. The paper says to profile t(b); we take the
efficiency from the *full-recomputation* iteration time Korthikanti et al. measured for the
same model (:func:`calibrate_efficiency`), so the selective-recomputation times of Fig 7 are
predictions, not fits.

Constraints of a valid strategy (the appendix's exhaustive generator is not printed; these
are ours, stated): t p d = N; t divides the heads; p divides the layers; d divides B; b
divides B / d; v > 1 only when l / p is a multiple of v and m is a multiple of p (Megatron's
interleaved schedule); t_h p_h d_h = K (every HB domain full; K divides N); memory per GPU
= 16 bytes per parameter of its stage (16-bit weights and gradients, 32-bit Adam state and
master weights, no sharding) + 34 s b h / t bytes of activations per layer and micro-batch in
flight (selective recomputation with sequence parallelism), l layers' worth on the first
stage (x (1 + (p - 1) / (p v)) interleaved), within the platform's memory.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .collectives import ag_time
from .specs import GPT, KORTHIKANTI, MODELS, PLATFORMS, Measured, Platform

__all__ = ["Strategy", "iteration_time", "search", "calibrate_efficiency", "efficiency_of",
           "hfu", "divisors", "predicted_hfu"]

BYTES = 2   # 16-bit activations, weights and gradients
STATE_BYTES = 16
ACT_BYTES = 34


def divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


@dataclass(frozen=True)
class Strategy:
    t: int
    p: int
    d: int
    b: int
    v: int
    t_h: int
    p_h: int
    d_h: int

    def m(self, batch: int) -> int:
        return batch // (self.d * self.b)


def _arrays(cands: list[tuple]) -> dict:
    a = np.array(cands, dtype=np.int64).reshape(-1, 8)
    return {k: a[:, i].astype(float) for i, k in enumerate(("t", "p", "d", "b", "v",
                                                                "t_h", "p_h", "d_h"))}


#: Which measured run calibrates a model without one: the run with the same hidden size
#: (same GEMM shapes), else the nearest.
def _reference(model: GPT) -> Measured:
    return min(KORTHIKANTI, key=lambda r: abs(MODELS[r.model].hidden - model.hidden))


@functools.lru_cache(maxsize=None)
def calibrate_efficiency(model: str) -> float:
    """The compute efficiency (fraction of peak) at which the model's *full-recomputation*
    iteration time equals Korthikanti et al.'s measurement of the same model (its own
    parallelisation on 80 GB DGX A100s) -- t(b) profiled, as the paper advises, on a run
    other than the selective-recomputation runs Fig 7 predicts. A model without a
    measurement takes the efficiency of the measured model closest in hidden size."""
    gpt = MODELS[model] if model in MODELS else None
    if gpt is None:
        raise ValueError(f"unknown model {model!r}; models are {', '.join(MODELS)}")
    r = _reference(gpt)
    plat = PLATFORMS["dgx-a100"]
    lo, hi = 1e-3, 1.0   # the time falls monotonically as the efficiency rises
    for _ in range(60):
        mid = (lo + hi) / 2
        if _run_time(r, plat.with_(efficiency=mid), "full") > r.time_full:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def efficiency_of(plat: Platform, model: GPT) -> float:
    return plat.efficiency if plat.efficiency is not None else calibrate_efficiency(model.name)


def _run_time(r: Measured, plat: Platform, recompute: str) -> float:
    model = MODELS[r.model]
    s = Strategy(r.t, r.p, r.gpus // (r.t * r.p), r.micro, r.v, min(r.t, plat.hb), 1, 1)
    return float(iteration_time(model, plat, r.gpus, r.batch, s, recompute=recompute)["total"])


def iteration_time(model: GPT, plat: Platform, gpus: int, batch: int, strategy,
                   *, recompute: str = "selective", alpha: float = 0.0) -> dict:
    """Eq 6-11 for one :class:`Strategy` (or a dict of equal-length arrays, one entry per
    strategy field: vectorised). Returns the terms and ``total`` in seconds. ``alpha``: a
    latency per collective step (s), added to every ring step (the paper adds propagation
    delay without stating it; 0 by default)."""
    if isinstance(strategy, Strategy):
        st = {k: float(getattr(strategy, k)) for k in ("t", "p", "d", "b", "v", "t_h", "p_h",
                                                           "d_h")}
    else:
        st = strategy
    t, p, d, b, v = st["t"], st["p"], st["d"], st["b"], st["v"]
    t_h, p_h, d_h = st["t_h"], st["p_h"], st["d_h"]
    t_l, p_l, d_l = t / t_h, p / p_h, d / d_h
    h, s, l = model.hidden, model.seq, model.layers
    m = batch / (d * b)
    eta = efficiency_of(plat, model)
    tb = model.flops(1, recompute) * b / (p * t) / (plat.peak * eta)
    D_p = BYTES * b * h * s / t
    D_t = BYTES * b * h * s
    D_d = BYTES * l * model.block_params / (p * t)
    C_F, C_S = plat.C_F, plat.C_S
    C_star = np.where(p_l > 1, C_S, C_F)

    def ag(D, x, y):
        return ag_time(D, x, y, C_F, C_S) + alpha * ((x - 1) + (y - 1))

    bubble_comp = (p - 1) * tb / v
    bubble_comm = 2 * (p_l - 1) * D_p / C_S + 2 * p_l * (p_h - 1) * D_p / C_F
    ls_comp = m * tb
    ls_tp = 8 * l * m * ag(D_t, t_h, t_l) / p
    ls_pp = np.where(p > 1, 2 * m * v * D_p / C_star, 0.0)
    sync = 2 * ag(D_d, d_h, d_l)
    total = bubble_comp + bubble_comm + ls_comp + ls_tp + ls_pp + sync
    return {"bubble_comp": bubble_comp, "bubble_comm": bubble_comm, "ls_comp": ls_comp,
            "ls_tp": ls_tp, "ls_pp": ls_pp, "sync": sync, "total": total, "tb": tb, "m": m}


def _memory(model: GPT, st: dict, batch: int) -> np.ndarray:
    t, p, b, v, d = st["t"], st["p"], st["b"], st["v"], st["d"]
    m = batch / (d * b)
    stage_params = model.layers * model.block_params / p + (model.vocab * model.hidden / t
                                                            if True else 0)
    weights = STATE_BYTES * stage_params / t
    in_flight = np.minimum(p, m)
    inter = np.where(v > 1, 1 + (p - 1) / (p * v), 1.0)
    acts = ACT_BYTES * model.seq * b * model.hidden / t * (model.layers / p) * in_flight * inter
    return weights + acts


def candidates(model: GPT, gpus: int, batch: int, hb: int, *, max_micro: int = 8,
               max_v: int = 8) -> dict:
    """Every valid strategy (see the module docstring) as arrays."""
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise ValueError(f"gpus must be an int >= 1, not {gpus!r}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be an int >= 1, not {batch!r}")
    if isinstance(hb, bool) or not isinstance(hb, int) or hb < 1 or gpus % hb:
        raise ValueError(f"HB domain size {hb!r} must be an int >= 1 dividing gpus ({gpus})")
    rows = []
    for t in divisors(gpus):
        if model.heads % t:
            continue
        for p in divisors(gpus // t):
            if model.layers % p:
                continue
            d = gpus // (t * p)
            if batch % d:
                continue
            for b in divisors(batch // d):
                if b > max_micro:
                    break
                m = batch // (d * b)
                vs = [1] + [v for v in range(2, max_v + 1)
                            if p > 1 and (model.layers // p) % v == 0 and m % p == 0]
                for t_h in divisors(math.gcd(t, hb)):
                    for p_h in divisors(math.gcd(p, hb // t_h)):
                        d_h = hb // (t_h * p_h)
                        if d % d_h:
                            continue
                        rows += [(t, p, d, b, v, t_h, p_h, d_h) for v in vs]
    return _arrays(rows)


def search(model: GPT, plat: Platform, gpus: int, batch: int, hb: int | None = None,
           **kw) -> dict:
    """The fastest valid strategy: ``{"strategy": Strategy, "time": s, "terms": {...},
    "count": strategies considered}``. ``hb`` defaults to the platform's; ``hb = gpus`` is
    the ideal single HB domain. ValueError when no strategy fits in memory."""
    hb = plat.hb if hb is None else hb
    c = candidates(model, gpus, batch, hb, **{k: kw.pop(k) for k in ("max_micro", "max_v")
                                                   if k in kw})
    if not len(c["t"]):
        raise ValueError(f"{model.name} on {gpus} GPUs, batch {batch}, HB {hb}: no "
                         f"parallelisation divides evenly")
    fits = _memory(model, c, batch) <= plat.memory
    if not fits.any():
        raise ValueError(f"{model.name} on {gpus} GPUs, batch {batch}, HB {hb}: no "
                         f"parallelisation fits in {plat.memory / 1e9:g} GB per GPU")
    c = {k: v[fits] for k, v in c.items()}
    terms = iteration_time(model, plat, gpus, batch, c, **kw)
    i = int(np.argmin(terms["total"]))
    best = Strategy(*(int(c[k][i]) for k in ("t", "p", "d", "b", "v", "t_h", "p_h", "d_h")))
    return {"strategy": best, "time": float(terms["total"][i]),
            "terms": {k: float(np.asarray(v)[i]) if np.ndim(v) else float(v)
                      for k, v in terms.items()},
            "count": int(len(c["t"]))}


def hfu(model: GPT, plat: Platform, gpus: int, batch: int, time: float,
        recompute: str = "selective") -> float:
    """Hardware FLOPs utilisation of an iteration that took ``time`` seconds."""
    return model.flops(batch, recompute) / (time * gpus * plat.peak)


def predicted_hfu(r: Measured, plat: Platform | None = None) -> float:
    """The model's HFU for one of Korthikanti et al.'s selective-recomputation runs, with the
    run's own parallelisation (TP inside the DGX, PP and DP across)."""
    plat = plat or PLATFORMS["dgx-a100"]
    model = MODELS[r.model]
    return hfu(model, plat, r.gpus, r.batch, _run_time(r, plat, "selective"))
