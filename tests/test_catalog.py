"""The block registry's naming rule: a block called ``name`` is ``rtl/<area>/<name>.py``
(its component defined there), has its golden model ``models/<area>/<name>.py`` (or the
module the registry names) and its testbench ``cosim/test_<name>.py``, or names the block
whose testbench covers it."""

from pathlib import Path

import pytest

from rtl.catalog import BLOCKS

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_block_files_follow_the_naming_rule(name):
    block = BLOCKS[name]
    module = block.component.__module__.split(".")
    assert module[0] == "rtl" and module[-1] == name, \
        f"{name}: component defined in {block.component.__module__}"
    area = module[1]
    assert (ROOT / "rtl" / area / f"{name}.py").is_file()
    model = ROOT.joinpath(*block.model_module.split(".")).with_suffix(".py")
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
