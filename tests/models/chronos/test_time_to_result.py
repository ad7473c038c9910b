"""The BvN engine's time to result: cycles x the period measured in the ASIC flow, in FO4 at
the 16 nm FO4 assumed, and the §8 records built from it."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from aifabric.models.chronos import experiments, setting

RANGES = Path(setting.__file__).with_name("expected_ranges.json")
IDS = ("sec8.bhavan.time_to_result.mean", "sec8.bhavan.time_to_result.worst")


def test_period_is_the_measured_fo4_at_the_assumed_fo4(monkeypatch):
    monkeypatch.setattr(setting, "ENGINE_PERIOD_FO4", {16: 100.0, 64: 250.0})
    monkeypatch.setattr(setting, "FO4_PS", 10.0)
    assert setting.engine_period_s(16) == pytest.approx(1.0e-9)
    assert setting.engine_period_s(12) == pytest.approx(1.0e-9)      # a larger size's bound
    assert setting.engine_period_s(17) == pytest.approx(2.5e-9)
    assert setting.engine_period_s(64, fo4_ps=16.0) == pytest.approx(4.0e-9)
    # one matrix given alone (§8.1): 16 load beats, the copy, 100 permutations and the final
    # step taken = 15 + 102 = 117 cycles of 1 ns from its first beat; per matrix in a stream
    # the copy + 100 permutations + the final step = 102, the load hidden behind the run
    assert setting.engine_seconds(16, 100) == pytest.approx(117e-9)
    assert setting.engine_latency(16, 100) == 117 and setting.engine_cycles(16, 100) == 102
    assert setting.engine_latency(16, 100, rows=4) == 105
    # a run shorter than the next frame's load: the 16 beats, or 4 of 4 rows each
    assert setting.engine_cycles(16, 10) == 16 and setting.engine_cycles(16, 10, rows=4) == 12
    assert setting.engine_cycles(16, 0) == 16 and setting.engine_cycles(16, 0, rows=16) == 2
    assert setting.engine_period_fo4(64) == (250.0, True)
    # above the largest measured size: the line through the two largest, marked estimated
    assert setting.engine_period_fo4(112) == (pytest.approx(400.0), False)
    with pytest.raises(ValueError, match="n must be at least 1, not 0"):
        setting.engine_period_s(0)


def test_records_from_cycles_and_period(monkeypatch):
    """Mean 500 and worst 600 cycles at 150 FO4 x 12 ps (1.8 ns): 0.9 us holds the paper's
    < 1 us, 1.08 us does not, and says by how much (1 us / 600 cycles = 138.9 FO4)."""
    monkeypatch.setattr(setting, "ENGINE_PERIOD_FO4", {32: 100.0, 64: 150.0})
    monkeypatch.setattr(setting, "ENGINE_PERIOD_EARLIER", {})
    res = {64: {setting.ENGINE_BUDGET: {"cycles": np.array([400, 500, 600]),
                                        "exact_overhead": np.array([0.05, 0.05, 0.05])}}}
    mean, worst = experiments.quantization_records(res)
    assert (mean.id, worst.id) == IDS
    assert mean.model_value == pytest.approx(0.9) and mean.status == "holds" and not mean.why
    assert worst.model_value == pytest.approx(1.08) and worst.status == "violated"
    assert "1.08x the 138.9 FO4" in worst.why
    assert "0.75-1.20 us at 10-16 ps" in mean.note
    assert mean.setting["period_fo4"] == pytest.approx(150.0) and mean.unit == "us"
    assert mean.setting["period_measured"] and "estimated" not in mean.note
    assert "150.0 FO4 (measured)" in mean.note
    # the library's part: ASAP7's FO4 count at N = 64 moves the result, and the note says so
    monkeypatch.setattr(setting, "ENGINE_PERIOD_FO4_ASAP7", {64: 225.0})
    mean, worst = experiments.quantization_records(res)
    assert "ASAP7 instead, 225.0 FO4 of that library: 1.35 us at 12 ps" in mean.note
    assert "ASAP7 instead, 225.0 FO4 of that library: 1.62 us at 12 ps" in worst.note
    assert "225.0 FO4 of that library, 1.50x" in mean.choices["library"]
    assert mean.model_value == pytest.approx(0.9)              # the record stays SG13G2's
    monkeypatch.setattr(setting, "ENGINE_PERIOD_FO4_ASAP7", {})
    mean, _ = experiments.quantization_records(res)
    assert "ASAP7 instead" not in mean.note and "not mapped onto ASAP7" in \
        mean.choices["library"]
    # measured on an earlier form of the engine: the note and the choice say which
    monkeypatch.setattr(setting, "ENGINE_PERIOD_EARLIER", {64: "the engine before X"})
    mean, _ = experiments.quantization_records(res)
    assert "150.0 FO4 (measured on the engine before X)" in mean.note
    assert "N = 64 netlist of the engine before X" in mean.choices["period_fo4"]
    # the N = 64 period not measured: the line through N = 16 and 32, said in the record
    monkeypatch.setattr(setting, "ENGINE_PERIOD_FO4", {16: 90.0, 32: 120.0})
    mean, worst = experiments.quantization_records(res)
    assert mean.setting["period_fo4"] == pytest.approx(180.0)
    assert mean.model_value == pytest.approx(500 * 180 * 12e-6)
    assert not mean.setting["period_measured"] and "estimated" in mean.note
    assert "period_fo4" in mean.choices and "N = 16 and 32" in mean.choices["period_fo4"]


@pytest.mark.parametrize("quick", [False, True])
def test_committed_ranges_fail_in_both_directions(quick):
    """Each time-to-result record has a range in each run mode, narrow enough that a value
    10 % off its middle either way falls outside it (and so fails the record)."""
    from aifabric.models.common.records import range_table
    table = range_table(RANGES, quick)
    for rid in IDS:
        lo, hi = table[rid]
        mid = (lo + hi) / 2
        assert lo < mid < hi and hi / lo < 1.15, (rid, lo, hi)
        rec = experiments._rec(rid, "m", "us", 1.0, mid, kind="bound", bound="<=",
                               why="w" if mid > 1 else "", expected_range=(lo, hi))
        assert rec.ok and rec.in_range
        for value in (mid * 0.9, mid * 1.1):
            assert replace(rec, model_value=value).in_range is False, (rid, value)
    assert json.loads(RANGES.read_text())["records"][IDS[0]]["spread"]
