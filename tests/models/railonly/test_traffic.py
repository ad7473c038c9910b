"""Traffic matrices on a hand-worked run; hierarchical DP; MoE; the §III fractions."""

import numpy as np
import pytest

from aifabric.models.railonly import traffic
from aifabric.models.common.specs import GPT

TINY = GPT("tiny", layers=4, hidden=64, heads=4, seq=8, vocab=16)


def test_hand_worked_matrix():
    # 8 GPUs: t = 2, p = 2, d = 2; batch 4, micro 1 -> m = 2 micro-batches per DP rank.
    mats = traffic.megatron_traffic(TINY, 8, 4, 2, 2, hb=2)
    tp, pp, dp = mats["tp"], mats["pp"], mats["dp"]
    # TP ring of 2: 8 collectives x (l/p = 2) layers x 2 micro-batches x 1024 B x 1/2
    assert tp[0, 1] == tp[1, 0] == 16384 and tp[0, 2] == 0
    assert np.count_nonzero(tp) == 8
    # PP: stage 0 = ranks 0-3, stage 1 = 4-7; m x D_p = 2 x 512 each way
    assert pp[0, 4] == pp[4, 0] == 1024 and pp[0, 5] == 0
    # DP: ranks 0 and 2 (same tp, same stage); 2 (d-1)/d x 2 l S_T / (p t) = 99,968
    assert dp[0, 2] == dp[2, 0] == pytest.approx(99968)
    s = traffic.summary(mats, 2)
    assert s["pairs_with"]["tp"] == pytest.approx(8 / 56)
    assert s["hb_share"] == pytest.approx(tp.sum() / (tp.sum() + pp.sum() + dp.sum()))
    assert s["other_share"] == 0                      # nothing needs the spine


def test_hierarchical_dp_volumes_follow_eq1():
    g = TINY
    mats = traffic.megatron_traffic(g, 16, 16, 1, 1, hb=4, dp_hb=4)   # d = 16 = 4 x 4
    G = 2 * g.layers * g.block_params
    dp = mats["dp"]
    idx = np.arange(16)
    same = idx[:, None] // 4 == idx[None, :] // 4
    # per GPU, AllReduce = 2 x AllGather: NIC 2 (y-1) G / (x y), HB 2 (x-1) G / x
    assert dp[~same].sum() / 16 == pytest.approx(2 * 3 * G / 16)
    assert dp[same].sum() / 16 == pytest.approx(2 * 3 * G / 4)
    nic = np.argwhere((dp > 0) & ~same)
    assert all(a % 4 == b % 4 for a, b in nic)        # NIC traffic stays in its rail


def test_moe_alltoall_is_uniform():
    mats = traffic.moe_traffic(TINY, 8, 16)
    a = mats["a2a"]
    per_gpu = 4 * 2 * (16 * 8 / 8) * 64 * 2 * 7 / 8  # 4 a2a x 2 MoE layers x tokens h 2 B
    assert a.sum(axis=1) == pytest.approx(np.full(8, per_gpu))
    assert np.all(np.diag(a) == 0)
    s = traffic.summary(mats, 4)
    assert s["other_share"] > 0                       # all-to-all crosses rails


def test_bad_input():
    with pytest.raises(ValueError, match="must divide gpus"):
        traffic.megatron_traffic(TINY, 8, 4, 3, 1)
    with pytest.raises(ValueError, match="must divide the batch"):
        traffic.megatron_traffic(TINY, 8, 3, 2, 2)
    with pytest.raises(ValueError, match="divide the layers"):
        traffic.megatron_traffic(TINY, 24, 24, 1, 3)
