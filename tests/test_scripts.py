"""The entry scripts as users run them: bad input gives one line and exit 2, nothing half
written; the reproduction report has the agreed shape."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.models.common.records import PAPERS, Record

ROOT = Path(__file__).resolve().parent.parent


def script(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("value,kind,shown", [
    ("0", "must be in 2..128", "0"), ("1", "must be in 2..128", "1"),
    ("129", "must be in 2..128", "129"), ("2.5", "must be an int in 2..128", "2.5"),
    ('"8"', "must be an int in 2..128", "'8'"),
])
def test_bad_parameter_one_line_exit_2(tmp_path, value, kind, shown):
    out = tmp_path / "verilog"
    proc = script("aifabric.scripts.generate_verilog", "--block", "wwfa", "--param", f"n={value}",
                  "--out", str(out))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0] == f"error: wwfa: Parameter 'n' {kind}, not {shown}"
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("content,message", [
    (None, "error: --readme: no such file"),
    ("no block here\n", "error: --readme: "),
    ("<!-- reproduce:end -->\n<!-- reproduce:begin -->\n", "error: --readme: "),
])
def test_reproduce_refuses_a_bad_readme_before_running(tmp_path, content, message):
    readme = tmp_path / "README.md"
    if content is not None:
        readme.write_text(content)
    proc = script("aifabric.scripts.reproduce", "--quick", "--out", str(tmp_path / "out"), "--readme",
                  str(readme))
    assert proc.returncode == 2 and proc.stderr.startswith(message), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()               # refused before the long run
    if content is not None:
        assert readme.read_text() == content


@pytest.mark.parametrize("args,message", [
    (["--block", "nope"], "error: unknown block 'nope'; blocks are wwfa"),
    (["--block", "wwfa", "--param", "m=3"], "error: wwfa: unknown parameter 'm'; parameters are n"),
    (["--block", "wwfa", "--param", "8"], "error: --param '8': expected NAME=VALUE"),
    (["--param", "n=8", "--block", "wwfa", "--block", "wwfa"], "error: --param needs exactly"),
    (["--frobnicate"], "error: unrecognized arguments: --frobnicate"),
])
def test_usage_errors(tmp_path, args, message):
    for name in ("aifabric.scripts.generate_verilog", "aifabric.scripts.run_cosim", "aifabric.scripts.synth"):
        proc = script(name, *args, *(["--out", str(tmp_path)] if "verilog" in name else []))
        assert proc.returncode == 2, (name, proc.stderr)
        assert proc.stderr.startswith(message), (name, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_generate_one_parameter_set(tmp_path):
    proc = script("aifabric.scripts.generate_verilog", "--block", "wwfa", "--param", "n=3",
                  "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    # no staging left behind (FuseSoC users get the block's generator core instead)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wwfa_n3.gtkw", "wwfa_n3.v"]
    assert "module wwfa_n3(" in (tmp_path / "wwfa_n3.v").read_text()


def test_one_parameter_changed_from_the_defaults(tmp_path):
    """--param changes the named values of the block's first default set."""
    proc = script("aifabric.scripts.generate_verilog", "--block", "router", "--param", "depth=4",
                  "--out", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: router: Parameter 'depth' must hold a whole packet "
                                   "under virtual cut-through: depth 4 < packet 8")
    proc = script("aifabric.scripts.generate_verilog", "--block", "router", "--param", "depth=8",
                  "--param", "vcs=3", "--no-lint", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "router_allocatorseparable_data64_depth8_dst_width11_packet8_ports5_vcs3.gtkw",
        "router_allocatorseparable_data64_depth8_dst_width11_packet8_ports5_vcs3.v"]


PAPER_VALUES = ROOT / "tests" / "data" / "paper_values.tsv"


def paper_values() -> dict[tuple[str, str], dict]:
    """The pinned table: (paper, id) -> its row (printed, formula, where)."""
    lines = [ln for ln in PAPER_VALUES.read_text().splitlines() if ln and not ln.startswith("#")]
    head = lines[0].split("\t")
    rows = [dict(zip(head, ln.split("\t"))) for ln in lines[1:]]
    table = {(r["paper"], r["id"]): r for r in rows}
    assert len(table) == len(rows), "duplicate rows in paper_values.tsv"
    return table


