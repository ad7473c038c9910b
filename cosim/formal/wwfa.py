"""Formal harness of the wrapped wave-front arbiter (:mod:`rtl.chronos.wwfa`).

Promises, from the block's docstring: ``grants`` in cycle t + latency answers ``requests`` of
cycle t (latency 1 for the one-cycle arbiter, ``ceil(N / band) + 2`` pipelined); every grant
was requested; at most one grant per row and per column; the matching is maximal (a requested
cell left out has its row or its column granted); and the priority diagonal rotates every
cycle, so a request held constantly is granted within N answers.

Induction needs one invariant: the per-row rotation counters stay ``a_i = (p - i) mod N`` of
the one priority diagonal, and the rotate-back counters of the pipelined arbiter ``a_i`` of
the priority ``latency - 1`` cycles ago (without it k-induction starts from counters no reset
reaches). The pipeline's stage registers need none: an induction longer than the latency
starts after every one of them was written from the requests.
"""

from amaranth.hdl import Module, Signal

from . import Harness, Property, any_const, any_seq, block_module, elaborate, named

MODULE = "aifabric.rtl.chronos.wwfa"


def latency(n, band):
    """The documented latency (the harness states it; it does not read the block's)."""
    return 1 if band == 0 else -(-n // band) + 2


def build(params, mutant_spec=None):
    n, band = params["n"], params["band"]
    lat = latency(n, band)
    dut = block_module(MODULE, mutant_spec).WavefrontArbiter(n=n, band=band)
    frag = elaborate(dut)
    m = Module()
    m.submodules.dut = frag
    req = Signal(n * n)
    m.d.comb += [req.eq(any_seq(n * n)), dut.requests.eq(req)]
    req_q = req
    for k in range(lat):                    # at the end: the requests the grants answer
        delayed = Signal(n * n, name=f"req_q{k}")
        m.d.sync += delayed.eq(req_q)
        req_q = delayed
    g = dut.grants

    def cell(v, i, j):
        return v[i * n + j]

    subset = (g & ~req_q) == 0
    one_row = [sum(cell(g, i, j) for j in range(n)) <= 1 for i in range(n)]
    one_col = [sum(cell(g, i, j) for i in range(n)) <= 1 for j in range(n)]
    row_any = [g[i * n:(i + 1) * n].any() for i in range(n)]
    col_any = [sum((cell(g, i, j) for i in range(n)), start=0) != 0 for j in range(n)]
    maximal = [~cell(req_q, i, j) | cell(g, i, j) | row_any[i] | col_any[j]
               for i in range(n) for j in range(n)]

    # Fairness, of one free cell (i, j): the number of consecutive answers in which it was
    # requested and not granted stays below N.
    ci, cj = any_const(range(n)), any_const(range(n))
    sel = Signal(range(n * n))
    m.d.comb += sel.eq(ci * n + cj)
    denied = Signal(range(n + 2))
    pending = req_q.bit_select(sel, 1) & ~g.bit_select(sel, 1)
    with m.If(pending):
        with m.If(denied <= n):             # saturates above N (the check fails first)
            m.d.sync += denied.eq(denied + 1)
    with m.Else():
        m.d.sync += denied.eq(0)
    fair = denied < n

    def all_of(xs):
        out = xs[0]
        for x in xs[1:]:
            out = out & x
        return out

    checks = {
        "grants_requested": subset,
        "one_per_row_col": all_of(one_row + one_col),
        "maximal": all_of(maximal),
        "fair": fair,
    }
    rot = [named(frag, f"rot{i}") for i in range(n)]
    # (at an N that is not a power of two the counter's field also holds N .. 2^b - 1,
    # values no reset reaches)
    invariants = [rot[0] < n] + [rot[i] == (rot[0] + n - i) % n for i in range(1, n)]
    if band:
        back = [named(frag, f"unrot{i}") for i in range(n)]
        lag = (lat - 1) % n
        invariants += [back[i] == (rot[0] + 2 * n - lag - i) % n for i in range(n)]
    return Harness(m, checks, invariants)


MUTANTS = {
    # the grant of a cell ignores the column token: two grants in one column
    "grants_requested": ("g.eq(stepped[i][s] & row_free[i] & col_free[i])",
                         "g.eq((stepped[i][s] | (s == n - 1)) & row_free[i] & col_free[i])"),
    "one_per_row_col": ("cf.eq(col_free[i] & ~g)", "cf.eq(col_free[i])"),
    "maximal": ("rf.eq(row_free[i] & ~g)", "rf.eq(row_free[i] & ~stepped[i][s])"),
    "fair": ("stepped = Mux(a == n - 1, 0, (a + 1)[:len(a)])", "stepped = a"),
}
MUTANT_TEXT = {
    "grants_requested": "the last wave step grants without a request",
    "one_per_row_col": "a granted cell does not take its column token (a dropped token)",
    "maximal": "a request denied by its column still takes its row token",
    "fair": "the priority diagonal never rotates",
}


def _builder(name):
    def build_one(params, mutant):
        return build(params, MUTANTS[name] if mutant else None)
    return build_one


PROPERTIES = [
    Property("wwfa", name, promise, {"n": n, "band": band}, "prove", depth + lat - 1,
             _builder(name), MUTANT_TEXT[name], mutant_depth=mdepth + lat - 1,
             ci=(n == 5 and name == "one_per_row_col"))
    # N = 5: the rotation counters' 3-bit field also holds 5..7, so a wrap at 2^bits instead
    # of N shows (at N = 4 and 8 the two are the same). N = 5 in bands of 2 (the last of one
    # step) first: `aifabric mutate` judges mutants at each property's first set, and the
    # registry's default arbiter is pipelined; N = 4: the one-cycle arbiter; N = 8: one band.
    for n, band in ((5, 2), (4, 0), (8, 8))
    for lat in (latency(n, band),)
    for name, promise, depth, mdepth in (
        ("grants_requested", "every grant was requested in the cycle it answers", 2, 6),
        ("one_per_row_col", "at most one grant per row and per column", 2, 6),
        ("maximal", "no requested cell is left with its row and column both free", 2, 6),
        ("fair", "a request held constantly is granted within N cycles", n + 2, 2 * n + 2),
    )
]
