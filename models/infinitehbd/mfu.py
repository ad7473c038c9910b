"""Table 2 (and the abstract's 3.37x): the MFU of Llama 3.1-405B against the GPU count, with
the tensor-parallel size unconstrained (an HBD that forms a ring of any size) and limited to 8
(an 8-GPU NVLink node), from the iteration model of :mod:`models.common.iteration`.

The setting is the paper's (§6.1 'GPU and network specification', §6.3, footnotes 5-6): H100
GPUs (989 TFLOP/s dense 16-bit, 80 GiB), an HBD of 6.4 Tb/s per GPU (eight 800 Gb/s OCSTrx),
400 Gb/s of DCN per GPU, Llama 3.1-405B with its grouped-query attention replaced by plain
multi-head attention, 3D parallelism with TP in {1, 2, 4, ..., 128}, DP in {1, ..., 1024}, PP in
{1, ..., 16} (powers of two), global batch 2,048 sequences. What the paper leaves open is ours
and stated in :data:`SETTING`: the sequence length (4,096: 2,048 sequences are then 8.4 M
tokens, Llama 3's pre-training batch in tokens; :func:`ablation` shows 8,192 beside it),
micro-batches up to 8 sequences, no interleaving ('conventional 3D parallelism'), selective
recomputation, ZeRO-1 (the 405B model does not fit 80 GiB at TP 8 without sharding its
optimizer state), ring collectives (InfiniteHBD's HBD is a ring) with 1 us (HBD) and 2 us (DCN)
per step, and the compute efficiency of the iteration model's one calibration (Korthikanti et
al.'s GPT-1T run). Pipeline stages may hold unequal layer counts (126 layers over 4-16 stages):
the model charges l / p layers per stage.

The mechanism the paper's table shows: the global batch is fixed, so as GPUs grow each data-
parallel replica gets fewer sequences; with TP capped at 8 the pipeline must stay deep and
its bubble ((p - 1) / (m + p - 1) of the time for m micro-batches) swallows the iteration,
while a larger TP keeps the data-parallel degree, and so m, up.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from aifabric.models.common.iteration import DEFAULT, FIELDS, iteration_time, memory
from aifabric.models.common.records import Record, record
from aifabric.models.common.specs import GBPS, GPT, Platform

__all__ = ["Llama", "LLAMA_405B", "HBD_PLATFORM", "SETTING", "TABLE2_GPUS", "TABLE2",
           "strategies", "best", "table2", "ablation", "records", "table_md"]


@dataclass(frozen=True)
class Llama(GPT):
    """A decoder-only transformer with a SwiGLU feed-forward block of width ``ffn`` (three
    h x ffn matrices) and multi-head attention (4 h^2): per block 4 h^2 + 3 h ffn parameters.
    The FLOP count follows Korthikanti et al.'s form with the feed-forward share scaled from
    8 h^2 to 3 h ffn."""

    ffn: int = 0

    @property
    def _ratio(self) -> float:
        """Block GEMM parameters relative to the 12 h^2 of a 4h-MLP GPT block."""
        return (4 * self.hidden ** 2 + 3 * self.hidden * self.ffn) / (12 * self.hidden ** 2)

    @property
    def block_params(self) -> int:
        return 4 * self.hidden ** 2 + 3 * self.hidden * self.ffn + 2 * self.hidden

    def flops(self, batch: int, recompute: str = "selective") -> float:
        B, s, l, h, V = batch, self.seq, self.layers, self.hidden, self.vocab
        base = 72 * B * s * l * h ** 2 * self._ratio
        logits = 72 * B * s * l * h ** 2 * V / (12 * h * l)
        attn = 72 * B * s * l * h ** 2 * s / (6 * h)        # the s^2 attention core
        if recompute == "none":
            return base + attn + logits
        if recompute == "selective":
            return base + 2 * attn + logits
        if recompute == "full":
            return 4 / 3 * (base + attn) + logits
        raise ValueError(f"recompute must be 'none', 'selective' or 'full', not {recompute!r}")


#: Llama 3.1-405B (Meta's model card: 126 layers, 16,384 hidden, 128 heads, 53,248 FFN,
#: 128,256 vocabulary) with MHA instead of GQA, as the paper's footnote 5 simulates it.
LLAMA_405B = Llama("llama3.1-405b-mha", 126, 16384, 128, seq=4096, vocab=128256, ffn=53248)

#: §6.1: H100, 6.4 Tb/s HBD (8 x 800 Gb/s OCSTrx), 400 Gb/s DCN (ConnectX-7), 80 GiB.
HBD_PLATFORM = Platform("h100-infinitehbd", 1, 989e12, 6400 * GBPS, 400 * GBPS, 80 * 2 ** 30)

SETTING = DEFAULT.with_(zero=1, algo="ring", recompute="selective", max_micro=8)
BATCH = 2048
TABLE2_GPUS = (1024, 4096, 8192, 16384, 32768, 65536, 131072)
POW2 = {"t": [2 ** i for i in range(8)], "d": [2 ** i for i in range(11)],
        "p": [2 ** i for i in range(5)]}


def strategies(gpus: int, tp_max: int = 128, batch: int = BATCH, model: GPT = LLAMA_405B,
               max_micro: int = 8) -> dict:
    """The paper's search space at ``gpus`` (TP x PP x DP = gpus, powers of two within the
    footnote's ranges, TP <= ``tp_max`` and dividing the heads, DP dividing the batch), every
    micro-batch size up to ``max_micro`` dividing the replica's batch, no interleaving; TP in
    the HBD (t_h = t), PP and DP over the DCN. Arrays, one entry per strategy."""
    rows = []
    for t in POW2["t"]:
        if t > tp_max or model.heads % t:
            continue
        for p in POW2["p"]:
            if gpus % (t * p):
                continue
            d = gpus // (t * p)
            if d not in POW2["d"] or batch % d:
                continue
            for b in range(1, min(max_micro, batch // d) + 1):
                if (batch // d) % b == 0:
                    rows.append((t, p, d, b, 1, t, 1, 1))
    a = np.array(rows, dtype=float).reshape(-1, 8)
    return {k: a[:, i] for i, k in enumerate(FIELDS)}


RECOMPUTE = ("selective", "full")


def best(gpus: int, tp_max: int = 128, *, model: GPT = LLAMA_405B,
         plat: Platform = HBD_PLATFORM, knobs=SETTING, batch: int = BATCH,
         recompute=RECOMPUTE) -> dict:
    """The highest-MFU strategy that fits in memory, over the ``recompute`` policies (full
    recomputation where selective does not fit, as Megatron users choose): ``{"t", "p", "d",
    "b", "recompute", "mfu", "time", "bubble", "tp_share"}`` (bubble, tp_share: the pipeline
    bubble's and the TP collectives' shares of the iteration). MFU counts model FLOPs only."""
    c = strategies(gpus, tp_max, batch, model, knobs.max_micro)
    found = None
    for mode in recompute:
        k = knobs.with_(recompute=mode)
        fits = memory(model, c, batch, k) <= plat.memory
        if not fits.any():
            continue
        cc = {key: v[fits] for key, v in c.items()}
        terms = iteration_time(model, plat, gpus, batch, cc, knobs=k)
        mfu = model.flops(batch, "none") / (terms["total"] * gpus * plat.peak)
        i = int(np.argmax(mfu))
        if found is None or mfu[i] > found["mfu"]:
            found = {"t": int(cc["t"][i]), "p": int(cc["p"][i]), "d": int(cc["d"][i]),
                     "b": int(cc["b"][i]), "recompute": mode, "mfu": float(mfu[i]),
                     "time": float(terms["total"][i]),
                     "bubble": float(terms["bubble_comp"][i] / terms["total"][i]),
                     "tp_share": float(terms["ls_tp"][i] / terms["total"][i])}
    if found is None:
        raise ValueError(f"{model.name} on {gpus} GPUs with TP <= {tp_max}: no strategy fits "
                         f"in {plat.memory / 2 ** 30:g} GiB")
    return found


def table2(gpus=TABLE2_GPUS, **kw) -> list[dict]:
    """Table 2's rows: per GPU count the best strategy with TP unconstrained and with TP <= 8,
    and their MFU ratio ('Improve')."""
    rows = []
    for n in gpus:
        free, tp8 = best(n, 128, **kw), best(n, 8, **kw)
        rows.append({"gpus": n, "free": free, "tp8": tp8, "improve": free["mfu"] / tp8["mfu"]})
    return rows


#: Table 2 as printed: GPUs -> (TP, PP, DP, MFU, MFU_TP-8, Improve).
TABLE2 = {1024: (16, 4, 16, "0.5236", "0.5217", "1.0036"),
          4096: (16, 8, 32, "0.4668", "0.4282", "1.0901"),
          8192: (32, 8, 32, "0.4247", "0.3512", "1.2093"),
          16384: (32, 16, 32, "0.3756", "0.2584", "1.4536"),
          32768: (32, 16, 64, "0.3090", "0.1690", "1.8284"),
          65536: (64, 16, 64, "0.2493", "0.0999", "2.4955"),
          131072: (64, 16, 128, "0.1851", "0.0550", "3.3655")}

# Declared outcomes (make test fails when a run contradicts one). The optimal TP matches at
# 4,096 and from 16,384 GPUs up (TP, PP and DP all equal from 16,384); at 1,024 and 8,192 our
# model picks a smaller TP with a deeper pipeline. Absolute MFU rests on
# the one compute efficiency (calibrated on A100s), 7-21 % above the paper's at every scale.
_TP_MATCH = {4096, 16384, 32768, 65536, 131072}
_IMPROVE_MATCH = {1024, 131072}
def _why_mfu() -> str:
    from aifabric.models.common.iteration import calibrate_efficiency
    return (f"absolute MFU rests on the compute efficiency, calibrated once on Korthikanti et "
            f"al.'s A100 run ({calibrate_efficiency():.2f} of peak); the paper's in-house "
            f"simulator's H100 efficiency is not stated; the ratio (improve) cancels most of it")


def ablation(gpus: int = 131072) -> list[tuple[str, dict]]:
    """Table 2's last row under each open setting changed alone (the default first)."""
    cases = [("default (seq 4,096, ZeRO-1, ring, 1/2 us, selective or full)", {}),
             ("sequence 8,192", {"model": replace(LLAMA_405B, seq=8192)}),
             ("ZeRO-0", {"knobs": SETTING.with_(zero=0)}),
             ("tree collectives", {"knobs": SETTING.with_(algo="tree")}),
             ("10 us per collective step", {"knobs": SETTING.with_(alpha_hb=1e-5,
                                                                   alpha_nic=1e-5)}),
             ("full recomputation only", {"recompute": ("full",)})]
    out = []
    for name, kw in cases:
        try:
            out.append((name, table2((gpus,), **kw)[0]))
        except ValueError:
            out.append((name, {}))
    return out


