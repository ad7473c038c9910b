"""Per-GPU-pair traffic of one training iteration (Rail-only §III, Figs 2-5).

Ranks are laid out as Megatron-LM lays them out: tensor-parallel rank fastest, then data,
then pipeline (each pipeline stage is a contiguous block of t d GPUs); GPU ``r`` sits in HB
domain ``r // K`` with local rank (rail) ``r % K``. Collectives are rings (NCCL's default):

- TP with sequence parallelism: per layer and micro-batch 4 AllGathers and 4 ReduceScatters
  of 2 b h s bytes; a ring AllGather of D bytes sends (t-1)/t D from each GPU to its successor.
- PP: every micro-batch sends 2 b h s / t bytes from each GPU of a stage to the same GPU of
  the next stage (forward) and back (backward).
- DP: AllReduce of the stage's gradients, 2 l S_T / (p t) bytes per GPU, as a ring
  (2 (d-1)/d of it to the successor) or, ``hierarchical``, as §III-B's two-level algorithm
  (ReduceScatter + AllGather, each a ring across HB domains within the rail then a ring inside
  the HB domain: eq 1's volumes).
- MoE (:func:`moe_traffic`): expert parallelism over every GPU, 4 all-to-alls per MoE layer
  (dispatch and combine, forward and backward) of each GPU's tokens x h x 2 bytes, uniform
  over destinations; the rest of the model data-parallel (ring AllReduce).

Each function returns ``{kind: N x N matrix of bytes}`` (row = sender).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from aifabric.models.common.specs import GPT

__all__ = ["megatron_traffic", "moe_traffic", "summary", "plot_heatmap"]

BYTES = 2


def _ring(mat: np.ndarray, members: np.ndarray, amount: float) -> None:
    """Each member sends ``amount`` to the next one (ring order = array order)."""
    if len(members) > 1:
        mat[members, np.roll(members, -1)] += amount


def megatron_traffic(model: GPT, gpus: int, batch: int, t: int, p: int, *, micro: int = 1,
                     hb: int = 8, dp_hb: int | None = None) -> dict:
    """Traffic matrices of one iteration. ``dp_hb``: with the hierarchical DP AllReduce, how
    many DP ranks share an HB domain (None: flat ring AllReduce)."""
    for name, v in (("gpus", gpus), ("batch", batch), ("t", t), ("p", p), ("micro", micro),
                    ("hb", hb)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an int >= 1, not {v!r}")
    if gpus % (t * p):
        raise ValueError(f"t x p = {t * p} must divide gpus ({gpus})")
    d = gpus // (t * p)
    if batch % (d * micro):
        raise ValueError(f"d x micro = {d * micro} must divide the batch ({batch})")
    if model.layers % p:
        raise ValueError(f"p ({p}) must divide the layers ({model.layers})")
    m = batch // (d * micro)
    h, s, l = model.hidden, model.seq, model.layers
    rank = np.arange(gpus).reshape(p, d, t)   # [stage, dp, tp]
    out = {k: np.zeros((gpus, gpus)) for k in ("tp", "pp", "dp")}
    D_t = BYTES * micro * h * s
    for grp in rank.reshape(-1, t):
        _ring(out["tp"], grp, 8 * (l // p) * m * D_t * (t - 1) / t)
    D_p = BYTES * micro * h * s / t
    for k in range(p - 1):
        a, b = rank[k].ravel(), rank[k + 1].ravel()
        out["pp"][a, b] += m * D_p
        out["pp"][b, a] += m * D_p
    G = BYTES * l * model.block_params / (p * t)
    for k in range(p):
        for i in range(t):
            grp = rank[k, :, i]
            if dp_hb is None or dp_hb >= d:
                _ring(out["dp"], grp, 2 * (d - 1) / d * G)
                continue
            if d % dp_hb:
                raise ValueError(f"dp_hb ({dp_hb}) must divide d ({d})")
            x, y = dp_hb, d // dp_hb
            cells = grp.reshape(y, x)            # rows: HB domains; columns: rails
            for col in cells.T:                  # across HB domains, within the rail
                _ring(out["dp"], col, 2 * (y - 1) * G / (x * y))
            for row in cells:                    # inside each HB domain
                _ring(out["dp"], row, 2 * (x - 1) * G / x)
    return out


def moe_traffic(model: GPT, gpus: int, batch: int, *, moe_every: int = 2,
                dense_params: float | None = None) -> dict:
    """Expert parallelism over all ``gpus`` (one expert per GPU per MoE layer), one MoE layer
    every ``moe_every`` layers, top-1 gating with uniform tokens; the non-expert parameters
    (``dense_params``; default: the model's parameters without the MoE layers' MLPs) are
    data-parallel. Returns {"a2a", "dp"}."""
    n = gpus
    tokens = batch * model.seq / n
    moe_layers = model.layers // moe_every
    a2a = np.full((n, n), 4 * moe_layers * tokens * model.hidden * BYTES / n)
    np.fill_diagonal(a2a, 0.0)
    if dense_params is None:
        dense_params = model.params - moe_layers * 8 * model.hidden ** 2
    dp = np.zeros((n, n))
    _ring(dp, np.arange(n), 2 * (n - 1) / n * BYTES * dense_params)
    return {"a2a": a2a, "dp": dp}


def summary(mats: dict, hb: int) -> dict:
    """Volume share per kind, fraction of ordered GPU pairs with no traffic / with each kind,
    and where the bytes go: inside HB domains, on same-rail pairs across HB domains (NIC
    traffic a Rail-only network carries directly), on other pairs (would need the spine)."""
    n = next(iter(mats.values())).shape[0]
    idx = np.arange(n)
    same_hb = (idx[:, None] // hb) == (idx[None, :] // hb)
    same_rail = ((idx[:, None] % hb) == (idx[None, :] % hb)) & ~same_hb
    total = sum(m.sum() for m in mats.values())
    allm = sum(mats.values())
    pairs = n * (n - 1)
    out = {"total": total, "gpus": n,
           "share": {k: m.sum() / total for k, m in mats.items()},
           "pairs_with": {k: int((m > 0).sum()) / pairs for k, m in mats.items()},
           "no_traffic": 1 - int((allm > 0).sum()) / pairs,
           "hb_share": allm[same_hb].sum() / total,
           "rail_share": allm[same_rail].sum() / total,
           "other_share": allm[~same_hb & ~same_rail].sum() / total}
    for k, m in mats.items():
        tot = m.sum()
        out[f"{k}_hb_share"] = m[same_hb].sum() / tot if tot else 0.0
        nz = m[same_hb]
        out[f"{k}_max_hb_pair"] = float(nz.max()) if nz.size else 0.0
        nic = m[~same_hb]
        out[f"{k}_max_nic_pair"] = float(nic.max()) if nic.size else 0.0
    return out


def plot_heatmap(mats: dict, path: Path, title: str, *, hb: int, limit: int | None = None
                 ) -> Path:
    """The total matrix (first ``limit`` GPUs) on a log colour scale, HB domains outlined."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm
    allm = sum(mats.values())
    if limit:
        allm = allm[:limit, :limit]
    fig, ax = plt.subplots(figsize=(6, 5))
    data = np.where(allm > 0, allm / 1e9, np.nan)
    vmin = np.nanmin(data) if np.isfinite(data).any() else 1e-9
    im = ax.imshow(data, norm=LogNorm(vmin=vmin, vmax=np.nanmax(data)), cmap="viridis",
                   interpolation="nearest")
    n = allm.shape[0]
    for k in range(0, n + 1, hb):
        ax.axhline(k - 0.5, color="0.6", lw=0.3, alpha=0.5)
        ax.axvline(k - 0.5, color="0.6", lw=0.3, alpha=0.5)
    ax.set_xlabel("receiver GPU")
    ax.set_ylabel("sender GPU")
    ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, label="GB per iteration")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
