"""Interconnect cost and power from parts (InfiniteHBD §6.5, Table 6, Appendix F Table 8),
and the aggregate cost of Fig 13d.

Each architecture is Table 8's parts list (quantity, unit cost, unit bandwidth, unit power)
for a unit of ``gpus`` GPUs at ``gbps`` GB/s per GPU; :func:`table6` divides by GPUs and by
GPUs x GB/s. The aggregate cost (§6.5) of a cluster is
``cost_gpu x (wasted + faulty GPUs) + interconnect cost``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Part", "System", "SYSTEMS", "table6", "aggregate_cost", "infinitehbd_parts"]


@dataclass(frozen=True)
class Part:
    name: str
    qty: int
    cost: float
    gbps: float
    watts: float


@dataclass(frozen=True)
class System:
    name: str
    gpus: int
    gbps: float            # GB/s per GPU
    parts: tuple[Part, ...]

    @property
    def cost(self) -> float:
        return sum(p.qty * p.cost for p in self.parts)

    @property
    def watts(self) -> float:
        return sum(p.qty * p.watts for p in self.parts)

    def per_gpu(self) -> dict:
        c, w = self.cost / self.gpus, self.watts / self.gpus
        return {"cost": c, "watts": w, "cost_per_gbps": c / self.gbps,
                "watts_per_gbps": w / self.gbps}


def infinitehbd_parts(K: int, R: int = 4) -> tuple[Part, ...]:
    """The interconnect parts of one InfiniteHBD node of R = 4 GPUs, counted from the wiring
    table (``topology.wiring``): K bundles of 8 OCSTrx (Fig 4; Fig 5 (a) two bundles for
    K = 2, (b) three for K = 3), one fibre per OCSTrx, and 2 DAC cables in each of the
    node's R bundle slots that holds no OCSTrx bundle (§4.2: idle bundles "can be replaced
    with direct connections, such as DAC links"; 2 per slot is Table 8's K = 2 row, 4 DAC
    for 2 free slots, which its K = 3 row, 2 for 1, confirms). Prices, bandwidths and
    powers are Table 8's."""
    from .topology import wiring
    table = wiring(K)
    free = R - len(table.bundles)
    if free < 0:
        raise ValueError(f"K = {K} needs {len(table.bundles)} bundles, more than the {R} "
                         f"slots of a {R}-GPU node")
    return (Part("DAC Cable", 2 * free, 199.60, 200, 0.1),
            Part("OCSTrx", table.trx, 600, 100, 12),
            Part("Fiber", table.trx, 6.80, 100, 0))


_NVSW = ("NVLink Switch", 28000, 3600, 275)
_DAC25 = ("DAC Cable", 35.60, 25, 0.1)
_FIBER = ("Fiber", 6.80)

SYSTEMS = {s.name: s for s in (
    System("tpuv4", 4096, 300, (Part("OCS", 48, 80000, 6400, 108),
                                Part("DAC Cable", 5120, 63.60, 50, 0.1),
                                Part("Optical Module", 6144, 360, 50, 12),
                                Part("Fiber", 6144, 6.80, 50, 0))),
    System("nvl-36", 36, 900, (Part(*_NVSW[:1], 9, *_NVSW[1:]), Part(_DAC25[0], 2592, *_DAC25[1:]))),
    System("nvl-72", 72, 900, (Part(*_NVSW[:1], 18, *_NVSW[1:]), Part(_DAC25[0], 5184, *_DAC25[1:]))),
    System("nvl-36x2", 72, 900, (Part(*_NVSW[:1], 36, *_NVSW[1:]),
                                 Part(_DAC25[0], 6480, *_DAC25[1:]),
                                 Part("ACC Cable", 162, 320, 200, 2.5))),
    System("nvl-576", 576, 900, (Part(*_NVSW[:1], 432, *_NVSW[1:]),
                                 Part(_DAC25[0], 41472, *_DAC25[1:]),
                                 Part("Optical Module", 4608, 850, 200, 25),
                                 Part("Fiber", 4608, 6.80, 200, 0))),
    System("infinitehbd-k2", 4, 800, infinitehbd_parts(2)),
    System("infinitehbd-k3", 4, 800, infinitehbd_parts(3)),
)}


def table6() -> dict:
    """{system: per-GPU cost, watts, cost and watts per GB/s}."""
    return {name: s.per_gpu() for name, s in SYSTEMS.items()}


def aggregate_cost(system: str, gpus: int, wasted: float, faulty: float,
                   gpu_cost: float) -> float:
    """§6.5: GPU cost x (wasted + faulty GPUs) + the interconnect of ``gpus`` GPUs."""
    if system not in SYSTEMS:
        raise ValueError(f"unknown system {system!r}; systems are {', '.join(SYSTEMS)}")
    return gpu_cost * (wasted + faulty) + SYSTEMS[system].per_gpu()["cost"] * gpus
