"""aifabric.scripts.flexsipac as users run it: results on stdout, bad input one line and exit 2."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def run(*args):
    return subprocess.run([sys.executable, "-m", "aifabric.scripts.flexsipac", *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_commands():
    assert "N = 256 CUs, M = 32 WSSs" in run("topology", "--r", "16", "--L", "2").stdout
    p = run("allocate", "--r", "2", "--L", "2", "--w", "2", "--jobs", "2,2", "--wss")
    assert p.returncode == 0 and "CU 0: {1: 2}" in p.stdout
    assert "in 0 lambda 0 -> out 1" in p.stdout
    assert "all 2 configurations pass its checks" in p.stdout
    # every CU sends both wavelengths through level 0: (2, 0), the whole comb at port 0
    assert "4 of 4 CUs send every wavelength to the port of its level" in p.stdout
    assert "CU 0: modes [0], split [2, 0]" in p.stdout
    p = run("allreduce", "--r", "4", "--L", "3", "--jobs", "32,16,16")
    assert p.stdout.count("every CU holds the sum: True") == 3


@pytest.mark.parametrize("args,message", [
    (["topology", "--r", "1", "--L", "2"], "r (WSS radix) must be an int >= 2"),
    (["topology", "--r", "4", "--L", "0"], "L (levels) must be an int >= 1"),
    (["allocate", "--r", "4", "--L", "2", "--w", "0", "--jobs", "8"], "w (wavelengths"),
    (["allocate", "--r", "4", "--L", "2", "--w", "8", "--jobs", "20"], "do not fit"),
    (["allreduce", "--r", "4", "--L", "2", "--jobs", "6,10"], "not a sub-grid"),
    (["simulate", "--r", "4", "--L", "2", "--jobs", "8,8", "--fabric", "dgx"],
     "fabric must be one of"),
    (["simulate", "--r", "4", "--L", "2", "--jobs", "8", "--message", "0"],
     "--message must be > 0"),
    (["simulate", "--r", "2", "--L", "2", "--jobs", "4", "--setting", "ns3"],
     "setting must be one of netbench, credit"),
    (["simulate", "--r", "2", "--L", "2", "--jobs", "4", "--backpressure", "ack"],
     "backpressure must be one of pause, credit"),
    (["simulate", "--r", "2", "--L", "2", "--jobs", "4", "--setting", "credit",
      "--backpressure", "pause"], "--backpressure applies to the netbench setting only"),
])
def test_bad_input_one_line_exit_2(args, message):
    p = run(*args)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("error: ")
    assert message in p.stderr and "Traceback" not in p.stderr
