"""The block registry's naming rule: a block called ``name`` is ``rtl/<area>/<name>.py``
(its component defined there), has its golden model ``models/<area>/<name>.py`` (or the
module the registry names) and its testbench ``cosim/test_<name>.py``, or names the block
whose testbench covers it."""

from pathlib import Path

import pytest

from aifabric.rtl.catalog import BLOCKS

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_block_files_follow_the_naming_rule(name):
    block = BLOCKS[name]
    module = block.component.__module__.split(".")
    assert module[:2] == ["aifabric", "rtl"] and module[-1] == name, \
        f"{name}: component defined in {block.component.__module__}"
    area = module[2]
    assert (ROOT / "rtl" / area / f"{name}.py").is_file()
    model = ROOT.joinpath(*block.model_module.split(".")[1:]).with_suffix(".py")
    assert model.is_file(), f"{name}: no golden model {block.model_module}"
    if block.cosim_in is None:
        assert (ROOT / "cosim" / f"test_{name}.py").is_file(), f"{name}: no testbench"
    else:
        host = BLOCKS[block.cosim_in]
        assert host.cosim_in is None and (ROOT / "cosim" / f"test_{host.name}.py").is_file()


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_default_parameters_validate(name):
    block = BLOCKS[name]
    for params in block.params + block.synth_params:
        block.validate(params)


def test_generated_verilog_carries_version_revision_and_parameters(tmp_path):
    import re
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "aifabric", "verilog", "--block", "bvn",
                          "--param", "n=4", "--param", "w=8", "--no-lint", "--out",
                          str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    head = (tmp_path / "bvn_n4_w8.v").read_text().splitlines()[:3]
    version = re.search(r'^version = "(.+)"', (ROOT / "pyproject.toml").read_text(),
                        re.M).group(1)
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    assert f"aifabric {version} (source {rev}" in head[1], head
    assert "parameters n=4, w=8." in head[1], head
    assert head[2].endswith("--block bvn --param n=4 --param w=8`."), head
