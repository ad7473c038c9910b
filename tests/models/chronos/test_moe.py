"""MoE traffic matrices: seeded, skewed as the paper describes, volumes consistent."""

import numpy as np
import pytest

from aifabric.models.chronos.moe import expert_popularity, moe_traffic_matrix


def test_seeded_and_reproducible():
    a = moe_traffic_matrix(16, np.random.default_rng(3))
    b = moe_traffic_matrix(16, np.random.default_rng(3))
    c = moe_traffic_matrix(16, np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_volumes_and_units():
    rng = np.random.default_rng(5)
    tokens = moe_traffic_matrix(16, rng, unit="tokens", local=True)
    assert tokens.sum() == 16 * 8192                   # every token routed once (top-1)
    rng = np.random.default_rng(5)
    remote = moe_traffic_matrix(16, rng, unit="bytes")
    assert (np.diag(remote) == 0).all()                # own expert: stays on the GPU
    np.testing.assert_array_equal(remote, (tokens - np.diag(np.diag(tokens))) * 16384 * 2)


def test_hot_experts_take_the_stated_share():
    rng = np.random.default_rng(9)
    for _ in range(50):
        p = expert_popularity(16, rng)
        top4 = np.sort(p)[-4:].sum()
        assert p.sum() == pytest.approx(1.0)
        assert 0.5 - 1e-9 <= top4 <= 1.0
    # Over many iterations the hot share spans the stated range (up to 80%).
    hot = [np.sort(expert_popularity(16, rng))[-4:].sum() for _ in range(400)]
    assert max(hot) > 0.75 and min(hot) < 0.6


@pytest.mark.parametrize("kwargs,message", [
    ({"n": 1}, "'n' must be an int >= 2"),
    ({"n": 16, "unit": "flits"}, "'unit' must be 'bytes' or 'tokens'"),
    ({"n": 16, "hot_share": (0.9, 0.2)}, "0 <= low <= high <= 1"),
    ({"n": 16, "hot_experts": 17}, "'hot_experts' must be an int 1..16"),
    ({"n": 16, "seq_len": 0}, "'seq_len' must be an int >= 1"),
])
def test_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        moe_traffic_matrix(rng=np.random.default_rng(0), **kwargs)


def test_rng_must_be_a_generator():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        moe_traffic_matrix(16, 42)
