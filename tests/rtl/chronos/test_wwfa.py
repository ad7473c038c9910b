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


def simulate(n, matrices, reset_at=()):
    """Drive ``matrices`` one per cycle; return the grants after each edge and the priority
    before it. ``reset_at``: cycles during which reset is asserted."""
    cd = ClockDomain("sync")
    dut = WavefrontArbiter(n=n)
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


def test_reset_clears_grants_and_priority():
    n = 4
    full = np.ones((n, n), dtype=bool)
    trace = simulate(n, [full] * 8, reset_at={3, 4})
    model = Model(n)
    for t, (p, grants) in enumerate(trace):
        if t in (3, 4):
            assert not grants.any() and p == (0 if t == 4 else 3)
            model.reset()
        else:
            assert (grants == model.arbitrate(full)).all(), f"cycle {t}"
    assert [p for p, _ in trace] == [0, 1, 2, 3, 0, 0, 1, 2]


@pytest.mark.parametrize("n", [2, 7, 128])
def test_ports(n):
    dut = not_elaborated(WavefrontArbiter(n=n))  # inspected, not simulated
    assert dut.n == n
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


def test_n_is_keyword_only():
    with pytest.raises(TypeError, match="positional"):
        WavefrontArbiter.__init__(object.__new__(WavefrontArbiter), 8)
