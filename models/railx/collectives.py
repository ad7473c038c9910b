"""Collective communication on RailX (§4.2, eq 6-9; A.2, eq 12-13; A.3, Table 4; Fig 15).

Times in seconds, volumes in bytes, bandwidths in bytes/s. ``alpha`` is the per-step (hop)
latency of the slowest link of a step. Every function implements the paper's equation
as written, with the lower-order terms the paper drops ("≈") kept; the ``approx`` variants give
the paper's closed forms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["t_ring", "t_2d_ring", "t_railx_hierarchical", "t_railx_approx", "t_2d_ring_approx",
           "t_node_allreduce", "t_alltoall_step", "t_2d_hyperx", "t_2d_hyperx_approx",
           "Fig15Setup", "fig15_times", "ModelConfig", "Mapping", "table4"]


_POSITIVE = ("p", "B")


def _check(**kw) -> None:
    for name, value in kw.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not \
                math.isfinite(value):
            raise TypeError(f"{name} must be a finite number, not {value!r}")
        low = "> 0" if name in _POSITIVE else ">= 0"
        if value < 0 or (name in _POSITIVE and value == 0):
            raise ValueError(f"{name} must be {low}, not {value!r}")


def t_ring(p: float, V: float, B: float, alpha: float) -> float:
    """Eq 6: bidirectional-ring Reduce-Scatter (or All-Gather) over p processors,
    (p-1)·alpha + (p-1)/p · V/(2B)."""
    _check(p=p, V=V, B=B, alpha=alpha)
    return (p - 1) * alpha + (p - 1) / p * V / (2 * B)


def t_2d_ring(m: int, p: int, V: float, n: float, B: float, alpha: float) -> float:
    """Eq 7: 2D-ring All-Reduce on an m²·p x p RailX (2D-Torus or 2D-HyperX), data split in
    two halves running X-then-Y and Y-then-X: 2[T_R(mp, V/2, nB) + T_R(mp, V/(2mp), nB)]."""
    return 2 * (t_ring(m * p, V / 2, n * B, alpha) + t_ring(m * p, V / (2 * m * p), n * B, alpha))


def t_2d_ring_approx(m: int, p: int, V: float, n: float, B: float, alpha: float) -> float:
    """Eq 7's closed form 4mp·alpha + V/(2nB)."""
    return 4 * m * p * alpha + V / (2 * n * B)


def t_railx_hierarchical(m: int, p: int, V: float, n: float, B: float, k: float, alpha: float,
                         alpha_local: float = 0.0) -> float:
    """Eq 8 without its approximations: Reduce-Scatter over the m² chips of the node's mesh
    (bidirectional ring, bandwidth k·n·B, latency ``alpha_local`` per step), the 2D-ring
    All-Reduce of the V/m² shard over the p x p nodes with the rail bandwidth n·B shared by
    the m chips of a rail (n·B/m), then the local All-Gather."""
    local = t_ring(m * m, V, k * n * B, alpha_local)
    shard = V / m ** 2
    glob = 2 * (t_ring(p, shard / 2, n * B / m, alpha) + t_ring(p, shard / (2 * p), n * B / m,
                                                                alpha))
    return 2 * local + glob


def t_railx_approx(m: int, p: int, V: float, n: float, B: float, k: float, alpha: float) -> float:
    """Eq 8's closed form 4p·alpha + (2/k + 1/m)·V/(2nB)."""
    return 4 * p * alpha + (2 / k + 1 / m) * V / (2 * n * B)


def t_node_allreduce(dims: int, m: int, p: int, V: float, n: float, B: float,
                     alpha: float) -> float:
    """Eq 9: node-level All-Reduce when TP occupies the mesh: T_1D ≈ 2p·alpha + V/(nB/m),
    T_2D ≈ 4p·alpha + V/(2nB/m)."""
    if dims == 1:
        return 2 * p * alpha + V / (n * B / m)
    if dims == 2:
        return 4 * p * alpha + V / (2 * n * B / m)
    raise ValueError(f"dims must be 1 or 2, not {dims!r}")


def t_alltoall_step(p: int, V: float, B: float, alpha: float) -> float:
    """Eq 12: direct (all-to-all) Reduce-Scatter or All-Gather: alpha + (p-1)/p · V/(2B)."""
    _check(p=p, V=V, B=B, alpha=alpha)
    return alpha + (p - 1) / p * V / (2 * B)


