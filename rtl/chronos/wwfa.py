"""Wrapped wave-front arbiter (Tamir & Chi, IEEE TPDS 1993).

The arbiter matches N inputs to N outputs, one matching per clock cycle. Cell ``(i, j)`` of
the request matrix lies on wrapped diagonal ``(i + j) mod N``; the cells of one diagonal share
no row and no column, so a whole diagonal is decided at once. Starting from the priority
diagonal ``p`` the wave visits diagonals ``p, p+1, ..., p+N-1 (mod N)`` and grants a requested
cell when neither its row nor its column was granted on an earlier diagonal. The priority
diagonal rotates every cycle, which makes the arbiter fair: a request held constantly is
granted within N cycles.

Hardware structure
------------------
The textbook array passes "row free" tokens from cell ``(i, j-1)`` to ``(i, j)`` and "column
free" tokens from ``(i-1, j)`` to ``(i, j)``, both with wrap-around, and forces the tokens to 1
on the priority diagonal. That netlist is a combinational loop (only broken logically by the
priority), which static timing, ABC and Verilator all reject or mis-handle.

This implementation is loop-free. It indexes each row by *step* ``s = (i + j - p) mod N``, the
position of cell ``(i, j)`` in the wave. In (row, step) coordinates the row token of ``(i, s)``
comes from ``(i, s-1)`` and the column token from ``(i-1 mod N, s-1)`` (the previous cell of the
same column is one row up, one step earlier). Steps do not wrap, so every token flows from step
``s-1`` to step ``s`` and the array is acyclic; step 0 starts with all tokens free. Row ``i`` is
brought into step order by rotating it right by ``(p - i) mod N`` and the grants are rotated
back by the same amount, two log-depth barrel rotators per row.

Pipelining
----------
With ``band = 0`` the rotators and the whole wave lie in one cycle (latency 1): its path is
two rotators plus N wave steps. With ``band = b >= 1`` the arbiter is a pipeline of
``ceil(N / b) + 2`` stages: the rotated rows are registered, the wave runs in diagonal bands of
``b`` steps (the last band takes the remainder), one band per cycle, and the grants are rotated
back into a register. Between bands a stage register holds, per row, the grants of the steps
already decided, the requests of the steps still to come and the row and column tokens. Every
band works on a different matching, so one matching completes per cycle: the sequence of
matchings (and of priorities) is exactly that of the one-cycle arbiter, delivered
``ceil(N / b) + 1`` cycles later. The rotate-back uses a second set of rotation counters that
lag the first by the pipeline's depth, so no rotation amount travels down the pipeline.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params

__all__ = ["WavefrontArbiter", "N_MIN", "N_MAX", "rotation_counters", "wave_grants", "wave_steps",
           "wave_band", "from_steps", "band_bounds"]

N_MIN = 2
N_MAX = 128


def _rotate(m, value, amount, *, right):
    """Barrel-rotate ``value`` by the run-time ``amount`` (< len(value)), one 2:1 mux stage per
    bit of ``amount``. Built from constant rotations so that every operand has its exact width
    (a variable shift of a doubled vector lints with width warnings)."""
    out = value
    for k in range(len(amount)):
        step = (1 << k) % len(value)
        moved = out.rotate_right(step) if right else out.rotate_left(step)
        stage = Signal(len(value), name="_rotate")
        m.d.comb += stage.eq(Mux(amount[k], moved, out))
        out = stage
    return out


def rotation_counters(m, n, *, advance=None, restart=None, lag=0, name="rot"):
    """The per-row rotation amounts ``a_i = (p - i) mod n`` of the priority diagonal ``p``, one
    counter per row (reset to ``-i mod n``) so that no subtractor sits on the critical path.
    Row 0's counter is ``p`` itself. The counters advance by one when ``advance`` is high
    (every cycle when it is None) and return to ``p = 0`` when ``restart`` is high. With
    ``lag = d`` they hold the amounts of the priority ``p - d`` instead (reset to
    ``-(d + i) mod n``): the priority of ``d`` cycles ago, when they advance every cycle."""
    rot = [Signal(range(n), name=f"{name}{i}", init=(-lag - i) % n) for i in range(n)]
    for i, a in enumerate(rot):
        stepped = Mux(a == n - 1, 0, (a + 1)[:len(a)])
        if restart is not None:
            m.d.sync += a.eq(Mux(restart, (-lag - i) % n,
                                 stepped if advance is None else Mux(advance, stepped, a)))
        elif advance is None:
            m.d.sync += a.eq(stepped)
        else:
            with m.If(advance):
                m.d.sync += a.eq(stepped)
    return rot


def wave_grants(m, rows, rot):
    """Combinational wave-front matching: ``rows[i]`` is row ``i`` of the request matrix
    (n bits, bit ``j`` = output ``j``) and ``rot`` the rotation amounts of
    :func:`rotation_counters`; returns the grant rows in the same bit order (comb Signals)."""
    n = len(rows)
    # stepped[i][s] = requests[i, (s + a_i) mod n]
    stepped = [_rotate(m, rows[i], rot[i], right=True) for i in range(n)]
    step_grant = wave_steps(m, stepped)
    # Back to column order: grants[i, j] = step_grant[i][(j - a_i) mod n].
    return [from_steps(m, step_grant[i], rot[i], name=f"grant_row{i}") for i in range(n)]


def from_steps(m, step_row, amount, *, name):
    """Row ``i`` of a matrix in step order (bit ``s`` = cell at wave step ``s``) back to
    column order, given the row's rotation amount ``a_i`` of :func:`rotation_counters`."""
    row = Signal(len(step_row), name=name)
    m.d.comb += row.eq(_rotate(m, Cat(*step_row), amount, right=False))
    return row


