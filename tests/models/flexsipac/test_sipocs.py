"""SiP-ML's circuit steering for SiP-OCS: the exact ILP against brute force, the circulant
restriction against the exact ILP and against its own MILP, the certificates at the
experiments' job sizes, degree bounds and per-OCS matchings, routes, bad input."""

import numpy as np
import pytest

from aifabric.models.flexsipac import fabrics, sipocs


def uniform(s):
    return np.ones((s, s)) - np.eye(s)


def circulant(g):
    g = np.asarray(g, dtype=float)
    s = len(g)
    return g[(np.arange(s)[None, :] - np.arange(s)[:, None]) % s]


def maximal_circuit_sets(s, Q):
    """Every circuit multiset with out- and in-degree <= Q to which no circuit can be added
    (adding circuits never lowers lam, so the optimum is among these)."""
    pairs = [(i, j) for i in range(s) for j in range(s) if i != j]
    x = np.zeros((s, s), dtype=int)
    out = []

    def rec(p):
        if p == len(pairs):
            r, c = x.sum(1), x.sum(0)
            if all(r[i] == Q or c[j] == Q for i, j in pairs):
                out.append(x.copy())
            return
        i, j = pairs[p]
        for v in range(min(Q - x[i].sum(), Q - x[:, j].sum()) + 1):
            x[i, j] = v
            rec(p + 1)
        x[i, j] = 0

    rec(0)
    return out


def degrees_ok(x, Q):
    return (np.diag(x) == 0).all() and (x >= 0).all() and (x.sum(1) <= Q).all() \
        and (x.sum(0) <= Q).all()


def random_traffic(s):
    T = np.random.default_rng(s).integers(0, 4, (s, s)).astype(float)
    np.fill_diagonal(T, 0)
    return T


