"""The released fault trace: JSON loader, its error messages, the rule placing traced servers
on the simulated line, and the two placement assumptions on hand-worked cases."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aifabric.models.infinitehbd import faults, waste

ROOT = Path(__file__).resolve().parents[3]


def ev(node, t, kind, desc="GPU Lost"):
    return {"node_id": node, "event_time": t, "event_type": f"fault_{kind}",
            "fault_type": {"Level": "Hardware Failure", "Class": "GPU", "Desc": desc}}


def write(tmp_path, events, name="t.json"):
    p = tmp_path / name
    p.write_text(json.dumps(events))
    return p


def test_loader_pairs_faults_per_node_and_type(tmp_path):
    # A: GPU fault 0.5..1.5 d and an overlapping fan fault 1.25..2 d; B: a NIC fault from
    # 1 d never closed (runs to the end, 3 days)
    p = write(tmp_path, [ev("A", 0.5, "start"), ev("B", 1.0, "start", "NIC Lost"),
                         ev("A", 1.25, "start", "Fan"), ev("A", 1.5, "end"),
                         ev("A", 2.0, "end", "Fan")])
    t = faults.read_trace_json(p, servers=4, days=3)
    assert (t.nodes, t.R, t.hours, t.ids) == (4, 8, 72.0, ("A", "B"))
    assert t.events == ((0, 12.0, 36.0), (1, 24.0, 72.0), (0, 30.0, 48.0))
    s = t.states()
    assert s[12:48, 0].all() and not s[11, 0] and not s[48, 0]    # the union of A's faults
    assert s[24:, 1].all() and not s[:, 2:].any()
    # without days the trace ends at its last event, rounded up to the hour
    assert faults.read_trace_json(p, servers=4).hours == 48.0


@pytest.mark.parametrize("events,message", [
    ([ev("A", 1, "start"), {"node_id": "A", "event_time": 2}], "event 1: missing field "
     "event_type, fault_type"),
    ([ev("A", 1, "start"), ev("A", 2, "stop")], "event 1: event_type must be fault_start "
     "or fault_end"),
    ([ev("A", 2, "start"), ev("B", 1, "start")], "event 1: event_time 1 is before"),
    ([ev("A", 1, "start"), ev("A", 2, "end", "Fan")], "event 1: fault_end of node A with no "
     "open fault of type 'Fan'"),
    ([ev("A", 1, "start"), ev("A", 2, "start")], "event 1: node A starts a fault of type "
     "'GPU Lost' that is already open"),
    ([ev("A", 1, "start"), ev("B", 1, "start"), ev("C", 1, "start")], "event 2: node C is "
     "server 3, more than the trace's 2"),
    ([ev("A", -1, "start")], "event 0: event_time must be a number of days >= 0"),
    ([ev("A", 1, "start"), "x"], "event 1: expected an object"),
])
def test_errors_name_file_and_event(tmp_path, events, message):
    p = write(tmp_path, events)
    with pytest.raises(ValueError) as e:
        faults.read_trace_json(p, servers=2)
    assert str(e.value).startswith(f"{p}: ") and message in str(e.value)


def test_cli_bad_json_one_line_exit_2(tmp_path):
    p = write(tmp_path, [ev("A", 1, "start"), ev("A", 0.5, "end")], "bad.json")
    r = subprocess.run([sys.executable, "-m", "aifabric.scripts.infinitehbd", "waste", "--tp", "32",
                        "--trace", str(p)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"error: {p}: event 1: event_time 0.5 is before")


def test_released_trace_matches_its_readme():
    # upstream README: 400 servers, faults on 231 of them, 348 days from the first event
    t = faults.production_trace()
    assert (t.nodes, len(t.ids), t.R) == (400, 231, 8)
    assert 348 <= t.hours / 24 <= 349
    raw = json.loads(faults.TRACE_PATH.read_text())
    assert len(raw) == 1168
    # 584 start/end pairs, 14 of them with the end at the start's time (dropped)
    assert sum(e["event_type"] == "fault_start" for e in raw) == 584
    assert len(t.events) == 570 and all(s < e for _, s, e in t.events)


def trace3():
    # servers 0 and 1 fault (0 first, at 5 h; 1 at 2 h), server 2 never
    return faults.Trace(3, 20.0, 8, ((1, 2.0, 4.0), (0, 5.0, 10.0)), ("a", "b"))


def test_tiling_clustered_by_hand():
    # clustered: order by first fault (1, 0, then the never-faulty 2); 7 positions = two
    # copies and the first server of a third: 1 0 2 1 0 2 1, all replaying at the same times
    t = faults.tile_trace(trace3(), 7, spatial="clustered")
    assert t.nodes == 7 and t.hours == 20.0
    assert sorted(t.events) == [(0, 2.0, 4.0), (1, 5.0, 10.0), (3, 2.0, 4.0), (4, 5.0, 10.0),
                                (6, 2.0, 4.0)]


def test_tiling_independent_is_a_permutation_per_copy():
    t = faults.tile_trace(trace3(), 6, spatial="independent", seed=3)
    for copy in (range(0, 3), range(3, 6)):
        hit = sorted(s for n, s, _ in t.events if n in copy)
        assert hit == [2.0, 5.0]                     # each server once per copy
    assert t == faults.tile_trace(trace3(), 6, spatial="independent", seed=3)


def test_halves_split_or_adjacent_by_hand():
    t8 = faults.Trace(3, 10.0, 8, ((1, 2.0, 5.0),))
    split = faults.convert_8_to_4(t8, halves="split", q=1.0)
    adjacent = faults.convert_8_to_4(t8, halves="adjacent", q=1.0)
    assert sorted(split.events) == [(1, 2.0, 5.0), (4, 2.0, 5.0)]      # n, n + 3
    assert sorted(adjacent.events) == [(2, 2.0, 5.0), (3, 2.0, 5.0)]   # 2n, 2n + 1
    assert faults.convert_8_to_4(t8, q=0.0).events == ()


def waste_of(t4, arch, tp):
    return float(waste.waste(arch, t4.states()[:1], tp, 4)[0])


def test_halves_knob_moves_k2_the_expected_way():
    # 8 positions -> 16 4-GPU nodes (a ring), 8-GPU nodes 1 and 5 faulty, both halves.
    # split: faulty 1, 9, 5, 13, all bypassed by K = 2: 12 healthy in one ring, 3 TP-16 rings.
    # adjacent: faulty {2, 3} and {10, 11}, two runs K = 2 cannot bypass: segments of 6 and
    # 6 nodes, one TP-16 ring each. K = 3 bypasses both.
    t8 = faults.Trace(8, 1.0, 8, ((1, 0.0, 1.0), (5, 0.0, 1.0)))
    split = faults.convert_8_to_4(t8, halves="split", q=1.0)
    adjacent = faults.convert_8_to_4(t8, halves="adjacent", q=1.0)
    assert waste_of(split, "infinitehbd-k2", 16) == 0.0
    assert waste_of(adjacent, "infinitehbd-k2", 16) == pytest.approx(16 / 64)
    assert waste_of(adjacent, "infinitehbd-k3", 16) == 0.0


def test_spatial_knob_moves_k2_the_expected_way():
    # 6 servers, 0 and 1 fault together. clustered puts them side by side: 4-GPU faulty
    # {0, 1} and {6, 7} of 12 (split halves), two cuts, segments of 4 + 4 nodes: no TP-32
    # ring (8 nodes) fits, all 32 healthy GPUs wasted. Apart (random neighbours, most
    # placements), the 8 healthy nodes form one ring: no waste.
    t8 = faults.Trace(6, 1.0, 8, ((0, 0.0, 1.0), (1, 0.0, 1.0)))
    clustered = faults.place_on_line(t8, 6, spatial="clustered", q=1.0)[1]
    assert waste_of(clustered, "infinitehbd-k2", 32) == pytest.approx(32 / 48)
    rand = [waste_of(faults.place_on_line(t8, 6, spatial="independent", seed=s, q=1.0)[1],
                     "infinitehbd-k2", 32) for s in range(12)]
    assert np.mean(rand) < 32 / 48 and min(rand) == 0.0


@pytest.mark.parametrize("kw,message", [
    (dict(halves="mixed"), "halves must be one of split, adjacent"),
    (dict(spatial="near"), "spatial must be one of independent, clustered"),
    (dict(positions=0), "positions must be an int >= 1"),
])
def test_placement_bad_input(kw, message):
    with pytest.raises(ValueError, match=message):
        faults.place_on_line(trace3(), **kw)


def test_fixed_repair_uses_the_mean_duration():
    # faults of 2 h and 6 h: each becomes 4 h from its start, cut at the trace's end (9 h)
    t = faults.Trace(2, 9.0, 8, ((0, 1.0, 3.0), (1, 7.0, 13.0 - 4.0)))
    assert faults.fixed_repair(faults.Trace(2, 9.0, 8, ((0, 1.0, 3.0), (1, 2.0, 8.0)))).events \
        == ((0, 1.0, 5.0), (1, 2.0, 6.0))
    assert faults.fixed_repair(t, 4.0).events == ((0, 1.0, 5.0), (1, 7.0, 9.0))


def test_cli_trace_statistics_of_a_json_trace(tmp_path):
    # two servers of four: A faulty 1 d of 2, B never -> mean ratio 1/8 of the time
    p = write(tmp_path, [ev("A", 0.0, "start"), ev("A", 1.0, "end"),
                         ev("B", 2.0, "start", "Fan"), ev("B", 2.0, "end", "Fan")])
    r = subprocess.run([sys.executable, "-m", "aifabric.scripts.infinitehbd", "trace", "--trace", str(p),
                        "--servers", "4"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "| 4 | 2 | 1 | 2.0 | 12.50 % |" in r.stdout and "| 24.0 h |" in r.stdout
