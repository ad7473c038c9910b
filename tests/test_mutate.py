"""`make mutate`'s machinery on a small sample: the wave-front arbiter at N = 4 with two
mutants drawn by Yosys and one planted (the grants register's bit 0 tied to 1: a grant
nobody asked for), all in one Verilated model behind ``mutsel``.

Checks: the draw is seeded and names the Amaranth source lines; ``mutsel = 0`` (the original)
passes the testbench; the planted mutant fails it; the same mutation fails a formal property
at the harness's parameters; the bounded miter tells it from the original; the script's
table reports a block's counts and score; bad input is one line and exit code 2."""

import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.cosim.mutate import (SPECS, Outcome, Spec, build, equivalent, formal_kill,
                                   mutants_of, proved_equivalent, run_mutant, verilate,
                                   ties_its_own_constant, yosys, _instanced_modules)
from aifabric.rtl._util import not_elaborated
from aifabric.rtl.catalog import get_block
from aifabric.scripts.mutate import score

ROOT = Path(__file__).resolve().parent.parent
# 2,000 transactions: the planted grant shows in the first cycle with a request on cell 0
SPEC = Spec("wwfa", "wwfa", {"n": 4}, "rtl/chronos/wwfa.py", transactions=2000,
            formal="wwfa")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    wd = tmp_path_factory.mktemp("mutate") / "wwfa"
    drawn = mutants_of(SPEC, 2, 7, wd)
    again = mutants_of(SPEC, 2, 7, wd / "again")
    planted = mutants_of(SPEC, 1, 1, wd / "planted", filters="-wire grants -wirebit 0 "
                         "-mode const1")
    assert len(planted) == 1
    plant = planted[0]
    plant.k = len(drawn) + 1
    mutants = drawn + [plant]
    verilate(SPEC, build(SPEC, mutants, wd), wd)
    return wd, drawn, again, plant


def test_draw_is_seeded_and_names_source_lines(built):
    _, drawn, again, plant = built
    assert [m.command for m in drawn] == [m.command for m in again]
    for m in drawn + [plant]:
        assert m.src and all("rtl/chronos/wwfa.py:" in s for s in m.src), m.src
        assert m.where.startswith("rtl/chronos/wwfa.py:")
    assert plant.mode == "const1" and plant.wire == "grants" and plant.wirebit == 0
    assert "tied to 1" in plant.what


def test_original_passes_and_planted_mutant_is_killed(built):
    wd, drawn, _, plant = built
    status, why, _ = run_mutant(SPEC, 0, wd, timeout=300)
    assert status == "pass", why
    status, why, _ = run_mutant(SPEC, plant.k, wd, timeout=300)
    assert status == "fail", (status, why)
    assert why            # the testbench's first failure, for the report


def test_planted_mutant_fails_a_formal_property_and_the_miter(built):
    wd, _, _, plant = built
    prop, tried = formal_kill(SPEC, plant, wd, timeout=120)
    assert prop == "grants_requested", tried
    assert equivalent(SPEC, plant, wd, depth=4, timeout=120) == "FAIL"


def test_memory_contents_are_not_drawn_and_the_draw_builds(tmp_path):
    """The router's FIFO storage has 21 memory-init cells in its source file. A mutation of
    their constant data cannot sit behind a mutsel multiplexer (Yosys: "Non-constant data in
    memory initialization"), which made seed 1's draw of 30 fail to build at all."""
    spec = SPECS["router"]
    drawn = mutants_of(spec, 30, 1, tmp_path)
    assert len(drawn) == 30
    top = get_block(spec.bench).instance_name(spec.params)
    yosys(f"read_rtlil design.il\nhierarchy -top {top}\nproc\nflatten\n"
          "tee -q -o inits.txt select -list t:$meminit*\n", tmp_path)
    log = (tmp_path / "inits.txt").read_text()
    inits = {ln.rsplit("/", 1)[1] for ln in log.splitlines() if "/$" in ln}
    assert len(inits) >= 21
    assert not {m.cell for m in drawn} & inits
    assert "router_" in build(spec, drawn, tmp_path).read_text()


def test_equivalence_is_proven_unbounded_where_it_holds(tmp_path):
    """BvN n = 4: bit 6 of the constant-0 arm of a row value's multiplexer (rtl/chronos/
    bvn.py, the line that selects a row's value) tied to 0 changes nothing, in every state: proven. The same bit of the load
    payload tied to 0 changes a loaded entry: not proven (and the miter finds the
    difference). A register's clock inverted is never proven (see proved_equivalent)."""
    spec = Spec("bvn", "bvn", {"n": 4, "w": 8}, "rtl/chronos/bvn.py")
    drawn = mutants_of(spec, 6, 2, tmp_path, filters="-mode const0 -port A -portbit 6")
    by_line = {m.where: m for m in drawn}
    source = (ROOT / "rtl" / "chronos" / "bvn.py").read_text().splitlines()
    line = next(k for k, text in enumerate(source, 1)
                if "val.eq(or_tree(m, [Mux(grants[i][t], resid[i][t], 0)" in text)
    same = by_line[f"rtl/chronos/bvn.py:{line}"]
    assert same.what.endswith("A[6] tied to 0")
    differs = next(m for m in drawn if m.wire == "load__payload")
    # seen without a solver: the port is wired to a constant 0 already
    assert ties_its_own_constant(same, tmp_path, "bvn_n4_w8")
    assert not ties_its_own_constant(differs, tmp_path, "bvn_n4_w8")
    assert proved_equivalent(spec, same, tmp_path)
    assert not proved_equivalent(spec, differs, tmp_path)
    # a register moved to the falling edge: the passes ignore clocks and would prove it
    (clk,) = mutants_of(spec, 1, 1, tmp_path / "clk", filters="-port CLK -mode inv")
    assert clk.port == "CLK"
    assert not proved_equivalent(spec, clk, tmp_path)
    assert equivalent(spec, differs, tmp_path, depth=10, timeout=300) == "FAIL"


