"""The OCS transceiver model: the Benes matrix (looping algorithm, light traced through the
elements), the controller's documented timeline worked by hand, and the commands the ring
builder's configurations turn into."""

import itertools
import random

import pytest

from models.infinitehbd import topology
from models.infinitehbd.ocstrx import (ERRORS, LOOP_PATH, Command, OCSTrx, benes_route,
                                       benes_size, benes_trace, trx_commands)


def test_benes_sizes():
    # 2k - 1 stages of N / 2 elements
    assert benes_size(2) == (1, 1) and benes_size(4) == (3, 6) and benes_size(8) == (5, 20)
    assert benes_size(16) == (7, 56)


def test_trace_by_hand():
    assert benes_trace([0] * 6, 4) == [0, 1, 2, 3]          # all bar: identity
    # element 0 (first column, lanes 0 and 1) crossed: lane 0 enters the lower sub-network
    # at its input 0 and leaves at lower output 0 -> last element 0, lower input -> lane 1
    assert benes_trace([1, 0, 0, 0, 0, 0], 4) == [1, 0, 2, 3]
    # last column element 1 (lanes 2, 3) crossed swaps the outputs 2 and 3
    assert benes_trace([0, 0, 0, 0, 0, 1], 4) == [0, 1, 3, 2]
    # the upper sub-network's element (id 2) crossed: its two lanes 0 and 2 (the upper
    # outputs of first-column elements 0 and 1) swap
    assert benes_trace([0, 0, 1, 0, 0, 0], 4) == [2, 1, 0, 3]


@pytest.mark.parametrize("n", [2, 4])
def test_route_realises_every_permutation(n):
    for p in itertools.permutations(range(n)):
        assert benes_trace(benes_route(list(p)), n) == list(p)


@pytest.mark.parametrize("n", [8, 16])
def test_route_realises_random_permutations(n):
    rng = random.Random(n)
    for _ in range(300):
        p = list(range(n))
        rng.shuffle(p)
        assert benes_trace(benes_route(p), n) == p


def test_every_setting_of_a_4_lane_network_is_a_permutation():
    seen = {tuple(benes_trace(list(s), 4)) for s in itertools.product((0, 1), repeat=6)}
    assert len(seen) == 24


def test_route_rejects():
    with pytest.raises(ValueError, match="not a permutation"):
        benes_route([0, 0, 1, 2])
    with pytest.raises(ValueError, match="power-of-two"):
        benes_route([0, 1, 2])


@pytest.mark.parametrize("kw,match", [
    ({"lanes": 6}, "lanes"), ({"lanes": 32}, "lanes"), ({"groups": 0}, "groups"),
    ({"settle": 0}, "settle"), ({"timer_bits": 4, "settle": 16}, "settle"),
    ({"code_bits": 0}, "code_bits")])
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        OCSTrx(**kw)


def run(model, cmds, cycles, pd=None):
    """Offer ``cmds`` in order (each until taken); light on every path unless ``pd``."""
    pd = pd or (lambda t: [[True] * 3] * model.G)
    trace = []
    queue = list(cmds)
    for t in range(cycles):
        out = model.outputs()
        trace.append(out)
        r = model.edge(queue[0] if queue else None, pd(t))
        if r is not None:
            queue.pop(0)
    return trace


def test_timeline_by_hand():
    m = OCSTrx(lanes=4, groups=1, code_bits=4, timer_bits=8, settle=3)
    m.timing[1] = 2                       # debounce 2
    tr = run(m, [Command.set_path(0, 1, 2)], 10)
    links = [o["link"][0] for o in tr]
    # taken at t = 0; SETTLING t = 1..3; CHECKING 4, 5 (two lit samples); UP from t = 6
    assert links == [0, 1, 1, 1, 2, 2, 3, 3, 3, 3]
    assert tr[1]["mzi"][:2] == [1, 0] and tr[1]["heater"][:2] == [8, 0]
    assert tr[1]["reconfigs"] == 1 and not tr[0]["busy"] and tr[1]["busy"]
    assert tr[5]["busy"] and not tr[6]["busy"]


