"""`make mutate --mode source`: edits of a block's Amaranth source.

The enumerator on a fixture module (every class found, every edit applied on its own, the
lines kept, the text a docstring holds left alone); the substitution of an edited module
restored; and on the wave-front arbiter at N = 4, four edits through the whole judging: one
that does not elaborate and one that gives the original's RTLIL are dropped, a dropped row
token is killed by the co-simulation (and the miter tells it from the original), and a
counter's slice one bit wider (the carry it keeps is never read) is proven equivalent; the
first also fails a formal property of the harness built from the edited source. A fixture
system stands in for the mesh: its sub-blocks converted once and shared by every copy, or
kept by a copy whose edit changes them."""

import ast
import hashlib
import importlib
from dataclasses import replace
from pathlib import Path

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from aifabric.cosim.mutate import (Spec, build_source, cut_memories, edited_parts, equivalent,
                                   flatten_gate, formal_kill, judged, proved_equivalent,
                                   run_mutant, source_mutants, substituted, verilate, _edited,
                                   _normal, _renumbered, rtlil_ports)
from aifabric.cosim.source_edits import KINDS, Edit, draw, edits_of

ROOT = Path(__file__).resolve().parent.parent

FIXTURE = '''"""Not code: 3 + 4 < 5."""
from amaranth.hdl import Module, Signal


def build(a, b, n=4):
    m = Module()
    x = Signal(n)
    m.d.comb += x.eq(a + b)
    with m.If((a < b) &
              (a == 3)):
        m.d.sync += x.eq(a[1:n] | b)
    ok = n > 2 and n != 5
    return m, ~x, ok
'''

# every edit of FIXTURE, by hand: (line, what)
EXPECTED = {
    (5, "constant: 4 -> 5"), (5, "constant: 4 -> 3"),
    (8, "assign: a + b -> (0)"), (8, "operator: + -> -"),
    (9, "operator: & -> |"),
    (9, "operand: (a < b) &\n              (a == 3) -> (a < b\n)"),
    (9, "operand: (a < b) &\n              (a == 3) -> (a == 3\n)"),
    (9, "comparison: < -> <="), (10, "comparison: == -> !="),
    (10, "constant: 3 -> 4"), (10, "constant: 3 -> 2"),
    (11, "assign: a[1:n] | b -> (0)"), (11, "operator: | -> &"),
    (11, "operand: a[1:n] | b -> (a[1:n])"), (11, "operand: a[1:n] | b -> (b)"),
    (11, "slice: 1 -> 2"), (11, "slice: 1 -> 0"),
    (11, "slice: n -> ((n) + 1)"), (11, "slice: n -> ((n) - 1)"),
    (12, "operand: n > 2 and n != 5 -> (n != 5)"),
    (12, "operand: n > 2 and n != 5 -> (n > 2)"),
    (12, "comparison: > -> >="), (12, "comparison: != -> =="),
    (12, "constant: 2 -> 3"), (12, "constant: 2 -> 1"),
    (12, "constant: 5 -> 6"), (12, "constant: 5 -> 4"),
    (13, "operator: ~x -> (x)"),
}


def _raw(e: Edit) -> str:
    return f"{e.kind}: {e.before} -> {e.after}"


def test_every_class_is_found_and_each_edit_applies_alone(tmp_path):
    path = tmp_path / "fixture.py"
    path.write_text(FIXTURE)
    edits = edits_of(path.read_text())
    assert {(e.line, _raw(e)) for e in edits} == EXPECTED
    assert {e.kind for e in edits} == set(KINDS)
    lines = FIXTURE.splitlines()
    for e in edits:
        new = e.apply(FIXTURE)
        ast.parse(new)                               # still Python
        got = new.splitlines()
        assert len(got) == len(lines), e             # every line where it was
        changed = [i + 1 for i, (a, b) in enumerate(zip(lines, got)) if a != b]
        assert changed and min(changed) == e.line and max(changed) <= e.end_line, e
        assert got[0] == lines[0]                    # the docstring is never edited
    assert path.read_text() == FIXTURE               # enumerating edits nothing
    # the draw is a seeded order of all of them
    assert draw(edits, 3) == draw(edits, 3) != draw(edits, 4)
    assert sorted(draw(edits, 3), key=edits.index) == edits


