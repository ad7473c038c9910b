"""Algorithms 2-5: hand-worked examples and the placement properties."""

import random

import pytest

from aifabric.models.infinitehbd import orchestration as o


def test_deployment_hand_worked():
    # 8 nodes, 2 per ToR: sub-line 0 = nodes 1, 3, 5, 7; sub-line 1 = 2, 4, 6, 8
    S, E = o.deployment_strategy(list(range(1, 9)), K=2, p=2)
    assert S == [1, 3, 5, 7, 2, 4, 6, 8]
    assert (1, 3) in E and (1, 5) in E and (1, 7) not in E and (7, 2) in E


def test_dcn_free_hand_worked():
    S = list(range(1, 11))
    E = {(S[i], S[j]) for i in range(10) for j in range(i + 1, min(i + 2, 9) + 1)}
    # K = 2; nodes 4 and 5 faulty: components [1..3] and [6..10]; m = 2
    assert o.orchestration_dcn_free(S, E, {4, 5}, 2) == [[1, 2], [6, 7], [8, 9]]


def _check(placement, n, F, m, K, p):
    S, _ = o.deployment_strategy(list(range(1, n + 1)), K, p)
    pos = {u: i for i, u in enumerate(S)}
    seen = set()
    for g in placement:
        assert len(g) == m
        assert not set(g) & F, "a faulty node is used"
        assert not set(g) & seen, "a node is used twice"
        seen |= set(g)
        assert all(0 < pos[b] - pos[a] <= K for a, b in zip(g, g[1:])), \
            "TP group nodes are not consecutive on the HBD line"


@pytest.mark.parametrize("seed", range(4))
def test_fat_tree_placement_properties(seed):
    n, r, p, d, t, K = 256, 4, 2, 64, 32, 2
    rng = random.Random(seed)
    F = set(rng.sample(range(1, n + 1), rng.randint(0, 12)))
    s = 700
    pl = o.orchestration_fat_tree(n, r, p, F, t, s, d, K)
    assert pl is not None and len(pl) * (t // r) * r >= s
    _check(pl, n, F, t // r, K, p)
    base = o.baseline_placement(n, r, p, F, t, s, K, seed=seed)
    _check(base, n, F, t // r, K, p)


def test_no_faults_no_cross_tor_and_binary_search_relaxes():
    n, r, p, d, t, K = 256, 4, 2, 64, 32, 2
    pl = o.orchestration_fat_tree(n, r, p, set(), t, 800, d, K)
    assert o.cross_tor_ratio(pl, 800, r, p) == 0.0
    # a job too large for any placement
    assert o.orchestration_fat_tree(n, r, p, set(range(1, 200)), t, 800, d, K) is None


def test_alignment_constraint_fails_the_whole_tor():
    # with every constraint on, a faulty node removes its ToR partner from the placement too
    S, E = o.deployment_strategy(list(range(1, 65)), 2, 2)
    pl = o.placement_fat_tree(S, E, 64, {5}, l=16, m=4, n_maxsubline=4, d=32, p=2)
    used = {u for g in pl for u in g}
    assert 5 not in used and 6 not in used


def test_cross_tor_ratio_hand_worked():
    # p = 2: groups [1, 3] and [2, 4] share ToRs (0, 1): aligned, no crossing; [1, 3] with
    # [5, 7] crosses at both ranks
    assert o.cross_tor_ratio([[1, 3], [2, 4]], 16, 4, 2) == 0.0
    assert o.cross_tor_ratio([[1, 3], [5, 7]], 16, 4, 2) == 1.0


@pytest.mark.parametrize("kw,message", [
    (dict(t=30), "multiple of the GPUs per node"),
    (dict(d=63), "Aggregation domain size"),
    (dict(F={999}), "outside the cluster"),
])
def test_bad_input(kw, message):
    args = dict(n=256, r=4, p=2, F=set(), t=32, s=64, d=64, K=2)
    args.update(kw)
    with pytest.raises(ValueError, match=message):
        o.orchestration_fat_tree(**args)


def test_iteration_bytes_agree_with_the_shared_traffic_model():
    # the per-GPU volumes are those of railonly's traffic matrices, averaged over the GPUs
    from aifabric.models.common.specs import GPT
    from aifabric.models.railonly.traffic import megatron_traffic
    model = GPT("tiny", 4, 64, 4, seq=32)
    mats = megatron_traffic(model, 24, 12, t=2, p=2, micro=1)        # d = 6
    got = o.iteration_bytes(model, 2, 2, 6, 12)
    for kind in ("tp", "pp", "dp"):
        assert got[kind] == pytest.approx(mats[kind].sum() / 24), kind
    share = o.dcn_byte_share(model, 24, 2, 2, 12)
    assert share == pytest.approx((mats["pp"].sum() + mats["dp"].sum())
                                  / sum(m.sum() for m in mats.values()))
