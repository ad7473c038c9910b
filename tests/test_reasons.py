"""Every number in a record's reason is computed in the run.

A reason (a record's ``why``) that quotes a typed number goes stale the day the model moves, and
an ablation quoted that way was never run. The model code is read as source: every number in
the literal text of a ``why=`` expression (the string constants, the constant parts of
f-strings, and what the names it uses are assigned in the same function) must be a small
integer or a number the paper itself prints; any other number must come from a formatted
field. ``tests/data/paper_numbers.json`` holds each paper's printed numbers, read once from the
papers' texts."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from aifabric.models.common.records import PAPERS

ROOT = Path(__file__).resolve().parent.parent
NUMBERS = ROOT / "tests" / "data" / "paper_numbers.json"
# a number not inside a name (fig14a, H100, k2); a unit may follow it (54.6M, 1.90x)
NUM = re.compile(r"(?<![\w.])\d++(?:,\d{3})*+(?:\.\d+)?+")
SMALL = 12         # integers up to this count things (phases, VC classes, figure panels)


def numbers_in(text: str) -> set[str]:
    return {m.group().replace(",", "") for m in NUM.finditer(text)}


def _assignments(fn: ast.AST) -> dict[str, list[ast.expr]]:
    out: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target,
                                                                          ast.Name):
            if node.value is not None:
                out.setdefault(node.target.id, []).append(node.value)
    return out


def literal_text(expr: ast.expr, names: dict, seen: frozenset = frozenset(),
                 funcs: dict | None = None) -> list[str]:
    """The literal pieces of text an expression builds (formatted fields left out); a call
    of a function of the same module (``funcs``) adds the text its returns build."""
    funcs = funcs or {}
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and \
            expr.func.id in funcs and expr.func.id not in seen:
        fn = funcs[expr.func.id]
        inner = _assignments(fn)
        parts = [t for node in ast.walk(fn) if isinstance(node, ast.Return) and node.value
                 for t in literal_text(node.value, inner, seen | {fn.name}, funcs)]
        return parts + [t for a in expr.args for t in literal_text(a, names, seen, funcs)]
    if isinstance(expr, ast.Constant):
        return [expr.value] if isinstance(expr.value, str) else []
    if isinstance(expr, ast.JoinedStr):
        return [v.value for v in expr.values if isinstance(v, ast.Constant)]
    if isinstance(expr, ast.Name):
        if expr.id in seen:
            return []
        return [t for v in names.get(expr.id, ()) for t in
                literal_text(v, names, seen | {expr.id}, funcs)]
    if isinstance(expr, ast.FormattedValue):
        return []
    parts: list[str] = []
    for child in ast.iter_child_nodes(expr):
        if isinstance(child, ast.expr):
            parts += literal_text(child, names, seen, funcs)
        elif isinstance(child, ast.comprehension):
            parts += literal_text(child.iter, names, seen, funcs)
    return parts


def scan(source: str, allowed: set[str]) -> list[tuple[int, str, str]]:
    """(line, number, text) for every number typed into a reason of the module ``source``."""
    tree = ast.parse(source)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    found = set()
    scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.Lambda)]
    for scope in [tree, *scopes]:
        names = _assignments(scope)
        for node in ast.walk(scope):
            if not isinstance(node, ast.Call):
                continue
            for kw in node.keywords:
                if kw.arg != "why":
                    continue
                for text in literal_text(kw.value, names, funcs=funcs):
                    for n in numbers_in(text):
                        if (n.isdigit() and int(n) <= SMALL) or n in allowed:
                            continue
                        found.add((node.lineno, n, text.strip()[:60]))
    return sorted(found, key=lambda f: (f[0], float(f[1])))


def paper_numbers() -> dict[str, set[str]]:
    data = json.loads(NUMBERS.read_text())
    return {k: set(data[k]) for k in PAPERS}


def typed_in(paper: str) -> list[str]:
    allowed = paper_numbers()[paper]
    return [f"{path.relative_to(ROOT)}:{line}: {n} (in {text!r})"
            for path in sorted((ROOT / "models" / paper).rglob("*.py"))
            for line, n, text in scan(path.read_text(), allowed)]


@pytest.mark.parametrize("paper", list(PAPERS))
def test_no_typed_number_in_a_reason(paper):
    found = typed_in(paper)
    assert not found, "numbers typed into reasons (format them from the run):\n" + \
        "\n".join(found)


def test_the_scan_sees_typed_numbers():
    """The scan finds a number typed into a reason directly, through a name, inside an
    f-string's text and behind a conditional, and passes formatted fields, small integers and
    the paper's own numbers."""
    src = ("def f(x, quick):\n"
           "    because = f'at 18 VCs it gives {x:.2f}, Algorithm 1 uses 3'\n"
           "    tail = ' (was 0.71)' if quick else ''\n"
           "    r(why=because + tail)\n"
           "    r(why=f'the paper prints 0.8; ours {x:.3f} at Table 5')\n"
           "    r(why='a typed 6.1 vs 9.0 us, 1,296 chips')\n"
           "    r(note='a note is no reason: 0.93')\n"
           "r(why=', '.join(f'{v} VCs {t:.3f} (was 0.40)' for v, t in x))\n"
           "def gain_reason(x):\n"
           "    rest = f'; ECN off gives {x:.1f}, was 13.5 %'\n"
           "    return 'the queue' + rest\n"
           "def g(x):\n"
           "    text = gain_reason(x)\n"
           "    r(why=text)\n")
    assert sorted(n for _, n, _ in scan(src, {"0.8"})) == sorted(
        ["18", "0.71", "6.1", "9.0", "1296", "0.40", "13.5"])