def test_an_edit_checks_the_text_it_replaces():
    (e,) = [e for e in edits_of(FIXTURE) if _raw(e) == "operator: + -> -"]
    with pytest.raises(ValueError, match="expected '\\+'"):
        e.apply(FIXTURE.replace("a + b", "a * b"))


WWFA = "rtl/chronos/wwfa.py"


def _line(text: str) -> int:
    """The line of the arbiter's source that holds ``text`` (one)."""
    (n,) = [k + 1 for k, ln in enumerate((ROOT / WWFA).read_text().splitlines()) if text in ln]
    return n


def _edit(line_text: str, what: str) -> Edit:
    """The edit of the arbiter's source named by its result, on the line holding
    ``line_text``."""
    source = (ROOT / WWFA).read_text()
    lines = source.splitlines()
    found = [e for e in edits_of(source) if line_text in lines[e.line - 1] and e.what == what]
    assert len(found) == 1, (line_text, what, found)
    return found[0]


def test_the_substituted_module_is_restored():
    import aifabric.rtl.catalog as catalog
    wwfa = importlib.import_module("aifabric.rtl.chronos.wwfa")
    before = hashlib.sha256((ROOT / WWFA).read_bytes()).hexdigest()
    original, edited = _edited(WWFA, _edit("N_MAX = 128", "constant: 128 -> 129"))
    assert original is wwfa and edited.N_MAX == 129 and wwfa.N_MAX == 128
    with substituted(original, edited):
        assert importlib.import_module("aifabric.rtl.chronos.wwfa") is edited
        assert catalog.WavefrontArbiter is edited.WavefrontArbiter
    assert importlib.import_module("aifabric.rtl.chronos.wwfa") is wwfa
    assert catalog.WavefrontArbiter is wwfa.WavefrontArbiter
    assert hashlib.sha256((ROOT / WWFA).read_bytes()).hexdigest() == before


def test_an_edit_of_the_ports_is_dropped(tmp_path):
    """BvN N = 4: ``busy`` made two bits wide elaborates, but the testbench could not drive
    that design: dropped, as an interface change, and nothing is judged."""
    spec = Spec("bvn", "bvn", {"n": 4, "w": 8}, "rtl/chronos/bvn.py")
    source = (ROOT / spec.source).read_text()
    lines = source.splitlines()
    (busy,) = [e for e in edits_of(source) if '"busy": Out(1)' in lines[e.line - 1]
               and e.what == "constant: 1 -> 2"]
    live, dropped = source_mutants(spec, 1, 1, tmp_path, edits=[busy])
    assert live == [] and [(d.edit, d.why) for d in dropped] == [(busy, "interface")]


SHARED_TOP = r"""module \{top}.sub0
{ports}
  cell ${op} ${cell}
    connect \A \a
    connect \B \b
    connect \Y \port${out}$0
  end
end
module \{top}
  wire width 1 input 1 \x
  wire width 1 input 2 \z
  wire width 1 output 3 \y
{extra}
  cell \{top}.sub0 \sub0
    connect \a \x
    connect \b \{b}
    connect \port${out}$0 \y
  end
end
"""
PORTS_AB = "  wire width 1 input 1 \\a\n  wire width 1 input 2 \\b\n  attribute \\init 1'0\n" \
           "  wire width 1 output 3 \\port${out}$0"
PORTS_BA = "  wire width 1 input 1 \\b\n  wire width 1 input 2 \\a\n  attribute \\init 1'0\n" \
           "  wire width 1 output 3 \\port${out}$0"


def _shared_top(top, ports=PORTS_AB, op="and", cell=11, out=10, b="x", extra=""):
    return SHARED_TOP.format(top=top, ports=ports.format(out=out), op=op, cell=cell, out=out,
                             b=b, extra=extra)


