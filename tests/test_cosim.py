"""The cocotb co-simulations, driven through the runner: one case per block and parameter set
of the registry, each in its own build directory (so ``pytest -n auto`` runs them in parallel).
"""

import re

import pytest

from aifabric.cosim.runner import run
from aifabric.rtl.catalog import BLOCKS

CASES = [pytest.param(name, params, id=block.instance_name(params))
         for name, block in BLOCKS.items() if not block.cosim_in
         for params in (block.params if block.ci_params is None else block.ci_params)]

@pytest.mark.cosim
@pytest.mark.parametrize("block,params", CASES)
def test_cosim(block, params, cosim_seed):
    budget = BLOCKS[block].ci_budget(params)       # the registry's CI sizing
    result = run(block, params, seed=cosim_seed, transactions=budget)
    assert result.passed, f"{block} {params} seed {cosim_seed}: {result.describe()}"
    assert result.tests >= 2
    # Every testbench reports what it simulated; the regression must check a real amount.
    assert result.transactions >= 10_000, result.stats
    # a crossbar delivers up to N words a cycle, so cycles only bound the run from below
    assert result.cycles >= 1_000, result.stats
    # every testbench logs the seed its stimulus is drawn from, saying whose it is: the run's
    # (what SEED= replays) or the test's own
    log = (result.run_dir / "test.log").read_text(errors="replace")
    bare = re.search(r"(?<!run )(?<!test's )(?<!--)\bseed[ =]\d", log)
    assert bare is None, f"a seed in test.log without saying whose: {bare and bare.group()}"
    assert "this test's seed" in log and f"run seed {cosim_seed} (SEED=" in log
