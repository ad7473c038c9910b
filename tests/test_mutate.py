"""`make mutate`'s machinery on a small sample: the wave-front arbiter at N = 4 with two
mutants drawn by Yosys and one planted (the grants register's bit 0 tied to 1: a grant
nobody asked for), all in one Verilated model behind ``mutsel``.

Checks: the draw is seeded and names the Amaranth source lines; ``mutsel = 0`` (the original)
passes the testbench; the planted mutant fails it; the same mutation fails a formal property
at the harness's parameters; the bounded miter tells it from the original; the script's
table reports a block's counts and score; bad input is one line and exit code 2."""

import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.cosim.mutate import (Outcome, Spec, build, equivalent, formal_kill, mutants_of,
                          run_mutant, verilate)
from aifabric.scripts.mutate import score

ROOT = Path(__file__).resolve().parent.parent
SPEC = Spec("wwfa", "wwfa", {"n": 4}, "rtl/chronos/wwfa.py", formal="wwfa")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    wd = tmp_path_factory.mktemp("mutate") / "wwfa"
    drawn = mutants_of(SPEC, 2, 7, wd)
    again = mutants_of(SPEC, 2, 7, wd / "again")
    planted = mutants_of(SPEC, 1, 1, wd / "planted", filters="-wire grants -wirebit 0 "
                         "-mode const1")
    assert len(planted) == 1
    plant = planted[0]
    plant.k = len(drawn) + 1
    mutants = drawn + [plant]
    verilate(SPEC, build(SPEC, mutants, wd), wd)
    return wd, drawn, again, plant


def test_draw_is_seeded_and_names_source_lines(built):
    _, drawn, again, plant = built
    assert [m.command for m in drawn] == [m.command for m in again]
    for m in drawn + [plant]:
        assert m.src and all("rtl/chronos/wwfa.py:" in s for s in m.src), m.src
        assert m.where.startswith("rtl/chronos/wwfa.py:")
    assert plant.mode == "const1" and plant.wire == "grants" and plant.wirebit == 0
    assert "tied to 1" in plant.what


def test_original_passes_and_planted_mutant_is_killed(built):
    wd, drawn, _, plant = built
    status, why, _ = run_mutant(SPEC, 0, wd, timeout=300)
    assert status == "pass", why
    status, why, _ = run_mutant(SPEC, plant.k, wd, timeout=300)
    assert status == "fail", (status, why)
    assert why            # the testbench's first failure, for the report


def test_planted_mutant_fails_a_formal_property_and_the_miter(built):
    wd, _, _, plant = built
    prop, tried = formal_kill(SPEC, plant, wd, timeout=120)
    assert prop == "grants_requested", tried
    assert equivalent(SPEC, plant, wd, depth=4, timeout=120) == "FAIL"


def test_score_counts_equivalent_mutants_out():
    mk = lambda v: Outcome(None, v)          # noqa: E731
    outs = [mk("killed")] * 18 + [mk("equivalent")] * 2 + [mk("survived")]
    assert score(outs) == (18, 19, 18 / 19)
    assert score([mk("equivalent")]) == (0, 0, None)


@pytest.mark.parametrize("argv,word", [(["--block", "nope"], "--block"),
                                       (["--mutants", "0"], "--mutants"),
                                       (["--target", "2"], "--target")])
def test_bad_input_is_one_line_exit_2(argv, word):
    proc = subprocess.run([sys.executable, "-m", "aifabric.scripts.mutate", *argv], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in proc.stderr
