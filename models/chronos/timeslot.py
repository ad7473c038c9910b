"""Time slots of a prescheduled circuit fabric (Chronos, NAIC'25, §6).

A slot must carry the smallest transfer ``b`` (bytes) of any collective call at link rate ``c``
(bit/s), plus the largest one-way latency ``t_max`` between endpoints and the guard time
``t_x`` while the crossbar changes permutation:

    T >= b / c + t_max + t_x            (b / c in seconds: 8 * b / c)
    eta = (b / c) / T                   (fraction of the slot that carries data)

All times are in seconds, sizes in bytes, rates in bit/s.
"""

from __future__ import annotations

import math

__all__ = ["FIBRE_S_PER_M", "slot_duration", "efficiency", "min_bytes_for_efficiency",
           "fibre_latency", "dp_bytes_per_transfer"]

# Light in silica fibre: ~2e8 m/s, i.e. 5 ns per metre (the paper's 2 km -> 10 us).
FIBRE_S_PER_M = 5e-9


def _positive(name: str, value: object, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"'{name}' must be a finite number {bound}, not {value!r}")
    return float(value)


def _args(bytes_, link_bps, t_max_s, t_x_s):
    return (_positive("bytes", bytes_), _positive("link_bps", link_bps),
            _positive("t_max_s", t_max_s, True), _positive("t_x_s", t_x_s, True))


def slot_duration(bytes: float, link_bps: float, t_max_s: float, t_x_s: float) -> float:
    """Shortest slot (s) that carries ``bytes`` at ``link_bps`` after latency and guard."""
    b, c, t_max, t_x = _args(bytes, link_bps, t_max_s, t_x_s)
    return 8.0 * b / c + t_max + t_x


def efficiency(bytes: float, link_bps: float, t_max_s: float, t_x_s: float) -> float:
    """Fraction of the shortest slot spent transferring data, (b/c) / T."""
    b, c, t_max, t_x = _args(bytes, link_bps, t_max_s, t_x_s)
    return (8.0 * b / c) / (8.0 * b / c + t_max + t_x)


def min_bytes_for_efficiency(eta: float, link_bps: float, t_max_s: float,
                             t_x_s: float) -> float:
    """Smallest transfer (bytes) whose slot efficiency reaches ``eta`` (0 < eta < 1):
    b / c >= eta / (1 - eta) * (t_max + t_x)."""
    if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not 0.0 < eta < 1.0:
        raise ValueError(f"'eta' must be a fraction strictly between 0 and 1, not {eta!r}")
    c = _positive("link_bps", link_bps)
    t_max = _positive("t_max_s", t_max_s, True)
    t_x = _positive("t_x_s", t_x_s, True)
    return eta / (1.0 - eta) * (t_max + t_x) * c / 8.0


def fibre_latency(metres: float) -> float:
    """One-way propagation delay (s) over ``metres`` of fibre."""
    return _positive("metres", metres, True) * FIBRE_S_PER_M


def dp_bytes_per_transfer(params_per_layer: float, tp: int, dp: int,
                          grad_bytes: int = 4) -> float:
    """Bytes one data-parallel ring step carries for one layer's gradients (§6):
    b = grad_bytes * p_l / (TP * DP); the paper uses fp32 gradients (4 bytes)."""
    p = _positive("params_per_layer", params_per_layer)
    for name, v in (("tp", tp), ("dp", dp), ("grad_bytes", grad_bytes)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"'{name}' must be an int >= 1, not {v!r}")
    return grad_bytes * p / (tp * dp)
