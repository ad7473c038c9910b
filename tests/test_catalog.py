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


def test_one_resolution_of_parameters_for_the_api_the_cli_and_fusesoc(tmp_path):
    """Block.resolve: the first default set with the caller's values changed, checked; the
    Python API takes the same partial sets as the command line and the FuseSoC generator."""
    from aifabric.rtl.fusesoc_generator import generate
    from aifabric.scripts._cli import UsageError, selected

    router = BLOCKS["router"]
    want = {**router.params[0], "ports": 6, "vcs": 3}
    assert router.resolve({"ports": 6, "vcs": 3}) == want
    assert router.resolve() == router.params[0]
    with pytest.raises(TypeError, match=r"^router: unknown parameter 'port'; parameters are "):
        router.resolve({"port": 6})
    with pytest.raises(ValueError, match=r"^wwfa: .*'n' must be in 2\.\.128, not 500"):
        BLOCKS["wwfa"].resolve({"n": 500})
    with pytest.raises(TypeError, match="must be a mapping"):
        BLOCKS["wwfa"].resolve([("n", 4)])
    # the API: a partial set (was: TypeError, missing keyword-only arguments)
    text = BLOCKS["wwfa"].verilog({"n": 3})
    assert "module wwfa_n3(" in text
    # the command line: the same set, and a repeated --param is refused
    class Args:
        block, param = ["router"], ["ports=6", "vcs=3"]
    assert selected(Args()) == [(router, want)]
    Args.param = ["ports=6", "ports=7"]
    with pytest.raises(UsageError, match=r"--param ports is given twice \(ports=6 and ports=7\)"):
        selected(Args())
    # the FuseSoC generator: a partial set of the WSS controller, named in the file's header
    wss = BLOCKS["wss"]
    generate({"block": "wss", "ports": 5, "module": "wss5"}, "user:demo:wss5:1.0", tmp_path)
    header = (tmp_path / "wss5.v").read_text().splitlines()[1]
    assert ", ".join(f"{k}={v}" for k, v in wss.resolve({"ports": 5}).items()) in header
    assert f"wavelengths={wss.params[0]['wavelengths']}" in header