def check_records(records: list[dict], papers=None) -> list[str]:
    """What is wrong with a run's records: an outcome that contradicts the declared
    expectation (in either direction), a paper value other than the pinned printed one, a
    tolerance looser than the one rule, a record without a row or (for ``papers``, default
    all) a row without a record."""
    from aifabric.models.common.records import printed_tolerance
    table = paper_values()
    wrong = []
    seen = set()
    for r in records:
        key = (r["paper"], r["id"])
        seen.add(key)
        if r["expect"] == "missing":
            agrees = r["status"] == "missing"
        elif r["expect"] == "ablation":
            agrees = True
        else:
            agrees = (r["status"] in ("match", "holds")) == (r["expect"] == "match")
        rng = r.get("expected_range")
        if rng is not None and not rng[0] <= r["model_value"] <= rng[1]:
            wrong.append(f"{r['paper']}/{r['id']}: model {r['model_value']} outside its "
                         f"expected range {rng}")
        if not agrees:
            wrong.append(f"{r['paper']}/{r['id']}: expected {r['expect']}, got {r['status']} "
                         f"(paper {r['paper_value']}, model {r['model_value']}, "
                         f"why {r['why']!r})")
        row = table.get(key)
        if row is None:
            wrong.append(f"{r['paper']}/{r['id']}: no row in {PAPER_VALUES.name}")
            continue
        if float(row["printed"].replace(",", "")) != r["paper_value"]:
            wrong.append(f"{r['paper']}/{r['id']}: paper value {r['paper_value']!r}, printed "
                         f"{row['printed']!r}")
        if row["formula"] != r["formula"]:
            wrong.append(f"{r['paper']}/{r['id']}: formula {r['formula']!r}, printed "
                         f"{row['formula']!r}")
        rule = 0.01 if row["formula"] else printed_tolerance(r["paper_value"], row["printed"])
        if r["tolerance"] > rule + 1e-12:
            wrong.append(f"{r['paper']}/{r['id']}: tolerance {r['tolerance']:.4g} looser than "
                         f"the rule's {rule:.4g} for {row['printed']!r}")
    papers = set(PAPERS) if papers is None else set(papers)
    for key in sorted(k for k in set(table) - seen if k[0] in papers):
        wrong.append(f"{key[0]}/{key[1]}: pinned in {PAPER_VALUES.name} but not produced")
    return wrong


# the figures each package's quick run must write
FIGURES = {"chronos": ("fig6_moe_completion.png", "bvn_breakeven.png", "bvn_quantisation.png")}


@pytest.mark.parametrize("paper", list(PAPERS))
def test_reproduce_report_from_the_real_packages(tmp_path, paper):
    """Every record of one real package (its CI-sized run, one paper per test so the five run
    in parallel): its outcome is the declared one (a record expected to match matches, one
    expected to differ still differs, a missing one is missing), its paper value is the
    pinned printed one, its tolerance the one rule; the quick run holds the same records,
    declared alike, as the committed full run; the report comes from them."""
    proc = script("aifabric.scripts.reproduce", "--quick", "--paper", paper, "--out", str(tmp_path))
    assert (tmp_path / "report.json").is_file(), proc.stderr
    records = json.loads((tmp_path / "report.json").read_text())
    assert records and {r["paper"] for r in records} == {paper}
    by_id = {(r["paper"], r["id"]): r for r in records}
    assert len(by_id) == len(records), "duplicate record ids"
    wrong = check_records(records, papers=[paper])
    assert not wrong, "\n".join(wrong)
    assert proc.returncode == 0, proc.stderr
    for name in FIGURES.get(paper, ()):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    md = (tmp_path / "report.md").read_text()
    assert f"## {PAPERS[paper]}" in md
    sim = [r for r in records if r["kind"] == "value" and r["simulated"]]
    matched = sum(r["status"] == "match" for r in sim)
    assert f"simulated headline numbers: **{matched} of {len(sim)} match**" in md
    # the quick run and the committed full run hold the same records, declared alike
    from aifabric.scripts.reproduce import load_results
    full = {(r.paper, r.id): r for r in load_results() if r.paper == paper}
    assert set(full) == set(by_id), sorted(set(full) ^ set(by_id))
    for key, r in by_id.items():
        f = full[key]
        assert (f.paper_value, f.kind, f.simulated, f.bound) == \
            (r["paper_value"], r["kind"], r["simulated"], r["bound"]), key
        if not scaled_down(f, r):
            assert f.expect == r["expect"], key


TIME_UNITS = ("s", "ms", "us", "ns")


def scaled_down(full: Record, quick: dict) -> bool:
    """An absolute time the quick run measures on less traffic (its setting's ``volume``
    differs from the full run's) cannot be declared like the full run's: it is compared on
    everything but the declaration."""
    fv = (full.setting or {}).get("volume")
    qv = (quick.get("setting") or {}).get("volume")
    return full.unit in TIME_UNITS and fv is not None and qv is not None and fv != qv


