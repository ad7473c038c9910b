"""Platforms and GPT models of the iteration-time model (:mod:`.iteration`), with the
published measurements its compute efficiency is calibrated on and Rail-only's Fig 7 is
checked against. Rail-only and InfiniteHBD both build on them.

Bandwidths are per GPU and per direction, in bytes/s: ``C_F`` the HB domain (NVLink), ``C_S``
the NIC. Peak is dense 16-bit tensor throughput. ``efficiency`` is the fraction of peak a
transformer layer's compute sustains; ``None`` means "calibrated": see
:func:`models.common.iteration.calibrate_efficiency`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["Platform", "GPT", "PLATFORMS", "MODELS", "KORTHIKANTI", "MEGATRON", "Measured",
           "get_model", "get_platform"]

GBPS = 1e9 / 8   # bytes/s per Gb/s


@dataclass(frozen=True)
class Platform:
    name: str
    hb: int                  # GPUs per HB domain (K)
    peak: float              # FLOP/s per GPU
    C_F: float               # HB bandwidth per GPU, bytes/s
    C_S: float               # NIC bandwidth per GPU, bytes/s
    memory: float            # bytes of HBM per GPU
    efficiency: float | None = None

    def __post_init__(self) -> None:
        for name in ("peak", "C_F", "C_S", "memory"):
            if not getattr(self, name) > 0:
                raise ValueError(f"platform {self.name}: {name} must be > 0, not "
                                 f"{getattr(self, name)!r}")
        if isinstance(self.hb, bool) or not isinstance(self.hb, int) or self.hb < 1:
            raise ValueError(f"platform {self.name}: hb must be an int >= 1, not {self.hb!r}")
        if self.efficiency is not None and not 0 < self.efficiency <= 1:
            raise ValueError(f"platform {self.name}: efficiency must be in (0, 1], not "
                             f"{self.efficiency!r}")

    def with_(self, **kw) -> "Platform":
        return replace(self, **kw)


PLATFORMS = {
    # DGX A100: NVLink3 600 GB/s per GPU (300 GB/s each way = 2.4 Tb/s), 8 x 200G HDR NICs.
    "dgx-a100": Platform("dgx-a100", 8, 312e12, 2400 * GBPS, 200 * GBPS, 80e9),
    # DGX H100: NVLink4 900 GB/s (3.6 Tb/s each way), 8 x 400G NDR NICs.
    "dgx-h100": Platform("dgx-h100", 8, 989e12, 3600 * GBPS, 400 * GBPS, 80e9),
    # DGX GH200: 256 GPUs under two NVSwitch tiers at the same 3.6 Tb/s, 400G per GPU.
    "dgx-gh200": Platform("dgx-gh200", 256, 989e12, 3600 * GBPS, 400 * GBPS, 96e9),
}


@dataclass(frozen=True)
class GPT:
    name: str
    layers: int
    hidden: int
    heads: int
    seq: int = 2048
    vocab: int = 51200

    @property
    def block_params(self) -> int:
        """S_T: parameters of one transformer block (12 h^2 + 13 h)."""
        return 12 * self.hidden ** 2 + 13 * self.hidden

    @property
    def params(self) -> int:
        return self.layers * self.block_params + (self.vocab + self.seq) * self.hidden

    def flops(self, batch: int, recompute: str = "selective") -> float:
        """FLOPs of one iteration over ``batch`` sequences (Korthikanti et al., appendix):
        model FLOPs 72 B s l h^2 (1 + s/(6h) + V/(12 h l)) with ``recompute="none"``;
        hardware FLOPs with selective recomputation (the attention core recomputed:
        s/(3h)) or full recomputation (the whole forward of every block again)."""
        B, s, l, h, V = batch, self.seq, self.layers, self.hidden, self.vocab
        base = 72 * B * s * l * h ** 2
        logits = V / (12 * h * l)
        if recompute == "none":
            return base * (1 + s / (6 * h) + logits)
        if recompute == "selective":
            return base * (1 + s / (3 * h) + logits)
        if recompute == "full":
            return base * (4 / 3 * (1 + s / (6 * h)) + logits)
        raise ValueError(f"recompute must be 'none', 'selective' or 'full', not {recompute!r}")


MODELS = {m.name: m for m in (
    # Korthikanti et al. 2022, Table 3.
    GPT("gpt-22b", 48, 6144, 64),
    GPT("gpt-175b", 96, 12288, 96),
    GPT("gpt-530b", 105, 20480, 128),
    GPT("gpt-1t", 128, 25600, 160),
    # Narayanan et al. 2021 (MegatronLM), Table 1 (the 1T model is the same as above).
    GPT("gpt-146b", 80, 12288, 96),
    GPT("gpt-310b", 96, 16384, 128),
)}


@dataclass(frozen=True)
class Measured:
    """A published training run on DGX A100s: the parallelisation and the measured
    iteration times with full and with selective recomputation (+ sequence parallelism)."""

    model: str
    t: int
    p: int
    gpus: int
    batch: int
    micro: int
    v: int
    time_full: float
    time_selective: float
    hfu: float       # published HFU of the selective run
    mfu: float


# Korthikanti et al. 2022, Tables 3 and 5 (175B and 530B ran the interleaved schedule, v = 3).
KORTHIKANTI = (
    Measured("gpt-22b", 8, 1, 8, 4, 4, 1, 1.42, 1.10, 0.437, 0.415),
    Measured("gpt-175b", 8, 8, 64, 64, 1, 3, 18.13, 13.75, 0.528, 0.514),
    Measured("gpt-530b", 8, 35, 280, 280, 1, 3, 49.05, 37.83, 0.570, 0.560),
    Measured("gpt-1t", 8, 64, 512, 512, 1, 1, 94.42, 71.49, 0.570, 0.563),
)

# Narayanan et al. 2021 Table 1: the MegatronLM runs of §III-A's traffic analysis
# (model, t, p, GPUs, batch).
MEGATRON = (
    ("gpt-146b", 8, 8, 1536, 2304),
    ("gpt-310b", 8, 16, 1920, 2160),
    ("gpt-530b", 8, 35, 2520, 2520),
    ("gpt-1t", 8, 64, 3072, 3072),
)


def get_model(name: str) -> GPT:
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; models are {', '.join(MODELS)}")
    return MODELS[name]


def get_platform(name: str) -> Platform:
    if name not in PLATFORMS:
        raise ValueError(f"unknown platform {name!r}; platforms are {', '.join(PLATFORMS)}")
    return PLATFORMS[name]
