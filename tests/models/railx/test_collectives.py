"""Collective time models against hand-computed values and the paper's approximations."""

import pytest

from aifabric.models.railx import collectives as c


def test_ring_by_hand():
    # 4 processors, 8 bytes, 1 byte/s each way, alpha 1: 3 + 3/4 * 8 / 2 = 6
    assert c.t_ring(4, 8, 1, 1) == pytest.approx(6.0)
    assert c.t_alltoall_step(4, 8, 1, 1) == pytest.approx(1 + 3)


@pytest.mark.parametrize("m,p", [(4, 16), (7, 64), (4, 64)])
def test_closed_forms_are_the_leading_terms(m, p):
    V, n, B, k, a = 2.0 ** 30, 1, 100e9, 4, 300e-9
    assert c.t_2d_ring(m, p, V, n, B, a) == pytest.approx(c.t_2d_ring_approx(m, p, V, n, B, a),
                                                          rel=0.1)
    assert c.t_railx_hierarchical(m, p, V, n, B, k, a) == pytest.approx(
        c.t_railx_approx(m, p, V, n, B, k, a), rel=0.1)
    assert c.t_2d_hyperx(m, p, V, n, B, k, a) == pytest.approx(
        c.t_2d_hyperx_approx(m, p, V, n, B, k, a), rel=0.1)


def test_hierarchical_vs_2d_ring_bandwidth_term():
    """§4.2: the hierarchical bandwidth term (2/k + 1/m)·V/(2nB) beats the 2D ring's V/(2nB)
    exactly when 2/k + 1/m < 1 (k > 2 is necessary; with m = 4 it takes k > 8/3)."""
    for m, k, wins in ((4, 2.5, False), (4, 8 / 3 + 0.01, True), (4, 4, True), (8, 2.5, True),
                       (2, 3, False)):
        hier = c.t_railx_approx(m, 16, 1e12, 1, 100e9, k, 0)
        ring = c.t_2d_ring_approx(m, 16, 1e12, 1, 100e9, 0)
        assert (hier < ring) == wins, (m, k)
    # and it always needs fewer latency steps: 4p vs 4mp
    assert c.t_railx_approx(4, 16, 0, 1, 1, 4, 1) * 4 == c.t_2d_ring_approx(4, 16, 0, 1, 1, 1)


def test_fig15_hierarchical_best_everywhere():
    s = c.Fig15Setup()
    for p in (2, 4, 8, 16, 32, 64):
        for e in range(6, 34, 3):
            t = c.fig15_times(s, p, 2.0 ** e)
            assert min(t, key=t.get) == "hierarchical 2D-Torus", (p, e, t)


def test_node_allreduce_and_errors():
    assert c.t_node_allreduce(1, 4, 8, 1e6, 1, 1e9, 0) == pytest.approx(1e6 / (1e9 / 4))
    assert c.t_node_allreduce(2, 4, 8, 1e6, 1, 1e9, 1) == pytest.approx(32 + 1e6 / (2e9 / 4))
    with pytest.raises(ValueError, match="dims must be 1 or 2"):
        c.t_node_allreduce(3, 4, 8, 1, 1, 1, 0)
    with pytest.raises(ValueError, match="p must be > 0"):
        c.t_ring(0, 1, 1, 1)
    with pytest.raises(TypeError, match="V must be a finite number"):
        c.t_ring(2, float("nan"), 1, 1)


def test_table4_rows():
    cfg = c.ModelConfig(L=8, B=2, N_B=4, S=1024, H=512, V=1000, h_A=8, h_KV=2, I=2048, K=2)
    mp = c.Mapping(T=4, C=2, E=2, D=4, P=2, n_c=1, n_e=1, n_d=1, n_p=1, m=2, k=4, B=1e9,
                   alpha=1e-6)
    # T_1D / T_2D of eq 9 are the one- and two-dimensional cases of T_hD
    assert c._t_multi_dim([(1, 8, False)], 1e6, mp) == pytest.approx(
        c.t_node_allreduce(1, 2, 8, 1e6, 1, 1e9, 1e-6))
    assert c._t_multi_dim([(1, 8, False), (1, 8, False)], 1e6, mp) == pytest.approx(
        c.t_node_allreduce(2, 2, 8, 1e6, 1, 1e9, 1e-6))
    rows = {r["parallelism"]: r for r in c.table4(cfg, mp)}
    assert rows["TP/SP (attention)"]["volume"] == 2 * 1024 * 512 * 2
    assert rows["TP/SP (attention)"]["frequency"] == 4 * 4 * 8 / 2
    assert rows["CP"]["volume"] == pytest.approx(2 * 1024 * 512 * (4 / 8) / 4 * 2)
    assert rows["EP"]["volume"] == pytest.approx(2 * 1024 * 512 * 2 / 8 * 2)
    assert rows["DP (FFN)"]["volume"] == 3 * 512 * 2048 / 4 * 2
    assert rows["PP"]["frequency"] == 8
    # times by hand: TP over the mesh, V/(2knB) per call with n = 2 rails per edge (the four
    # rail counts split two physical dimensions), times the frequency
    v = 2 * 1024 * 512 * 2
    assert rows["TP/SP (attention)"]["time"] == pytest.approx(v / (2 * 4 * 2 * 1e9) * 64)
    # CP: C alpha + V/(2 n_c / m · B) per call
    v = 2 * 1024 * 512 * (4 / 8) / 4 * 2
    assert rows["CP"]["time"] == pytest.approx((2e-6 + v / (2 * 1 / 2 * 1e9)) * 32)
    # DP (FFN): T_2D(n_c, n_d) over C = 2 and D_e = 2 torus dimensions: eq 9's form
    v = 3 * 512 * 2048 / 4 * 2
    assert rows["DP (FFN)"]["time"] == pytest.approx((2 * 2e-6 + 2 * 2e-6 + v / (2 / 2 * 1e9))
                                                     * 8 / 2)
    # DP (vocabulary): the EP dimension is all-to-all (2 alpha), D_e = 2 a torus
    v = 2 * 512 * 1000 / (4 * 2) * 2
    assert rows["DP (vocabulary)"]["time"] == pytest.approx(2e-6 + 4e-6 + v / (2 / 2 * 1e9))
    with pytest.raises(ValueError, match="must be a multiple of EP"):
        c.Mapping(T=4, C=2, E=3, D=4, P=2, n_c=1, n_e=1, n_d=1, n_p=1, m=2, k=4, B=1e9,
                  alpha=0)
    with pytest.raises(ValueError, match="h_A = 8 must be a multiple of h_KV = 3"):
        c.ModelConfig(L=8, B=2, N_B=4, S=1024, H=512, V=1000, h_A=8, h_KV=3, I=2048, K=2)
