"""Reproduction records: one per number a paper states, paper value beside model value."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Record", "PAPERS", "KINDS", "TOLERANCE", "printed_tolerance", "record"]

# The five papers, keyed by the models/ package that reproduces each.
PAPERS: dict[str, str] = {
    "railx": "RailX (Feng et al., 2025)",
    "infinitehbd": "InfiniteHBD (Shou et al., 2025)",
    "railonly": "Rail-only (Wang, Ghobadi et al.)",
    "flexsipac": "Flex-SiPAC (Wu et al., JOCN 2024)",
    "chronos": "Chronos (Renganathan & McKeown, NAIC'25)",
}


KINDS = ("value", "bound", "definition")
TOLERANCE = 0.01   # default relative tolerance of a value


@dataclass(frozen=True)
class Record:
    """One number a paper states, and what the model makes of it.

    ``id`` is unique within its paper (e.g. ``"table6.railx7mesh.cost"``); ``paper`` is a key of
    :data:`PAPERS`; ``paper_value`` is the paper's number as printed (or, with ``formula``, the
    paper's printed formula evaluated at the instance, e.g. ``5m - 6`` at m = 4).

    ``kind``
        ``"value"``: the model computes the number independently (a built graph, a simulation,
        a parts list); it matches when the relative error is within ``tolerance``.
        ``"bound"``: the paper claims ``model <= paper_value`` (``bound="<="``) or ``>=``; shown
        as held or not, with the margin, never as a percentage error.
        ``"definition"``: the model evaluates the paper's own formula on the paper's inputs; a
        check of the paper's arithmetic and units, listed apart and never counted as
        reproduced.
    ``bound`` may also be set on a definition whose paper claim is a bound ("exceeds 95 %").
    ``why``: why the model's number is expected to differ from the paper's (a value or
    definition without a ``why`` must match).
    """

    id: str
    paper: str
    metric: str
    unit: str
    paper_value: float
    model_value: float
    note: str = ""
    kind: str = "value"
    bound: str | None = None
    tolerance: float = TOLERANCE
    why: str = ""
    formula: str = ""

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
        if self.kind not in KINDS:
            raise ValueError(f"Record {self.id!r}: kind must be one of {', '.join(KINDS)}, "
                             f"not {self.kind!r}")
        if self.bound not in (None, "<=", ">="):
            raise ValueError(f"Record {self.id!r}: bound must be '<=' or '>=', not "
                             f"{self.bound!r}")
        if (self.kind == "bound" and self.bound is None) or (self.kind == "value"
                                                             and self.bound is not None):
            raise ValueError(f"Record {self.id!r}: a bound needs bound='<=' or '>=' (a "
                             f"definition may have one: the paper's claim about its own "
                             f"formula), a value has none")
        if not 0 <= self.tolerance < 1:
            raise ValueError(f"Record {self.id!r}: tolerance must be in [0, 1), "
                             f"not {self.tolerance!r}")

    @property
    def rel_error(self) -> float:
        """|model - paper| / |paper|; the absolute error when the paper states 0."""
        diff = abs(self.model_value - self.paper_value)
        return diff / abs(self.paper_value) if self.paper_value else diff

    @property
    def margin(self) -> float:
        """For a bound: how far inside it the model is (negative: violated)."""
        sign = 1 if self.bound == "<=" else -1
        return sign * (self.paper_value - self.model_value)

    @property
    def status(self) -> str:
        """``match``/``differs`` for values and definitions, ``holds``/``violated`` for
        bounds (and for definitions the paper states as a bound)."""
        if self.bound is not None:
            return "holds" if self.margin >= 0 else "violated"
        return "match" if self.rel_error <= self.tolerance else "differs"

    @property
    def ok(self) -> bool:
        """Matches, holds, or differs for a stated reason."""
        return self.status in ("match", "holds") or (self.status == "differs" and bool(self.why))

    def to_dict(self) -> dict:
        return {
            "id": self.id, "paper": self.paper, "metric": self.metric, "unit": self.unit,
            "kind": self.kind, "bound": self.bound, "formula": self.formula,
            "paper_value": self.paper_value, "model_value": self.model_value,
            "rel_error": None if self.bound else self.rel_error,
            "margin": self.margin if self.bound else None,
            "tolerance": self.tolerance, "status": self.status, "note": self.note,
            "why": self.why,
        }


def printed_tolerance(printed: float, text: str | None = None) -> float:
    """Tolerance of a number printed with limited precision: the larger of 1 % and half a
    unit of its last printed digit (``text``: the number as printed, e.g. ``"45.0"``)."""
    text = text if text is not None else repr(float(printed))
    digits = len(text.split(".")[1]) if "." in text else 0
    if not printed:
        return TOLERANCE
    return max(TOLERANCE, 0.5 * 10.0 ** -digits / abs(printed))


def record(paper: str, id: str, metric: str, unit: str, paper_value: float,
           model_value: float, **kw) -> Record:
    """A :class:`Record` whose ``why`` is kept only where the model differs from the paper (a
    reason explains a difference; on a match or a held bound it would mislead)."""
    from dataclasses import replace
    r = Record(id=id, paper=paper, metric=metric, unit=unit, paper_value=float(paper_value),
               model_value=float(model_value), **kw)
    return replace(r, why="") if r.why and r.status in ("match", "holds") else r
