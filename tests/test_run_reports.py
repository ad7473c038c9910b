"""What a run tells its user and its CI: which seed is which in a co-simulation's log, the
one JUnit file a `make` run leaves, and the progress and per-paper lines of `aifabric
reproduce`."""

import ast
import json
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
    logged bare as "seed=<n>" beside the runner's "seed 7" it read as a disagreement. The
    same for the seed the golden model's traffic is drawn from, in the scenario results the
    mesh testbenches log (now ``traffic_seed``)."""
    bare = []
    for path in sorted((ROOT / "cosim").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("info", "debug", "warning", "error") \
                    and "RANDOM_SEED" in ast.unparse(node):
                bare.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Dict) and any(
                    isinstance(k, ast.Constant) and k.value == "seed" for k in node.keys):
                bare.append(f"{path.name}:{node.lineno} (a result's 'seed')")
    assert bare == []


def test_the_cosim_command_says_its_seed_is_the_runs():
    line = run_cosim.run_seed_line(7)
    assert line.startswith("run seed 7 (cocotb's COCOTB_RANDOM_SEED; the same stimulus "
                           "again: SEED=7, or --seed 7)")
    assert "this test's seed" in line and not BARE_SEED.search(line)


# ------------------------------------------------------------ one JUnit file per run ----

def _cocotb_results(path: Path, module: str, cases: list[tuple[str, str | None]]) -> None:
    """A results.xml in cocotb's own form: one suite, a case per test, a failure where the
    test failed (its message as cocotb writes it)."""
    body = []
    for name, failure in cases:
        fail = "" if failure is None else \
            f'<failure message="{failure}" type="AssertionError">Traceback ...</failure>'
        body.append(f'<testcase classname="{module}" name="{name}" time="0.250">{fail}'
                    f'<properties><property name="random_seed" value="7" /></properties>'
                    f'</testcase>')
    fails = sum(f is not None for _, f in cases)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="cocotb tests">'
                    f'<testsuite name="{module}" errors="0" failures="{fails}" skipped="0" '
                    f'tests="{len(cases)}" time="0.5">{"".join(body)}</testsuite>'
                    f'</testsuites>\n')


def test_a_run_merges_its_sets_results_into_one_junit_file(tmp_path):
    """`make` runs `aifabric cosim`, which leaves build/junit/cosim.xml: a suite per
    parameter set, a case per cocotb test, the failure's message led by the first mismatch,
    and the counts on every suite and on the root (what a CI system shows first)."""
    import xml.etree.ElementTree as ET

    from aifabric.cosim.runner import CosimResult
    mismatch = ("first mismatch at cycle 12; field grants(i->j): expected [(0, 1)], "
                "received [(0, 2)]")
    runs = []
    for block, params, cases in (
            ("wwfa", {"n": 4}, [("reset_clears_grants", None), ("random_requests", None)]),
            ("bvn", {"n": 8, "w": 8}, [("reset_state", None),
                                       ("decompositions", "Received transaction differed "
                                                          "from expected transaction")])):
        rdir = tmp_path / f"{block}-run"
        _cocotb_results(rdir / "results.xml", f"aifabric.cosim.test_{block}", cases)
        failed = sum(f is not None for _, f in cases)
        runs.append(CosimResult(
            block=block, params=params, seed=7, build_dir=tmp_path, tests=len(cases),
            failed=failed, run_dir=rdir, seconds=3.0,
            first_failure=f"decompositions: {mismatch}" if failed else "",
            error=f"1 of 2 tests failed (run seed 7); see {rdir}/test.log" if failed else ""))
    path = run_cosim.write_junit(runs, tmp_path / "junit" / "cosim.xml")
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped", "time")} == \
        {"tests": "4", "failures": "1", "errors": "0", "skipped": "0", "time": "1.000"}
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["wwfa_n4", "bvn_n8_w8"]
    assert [(s.get("tests"), s.get("failures")) for s in suites] == [("2", "0"), ("2", "1")]
    assert [[c.get("name") for c in s.findall("testcase")] for s in suites] == \
        [["reset_clears_grants", "random_requests"], ["reset_state", "decompositions"]]
    assert suites[1].find("testcase").get("classname") == "bvn_n8_w8.aifabric.cosim.test_bvn"
    failure = suites[1].find("testcase[@name='decompositions']/failure")
    message = failure.get("message")
    assert message.startswith(mismatch + " (run seed 7)\n")
    assert message.endswith("Received transaction differed from expected transaction")
    assert suites[0].find(".//failure") is None
    props = {p.get("name"): p.get("value") for p in suites[1].find("properties")}
    assert props == {"run_seed": "7", "parameters": "n=8, w=8",
                     "run_dir": str(tmp_path / "bvn-run")}


# -------------------------------------------------- progress of `aifabric reproduce` ----

class _Paper:
    """A paper's package as `reproduce` sees it, with records and no simulation."""

    @staticmethod
    def reproduce(quick=False):
        from aifabric.models.common.records import Record
        return [Record(f"r{k}", "flexsipac", "m", "us", 10.0, 10.0) for k in range(14)]


