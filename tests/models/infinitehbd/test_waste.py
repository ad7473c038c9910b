"""Waste rules on hand-worked small clusters, one per architecture; vectorised == reference."""

import numpy as np
import pytest

from aifabric.models.infinitehbd import waste

R = 4


def nodes_state(n_nodes, faulty):
    s = np.zeros((1, n_nodes), bool)
    s[0, list(faulty)] = True
    return s


def test_big_switch_counts_gpus_not_nodes():
    st = np.zeros((1, 18, R), bool)
    st[0, 3, 1] = True                                   # one GPU
    assert waste.usable("big-switch", st, 16)[0] == 64   # 71 healthy -> 4 x 16
    assert waste.waste("big-switch", st, 16)[0] == pytest.approx(7 / 72)


def test_nvl72_keeps_eight_backups():
    # one NVL-72 (18 nodes): fault-free 64 usable of 72; one faulty node: still 64 (a
    # backup stands in); three faulty nodes: 60 healthy -> 48 at TP-16
    assert waste.usable("nvl-72", nodes_state(18, []), 16, R)[0] == 64
    assert waste.usable("nvl-72", nodes_state(18, [5]), 16, R)[0] == 64
    assert waste.usable("nvl-72", nodes_state(18, [1, 2, 3]), 16, R)[0] == 48
    assert waste.waste("nvl-72", nodes_state(18, [5]), 16, R)[0] == pytest.approx(4 / 72)
    assert waste.usable("nvl-36", nodes_state(9, []), 16, R)[0] == 32
    assert waste.usable("nvl-36", nodes_state(18, []), 64, R)[0] == 0     # TP > HBD


def test_nvl576_has_no_backups():
    assert waste.usable("nvl-576", nodes_state(144, [0]), 32, R)[0] == 544   # 572 -> 17 x 32


def test_tpuv4_cube_rules():
    # two cubes of 16 nodes; a fault in cube 0 fragments it for TP-32 (60 -> 32) and removes
    # it from a TP-128 job (only whole cubes join through the OCS)
    st = nodes_state(32, [3])
    assert waste.usable("tpuv4", st, 32, R)[0] == 32 + 64
    assert waste.usable("tpuv4", st, 128, R)[0] == 0
    assert waste.usable("tpuv4", nodes_state(32, []), 128, R)[0] == 128
    # the cube-radius reading: the cube with a fault serves no TP group at any size
    assert waste.usable("tpuv4-cube", st, 32, R)[0] == 64
    assert waste.usable("tpuv4-cube", st, 8, R)[0] == 64
    assert waste.usable("tpuv4-cube", nodes_state(32, [3, 20]), 16, R)[0] == 0


def test_sip_ring_loses_whole_rings():
    # 8 nodes, TP-16 -> two static rings of 4 nodes; a fault in the first kills it
    assert waste.usable("sip-ring", nodes_state(8, [2]), 16, R)[0] == 16
    assert waste.usable("sip-ring", nodes_state(8, [2, 6]), 16, R)[0] == 0


def test_infinitehbd_bypass_depends_on_k():
    # 16-node ring, TP-16 (4 nodes): nodes 4 and 5 faulty -> K=2 breaks the ring there
    # (one line of 14 healthy nodes: 3 rings); K=3 bypasses (one cyclic component: 3 rings)
    st = nodes_state(16, [4, 5])
    assert waste.usable("infinitehbd-k2", st, 16, R)[0] == 48
    st = nodes_state(16, [2, 3, 10, 11])    # two breaks for K=2: segments 6 and 6 -> 2 rings
    assert waste.usable("infinitehbd-k2", st, 16, R)[0] == 32
    assert waste.usable("infinitehbd-k3", st, 16, R)[0] == 48   # 12 healthy, no break


@pytest.mark.parametrize("arch", waste.ARCHS)
def test_vectorised_equals_reference(arch):
    rng = np.random.default_rng(hash(arch) % 1000)
    st = rng.random((30, 144, R)) < 0.015
    for tp in (8, 16, 32, 64, 128):
        got = waste.usable(arch, st, tp)
        ref = [waste.usable_reference(arch, {(int(n), int(i)) for n, i in zip(*np.nonzero(s))},
                                      144, R, tp) for s in st]
        assert list(got) == ref


def test_bad_input():
    with pytest.raises(ValueError, match="unknown architecture"):
        waste.usable("nvl-9000", nodes_state(8, []), 8, R)
    with pytest.raises(ValueError, match="multiple of the node size"):
        waste.usable("big-switch", nodes_state(8, []), 6, R)
    with pytest.raises(ValueError, match="needs R"):
        waste.usable("big-switch", nodes_state(8, []), 8)