def test_shared_instances_renumbered_or_dropped():
    """A system's routers are shared by every copy of its top, so an edit of the top must
    leave them as they are. Amaranth numbers the names it makes up across the whole design
    and orders a module's ports by where their drivers come from: a top that differs only
    in its wiring gives the shared module other numbers and another port order, and the
    mutant's names are made the original's; a shared module whose logic differs, or a name
    the renaming would take that the mutant already uses, drops the edit."""
    spec = Spec("t", "t", {}, "x.py", shared="sub*")
    original = _normal(_shared_top("t"), "t", "t")
    # wired otherwise, renumbered, ports reordered: renamed to the original's numbers
    mutant = _shared_top("t_s1", PORTS_BA, cell=21, out=20, b="z")
    new = _renumbered(spec, mutant, "t_s1", original, "t")
    assert new is not None and "$20" not in new and "$21" not in new
    assert new == _shared_top("t_s1", PORTS_BA, b="z")
    # the shared module's logic differs (an OR): dropped
    assert _renumbered(spec, _shared_top("t_s1", op="or", cell=21, out=20), "t_s1",
                       original, "t") is None
    # the top already has a wire of the name the shared module's port would take
    clash = _shared_top("t_s1", cell=21, out=20, extra="  wire width 1 \\port$10$0")
    assert _renumbered(spec, clash, "t_s1", original, "t") is None


def test_source_mutants_judged_killed_and_equivalent(tmp_path):
    spec = Spec("wwfa", "wwfa", {"n": 4}, WWFA, transactions=2000, formal="wwfa")
    edits = [
        _edit("N_MAX = 128", "constant: 128 -> 127"),                    # identical
        _edit("rows = [self.requests", "operator: + -> -"),           # no elaboration
        _edit("rf.eq(row_free[i] & ~g)", "operand: row_free[i] & ~g -> (row_free[i])"),
        _edit("(a + 1)[:len(a)]", "slice: len(a) -> ((len(a)) + 1)"),
    ]
    live, dropped = source_mutants(spec, 2, 1, tmp_path, edits=edits)
    assert [(d.edit, d.why) for d in dropped] == [(edits[0], "identical"),
                                                  (edits[1], "not elaborated")]
    assert "Slice start" in dropped[1].detail
    killed, same = live
    assert (killed.k, killed.edit, same.k, same.edit) == (1, edits[2], 2, edits[3])
    assert killed.where == f"{WWFA}:{_line('rf.eq(row_free[i] & ~g)')}"
    verilate(spec, build_source(spec, live, tmp_path), tmp_path)
    status, why, _ = run_mutant(spec, 0, tmp_path, timeout=300)
    assert status == "pass", why
    status, why, _ = run_mutant(spec, killed.k, tmp_path, timeout=300)
    assert status == "fail" and "granted twice" in why, (status, why)
    for m in live:
        flatten_gate(spec, m, tmp_path)
    assert proved_equivalent(spec, same, tmp_path)
    assert not proved_equivalent(spec, killed, tmp_path)
    # the arbiter answers latency = 3 cycles after a request (one band of the pipelined
    # wave): the miter sees the double grant from cycle 3 on
    assert equivalent(spec, killed, tmp_path, depth=6, timeout=120) == "FAIL"
    # the harness built from the edited source fails the property the edit breaks
    prop, tried = formal_kill(spec, killed, tmp_path, timeout=120)
    assert prop == "one_per_row_col", tried


SWITCH = "rtl/chronos/slot_switch.py"


def _edit_of(source: str, line_text: str, what: str, nth: int = 0) -> Edit:
    """The ``nth`` edit ``what`` of ``source`` on the line holding ``line_text``."""
    text = (ROOT / source).read_text()
    lines = text.splitlines()
    found = [e for e in edits_of(text) if line_text in lines[e.line - 1] and e.what == what]
    return found[nth]


