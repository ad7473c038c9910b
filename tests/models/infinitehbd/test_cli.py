"""aifabric.scripts.infinitehbd as users run it: results on stdout, bad input one line and exit 2."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def run(*args):
    return subprocess.run([sys.executable, "-m", "aifabric.scripts.infinitehbd", *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_rings_and_tables(tmp_path):
    p = run("rings", "--nodes", "12", "--tp", "16", "--faulty", "2,7")
    assert p.returncode == 0
    assert "ring 0: nodes [0, 1, 3, 4]" in p.stdout and "E1=2 W1=1 E3=1 W3=2" in p.stdout
    p = run("rings", "--nodes", "12", "--tp", "16", "--faulty", "2,7", "--commands")
    # ring [0, 1, 3, 4]: E1 takes the 2-hop path around the faulty node 2 and has no backup
    # (the ring node beyond 3 is 4, three hops away, more than K = 2); W1's far end is the
    # ring's end node 0, so its backup is the loopback (path 3), with the matrix loaded
    # first; W0 loops its halves back through the matrix. SET_PATH word: op 1 | path << 7 |
    # backup << 9 | every << 11
    assert "E1 bundle 1: SET_PATH every group path 2 backup 0  (0x901)" in p.stdout
    assert ("W1 bundle 0: LOAD_PERM [4, 5, 6, 7, 0, 1, 2, 3]  (0x7803447d62)\n"
            "    W1 bundle 0: SET_PATH every group path 1 backup 3  (0xe81)") in p.stdout
    assert "W0 bundle 0: LOAD_PERM [4, 5, 6, 7, 0, 1, 2, 3]" in p.stdout
    assert "| infinitehbd-k2 | 2,626.80 | 48.10 | 3.28 | 0.06 |" in run("table6").stdout
    csv = tmp_path / "t.csv"
    csv.write_text("node,start_h,end_h\n3,0,50\n")
    p = run("waste", "--tp", "16", "--trace", str(csv), "--nodes", "36", "--hours", "100")
    assert p.returncode == 0 and "| big-switch |" in p.stdout


@pytest.mark.parametrize("args,message", [
    (["rings", "--nodes", "12", "--tp", "16", "--faulty", "2,13"], "outside the cluster"),
    (["rings", "--nodes", "12", "--R", "6", "--tp", "12"], "must be one of (4, 8)"),
    (["rings", "--nodes", "12", "--K", "5", "--tp", "16"], "must be <= R"),
    (["rings", "--nodes", "12", "--tp", "10"], "multiple of the node size"),
    (["waste", "--tp", "32", "--trace", "/nonexistent.csv", "--nodes", "8", "--hours", "9"],
     "no such trace file"),
    (["waste", "--tp", "32", "--trace", "x.csv"], "--trace needs --nodes and --hours"),
])
def test_bad_input_one_line_exit_2(args, message):
    p = run(*args)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("error: ")
    assert message in p.stderr and "Traceback" not in p.stderr


def test_malformed_csv_names_the_row(tmp_path):
    csv = tmp_path / "bad.csv"
    csv.write_text("node,start_h,end_h\n1,2,3\n1,oops,3\n")
    p = run("waste", "--tp", "16", "--trace", str(csv), "--nodes", "36", "--hours", "100")
    assert p.returncode == 2 and f"{csv}:3: node must be an integer" in p.stderr
