"""Closed loop: the transceiver controllers of every node of a K-hop ring driven by the light
between them (``models.infinitehbd.ringlight``). Rings built with Algorithm 2 are
configured from ``ring_commands``; a node dies; every ring must come back on its bypass
(or, when the dead node was its end, close on the survivor's loopback) within the documented
bundle failover time, with no group left in FAULT. Then each of the three defects of issue
32 is put back, and the same check must fail."""

import pytest

from aifabric.models.infinitehbd import ocstrx, topology
from aifabric.models.infinitehbd.ocstrx import LOOP_PATH, Command, OCSTrx, ring_commands
from aifabric.models.infinitehbd.ringlight import FAULT, UP, RingPlant

S, D, W = 20, 3, 100                    # settle, debounce, window (cycles)
BOUND = 2 * D + S + 1                   # documented: first dark sample -> UP on the backup
TIMING = [Command.set_timing(0, S), Command.set_timing(1, D), Command.set_timing(2, W)]


def build(hbd, tp, faulty=(), make=None, lanes=8):
    make = make or (lambda n, b: OCSTrx(lanes=lanes, groups=2, code_bits=8, timer_bits=12,
                                        settle=50))
    plant = RingPlant(hbd, make, lanes=lanes)
    rings = topology.build_rings(hbd, faulty, tp)
    cmds = ring_commands(hbd, rings, lanes=lanes)
    used = {}
    for key in plant.controllers:
        plant.send(*key, TIMING)
    for (side, node), seq in cmds.items():
        for bundle, c in seq:
            plant.send(node, bundle, [c])
            used[(side, node)] = bundle
    return plant, rings, used


def read_config(plant, ring_nodes, used):
    """The configuration the controllers hold for a ring's nodes, from their outputs:
    ``{(side, node): d or LOOP}``, and the links of those groups."""
    cfg, links = {}, {}
    for (side, node), b in used.items():
        if node not in ring_nodes:
            continue
        o = plant.controllers[(node, b)].outputs()
        sel = set()
        for g in range(2):
            p = o["path"][g]
            if p == LOOP_PATH:
                sel.add(topology.LOOP)
            else:
                end = plant.table.bundles[b][p - 1]
                sel.add(end[1] if end[0] == side else None)
            links[(side, node, g)] = o["link"][g]
        assert len(sel) == 1, f"{side}({node}): groups on different paths {sel}"
        cfg[(side, node)] = sel.pop()
    return cfg, links


def check_rings(plant, hbd, rings, used, dead):
    """Every ring, less its dead nodes, is a working GPU ring on the controllers' state:
    the configuration of its survivors is the bypass ring's, every group of it is UP, and
    the ring walks on the physical link graph."""
    survivors = []
    for r in rings:
        nodes = [n for n in r.nodes if n not in dead]
        if not nodes:
            continue
        want = topology._ring_of(hbd, nodes)
        cfg, links = read_config(plant, set(nodes), used)
        cfg = {k: v for k, v in cfg.items() if k in want.config}
        assert cfg == want.config, f"ring {r.nodes} less {sorted(dead)}: {cfg} != {want.config}"
        bad = {k: v for k, v in links.items() if (k[0], k[1]) in want.config and v != UP}
        assert not bad, f"ring {r.nodes}: groups not UP {bad}"
        survivors.append(want)
    topology.verify(hbd, survivors, faulty=dead)
    faults = [(key, g) for key, o in plant.outputs().items() for g in range(2)
              if o["link"][g] == FAULT]
    assert not faults, f"groups left in FAULT: {faults}"


def kill_and_recover(plant, hbd, rings, used, victim):
    """Kill ``victim``; step until every ring is whole again (within BOUND cycles);
    returns the cycles from the kill to recovery."""
    plant.kill(victim)
    t0 = plant.t
    while True:
        plant.step()
        try:
            check_rings(plant, hbd, rings, used, {victim})
            return plant.t - t0
        except AssertionError:
            if plant.t - t0 >= BOUND:
                raise


def settle_all(plant, hbd, rings, used):
    plant.run_until_quiet(2000)
    check_rings(plant, hbd, rings, used, set())


@pytest.mark.parametrize("victim,kind", [(5, "bypass"), (8, "ring end: loopback"),
                                         (11, "ring end: loopback")])
def test_ring_comes_back_after_a_node_dies(victim, kind):
    hbd = topology.HBD(12, R=4, K=2)
    plant, rings, used = build(hbd, 16)
    assert [r.nodes for r in rings] == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11)]
    settle_all(plant, hbd, rings, used)
    took = kill_and_recover(plant, hbd, rings, used, victim)
    # the documented bundle latency: both groups of both ends in one settle
    assert took == BOUND, (kind, took)
    for _ in range(3 * W):                      # and it stays so
        plant.step()
    check_rings(plant, hbd, rings, used, {victim})


