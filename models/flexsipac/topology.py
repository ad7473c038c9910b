"""SiPAC(r, L) / Flex-SiPAC topology (Flex-SiPAC §3.A, Figs 2, 3, 9).

A recursive BCube of WSSs: CU ``x`` in ``0 .. r^L - 1`` has base-``r`` digits
``(x_0, .., x_{L-1})`` (x_0 least significant); the level-``l`` WSS ``(l, rest)`` joins the
``r`` CUs that differ only in digit ``l`` (``rest`` = the other digits). Hence
N = r^L CUs, M = L r^(L-1) WSSs, every CU has L ports (one per level) and r - 1 direct
neighbours per level through wavelength routing, and the CU-to-CU diameter is L.

Bandwidth (Fig 3, uniform wavelengths): a CU's ``w`` comb wavelengths are split evenly over
its L ports (``w / L`` per port, the per-link bandwidth ``w / L x rate``) and each WSS
spreads a port's wavelengths over its ``r`` output ports (the paper's CU-to-CU figure, 256
Gb/s at radix 16 from 4 Tb/s per link, divides the link by r).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SiPAC", "fig3_bandwidth", "fig9_sizes", "FIG9_ARCHS"]


def _int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, not {value!r}")
    return int(value)


class SiPAC:
    """SiPAC(r, L): ``r``-port WSSs, ``L`` levels."""

    def __init__(self, r: int, L: int):
        self.r = _int("r (WSS radix)", r, 2)
        self.L = _int("L (levels)", L, 1)

    def __repr__(self) -> str:
        return f"SiPAC(r={self.r}, L={self.L})"

    @property
    def N(self) -> int:
        return self.r ** self.L

    @property
    def M(self) -> int:
        return self.L * self.r ** (self.L - 1)

    def digits(self, x: int) -> tuple[int, ...]:
        return tuple((x // self.r ** l) % self.r for l in range(self.L))

    def cu(self, digits) -> int:
        return sum(d * self.r ** l for l, d in enumerate(digits))

    def with_digit(self, x: int, l: int, value: int) -> int:
        """CU ``x`` with digit ``l`` replaced by ``value``."""
        p = self.r ** l
        return x - ((x // p) % self.r) * p + value * p

    def wss(self, x: int, l: int) -> tuple[int, int]:
        """The level-``l`` WSS of CU ``x``: (l, index of x with digit l zeroed)."""
        return (l, self.with_digit(x, l, 0))

    def port(self, x: int, l: int) -> int:
        """CU ``x``'s port number on its level-``l`` WSS (its digit l)."""
        return self.digits(x)[l]

    def neighbours(self, x: int, l: int) -> list[int]:
        """The r - 1 CUs reached through x's level-``l`` WSS."""
        return [self.with_digit(x, l, v) for v in range(self.r) if v != self.digits(x)[l]]

    def level(self, x: int, y: int) -> int | None:
        """The level at which ``x`` and ``y`` are direct neighbours, or None."""
        diff = [l for l, (a, b) in enumerate(zip(self.digits(x), self.digits(y))) if a != b]
        return diff[0] if len(diff) == 1 else None

    def graph(self):
        """networkx Graph: CUs ``("cu", x)`` and WSSs ``("wss", l, i)``, one edge per port."""
        import networkx as nx
        g = nx.Graph()
        for x in range(self.N):
            for l in range(self.L):
                g.add_edge(("cu", x), ("wss",) + self.wss(x, l), level=l)
        return g

    def cu_graph(self):
        """networkx Graph of CUs, an edge per direct (one-WSS) neighbour pair."""
        import networkx as nx
        g = nx.Graph()
        g.add_nodes_from(range(self.N))
        for x in range(self.N):
            for l in range(self.L):
                g.add_edges_from((x, y, {"level": l}) for y in self.neighbours(x, l) if y > x)
        return g

    def bisection_pairs(self) -> int:
        """Direct neighbour pairs across the cut on the top digit (CUs with x_{L-1} < r/2 vs
        the rest; r even): r^(L-1) top-level WSSs x (r/2)^2 pairs each."""
        if self.r % 2:
            raise ValueError(f"a balanced bisection on the top digit needs an even r, not {self.r}")
        return self.r ** (self.L - 1) * (self.r // 2) ** 2


def fig3_bandwidth(radix, w: int = 160, rate_gbps: float = 128.0, L: int = 5) -> dict:
    """Fig 3's projection: per-link bandwidth (w / L wavelengths x rate) and CU-to-CU direct
    bandwidth (a link's wavelengths over the WSS's r ports), in Gb/s, for each radix.
    Defaults: 160 comb wavelengths at 128 Gb/s (the paper's cited state of the art) over
    5 ports, i.e. 32 wavelengths (4.1 Tb/s) per link."""
    radix = np.asarray(radix, dtype=float)
    if np.any(radix < 2):
        raise ValueError("radix must be >= 2")
    link = math.floor(w / L) * rate_gbps
    return {"link_gbps": np.full_like(radix, link), "cu_to_cu_gbps": link / radix}


FIG9_ARCHS = ("flex-sipac-l2", "flex-sipac-l3", "tpuv4", "h100-superpod", "sip-ocs")


def fig9_sizes(radix) -> dict:
    """Fig 9: endpoints reachable as a function of switch radix R.

    - Flex-SiPAC: R^2 (2 levels), R^3 (3 levels) -- counted on built topologies.
    - TPUv4: 64-TPU blocks, each OCS port pair wraps one block: 64 x R / 2 (4,096 TPUs from
      128-port OCSs; the Palomar OCS has 136 ports, 128 used).
    - DGX-H100 SuperPOD: 8-GPU servers under the top NVSwitch tier, one server per two
      ports of it: 8 x R / 2 (256 GPUs from 64-port NVSwitches).
    - SiP-OCS: one OCS port per GPU: R.
    """
    out = {}
    for R in radix:
        R = _int("radix", R, 2)
        out[R] = {"flex-sipac-l2": SiPAC(R, 2).N, "flex-sipac-l3": SiPAC(R, 3).N,
                  "tpuv4": 64 * R // 2, "h100-superpod": 8 * R // 2, "sip-ocs": R}
    return out
