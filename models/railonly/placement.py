"""Where each rank of a PTD-P strategy sits on a Rail-only network, and which of its
communicating GPU pairs cross HB domains on different rails (those need forwarding through an
HB domain: Rail-only has no spine).

A GPU has coordinates (th, tl, ph, pl, dh, dl): th < t_h, ph < p_h, dh < d_h inside its HB
domain, tl < t_l, pl < p_l, dl < d_l across domains. Its HB domain is
``tl + t_l (pl + p_l dl)`` and its local rank (its rail) ``th + t_h (ph + p_h dh)``. Tensor
rank ``th + t_h tl``, data rank ``dh + d_h dl``; pipeline stage ``pl p_h + r`` where r = ph
(``"linear"``, Megatron's order) or, in odd domains, ``p_h - 1 - ph`` (``"snake"``).

:func:`pipeline_links` enumerates every pipeline link of the layout (stage i to i + 1, and
with interleaving the wrap from the last stage to the first) and every step of the
hierarchical TP and DP collectives (eq 1: a ring inside each HB domain, then a ring over the
domains between equal local ranks), counting the pairs that cross domains and those that
cross domains on different rails. :func:`models.common.iteration.forwarded_links` is the
closed form the strategy search uses; the tests check the two agree.
"""

from __future__ import annotations

import numpy as np

from aifabric.models.common.iteration import Strategy

__all__ = ["layout", "pipeline_links"]


def layout(s: Strategy, placement: str = "snake") -> dict:
    """Arrays over every GPU of the strategy: coordinates, ``domain``, ``rail`` and
    ``stage``."""
    if placement not in ("snake", "linear"):
        raise ValueError(f"placement must be 'snake' or 'linear', not {placement!r}")
    t_l, p_l, d_l = s.t // s.t_h, s.p // s.p_h, s.d // s.d_h
    th, tl, ph, pl, dh, dl = (a.ravel() for a in np.meshgrid(
        np.arange(s.t_h), np.arange(t_l), np.arange(s.p_h), np.arange(p_l),
        np.arange(s.d_h), np.arange(d_l), indexing="ij"))
    r = ph if placement == "linear" else np.where(pl % 2 == 0, ph, s.p_h - 1 - ph)
    return {"th": th, "tl": tl, "ph": ph, "pl": pl, "dh": dh, "dl": dl,
            "domain": tl + t_l * (pl + p_l * dl), "rail": th + s.t_h * (ph + s.p_h * dh),
            "stage": pl * s.p_h + r, "tensor": th + s.t_h * tl, "data": dh + s.d_h * dl}


def _pairs(g: dict, key_from: np.ndarray, key_to: np.ndarray) -> tuple[int, int]:
    """GPU pairs (a, b) where b's key equals a's target key: (crossing domains, crossing
    domains on different rails)."""
    index = {k: i for i, k in enumerate(map(tuple, key_from))}
    src = [i for i, k in enumerate(map(tuple, key_to)) if k in index]
    dst = [index[tuple(key_to[i])] for i in src]
    src, dst = np.asarray(src, dtype=int), np.asarray(dst, dtype=int)
    if not len(src):
        return 0, 0
    cross = g["domain"][src] != g["domain"][dst]
    return int(cross.sum()), int((cross & (g["rail"][src] != g["rail"][dst])).sum())


def pipeline_links(s: Strategy, placement: str = "snake") -> dict:
    """``{"pp": (crossing, cross_rail), "tp": ..., "dp": ...}`` counted over the GPU pairs of
    one tensor/data rank (pp) or of the whole layout (tp, dp rings at both levels)."""
    g = layout(s, placement)
    one = (g["tensor"] == 0) & (g["data"] == 0)
    sub = {k: v[one] for k, v in g.items()}
    stage = sub["stage"]
    nxt = stage + 1
    if s.v > 1:
        nxt = nxt % s.p                     # the interleaved wrap: last stage to the first
    pp = _pairs(sub, stage[:, None], nxt[:, None])
    t_l, d_l = s.t // s.t_h, s.d // s.d_h
    base = np.stack([g["tl"], g["ph"], g["pl"], g["dh"], g["dl"]], 1)
    tp_in = _pairs(g, np.c_[g["th"], base], np.c_[(g["th"] + 1) % s.t_h, base])
    base = np.stack([g["th"], g["ph"], g["pl"], g["dh"], g["dl"]], 1)
    tp_out = _pairs(g, np.c_[g["tl"], base], np.c_[(g["tl"] + 1) % t_l, base])
    base = np.stack([g["th"], g["tl"], g["ph"], g["pl"], g["dl"]], 1)
    dp_in = _pairs(g, np.c_[g["dh"], base], np.c_[(g["dh"] + 1) % s.d_h, base])
    base = np.stack([g["th"], g["tl"], g["ph"], g["pl"], g["dh"]], 1)
    dp_out = _pairs(g, np.c_[g["dl"], base], np.c_[(g["dl"] + 1) % d_l, base])
    return {"pp": pp, "tp": tuple(a + b for a, b in zip(tp_in, tp_out)),
            "dp": tuple(a + b for a, b in zip(dp_in, dp_out))}
