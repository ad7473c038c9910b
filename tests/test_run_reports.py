"""What a run tells its user: which seed is which in a co-simulation's log."""

import ast
import re
from pathlib import Path

from aifabric.cosim.stats import seed_text
from aifabric.scripts import run_cosim

ROOT = Path(__file__).resolve().parents[1]

# a bare seed in a log line: "seed=123" or "seed 123", not said to be the run's or the test's
# (nor an option, "--seed 7")
BARE_SEED = re.compile(r"(?<!run )(?<!test's )(?<!--)\bseed[ =]\d")


# ---------------------------------------------------------------- which seed is which ----

def test_the_testbench_seed_line_names_the_run_seed_and_the_test_seed(monkeypatch):
    monkeypatch.setenv("COCOTB_RANDOM_SEED", "7")
    text = seed_text(test_seed=893396290151142572629107800082139554154468979633)
    assert text.startswith("run seed 7 (SEED=7 replays it); ")
    assert "this test's seed 893396290151142572629107800082139554154468979633 (cocotb's " \
           "RANDOM_SEED in a test: the run seed plus a hash of the test's name)" in text
    assert not BARE_SEED.search(text)
    monkeypatch.delenv("COCOTB_RANDOM_SEED")      # a FuseSoC sim target sets no seed
    assert seed_text(test_seed=5).startswith("run seed as cocotb logged it at start")


def test_no_testbench_logs_a_seed_without_saying_which():
    """cocotb's RANDOM_SEED inside a test is the run's seed plus a hash of the test's name:
    logged bare as "seed=<n>" beside the runner's "seed 7" it read as a disagreement."""
    bare = []
    for path in sorted((ROOT / "cosim").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("info", "debug", "warning", "error") \
                    and "RANDOM_SEED" in ast.unparse(node):
                bare.append(f"{path.name}:{node.lineno}")
    assert bare == []


def test_the_cosim_command_says_its_seed_is_the_runs():
    line = run_cosim.run_seed_line(7)
    assert line.startswith("run seed 7 (cocotb's COCOTB_RANDOM_SEED; the same stimulus "
                           "again: SEED=7, or --seed 7)")
    assert "this test's seed" in line and not BARE_SEED.search(line)

