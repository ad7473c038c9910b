"""Reproduction records: one per number a paper states, paper value beside model value."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Record", "PAPERS"]

# The five papers, keyed by the models/ package that reproduces each.
PAPERS: dict[str, str] = {
    "railx": "RailX (Feng et al., 2025)",
    "infinitehbd": "InfiniteHBD (Shou et al., 2025)",
    "railonly": "Rail-only (Wang, Ghobadi et al.)",
    "flexsipac": "Flex-SiPAC (Wu et al., JOCN 2024)",
    "chronos": "Chronos (Renganathan & McKeown, NAIC'25)",
}


@dataclass(frozen=True)
class Record:
    """One reproduced figure.

    ``id`` is unique within its paper (e.g. ``"table6.railx7mesh.cost"``); ``paper`` is a key of
    :data:`PAPERS`; ``paper_value`` is what the paper states and ``model_value`` what the model
    computes from first principles.
    """

    id: str
    paper: str
    metric: str
    unit: str
    paper_value: float
    model_value: float
    note: str = ""

    def __post_init__(self) -> None:
        if self.paper not in PAPERS:
            raise ValueError(f"Record {self.id!r}: unknown paper {self.paper!r}; "
                             f"allowed: {', '.join(PAPERS)}")
        for name in ("paper_value", "model_value"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) \
                    or not math.isfinite(value):
                raise ValueError(f"Record {self.id!r}: {name} must be a finite number, "
                                 f"not {value!r}")

    @property
    def rel_error(self) -> float:
        """|model - paper| / |paper|; the absolute error when the paper states 0."""
        diff = abs(self.model_value - self.paper_value)
        return diff / abs(self.paper_value) if self.paper_value else diff

    def to_dict(self) -> dict:
        return {
            "id": self.id, "paper": self.paper, "metric": self.metric, "unit": self.unit,
            "paper_value": self.paper_value, "model_value": self.model_value,
            "rel_error": self.rel_error, "note": self.note,
        }