def test_record_kinds_of_the_committed_run():
    """The kinds the rules give (checked on the committed full run): parts-list arithmetic is
    not reproduction, formulas on the paper's inputs are definitions, 'no more than' is a
    bound; the papers' simulated headline experiments are marked simulated."""
    from aifabric.scripts.reproduce import load_results
    rs = {(r.paper, r.id): r for r in load_results()}
    kind = {k: r.kind for k, r in rs.items()}
    assert kind["railx", "eq1.R128_m5.chips"] == "definition"
    assert kind["railx", "table6.railx7mesh.scale"] == "definition"
    assert kind["railx", "sec4.1.hyperx_m3.internal_hops"] == "bound"
    assert kind["railx", "table6.railx7mesh.cost"] == "arithmetic"
    assert kind["infinitehbd", "table6.infinitehbd-k2.cost"] == "arithmetic"
    assert kind["flexsipac", "sec3a.r16.l3.cus"] == "arithmetic"
    assert kind["chronos", "sec8.bhavan.time_to_result.mean"] == "bound"
    for key in (("railx", "fig14a.hyperx.throughput"), ("chronos", "sec8.1.tuned.improvement.mean"),
                ("flexsipac", "fig7.gain_vs_h100.min"), ("railonly", "fig10.k8.b256"),
                ("infinitehbd", "abstract.tp32.infinitehbd")):
        assert rs[key].kind == "value" and rs[key].simulated, key
    assert rs["infinitehbd", "table2.131072.improve"].paper_value == 3.3655


def test_readme_block_is_generated_from_the_committed_full_run():
    """The README's reproduction block is exactly what scripts/reproduce.py makes of
    results/reproduce.json (an edited README or a hand-edited count fails), and that file's
    records keep their declarations and pinned paper values."""
    from aifabric.scripts.reproduce import (RESULTS, by_paper_counts, load_results, readme_block,
                                   readme_section)
    records = load_results()
    data = json.loads(RESULTS.read_text())
    assert data["run"] == "full"
    assert data["counts"] == by_paper_counts(records)       # stored counts = recomputed ones
    assert readme_section((ROOT / "README.md").read_text()) == readme_block(records, False)
    assert readme_section((ROOT / "docs" / "reproduction.md").read_text()) == \
        readme_block(records, False, full=True)
    wrong = check_records([r.to_dict() for r in records])
    assert not wrong, "\n".join(wrong)


def test_a_flipped_record_fails_its_declaration():
    """A record given a reason declares a difference: when its model value lands within the
    tolerance it contradicts the declaration (it used to drop the reason and pass as a
    reproduction); one declared to match fails when it differs; the check sees both."""
    from aifabric.models.common.records import record
    flipped = record("chronos", "x", "m", "ms", 13, 13.1, why="fluid model", simulated=True)
    assert flipped.status == "match" and flipped.expect == "differ" and not flipped.ok
    assert flipped.why == "fluid model"                     # kept, not dropped
    drifted = record("chronos", "y", "m", "ms", 13, 20)
    assert drifted.status == "differs" and drifted.expect == "match" and not drifted.ok
    assert record("chronos", "z", "m", "ms", 13, 20, why="r").ok
    assert record("chronos", "w", "m", "ms", 13, None, why="no model yet").status == "missing"
    d = [r.to_dict() for r in (flipped, drifted)]
    for r in d:
        r["paper"], r["id"] = "railx", "fig14a.hyperx.throughput"
    found = [w for w in check_records(d) if "expected" in w]
    assert len(found) == 2 and "expected differ, got match" in found[0] \
        and "expected match, got differs" in found[1]


def test_one_tolerance_rule():
    """1 % or half a unit of the last printed digit, whichever is larger."""
    from aifabric.models.common.records import printed_tolerance, record
    assert printed_tolerance(13, "13") == pytest.approx(0.5 / 13)
    assert printed_tolerance(22.04, "22.04") == 0.01
    assert printed_tolerance(0.8, "0.8") == pytest.approx(0.05 / 0.8)
    assert printed_tolerance(0.8, "0.80") == 0.01
    assert printed_tolerance(2.0, "2.0") == pytest.approx(0.025)
    assert printed_tolerance(102_400, "102,400") == 0.01
    assert printed_tolerance(13.0) == printed_tolerance(13, "13")
    assert record("railx", "a", "m", "u", 0.8, 0.84, printed="0.8").status == "match"
    assert record("railx", "a", "m", "u", 0.8, 0.84, printed="0.80", why="r").status == \
        "differs"
    with pytest.raises(ValueError, match="is not the printed"):
        record("railx", "a", "m", "u", 0.8, 0.8, printed="0.08")
    # a formula evaluated at the instance is exact: 2n/m = 2 is held to 1 %, not to +-0.5
    assert record("railx", "a", "m", "u", 2, 2.0952, formula="2n/m", why="r").status == \
        "differs"


