"""The WSS and de-interleaver models: conflicts found in the documented order, the WSS
controller's commands and the de-interleaver's timeline worked by hand, Fig 4's cascade
traced by hand, and the allocation's configurations and splits put through them."""

import pytest

from aifabric.models.flexsipac import allocation, fabrics, traffic
from aifabric.models.flexsipac.topology import SiPAC
from aifabric.models.flexsipac.transceiver import (Deinterleaver, DIXCommand, counts, realisable,
                                          setting_for, split_report, trace)
from aifabric.models.flexsipac.wss import (WSS, WSSCommand, check_assignment_configs, first_conflict,
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
    """A cycle-level model (the de-interleaver's) stepped with a command queue."""
    out, queue = [], list(cmds)
    for _ in range(cycles):
        out.append(model.outputs())
        if model.edge(queue[0] if queue else None) is not None:
            queue.pop(0)
    return out


def commands(model, cmds):
    """The WSS model, one command at a time: the results."""
    return [model.command(c) for c in cmds]


def test_wss_commit_applies_the_loaded_table():
    m = WSS(ports=3, wavelengths=2, timer_bits=4, settle=3)
    assert commands(m, [WSSCommand.load(0, [1, 2, 0]), WSSCommand.load(1, [2, 0, 1])]) == ["ok"] * 2
    assert m.active == [[N] * 3] * 2 and m.configs == 0       # loading drives nothing
    assert m.command(WSSCommand.commit()) == "ok"
    assert m.active == [[1, 2, 0], [2, 0, 1]] and m.configs == 1 and m.errors == 0
    # the documented timeline (commit taken in cycle 2: ready again in cycle 15 = 2 + 2w +
    # 6 + S with w = 2, S = 3)
    assert m.commit_cycles() == 13 and m.commit_cycles(settle=1) == 11
    # a partial reload changes one column; the other keeps its cells
    commands(m, [WSSCommand.load(1, [N, 2, N]), WSSCommand.commit()])
    assert m.active == [[1, 2, 0], [N, 2, N]] and m.configs == 2


def test_wss_conflict_applies_nothing():
    m = WSS(ports=3, wavelengths=3, timer_bits=4, settle=1)
    commands(m, [WSSCommand.load(0, [1, 2, 0]), WSSCommand.commit()])
    assert m.command(WSSCommand.load(2, [1, N, 1])) == "ok"
    assert m.command(WSSCommand.commit()) == "DUPLICATE"
    assert m.errors == 1 << 3 and (m.err_port, m.err_lambda) == (1, 2)
    assert m.active == [[1, 2, 0], [N] * 3, [N] * 3] and m.configs == 1
    # a budget of 1 at output 2: two wavelengths into it is over; CLEAR clears the word only
    commands(m, [WSSCommand(5), WSSCommand.load(2, [2, N, N]), WSSCommand.budget(2, 1)])
    assert m.errors == 0 and (m.err_port, m.err_lambda) == (1, 2)
    assert m.command(WSSCommand.commit()) == "BUDGET"
    assert m.errors == 1 << 4 and (m.err_port, m.err_lambda) == (2, 2)
    # reset: nothing driven, budgets w again (the staging table is kept), so it commits
    m.reset()
    assert m.active == [[N] * 3] * 3 and m.errors == 0 and m.configs == 0
    assert m.command(WSSCommand.commit()) == "ok"
    assert m.active == [[1, 2, 0], [N] * 3, [2, N, N]]


@pytest.mark.parametrize("cmd,err", [
    (WSSCommand.load(3, [N, N, N]), "RANGE"), (WSSCommand.load(0, [3, N, N]), "RANGE"),
    (WSSCommand.budget(3, 1), "RANGE"), (WSSCommand.budget(0, 4), "RANGE"),
    (WSSCommand.settle(0), "TIMING"), (WSSCommand(6), "OPCODE")])
def test_wss_malformed(cmd, err):
    m = WSS(ports=3, wavelengths=3, timer_bits=4, settle=1)
    assert m.command(cmd) == err
    assert m.errors == 1 << ("OPCODE", "RANGE", "SELF", "DUPLICATE", "BUDGET",
                             "TIMING").index(err)
    assert m.active == [[N] * 3] * 3 and m.budget == [3] * 3 and m.settle == 1


def test_wss_configs_wraps_at_its_width():
    m = WSS(ports=3, wavelengths=2, timer_bits=4, settle=1, counter_bits=2)
    commands(m, [WSSCommand.load(0, [1, 2, 0])])
    seen = [m.configs] + [(m.command(WSSCommand.commit()), m.configs)[1] for _ in range(5)]
    assert seen == [0, 1, 2, 3, 0, 1]
    assert WSS(ports=3, wavelengths=2).counter_bits == 16


@pytest.mark.parametrize("kw", [{"ports": 1}, {"wavelengths": 0}, {"settle": 0},
                                {"ports": 40}, {"counter_bits": 0}, {"counter_bits": 33}])
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
    assert commands(m, load_commands(assign["wss"][key], 4, 8)) == ["ok"] * 9
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
