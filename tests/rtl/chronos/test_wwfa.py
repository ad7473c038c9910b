"""The WWFA component in Amaranth's simulator, checked cycle by cycle against the golden model,
plus its interface and parameter validation."""

import numpy as np
import pytest
from amaranth.hdl import ClockDomain
from amaranth.lib import wiring

from aifabric.cosim.pysim import run_sync
from aifabric.models.chronos.wwfa import WavefrontArbiter as Model
from aifabric.rtl._util import not_elaborated
from aifabric.rtl.chronos.wwfa import WavefrontArbiter


def to_int(m):
    return sum(1 << k for k, bit in enumerate(m.ravel()) if bit)


def to_matrix(v, n):
    return np.array([(v >> k) & 1 for k in range(n * n)], dtype=bool).reshape(n, n)


def simulate(n, matrices, reset_at=(), band=0):
    """Drive ``matrices`` one per cycle; return the grants after each edge and the priority
    before it. ``reset_at``: cycles during which reset is asserted."""
    cd = ClockDomain("sync")
    dut = WavefrontArbiter(n=n, band=band)
    out = []

    async def bench(ctx):
        for t, req in enumerate(matrices):
            ctx.set(cd.rst, t in reset_at)
            ctx.set(dut.requests, to_int(req))
            p = ctx.get(dut.priority)
            await ctx.tick()
            out.append((p, to_matrix(ctx.get(dut.grants), n)))

    run_sync(bench, domain=cd, dut=dut)
    return out


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_matches_model_cycle_by_cycle(n):
    rng = np.random.default_rng(n)
    matrices = [rng.random((n, n)) < rng.choice([0.0, 0.2, 0.5, 1.0]) for _ in range(4 * n + 40)]
    model = Model(n)
    for t, (req, (p, grants)) in enumerate(zip(matrices, simulate(n, matrices))):
        assert p == t % n, f"cycle {t}: priority {p}"
        assert (grants == model.arbitrate(req)).all(), f"cycle {t}"


# (n, band, latency): one band shorter than n, bands that divide n, a last band of one step,
# a last band shorter than the others, a band of one step, a band longer than n; the
# latencies written out from the documented rule (rotate in, ceil(n / band) bands, rotate out)
PIPELINES = [(2, 1, 4), (5, 2, 5), (5, 8, 3), (7, 3, 5), (8, 4, 4), (9, 4, 5), (6, 6, 3),
             (3, 1, 5)]


@pytest.mark.parametrize("n,band,lat", PIPELINES)
def test_pipeline_delivers_the_models_matchings_latency_cycles_later(n, band, lat):
    rng = np.random.default_rng(100 * n + band)
    dut = not_elaborated(WavefrontArbiter(n=n, band=band))
    assert dut.latency == lat
    matrices = [rng.random((n, n)) < rng.choice([0.0, 0.2, 0.5, 1.0]) for _ in range(3 * n + 30)]
    matrices += [np.zeros((n, n), dtype=bool)] * lat
    trace = simulate(n, matrices, band=band)
    model = Model(n)
    for t, (p, grants) in enumerate(trace):
        assert p == t % n, f"cycle {t}: priority {p}"
        if t < lat - 1:
            assert not grants.any(), f"cycle {t}: grants before the first answer"
        else:
            want = model.arbitrate(matrices[t - lat + 1])
            assert (grants == want).all(), f"cycle {t}: answer to cycle {t - lat + 1}"


@pytest.mark.parametrize("band", [0, 2])
def test_reset_clears_grants_and_priority(band):
    """A reset empties the pipeline: no matching in flight comes out after it."""
    n = 4
    lat = 1 if band == 0 else 4
    full = np.ones((n, n), dtype=bool)
    trace = simulate(n, [full] * 14, reset_at={5, 6}, band=band)
    model = Model(n)
    answers = {}
    for t in range(14):                 # the answer to each non-reset cycle's matrix
        if t in (5, 6):
            model.reset()
        else:
            answers[t + lat - 1] = model.arbitrate(full)
    for t, (p, grants) in enumerate(trace):
        # the matrices of cycles 5 - lat + 1 .. 4 were in flight at the reset: discarded
        if t in answers and not (5 <= t < 7 + lat - 1):
            assert (grants == answers[t]).all(), f"cycle {t}"
        else:
            assert not grants.any(), f"cycle {t}: {np.argwhere(grants).tolist()}"
    assert [p for p, _ in trace] == [0, 1, 2, 3, 0, 1, 0, 0, 1, 2, 3, 0, 1, 2]


@pytest.mark.parametrize("n", [2, 7, 128])
def test_ports(n):
    dut = not_elaborated(WavefrontArbiter(n=n))  # inspected, not simulated
    assert dut.n == n and dut.band == 8
    members = dut.signature.members
    assert set(members) == {"requests", "grants"}
    assert members["requests"].flow == wiring.In and len(dut.requests) == n * n
    assert members["grants"].flow == wiring.Out and len(dut.grants) == n * n


@pytest.mark.parametrize("n", [0, 1, 129])
def test_n_out_of_range(n):
    with pytest.raises(ValueError, match=rf"Parameter 'n' must be in 2\.\.128, not {n}$"):
        WavefrontArbiter(n=n)


@pytest.mark.parametrize("n", [2.5, "8", True])
def test_n_wrong_type(n):
    with pytest.raises(TypeError, match=rf"Parameter 'n' must be an int in 2\.\.128, not {n!r}$"):
        WavefrontArbiter(n=n)


@pytest.mark.parametrize("band,exc,text", [(-1, ValueError, r"must be in 0\.\.128, not -1$"),
                                           (129, ValueError, r"must be in 0\.\.128, not 129$"),
                                           (2.0, TypeError, r"must be an int in 0\.\.128")])
def test_band_out_of_range(band, exc, text):
    with pytest.raises(exc, match=rf"Parameter 'band' {text}"):
        WavefrontArbiter(n=8, band=band)


def test_n_is_keyword_only():
    with pytest.raises(TypeError, match="positional"):
        WavefrontArbiter.__init__(object.__new__(WavefrontArbiter), 8)