def records(rows: list[dict] | None = None) -> list[Record]:
    """Table 2 cell by cell: the searched optimal TP, MFU, MFU_TP-8 and their ratio."""
    rows = rows or table2()
    abl = {name: r for name, r in ablation()}
    seq8k = abl["sequence 8,192"]["improve"]
    out = []
    for r in rows:
        n = r["gpus"]
        tp, pp, dp, mfu_txt, mfu8_txt, imp_txt = TABLE2[n]
        f, t8 = r["free"], r["tp8"]
        strat = f"optimal TP/PP/DP {f['t']}/{f['p']}/{f['d']} ({f['recompute']} recompute), " \
                f"TP-8 {t8['t']}/{t8['p']}/{t8['d']}; paper {tp}/{pp}/{dp}"
        kw = dict(simulated=True, note=strat, setting={
            "model": "Llama 3.1-405B", "gpus": n, "batch": BATCH, "seq": LLAMA_405B.seq,
            "platform": "H100, 6.4 Tb/s HBD, 400 Gb/s DCN", **asdict(SETTING),
            "efficiency": "calibrated on GPT-1T (Rail-only Fig 7)"}, choices={
            "seq": "the paper does not print the sequence length",
            "zero": "the paper does not print the optimizer sharding",
            "algo": "the paper does not print the collective algorithm",
            "max_micro": "the search's largest micro-batch",
            "efficiency": "the paper's simulator's efficiency is not stated"})
        out.append(record("infinitehbd", f"table2.{n}.tp", f"optimal TP, Llama 3.1-405B on {n:,} "
                          f"GPUs (bsz 2,048)", "GPUs", tp, f["t"], **kw, **(
                              {} if n in _TP_MATCH else {"why": "below 16,384 GPUs our "
                              "iteration model keeps TP at 8-16 and deepens the pipeline "
                              "(its bubble is small while each replica has many sequences); "
                              "the paper's simulator (overlap, GEMM efficiency per TP) is "
                              "not published"})))
        out.append(record("infinitehbd", f"table2.{n}.mfu", f"MFU with TP unconstrained, {n:,} "
                          f"GPUs", "fraction", float(mfu_txt), f["mfu"], printed=mfu_txt,
                          why=_why_mfu(), **kw))
        out.append(record("infinitehbd", f"table2.{n}.mfu_tp8", f"MFU with TP <= 8, {n:,} "
                          f"GPUs", "fraction", float(mfu8_txt), t8["mfu"], printed=mfu8_txt,
                          why=_why_mfu(), **kw))
        why = "" if n in _IMPROVE_MATCH else (
            f"the MFU gain from a larger TP is the TP-8 run's pipeline bubble "
            f"({t8['bubble']:.0%} of its iteration here) against the larger TP's collectives; "
            f"where the optimal strategies differ from the paper's (below 16,384 GPUs) or "
            f"sit near the HBD bandwidth limit, the ratio moves with settings the paper does "
            f"not print (see the ablation table: sequence 8,192 gives {seq8k:.2f} at "
            f"131,072 GPUs)")
        out.append(record("infinitehbd", f"table2.{n}.improve", f"MFU with TP unconstrained "
                          f"over TP <= 8 ('Improve'), {n:,} GPUs", "x", float(imp_txt),
                          r["improve"], printed=imp_txt, why=why, **kw))
    return out