def test_ring_with_a_faulty_node_inside_comes_back_again():
    """Rings built around a faulty node (a hop of 2 inside) on a K = 3 line; a second node
    dies inside a ring where the bypass is within K."""
    hbd = topology.HBD(14, R=4, K=3, ring=False)
    plant, rings, used = build(hbd, 16, faulty=[2])
    assert rings[0].nodes == (0, 1, 3, 4)
    settle_all(plant, hbd, rings, used)
    took = kill_and_recover(plant, hbd, rings, used, 6)
    assert took == BOUND


def test_planned_change_held_does_not_fail_over():
    """A planned change at the far end (the ring (4..7) split into two rings of 2): both
    ends held first, so no group fails over onto a path nobody listens on; the loopback is
    UP about two settles after the commands and every group armed again."""
    hbd = topology.HBD(12, R=4, K=2)
    plant, rings, used = build(hbd, 16)
    settle_all(plant, hbd, rings, used)
    new = topology._ring_of(hbd, [4, 5]), topology._ring_of(hbd, [6, 7])
    cmds = ring_commands(hbd, list(new))
    keys = [k for r in new for k in r.config]
    for side, node in keys:
        plant.send(node, used[(side, node)], [Command.arm(0)])
    for side, node in keys:
        plant.send(node, used[(side, node)], [c for _, c in cmds[(side, node)]] +
                   [Command.arm(3)])
    t0 = plant.t
    plant.run_until_quiet(20 * S)
    took = plant.t - t0
    assert took <= 2 * S + 2 * D + 10, took
    rings2 = [rings[0], *new, rings[2]]
    check_rings(plant, hbd, rings2, used, set())
    for side, node in keys:
        o = plant.controllers[(node, used[(side, node)])].outputs()
        assert o["failover"] == [0, 0] and o["armed"] == [1, 1], (side, node, o)


# ---------------------------------------------------------- the defects, put back -----

class Serialised(OCSTrx):
    """Defect 2: one group fails over at a time, and only when the controller is idle."""

    def pending(self):
        if self.mstate == 1 or any(x in (1, 2) for x in self.link):
            return []
        return [g for g in range(self.G)
                if self.link[g] == FAULT and self.backup[g] and self.armed[g]][:1]


class Unwatched(OCSTrx):
    """Defect 3 (controller half): loopback groups watched while the matrix settles, and
    nothing checked again when it is READY."""

    def _watched(self, g, matrix_settling):
        return True

    def _recheck(self, pend):
        return []


def old_backups(hbd, rings):
    """Defect 1: a bundle's backup is its other hop distance, whatever the faults."""
    out = {}
    for r in rings:
        for key, setting in r.config.items():
            out[key] = 0 if setting == topology.LOOP else (2 if setting == 1 else 1)
    return out


def old_order(side, setting, lanes=8, groups=2, K=2, *, backup=0, _orig=ocstrx.trx_commands):
    """Defect 3 (order half): the loopback's path before the matrix permutation."""
    cmds = _orig(side, setting, lanes=lanes, groups=groups, K=K, backup=backup)
    return [x for x in cmds if x[1].op == 1] + [x for x in cmds if x[1].op != 1]


def scenario(make=None):
    """Build the rings, then kill an inner node (5) and a ring end (8), one per run."""
    for victim in (5, 8):
        hbd = topology.HBD(12, R=4, K=2)
        plant, rings, used = build(hbd, 16, make=make)
        settle_all(plant, hbd, rings, used)
        kill_and_recover(plant, hbd, rings, used, victim)
        for _ in range(3 * W):
            plant.step()
        check_rings(plant, hbd, rings, used, {victim})


def test_fails_with_backups_that_ignore_the_faults(monkeypatch):
    monkeypatch.setattr(ocstrx, "ring_backups", old_backups)
    with pytest.raises(AssertionError):
        scenario()


def test_fails_with_serialised_failover():
    with pytest.raises(AssertionError, match="different paths|not UP|FAULT"):
        scenario(lambda n, b: Serialised(lanes=8, groups=2, code_bits=8, timer_bits=12,
                                         settle=50))


def test_fails_with_the_old_command_order(monkeypatch):
    monkeypatch.setattr(ocstrx, "trx_commands", old_order)
    with pytest.raises(AssertionError):
        scenario(lambda n, b: Unwatched(lanes=8, groups=2, code_bits=8, timer_bits=12,
                                        settle=50))
