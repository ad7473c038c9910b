"""Bandwidth allocation between parallelisms (RailX §5, eq 10-11, Fig 16; §5.2, Fig 13).

Static allocation (§5.1): the rails of one physical dimension are split between two
parallelisms (here DP and CP); eq 11 picks the split that minimises
max(T*_comp,d, V_d/(2 n_d B)) + max(T*_comp,c, V_c/(2 n_c B)), T*_comp the compute each
communication can hide behind.

Dynamic allocation (§5.2): CP and EP communication are separated by a compute gap (6 ms in the
paper's Llama3-70B trace, A.4); if the OCS reconfigures within the gap, each gets all the
dimension's rails in turn instead of a static share.
"""

from __future__ import annotations

from dataclasses import dataclass

from .collectives import ModelConfig

__all__ = ["split_time", "best_split", "Fig16Scenario", "fig16", "dynamic_cp_ep"]


def split_time(n_d: int, n_c: int, V_d: float, V_c: float, B: float, comp_d: float = 0.0,
               comp_c: float = 0.0, exposed_d: float = 0.0) -> float:
    """Eq 11's objective for one split (eq 10's form): ports are per chip edge, B bytes/s per
    port; ``exposed_d`` is the share of V_d that cannot overlap (the last layer's gradients,
    eq 10's T_Comm), the rest hides behind ``comp_d``."""
    if n_d < 1 or n_c < 1:
        raise ValueError(f"each parallelism needs at least one port, not n_d={n_d}, n_c={n_c}")
    dp = V_d / (2 * n_d * B)
    return max(comp_d, (1 - exposed_d) * dp) + exposed_d * dp + max(comp_c, V_c / (2 * n_c * B))


def best_split(ports: int, V_d: float, V_c: float, B: float, comp_d: float = 0.0,
               comp_c: float = 0.0, exposed_d: float = 0.0) -> tuple[int, int, float]:
    """(n_d, n_c, time) of the best split of ``ports`` (>= 2) by exhaustive search; ties go to
    fewer CP ports."""
    if not isinstance(ports, int) or isinstance(ports, bool) or ports < 2:
        raise ValueError(f"ports must be an int >= 2, not {ports!r}")
    best = None
    for n_c in range(1, ports):
        t = split_time(ports - n_c, n_c, V_d, V_c, B, comp_d, comp_c, exposed_d)
        if best is None or t < best[2] - 1e-15:
            best = (ports - n_c, n_c, t)
    return best


@dataclass(frozen=True)
class Fig16Scenario:
    """Llama-3-405B-like dense model on RailX, Table 4 volumes: tensor parallelism T on the
    mesh, context parallelism C and data parallelism D sharing ``ports`` rails of one
    dimension; port bandwidth B (400G = 50 GB/s), m chips share a rail; the DP backward pass
    computes at ``flops`` per chip."""

    model: ModelConfig = ModelConfig(L=126, B=1, N_B=16, S=8192, H=16384, V=128256, h_A=128,
                                     h_KV=8, I=53248, K=1)
    T: int = 16
    C: int = 8
    P: int = 16
    m: int = 4
    ports: int = 10
    B: float = 50e9
    flops: float = 400e12
    params: float = 405e9


def _volumes(sc: Fig16Scenario, S: int) -> tuple[float, float, float]:
    """(DP bytes, CP bytes, DP-overlappable compute seconds) per iteration and chip at
    sequence length S, from Table 4's rows (the rail bandwidth is shared by m chips)."""
    c, b = sc.model, sc.model.bytes_per_element
    f_layers = c.L / sc.P
    dp = ((2 + 2 * c.h_KV / c.h_A) * c.H ** 2 / sc.T + 3 * c.H * c.I / sc.T) * b * f_layers
    cp = c.B * S * c.H * (2 * c.h_KV / c.h_A) / sc.T * b * 2 * c.N_B * f_layers
    tokens = c.B * c.N_B * S / sc.C
    backward = 4 * sc.params / (sc.T * sc.P) * tokens / sc.flops
    return dp * sc.m, cp * sc.m, backward


def fig16(sc: Fig16Scenario = Fig16Scenario(),
          seq_lens=(8192, 16384, 32768, 65536, 131072)) -> dict:
    """Fig 16: the best DP/CP split of ``sc.ports`` rails vs sequence length, without and
    with DP computation overlap (all but the last layer's gradients of a pipeline stage hide
    behind the backward pass), and the time of every split."""
    out = {"seq_lens": list(seq_lens), "ports": sc.ports, "no_overlap": [], "overlap": [],
           "times": {}}
    for S in seq_lens:
        dp, cp, hide = _volumes(sc, S)
        out["no_overlap"].append(best_split(sc.ports, dp, cp, sc.B)[1])
        exposed = sc.P / sc.model.L
        out["overlap"].append(best_split(sc.ports, dp, cp, sc.B, comp_d=hide,
                                         exposed_d=exposed)[1])
        out["times"][S] = {
            "no_overlap": [split_time(sc.ports - k, k, dp, cp, sc.B) for k in range(1, sc.ports)],
            "overlap": [split_time(sc.ports - k, k, dp, cp, sc.B, comp_d=hide,
                                   exposed_d=exposed) for k in range(1, sc.ports)],
        }
    return out


def dynamic_cp_ep(V_cp: float, V_ep: float, ports: int, B: float, gap: float,
                  reconfig: float) -> dict:
    """§5.2: CP then (after ``gap`` seconds of computation) EP communication on one
    dimension of ``ports`` rails. Static: the best fixed split serves both. Dynamic: all
    rails to CP, reconfigure the OCS during the gap, all rails to EP, reconfigure back;
    possible only when ``reconfig`` <= ``gap``. Returns both schedules (phase, start, end,
    CP rails, EP rails) and their communication times."""
    n_e, n_c, _ = best_split(ports, V_ep, V_cp, B)
    static_cp, static_ep = V_cp / (2 * n_c * B), V_ep / (2 * n_e * B)
    static = [("CP", 0.0, static_cp, n_c, n_e),
              ("compute", static_cp, static_cp + gap, n_c, n_e),
              ("EP", static_cp + gap, static_cp + gap + static_ep, n_c, n_e)]
    out = {"static": static, "static_comm": static_cp + static_ep, "feasible": reconfig <= gap}
    if reconfig <= gap:
        cp, ep = V_cp / (2 * ports * B), V_ep / (2 * ports * B)
        out["dynamic"] = [("CP", 0.0, cp, ports, 0),
                          ("reconfigure CP->EP", cp, cp + reconfig, 0, 0),
                          ("compute", cp, cp + gap, 0, 0),
                          ("EP", cp + gap, cp + gap + ep, 0, ports),
                          ("reconfigure EP->CP", cp + gap + ep, cp + gap + ep + reconfig, 0, 0)]
        out["dynamic_comm"] = cp + ep
    return out
