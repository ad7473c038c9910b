"""Collective cost on GPUs grouped in HB domains joined by a network: the hierarchical
AllGather of Rail-only's eq 1, which the iteration-time model (:mod:`.iteration`) charges for
every tensor- and data-parallel collective. Bandwidths in bytes/s per GPU and direction, sizes
in bytes; ``x`` GPUs per HB domain, ``y`` HB domains."""

from __future__ import annotations

import numpy as np

__all__ = ["ag_time", "check_sizes", "check_positive"]


def check_sizes(x, y) -> None:
    """ValueError unless every grid size in ``x`` and ``y`` is >= 1 (arrays allowed)."""
    for name, v in (("x", x), ("y", y)):
        if not np.all(np.asarray(v) >= 1):
            raise ValueError(f"{name} (grid size) must be >= 1, not {v!r}")


def check_positive(**kw) -> None:
    """ValueError naming the first keyword whose value (or any element) is not > 0."""
    for name, v in kw.items():
        if not np.all(np.asarray(v) > 0):
            raise ValueError(f"{name} must be > 0, not {v!r}")


def ag_time(D, x, y, C_F, C_S):
    """Eq 1: (y-1) D / (x y C_S) + (x-1) D / (x C_F): each rail first gathers across the y HB
    domains over the NIC, then every HB domain gathers across its x GPUs. Broadcasts over
    numpy arrays."""
    check_sizes(x, y)
    check_positive(C_F=C_F, C_S=C_S)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return (y - 1) * D / (x * y * C_S) + (x - 1) * D / (x * C_F)