def test_reproduce_says_when_each_paper_is_done_and_estimates_the_next_run(tmp_path, capsys):
    import json

    from aifabric.scripts.reproduce import collect
    records, _, status, _ = collect({"flexsipac": _Paper, "railx": None}, tmp_path)
    err = capsys.readouterr().err
    assert len(records) == 14 and status["flexsipac"] == "14 records"
    assert re.search(r"^flexsipac: 14 records in \d+ s$", err, re.M), err
    assert "reproduce [1/2] flexsipac: records (0 s so far)" in err       # no estimate yet
    assert "\r" not in err                      # no bar where stderr is not a terminal
    times = json.loads((tmp_path / "durations.json").read_text())
    assert set(times) == {"full"} and set(times["full"]) == {"flexsipac"}
    # the next run estimates from this one's time, full and quick runs apart
    times["full"]["flexsipac"] = 33.0
    (tmp_path / "durations.json").write_text(json.dumps(times))
    collect({"flexsipac": _Paper}, tmp_path)
    err = capsys.readouterr().err
    assert "about 33 s for the paper, from its last full run)" in err
    assert re.search(r"^flexsipac: 14 records in \d+ s \(last full run: 33 s\)$", err, re.M)
    collect({"flexsipac": _Paper}, tmp_path, quick=True)
    assert "about" not in capsys.readouterr().err
    times = json.loads((tmp_path / "durations.json").read_text())
    assert set(times) == {"full", "quick"} and times["full"]["flexsipac"] != 33.0


def test_reproduce_shows_a_bar_with_the_estimate_on_a_terminal(monkeypatch):
    import io
    import sys

    from aifabric.scripts import reproduce

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    bar = reproduce._PaperBar("reproduce [1/5] railx", 150.0)
    bar.close()
    assert "reproduce [1/5] railx:   0%|" in screen.getvalue()
    assert "of about 2 min" in screen.getvalue()
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    reproduce._PaperBar("reproduce [2/5] chronos", None).close()
    assert "(no earlier run to estimate from)" in screen.getvalue()


# ------------------------------------------------------------- the synthesis trend ----

def _instance(block, params):
    return "_".join([block, *(f"{k}{v}" for k, v in sorted(params.items()))])


def _placed(block, params, luts, fmax):
    return {"block": block, "params": params, "instance": _instance(block, params),
            "fits": True, "slices_comb": luts, "fmax_mhz": fmax}


