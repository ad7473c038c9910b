"""Training iteration time of a GPT model under PTD-P parallelism on HB domains joined by a
network (Rail-only appendix, eq 6-11), and the search for the best parallelisation. Shared:
Rail-only's Figs 7-10 and InfiniteHBD's Table 2 (:mod:`models.infinitehbd.mfu`) both run it.

For a strategy (t, p, d tensor/pipeline/data degrees; t_h, p_h, d_h the parts inside one HB
domain, t_l = t / t_h ...; micro-batch b, interleaving v, m = B / (d b) micro-batches):

    T_iter   = T_bubble + T_LS + T_sync                                          (6)
    T_bubble = (p - 1) t(b) / v                                                  (7)
             + 2 (p_l - 1) D_p / C_S + 2 p_l (p_h - 1) D_p / C_F                 (8)
    T_LS     = m t(b)                                                            (9)
             + 8 l m AGtime(D_t, t_h, t_l) / p + 2 m v D_p / C_*                 (10)
    T_sync   = 2 AGtime(D_d, d_h, d_l)                                           (11)

with D_p = 2 b h s / t, D_t = 2 b h s, D_d = 2 l S_T / (p t), C_* = C_S if p_l > 1 else C_F,
AGtime = eq 1 (:func:`models.common.collectives.ag_time`). The paper adds a propagation
delay it does not state (§A: "we also consider the propagation delay"): every collective
level pays ``alpha`` per step (a ring of x GPUs: x - 1 steps; a tree: ceil(log2 x)), every
pipeline send one ``alpha``.

``t(b)`` is one micro-batch's forward and backward on one GPU: its hardware FLOPs (Korthikanti
et al.'s count for the recomputation policy) over ``p t`` GPUs at ``efficiency`` x peak. The
paper says to profile t(b); we calibrate ONE efficiency (:func:`calibrate_efficiency`) on ONE
measured run, Korthikanti et al.'s GPT-1T with full recomputation (94.42 s on 512 A100s), and
use it for every other model and platform: Fig 7's four selective-recomputation HFUs are
predictions, not fits.

The choices the paper leaves open are the fields of :class:`Knobs` (defaults and reasons
there). Constraints of a valid strategy (the appendix's generator is not printed; these are
ours, stated): t p d = N; t divides the heads; p divides the layers; d divides B; b divides
B / d and b <= ``max_micro``; v > 1 only when l / p is a multiple of v and m is a multiple of
p (Megatron's interleaved schedule); t_h p_h d_h = K (every HB domain full; K divides N);
with ``tp="hb"`` t_h = t; memory per GPU of the first pipeline stage (the fullest: it holds
the input embedding and the most micro-batches in flight) within the platform's memory.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields, replace

import numpy as np

from .collectives import ag_time
from .specs import GPT, KORTHIKANTI, MODELS, PLATFORMS, Measured, Platform

__all__ = ["Strategy", "Knobs", "DEFAULT", "iteration_time", "search", "candidates",
           "calibrate_efficiency", "fit_efficiency", "efficiency_of", "hfu", "divisors",
           "predicted_hfu", "CALIBRATION", "memory", "run_time", "FIELDS"]

BYTES = 2   # 16-bit activations, weights and gradients


def divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


@dataclass(frozen=True)
class Knobs:
    """The settings the paper leaves open, each with its default and the reason for it.

    ``tp``: where tensor parallelism may go. ``"any"`` (default): t_h may be any divisor of
    t, TP may span HB domains -- the paper's own formulation (Table III splits t into t_h x
    t_l; eq 10 evaluates AGtime(D, t_h, t_l)) and its generator enumerates "all the possible
    parallelization configurations". ``"hb"``: TP only inside an HB domain (t_h = t), as
    Megatron practice places it.

    ``zero``: optimizer-state sharding in the memory model. ``0`` (default): 16 bytes per
    parameter on every data-parallel replica (16-bit weights and gradients, 32-bit master
    weights and Adam moments), as in Korthikanti et al.'s runs that Fig 7 checks against
    (Calculon's validation inputs for them: "optimizer_sharding": false). ``1``: the 12
    bytes of 32-bit state sharded over the d replicas (ZeRO-1 / Megatron's distributed
    optimizer), 4 + 12 / d bytes per parameter.

    ``alpha_hb``, ``alpha_nic``: latency per collective step and per pipeline send, in s.
    Defaults 1 us (HB domain) and 2 us (network): Calculon's system files (calculon-ai/
    calculon, systems/a100_80g.json and h100_80g_nvl256.json, "latency"), the model the
    paper says its own follows (§V-A).

    ``algo``: the latency schedule of each collective level. ``"tree"`` (default): ceil(log2
    x) steps for x GPUs at eq 1's bandwidth term -- what a switched domain runs (NCCL's
    trees, NVLink SHARP); a flat ring over an ideal 32,768-GPU domain would pay 32,767
    steps. ``"ring"``: x - 1 steps.

    ``max_micro``: the largest micro-batch the search tries (default 8: Korthikanti et al.
    use 1 to 4; larger ones never win once m < p).

    ``recompute``: activation recomputation, ``"selective"`` (default: the policy of the
    runs of Fig 7, with sequence parallelism), ``"full"`` or ``"none"``; sets both t(b)'s
    hardware FLOPs and the activation memory.

    ``placement``: the order of pipeline stages on a Rail-only network (used with
    ``network="rail-only"``, see :mod:`.placement`). ``"snake"`` (default): the p_h stages of
    an HB domain run forward in even domains and backward in odd ones, so the GPU ending a
    domain's stages and the GPU starting the next domain's share a local rank (a rail) and no
    pipeline send needs forwarding. ``"linear"``: Megatron's rank order, where each domain
    boundary goes from local rank p_h - 1 to 0 and is forwarded through the HB domain.
    """

    tp: str = "any"
    zero: int = 0
    alpha_hb: float = 1e-6
    alpha_nic: float = 2e-6
    algo: str = "tree"
    max_micro: int = 8
    recompute: str = "selective"
    placement: str = "snake"

    def __post_init__(self) -> None:
        if self.tp not in ("any", "hb"):
            raise ValueError(f"tp must be 'any' or 'hb', not {self.tp!r}")
        if self.zero not in (0, 1):
            raise ValueError(f"zero must be 0 or 1, not {self.zero!r}")
        for name in ("alpha_hb", "alpha_nic"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1:
                raise ValueError(f"{name} must be a latency in seconds in [0, 1), not {v!r}")
        if self.algo not in ("ring", "tree"):
            raise ValueError(f"algo must be 'ring' or 'tree', not {self.algo!r}")
        if isinstance(self.max_micro, bool) or not isinstance(self.max_micro, int) \
                or self.max_micro < 1:
            raise ValueError(f"max_micro must be an int >= 1, not {self.max_micro!r}")
        if self.recompute not in ("selective", "full", "none"):
            raise ValueError(f"recompute must be 'none', 'selective' or 'full', not "
                             f"{self.recompute!r}")

        if self.placement not in ("snake", "linear"):
            raise ValueError(f"placement must be 'snake' or 'linear', not {self.placement!r}")

    def with_(self, **kw) -> "Knobs":
        return replace(self, **kw)

    def describe(self) -> str:
        return ", ".join(f"{f.name}={getattr(self, f.name) * 1e6:g} us" if f.name.startswith(
            "alpha") else f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))


DEFAULT = Knobs()


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


#: The strategy fields in order: the keys of the vectorised form (a dict of arrays) that
#: :func:`iteration_time`, :func:`memory` and :func:`candidates` use.
FIELDS = ("t", "p", "d", "b", "v", "t_h", "p_h", "d_h")


def _arrays(cands: list[tuple]) -> dict:
    a = np.array(cands, dtype=np.int64).reshape(-1, 8)
    return {k: a[:, i].astype(float) for i, k in enumerate(FIELDS)}


#: The one measured run the compute efficiency is calibrated on: Korthikanti et al.'s GPT-1T
#: with full recomputation (the largest GEMMs, where the paper's own model errs least).
CALIBRATION = next(r for r in KORTHIKANTI if r.model == "gpt-1t")
CALIBRATION_MODE = "full"


@functools.lru_cache(maxsize=None)
def calibrate_efficiency(knobs: Knobs = DEFAULT) -> float:
    """The one compute efficiency (fraction of peak) at which the model's iteration time of
    :data:`CALIBRATION` (its own parallelisation, full recomputation, 80 GB DGX A100s) equals
    the measured 94.42 s. Every other run and platform uses this number."""
    return fit_efficiency(CALIBRATION, CALIBRATION_MODE, knobs)


@functools.lru_cache(maxsize=None)
def fit_efficiency(r: Measured, recompute: str = "selective", knobs: Knobs = DEFAULT) -> float:
    """The compute efficiency at which the model's iteration time of run ``r`` (its own
    parallelisation, DGX A100s) equals the run's measured time with ``recompute``
    (``"full"``: ``time_full``; ``"selective"``: ``time_selective``)."""
    plat = PLATFORMS["dgx-a100"]
    k = knobs.with_(recompute=recompute)
    target = r.time_full if recompute == "full" else r.time_selective
    lo, hi = 1e-3, 1.0   # the time falls monotonically as the efficiency rises
    for _ in range(60):
        mid = (lo + hi) / 2
        if run_time(r, plat.with_(efficiency=mid), k) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def efficiency_of(plat: Platform, knobs: Knobs = DEFAULT) -> float:
    return plat.efficiency if plat.efficiency is not None else calibrate_efficiency(knobs)


def run_time(r: Measured, plat: Platform, knobs: Knobs) -> float:
    """The model's iteration time of measured run ``r`` with the run's own parallelisation
    (TP inside the HB domain, PP and DP across)."""
    model = MODELS[r.model]
    s = Strategy(r.t, r.p, r.gpus // (r.t * r.p), r.micro, r.v, min(r.t, plat.hb), 1, 1)
    return float(iteration_time(model, plat, r.gpus, r.batch, s, knobs=knobs)["total"])


def _steps(x, algo: str):
    x = np.asarray(x, dtype=float)
    return x - 1 if algo == "ring" else np.ceil(np.log2(np.maximum(x, 1)))


def forwarded_links(st: dict, placement: str):
    """Of the pipeline links that cross HB domains (the p_l - 1 domain boundaries, and with
    interleaving (v > 1) the wrap from the last stage back to the first), how many join GPUs
    of different local rank, i.e. different rails, under ``placement``: ``(crossing,
    cross_rail)`` arrays. :func:`models.railonly.placement.pipeline_links` counts the same
    on an explicit rank layout."""
    p_h = np.asarray(st["p_h"], dtype=float)
    p_l = np.asarray(st["p"], dtype=float) / p_h
    wrap = (np.asarray(st["v"]) > 1) & (p_l > 1)
    crossing = np.maximum(p_l - 1, 0) + wrap
    split = p_h > 1
    if placement == "linear":
        cross_rail = np.where(split, crossing, 0.0)
    else:   # snake: boundaries aligned; the wrap lands on rank p_h - 1 when p_l is odd
        odd = np.mod(p_l, 2) == 1
        cross_rail = np.where(split & wrap & odd, 1.0, 0.0)
    return crossing, cross_rail


def iteration_time(model: GPT, plat: Platform, gpus: int, batch: int, strategy,
                   *, knobs: Knobs = DEFAULT, network: str = "rail-optimized") -> dict:
    """Eq 6-11 for one :class:`Strategy` (or a dict of equal-length arrays, one entry per
    strategy field: vectorised), plus the latency of :class:`Knobs`. Returns the terms and
    ``total`` in seconds.

    ``network="rail-only"`` adds ``forward``: a pipeline send between HB domains on
    different rails has no spine to cross, so it takes one extra HB hop (D_p / C_F + alpha)
    in the target domain (the forwarding of eq 3). The share of the network pipeline sends
    (eq 8's 2 (p_l - 1) and eq 10's 2 m v) that need it is the share of cross-domain
    pipeline links the placement puts on different rails (:func:`forwarded_links`). TP and
    DP collectives are hierarchical (eq 1): their network steps join equal local ranks, so
    they never need forwarding."""
    if network not in ("rail-optimized", "rail-only"):
        raise ValueError(f"network must be 'rail-optimized' or 'rail-only', not {network!r}")
    if isinstance(strategy, Strategy):
        st = {k: float(getattr(strategy, k)) for k in FIELDS}
    else:
        st = strategy
    t, p, d, b, v = st["t"], st["p"], st["d"], st["b"], st["v"]
    t_h, p_h, d_h = st["t_h"], st["p_h"], st["d_h"]
    t_l, p_l, d_l = t / t_h, p / p_h, d / d_h
    h, s, l = model.hidden, model.seq, model.layers
    m = batch / (d * b)
    eta = efficiency_of(plat, knobs)
    tb = model.flops(1, knobs.recompute) * b / (p * t) / (plat.peak * eta)
    D_p = BYTES * b * h * s / t
    D_t = BYTES * b * h * s
    D_d = BYTES * l * model.block_params / (p * t)
    C_F, C_S = plat.C_F, plat.C_S
    a_F, a_S = knobs.alpha_hb, knobs.alpha_nic
    C_star = np.where(p_l > 1, C_S, C_F)
    a_star = np.where(p_l > 1, a_S, a_F)

    def ag(D, x, y):
        return ag_time(D, x, y, C_F, C_S) + a_F * _steps(x, knobs.algo) \
            + a_S * _steps(y, knobs.algo)

    bubble_comp = (p - 1) * tb / v
    bubble_comm = 2 * (p_l - 1) * (D_p / C_S + a_S) + 2 * p_l * (p_h - 1) * (D_p / C_F + a_F)
    ls_comp = m * tb
    ls_tp = 8 * l * m * ag(D_t, t_h, t_l) / p
    ls_pp = np.where(p > 1, 2 * m * v * (D_p / C_star + a_star), 0.0)
    sync = 2 * ag(D_d, d_h, d_l)
    forward = 0.0 * p
    if network == "rail-only":
        crossing, cross_rail = forwarded_links(st, knobs.placement)
        share = np.divide(cross_rail, crossing, out=np.zeros_like(crossing),
                          where=crossing > 0)
        sends = 2 * (p_l - 1) + np.where(p_l > 1, 2 * m * v, 0.0)
        forward = share * sends * (D_p / C_F + a_F)
    total = bubble_comp + bubble_comm + ls_comp + ls_tp + ls_pp + sync + forward
    return {"bubble_comp": bubble_comp, "bubble_comm": bubble_comm, "ls_comp": ls_comp,
            "ls_tp": ls_tp, "ls_pp": ls_pp, "sync": sync, "forward": forward,
            "total": total, "tb": tb, "m": m}


def _act_bytes(model: GPT, b, t, recompute: str):
    """Activation bytes of one layer and micro-batch on one GPU (Korthikanti et al. eq 2-6
    with sequence parallelism): selective 34 s b h / t, full 2 s b h / t (only the layer's
    input kept), none (34 s b h + 5 a s^2 b) / t."""
    s, h, a = model.seq, model.hidden, model.heads
    if recompute == "selective":
        return 34 * s * b * h / t
    if recompute == "full":
        return 2 * s * b * h / t
    return (34 * s * b * h + 5 * a * s * s * b) / t


def memory(model: GPT, st: dict, batch: int, knobs: Knobs = DEFAULT) -> np.ndarray:
    """Bytes per GPU of the first pipeline stage, the fullest one: its l / p layers plus the
    input embedding (V h / t; with p = 1 the tied output layer is the same matrix), at 16
    bytes per parameter (4 + 12 / d with ``zero=1``), and the activations of the
    micro-batches in flight (min(p, m) under 1F1B, x (1 + (p - 1) / (p v)) interleaved)."""
    t, p, b, v, d = st["t"], st["p"], st["b"], st["v"], st["d"]
    m = batch / (d * b)
    # Only the first stage holds the input embedding, and it also has the most micro-batches
    # in flight, so it bounds the memory of every stage.
    stage_params = (model.layers * model.block_params / p + model.vocab * model.hidden) / t
    per_param = 16.0 if knobs.zero == 0 else 4.0 + 12.0 / d
    in_flight = np.minimum(p, m)
    inter = np.where(v > 1, 1 + (p - 1) / (p * v), 1.0)
    acts = _act_bytes(model, b, t, knobs.recompute) * (model.layers / p) * in_flight * inter
    return per_param * stage_params + acts


def candidates(model: GPT, gpus: int, batch: int, hb: int, *, max_micro: int = 8,
               max_v: int = 8, tp: str = "any") -> dict:
    """Every valid strategy (see the module docstring) as arrays."""
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise ValueError(f"gpus must be an int >= 1, not {gpus!r}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be an int >= 1, not {batch!r}")
    if isinstance(hb, bool) or not isinstance(hb, int) or hb < 1 or gpus % hb:
        raise ValueError(f"HB domain size {hb!r} must be an int >= 1 dividing gpus ({gpus})")
    return _candidates(model, gpus, batch, hb, max_micro, max_v, tp)


@functools.lru_cache(maxsize=256)
def _candidates(model: GPT, gpus: int, batch: int, hb: int, max_micro: int, max_v: int,
                tp: str) -> dict:
    rows = []
    for t in divisors(gpus):
        if model.heads % t:
            continue
        if tp == "hb" and hb % t:
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
                ths = [t] if tp == "hb" else divisors(math.gcd(t, hb))
                for t_h in ths:
                    for p_h in divisors(math.gcd(p, hb // t_h)):
                        d_h = hb // (t_h * p_h)
                        if d % d_h:
                            continue
                        rows += [(t, p, d, b, v, t_h, p_h, d_h) for v in vs]
    out = _arrays(rows)
    for a in out.values():
        a.setflags(write=False)
    return out


def search(model: GPT, plat: Platform, gpus: int, batch: int, hb: int | None = None, *,
           knobs: Knobs = DEFAULT, max_v: int = 8, network: str = "rail-optimized") -> dict:
    """The fastest valid strategy: ``{"strategy": Strategy, "time": s, "terms": {...},
    "count": strategies considered}``. ``hb`` defaults to the platform's; ``hb = gpus`` is
    the ideal single HB domain. ``network``: see :func:`iteration_time`. ValueError when no
    strategy fits in memory."""
    hb = plat.hb if hb is None else hb
    c = candidates(model, gpus, batch, hb, max_micro=knobs.max_micro, max_v=max_v,
                   tp=knobs.tp)
    if not len(c["t"]):
        raise ValueError(f"{model.name} on {gpus} GPUs, batch {batch}, HB {hb}: no "
                         f"parallelisation divides evenly")
    fits = memory(model, c, batch, knobs) <= plat.memory
    if not fits.any():
        raise ValueError(f"{model.name} on {gpus} GPUs, batch {batch}, HB {hb}: no "
                         f"parallelisation fits in {plat.memory / 1e9:g} GB per GPU")
    c = {k: v[fits] for k, v in c.items()}
    terms = iteration_time(model, plat, gpus, batch, c, knobs=knobs, network=network)
    i = int(np.argmin(terms["total"]))
    best = Strategy(*(int(c[k][i]) for k in FIELDS))
    return {"strategy": best, "time": float(terms["total"][i]),
            "terms": {k: float(np.asarray(v)[i]) if np.ndim(v) else float(v)
                      for k, v in terms.items()},
            "count": int(len(c["t"]))}


def hfu(model: GPT, plat: Platform, gpus: int, batch: int, time: float,
        recompute: str = "selective") -> float:
    """Hardware FLOPs utilisation of an iteration that took ``time`` seconds."""
    return model.flops(batch, recompute) / (time * gpus * plat.peak)


def predicted_hfu(r: Measured, plat: Platform | None = None, knobs: Knobs = DEFAULT,
                  recompute: str = "selective") -> float:
    """The model's HFU for one of Korthikanti et al.'s runs, with the run's own
    parallelisation (TP inside the DGX, PP and DP across), at the one calibrated
    efficiency."""
    plat = plat or PLATFORMS["dgx-a100"]
    model = MODELS[r.model]
    k = knobs.with_(recompute=recompute)
    return hfu(model, plat, r.gpus, r.batch, run_time(r, plat, k), recompute)
