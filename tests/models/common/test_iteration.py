"""Eq 6-11 on hand-computed configurations (latency, forwarding and memory knobs included);
the strategy search's constraints; the one calibration behind Fig 7."""

import numpy as np
import pytest

from aifabric.models.common import iteration as it
from aifabric.models.common.specs import GPT, KORTHIKANTI, MODELS, PLATFORMS, Platform

TINY = GPT("tiny", layers=4, hidden=64, heads=4, seq=8, vocab=16)
NO_LAT = it.Knobs(alpha_hb=0.0, alpha_nic=0.0)


def test_korthikanti_flops_formula_gives_the_published_hfu():
    # independent data: the published time and HFU of each run
    for r in KORTHIKANTI:
        m = MODELS[r.model]
        got = it.hfu(m, PLATFORMS["dgx-a100"], r.gpus, r.batch, r.time_selective)
        assert got == pytest.approx(r.hfu, abs=0.0025)
        mfu = m.flops(r.batch, "none") / (r.time_selective * r.gpus * 312e12)
        assert mfu == pytest.approx(r.mfu, abs=0.0025)


def test_hand_computed_iteration():
    # FLOPs per sequence: 72 * 8 * 4 * 64^2 * (1 + 8/192 + 16/3072) = 9,879,552
    assert TINY.flops(1) == pytest.approx(9_879_552)
    plat = Platform("toy", hb=2, peak=9_879_552 / 4, C_F=1000.0, C_S=100.0, memory=1e12,
                    efficiency=1.0)
    s = it.Strategy(t=2, p=2, d=2, b=1, v=1, t_h=2, p_h=1, d_h=1)
    terms = it.iteration_time(TINY, plat, 8, 4, s, knobs=NO_LAT)
    # t(b) = 9,879,552 / (p t) / peak = 1 s; m = 4 / (2 * 1) = 2
    assert terms["tb"] == pytest.approx(1.0)
    assert terms["bubble_comp"] == pytest.approx(1.0)           # (p-1) t(b) / v
    assert terms["ls_comp"] == pytest.approx(2.0)               # m t(b)
    # D_p = 2*1*64*8/2 = 512 B over the NIC (p_l = 2): 2 (p_l-1) D_p / C_S
    assert terms["bubble_comm"] == pytest.approx(10.24)
    # D_t = 1024 B, AG(1024, 2, 1) = 1024/2/1000; 8 l m AG / p
    assert terms["ls_tp"] == pytest.approx(8 * 4 * 2 * 0.512 / 2)
    assert terms["ls_pp"] == pytest.approx(2 * 2 * 1 * 512 / 100)  # 2 m v D_p / C_S
    # D_d = 2 * 4 * (12*64^2 + 13*64) / (2*2) = 99,968 B over 1 x 2: 2 * (99,968 / 2 / 100)
    assert terms["sync"] == pytest.approx(999.68)
    assert terms["total"] == pytest.approx(1 + 10.24 + 2 + 16.384 + 20.48 + 999.68)


def test_interleaving_divides_only_the_bubble_compute():
    plat = PLATFORMS["dgx-a100"].with_(efficiency=0.5)
    a = it.iteration_time(TINY, plat, 8, 8, it.Strategy(1, 2, 4, 1, 1, 1, 2, 4), knobs=NO_LAT)
    b = it.iteration_time(TINY, plat, 8, 8, it.Strategy(1, 2, 4, 1, 2, 1, 2, 4), knobs=NO_LAT)
    assert b["bubble_comp"] == pytest.approx(a["bubble_comp"] / 2)
    assert b["ls_pp"] == pytest.approx(2 * a["ls_pp"])
    assert b["ls_comp"] == pytest.approx(a["ls_comp"])