def test_the_synthesis_trend_follows_each_blocks_size(tmp_path):
    """build/synth/synth_trend.png, drawn from report.json: a line per block (per other
    parameter where it splits into lines of two sizes), none where sizes do not separate."""
    from aifabric.scripts.synth import draw_trend, trend_series
    router = {"vcs": 2, "depth": 16, "data": 64}
    results = [
        _placed("wwfa", {"n": 16}, 5_291, 43.0), _placed("wwfa", {"n": 8}, 1_157, 80.2),
        _placed("wwfa", {"n": 32}, 22_664, 21.7),
        _placed("bvn", {"n": 8, "w": 16}, 5_582, 29.6),
        _placed("bvn", {"n": 16, "w": 16}, 20_629, 17.0),
        _placed("bvn", {"n": 16, "w": 10}, 15_071, 18.6),
        _placed("bvn", {"n": 32, "w": 10}, 58_027, 10.6),
        {"block": "bvn", "params": {"n": 64, "w": 16}, "instance": "bvn_n64_w16",
         "fits": False, "slices_comb": None},
        _placed("router", {"ports": 5, **router}, 6_099, 39.6),
        _placed("router", {"ports": 5, **router, "vcs": 4}, 16_204, 29.1),
        _placed("router", {"ports": 8, **router, "vcs": 3}, 30_555, 25.0),
        _placed("slot_switch", {"n": 8, "depth": 64}, 2_009, 84.4),
        _placed("slot_switch", {"n": 32, "depth": 256}, 28_357, 63.7),
        _placed("ocstrx", {"lanes": 8}, 1_234, 99.7)]
    assert trend_series(results) == {
        "wwfa: n": [(8, 1_157, 80.2), (16, 5_291, 43.0), (32, 22_664, 21.7)],
        "bvn: n (w=16)": [(8, 5_582, 29.6), (16, 20_629, 17.0)],
        "bvn: n (w=10)": [(16, 15_071, 18.6), (32, 58_027, 10.6)],
        "slot_switch: n (depth varying with it)": [(8, 2_009, 84.4), (32, 28_357, 63.7)]}
    png = draw_trend(results, tmp_path / "synth" / "synth_trend.png")
    assert png == tmp_path / "synth" / "synth_trend.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert draw_trend(results[-1:], tmp_path / "none.png") is None
    assert not (tmp_path / "none.png").exists()


# ------------------------------------------- the committed synthesis and ASIC records ----

def _history_entry(instance, luts, fmax, date, commit):
    return {**_placed(instance.split("_")[0], {"n": int(instance.split("_n")[1])}, luts, fmax),
            "date": date, "commit": commit}


def test_records_are_appended_dated_and_the_history_follows_each_instance(tmp_path,
                                                                         monkeypatch):
    """make synth --record appends each run's results with the date and the commit; the
    history figure follows each instance placed in two records or more, record by record."""
    from aifabric.scripts import synth
    path = tmp_path / "synth.json"
    monkeypatch.setattr(synth, "_commit", lambda: "abc1234")
    synth.append_records(path, [_placed("wwfa", {"n": 8}, 1_157, 80.2)], {"device": 1}, "x")
    synth.append_records(path, [_placed("wwfa", {"n": 8}, 1_100, 81.0),
                                _placed("wwfa", {"n": 16}, 5_291, 43.0)], {"device": 2}, "x")
    data = json.loads(path.read_text())
    assert data["device"] == 2
    assert [(r["instance"], r["slices_comb"], r["commit"], r["from"]) for r in data["records"]] \
        == [("wwfa_n8", 1_157, "abc1234", "x"), ("wwfa_n8", 1_100, "abc1234", "x"),
            ("wwfa_n16", 5_291, "abc1234", "x")]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", data["records"][0]["date"])
    # the newest per instance, where each first appeared; the size trend takes only those
    records = [_history_entry("bvn_n8", 5_890, 21.9, "d1", "c1"),
               _history_entry("wwfa_n8", 1_157, 80.2, "d1", "c1"),
               _history_entry("bvn_n8", 6_570, 20.6, "d2", "c2"),
               _history_entry("wwfa_n16", 5_291, 43.0, "d3", "c3"),
               _history_entry("bvn_n8", 5_582, 29.6, "d4", "c4")]
    assert [(r["instance"], r["slices_comb"]) for r in synth.latest(records)] == \
        [("bvn_n8", 5_582), ("wwfa_n8", 1_157), ("wwfa_n16", 5_291)]
    assert synth.trend_series(records) == {"wwfa: n": [(8, 1_157, 80.2), (16, 5_291, 43.0)]}
    ticks, series = synth.history_series(records)
    assert ticks == ["d1\nc1", "d2\nc2", "d4\nc4"]          # d3 holds no instance of two
    assert series == {"bvn n=8": [(0, 5_890, 21.9), (1, 6_570, 20.6), (2, 5_582, 29.6)]}
    png = synth.draw_history(records, tmp_path / "history.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert synth.draw_history(records[1:2], tmp_path / "none.png") is None


def test_a_run_appends_to_its_record_and_draws_from_it(tmp_path, capsys, monkeypatch):
    """synth and asic after a run: with --record the figures come from the whole history,
    without it from the build's report; a line per figure, or why there is none."""
    from aifabric.scripts import synth
    monkeypatch.setattr(synth, "_commit", lambda: "abc1234")
    seen = []

    def draw(records, path):
        seen.append([(r["instance"], r.get("commit")) for r in records])
        return path if len(records) > 1 else None
    figures = [(draw, tmp_path / "trend.png", "the trend", "too few")]
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"results": [_placed("wwfa", {"n": 8}, 1, 2.0)]}))
    synth.record_and_draw(None, [], {}, "x", report, figures)
    assert seen.pop() == [("wwfa_n8", None)] and capsys.readouterr().out == \
        "no figure: too few\n"
    record = tmp_path / "synth.json"
    for n in (8, 16):
        synth.record_and_draw(record, [_placed("wwfa", {"n": n}, n, 2.0)], {"device": 1},
                              "aifabric synth", report, figures)
    assert seen == [[("wwfa_n8", "abc1234")], [("wwfa_n8", "abc1234"), ("wwfa_n16", "abc1234")]]
    assert capsys.readouterr().out == f"no figure: too few\nthe trend: {tmp_path / 'trend.png'}\n"
    assert json.loads(record.read_text())["records"][1]["from"] == "aifabric synth"