def t_2d_hyperx(m: int, p: int, V: float, n: float, B: float, k: float, alpha: float) -> float:
    """Eq 13: All-Reduce on the local mesh then the all-to-all-based 2D All-Reduce:
    2·(m²-1)/m²·V/(2knB) + 2[T_AR(p, V/(2m²), nB/m) + T_AR(p, V/(2m²p), nB/m)].

    The printed equation has T_AR(mp, ...) in its second term, but its own next line,
    4·alpha + (p²-1)/p² · (V/m²)/(2nB/m), needs p there: (p-1)/p + (p-1)/p² = (p²-1)/p²
    holds only with p, so p is used."""
    local = 2 * (m * m - 1) / (m * m) * V / (2 * k * n * B)
    return local + 2 * (t_alltoall_step(p, V / (2 * m * m), n * B / m, alpha)
                        + t_alltoall_step(p, V / (2 * m * m * p), n * B / m, alpha))


def t_2d_hyperx_approx(m: int, p: int, V: float, n: float, B: float, k: float,
                       alpha: float) -> float:
    """Eq 13's closed form 4·alpha + (2/k + 1/m)·V/(2nB)."""
    return 4 * alpha + (2 / k + 1 / m) * V / (2 * n * B)


@dataclass(frozen=True)
class Fig15Setup:
    """§6.4: four ports per chip (n = 1), 100 GB/s external and 400 GB/s internal per port,
    300 ns per external hop and 10 ns per internal hop; the 1D ring gets double bandwidth."""

    m: int = 4
    external: float = 100e9
    internal: float = 400e9
    alpha_external: float = 300e-9
    alpha_internal: float = 10e-9


def fig15_times(setup: Fig15Setup, p: int, V: float) -> dict[str, float]:
    """All-Reduce time of the three algorithms of Fig 15 on an m²·p x p system.

    - 1D-ring: one bidirectional ring through all N = (mp)² chips with two ports per
      direction (2 x external bandwidth); every step is as slow as its external hop.
    - 2D-Torus: eq 7 (Hoefler et al.'s 2D ring algorithm), n = 1.
    - hierarchical 2D-Torus: eq 8 with the local phase on the mesh's internal links.
    """
    m, B = setup.m, setup.external
    k = setup.internal / setup.external
    N = (m * p) ** 2
    return {
        "1D-ring": 2 * t_ring(N, V, 2 * B, setup.alpha_external),
        "2D-Torus": t_2d_ring(m, p, V, 1, B, setup.alpha_external),
        "hierarchical 2D-Torus": t_railx_hierarchical(m, p, V, 1, B, k, setup.alpha_external,
                                                       setup.alpha_internal),
    }


@dataclass(frozen=True)
class ModelConfig:
    """Transformer shape of Table 4: L layers, micro-batch B, N_B micro-batches per DP rank,
    sequence S, hidden H, vocabulary V, h_A attention and h_KV key/value heads, FFN
    intermediate I, top-K experts; ``bytes_per_element`` (2 for bf16)."""

    L: int
    B: int
    N_B: int
    S: int
    H: int
    V: int
    h_A: int
    h_KV: int
    I: int
    K: int
    bytes_per_element: int = 2

    def __post_init__(self) -> None:
        for name in ("L", "B", "N_B", "S", "H", "V", "h_A", "h_KV", "I", "K",
                     "bytes_per_element"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"ModelConfig.{name} must be a positive int, not {value!r}")
        if self.h_A % self.h_KV:
            raise ValueError(f"h_A = {self.h_A} must be a multiple of h_KV = {self.h_KV}")