def test_candidates_respect_every_constraint():
    m = MODELS["gpt-146b"]
    c = it.candidates(m, 1024, 512, 16)
    assert len(c["t"])
    for i in range(len(c["t"])):
        t, p, d, b, v = (int(c[k][i]) for k in ("t", "p", "d", "b", "v"))
        th, ph, dh = (int(c[k][i]) for k in ("t_h", "p_h", "d_h"))
        assert t * p * d == 1024 and th * ph * dh == 16
        assert t % th == 0 and p % ph == 0 and d % dh == 0
        assert m.heads % t == 0 and m.layers % p == 0 and 512 % (d * b) == 0
        if v > 1:
            assert (m.layers // p) % v == 0 and (512 // (d * b)) % p == 0


def test_search_picks_the_fastest_fitting_strategy():
    m, plat = MODELS["gpt-146b"], PLATFORMS["dgx-h100"]
    res = it.search(m, plat, 512, 256)
    c = it.candidates(m, 512, 256, 8)
    fits = it.memory(m, c, 256) <= plat.memory
    times = it.iteration_time(m, plat, 512, 256, c)["total"][fits]
    assert res["time"] == pytest.approx(times.min())
    assert res["count"] == int(fits.sum())
    with pytest.raises(ValueError, match="no parallelisation fits"):
        it.search(m, plat.with_(memory=1e9), 512, 256)


def test_bigger_hb_domains_never_hurt_much_and_ideal_is_fastest():
    m, plat = MODELS["gpt-146b"], PLATFORMS["dgx-gh200"]
    times = {k: it.search(m, plat, 4096, 1024, hb=k)["time"] for k in (1, 8, 64, 4096)}
    assert times[1] > times[8] > times[64] >= times[4096]


def test_latency_per_step_ring_and_tree():
    plat = Platform("toy", hb=2, peak=9_879_552 / 4, C_F=1000.0, C_S=100.0, memory=1e12,
                    efficiency=1.0)
    s = it.Strategy(t=2, p=2, d=2, b=1, v=1, t_h=2, p_h=1, d_h=1)
    base = it.iteration_time(TINY, plat, 8, 4, s, knobs=NO_LAT)
    for algo in ("ring", "tree"):       # with 2 GPUs per level both take one step
        k = NO_LAT.with_(alpha_hb=0.001, alpha_nic=0.01, algo=algo)
        got = it.iteration_time(TINY, plat, 8, 4, s, knobs=k)
        # TP: t_h = 2 -> one HB step per AG, 8 l m / p = 32 AGs
        assert got["ls_tp"] - base["ls_tp"] == pytest.approx(32 * 0.001)
        # DP: d_l = 2 -> one NIC step, twice (AllReduce)
        assert got["sync"] - base["sync"] == pytest.approx(2 * 0.01)
        # PP: p_l = 2 -> 2 (p_l - 1) bubble sends and 2 m v last-stage sends over the NIC
        assert got["bubble_comm"] - base["bubble_comm"] == pytest.approx(2 * 0.01)
        assert got["ls_pp"] - base["ls_pp"] == pytest.approx(4 * 0.01)
    # 12 GPUs in one domain: a ring takes 11 steps, a tree ceil(log2 12) = 4
    s12 = it.Strategy(t=1, p=1, d=12, b=1, v=1, t_h=1, p_h=1, d_h=12)
    big = Platform("toy12", hb=12, peak=1e12, C_F=1e9, C_S=1e8, memory=1e12, efficiency=1.0)
    sync = {a: it.iteration_time(TINY, big, 12, 12, s12, knobs=NO_LAT.with_(
        alpha_hb=0.001, algo=a))["sync"] for a in ("ring", "tree")}
    plain = it.iteration_time(TINY, big, 12, 12, s12, knobs=NO_LAT)["sync"]
    assert sync["ring"] - plain == pytest.approx(2 * 11 * 0.001)
    assert sync["tree"] - plain == pytest.approx(2 * 4 * 0.001)


def test_rail_only_forwards_cross_rail_pipeline_sends():
    plat = Platform("toy", hb=4, peak=1e12, C_F=1000.0, C_S=100.0, memory=1e12,
                    efficiency=1.0)
    # p = 4 = p_h 2 x p_l 2: one domain boundary; m = 8 / (1 * 1) = 8, v = 1
    s = it.Strategy(t=1, p=4, d=2, b=1, v=1, t_h=1, p_h=2, d_h=2)
    k = NO_LAT.with_(placement="linear")
    opt = it.iteration_time(TINY, plat, 8, 16, s, knobs=k)
    ro = it.iteration_time(TINY, plat, 8, 16, s, knobs=k, network="rail-only")
    D_p = 2 * 1 * 64 * 8 / 1
    # linear order: the boundary joins local ranks 1 and 0 -> every NIC send forwarded once
    sends = 2 * (2 - 1) + 2 * 8 * 1
    assert ro["forward"] == pytest.approx(sends * D_p / 1000.0)
    assert ro["total"] - opt["total"] == pytest.approx(ro["forward"])
    snake = it.iteration_time(TINY, plat, 8, 16, s, knobs=NO_LAT, network="rail-only")
    assert snake["forward"] == 0 and snake["total"] == pytest.approx(opt["total"])


def test_closed_form_forwarding_matches_the_explicit_layout():
    import itertools
    import numpy as np
    from aifabric.models.railonly import placement as pl
    for t_h, t_l, p_h, p_l, d_l, v in itertools.product((1, 2), (1, 2), (1, 2, 3), (1, 2, 3),
                                                        (1, 2), (1, 2)):
        s = it.Strategy(t_h * t_l, p_h * p_l, 2 * d_l, 1, v, t_h, p_h, 2)
        arrays = {k: np.array([float(getattr(s, k))]) for k in it.FIELDS}
        for order in ("snake", "linear"):
            links = pl.pipeline_links(s, order)
            crossing, cross_rail = it.forwarded_links(arrays, order)
            assert links["pp"] == (int(crossing[0]), int(cross_rail[0])), (s, order)
            assert links["tp"][1] == 0 and links["dp"][1] == 0   # hierarchical: on rails
        if p_h > 1 and p_l > 1:
            assert pl.pipeline_links(s, "linear")["pp"][1] > 0


def test_memory_knobs_by_hand():
    st = {k: np.float64(v) for k, v in dict(t=2, p=2, d=4, b=1, v=1).items()}
    # first stage: (4 * 49,984 / 2 + 16 * 64) / 2 = 50,496 parameters per GPU
    params = (4 * TINY.block_params / 2 + 16 * 64) / 2
    acts_sel = 34 * 8 * 1 * 64 / 2 * 2 * 2      # 34 s b h / t x l/p layers x min(p, m)
    assert it.memory(TINY, st, 16) == pytest.approx(16 * params + acts_sel)
    assert it.memory(TINY, st, 16, it.Knobs(zero=1)) == pytest.approx(
        (4 + 12 / 4) * params + acts_sel)
    assert it.memory(TINY, st, 16, it.Knobs(recompute="full")) == pytest.approx(
        16 * params + 2 * 8 * 64 / 2 * 2 * 2)


def test_tp_inside_hb_only():
    c = it.candidates(MODELS["gpt-146b"], 1024, 512, 8, tp="hb")
    assert len(c["t"]) and (c["t_h"] == c["t"]).all() and (c["t"] <= 8).all()
    full = it.candidates(MODELS["gpt-146b"], 1024, 512, 8)
    assert (full["t"] > full["t_h"]).any()


def test_one_efficiency_predicts_the_measured_runs():
    # one efficiency for every model; the calibration run reproduces its measured time
    eta = it.calibrate_efficiency()
    assert it.efficiency_of(PLATFORMS["dgx-h100"]) == eta
    cal = it.CALIBRATION
    t = it.run_time(cal, PLATFORMS["dgx-a100"], it.DEFAULT.with_(recompute="full"))
    assert t == pytest.approx(cal.time_full, rel=1e-6)
    # independent data: the selective-recompute HFUs Korthikanti et al. measured. GPT-1T is
    # predicted within the paper's own 1.8 %; the error grows as the model shrinks (the
    # paper's observation), and at 22B it exceeds the paper's 10.8 %.
    err = {r.model: abs(it.predicted_hfu(r) / r.hfu - 1) for r in KORTHIKANTI}
    assert err["gpt-1t"] < 0.018
    assert err["gpt-22b"] > err["gpt-175b"] > err["gpt-530b"]
    assert err["gpt-22b"] > 0.108


def test_bad_input():
    m = MODELS["gpt-1t"]
    with pytest.raises(ValueError, match="dividing gpus"):
        it.candidates(m, 1000, 512, 256)
    with pytest.raises(ValueError, match="efficiency must be in"):
        PLATFORMS["dgx-a100"].with_(efficiency=1.5)
    with pytest.raises(ValueError, match="recompute"):
        m.flops(1, "partial")
    for kw, msg in ((dict(tp="x"), "tp must be"), (dict(zero=3), "zero must be"),
                    (dict(alpha_hb=-1e-6), "alpha_hb must be"), (dict(algo="mesh"), "algo"),
                    (dict(max_micro=0), "max_micro"), (dict(placement="x"), "placement"),
                    (dict(recompute="some"), "recompute")):
        with pytest.raises(ValueError, match=msg):
            it.Knobs(**kw)
    with pytest.raises(ValueError, match="network must be"):
        it.iteration_time(TINY, PLATFORMS["dgx-a100"], 8, 8, it.Strategy(1, 1, 8, 1, 1, 1, 1, 8),
                          network="fat-tree")
