"""Source-level mutants of an Amaranth module: the edits a designer's slip makes, found with
Python's own parser (:mod:`ast`) and applied one at a time to a copy of the source text.

Edit classes (``Edit.kind``):

- ``operator``: ``+`` <-> ``-``, ``&`` <-> ``|``, ``^`` -> ``|``, ``<<`` <-> ``>>``, and a
  ``~`` dropped;
- ``comparison``: ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=``;
- ``constant``: an integer literal + 1 and - 1 (booleans are not integers here);
- ``slice``: a slice bound + 1 and - 1 (``x[a:b]``: ``a`` and ``b``, literal or expression);
- ``assign``: ``.eq(x)`` -> ``.eq(0)``;
- ``operand``: one operand of ``a & b``, ``a | b``, ``a and b`` or ``a or b`` dropped (the
  expression becomes the other one).

Every edit replaces one span of the text (an operator token, a literal, an expression) and
keeps every line where it was: a replacement shorter in lines is padded with newlines inside
parentheses, so the source lines an elaborated design names (``src`` attributes) still point
at the same code. The sites are enumerated in source order, which makes a seeded draw
(:func:`draw`) reproducible.
"""

from __future__ import annotations

import ast
import io
import random
import tokenize
from dataclasses import dataclass

__all__ = ["Edit", "KINDS", "edits_of", "draw"]

KINDS = ("operator", "comparison", "constant", "slice", "assign", "operand")

_SWAP = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.BitAnd: ("&", "|"),
         ast.BitOr: ("|", "&"), ast.BitXor: ("^", "|"), ast.LShift: ("<<", ">>"),
         ast.RShift: (">>", "<<")}
_CMP = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
        ast.Eq: ("==", "!="), ast.NotEq: ("!=", "==")}


@dataclass(frozen=True)
class Edit:
    """Replace the text from (line, col) to (end_line, end_col) (1-based lines, byte columns
    as :mod:`ast` counts them) by ``after``; ``before`` is the text replaced."""
    kind: str
    line: int
    col: int
    end_line: int
    end_col: int
    before: str
    after: str

    def apply(self, source: str) -> str:
        """``source`` with this edit made (the same number of lines)."""
        text = source.encode()
        lines = text.splitlines(keepends=True)
        start = sum(map(len, lines[:self.line - 1])) + self.col
        end = sum(map(len, lines[:self.end_line - 1])) + self.end_col
        if text[start:end].decode() != self.before:
            raise ValueError(f"line {self.line}: expected {self.before!r} to edit, found "
                             f"{text[start:end].decode()!r}")
        return (text[:start] + self.after.encode() + text[end:]).decode()

    @property
    def what(self) -> str:
        one = lambda s: " ".join(s.split())       # noqa: E731
        return f"{self.kind}: {one(self.before)} -> {one(self.after)}"


def _padded(text: str, lines: int) -> str:
    """``text`` in parentheses, newlines added inside so that it spans ``lines`` lines."""
    short = lines - 1 - text.count("\n")
    return f"({text}{chr(10) * max(0, short)})"


class _Finder(ast.NodeVisitor):
    def __init__(self, source: str):
        self.source = source
        self.lines = source.encode().splitlines(keepends=True)
        self.edits: list[Edit] = []
        self.in_slice: set[int] = set()       # ids of literals that are slice bounds
        self.ops = []                         # (start, end, string) of every OP token
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.OP:
                self.ops.append((self._byte(tok.start), self._byte(tok.end), tok.string))

    def _byte(self, pos):
        row, col = pos
        line = self.lines[row - 1].decode() if row - 1 < len(self.lines) else ""
        return row, len(line[:col].encode())

    def _text(self, node) -> str:
        return ast.get_source_segment(self.source, node)

    def _add(self, kind, start, end, before, after):
        self.edits.append(Edit(kind, start[0], start[1], end[0], end[1], before, after))

    def _node_edit(self, kind, node, after, pad=False):
        if pad:
            after = _padded(after, node.end_lineno - node.lineno + 1)
        self._add(kind, (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset),
                  self._text(node), after)

    def _token(self, left, right, symbol):
        """The OP token ``symbol`` between nodes ``left`` and ``right``."""
        lo, hi = (left.end_lineno, left.end_col_offset), (right.lineno, right.col_offset)
        for start, end, string in self.ops:
            if string == symbol and lo <= start and end <= hi:
                return start, end
        return None

    def visit_BinOp(self, node):
        swap = _SWAP.get(type(node.op))
        if swap:
            where = self._token(node.left, node.right, swap[0])
            if where:
                self._add("operator", *where, swap[0], swap[1])
        if isinstance(node.op, (ast.BitAnd, ast.BitOr)):
            for keep in (node.left, node.right):
                self._node_edit("operand", node, self._text(keep), pad=True)
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        word = " and " if isinstance(node.op, ast.And) else " or "
        for k in range(len(node.values)):
            rest = [self._text(v) for i, v in enumerate(node.values) if i != k]
            self._node_edit("operand", node, word.join(rest), pad=True)
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Invert):
            self._node_edit("operator", node, self._text(node.operand), pad=True)
        self.generic_visit(node)

    def visit_Compare(self, node):
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            swap = _CMP.get(type(op))
            where = swap and self._token(left, right, swap[0])
            if where:
                self._add("comparison", *where, swap[0], swap[1])
            left = right
        self.generic_visit(node)

    def visit_Slice(self, node):
        for bound in (node.lower, node.upper):
            if bound is None:
                continue
            if _is_int(bound):
                self.in_slice.add(id(bound))
                for d in (1, -1):
                    self._node_edit("slice", bound, str(bound.value + d))
            else:
                text = self._text(bound)
                for d in ("+ 1", "- 1"):
                    self._node_edit("slice", bound, f"{_padded(text, 1)} {d}", pad=True)
        self.generic_visit(node)

    def visit_Constant(self, node):
        if _is_int(node) and id(node) not in self.in_slice:
            for d in (1, -1):
                self._node_edit("constant", node, str(node.value + d))

    def visit_Call(self, node):
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "eq" and len(node.args) == 1
                and not node.keywords and not (_is_int(node.args[0])
                                               and node.args[0].value == 0)):
            self._node_edit("assign", node.args[0], "0", pad=True)
        self.generic_visit(node)

    def visit_Expr(self, node):
        # a docstring or a bare string is no hardware
        if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            self.generic_visit(node)


def _is_int(node) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, int)
            and not isinstance(node.value, bool))


def edits_of(source: str) -> list[Edit]:
    """Every candidate edit of ``source``, in source order (line, column, class, result)."""
    finder = _Finder(source)
    finder.visit(ast.parse(source))
    return sorted(set(finder.edits), key=lambda e: (e.line, e.col, e.end_line, e.end_col,
                                                    KINDS.index(e.kind), e.after))


def draw(edits: list[Edit], seed: int) -> list[Edit]:
    """All ``edits`` in the order a ``random.Random(seed)`` shuffle puts them: a caller takes
    them in turn until it has as many usable mutants as it wants."""
    order = list(edits)
    random.Random(seed).shuffle(order)
    return order