def wave_steps(m, stepped):
    """The acyclic wave on a request matrix already in (row, step) order: ``stepped[i][s]`` is
    the request of row ``i`` at wave step ``s`` (the cell on diagonal ``p + s``). Returns the
    grants in the same order, ``grants[i][s]`` (comb Signals)."""
    n = len(stepped)
    return wave_band(m, stepped, [Const(1, 1)] * n, [Const(1, 1)] * n, 0, n)[0]


def wave_band(m, stepped, row_free, col_free, first, last):
    """Steps ``first .. last - 1`` of the wave of :func:`wave_steps`, entered with the tokens
    ``row_free[i]`` (row ``i`` still free) and ``col_free[i]`` (the column row ``i`` visits at
    step ``first`` still free; all ones at step 0). Returns ``(grants, row_free, col_free)``:
    ``grants[i][s]`` for the band's steps (None elsewhere) and the tokens entering step
    ``last`` (None when ``last`` is the final step)."""
    n = len(stepped)
    step_grant = [[None] * n for _ in range(n)]
    for s in range(first, last):
        new_row_free = [None] * n
        new_col_free = [None] * n
        for i in range(n):
            # Each token is a Signal so the netlist stays a DAG of small gates rather than
            # one expression tree per cell (which would grow exponentially with n).
            g = Signal(name=f"g{i}_{s}")
            m.d.comb += g.eq(stepped[i][s] & row_free[i] & col_free[i])
            step_grant[i][s] = g
            if s < n - 1:
                rf, cf = Signal(name=f"rf{i}_{s}"), Signal(name=f"cf{i}_{s}")
                m.d.comb += [rf.eq(row_free[i] & ~g), cf.eq(col_free[i] & ~g)]
                new_row_free[i] = rf
                # The column visited by row i at step s is visited by row i+1 at step s+1.
                new_col_free[(i + 1) % n] = cf
        row_free, col_free = new_row_free, new_col_free
    if last == n:
        row_free = col_free = None
    return step_grant, row_free, col_free


def band_bounds(n, band):
    """The wave steps each pipeline stage decides: ``[(0, b), (b, 2b), ..., (.., n)]`` for
    ``band = b >= 1`` (the last band takes the remainder)."""
    return [(lo, min(lo + band, n)) for lo in range(0, n, band)]