def test_an_edit_of_a_sub_block_is_judged_on_it_alone(tmp_path):
    """The slot switch co-simulated inside the N = 2 fabric: an edit of the slot master
    changes that module only, so the checks compare the master alone, at the parameters the
    fabric instances it with. ``phase_n2 + 1`` kept one bit wider (the extra bit is cut off
    where it is assigned back) is proven equivalent there; ``stopped`` without the stack's
    ready is a real difference: not proven, and the switch alone tells it apart (which says
    nothing of the fabric: 'PART')."""
    spec = Spec("slot_switch", "slot_fabric", {"n": 2, "d": 4, "depth": 3, "hold_bits": 2,
                                                "rtt_bits": 4}, SWITCH)
    wider = _edit_of(SWITCH, "phase_n2, phase_n2_p1 = Signal(", "constant: 1 -> 2", 1)
    assert wider.col > _edit_of(SWITCH, "phase_n2, phase_n2_p1 = Signal(",
                                "constant: 1 -> 2", 0).col
    ready = _edit_of(SWITCH, "stopped_next.eq(", "operand: ~self.enable | bad | "
                     "~self.stack_ready -> (~self.enable | bad)")
    live, dropped = source_mutants(spec, 2, 1, tmp_path, edits=[wider, ready])
    assert dropped == [] and [m.edit for m in live] == [wider, ready]
    same, real = live
    top = same.top
    # the master's ``stack_ready`` then reads nothing, and Amaranth drops the port: the
    # switch around it changes too, and is judged instead
    for m, part in ((same, f"{top}.switch.master"), (real, f"{top}.switch")):
        flatten_gate(spec, m, tmp_path)
        assert edited_parts(tmp_path, m) == [part]
        (j,) = judged(spec, m, tmp_path, parts=True)
        assert (j.name, j.part) == (part, True)
    assert [j.name for j in judged(spec, same, tmp_path)] == [top]     # parts off: the fabric
    assert proved_equivalent(spec, same, tmp_path, parts=True)
    assert not proved_equivalent(spec, real, tmp_path, parts=True)
    assert equivalent(spec, real, tmp_path, parts=True, depth=3, timeout=120) == "PART"


def test_a_port_an_edit_renames_is_paired_by_position(tmp_path):
    """The stack's ``entries`` one bit wider (depth 3: range(5), 3 bits, for a count that
    never exceeds 3; the switch passes 2 bits of it on): equivalent. Amaranth then gives the
    plain name ``entries`` to the stack's wider signal inside the switch and the switch's
    own port another one, so the switch's ports and the fabric's connections to it look
    changed; paired by position, direction and width, the ports keep the original's names,
    the switch alone is judged and proven equal."""
    spec = Spec("slot_switch", "slot_fabric", {"n": 2, "d": 4, "depth": 3, "hold_bits": 2,
                                                "rtt_bits": 4}, SWITCH)
    wider = _edit_of(SWITCH, '"entries": Out(range(depth + 1)), "overflow"', "constant: 1 -> 2")
    text = (ROOT / SWITCH).read_text()         # the stack's port, not the switch's
    assert text.index("class StackLoader") < sum(map(len, text.splitlines(True)[:wider.line])) \
        < text.index("class Sequencer")
    (m,), dropped = source_mutants(spec, 1, 1, tmp_path, edits=[wider])
    assert dropped == []
    top, switch = m.top, f"{m.top}.switch"
    raw = (tmp_path / "src" / f"s{m.k}.il").read_text()
    gold = (tmp_path / "design.il").read_text()
    # the names do swap (else this case tests nothing)
    assert rtlil_ports(raw, f"{top}_s{m.k}.switch") != rtlil_ports(gold, switch)
    flatten_gate(spec, m, tmp_path)
    assert edited_parts(tmp_path, m) == [switch]
    assert proved_equivalent(spec, m, tmp_path, parts=True)


def _memory_design(kind: str) -> str:
    """RTLIL of a small block with a memory (5 words of 4 bits, written at ``waddr``, read at
    ``raddr``) and a 3-bit counter: the original, its counter's ``+ 1`` kept one bit wider
    (``wider``: equivalent, the carry is cut off) or its memory read one word further on
    (``later``: a real difference)."""
    from amaranth.back import rtlil
    from amaranth.hdl import Module, Signal
    from amaranth.lib import memory
    m = Module()
    we, waddr, raddr = Signal(), Signal(3), Signal(3)
    din, dout, cnt = Signal(4), Signal(4), Signal(3)
    m.submodules.mem = mem = memory.Memory(shape=4, depth=5, init=[])
    w, r = mem.write_port(), mem.read_port(domain="comb")
    nxt = Signal(4 if kind == "wider" else 3)
    m.d.comb += [w.addr.eq(waddr), w.data.eq(din), w.en.eq(we), nxt.eq(cnt + 1),
                 r.addr.eq(raddr + 1 if kind == "later" else raddr), dout.eq(r.data ^ cnt)]
    m.d.sync += cnt.eq(nxt)
    return rtlil.convert(m, name="top", ports=[we, waddr, raddr, din, dout])