def ring_and_one(s):
    T = np.roll(np.eye(s), 1, axis=1)
    T[0, s // 2] = 3.0
    return T


TRAFFIC = {"uniform": uniform, "random": random_traffic, "ring+one": ring_and_one}


@pytest.mark.parametrize("s,Q", [(3, 1), (3, 2), (4, 1), (4, 2), (5, 1)])
@pytest.mark.parametrize("kind", list(TRAFFIC))
def test_exact_ilp_equals_brute_force(s, Q, kind):
    T = TRAFFIC[kind](s)
    if not T.any():
        T[0, 1] = 1.0
    brute = max(sipocs.max_concurrent_flow(x, T) for x in maximal_circuit_sets(s, Q))
    got = sipocs.steer_exact(T, Q)
    assert got.optimal
    assert got.lam == pytest.approx(brute, rel=1e-6)
    assert degrees_ok(got.circuits, Q)
    # lam on the chosen circuits, one commodity per (source, destination) pair
    assert sipocs.max_concurrent_flow(got.circuits, T, per_pair=True) == \
        pytest.approx(got.lam, rel=1e-6)
    assert got.lam <= sipocs.moore_bound(T, Q) * (1 + 1e-9)


@pytest.mark.parametrize("s,Q", [(3, 1), (3, 2), (4, 1), (4, 2), (4, 3), (4, 4), (5, 2),
                                 (5, 3), (5, 5)])
def test_circulant_optimum_equals_exact_on_small_uniform_jobs(s, Q):
    exact = sipocs.steer_exact(uniform(s), Q)
    circ = sipocs.steer(uniform(s), Q)
    assert exact.optimal and circ.optimal
    assert circ.lam == pytest.approx(exact.lam, rel=1e-6)


def test_circulant_restriction_can_lose():
    # non-uniform circulant traffic on 5 CUs with 2 OCSs: no circulant reaches the optimum
    T = circulant([0, 2, 1, 2, 2])
    exact = sipocs.steer_exact(T, 2)
    circ = sipocs.steer(T, 2)
    assert circ.optimal and circ.method == "circulant MILP"
    assert circ.lam <= exact.lam * (1 + 1e-9)
    assert circ.lam < exact.lam * (1 - 1e-3)


@pytest.mark.parametrize("s,Q", [(8, 8), (9, 9), (12, 12), (20, 8), (24, 8), (10, 3)])
def test_certificates_equal_the_circulant_milp(s, Q):
    g = np.ones(s)
    g[0] = 0
    x, lam, bound, optimal = sipocs._circulant_milp(s, g, Q, 1.0, 60)
    assert optimal
    got = sipocs.steer(uniform(s), Q)
    assert got.optimal
    assert got.lam == pytest.approx(lam, rel=1e-6)


@pytest.mark.parametrize("s,Q", [(16, 16), (32, 16), (48, 16), (64, 16), (64, 64),
                                 (128, 64), (512, 64)])
def test_experiment_job_sizes_are_certified(s, Q):
    got = sipocs.steer(uniform(s), Q)
    assert got.optimal and got.lam == pytest.approx(got.bound)
    assert degrees_ok(got.circuits, Q)
    assert sum(got.offsets.values()) == Q
    # the circuits are the offsets, every CU alike
    i = np.arange(s)
    for o, n in got.offsets.items():
        assert (got.circuits[i, (i + o) % s] == n).all()
    if s - 1 > Q:       # sparse: the general Moore bound, so optimal for the unrestricted ILP
        assert got.lam == pytest.approx(sipocs.moore_bound(uniform(s), Q))
    # single paths: each ends at its offset, uses steered offsets in increasing order (so
    # the channel dependencies are acyclic: no credit deadlock), loads give lam_routed
    load = {}
    for d, p in got.paths.items():
        assert sum(p) % s == d and all(o in got.offsets for o in p)
        assert all(a < b for a, b in zip(p, p[1:]))
        for o in p:
            load[o] = load.get(o, 0) + 1
    assert got.lam_routed == pytest.approx(1 / max(load[o] / got.offsets[o] for o in load))
    assert got.lam_routed <= got.lam * (1 + 1e-9)
    # unsplit routes put whole pairs on circuits: the best possible worst load is the
    # average rounded up (sparse), or every pair direct (dense)
    best = 1 / np.ceil(1 / got.lam - 1e-9) if s - 1 > Q else Q // (s - 1)
    assert got.lam_routed == pytest.approx(best)


@pytest.mark.parametrize("s,Q", [(16, 16), (24, 8)])
def test_lam_matches_an_independent_lp_on_the_chosen_circuits(s, Q):
    got = sipocs.steer(uniform(s), Q)
    assert sipocs.max_concurrent_flow(got.circuits, uniform(s)) == \
        pytest.approx(got.lam, rel=1e-6)


def test_capacity_and_traffic_scale_lam():
    a = sipocs.steer(uniform(24), 8)
    b = sipocs.steer(3 * uniform(24), 8, capacity=6.0)
    assert b.lam == pytest.approx(2 * a.lam)


@pytest.mark.parametrize("case", [("exact", 4, 2), ("circulant", 64, 64),
                                  ("circulant", 32, 16)])
def test_circuits_split_into_one_matching_per_ocs(case):
    kind, s, Q = case
    T = TRAFFIC["random"](s) if kind == "exact" else uniform(s)
    x = (sipocs.steer_exact if kind == "exact" else sipocs.steer)(T, Q).circuits
    ocs = sipocs.ocs_matchings(x, Q)
    assert len(ocs) == Q
    back = np.zeros_like(x)
    for circuits in ocs:
        src = [i for i, _ in circuits]
        dst = [j for _, j in circuits]
        assert len(set(src)) == len(src) and len(set(dst)) == len(dst)    # a matching
        for i, j in circuits:
            back[i, j] += 1
    assert (back == x).all()


def test_bad_input():
    with pytest.raises(ValueError, match="T must be a square"):
        sipocs.steer_exact(np.ones((2, 3)), 1)
    with pytest.raises(ValueError, match="T must be finite and nonnegative"):
        sipocs.steer_exact(-uniform(3), 1)
    with pytest.raises(ValueError, match="T must have a zero diagonal"):
        sipocs.steer_exact(np.ones((3, 3)), 1)
    with pytest.raises(ValueError, match="T has no traffic"):
        sipocs.steer(np.zeros((3, 3)), 1)
    for Q in (0, 1.5, True, None, "2"):
        with pytest.raises(ValueError, match="Q .* must be an integer >= 1"):
            sipocs.steer(uniform(3), Q)
    for capacity in (0, -1.0, float("nan"), "fast"):
        with pytest.raises(ValueError, match="capacity must be a number > 0"):
            sipocs.steer(uniform(3), 1, capacity=capacity)
    T = TRAFFIC["random"](9)
    with pytest.raises(ValueError, match="T is not circulant and has 9 CUs"):
        sipocs.steer(T, 2)
    with pytest.raises(ValueError, match="out- and in-degree <= Q"):
        sipocs.ocs_matchings(2 * (np.ones((3, 3), int) - np.eye(3, dtype=int)), 3)


def test_sip_ocs_fabric_uses_the_steering():
    sizes = [16, 16, 32]
    fab = fabrics.build("sip-ocs", sizes, r=4, L=3, w=12, rate_gbps=8)
    bw, Q = 12 * 8e9 / 8, 16
    assert fab.ocs == Q
    for s, job0 in ((16, 0), (32, 32)):
        st = fab.steering[s]
        assert st.optimal
        for o, n in st.offsets.items():
            for i in range(s):
                link = fab.links[(job0 + i, job0 + (i + o) % s)]
                assert link.bandwidth == pytest.approx(n * bw / Q)
        # every route is the steering's path of offsets, rotated to the source
        for a in range(s):
            for b in range(s):
                if a != b:
                    path = fab.route(job0 + a, job0 + b)
                    steps = [(v - u) % s for u, v in zip(path, path[1:])]
                    assert tuple(steps) == st.paths[(b - a) % s]
                    assert all((u, v) in fab.links for u, v in zip(path, path[1:]))
    out = {}
    for (u, v), link in fab.links.items():
        out[u] = out.get(u, 0.0) + link.bandwidth
    assert all(out[x] == pytest.approx(bw) for x in range(64))
    with pytest.raises(ValueError, match="unreachable"):
        fab.route(0, 16)


def test_sip_ocs_routes_cannot_deadlock():
    # the credit-based simulator deadlocks (NaN JCT) on cyclic channel dependencies; with
    # offsets in increasing order along every route there are none
    import networkx as nx
    fab = fabrics.build("sip-ocs", [48, 16], r=4, L=3)
    cdg = nx.DiGraph()
    for job in (range(48), range(48, 64)):
        for a in job:
            for b in job:
                if a != b:
                    p = fab.route(a, b)
                    cdg.add_edges_from(zip(zip(p, p[1:]), zip(p[1:], p[2:])))
    assert cdg.number_of_edges() and nx.is_directed_acyclic_graph(cdg)
