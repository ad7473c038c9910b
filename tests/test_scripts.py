"""The entry scripts as users run them: bad input gives one line and exit 2, nothing half
written; the reproduction report has the agreed shape."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from models.common.records import PAPERS, Record

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
    proc = script("scripts.generate_verilog", "--block", "wwfa", "--param", f"n={value}",
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
    proc = script("scripts.reproduce", "--quick", "--out", str(tmp_path / "out"), "--readme",
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
    for name in ("scripts.generate_verilog", "scripts.run_cosim", "scripts.synth"):
        proc = script(name, *args, *(["--out", str(tmp_path)] if "verilog" in name else []))
        assert proc.returncode == 2, (name, proc.stderr)
        assert proc.stderr.startswith(message), (name, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_generate_one_parameter_set(tmp_path):
    proc = script("scripts.generate_verilog", "--block", "wwfa", "--param", "n=3",
                  "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    # no staging left behind; the FuseSoC core beside the Verilog
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wwfa_n3.core", "wwfa_n3.v"]
    assert "module wwfa_n3(" in (tmp_path / "wwfa_n3.v").read_text()


def test_one_parameter_changed_from_the_defaults(tmp_path):
    """--param changes the named values of the block's first default set."""
    proc = script("scripts.generate_verilog", "--block", "router", "--param", "depth=4",
                  "--out", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: router: Parameter 'depth' must hold a whole packet "
                                   "under virtual cut-through: depth 4 < packet 8")
    proc = script("scripts.generate_verilog", "--block", "router", "--param", "depth=8",
                  "--param", "vcs=3", "--no-lint", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "router_allocatorseparable_data64_depth8_dst_width11_packet8_ports5_vcs3.core",
        "router_allocatorseparable_data64_depth8_dst_width11_packet8_ports5_vcs3.v"]


# Numbers as the papers print them (typed from the papers, not computed by the models): a
# record whose paper value drifts from these fails.
PRINTED = {
    "fig14a.hyperx.throughput": 0.8,         # "RailX achieves 0.8 flits/cycle/chip"
    "fig14a.hyperx.max": 1.0,                # "theoretical maximum throughput of 1"
    "sec4.1.hyperx_m3.internal_hops": 9,     # 5m - 6 at m = 3
    "sec4.1.hyperx_m4.internal_hops": 14,
    "eq1.R128_m5.chips": 102_400,
    "table6.railx7mesh.cost": 1314.4,
    "table6.3d-torus_w_ocs.cost": 185.7,
    "fig17b.availability_at_0.1pct": 0.9,
    "sec6.200m.slot": 22,
    "sec6.mems.min_bytes": 150,
    "sec8.1.improvement.mean": 22.04,
    "sec8.1.packet.mean": 13,
}