@pytest.mark.parametrize("kind,proven", [("wider", True), ("later", False)])
def test_memories_cut_out_of_the_proofs(tmp_path, kind, proven):
    """With the memory cut out (its read data a free input, its address, enable and the
    data it writes outputs), the wider counter is proven equivalent; the read one word
    further on is not, and the cut miter tells it apart, which is reported as undecided
    ('CUT': free read data may hold what the memory never does), not as a difference."""
    from aifabric.cosim.mutate import Judged, _miter, _pair, _prove
    (tmp_path / "design.il").write_text(_memory_design("original"))
    (tmp_path / "m.il").write_text(_memory_design(kind))
    yosys_run = __import__("aifabric.cosim.mutate", fromlist=["yosys"]).yosys
    yosys_run("read_rtlil m.il\nhierarchy -top top\nproc\nflatten\nopt_clean\n"
              "write_rtlil gate.il\n", tmp_path)
    j = Judged(tmp_path, "top", "delete top\nread_rtlil gate.il", cut=True)
    assert _prove(j, 120) is proven
    cut = (tmp_path / "pair_cut.il").read_text()
    assert "$memrd_v2" not in cut and cut.count("memcut.mem.r0.DATA") >= 2
    if not proven:
        assert _miter(j, _pair(j, 120), 3, 120) == "FAIL"


def test_memories_that_do_not_pair_are_not_cut():
    """A memory the two modules do not share unchanged (another size) is not cut: None. One
    they share: its read data an input, its address an output, in both."""
    mem = ("  memory width 2 size {size} \\mem\n"
           "  cell $memrd_v2 $m\n    parameter \\MEMID \"\\\\mem\"\n    parameter \\WIDTH 2\n"
           "    parameter \\ABITS 1\n    parameter \\CLK_ENABLE 0\n"
           "    connect \\ADDR \\a\n    connect \\DATA \\y\n    connect \\EN 1'1\n"
           "    connect \\CLK 1'x\n    connect \\ARST 1'0\n    connect \\SRST 1'0\n  end\n")
    mod = "module \\{name}\n  wire input 1 \\a\n  wire width 2 output 2 \\y\n{mem}end\n"
    same = mod.format(name="gold", mem=mem.format(size=2)) + \
        mod.format(name="gate", mem=mem.format(size=2))
    cut = cut_memories(same)
    assert cut.count("wire width 2 input 3 \\memcut.mem.r0.DATA") == 2
    assert cut.count("connect \\memcut.mem.r0.ADDR \\a") == 2
    assert "$memrd_v2" not in cut and "memory width" not in cut
    assert cut_memories(mod.format(name="gold", mem=mem.format(size=2)) +
                        mod.format(name="gate", mem=mem.format(size=1))) is None
    assert cut_memories(mod.format(name="gold", mem="") + mod.format(name="gate", mem="")) \
        is None


def test_reused_cosim_keeps_the_kills_and_refuses_another_run(tmp_path):
    """``--reuse-cosim``: a run's co-simulation kills are kept, every other verdict is
    judged again; a run at another seed, or of other mutants, is refused."""
    import json

    from aifabric.cosim.mutate import Outcome, SourceMutant
    from aifabric.scripts.mutate import reused_cosim
    spec = Spec("wwfa", "wwfa", {"n": 4}, WWFA)
    row = _edit("rf.eq(row_free[i] & ~g)", "operand: row_free[i] & ~g -> (row_free[i])")
    wide = _edit("(a + 1)[:len(a)]", "slice: len(a) -> ((len(a)) + 1)")
    ms = [SourceMutant(1, row, WWFA, "top"), SourceMutant(2, wide, WWFA, "top")]
    rows = [Outcome(ms[0], "killed", "cosim", "granted twice", 3.0).row(),
            Outcome(ms[1], "equivalent", "equiv_induct", "", 4.0).row()]
    path = tmp_path / "outcomes.json"
    path.write_text(json.dumps({"seed": 1, "drawn": 2, "params": {"n": 4},
                                "original_seconds": 2.5, "outcomes": rows}))
    outs, base, error = reused_cosim(path, spec, ms, 1, 2)
    assert error == "" and base == 2.5
    assert [(o.mutant, o.verdict, o.by) for o in outs] == [(ms[0], "killed", "cosim"),
                                                           (ms[1], "", "")]
    assert "another seed" in reused_cosim(path, spec, ms, 2, 2)[2]
    swapped = [SourceMutant(1, wide, WWFA, "top"), SourceMutant(2, row, WWFA, "top")]
    assert "other mutants" in reused_cosim(path, spec, swapped, 1, 2)[2]
    assert "no earlier run" in reused_cosim(tmp_path / "none.json", spec, ms, 1, 2)[2]