def test_report_separates_values_bounds_and_definitions(tmp_path):
    from aifabric.scripts.reproduce import collect, render

    class Fake:
        @staticmethod
        def reproduce():
            return [Record("a", "chronos", "m1", "us", 100.0, 101.0, simulated=True),
                    Record("b", "chronos", "m2", "us", 10.0, 15.0, why="a reason"),
                    Record("c", "chronos", "m3", "us", 0.0, 0.0),
                    Record("d", "chronos", "m4", "hops", 9.0, 8.0, kind="bound", bound="<="),
                    Record("e", "chronos", "m5", "chips", 4096.0, 4096.0, kind="definition"),
                    Record("f", "chronos", "m6", "M$", 45.0, 44.5, kind="arithmetic"),
                    Record("g", "chronos", "m7", "%", 43.7, 43.7, kind="fitted",
                           fit="efficiency fitted to this run"),
                    Record("h", "chronos", "m8", "x", 3.37, None, why="no MFU model yet")]

        @staticmethod
        def tables(quick=False):
            return [f"### sweep (quick={quick})\n\n| x |\n|---|\n| 1 |\n"]

    records, figures, status, tables = collect({"chronos": Fake, "railx": None}, tmp_path,
                                               quick=True)
    assert tables == {"chronos": ["### sweep (quick=True)\n\n| x |\n|---|\n| 1 |\n"]}
    assert status == {"chronos": "8 records", "railx": "no records yet (no models/railx package)"}
    assert [r.status for r in records] == ["match", "differs", "match", "holds", "match",
                                           "match", "match", "missing"]
    assert all(r.ok for r in records)
    d = records[3].to_dict()
    assert d["rel_error"] is None and d["margin"] == 1.0 and d["status"] == "holds"
    md = render(records, figures, status, tables)
    # a package's tables follow its records, inside its paper's section
    assert md.index("## Chronos") < md.index("| e |") < md.index("### sweep (quick=True)")
    # the summary counts each kind apart; only values count as reproduced
    assert "simulated headline numbers: **1 of 1 match**" in md
    assert "reproduced values (simulations, built graphs, searches, executed schedules, the " \
           "simulated ones included): 2 of 4 match, 1 differ, 1 missing" in md
    assert "bounds: 1 of 1 hold" in md and "1 arithmetic checks" in md
    assert "1 fitted values" in md and "1 definitions" in md
    sim, other = md.index("Simulated headline numbers:"), md.index("Other reproduced")
    assert sim < md.index("| a |") < other < md.index("| h |") < md.index("| b |") \
        < md.index("| c |")
    assert md.index("Arithmetic on") < md.index("| f |") < md.index("Fitted to") \
        < md.index("| g |") < md.index("Definitions:") < md.index("| e |") \
        < md.index("Bounds") < md.index("| d |")
    assert "50.00%" in md and "<= 9" in md and "(fitted: efficiency fitted to this run)" in md


