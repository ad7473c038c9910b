"""Runs that cannot trip over each other: two co-simulations of one block started at once
from a cold build directory (the second waits for the first's build and says so), each with
its own results, both rows in the summary."""

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.cosim
def test_two_cold_cosims_of_one_block_at_once_both_pass(tmp_path, cosim_seed):
    env = {**os.environ, "AIFABRIC_BUILD": str(tmp_path / "build")}
    args = [sys.executable, "-m", "aifabric", "cosim", "--block", "wwfa", "--param", "n=2",
            "--transactions", "200"]
    procs = [subprocess.Popen(args + ["--seed", str(cosim_seed + k)], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for k in range(2)]
    outs = [p.communicate(timeout=900)[0] for p in procs]
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out
        assert "1 of 1 passed" in out, out
    model = tmp_path / "build" / "cosim" / "wwfa_n2"
    assert sum("waiting for " + str(model) in out for out in outs) == 1, outs
    runs = sorted((model / "runs").iterdir())
    assert len(runs) == 2                                   # one results directory per run
    seeds = sorted(r.name.split("-seed")[1].split("-")[0] for r in runs)
    assert seeds == sorted(str(cosim_seed + k) for k in range(2))
    for r in runs:
        assert (r / "results.xml").is_file() and (r / "test.log").is_file()
    summary = (tmp_path / "build" / "summary.md").read_text()
    assert summary.count("| wwfa | n=2 |") == 1 and "1 of 1 passed" in summary