class Leaf(wiring.Component):
    """A system's sub-block from another file (as the mesh's router): y = a + b + k."""
    a: In(4)
    b: In(4)
    y: Out(4)
    one: Out(1)                         # always 1: what only the leaf knows

    def __init__(self, k=1):
        self.k = k
        super().__init__()

    elaborated = []                     # k of every elaboration

    def elaborate(self, platform):
        self.elaborated.append(self.k)
        m = Module()
        m.d.comb += [self.y.eq(self.a + self.b + self.k), self.one.eq(1)]
        return m


class Pair(wiring.Component):
    """Two leaves in a chain, as wired by ``variant``: the original; ``tied``: leaf 1's b
    tied to 0 (an edit of the wiring); ``k2``, ``k3``: leaf 1 built with another k (an edit
    of the sub-blocks themselves); ``or0``: y ORed with 0 and ``gated``: y gated by leaf 1's
    ``one`` (edits of the wiring equal to the original, the second only with the leaf's
    logic)."""
    x: In(4)
    z: In(4)
    y: Out(4)

    def __init__(self, variant="original"):
        self.variant = variant
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.leaf0 = l0 = Leaf()
        k = {"k2": 2, "k3": 3}.get(self.variant, 1)
        m.submodules.leaf1 = l1 = Leaf(k=k)
        m.d.comb += [l0.a.eq(self.x), l0.b.eq(self.z), l1.a.eq(l0.y),
                     l1.b.eq(0 if self.variant == "tied" else self.z)]
        m.d.comb += self.y.eq({"or0": l1.y | 0,
                               "gated": l1.y & l1.one.replicate(4)}.get(self.variant, l1.y))
        return m


def _draw_pairs(mut, monkeypatch):
    """Make ``source_mutants`` draw Pair designs: the block ``pair``, each edit's ``after``
    the variant it elaborates."""
    class Block:
        component = Pair

        def instance_name(self, params):
            return "pair"

        def build(self, params):
            return Pair()

    def elaborate(spec, edit, name, out, timeout):
        out.write_text(mut._converted(spec, lambda: Pair(edit.after), name))
        return ""
    monkeypatch.setattr(mut, "get_block", lambda name: Block())
    monkeypatch.setattr(mut, "_instanced_modules", lambda *a, **k: "")
    monkeypatch.setattr(mut, "_elaborate", elaborate)


