"""aifabric.scripts.railonly as users run it: results on stdout, bad input one line and exit 2."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def run(*args):
    return subprocess.run([sys.executable, "-m", "aifabric.scripts.railonly", *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_table2_and_search():
    p = run("table2")
    assert p.returncode == 0
    assert "| 32,768 | 64 | 3/2 | 2,560 | 1,536 | 196,608 | 131,072 | 38.3 % | 37.5 % |" \
        in p.stdout
    p = run("search", "--model", "gpt-146b", "--gpus", "1024", "--batch", "512", "--hb", "8",
            "--platform", "dgx-h100")
    assert p.returncode == 0 and "best: t=" in p.stdout and "HFU" in p.stdout


def test_search_knobs_and_fig7():
    base = ["search", "--model", "gpt-146b", "--gpus", "1024", "--batch", "512", "--hb", "8",
            "--platform", "dgx-h100"]
    p = run(*base, "--tp", "hb", "--alpha-hb-us", "0", "--algo", "ring")
    assert p.returncode == 0, p.stderr
    assert "tp='hb'" in p.stdout and "alpha_hb=0 us" in p.stdout and "algo='ring'" in p.stdout
    best = next(line for line in p.stdout.splitlines() if line.startswith("best:"))
    t, th = (int(best.split(f"{k}=")[1].split()[0].rstrip(";")) for k in ("t", "t_h"))
    assert t == th                           # TP kept inside the HB domain
    p = run("fig7")
    assert p.returncode == 0 and "GPT-1T with full recomputation (94.42 s" in p.stdout
    assert p.stdout.count("error") == 4


@pytest.mark.parametrize("args,message", [
    (["network", "--gpus", "100", "--radix", "64", "--hb", "8"], "multiple of the HB"),
    (["network", "--gpus", "64", "--radix", "1", "--hb", "8"], "radix must be an int >= 2"),
    (["search", "--model", "gpt-9t", "--gpus", "8", "--batch", "8"], "unknown model"),
    (["a2a", "--x", "0", "--y", "2"], "x (grid size) must be >= 1"),
    (["a2a", "--x", "2", "--y", "2", "--platform", "tpu"], "unknown platform"),
    (["traffic", "--model", "gpt-1t", "--gpus", "3072", "--batch", "3072", "--t", "8",
      "--p", "7"], "must divide gpus"),
    (["search", "--model", "gpt-1t", "--gpus", "64", "--batch", "64", "--nic-gbps", "0"],
     "--nic-gbps must be > 0"),
    (["table2", "--hb", "x"], "invalid int value"),
    (["search", "--model", "gpt-1t", "--gpus", "64", "--batch", "64", "--hb", "8",
      "--max-micro", "0"], "max_micro must be an int >= 1"),
    (["search", "--model", "gpt-1t", "--gpus", "64", "--batch", "64", "--hb", "8",
      "--alpha-nic-us", "-2"], "--alpha-nic-us must be >= 0"),
    (["search", "--model", "gpt-1t", "--gpus", "64", "--batch", "64", "--tp", "nvl"],
     "argument --tp: invalid choice"),
])
def test_bad_input_one_line_exit_2(args, message):
    p = run(*args)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("error: ")
    assert message in p.stderr
    assert "Traceback" not in p.stderr