def _table(section: str, columns: int) -> list[list[str]]:
    """The rows of the table under ``## section`` of docs/figures.md with that many columns
    whose first cell names a block (the section's other tables, a block's before-and-after
    steps, start with something else; a misspelt block is then a record without its row)."""
    from aifabric.rtl.catalog import BLOCKS
    text = (ROOT / "docs" / "figures.md").read_text()
    part = text[text.index(f"\n## {section}\n"):]
    part = part[:part.index("\n## ", 1)]
    rows = [[c.strip() for c in line.strip()[1:-1].split("|")] for line in part.splitlines()
            if line.startswith("| ") and not line.startswith("| block ")]
    return [r for r in rows if len(r) == columns and r[0] in BLOCKS]


def _instance_of(block: str, text: str) -> str:
    """The synthesis set a table row names (its parameters, a note in brackets after them)."""
    from aifabric.rtl.catalog import BLOCKS
    given = dict(kv.split("=") for kv in text.split(" (")[0].split(", "))
    match = [p for p in BLOCKS[block].synth_params
             if all(str(p.get(k)) == v for k, v in given.items())]
    if len(match) > 1:          # "n=16" beside "n=16, band=0": the set that names no more
        match = [p for p in match if set(p) == set(given)]
    assert len(match) == 1, (block, text)
    return BLOCKS[block].instance_name(match[0])


