"""The WSS and de-interleaver models: conflicts found in the documented order, the
controllers' timelines worked by hand, Fig 4's cascade traced by hand, and the allocation's
configurations and splits put through them."""

import pytest

from models.flexsipac import allocation, fabrics, traffic
from models.flexsipac.topology import SiPAC
from models.flexsipac.transceiver import (Deinterleaver, DIXCommand, counts, realisable,
                                          setting_for, split_report, trace)
from models.flexsipac.wss import (WSS, WSSCommand, check_assignment_configs, first_conflict,
                                  load_commands)

N = None


def test_first_conflict_in_scan_order():
    ok = [[1, 2, 0], [2, 0, 1]]                     # two wavelengths, 3 ports
    assert first_conflict(ok, 3, [3, 3, 3]) is None
    assert first_conflict([[1, 2, 0], [1, N, 1]], 3, [3] * 3) == ("DUPLICATE", 1, 1)
    assert first_conflict([[0, 2, N], [2, 2, N]], 3, [3] * 3) == ("SELF", 0, 0)
    # output 2 receives at wavelength 0 and again at 1: over a budget of 1 at wavelength 1
    assert first_conflict([[2, N, N], [2, N, N]], 3, [3, 3, 1]) == ("BUDGET", 2, 1)
    # lowest output first; SELF before DUPLICATE at the same output
    assert first_conflict([[N, 1, 1]], 3, [3] * 3) == ("SELF", 1, 0)


def run(model, cmds, cycles):
    out, queue = [], list(cmds)
    for _ in range(cycles):
        out.append(model.outputs())
        if model.edge(queue[0] if queue else None) is not None:
            queue.pop(0)
    return out


def test_wss_commit_timeline_by_hand():
    m = WSS(ports=3, wavelengths=2, timer_bits=4, settle=3)
    cmds = [WSSCommand.load(0, [1, 2, 0]), WSSCommand.load(1, [2, 0, 1]), WSSCommand.commit()]
    tr = run(m, cmds, 17)
    # loads at 0, 1; commit at 2: SCAN 3..7 (w + 3 cycles: wavelength 0 checked at 6, 1 at
    # 7); APPLY 8..11 (w + 2: wavelength 0 driven from 11, 1 from 12); SETTLE 12, 13, 14;
    # idle and counted at 15
    assert [o["state"] for o in tr[:16]] == [0, 0, 0] + [1] * 5 + [2] * 4 + [3] * 3 + [0]
    assert tr[10]["drive"] == [[N] * 3] * 2
    assert tr[11]["drive"] == [[1, 2, 0], [N] * 3]
    assert tr[12]["drive"] == [[1, 2, 0], [2, 0, 1]]
    assert tr[14]["configs"] == 0 and tr[15]["configs"] == 1


def test_wss_conflict_applies_nothing():
    m = WSS(ports=3, wavelengths=3, timer_bits=4, settle=1)
    cmds = [WSSCommand.load(2, [1, N, 1]), WSSCommand.commit()]
    tr = run(m, cmds, 10)
    # commit at 1; scan from 2: wavelength 2 is checked at 2 + 3 + 2 = 7 (the duplicate), idle
    # at 8
    assert [o["state"] for o in tr[:9]] == [0, 0] + [1] * 6 + [0]
    assert tr[8]["error"] == 1 << 3 and (tr[8]["err_port"], tr[8]["err_lambda"]) == (1, 2)
    assert all(o["drive"] == [[N] * 3] * 3 for o in tr)


@pytest.mark.parametrize("cmd,err", [
    (WSSCommand.load(3, [N, N, N]), "RANGE"), (WSSCommand.load(0, [3, N, N]), "RANGE"),
    (WSSCommand.budget(3, 1), "RANGE"), (WSSCommand.budget(0, 4), "RANGE"),
    (WSSCommand.settle(0), "TIMING"), (WSSCommand(6), "OPCODE")])
def test_wss_malformed(cmd, err):
    m = WSS(ports=3, wavelengths=3, timer_bits=4, settle=1)
    assert m.edge(cmd) == err


@pytest.mark.parametrize("kw", [{"ports": 1}, {"wavelengths": 0}, {"settle": 0},
                                {"ports": 40}])
def test_wss_bad_parameters(kw):
    with pytest.raises(ValueError):
        WSS(**kw)


def test_allocation_configurations_pass_the_controller():
    topo = SiPAC(4, 2)
    lam = allocation.heuristic(topo, traffic.traffic_matrix(topo, [8, 8], "sipco"), 8)
    assign = allocation.assign_wavelengths(topo, lam, 8)
    assert check_assignment_configs(assign, 4, 8) == topo.M
    key = next(iter(assign["wss"]))
    m = WSS(ports=4, wavelengths=8, timer_bits=4, settle=2)
    run(m, load_commands(assign["wss"][key], 4, 8), 40)
    assert m.configs == 1
    for (i, lm), o in assign["wss"][key].items():
        assert m.active[lm][i] == o
    # a configuration with a wavelength twice on one output is named
    cfg = dict(assign["wss"][key])
    (i, lm), o = next(iter(cfg.items()))
    other = next(x for x in range(4) if x not in (i, o))
    cfg[(other, lm)] = o              # a second input drops wavelength lm at output o
    with pytest.raises(ValueError, match=f"DUPLICATE at output {o}, wavelength {lm}"):
        check_assignment_configs({"wss": {key: cfg}}, 4, 8)


def test_cascade_traced_by_hand():
    # unit 0 EVEN: even indices drop at port 0; unit 1 EVEN: of the odd ones, bit 1 clear
    # (1, 5) drop at port 1, (3, 7) reach port 2
    assert trace((2, 2), 8) == [0, 1, 0, 2, 0, 1, 0, 2]
    assert counts((1, 2), 8) == (0, 4, 4) and counts((0, 2), 8) == (8, 0, 0)
    assert sorted(realisable(3, 60)) == [(0, 0, 60), (0, 30, 30), (0, 60, 0), (30, 0, 30),
                                         (30, 15, 15), (30, 30, 0), (60, 0, 0)]
    # odd comb: the halves are uneven
    assert counts((2,), 13) == (7, 6)
    assert setting_for((0, 0, 60), 60) == (1, 1) and setting_for((20, 20, 20), 60) is None
    assert setting_for((0, 0, 0), 60) is None


def test_deinterleaver_timeline_and_errors():
    m = Deinterleaver(ports=3, wavelengths=8, timer_bits=4, settle=2)
    tr = run(m, [DIXCommand(1, split=(4, 2, 2)), DIXCommand(1, split=(3, 3, 2))], 6)
    assert tr[0]["split"] == [0, 0, 8] and tr[1]["modes"] == [2, 2]
    assert [o["state"] for o in tr[:5]] == [0, 1, 1, 0, 0]
    assert tr[3]["configs"] == 1 and tr[4]["error"] == 0b10       # (3, 3, 2): SPLIT
    assert tr[1]["mzi"] == [1, 0, 1, 0]
    with pytest.raises(ValueError, match="ports"):
        Deinterleaver(ports=5)


def test_allocation_splits_against_the_cascade():
    topo = SiPAC(4, 3)
    even = split_report(topo, fabrics.static_allocation(topo, 60), 60)
    assert even["served"] == 0          # (20, 20, 20) per CU: no cascade split covers it
    four = allocation.heuristic(topo, traffic.traffic_matrix(topo, [16] * 4, "sipco"), 60)
    assert split_report(topo, four, 60)["share"] == 1.0     # (30, 30, 0): one even split
