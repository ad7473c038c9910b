"""Fault traces (generator statistics, CSV import, conversion), Table 7's bound, Table 6."""

import numpy as np
import pytest

from aifabric.models.infinitehbd import bound, cost, faults


def test_conversion_formulas():
    c = faults.conversion(0.0266)
    assert 1 - (1 - c["p_gpu"]) ** 8 == pytest.approx(0.0266)
    assert c["p4"] == pytest.approx(1 - (1 - c["p_gpu"]) ** 4)
    assert c["p4_given_8"] == pytest.approx(c["p4"] / 0.0266)


def test_generator_meets_its_statistics():
    t = faults.generate_trace(600, 120, mean=0.03, p99=0.08, seed=5)
    r = t.ratio()
    assert r.mean() == pytest.approx(0.03, rel=0.1)
    assert np.quantile(r, 0.99) == pytest.approx(0.08, rel=0.1)
    assert all(0 <= n < 600 and 0 <= s < e <= t.hours for n, s, e in t.events)


def test_conversion_of_a_trace_keeps_halves_apart():
    t8 = faults.Trace(3, 10.0, 8, ((1, 2.0, 5.0),))
    t4 = faults.convert_8_to_4(t8, seed=0)
    assert t4.nodes == 6 and t4.R == 4
    assert {n for n, *_ in t4.events} <= {1, 4}              # halves n and n + 3
    assert all((s, e) == (2.0, 5.0) for _, s, e in t4.events)


def test_csv_import(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("# a trace\nnode,start_h,end_h\n3,1.5,4\n0,0,2\n")
    t = faults.read_trace_csv(p, nodes=4, hours=10, R=4)
    assert t.events == ((3, 1.5, 4.0), (0, 0.0, 2.0))
    s = t.states()
    assert s[1, 0] and not s[2, 0] and s[2, 3] and not s[4, 3]


@pytest.mark.parametrize("text,message", [
    ("n,s,e\n", "header node,start_h,end_h"),
    ("node,start_h,end_h\n1,2\n", ":2: expected 3 columns"),
    ("node,start_h,end_h\nx,1,2\n", ":2: node must be an integer"),
    ("node,start_h,end_h\n9,1,2\n", ":2: node 9 is outside"),
    ("node,start_h,end_h\n1,3,2\n", ":2: need 0 <= start_h < end_h"),
    ("node,start_h,end_h\n1,1,2\n2,50,60\n", ":3: start_h 50.0 is past"),
])
def test_csv_errors_name_the_row(tmp_path, text, message):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(ValueError, match=message):
        faults.read_trace_csv(p, nodes=4, hours=10, R=4)


def test_bound_formula_and_monte_carlo():
    p = 0.01
    ps = 1 - 0.99 ** 4
    assert bound.waste_bound(4, 2, 32, p) == pytest.approx(2 * 28 * ps ** 2)
    m = bound.monte_carlo_waste(4, 2, 32, 0.05, gpus=4096, samples=200, seed=1)
    assert 0 < m["mean"] <= m["bound"]
    # App. C charges a breakpoint R (N_t - R) GPUs; at most N_t - R are lost: the corrected
    # bound is a factor R lower, and the simulation stays under it
    assert bound.corrected_bound(4, 2, 32, p) == pytest.approx(2 * 28 * ps ** 2 / 4)
    assert m["mean"] <= m["corrected"] == pytest.approx(m["bound"] / 4)
    m3 = bound.monte_carlo_waste(4, 3, 32, 0.05, gpus=4096, samples=200, seed=1)
    assert m3["mean"] < m["mean"]                      # more backups, fewer breakpoints


def test_table6_from_parts_by_hand():
    # TPUv4: (48 x 80,000 + 5,120 x 63.6 + 6,144 x 360 + 6,144 x 6.8) / 4,096
    t = cost.table6()
    assert t["tpuv4"]["cost"] == pytest.approx((48 * 80000 + 5120 * 63.6 + 6144 * 360
                                                + 6144 * 6.8) / 4096)
    assert t["infinitehbd-k2"]["cost_per_gbps"] == pytest.approx((4 * 199.6 + 16 * 600
                                                                  + 16 * 6.8) / 4 / 800)
    assert cost.aggregate_cost("nvl-72", 72, 8, 0, 1000.0) == pytest.approx(
        8000 + t["nvl-72"]["cost"] * 72)
    with pytest.raises(ValueError, match="unknown system"):
        cost.aggregate_cost("nvl-1", 1, 0, 0, 1.0)