@dataclass(frozen=True)
class Mapping:
    """Parallelism degrees T (tensor/sequence, on the mesh), C, E, D (= E·D_e for attention
    DP), P, and the rail counts per chip edge of each dimension (n_c, n_e, n_d, n_p),
    with the mesh side m, the internal bandwidth multiple k, port bandwidth B (bytes/s) and
    the optical hop latency alpha."""

    T: int
    C: int
    E: int
    D: int
    P: int
    n_c: float
    n_e: float
    n_d: float
    n_p: float
    m: int
    k: float
    B: float
    alpha: float

    def __post_init__(self) -> None:
        for name in ("T", "C", "E", "D", "P", "m"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Mapping.{name} must be a positive int, not {value!r}")
        if self.D % self.E:
            raise ValueError(f"attention DP D = {self.D} must be a multiple of EP E = {self.E} "
                             f"(D = E·D_e, §5)")
        for name in ("n_c", "n_e", "n_d", "n_p", "k", "B"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Mapping.{name} must be > 0, not {getattr(self, name)!r}")


def _t_multi_dim(dims, V, mp: Mapping) -> float:
    """T_hD of Table 4 over logical dimensions ``dims`` = [(rails n_i, size p_i, all_to_all)]:
    the h-dimensional generalisation of eq 9 (T_1D ≈ 2p·alpha + V/(nB/m), T_2D ≈ 4p·alpha +
    V/(2nB/m)): the bandwidth term V/(Σn_i·B/m), and per dimension the ring latency 2·p_i·alpha
    of a torus dimension (A.3: the CP, DP and PP rails form tori) or 2·alpha of a direct
    Reduce-Scatter + All-Gather on an all-to-all dimension (eq 12: the EP rails)."""
    latency = sum(2 * mp.alpha if a2a else 2 * p * mp.alpha for _, p, a2a in dims)
    return latency + V / (sum(n for n, _, _ in dims) * mp.B / mp.m)


def table4(cfg: ModelConfig, mp: Mapping) -> list[dict]:
    """Table 4 for one model and mapping: per parallelism its pattern, process group (as
    the rank stride pattern), volume V (bytes per call), frequency F (calls per iteration)
    and communication time T = time per call x F (seconds)."""
    c, b = cfg, cfg.bytes_per_element
    T, C, E, D, P = mp.T, mp.C, mp.E, mp.D, mp.P
    # mesh bandwidth k·n·B per chip edge, n = rails per edge of one physical dimension: the
    # CP and EP rails split one dimension, the DP and PP rails the other (Fig 9, eq 11)
    kn = mp.k * (mp.n_c + mp.n_e + mp.n_d + mp.n_p) / 2
    rows = []

    def add(par, pattern, group, volume, freq, per_call):
        rows.append({"parallelism": par, "pattern": pattern, "group": group,
                     "volume": volume, "frequency": freq, "time": per_call * freq})

    f_tp = 4 * c.N_B * c.L / P
    v = c.B * c.S * c.H * b
    add("TP/SP (attention)", "reduce-scatter + all-gather", f"i..i+{T - 1}", v, f_tp,
        v / (2 * kn * mp.B))
    v = c.B * c.S * c.H * c.K * b
    add("TP/SP (FFN/expert)", "reduce-scatter + all-gather", f"i..i+{T - 1}", v, f_tp,
        v / (2 * kn * mp.B))
    v = c.B * c.S * c.H * (2 * c.h_KV / c.h_A) / T * b
    add("CP", "point-to-point", f"i + j*{T}, j < {C}", v, 2 * c.N_B * c.L / P,
        C * mp.alpha + v / (2 * mp.n_c * mp.B / mp.m))
    v = c.B * c.S * c.H * c.K / (T * C) * b
    add("EP", "all-to-all", f"i + j*{T * C}, j < {E}", v, 4 * c.N_B * c.L / P,
        mp.alpha + v / (2 * mp.n_e * mp.B / mp.m))
    v = 2 * c.H * c.V / (T * C) * b
    add("DP (vocabulary)", "all-reduce", f"i + j*{T * C}, j < {D}", v, 1,
        _t_multi_dim([(mp.n_e, E, True), (mp.n_d, D // E, False)], v, mp))
    v = (2 + 2 * c.h_KV / c.h_A) * c.H ** 2 / T * b
    add("DP (QKV/attention)", "all-reduce", f"i + j*{T}, j < {C * D}", v, c.L / P,
        _t_multi_dim([(mp.n_c, C, False), (mp.n_e, E, True), (mp.n_d, D // E, False)], v, mp))
    v = 3 * c.H * c.I / T * b
    add("DP (FFN)", "all-reduce", f"G_C,i + j*{T * C * E}, j < {D // E}", v, c.L / P,
        _t_multi_dim([(mp.n_c, C, False), (mp.n_d, D // E, False)], v, mp))
    v = c.B * c.S * c.H / (T * C) * b
    add("PP", "point-to-point", f"i <-> i + {T * C * D}", v, 2 * c.N_B,
        v / (mp.n_p * mp.B / mp.m))
    return rows
