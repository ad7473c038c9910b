"""Rail-optimized vs Rail-only networks: switch and transceiver counts, cost and power
(Rail-only §II-B, §IV-A, §V-E, eq 4-5, Table II).

*Rail-optimized* (the state of the art, Fig 1): one non-blocking minimum-tier Clos over all
``gpus`` NICs (the rail switches are its first tier; spines give any-to-any connectivity).
*Rail-only* (Fig 6): the spines removed; each of the ``hb`` rails (GPUs of one local rank, one
per HB domain) has its own non-blocking minimum-tier Clos over ``gpus / hb`` NICs.

A rail small enough for one switch with room to spare shares it: ``radix // rail`` rails per
switch, their ports partitioned (no traffic crosses between rails; Table II's 32,768-GPU /
radix-256 row counts 128 switches for 256 rails of 128 GPUs).

Cost and power (eq 4-5) with the paper's footnote prices: $199 and 9 W per 400G transceiver,
$694 and 18 W per 400G switch port, every port of every switch charged.
"""

from __future__ import annotations

from dataclasses import dataclass

from aifabric.models.common.clos import Clos, min_tier_clos

__all__ = ["Prices", "Network", "rail_optimized", "rail_only", "savings", "table2",
           "TABLE2_GPUS", "TABLE2_RADIX", "TABLE2_HB", "hb_sizes_matching"]

TABLE2_GPUS = (32_768, 65_536)
TABLE2_RADIX = (64, 128, 256)
TABLE2_HB = 256   # DGX GH200 HB domains: the size for which every cell of Table II follows


def _int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, not {value!r}")
    return value


@dataclass(frozen=True)
class Prices:
    """Eq 4-5 unit prices (Rail-only footnote 1; 400 Gb/s parts)."""

    transceiver: float = 199.0
    switch_port: float = 694.0
    transceiver_w: float = 9.0
    switch_port_w: float = 18.0


@dataclass(frozen=True)
class Network:
    """A network as a list of identical Clos fabrics (one for Rail-optimized, one per rail
    for Rail-only)."""

    name: str
    gpus: int
    radix: int
    fabric: Clos
    copies: int

    @property
    def switches(self) -> int:
        if self.fabric.tiers == 1:   # single-switch fabrics share switches
            per = self.radix // self.fabric.hosts
            return -(-self.copies // per)
        return self.copies * self.fabric.switches

    @property
    def transceivers(self) -> int:
        return self.copies * self.fabric.transceivers

    @property
    def tiers(self) -> int:
        return self.fabric.tiers

    @property
    def switch_ports(self) -> int:
        return self.radix * self.switches

    def cost(self, prices: Prices = Prices()) -> float:
        """Eq 4 in dollars."""
        return prices.switch_port * self.switch_ports + prices.transceiver * self.transceivers

    def power(self, prices: Prices = Prices()) -> float:
        """Eq 5 in watts."""
        return prices.switch_port_w * self.switch_ports \
            + prices.transceiver_w * self.transceivers


def rail_optimized(gpus: int, radix: int) -> Network:
    """One any-to-any non-blocking Clos over every GPU's NIC."""
    _int("gpus", gpus, 1)
    return Network("rail-optimized", gpus, radix, min_tier_clos(gpus, radix), 1)


def rail_only(gpus: int, radix: int, hb: int) -> Network:
    """One non-blocking Clos per rail: ``hb`` rails of ``gpus / hb`` GPUs."""
    _int("gpus", gpus, 1)
    _int("hb", hb, 1)
    if gpus % hb:
        raise ValueError(f"gpus ({gpus:,}) must be a multiple of the HB domain size hb ({hb}): "
                         f"every HB domain gives one GPU to each rail")
    return Network("rail-only", gpus, radix, min_tier_clos(gpus // hb, radix), hb)


def savings(gpus: int, radix: int, hb: int, prices: Prices = Prices()) -> dict:
    """Counts of both designs and Rail-only's fractional cost and power savings."""
    sota, ro = rail_optimized(gpus, radix), rail_only(gpus, radix, hb)
    return {
        "gpus": gpus, "radix": radix, "hb": hb,
        "sota_tiers": sota.tiers, "railonly_tiers": ro.tiers,
        "sota_switches": sota.switches, "railonly_switches": ro.switches,
        "sota_transceivers": sota.transceivers, "railonly_transceivers": ro.transceivers,
        "sota_cost": sota.cost(prices), "railonly_cost": ro.cost(prices),
        "sota_power": sota.power(prices), "railonly_power": ro.power(prices),
        "cost_saving": 1 - ro.cost(prices) / sota.cost(prices),
        "power_saving": 1 - ro.power(prices) / sota.power(prices),
    }


def table2(hb: int = TABLE2_HB, prices: Prices = Prices()) -> list[dict]:
    """The six rows of Table II (32,768 and 65,536 GPUs x radix 64, 128, 256)."""
    return [savings(g, r, hb, prices) for g in TABLE2_GPUS for r in TABLE2_RADIX]


def hb_sizes_matching(printed: list[dict], candidates=(8, 16, 32, 64, 128, 256, 512)) -> list:
    """HB domain sizes for which every switch and transceiver count of ``printed`` (rows with
    the keys of :func:`savings`) follows; Table II does not state its HB domain size."""
    keys = ("sota_switches", "railonly_switches", "sota_transceivers", "railonly_transceivers")
    out = []
    for hb in candidates:
        rows = [savings(p["gpus"], p["radix"], hb) for p in printed]
        if all(r[k] == p[k] for r, p in zip(rows, printed) for k in keys):
            out.append(hb)
    return out