def table_md(rows: list[dict] | None = None) -> str:
    rows = rows or table2()
    lines = ["### Table 2: Llama 3.1-405B MFU, TP unconstrained vs TP <= 8", "",
             "H100, 6.4 Tb/s HBD, 400 Gb/s DCN, bsz 2,048 x 4,096 tokens, TP/PP/DP powers of "
             "two in the paper's ranges (`models/infinitehbd/mfu.py`).", "",
             "| GPUs | TP/PP/DP (model) | TP/PP/DP (paper) | MFU (model) | MFU (paper) | "
             "MFU TP-8 (model) | MFU TP-8 (paper) | improve (model) | improve (paper) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        P, f, t8 = TABLE2[r["gpus"]], r["free"], r["tp8"]
        lines.append(f"| {r['gpus']:,} | {f['t']}/{f['p']}/{f['d']} | {P[0]}/{P[1]}/{P[2]} | "
                     f"{f['mfu']:.4f} | {P[3]} | {t8['mfu']:.4f} | {P[4]} | "
                     f"{r['improve']:.3f} | {P[5]} |")
    lines += ["", "Ablation at 131,072 GPUs (one setting changed at a time):", "",
              "| setting | TP/PP/DP | MFU | MFU TP-8 | improve (paper 3.3655) |",
              "|---|---|---|---|---|"]
    for name, r in ablation():
        if not r:
            lines.append(f"| {name} | no strategy fits | | | |")
            continue
        f = r["free"]
        lines.append(f"| {name} | {f['t']}/{f['p']}/{f['d']} | {f['mfu']:.4f} | "
                     f"{r['tp8']['mfu']:.4f} | {r['improve']:.3f} |")
    return "\n".join(lines) + "\n"