def test_a_systems_sub_blocks_converted_once_and_kept_where_edited(tmp_path, monkeypatch):
    """A system whose copies share one set of sub-blocks (the mesh's routers, Spec.shared).
    Converted whole, an edit that ties a sub-block's input to 0 changes that sub-block's
    module (Amaranth folds the constant in), which used to drop the edit. With Spec.once the
    sub-blocks are instances of one module per parameter set, converted once: that edit
    leaves them the original's, shares them and is judged; an edit of their parameters
    keeps its own copy (up to ``own``; the next is dropped). Built behind ``mutsel``, each
    copy computes its own edit: original 7, tied 5, k = 2 8 for x = 1, z = 2."""
    import aifabric.cosim.mutate as mut
    whole = Spec("pair", "pair", {}, "x.py", shared="leaf*")
    once = replace(whole, once=f"{__name__}:Leaf")

    def conv(spec, variant, name="pair"):
        return mut._normal(mut._converted(spec, lambda: Pair(variant), name), name, "pair")
    assert mut._shared_cells(whole, conv(whole, "tied"), "pair") != \
        mut._shared_cells(whole, conv(whole, "original"), "pair")
    calls = []
    monkeypatch.setattr(Leaf, "elaborated", calls)
    monkeypatch.setattr(mut, "_ONCE", {})
    original = conv(once, "original")
    assert calls == [1]                             # one conversion for both leaves
    assert len(mut._shared_kinds(once, original, "pair")) == 2 and \
        len(set(mut._shared_kinds(once, original, "pair").values())) == 1
    assert mut._shared_cells(once, conv(once, "tied", "pair_s1"), "pair") == \
        mut._shared_cells(once, original, "pair")
    assert calls == [1]                             # none for an edit of the wiring
    assert mut._shared_cells(once, conv(once, "k2", "pair_s2"), "pair") != \
        mut._shared_cells(once, original, "pair")
    assert calls == [1, 2]

    # the draw: shared, own, dropped over the limit of one
    _draw_pairs(mut, monkeypatch)
    edits = [Edit("constant", 1, 0, 1, 1, "v", v) for v in ("tied", "k2", "k3")]
    live, dropped = source_mutants(once, 3, 1, tmp_path, edits=edits, own=1)
    assert [(m.k, m.edit.after, m.own) for m in live] == [(1, "tied", False), (2, "k2", True)]
    assert [(d.edit.after, d.why) for d in dropped] == [("k3", "interface")]
    # without Spec.once no copy can keep its own (its sub-blocks' module is the top's)
    (tmp_path / "whole").mkdir()
    live_w, dropped_w = source_mutants(whole, 1, 1, tmp_path / "whole", edits=edits[1:2],
                                       own=1)
    assert not live_w and [d.why for d in dropped_w] == ["interface"]
    build_source(once, live, tmp_path)
    for sel, y in ((0, 7), (1, 5), (2, 8)):
        mut.yosys("read_verilog inner.v\nhierarchy -top pair_mutants\nproc\nflatten\n"
                  f"sat -set mutsel {sel} -set x 1 -set z 2 -prove y {y} -verify\n", tmp_path)



def test_an_edit_of_a_systems_wiring_is_judged_with_the_shared_blocks_cut_out(tmp_path,
                                                                                monkeypatch):
    """An edit of the wiring around shared sub-blocks (the mesh's routers) is proven on the
    top with those sub-blocks cut out (their outputs free inputs, their inputs outputs), as
    the co-simulated model cuts them: ``or0`` is proven; ``gated`` is equal only because
    leaf 1's ``one`` is always 1, which the cut-out top cannot know: undecided ('SHARED'),
    never a kill or a proof; ``k2`` changes a leaf, keeps its own and is judged whole (a
    difference)."""
    import aifabric.cosim.mutate as mut
    spec = Spec("pair", "pair", {}, "x.py", shared="leaf*", once=f"{__name__}:Leaf")
    _draw_pairs(mut, monkeypatch)
    monkeypatch.setattr(mut, "_ONCE", {})
    edits = [Edit("constant", 1, 0, 1, 1, "v", v) for v in ("or0", "gated", "k2")]
    live, dropped = source_mutants(spec, 3, 1, tmp_path, edits=edits, own=1)
    assert [(m.edit.after, m.own) for m in live] == [("or0", False), ("gated", False),
                                                     ("k2", True)] and not dropped
    build_source(spec, live, tmp_path)
    for m in live:
        flatten_gate(spec, m, tmp_path)
    or0, gated, k2 = live
    (tmp_path / "everted.il").unlink()      # judged from this run's designs, not the build's
    assert [j.il for m in live for j in judged(spec, m, tmp_path, parts=True)] == \
        ["design_ev.il", "design_ev.il", "design.il"]
    assert equivalent(spec, or0, tmp_path, parts=True) == "PASS"
    assert proved_equivalent(spec, or0, tmp_path, parts=True)
    assert equivalent(spec, gated, tmp_path, parts=True) == "SHARED"
    assert not proved_equivalent(spec, gated, tmp_path, parts=True)
    assert equivalent(spec, gated, tmp_path) == "PASS"      # whole, the leaf's 1 is seen
    assert equivalent(spec, k2, tmp_path, parts=True) == "FAIL"