def test_record_validation():
    with pytest.raises(ValueError, match="unknown paper 'nature'"):
        Record("x", "nature", "m", "u", 1.0, 1.0)
    with pytest.raises(ValueError, match="model_value must be a finite number"):
        Record("x", "chronos", "m", "u", 1.0, float("nan"))
    with pytest.raises(ValueError, match="kind must be one of"):
        Record("x", "chronos", "m", "u", 1.0, 1.0, kind="guess")
    with pytest.raises(ValueError, match="a bound needs"):
        Record("x", "chronos", "m", "u", 1.0, 1.0, kind="bound")
    with pytest.raises(ValueError, match="a bound needs"):
        Record("x", "chronos", "m", "u", 1.0, 1.0, bound="<=")
    assert Record("x", "chronos", "m", "u", 1.0, 2.0, kind="bound", bound=">=").status \
        == "holds"
    assert not Record("x", "chronos", "m", "u", 10.0, 11.0).ok
    assert Record("x", "chronos", "m", "u", 10.0, 11.0, tolerance=0.1).status == "match"
    with pytest.raises(ValueError, match="a fitted value needs fit="):
        Record("x", "chronos", "m", "u", 1.0, 1.0, kind="fitted")
    with pytest.raises(ValueError, match="fit= belongs to kind 'fitted'"):
        Record("x", "chronos", "m", "u", 1.0, 1.0, fit="to the paper")
    with pytest.raises(ValueError, match="expect must be one of"):
        Record("x", "chronos", "m", "u", 1.0, 1.0, expect="maybe")
    with pytest.raises(ValueError, match="needs its reason in why="):
        Record("x", "chronos", "m", "u", 1.0, 2.0, expect="differ")
    with pytest.raises(ValueError, match="needs its reason in why="):
        Record("x", "chronos", "m", "u", 1.0, None)
    with pytest.raises(ValueError, match="expected to match has no why"):
        Record("x", "chronos", "m", "u", 1.0, 1.0, expect="match", why="because")
    with pytest.raises(ValueError, match="simulated=True marks"):
        Record("x", "chronos", "m", "u", 1.0, 1.0, kind="definition", simulated=True)
    r = Record("x", "chronos", "m", "u", 3.37, None, why="no MFU model yet")
    assert (r.status, r.expect, r.ok, r.rel_error) == ("missing", "missing", True, None)
    assert Record.from_dict(r.to_dict()) == r


def test_engine_fmax_measured_or_extrapolated(tmp_path, monkeypatch):
    """The engine bench uses a placed-and-routed Fmax where the report has one, and otherwise
    a power law through the measured points, saying which; N that did not fit is ignored."""
    from aifabric.scripts.bench import engine as bench
    monkeypatch.setattr(bench, "BUILD", tmp_path)
    assert bench.synth_fmax(64) == (None, "")
    (tmp_path / "synth").mkdir()
    rows = [{"block": "bvn", "params": {"n": 8, "w": 16}, "fmax_mhz": 40.0},
            {"block": "bvn", "params": {"n": 16, "w": 16}, "fmax_mhz": 20.0},
            {"block": "bvn", "params": {"n": 32, "w": 16}, "fmax_mhz": None, "fits": False},
            {"block": "bvn", "params": {"n": 64, "w": 8}, "fmax_mhz": 99.0},
            {"block": "wwfa", "params": {"n": 64}, "fmax_mhz": 99.0}]
    (tmp_path / "synth" / "report.json").write_text(json.dumps({"results": rows}))
    assert bench.synth_fmax(16) == (20.0, "measured")
    fmax, how = bench.synth_fmax(64)
    assert fmax == pytest.approx(5.0)
    assert how == "extrapolated from N = 8, 16"
    (tmp_path / "synth" / "report.json").write_text(json.dumps({"results": rows[1:]}))
    assert bench.synth_fmax(64) == (None, "")


