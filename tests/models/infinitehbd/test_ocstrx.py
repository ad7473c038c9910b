"""The OCS transceiver model: the Benes matrix (looping algorithm, light traced through the
elements), the controller's documented timeline worked by hand, and the commands the ring
builder's configurations turn into."""

import itertools
import random

import pytest

from aifabric.models.infinitehbd import topology
from aifabric.models.infinitehbd.ocstrx import (ERRORS, LOOP_PATH, Command, OCSTrx, benes_route,
                                       benes_size, benes_trace, ring_backups, trx_commands)


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
    # the matrix first, then one SET_PATH for both groups of the W bundle (0)
    assert loop[0][1].perm == (4, 5, 6, 7, 0, 1, 2, 3)
    assert benes_trace(list(loop[0][1].states), 8) == [4, 5, 6, 7, 0, 1, 2, 3]
    assert [(b, c.op, c.path, c.every) for b, c in loop] == [(0, 2, 0, 0), (0, 1, LOOP_PATH, 1)]
    # no ring context: no backup
    assert [(b, c.path, c.backup) for b, c in trx_commands("E", 2, K=2)] == [(1, 2, 0)]
    assert [(b, c.path, c.backup) for b, c in trx_commands("E", 1, K=2, backup=2)] == \
        [(1, 1, 2)]
    # a loopback backup loads the matrix first
    assert [c.op for _, c in trx_commands("E", 1, K=2, backup=topology.LOOP)] == [2, 1]
    # K = 3 (Fig 5b, three bundles): distance 3 of both sides on bundle 2
    assert [(b, c.path) for b, c in trx_commands("E", 3, K=3)] == [(2, 2)]
    assert [(b, c.path) for b, c in trx_commands("W", 3, K=3)] == [(2, 1)]
    with pytest.raises(ValueError, match="outside 1..K"):
        trx_commands("E", 3, K=2)
    with pytest.raises(ValueError, match="bundle"):
        trx_commands("E", 2, K=3, backup=3)


def _far(hbd, side, n, d):
    return hbd.neighbour(n, d if side == "E" else -d)


@pytest.mark.parametrize("K,ring", [(2, True), (2, False), (3, True), (3, False)])
def test_every_backup_pair_meets(K, ring):
    """For random fault sets and TP sizes: a backup only where the node it reaches is healthy
    and in the same ring, the far end's backup the same fibre (mirrored), and the bypass it
    makes skips exactly the neighbour; ring ends fall back to the loopback."""
    rng = random.Random(K * 10 + ring)
    checked = 0
    for _ in range(60):
        hbd = topology.HBD(20, R=4, K=K, ring=ring)
        faulty = rng.sample(range(20), rng.randint(0, 4))
        tp = 4 * rng.choice([2, 3, 4, 5])
        rings = topology.build_rings(hbd, faulty, tp)
        backups = ring_backups(hbd, rings)
        member = {n: i for i, r in enumerate(rings) for n in r.nodes}
        for r in rings:
            for (side, n), d in backups.items():
                if n not in r.nodes or not d:
                    continue
                if d == topology.LOOP:
                    # the neighbour it loses is the ring's end
                    i = r.nodes.index(n)
                    nb = r.nodes[i + 1] if side == "E" else r.nodes[i - 1]
                    assert nb in (r.nodes[0], r.nodes[-1]), (side, n, r.nodes)
                    continue
                v = _far(hbd, side, n, d)
                assert v is not None and v not in faulty, (side, n, d, faulty)
                assert member.get(v) == member[n], f"{side}({n}) backup {d} leaves its ring"
                other = "W" if side == "E" else "E"
                assert backups[(other, v)] == d, f"{side}({n}) -> {v}: far end backup " \
                    f"{backups[(other, v)]}, not {d}"
                # it skips exactly one ring node: the neighbour
                i, j = r.nodes.index(n), r.nodes.index(v)
                assert abs(i - j) == 2, (r.nodes, n, v)
                checked += 1
    assert checked > 50


def test_backups_around_a_faulty_node():
    """The issue's case: a 12-node K = 2 ring around faulty node 2, TP-16 (four nodes): no
    backup reaches node 2 or leaves its ring."""
    hbd = topology.HBD(12, R=4, K=2)
    rings = topology.build_rings(hbd, [2], 16)
    assert rings[0].nodes == (0, 1, 3, 4)
    b = ring_backups(hbd, rings)
    # E(0) -> 1 (d 1): beyond 1 comes 3, three hops: none; W(1)'s neighbour 0 is the end:
    # loopback. 1 -> 3 (d 2) and 3 -> 4 (d 1): bypasses 1 -> 4 and 0 -> 3 are 3 hops: none;
    # E(3)'s neighbour 4 is the end: loopback. Before: four backups pointed at node 2.
    assert [b[("E", 0)], b[("W", 1)], b[("E", 1)], b[("W", 3)], b[("E", 3)], b[("W", 4)]] == \
        [0, topology.LOOP, 0, 0, topology.LOOP, 0]
    assert all(_far(hbd, s_, n, d) != 2 for (s_, n), d in b.items() if d not in (0, topology.LOOP))


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
            cmds = [c for b, c in trx_commands(side, setting, K=hbd.K)]
            tr = run(m, cmds, 300)
            want = LOOP_PATH if setting == topology.LOOP else setting
            assert tr[-1]["path"] == [want, want]
            if setting == topology.LOOP:
                assert tr[-1]["mstate"] == 2
            else:
                assert tr[-1]["link"] == [3, 3]


@pytest.mark.parametrize("K", [1, 2, 3, 4])
def test_one_wiring_table_for_graph_commands_and_cost(K):
    """Each external path (side, d <= K) is served by exactly one (bundle, path); the link
    graph, the controller commands and the part counts all use that table."""
    from aifabric.models.infinitehbd import cost
    table = topology.wiring(K)
    ends = [e for paths in table.bundles for e in paths if e is not None]
    assert sorted(ends) == sorted((s, d) for s in "WE" for d in range(1, K + 1))
    assert len(table.bundles) == K                   # 2K paths, two per bundle
    hbd = topology.HBD(2 * K + 3, R=8 if K > 2 else 4, K=K)
    for _, _, e in hbd.graph().edges(data=True):
        if e["kind"] == "ext":
            assert e["bundles"] == (table.path_of("E", e["path"])[0],
                                    table.path_of("W", e["path"])[0])
    for side in "WE":
        for d in range(1, K + 1):
            (b, c), = [x for x in trx_commands(side, d, K=K) if x[1].op == 1]
            assert (b, c.path) == table.path_of(side, d)
    if K in (2, 3):
        # Table 8's part counts per 4-GPU node, from the table: 16 / 24 OCSTrx (Fig 5 (a)
        # 2 bundles, (b) 3 bundles of 8), one fibre each, 4 / 2 DAC cables
        parts = {p.name: p.qty for p in cost.SYSTEMS[f"infinitehbd-k{K}"].parts}
        assert parts == {"OCSTrx": 8 * K, "Fiber": 8 * K, "DAC Cable": 2 * (4 - K)}
        assert parts["OCSTrx"] == {2: 16, 3: 24}[K]
