"""Reproduction records: one per number a paper states, paper value beside model value.

A record keeps two things apart: what we **expect** (``expect="match"``, or ``"differ"`` with
its reason in ``why``, or ``"missing"`` while the model cannot produce the number yet) and
what the run **gave** (:attr:`Record.status`). :attr:`Record.ok` is their agreement, so a
record that flips, from differs to matches or back, fails the report's test instead of
becoming a silent reproduction or a stale reason.

The kinds say what was done to get the model's number; only ``value`` counts as reproduced:

``value``
    reproduced: the model builds the number from something the paper does not hand over as
    the answer (a built graph, a simulation, a search, a schedule executed on numbers).
    ``simulated=True`` marks those that come out of a simulation: the papers' headline
    experiments.
``bound``
    the paper claims at most / at least (``bound="<="`` or ``">="``): held or violated, with
    the margin, never a percentage error.
``arithmetic``
    arithmetic on the paper's own parts list or a closed form (Table 6 from Table 8's
    quantities and prices, N = r^L): shown and checked, never counted as reproduced.
``fitted``
    a model value fitted to the paper; ``fit`` says what was fitted to what.
``definition``
    the paper's own formula evaluated on the paper's own inputs: a check of its arithmetic
    and units.
``ablation``
    the same metric at a setting other than the paper's (a scan, another router, another
    reading of an open parameter): what moves the result. Never counted; it carries its
    ``setting`` and ``expected_range`` and is ``ok`` when its value lies in the range.

A record that comes out of a simulation, search or sampled run also says **where it ran and
where its own value is expected**: ``setting`` (the parameters, the paper's where the paper
states them), ``choices`` (parameter -> why it is ours and not the paper's) and
``expected_range`` ((lo, hi), from the run-to-run spread measured over seeds or placements plus
a stated margin, never from the paper). :attr:`Record.ok` then also requires the value inside
the range, so a regression in either direction fails even where the record is expected to
differ from the paper. Where the paper's value lies inside the range the rule's status stands
and :attr:`Record.paper_in_range` says so.

One tolerance rule for every record (:func:`printed_tolerance`): a number matches within 1 %
or half a unit of the paper's last printed digit, whichever is larger. ``printed`` is the
paper's number as printed (``"13"``, ``"0.80"``); without it the shortest decimal form of
``paper_value`` is taken. A printed formula evaluated at the instance (``formula``) is exact:
1 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["Record", "PAPERS", "KINDS", "EXPECTS", "TOLERANCE", "printed_tolerance", "record",
           "range_table", "with_ranges"]

# The five papers, keyed by the models/ package that reproduces each.
PAPERS: dict[str, str] = {
    "railx": "RailX (Feng et al., 2025)",
    "infinitehbd": "InfiniteHBD (Shou et al., 2025)",
    "railonly": "Rail-only (Wang, Ghobadi et al.)",
    "flexsipac": "Flex-SiPAC (Wu et al., JOCN 2024)",
    "chronos": "Chronos (Renganathan & McKeown, NAIC'25)",
}


KINDS = ("value", "bound", "arithmetic", "fitted", "definition", "ablation")
EXPECTS = ("match", "differ", "missing", "ablation")
TOLERANCE = 0.01   # the relative part of the one tolerance rule


def _decimals(text: str) -> int:
    text = text.strip().replace(",", "")
    if "e" in text.lower():             # 1e-05: no printed precision to speak of
        return 0
    return len(text.split(".")[1]) if "." in text else 0


def printed_tolerance(printed: float, text: str | None = None) -> float:
    """The one tolerance rule: the larger of 1 % and half a unit of the last printed digit
    of ``printed`` (``text``: the number as printed, e.g. ``"45.0"``; without it, the
    shortest decimal form of the float, where ``13.0`` counts as ``"13"``)."""
    if not printed:
        return TOLERANCE
    if text is None:
        text = repr(float(printed))
        if text.endswith(".0"):
            text = text[:-2]
    return max(TOLERANCE, 0.5 * 10.0 ** -_decimals(text) / abs(printed))


@dataclass(frozen=True)
class Record:
    """One number a paper states, and what the model makes of it.

    ``id`` is unique within its paper (e.g. ``"table6.railx7mesh.cost"``); ``paper`` is a key of
    :data:`PAPERS`; ``paper_value`` is the paper's number as printed (or, with ``formula``, the
    paper's printed formula evaluated at the instance, e.g. ``5m - 6`` at m = 4).
    ``model_value`` is None only for a record the model cannot produce yet (``expect`` is then
    ``"missing"`` and ``why`` says what is missing). See the module docstring for ``kind``,
    ``expect`` and the tolerance rule.
    """

    id: str
    paper: str
    metric: str
    unit: str
    paper_value: float
    model_value: float | None
    note: str = ""
    kind: str = "value"
    bound: str | None = None
    tolerance: float | None = None
    why: str = ""
    formula: str = ""
    expect: str | None = None
    simulated: bool = False
    fit: str = ""
    printed: str = ""
    setting: dict | None = field(default=None, hash=False)
    choices: dict | None = field(default=None, hash=False)
    expected_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        def fail(msg: str):
            raise ValueError(f"Record {self.id!r}: {msg}")
        if self.paper not in PAPERS:
            raise ValueError(f"Record {self.id!r}: unknown paper {self.paper!r}; "
                             f"allowed: {', '.join(PAPERS)}")
        for name in ("paper_value", "model_value"):
            value = getattr(self, name)
            if name == "model_value" and value is None:
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool) \
                    or not math.isfinite(value):
                fail(f"{name} must be a finite number, not {value!r}")
        if self.kind not in KINDS:
            fail(f"kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if self.bound not in (None, "<=", ">="):
            fail(f"bound must be '<=' or '>=', not {self.bound!r}")
        if (self.kind == "bound") != (self.bound is not None) and self.kind != "definition":
            fail("a bound needs bound='<=' or '>=' (a definition may have one: the paper's "
                 "claim about its own formula); other kinds have none")
        if self.kind == "fitted" and not self.fit:
            fail("a fitted value needs fit='what was fitted to what'")
        if self.fit and self.kind != "fitted":
            fail(f"fit= belongs to kind 'fitted', not {self.kind!r}")
        if self.simulated and self.kind not in ("value", "bound"):
            fail(f"simulated=True marks a reproduced value or bound, not a {self.kind!r}")
        self._check_setting(fail)
        if self.printed:
            try:
                shown = float(self.printed.replace(",", ""))
            except ValueError:
                fail(f"printed must be the number as printed, not {self.printed!r}")
            if not self.formula and shown != self.paper_value:
                fail(f"paper_value {self.paper_value!r} is not the printed {self.printed!r}")
        # a printed formula evaluated at the instance is exact: no printed digit to round to
        rule = TOLERANCE if self.formula else printed_tolerance(self.paper_value,
                                                                self.printed or None)
        if self.tolerance is None:
            object.__setattr__(self, "tolerance", rule)
        elif not 0 <= self.tolerance < 1:
            fail(f"tolerance must be in [0, 1), not {self.tolerance!r}")
        expect = self.expect
        if self.kind == "ablation":
            if expect not in (None, "ablation"):
                fail("an ablation is judged by its expected_range alone: no expect=")
            if self.setting is None or self.expected_range is None:
                fail("an ablation needs its setting= and expected_range=")
            object.__setattr__(self, "expect", "ablation")
            return
        if expect == "ablation":
            fail("expect='ablation' belongs to kind 'ablation'")
        if expect is None:      # a reason declares a difference; no value declares a gap
            expect = "missing" if self.model_value is None else \
                "differ" if self.why else "match"
            object.__setattr__(self, "expect", expect)
        if expect not in EXPECTS:
            fail(f"expect must be one of {', '.join(EXPECTS)}, not {expect!r}")
        if expect in ("differ", "missing") and not self.why:
            fail(f"expect={expect!r} needs its reason in why=")
        if expect == "match" and self.why:
            fail("a record expected to match has no why (put context in note=)")
        if (expect == "missing") != (self.model_value is None):
            fail("model_value=None and expect='missing' go together")

    def _check_setting(self, fail) -> None:
        if self.setting is not None:
            if not isinstance(self.setting, dict) or not all(
                    isinstance(k, str) for k in self.setting):
                fail(f"setting must be a dict of parameter names, not {self.setting!r}")
        if self.choices is not None:
            if self.setting is None:
                fail("choices= names parameters of setting=; give the setting")
            if not isinstance(self.choices, dict):
                fail(f"choices must be a dict (parameter -> why it is ours), "
                     f"not {self.choices!r}")
            for k, why in self.choices.items():
                if k not in self.setting:
                    fail(f"choice {k!r} is not a parameter of the setting "
                         f"({', '.join(self.setting)})")
                if not isinstance(why, str) or not why.strip():
                    fail(f"choice {k!r} needs its reason (a non-empty string)")
        rng = self.expected_range
        if rng is not None:
            try:
                lo, hi = (float(x) for x in rng)
            except (TypeError, ValueError):
                fail(f"expected_range must be (lo, hi), not {rng!r}")
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                fail(f"expected_range must be finite with lo <= hi, not {rng!r}")
            if self.model_value is None:
                fail("a missing value has no expected_range")
            object.__setattr__(self, "expected_range", (lo, hi))

    @property
    def in_range(self) -> bool | None:
        """The model value lies in ``expected_range`` (None: no range declared)."""
        if self.expected_range is None or self.model_value is None:
            return None
        lo, hi = self.expected_range
        return lo <= self.model_value <= hi

    @property
    def paper_in_range(self) -> bool | None:
        """The paper's value lies inside the run's own expected range: the ±1 % rule and the
        run-to-run spread overlap, so the rule's status says less than it seems."""
        if self.expected_range is None:
            return None
        lo, hi = self.expected_range
        return lo <= self.paper_value <= hi

    @property
    def rel_error(self) -> float | None:
        """|model - paper| / |paper|; the absolute error when the paper states 0."""
        if self.model_value is None:
            return None
        diff = abs(self.model_value - self.paper_value)
        return diff / abs(self.paper_value) if self.paper_value else diff

    @property
    def margin(self) -> float | None:
        """For a bound: how far inside it the model is (negative: violated)."""
        if self.model_value is None or self.bound is None:
            return None
        sign = 1 if self.bound == "<=" else -1
        return sign * (self.paper_value - self.model_value)

    @property
    def status(self) -> str:
        """The outcome: ``match``/``differs`` for values, arithmetic, fitted values and
        definitions; ``holds``/``violated`` for bounds (and for definitions the paper states
        as a bound); ``missing`` when the model has no value."""
        if self.model_value is None:
            return "missing"
        if self.bound is not None:
            return "holds" if self.margin >= 0 else "violated"
        return "match" if self.rel_error <= self.tolerance else "differs"

    @property
    def agrees(self) -> bool:
        """The outcome agrees with the paper (matches or holds)."""
        return self.status in ("match", "holds")

    @property
    def ok(self) -> bool:
        """The outcome is the declared expectation: expected to match and matches (or
        holds), expected to differ and differs (or is violated), or missing as declared;
        and, where an ``expected_range`` is declared, the value lies in it (an ablation is
        judged by its range alone)."""
        if self.in_range is False:
            return False
        if self.expect == "ablation":
            return True
        if self.expect == "missing":
            return self.status == "missing"
        return self.agrees == (self.expect == "match")

    def to_dict(self) -> dict:
        return {
            "id": self.id, "paper": self.paper, "metric": self.metric, "unit": self.unit,
            "kind": self.kind, "bound": self.bound, "formula": self.formula,
            "printed": self.printed, "paper_value": self.paper_value,
            "model_value": self.model_value,
            "rel_error": None if self.bound else self.rel_error,
            "margin": self.margin, "tolerance": self.tolerance, "expect": self.expect,
            "status": self.status, "ok": self.ok, "simulated": self.simulated,
            "fit": self.fit, "note": self.note, "why": self.why,
            "setting": self.setting, "choices": self.choices,
            "expected_range": None if self.expected_range is None
            else list(self.expected_range),
            "in_range": self.in_range, "paper_in_range": self.paper_in_range,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Record":
        """The record :meth:`to_dict` wrote (derived fields are recomputed, not trusted)."""
        keys = ("id", "paper", "metric", "unit", "paper_value", "model_value", "note", "kind",
                "bound", "tolerance", "why", "formula", "expect", "simulated", "fit",
                "printed", "setting", "choices", "expected_range")
        return cls(**{k: d[k] for k in keys if k in d})


def record(paper: str, id: str, metric: str, unit: str, paper_value: float,
           model_value: float | None, **kw) -> Record:
    """A :class:`Record` with numbers cast to float (``model_value=None``: missing)."""
    return Record(id=id, paper=paper, metric=metric, unit=unit, paper_value=float(paper_value),
                  model_value=None if model_value is None else float(model_value), **kw)


def range_table(path, quick: bool = False) -> dict[str, tuple[float, float]]:
    """The committed ranges of one run mode in the table at ``path`` (JSON:
    ``{"how": ..., "records": {id: {"full": [lo, hi], "quick": [lo, hi], "spread": ...}}}``,
    kept beside the package that makes the records): ``{id: (lo, hi)}``, an id whose mode has
    no range left out. A package that must give a record its range when it builds it (an
    ablation has one from the start) reads it here; :func:`with_ranges` reads the same."""
    import json
    from pathlib import Path
    table = json.loads(Path(path).read_text())["records"]
    mode = "quick" if quick else "full"
    return {rid: tuple(e[mode]) for rid, e in table.items() if e.get(mode) is not None}


def with_ranges(records: list[Record], path, quick: bool = False) -> list[Record]:
    """The records with the ``expected_range`` each has in the table at ``path``
    (:func:`range_table`). The ranges are measured once (the run-to-run spread over seeds or
    placements plus the stated margin) and committed, never computed from the run they
    judge; a run whose mode has no range keeps none."""
    from dataclasses import replace
    table = range_table(path, quick)
    return [replace(r, expected_range=table[r.id]) if r.id in table else r for r in records]
