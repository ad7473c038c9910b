"""Liberty (.lib) files: a reader for the cells' area, pins and NLDM timing tables, and the
subset writer that made the files shipped in ``rtl/asic/lib/``.

Only what a static timer needs is kept: each cell's area, its pins (direction, input
capacitance, function), its timing arcs (related pin, sense, type and the delay, transition
and constraint tables) and whether it is a flip-flop. Times are converted to ps and
capacitances to fF whatever units the file states (``time_unit``, ``capacitive_load_unit``).
"""

from __future__ import annotations

import bisect
import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Group", "parse", "Table", "Arc", "Pin", "Cell", "Library", "load", "subset"]

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}();:,]|[^\s{}();:,"\\]+')


@dataclass
class Group:
    """One Liberty group: ``type (args) { attrs; subgroups }``."""
    type: str
    args: list
    attrs: dict = field(default_factory=dict)
    groups: list = field(default_factory=list)

    def sub(self, type_: str):
        return [g for g in self.groups if g.type == type_]


def _unquote(tok: str) -> str:
    return tok[1:-1] if tok.startswith('"') else tok


def parse(text: str) -> Group:
    """The file's top group (``library``)."""
    text = _COMMENT.sub(" ", text).replace("\\\n", " ")
    toks = _TOKEN.findall(text)
    n, i = len(toks), 0
    root = Group("", [])
    stack = [root]
    while i < n:
        t = toks[i]
        if t == "}":
            stack.pop()
            i += 1
            continue
        if t == ";":
            i += 1
            continue
        name = t
        nxt = toks[i + 1] if i + 1 < n else ";"
        if nxt == ":":                      # simple attribute: name : value ;
            # one value token; the ';' is optional (some ASAP7 cells omit it after area)
            stack[-1].attrs[name] = _unquote(toks[i + 2])
            j = i + 3
            i = j + 1 if j < n and toks[j] == ";" else j
        elif nxt == "(":                    # group or complex attribute: name ( args ) ...
            j = i + 2
            args = []
            while toks[j] != ")":
                if toks[j] != ",":
                    args.append(_unquote(toks[j]))
                j += 1
            j += 1
            if j < n and toks[j] == "{":
                g = Group(name, args)
                stack[-1].groups.append(g)
                stack.append(g)
                i = j + 1
            else:
                stack[-1].attrs[name] = args
                i = j + 1 if j < n and toks[j] == ";" else j
        else:
            raise ValueError(f"Liberty: unexpected token {t!r} after {toks[max(0, i - 3):i]}")
    return root.groups[0]


def _floats(items) -> list[float]:
    out = []
    for s in items:
        out += [float(x) for x in s.replace(",", " ").split()]
    return out


class Table:
    """An NLDM table over (input slew, output load) or (constrained-pin slew, related-pin
    slew), in ps and fF; :meth:`lookup` interpolates bilinearly inside the grid and
    extrapolates linearly outside it (from the two nearest points, as timers do)."""

    def __init__(self, x: list[float], y: list[float], values: list[list[float]],
                 swap: bool = False):
        self.x, self.y, self.values, self.swap = x, y, values, swap

    @staticmethod
    def _bracket(axis, v):
        if len(axis) == 1:
            return 0, 0, 0.0
        k = min(max(bisect.bisect_right(axis, v) - 1, 0), len(axis) - 2)
        return k, k + 1, (v - axis[k]) / (axis[k + 1] - axis[k])

    def lookup(self, a: float, b: float = 0.0) -> float:
        """The value at (a, b): a = input (or constrained-pin) slew, b = output load (or
        related-pin slew), whichever order the table's template stores them in."""
        if self.swap:
            a, b = b, a
        i0, i1, fx = self._bracket(self.x, a)
        j0, j1, fy = self._bracket(self.y, b)
        v = self.values
        top = v[i0][j0] + (v[i0][j1] - v[i0][j0]) * fy
        bot = v[i1][j0] + (v[i1][j1] - v[i1][j0]) * fy
        return top + (bot - top) * fx


@dataclass
class Arc:
    related: str
    sense: str          # positive_unate, negative_unate, non_unate
    type: str           # combinational, rising_edge, setup_rising, ...
    tables: dict        # cell_rise, cell_fall, rise_transition, fall_transition,
                        # rise_constraint, fall_constraint -> Table


@dataclass
class Pin:
    name: str
    direction: str
    cap: float          # fF (the ``capacitance`` attribute)
    function: str = ""
    arcs: list = field(default_factory=list)
    caps: tuple = (0.0, 0.0)    # fF seen by a rising and by a falling net


@dataclass
class Cell:
    name: str
    area: float         # um^2
    pins: dict
    ff: dict | None     # {"clocked_on": ..., "next_state": ...} for flip-flops
    latch: bool = False

    @property
    def inputs(self):
        return [p for p in self.pins.values() if p.direction == "input"]

    @property
    def outputs(self):
        return [p for p in self.pins.values() if p.direction == "output"]


_TIME = {"1ps": 1.0, "1ns": 1000.0, "10ps": 10.0, "100ps": 100.0}
_CAP = {"ff": 1.0, "pf": 1000.0}
_SLEW_VARS = ("input_net_transition", "constrained_pin_transition", "related_pin_transition")


class Library:
    """Cells of one or more Liberty files of the same process (units converted to ps, fF)."""

    def __init__(self, name: str, texts: list[str]):
        self.name = name
        self.cells: dict[str, Cell] = {}
        for text in texts:
            self._add(parse(text))

    def _add(self, lib: Group) -> None:
        t = _TIME[lib.attrs.get("time_unit", "1ns").lower()]
        cu = lib.attrs.get("capacitive_load_unit", ["1", "pf"])
        c = float(cu[0]) * _CAP[cu[1].lower()]
        templates = {}
        for g in lib.sub("lu_table_template"):
            templates[g.args[0]] = (g.attrs.get("variable_1"), g.attrs.get("variable_2"),
                                    g.attrs.get("index_1", []), g.attrs.get("index_2", []))

        def scale(var):
            if var is None:
                return 1.0
            return c if "capacitance" in var else t

        def table(g: Group, value_unit: float) -> Table:
            # a table without its own indices takes its template's
            v1, v2, t1, t2 = templates.get(g.args[0] if g.args else "scalar",
                                           (None, None, [], []))
            idx1 = _floats(g.attrs.get("index_1", t1))
            idx2 = _floats(g.attrs.get("index_2", t2))
            rows = [_floats([r]) for r in g.attrs.get("values", ["0"])]
            x = [a * scale(v1) for a in idx1] or [0.0]
            y = [b * scale(v2) for b in idx2] or [0.0]
            if not idx2 and len(rows) == 1 and len(rows[0]) == len(x):
                rows = [[r] for r in rows[0]]          # 1-D table: one row of values
            vals = [[val * value_unit for val in r] for r in rows]
            # lookup(a, b) takes (slew, load) or (constrained slew, related slew): swap when
            # the template stores the load (or the related slew) first
            swap = (v1 is not None and v1 not in ("input_net_transition",
                                                  "constrained_pin_transition")) \
                and v2 is not None
            if v1 is not None and v2 is None and v1 not in _SLEW_VARS:
                # a 1-D table over the load only: make the load the second coordinate
                x, y, vals, swap = [0.0], x, [[r[0] for r in vals]], False
            return Table(x, y, vals, swap)

        for cg in lib.sub("cell"):
            pins = {}
            for pg in cg.sub("pin"):
                cap = float(pg.attrs.get("capacitance", 0.0)) * c
                # a sink loads a rising net with its rise capacitance, a falling one with its
                # fall capacitance (a mux input's differ tenfold); else the capacitance
                caps = tuple(float(pg.attrs[k]) * c if k in pg.attrs else cap
                             for k in ("rise_capacitance", "fall_capacitance"))
                pin = Pin(pg.args[0], pg.attrs.get("direction", "input"), cap,
                          pg.attrs.get("function", ""), caps=caps)
                for tg in pg.sub("timing"):
                    tabs = {sg.type: table(sg, t) for sg in tg.groups
                            if sg.type in ("cell_rise", "cell_fall", "rise_transition",
                                           "fall_transition", "rise_constraint",
                                           "fall_constraint")}
                    for rel in tg.attrs.get("related_pin", "").split():
                        pin.arcs.append(Arc(rel, tg.attrs.get("timing_sense", "non_unate"),
                                            tg.attrs.get("timing_type", "combinational"),
                                            tabs))
                pins[pin.name] = pin
            ffs = cg.sub("ff")
            ff = dict(ffs[0].attrs) if ffs else None
            self.cells[cg.args[0]] = Cell(cg.args[0], float(cg.attrs.get("area", 0)), pins,
                                          ff, latch=bool(cg.sub("latch")))

    def smallest_inverter(self) -> Cell:
        invs = [cell for cell in self.cells.values()
                if len(cell.inputs) == 1 and len(cell.outputs) == 1 and cell.ff is None
                and re.sub(r"[()\s]", "", cell.outputs[0].function) in
                (f"!{cell.inputs[0].name}", f"{cell.inputs[0].name}'")]
        if not invs:
            raise ValueError(f"{self.name}: no inverter cell")
        return min(invs, key=lambda cell: (cell.area, cell.inputs[0].cap))


def read_text(path: Path) -> str:
    path = Path(path)
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            return f.read()
    return path.read_text(encoding="utf-8", errors="replace")


def load(name: str, paths) -> Library:
    return Library(name, [read_text(p) for p in paths])


# ---- the subset writer (how rtl/asic/lib/ was made from ../shared/data/liberty/) ----------

def _group_spans(text: str, pattern: str):
    """(start, end) of every group whose header matches ``pattern`` (brace-matched)."""
    for m in re.finditer(pattern, text):
        depth, k = 0, text.index("{", m.start())
        while True:
            ch = text[k]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        yield m.start(), k + 1


# groups of no use to a delay timer: power and CCS current/receiver models (most of the size)
STRIP = ("internal_power", "leakage_power", "receiver_capacitance", "output_current_rise",
         "output_current_fall")


def subset(text: str, keep) -> str:
    """The Liberty text with only the cells ``keep(name)`` accepts and without the power and
    CCS groups of :data:`STRIP`; the header (with the licence comment) is kept as it is."""
    cells = list(_group_spans(text, r"\n\s*cell\s*\(\s*\"?([^\s\")]+)\"?\s*\)\s*\{"))
    if not cells:
        return text
    head, tail = text[:cells[0][0]], text[cells[-1][1]:]
    out = [head]
    strip = r"\n\s*(?:" + "|".join(STRIP) + r")\s*\([^)]*\)\s*\{"
    for a, b in cells:
        body = text[a:b]
        name = re.match(r"\s*cell\s*\(\s*\"?([^\s\")]+)", body).group(1)
        if not keep(name):
            continue
        spans = list(_group_spans(body, strip))
        pieces, last = [], 0
        for s, e in spans:
            if s < last:            # nested inside a group already removed
                continue
            pieces.append(body[last:s])
            last = e
        pieces.append(body[last:])
        out.append("".join(pieces))
    out.append(tail)
    return "".join(out)