def _round_robin(start: int) -> str:
    """RTLIL of a 4-requester round robin: it grants the lowest requester in its start mask,
    or the lowest of all where none there requests, and then starts after the granted one.
    ``start`` is the mask's reset value: all ones, 0 (every requester falls back) and bit 0
    alone grant the same requester first; 0b1110 skips requester 0."""
    from amaranth.back import rtlil
    from amaranth.hdl import Module, Mux, Signal
    m = Module()
    req, grant = Signal(4), Signal(4)
    mask = Signal(4, init=start)
    masked = Signal(4)
    pick = Mux(masked.any(), masked, req)
    m.d.comb += [masked.eq(req & mask), grant.eq(pick & -pick)]
    with m.If(req.any()):
        m.d.sync += mask.eq(~((grant << 1) - 1))
    return rtlil.convert(m, name="top", ports=[req, grant])


@pytest.mark.parametrize("start,proven", [(0b0000, True), (0b1110, False)])
def test_reset_value_of_a_start_mask(tmp_path, start, proven):
    """An edit of a register's reset value changes that register: ``equiv_induct``, which
    must prove every matched register equal, proves nothing. k-induction on the miter with
    every register equal or both at their initial values proves a start mask that grants
    the same requester first (0 or bit 0 alone instead of all ones); the mask that skips
    requester 0 is not proven, and the miter tells it from the original."""
    from aifabric.cosim.mutate import Judged, _induct, _miter, _pair, _prove, yosys
    (tmp_path / "design.il").write_text(_round_robin(0b1111))
    (tmp_path / "m.il").write_text(_round_robin(start))
    yosys("read_rtlil m.il\nhierarchy -top top\nproc\nflatten\nopt_clean\n"
          "write_rtlil gate.il\n", tmp_path)
    j = Judged(tmp_path, "top", "delete top\nread_rtlil gate.il")
    assert _prove(j, 120) is False
    assert _induct(j, 120) is proven
    top = (tmp_path / "induct" / "top.il").read_text()
    assert top.count("cell $assert") == 2         # the miter's outputs and the candidate
    if not proven:
        assert _miter(j, _pair(j, 120), 4, 120) == "FAIL"


def test_a_mutants_formal_run_takes_the_propertys_engine(tmp_path, monkeypatch):
    """A router property once proven with ``--nomem --syn`` (memories as registers, the
    design as gates) timed out on every mutant when the mutant's run left the options out.
    Each property's own solver and options reach the mutant's SymbiYosys job (here one of
    the router's given those options), and the job runs with them."""
    import dataclasses

    from aifabric.cosim import formal as formal_pkg
    from aifabric.cosim import mutate
    from aifabric.cosim.mutate import SPECS, SourceMutant
    spec = SPECS["router"]
    given = [dataclasses.replace(p, engine="--nomem --syn") if p.name == "packets_contiguous"
             else p for p in formal_pkg.properties([spec.formal])]
    monkeypatch.setattr(formal_pkg, "properties", lambda blocks=None: given)
    properties = formal_pkg.properties
    asked = {}

    def fake_sby(workdir, top, mode, depth, timeout, *, solver="yices", engine=""):
        asked[workdir.name.split("_", 1)[1]] = (solver, engine)
        return "PASS", 0.0
    monkeypatch.setattr(mutate, "_source_harness", lambda mutant, prop, pdir: "")
    monkeypatch.setattr(mutate, "_sby", fake_sby)
    text = (ROOT / spec.source).read_text()
    mutant = SourceMutant(1, edits_of(text)[0], spec.source, "top")
    assert formal_kill(spec, mutant, tmp_path, timeout=5)[0] == ""
    want = {}
    for p in properties([spec.formal]):
        want.setdefault(p.name, (p.solver, p.engine))
    assert asked == want
    assert any(e == "--nomem --syn" for _, e in want.values())
    monkeypatch.undo()
    # a real job, read through the options given: a 2-bit counter asserted never to reach 3
    # (it does, so the check fails)
    top = tmp_path / "job"
    top.mkdir()
    from amaranth.back import rtlil
    from amaranth.hdl import Assert, Module, Signal
    m = Module()
    c = Signal(2)
    m.d.sync += c.eq(c + 1)
    m.d.comb += Assert(c != 3)
    (top / "top.il").write_text(rtlil.convert(m, ports=[]))
    status, _ = mutate._sby(top, "top", "bmc", 6, 120, engine="--nomem --syn")
    assert status == "FAIL"
    assert "smtbmc --nomem --syn yices" in (top / "job.sby").read_text()