def test_engine_cycle_distribution_a_histogram_per_n(tmp_path):
    """make bench's engine run draws build/bench/bvn_engine_cycles.png from bvn_engine.json:
    a panel per N, then the quantised run's budgets at one row per load beat (four rows per
    beat left out); a record without per-matrix cycles draws nothing."""
    from aifabric.scripts.bench.engine import draw_engine_cycles, engine_cycle_panels
    out = {"params": {"n": [16, 32], "w": 16, "matrices": 3},
           "results": [{"n": 16, "cycles": [253, 255, 257]},
                       {"n": 32, "cycles": [967, 1_001, 980]}],
           "quantised": {"n": 32, "w": 10, "results": [
               {"rows": 1, "slots": 64, "cycles": [130, 130, 131]},
               {"rows": 4, "slots": 64, "cycles": [82, 82, 83]},
               {"rows": 1, "slots": 512, "cycles": [431, 555, 400]}]}}
    assert engine_cycle_panels(out) == [
        ("N = 16, W = 16", {"": [253, 255, 257]}), ("N = 32, W = 16", {"": [967, 1_001, 980]}),
        ("N = 32, W = 10, slot-quantised", {"64 slots": [130, 130, 131],
                                            "512 slots": [431, 555, 400]})]
    png = draw_engine_cycles(out, tmp_path / "bench" / "bvn_engine_cycles.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    old = {"params": out["params"], "results": [{"n": 16, "cycles_mean": 255.0}]}
    assert engine_cycle_panels(old) == []
    assert draw_engine_cycles(old, tmp_path / "none.png") is None
    assert not (tmp_path / "none.png").exists()


def test_reproduce_one_paper_merges_into_the_results(tmp_path, monkeypatch, capsys):
    """--paper reruns one package and keeps the other papers' records from --results; the
    README block is regenerated from the merged records; misuse is one line, exit 2."""
    from aifabric.scripts import reproduce
    kept = Record("x.kept", "railx", "m", "u", 1.0, 1.0)
    stale = Record("old", "chronos", "m", "u", 5.0, 5.0)
    fresh = Record("new", "chronos", "m", "u", 5.0, 9.0, why="a reason", simulated=True)

    class Fake:
        @staticmethod
        def reproduce():
            return [fresh]
    monkeypatch.setattr(reproduce, "load_system", lambda key: Fake)
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"run": "full", "counts": {},
                                   "records": [kept.to_dict(), stale.to_dict()]}))
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- reproduce:begin -->\n<!-- reproduce:end -->\nb\n")
    docs = tmp_path / "reproduction.md"
    docs.write_text(readme.read_text())
    assert reproduce.main(["--paper", "chronos", "--results", str(results), "--readme",
                           str(readme), "--docs", str(docs), "--out",
                           str(tmp_path / "out")]) == 0
    merged = reproduce.load_results(results)
    assert merged == [kept, fresh]
    data = json.loads(results.read_text())
    assert data["counts"]["chronos"]["simulated"] == 1 and data["counts"]["railx"]["match"] == 1
    assert reproduce.readme_section(readme.read_text()) == reproduce.readme_block(merged, False)
    assert reproduce.readme_section(docs.read_text()) == \
        reproduce.readme_block(merged, False, full=True)
    assert "| new |" not in readme.read_text() and "new" in docs.read_text()
    # a run that contradicts a declaration still writes its report, says so, and exits 1
    flipped = Record("new", "chronos", "m", "u", 5.0, 5.0, why="expected to differ")
    monkeypatch.setattr(Fake, "reproduce", staticmethod(lambda: [flipped]))
    assert reproduce.main(["--paper", "chronos", "--out", str(tmp_path / "o1")]) == 1
    assert "error: chronos/new: expected differ, got match" in capsys.readouterr().err
    assert "**1 records contradict their declared expectation" in \
        (tmp_path / "o1" / "report.md").read_text()
    for args, message in (
            (["--paper", "chronos", "--readme", str(readme)], "--readme with --paper needs"),
            (["--paper", "chronos", "--docs", str(docs)], "--docs with --paper needs"),
            (["--paper", "chronos", "--results", str(tmp_path / "none.json")],
             "--paper with --results: no such file"),
            (["--quick", "--results", str(results)], "--results keeps the full run's"),
            (["--paper", "nature"], "argument --paper: invalid choice")):
        proc = script("aifabric.scripts.reproduce", *args, "--out", str(tmp_path / "o2"))
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_expected_range_fails_in_either_direction():
    """A record expected to differ is still held to its own range: a value just below or just
    above it fails (the old rule let any value outside the tolerance pass), while the rule's
    status is left as it is; an ablation is judged by its range alone."""
    from aifabric.models.common.records import record
    kw = dict(why="fewer VCs than the paper", simulated=True, expected_range=(0.38, 0.42),
              setting={"vcs": 3, "buffer": 16}, choices={"vcs": "Algorithm 1's minimum"})
    inside = record("railx", "a", "m", "u", 0.8, 0.40, **kw)
    assert inside.ok and inside.status == "differs" and inside.in_range
    for value in (0.3799, 0.4201, 0.2, 0.6):
        r = record("railx", "a", "m", "u", 0.8, value, **kw)
        assert r.status == "differs" and r.in_range is False and not r.ok, value
    assert record("railx", "a", "m", "u", 0.8, 0.42, **kw).ok      # the bounds are inside
    # the paper's value inside the run's spread: the rule's status stands, the flag says so
    near = record("railx", "b", "m", "u", 1.0, 1.0104, why="spread", printed="1.00",
                  expected_range=(1.0, 1.02))
    assert near.status == "differs" and near.paper_in_range and near.ok
    assert record("railx", "b", "m", "u", 1.0, 1.05, why="r",
                  expected_range=(1.04, 1.06)).paper_in_range is False
    abl = record("railx", "c", "m", "u", 0.8, 0.92, kind="ablation", setting={"vcs": 18},
                 expected_range=(0.9, 0.94))
    assert abl.expect == "ablation" and abl.ok
    assert not record("railx", "c", "m", "u", 0.8, 0.95, kind="ablation",
                      setting={"vcs": 18}, expected_range=(0.9, 0.94)).ok
    for rec in (inside, abl, near):
        assert Record.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    assert inside.to_dict()["expected_range"] == [0.38, 0.42]


