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

# CI sizing: the N = 64 engine checks every kind of frame (random, MoE, quantised MoE, zero,
# full, bad) but stops drawing random and MoE matrices after this many steps (the 100
# quantised ones are always run); `make` runs all 400 matrices.
# The RailX system (36 routers) runs every scenario at about a third of its length (12,000
# of ~38,000 flits) and 76 path packets of 240.
# The slot fabric runs every scenario, the two long ones (random runs, slots of thousands of
# cycles) shortened to a fifth of their words (one long slot per configuration instead of two).
CI_TRANSACTIONS = {"bvn_n64_w10": 40_000,
                   "railx_mesh_allocatorseparable_data48_depth8_mesh_delay1_n1_packet4_"
                   "rail_delay10_side3_vcs3": 12_000,
                   **{BLOCKS["slot_fabric"].instance_name(p): 20_000
                      for p in BLOCKS["slot_fabric"].params}}


@pytest.mark.cosim
@pytest.mark.parametrize("block,params", CASES)
def test_cosim(block, params, cosim_seed):
    budget = CI_TRANSACTIONS.get(BLOCKS[block].instance_name(params))
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