def test_equivalence_matching_registers_and_ports_only(tmp_path):
    """OCS transceiver N = 4: output 3's routed value has its bit 1 tied to 1, the value it
    holds whenever the states realise the permutation. The 'realised' flag then differs only
    where the lanes are no permutation, where nothing reads it: matched by every name, the
    flag cannot be proven; matched by registers and ports, the design is. Tied to 0 it is a
    real change, proven by neither."""
    spec = Spec("ocstrx", "ocstrx", {"lanes": 4, "groups": 3, "code_bits": 6, "timer_bits": 6,
                                     "settle": 3}, "rtl/optics/ocstrx.py")
    (same,) = mutants_of(spec, 1, 1, tmp_path / "1", filters="-wire benes.routed -wirebit 7 "
                         "-mode const1")
    (real,) = mutants_of(spec, 1, 1, tmp_path / "0", filters="-wire benes.routed -wirebit 7 "
                         "-mode const0")
    assert proved_equivalent(spec, same, tmp_path / "1")
    assert not proved_equivalent(spec, real, tmp_path / "0")


def test_a_proof_needs_its_base_case(tmp_path, monkeypatch):
    """Induction proves the two never diverge once equal for two cycles; the first cycles
    from power-up are a bounded miter's, and a proof without them is none."""
    import aifabric.cosim.mutate as mutate
    spec = Spec("ocstrx", "ocstrx", {"lanes": 4, "groups": 3, "code_bits": 6, "timer_bits": 6,
                                     "settle": 3}, "rtl/optics/ocstrx.py")
    (same,) = mutants_of(spec, 1, 1, tmp_path, filters="-wire benes.routed -wirebit 7 "
                         "-mode const1")
    asked = []
    monkeypatch.setattr(mutate, "_miter",
                        lambda judged, pair, depth, timeout: asked.append(depth) or "FAIL")
    assert not proved_equivalent(spec, same, tmp_path)
    assert asked == [3]


def test_modules_the_block_instances_are_added_unmutated():
    """RailX's top instances one router module per chip, written beside it by its own
    converter: the mutants' Verilog (one flattened module) must carry it, and only where an
    instance names it."""
    spec = SPECS["railx_mesh"]
    router = not_elaborated(get_block("railx_mesh").build(spec.params)).router_module
    inner = f"module m(a);\n  input a;\n  {router} r0 (\n    .clk(a)\n  );\nendmodule\n"
    text = _instanced_modules(spec, inner)
    assert text.startswith(f"module {router}(") and text.rstrip().endswith("endmodule")
    assert text.count("\nendmodule") == 1
    assert _instanced_modules(spec, "module m(a);\n  input a;\nendmodule\n") == ""
    assert _instanced_modules(SPECS["wwfa"], inner) == ""


def test_instance_ports_mutated_in_their_direction(tmp_path):
    """A mutant on an input port of an instanced router (RailX's top) drives the router's
    input through its multiplexer: the design keeps one driver per wire. Without the
    router's port directions, Yosys handles the input as an output, re-drives the wire the
    router reads (two drivers) and leaves the router's input undriven."""
    spec = SPECS["railx_mesh"]
    (m,) = mutants_of(spec, 1, 1, tmp_path,
                      filters="-mode inv -cell router1 -port i__6__flit -portbit 20")
    assert (m.cell, m.port, m.portbit) == ("router1", "i__6__flit", 20)
    top = get_block(spec.bench).instance_name(spec.params)
    log = yosys(f"read_rtlil design.il\nhierarchy -top {top}\nproc\nflatten\n"
                f"{m.command} -ctrl mutsel 1 1\nopt_clean\ntee -o check.log check\n", tmp_path)
    report = (tmp_path / "check.log").read_text()
    assert "multiple conflicting drivers" not in report and "Found and reported 0 problems" \
        in report, report[-1500:] + log


def test_score_counts_equivalent_mutants_out():
    mk = lambda v: Outcome(None, v)          # noqa: E731
    outs = [mk("killed")] * 18 + [mk("equivalent")] * 2 + [mk("survived")]
    assert score(outs) == (18, 19, 18 / 19)
    assert score([mk("equivalent")]) == (0, 0, None)


@pytest.mark.parametrize("argv,word", [(["--block", "nope"], "--block"),
                                       (["--mutants", "0"], "--mutants"),
                                       (["--target", "2"], "--target"),
                                       (["--mode", "ast"], "--mode"),
                                       (["--param", "n=5"], "--param"),
                                       (["--block", "wwfa", "--param", "n=1"], "--param"),
                                       (["--block", "wwfa", "--param", "m=4"], "--param")])
def test_bad_input_is_one_line_exit_2(argv, word):
    proc = subprocess.run([sys.executable, "-m", "aifabric.scripts.mutate", *argv], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in proc.stderr