def test_setting_choices_and_range_validation():
    from aifabric.models.common.records import record
    with pytest.raises(ValueError, match="lo <= hi"):
        record("railx", "a", "m", "u", 1, 1, expected_range=(2, 1))
    with pytest.raises(ValueError, match=r"expected_range must be \(lo, hi\)"):
        record("railx", "a", "m", "u", 1, 1, expected_range=(1,))
    with pytest.raises(ValueError, match="a missing value has no expected_range"):
        record("railx", "a", "m", "u", 1, None, why="r", expected_range=(0, 1))
    with pytest.raises(ValueError, match="choice 'vcs' is not a parameter"):
        record("railx", "a", "m", "u", 1, 1, setting={"k": 2}, choices={"vcs": "ours"})
    with pytest.raises(ValueError, match="choices= names parameters of setting="):
        record("railx", "a", "m", "u", 1, 1, choices={"vcs": "ours"})
    with pytest.raises(ValueError, match="needs its reason"):
        record("railx", "a", "m", "u", 1, 1, setting={"vcs": 3}, choices={"vcs": ""})
    with pytest.raises(ValueError, match="an ablation needs its setting= and expected_range="):
        record("railx", "a", "m", "u", 1, 1, kind="ablation", setting={"vcs": 3})
    with pytest.raises(ValueError, match="judged by its expected_range alone"):
        record("railx", "a", "m", "u", 1, 1, kind="ablation", setting={"vcs": 3},
               expected_range=(0, 2), expect="match")
    with pytest.raises(ValueError, match="belongs to kind 'ablation'"):
        record("railx", "a", "m", "u", 1, 1, expect="ablation")



@pytest.mark.parametrize("paper", list(PAPERS))
def test_committed_ranges_catch_a_change_in_either_direction(paper):
    """Each paper's ranges are the table beside its package (models/<paper>/expected_ranges.json,
    saying how they were measured), and the committed full run carries exactly them: every
    committed record with a range has the table's, every table entry names a committed
    record. Its value moved just outside the table's range, below and above, fails both the
    record and the suite's check of the committed run."""
    from aifabric.models.common.records import range_table
    from aifabric.scripts.reproduce import load_results
    path = ROOT / "models" / paper / "expected_ranges.json"
    data = json.loads(path.read_text())
    assert data["how"].strip()
    assert all(str(e.get("spread", "")).strip() for e in data["records"].values()), \
        "every range says the spread it was set from"
    table = range_table(path)
    committed = {r.id: r for r in load_results() if r.paper == paper}
    assert table and set(table) <= set(committed), sorted(set(table) - set(committed))
    ranged = {i for i, r in committed.items() if r.expected_range is not None}
    assert ranged == set(table), sorted(ranged ^ set(table))
    for rid, (lo, hi) in table.items():
        r = committed[rid]
        assert r.expected_range == (lo, hi) and r.in_range, (rid, r.model_value, lo, hi)
        step = max(abs(lo), abs(hi), 1e-9) * 1e-6
        for value in (lo - step, hi + step):
            d = {**r.to_dict(), "model_value": value}
            moved = Record.from_dict(d)
            assert not moved.ok, (r.id, value)
            assert any("outside its expected range" in w
                       for w in check_records([moved.to_dict()])), (r.id, value)


def _lacking(paper: str) -> list[str]:
    from aifabric.scripts.reproduce import load_results
    return [r.id for r in load_results() if r.paper == paper
            and (r.simulated or r.kind == "ablation")
            and (r.setting is None or r.expected_range is None)]


@pytest.mark.parametrize("paper", list(PAPERS))
def test_every_simulated_record_has_its_setting_and_range(paper):
    """In the committed full run every simulated record and every ablation says where it ran
    and where its own value is expected; a ratio of two records is no simulated value."""
    lacking = _lacking(paper)
    assert not lacking, f"{paper}: no setting or expected_range: {', '.join(lacking)}"


def test_with_ranges_takes_the_committed_range_of_the_run_mode(tmp_path):
    from aifabric.models.common.records import record, with_ranges
    table = tmp_path / "ranges.json"
    table.write_text(json.dumps({"how": "test", "records": {
        "a": {"full": [1.0, 2.0], "quick": [0.5, 3.0], "spread": "x"},
        "b": {"full": [1.0, 2.0], "quick": None}}}))
    recs = [record("railx", i, "m", "u", 1, 1.5, simulated=True) for i in ("a", "b", "c")]
    full = {r.id: r.expected_range for r in with_ranges(recs, table)}
    quick = {r.id: r.expected_range for r in with_ranges(recs, table, quick=True)}
    assert full == {"a": (1.0, 2.0), "b": (1.0, 2.0), "c": None}
    assert quick == {"a": (0.5, 3.0), "b": None, "c": None}
    out = with_ranges([record("railx", "a", "m", "u", 1, 2.5, why="r")], table)[0]
    assert out.in_range is False and not out.ok          # judged, not widened to fit