def test_no_light_faults_then_fails_over_to_the_backup():
    m = OCSTrx(lanes=4, groups=1, code_bits=4, timer_bits=8, settle=2)
    m.timing[1], m.timing[2] = 2, 3      # debounce 2, window 3
    dark1 = lambda t: [[False, True, True]]       # noqa: E731  path 1 dark, path 2 lit
    tr = run(m, [Command.set_path(0, 1, 2)], 14, dark1)
    links = [o["link"][0] for o in tr]
    # SETTLING 1, 2; CHECKING 3, 4, 5 (window 3, dark); FAULT at 6 (cause 1, one cycle:
    # the failover starts in the first idle cycle); SETTLING 7, 8 on path 2; CHECKING 9, 10;
    # UP at 11
    assert links[:12] == [0, 1, 1, 2, 2, 2, 4, 1, 1, 2, 2, 3]
    assert tr[6]["cause"] == [1] and not tr[6]["ready"]
    assert tr[7]["path"] == [2] and tr[7]["backup"] == [0] and tr[7]["failover"] == [1]
    assert tr[11]["reconfigs"] == 2


def test_light_lost_while_up():
    m = OCSTrx(lanes=4, groups=2, code_bits=4, timer_bits=8, settle=1)
    m.timing[1] = 3
    pd = lambda t: [[t < 10, True, True], [True] * 3]     # noqa: E731
    tr = run(m, [Command.set_path(0, 1, 0)], 20, pd)
    links = [o["link"][0] for o in tr]
    assert links[5] == 3                    # UP at 1 + 1 + 3
    assert links[12] == 3 and links[13] == 4 and tr[13]["cause"][0] == 2   # dark 10, 11, 12
    assert links[19] == 4                   # no backup: stays FAULT


@pytest.mark.parametrize("cmd,err", [
    (Command(0), "OPCODE"), (Command(7), "OPCODE"), (Command.set_path(2, 1), "GROUP"),
    (Command.set_path(0, 0), "PATH"), (Command.set_path(0, 2, 2), "PATH"),
    (Command(2, perm=(0, 0, 1, 2), states=(0,) * 6), "PERM"),
    (Command(2, perm=(1, 0, 2, 3), states=(0,) * 6), "STATES"),
    (Command.write_cal(10, 0, 1), "ELEMENT"), (Command.set_timing(3, 1), "TIMING"),
    (Command.set_timing(0, 0), "TIMING")])
def test_malformed_commands_change_nothing(cmd, err):
    m = OCSTrx(lanes=4, groups=2, code_bits=4, timer_bits=8, settle=2)
    before = m.outputs()
    assert m.edge(cmd, [[True] * 3] * 2) == err
    after = m.outputs()
    assert after["error"] == 1 << ERRORS.index(err)
    assert {k: v for k, v in after.items() if k != "error"} == \
        {k: v for k, v in before.items() if k != "error"}


def test_commands_for_ring_configurations():
    loop = trx_commands("W", topology.LOOP, lanes=8, groups=2, K=2)
    assert [c.path for _, c in loop[:2]] == [LOOP_PATH] * 2
    assert loop[2][1].perm == (4, 5, 6, 7, 0, 1, 2, 3)
    assert benes_trace(list(loop[2][1].states), 8) == [4, 5, 6, 7, 0, 1, 2, 3]
    assert [(b, c.group, c.path, c.backup) for b, c in trx_commands("E", 2, K=2)] == \
        [(0, 0, 2, 1), (0, 1, 2, 1)]
    # K = 3: distance 3 is path 1 of bundle 1, whose path 2 (distance 4) does not exist
    assert [(b, c.path, c.backup) for b, c in trx_commands("E", 3, K=3)][0] == (1, 1, 0)
    with pytest.raises(ValueError, match="outside 1..K"):
        trx_commands("E", 3, K=2)


def test_ring_builder_configurations_come_up_in_the_model():
    """Every transceiver of the rings Algorithm 2 builds around two faulty nodes, replayed
    through the controller model with light: each ends UP on its configured path, its
    loopback matrix READY."""
    hbd = topology.HBD(16, R=8, K=2, ring=True)
    rings = topology.build_rings(hbd, [3, 9], 32)
    assert rings
    for ring in rings:
        for (side, node), setting in ring.config.items():
            m = OCSTrx(lanes=8, groups=2, code_bits=8, timer_bits=12, settle=50)
            cmds = [c for b, c in trx_commands(side, setting, K=hbd.K) if b == 0]
            tr = run(m, cmds, 200)
            want = LOOP_PATH if setting == topology.LOOP else setting
            assert tr[-1]["path"] == [want, want]
            if setting == topology.LOOP:
                assert tr[-1]["mstate"] == 2
            else:
                assert tr[-1]["link"] == [3, 3]