class WavefrontArbiter(wiring.Component):
    """N x N wrapped wave-front arbiter with registered grants and a rotating priority.

    Parameters
    ----------
    n : int
        Number of inputs and outputs, 2..128. Keyword-only.
    band : int
        Wave steps per pipeline stage, 0..128, keyword-only. 0: the one-cycle arbiter (both
        rotators and the whole wave in one cycle, latency 1). ``b >= 1``: rotate in, then
        ``ceil(n / b)`` bands of the wave, then rotate out, each in its own cycle (latency
        ``ceil(n / b) + 2``; ``b >= n`` is one band). One matching per cycle either way.

    Members
    -------
    requests : In(n * n)
        Request matrix; bit ``i*n + j`` requests input ``i`` -> output ``j``.
    grants : Out(n * n)
        Grant matrix in the same bit order. Registered: ``grants`` in cycle t + latency
        answers ``requests`` sampled in cycle t under the priority diagonal of cycle t. Zero
        after reset until the first request sampled after it is answered; a reset discards
        the matchings in flight. At most one bit per row and per column is set, every grant
        was requested, and the matching is maximal.

    Attributes
    ----------
    priority : Signal(range(n))
        The priority diagonal the requests of this cycle are matched under: 0 after reset,
        advances by 1 (mod n) every cycle.
    latency : int
        Cycles from a request matrix to its grants.
    """

    def __init__(self, *, n, band=8):
        check_params(self, [("n", n, N_MIN, N_MAX), ("band", band, 0, N_MAX)])
        self._n, self._band = n, band
        super().__init__({
            "requests": In(n * n),
            "grants": Out(n * n),
        })
        self.priority = Signal(range(n))

    @property
    def n(self):
        return self._n

    @property
    def band(self):
        return self._band

    @property
    def latency(self):
        return 1 if self._band == 0 else len(band_bounds(self._n, self._band)) + 2

    def elaborate(self, platform):
        m = Module()
        n = self._n
        rot = rotation_counters(m, n)
        m.d.comb += self.priority.eq(rot[0])
        rows = [self.requests[i * n:(i + 1) * n] for i in range(n)]
        if self._band == 0:
            grant_rows = wave_grants(m, rows, rot)
        else:
            grant_rows = self._pipeline(m, rows, rot)
        for i, row in enumerate(grant_rows):
            m.d.sync += self.grants[i * n:(i + 1) * n].eq(row)
        return m

    def _pipeline(self, m, rows, rot):
        """Rotate in (registered), the wave's bands (each registered), and the rotate-back
        whose result the caller registers as ``grants``."""
        n = self._n
        cells = []                 # cells[i]: row i in step order, one stage register
        for i in range(n):
            reg = Signal(n, name=f"stage0_row{i}")
            m.d.sync += reg.eq(_rotate(m, rows[i], rot[i], right=True))
            cells.append(reg)
        row_free = col_free = [Const(1, 1)] * n
        bounds = band_bounds(n, self._band)
        for k, (lo, hi) in enumerate(bounds, start=1):
            grants, row_free, col_free = wave_band(m, cells, row_free, col_free, lo, hi)
            # decided steps keep their grants, later steps their requests
            nxt = []
            for i in range(n):
                reg = Signal(n, name=f"stage{k}_row{i}")
                m.d.sync += reg.eq(Cat(cells[i][:lo], *grants[i][lo:hi], cells[i][hi:]))
                nxt.append(reg)
            cells = nxt
            if hi < n:             # the tokens entering the next band
                row_free, col_free = self._hold(m, k, "rf", row_free), self._hold(m, k, "cf",
                                                                                   col_free)
        back = rotation_counters(m, n, lag=len(bounds) + 1, name="unrot")
        return [from_steps(m, cells[i], back[i], name=f"grant_row{i}") for i in range(n)]

    @staticmethod
    def _hold(m, k, what, tokens):
        regs = []
        for i, t in enumerate(tokens):
            reg = Signal(name=f"stage{k}_{what}{i}")
            m.d.sync += reg.eq(t)
            regs.append(reg)
        return regs