_BOOKSIM_UNSTABLE = """Class 0:
Packet latency average = 64.6948
Accepted flit rate average= 0.0596906
	minimum = 0.0498667 (at node 95)
Too many sample periods needed to converge
Simulation unstable, ending ...
Total run time 10.9745
"""


def test_booksim_configuration_and_output():
    """The bench's BookSim2 peer: our mesh point in its configuration language, and the
    cycles and accepted rate read off both ways a one-period run ends."""
    from aifabric.scripts.bench.netsim import booksim_config, booksim_output
    lines = booksim_config(16, 0.21, 15000).splitlines()
    for want in ("topology = mesh;", "k = 16;", "n = 2;", "routing_function = dim_order;",
                 "num_vcs = 2;", "vc_buf_size = 16;", "packet_size = 4;",
                 "injection_rate_uses_flits = 1;", "injection_rate = 0.21;",
                 "warmup_periods = 0;", "sample_period = 15000;", "max_samples = 1;"):
        assert want in lines, want
    assert booksim_output(_BOOKSIM_UNSTABLE, 15000) == (15000, 0.0596906)
    drained = "Accepted flit rate average = 0.05\nTime taken is 144 cycles\n"
    assert booksim_output(drained, 10) == (144, 0.05)
    for bad in ("Accepted flit rate average = 0.05\n", "Time taken is 144 cycles\n"):
        with pytest.raises(ValueError):
            booksim_output(bad, 10)


def test_booksim_points_time_a_given_binary(tmp_path, monkeypatch):
    """A stand-in binary that prints BookSim2's unconverged ending: every point is run, its
    cycles are the period's, start-up is subtracted; a binary that fails is one line."""
    from aifabric.scripts.bench import netsim as bench
    monkeypatch.setattr(bench, "BUILD", tmp_path)
    fake = tmp_path / "booksim"
    fake.write_text("#!/bin/sh\ncat <<'END'\n" + _BOOKSIM_UNSTABLE + "END\n")
    fake.chmod(0o755)
    out = bench.booksim_points(fake, repeat=1)
    assert [(r["network"], r["rate"], r["cycles"], r["accepted"]) for r in out["rows"]] == \
        [("16x16 mesh", 0.06, 15000, 0.0597), ("16x16 mesh", 0.21, 15000, 0.0597)]
    assert all(r["router_cycles_per_cpu_s_best"] > 0 for r in out["rows"])
    assert "sample_period = 15000;" in (tmp_path / "bench" / "booksim" /
                                        "mesh16_0.21.cfg").read_text()
    fake.write_text("#!/bin/sh\ncat <<'END'\n" + _BOOKSIM_UNSTABLE + "END\nexit 255\n")
    assert bench.booksim_points(fake, repeat=1)["rows"][0]["cycles"] == 15000
    fake.write_text("#!/bin/sh\necho 'Error: bad config' >&2\nexit 3\n")
    with pytest.raises(SystemExit, match="exited with 3 before the end of its run: Error: bad "
                                         "config"):
        bench.booksim_points(fake, repeat=1)
    assert "skipped" in bench.booksim_points(None)


def test_speed_target_runs_are_summarised_by_median_range_and_pair_ratio():
    """Three runs of a point beside three of the baseline: the median of ours (not the best,
    not the mean), its range, the baseline's median and the median of the per-pair ratios
    (3.0, 1.5, 1.5 -> 1.5; the ratio of the medians would be 12 / 6 = 2)."""
    from aifabric.scripts.bench.netsim import summarise_pairs
    got = summarise_pairs([12e6, 9e6, 15e6], [4e6, 6e6, 10e6])
    assert got == {"median": 12e6, "low": 9e6, "high": 15e6, "base": 6e6, "ratio": 1.5}
    # two runs: the median is their mean; no baseline (the registered router): no ratio
    assert summarise_pairs([4e6, 6e6], []) == {"median": 5e6, "low": 4e6, "high": 6e6,
                                               "base": None, "ratio": None}


def test_bench_refuses_a_booksim_that_is_not_a_binary(tmp_path):
    proc = script("aifabric", "bench", "--only", "netsim", "--booksim",
                  str(tmp_path / "nope"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: --booksim: {tmp_path / 'nope'} is not an executable file"
