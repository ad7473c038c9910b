"""Mixture-of-experts all-to-all traffic matrices (Chronos, NAIC'25, §8.1).

The paper takes the fraction of tokens each of 16 experts receives in each of 1,000 training
iterations of a GPT-MoE model (4 of the 16 experts get up to 80% of the tokens) and spreads each
expert's tokens at random over the source GPUs, with Llama 3 405B's hidden size (16,384) and
sequence length (8,192). The measured fractions are not published, so
:func:`expert_popularity` draws them: ``hot_experts`` randomly chosen experts share a fraction
of the tokens drawn uniformly from ``hot_share``, split among them (and the rest among the
other experts) by a flat Dirichlet draw.

One expert per GPU (expert ``j`` on GPU ``j``), top-1 routing, each GPU routes ``seq_len``
tokens, so ``n * seq_len`` tokens are routed per iteration. Tokens a GPU routes to its own
expert stay local: the diagonal is zero unless ``local=True``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["HIDDEN", "SEQ_LEN", "BF16_BYTES", "expert_popularity", "moe_traffic_matrix"]

HIDDEN = 16_384
SEQ_LEN = 8_192
BF16_BYTES = 2


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"'rng' must be a numpy.random.Generator "
                        f"(numpy.random.default_rng(seed)), not {type(rng).__name__}")
    return rng


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) \
            or value < low or (high is not None and value > high):
        allowed = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"'{name}' must be an int {allowed}, not {value!r}")
    return int(value)


def expert_popularity(n: int, rng: np.random.Generator, *, hot_experts: int | None = None,
                      hot_share: tuple[float, float] = (0.5, 0.8)) -> np.ndarray:
    """Fraction of the tokens each of ``n`` experts receives in one iteration (sums to 1)."""
    n = _check_int("n", n, 2)
    rng = _check_rng(rng)
    hot = max(1, n // 4) if hot_experts is None else _check_int("hot_experts", hot_experts, 1, n)
    try:
        lo, hi = (float(x) for x in hot_share)
    except (TypeError, ValueError):
        raise ValueError(f"'hot_share' must be a (low, high) pair of fractions, "
                         f"not {hot_share!r}") from None
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"'hot_share' must satisfy 0 <= low <= high <= 1, not {hot_share!r}")
    if hot == n and hi < 1.0:
        raise ValueError("with every expert hot, 'hot_share' must allow 1.0")
    share = 1.0 if hot == n else rng.uniform(lo, hi)
    experts = rng.permutation(n)
    p = np.zeros(n)
    p[experts[:hot]] = share * rng.dirichlet(np.ones(hot))
    if hot < n:
        p[experts[hot:]] = (1.0 - share) * rng.dirichlet(np.ones(n - hot))
    return p


def moe_traffic_matrix(n: int, rng: np.random.Generator, *, seq_len: int = SEQ_LEN,
                       hidden: int = HIDDEN, dtype_bytes: int = BF16_BYTES,
                       hot_experts: int | None = None,
                       hot_share: tuple[float, float] = (0.5, 0.8),
                       local: bool = False, unit: str = "bytes") -> np.ndarray:
    """One iteration's n x n all-to-all demand: entry ``(i, j)`` is what GPU ``i`` sends to
    the expert on GPU ``j``, in ``unit`` ``"bytes"`` (tokens x hidden x dtype_bytes) or
    ``"tokens"``. Deterministic for a given ``rng`` state."""
    n = _check_int("n", n, 2)
    rng = _check_rng(rng)
    seq_len = _check_int("seq_len", seq_len, 1)
    hidden = _check_int("hidden", hidden, 1)
    dtype_bytes = _check_int("dtype_bytes", dtype_bytes, 1)
    if unit not in ("bytes", "tokens"):
        raise ValueError(f"'unit' must be 'bytes' or 'tokens', not {unit!r}")
    p = expert_popularity(n, rng, hot_experts=hot_experts, hot_share=hot_share)
    per_expert = rng.multinomial(n * seq_len, p)
    # Each expert's tokens come from sources chosen uniformly at random.
    tokens = np.stack([rng.multinomial(t, np.full(n, 1.0 / n)) for t in per_expert], axis=1)
    if not local:
        np.fill_diagonal(tokens, 0)
    tokens = tokens.astype(np.int64)
    return tokens if unit == "tokens" else tokens * (hidden * dtype_bytes)