def test_the_synthesis_and_asic_tables_are_the_newest_records():
    """docs/figures.md's ECP5 and ASIC tables show the newest record of the committed
    results/synth.json, and per library of results/asic.json, of every instance the
    registry's synthesis sets name (older instances, e.g. a set since given another form,
    stay in the history; a run of one library keeps the other's figures): the
    site draws its trends from the records, so a table updated by hand alone would disagree
    with them."""
    from aifabric.rtl.catalog import BLOCKS
    from aifabric.scripts.synth import latest, load_records
    current = {b.instance_name(p) for b in BLOCKS.values() for p in b.synth_params}

    def newest_of(path):
        return {r["instance"]: r for r in latest(load_records(path)) if r["instance"] in current}
    newest = newest_of(ROOT / "results" / "synth.json")
    rows = _table("Synthesis", 6)
    assert sorted(_instance_of(r[0], r[1]) for r in rows) == sorted(newest)
    for block, params, luts, share, ffs, fmax in rows:
        r = newest[_instance_of(block, params)]
        if r["fits"]:
            assert (luts, ffs, float(fmax)) == (f"{r['slices_comb']:,}", f"{r['ffs']:,}",
                                                r["fmax_mhz"]), (block, params)
        else:
            assert luts.startswith(f"{r['lut4']:,} LUT4") and "does not fit" in share, params
    from aifabric.scripts.asic import newest_per_library
    newest = {k: v for k, v in newest_per_library(load_records(ROOT / "results" / "asic.json"))
              .items() if k in current}
    rows = _table("ASIC estimate", 11)
    assert sorted(_instance_of(r[0], r[1]) for r in rows) == sorted(newest)
    for row in rows:
        libs = newest[_instance_of(row[0], row[1])]
        for lib, (cells, area, period, fo4) in (("sg13g2", row[2:6]), ("asap7", row[6:10])):
            if lib not in libs:
                assert cells == "(not finished)" or cells == "", row
                continue
            x = libs[lib]
            assert (cells, area, period, float(fo4)) == (
                f"{x['cells']:,}", f"{x['area_um2']:,.0f}", f"{x['period_ps']:,.0f}",
                x["period_fo4"]), (row[:2], lib)


def test_the_asic_trend_per_library(tmp_path):
    """make asic's history keeps each library's figures (not the worst paths cell by cell),
    and its trend is drawn per library from the instances timed there."""
    from aifabric.scripts.asic import draw_asic_trend, newest_per_library, recorded, timed
    from aifabric.scripts.synth import trend_series

    def entry(n, sg13g2, asap7=None):
        libs = {"sg13g2": {"cells": 9, "area_um2": sg13g2[0], "period_ps": sg13g2[1],
                           "reg2reg": {"cells": ["a", "b"]}}}
        if asap7:
            libs["asap7"] = {"cells": 9, "area_um2": asap7[0], "period_ps": asap7[1]}
        return {"block": "wwfa", "params": {"n": n}, "instance": f"wwfa_n{n}", "libraries": libs}
    kept = recorded(entry(8, (14_047.0, 2_616.0)))["libraries"]["sg13g2"]
    assert kept["period_ps"] == 2_616.0 and kept["area_um2"] == 14_047.0
    assert "reg2reg" not in kept
    records = [entry(8, (14_047.0, 2_616.0), (121.0, 706.0)),
               entry(16, (66_021.0, 4_747.0)), entry(32, (297_482.0, 9_348.0))]
    assert trend_series(records, timed("sg13g2")) == {
        "wwfa: n": [(8, 14_047.0, 2_616.0), (16, 66_021.0, 4_747.0), (32, 297_482.0, 9_348.0)]}
    assert trend_series(records, timed("asap7")) == {}      # one size timed on ASAP7
    png = draw_asic_trend(records, tmp_path / "asic_trend.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert draw_asic_trend(records[:1], tmp_path / "none.png") is None
    # a later run of one library: its trend and the table take the new figures, and the
    # other library keeps those of its newest record that has it
    later = entry(16, (1.0, 2.0))
    later["libraries"]["asap7"] = later["libraries"].pop("sg13g2")
    records.append(later)
    assert trend_series(records, timed("sg13g2"))["wwfa: n"][1] == (16, 66_021.0, 4_747.0)
    assert trend_series(records, timed("asap7")) == {"wwfa: n": [(8, 121.0, 706.0),
                                                                 (16, 1.0, 2.0)]}
    newest = newest_per_library(records)
    assert newest["wwfa_n16"]["sg13g2"]["period_ps"] == 4_747.0
    assert newest["wwfa_n16"]["asap7"]["period_ps"] == 2.0
    assert newest["wwfa_n8"]["asap7"]["period_ps"] == 706.0 and set(newest["wwfa_n32"]) == \
        {"sg13g2"}