def test_reproduce_report_from_the_real_packages(tmp_path):
    """Every record of the real packages (CI-sized runs): a value or definition without a
    reason matches within its tolerance, one with a reason differs (a stale reason fails too),
    every bound holds; the report and the README block are generated from the records."""
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- reproduce:begin -->\nSTALE\n<!-- reproduce:end -->\nrest\n")
    proc = script("scripts.reproduce", "--quick", "--out", str(tmp_path), "--readme",
                  str(readme))
    assert proc.returncode == 0, proc.stderr
    records = json.loads((tmp_path / "report.json").read_text())
    by_id = {(r["paper"], r["id"]): r for r in records}
    assert len(by_id) == len(records), "duplicate record ids"
    wrong = []
    for r in records:
        expect = ("holds",) if r["bound"] else ("differs",) if r["why"] else ("match",)
        if r["status"] not in expect:
            wrong.append(f"{r['paper']}/{r['id']}: {r['kind']} {r['status']} (paper "
                         f"{r['paper_value']}, model {r['model_value']}, why {r['why']!r})")
    assert not wrong, "\n".join(wrong)
    for rid, printed in PRINTED.items():
        found = [r for r in records if r["id"] == rid]
        assert len(found) == 1 and found[0]["paper_value"] == printed, (rid, found)
    kinds = {r["id"]: r["kind"] for r in records}
    assert kinds["eq1.R128_m5.chips"] == "definition" and kinds["table6.railx7mesh.scale"] \
        == "definition" and kinds["sec4.1.hyperx_m3.internal_hops"] == "bound"
    assert kinds["table6.railx7mesh.cost"] == "value"
    chronos = {r["id"] for r in records if r["paper"] == "chronos"}
    assert {"sec6.llama3.min_b_over_c", "sec6.200m.slot", "sec6.mems.min_bytes",
            "sec8.1.improvement.mean", "sec8.1.improvement.max", "sec8.bhavan.64port_us",
            "sec8.1.tuned.improvement.mean", "sec8.1.tuned.packet.mean"} <= chronos
    assert kinds["sec8.bhavan.64port_us"] == "bound"
    for name in ("fig6_moe_completion.png", "bvn_breakeven.png", "bvn_quantisation.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    md = (tmp_path / "report.md").read_text()
    # the Chronos tables: quantisation sweep (3 N x 4 budgets) and the tuned DCQCN
    quant = md[md.index("### Slot-quantised BvN"):]
    assert sum(line.startswith("| 64 | ") for line in quant.splitlines()[:20]) == 4
    assert "### §8.1 with DCQCN tuned" in md and "| k_min |" in md
    for title in PAPERS.values():
        assert f"## {title}" in md
    values = [r for r in records if r["kind"] == "value"]
    matched = sum(r["status"] == "match" for r in values)
    assert f"{matched} of {len(values)} independently reproduced values match" in md
    systems_without = len(PAPERS) - len({r["paper"] for r in records})
    assert md.count("no records yet") == systems_without
    text = readme.read_text()
    assert text.startswith("intro\n<!-- reproduce:begin -->") and text.endswith(
        "<!-- reproduce:end -->\nrest\n") and "STALE" not in text
    assert f"{matched} of {len(values)}" in text and "table6.3d-torus_w_ocs.cost" in text


def test_report_separates_values_bounds_and_definitions(tmp_path):
    from scripts.reproduce import collect, render

    class Fake:
        @staticmethod
        def reproduce():
            return [Record("a", "chronos", "m1", "us", 100.0, 101.0),
                    Record("b", "chronos", "m2", "us", 10.0, 15.0, why="a reason"),
                    Record("c", "chronos", "m3", "us", 0.0, 0.0),
                    Record("d", "chronos", "m4", "hops", 9.0, 8.0, kind="bound", bound="<="),
                    Record("e", "chronos", "m5", "chips", 4096.0, 4096.0, kind="definition")]

        @staticmethod
        def tables(quick=False):
            return [f"### sweep (quick={quick})\n\n| x |\n|---|\n| 1 |\n"]

    records, figures, status, tables = collect({"chronos": Fake, "railx": None}, tmp_path,
                                               quick=True)
    assert tables == {"chronos": ["### sweep (quick=True)\n\n| x |\n|---|\n| 1 |\n"]}
    assert status == {"chronos": "5 records", "railx": "no records yet (no models/railx package)"}
    assert [r.status for r in records] == ["match", "differs", "match", "holds", "match"]
    d = records[3].to_dict()
    assert d["rel_error"] is None and d["margin"] == 1.0 and d["status"] == "holds"
    md = render(records, figures, status, tables)
    # a package's tables follow its records, inside its paper's section
    assert md.index("## Chronos") < md.index("| e |") < md.index("### sweep (quick=True)")
    assert "2 of 3 independently reproduced values match" in md
    assert "1 of 1 bounds hold" in md and "1 definitions" in md
    values, bounds = md.index("Values (model"), md.index("Bounds")
    defs = md.index("Definitions")
    assert values < md.index("| b |") < md.index("| a |") < md.index("| c |") < bounds
    assert bounds < md.index("| d |") < defs < md.index("| e |")
    assert "50.00%" in md and "<= 9" in md


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


def test_engine_fmax_measured_or_extrapolated(tmp_path, monkeypatch):
    """The engine bench uses a placed-and-routed Fmax where the report has one, and otherwise
    a power law through the measured points, saying which; N that did not fit is ignored."""
    from scripts import bench
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
