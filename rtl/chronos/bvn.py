"""BhaVaN-style Birkhoff-von Neumann engine: decomposes an N x N demand matrix into
(permutation, weight) steps with the wrapped wave-front arbiter (Chronos, NAIC'25, §8).

Algorithm (step for step ``models.chronos.bvn.decompose(demand, "wavefront")``)
-------------------------------------------------------------------------------
While the residual matrix ``R`` has a nonzero entry: the wave-front arbiter matches the nonzero
entries (priority diagonal 0 at the first step of every decomposition, +1 per step); the
weight ``w`` is the smallest matched entry; ``w`` is subtracted from every matched entry; the
step (permutation, ``w``) is emitted. The weighted sum of the steps equals the loaded matrix.

Timing
------
One step per clock cycle. The whole step is one combinational path from the residual
registers back to them: nonzero detect -> arbiter wave (N diagonals) -> per-output selection of
the matched entry -> ``ceil(log2 N)``-level minimum tree -> subtractors and write-back. A step
depends on the previous one (the next request matrix is the residual after subtraction), so
pipeline registers inside this loop would add cycles per step without letting steps overlap;
the loop is therefore kept to a single stage and the clock period is the loop delay.

- Load: N beats, one row per beat, one beat per cycle when ``load.valid`` is held.
  ``load.ready`` stays low while the previous matrix's final step waits in the output
  register: the next frame is accepted only once that step is taken, so ``done`` rises for
  every matrix, also under back-to-back loads.
- Latency: the first step is in the output register one cycle after the first ``RUN`` cycle,
  i.e. two cycles after the beat with ``last`` was taken.
- Throughput: one step per cycle while ``steps.ready`` is high; a cycle with ``steps.valid``
  and not ``steps.ready`` stalls the engine (no step is lost or repeated).
- ``done`` is high once the final step has been taken from the output register (or one
  cycle after the load of an all-zero matrix, which emits no step) and stays high until the
  next load starts: a consumer that waits for ``done`` has every step.

Load beat format (``load`` stream, payload :func:`load_layout`)
--------------------------------------------------------------
``row``: N lanes of 32 bits, lane ``j`` is entry ``(i, j)`` of row ``i``; rows are sent in
order ``0..N-1``; ``last`` marks the final (row ``N-1``) beat. Lanes are 32 bits whatever W;
a lane value ``>= 2**W`` is an overflow.

Errors (``error``, cleared when the next load starts)
----------------------------------------------------
``short``: ``last`` came before N beats. ``long``: N beats without ``last`` (the engine then
drops beats until ``last``). ``overflow``: an entry does not fit in W bits. Any error leaves the
engine idle with no step emitted: a corrupted matrix is never decomposed.
"""

import functools

from amaranth.hdl import Cat, Const, Module, Mux, Shape, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params, or_tree
from .wwfa import rotation_counters, wave_grants

__all__ = ["BvnEngine", "LANE_BITS", "pack_row", "pack_step", "unpack_step", "N_RANGE", "W_RANGE",
           "load_layout", "step_layout", "error_layout"]

LANE_BITS = 32
N_RANGE = (4, 64)
W_RANGE = (8, 32)


def load_layout(n):
    return data.StructLayout({"row": data.ArrayLayout(unsigned(LANE_BITS), n), "last": 1})


def step_layout(n, w):
    """``dest[i]``: output of input ``i`` (valid when ``connected[i]``); ``weight``: hold
    count; ``last``: final step of the decomposition."""
    return data.StructLayout({
        "dest": data.ArrayLayout(range(n), n),
        "connected": n,
        "weight": w,
        "last": 1,
    })


error_layout = data.StructLayout({"short": 1, "long": 1, "overflow": 1})


def pack_row(values, last, n):
    """Integer payload of one load beat: ``values`` (N ints, each < 2**32) and ``last``."""
    word = 0
    for j, v in enumerate(values):
        word |= (int(v) & ((1 << LANE_BITS) - 1)) << (j * LANE_BITS)
    return word | (int(bool(last)) << (n * LANE_BITS))


@functools.lru_cache(maxsize=None)
def _step_fields(n, w):
    """Bit offsets of a step payload: (dest, connected, weight, last, dest field width)."""
    layout = step_layout(n, w)
    return (layout["dest"].offset, layout["connected"].offset, layout["weight"].offset,
            layout["last"].offset, Shape.cast(range(n)).width)


def pack_step(perm, weight, last, n, w):
    """Integer payload of one step (``perm[i]`` = output of input i or -1): the inverse of
    :func:`unpack_step`; also the beat format of a schedule stack."""
    dest_at, conn_at, weight_at, last_at, b = _step_fields(n, w)
    word = 0
    for i, j in enumerate(perm):
        if j >= 0:
            word |= int(j) << (dest_at + i * b)
            word |= 1 << (conn_at + i)
    word |= (int(weight) & ((1 << w) - 1)) << weight_at
    return word | (int(bool(last)) << last_at)


def unpack_step(word, n, w):
    """A ``steps`` payload integer -> (perm, weight, last); ``perm[i]`` is input i's output or
    -1 when it is idle (the model's :class:`~models.chronos.bvn.Schedule` convention)."""
    dest_at, conn_at, weight_at, last_at, b = _step_fields(n, w)
    mask = (1 << b) - 1
    conn = word >> conn_at
    dest = word >> dest_at
    perm = [(dest >> (i * b)) & mask if conn >> i & 1 else -1 for i in range(n)]
    return perm, word >> weight_at & ((1 << w) - 1), bool(word >> last_at & 1)


class BvnEngine(wiring.Component):
    """BvN decomposition engine for an N x N matrix of W-bit entries.

    Parameters (keyword-only)
    -------------------------
    n : int, 4..64
    w : int, 8..32

    Members
    -------
    load : In(stream.Signature(load_layout(n)))
        The matrix, one row per beat (see the module docstring).
    steps : Out(stream.Signature(step_layout(n, w)))
        One (permutation, weight) step per beat.
    busy : Out(1)
        Decomposing.
    done : Out(1)
        The last loaded matrix is fully decomposed.
    error : Out(error_layout)
        Why the last load was rejected.
    """

    def __init__(self, *, n, w):
        check_params(self, [("n", n, *N_RANGE), ("w", w, *W_RANGE)])
        self._n, self._w = n, w
        super().__init__({
            "load": In(stream.Signature(load_layout(n))),
            "steps": Out(stream.Signature(step_layout(n, w))),
            "busy": Out(1),
            "done": Out(1),
            "error": Out(error_layout),
        })

    @property
    def n(self):
        return self._n

    @property
    def w(self):
        return self._w

    def elaborate(self, platform):
        m = Module()
        n, w = self._n, self._w

        resid = [[Signal(w, name=f"r{i}_{j}") for j in range(n)] for i in range(n)]
        # One-hot row pointer: row_at[i] is high while the next beat is row i.
        row_at = Signal(n, name="load_row", init=1)
        first_row, last_row = row_at[0], row_at[n - 1]
        overflow = Signal(name="load_overflow")
        loading = Signal(init=1)  # state LOAD: accepting a frame (the state after reset)
        draining = Signal()    # state DRAIN: dropping the rest of a too-long frame
        running = Signal()     # state RUN
        finished = Signal()    # the loaded matrix is decomposed (its final step may wait)
        m.d.comb += self.busy.eq(running)

        # ---- load --------------------------------------------------------------------------
        lanes = self.load.payload.row
        take = Signal()
        # A new frame waits until the previous matrix's final step has been taken: accepting
        # it earlier would clear ``finished`` and ``done`` would never rise for that matrix.
        accept = Signal()
        m.d.comb += [accept.eq(loading & ~self.steps.valid),
                     self.load.ready.eq(accept | draining),
                     take.eq(self.load.valid & accept)]
        beat_overflow = Signal()
        if w < LANE_BITS:
            m.d.comb += beat_overflow.eq(Cat(*[lanes[j][w:] for j in range(n)]).any())
        start = Signal()       # a good frame ended: decompose it
        m.d.comb += start.eq(take & self.load.payload.last & last_row
                             & ~overflow & ~beat_overflow)

        with m.If(take):
            with m.If(first_row):
                m.d.sync += [self.error.eq(0), finished.eq(0)]
            m.d.sync += overflow.eq(Mux(first_row, beat_overflow, overflow | beat_overflow))
            with m.If(self.load.payload.last):
                m.d.sync += row_at.eq(1)
                with m.If(~last_row):
                    m.d.sync += self.error.short.eq(1)
                with m.Elif(overflow | beat_overflow):
                    m.d.sync += self.error.overflow.eq(1)
                with m.Else():
                    m.d.sync += [loading.eq(0), running.eq(1)]
            with m.Elif(last_row):
                m.d.sync += [row_at.eq(1), loading.eq(0), draining.eq(1)]
            with m.Else():
                m.d.sync += row_at.eq(row_at.rotate_left(1))
        with m.If(draining & self.load.valid & self.load.payload.last):
            m.d.sync += [draining.eq(0), loading.eq(1), self.error.long.eq(1)]

        # ---- one step: arbiter, selection, minimum, subtraction ----------------------------
        nz_rows = []
        for i in range(n):
            nz = Signal(n, name=f"nz{i}")
            m.d.comb += nz.eq(Cat(*[resid[i][j].any() for j in range(n)]))
            nz_rows.append(nz)
        any_nz = Signal()
        m.d.comb += any_nz.eq(Cat(*nz_rows).any())

        out_free = Signal()
        commit = Signal()
        m.d.comb += [out_free.eq(~self.steps.valid | self.steps.ready),
                     commit.eq(running & any_nz & out_free)]
        rot = rotation_counters(m, n, advance=commit, restart=start)
        grants = wave_grants(m, nz_rows, rot)

        # Output j's matched entry (the arbiter grants at most one input per output).
        col_has, sel = [], []
        for j in range(n):
            has, val = Signal(name=f"col_has{j}"), Signal(w, name=f"col_val{j}")
            m.d.comb += [
                has.eq(Cat(*[grants[i][j] for i in range(n)]).any()),
                val.eq(or_tree(m, [Mux(grants[i][j], resid[i][j], 0) for i in range(n)], w)),
            ]
            col_has.append(has)
            sel.append(val)

        # Minimum tree over matched outputs (unmatched ones count as the largest value).
        level = []
        for j in range(n):
            v = Signal(w, name=f"min0_{j}")
            m.d.comb += v.eq(Mux(col_has[j], sel[j], Const((1 << w) - 1, w)))
            level.append(v)
        depth = 0
        while len(level) > 1:
            depth += 1
            nxt = []
            for k in range(0, len(level) - 1, 2):
                a, b = level[k], level[k + 1]
                v = Signal(w, name=f"min{depth}_{k // 2}")
                m.d.comb += v.eq(Mux(a < b, a, b))
                nxt.append(v)
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        weight = level[0]

        diff, emptied = [], []
        for j in range(n):
            d, e = Signal(w, name=f"diff{j}"), Signal(name=f"emptied{j}")
            m.d.comb += [d.eq(sel[j] - weight), e.eq(col_has[j] & (sel[j] == weight))]
            diff.append(d)
            emptied.append(e)
        remaining = Signal()
        m.d.comb += remaining.eq(Cat(*[
            nz_rows[i][j] & ~(grants[i][j] & emptied[j]) for i in range(n) for j in range(n)
        ]).any())

        for i in range(n):
            for j in range(n):
                with m.If(take & row_at[i]):
                    m.d.sync += resid[i][j].eq(lanes[j][:w])
                with m.Elif(commit & grants[i][j]):
                    m.d.sync += resid[i][j].eq(diff[j])

        # ---- output register ---------------------------------------------------------------
        with m.If(commit):
            m.d.sync += [
                self.steps.valid.eq(1),
                self.steps.payload.weight.eq(weight),
                self.steps.payload.last.eq(~remaining),
            ]
            for i in range(n):
                m.d.sync += [
                    self.steps.payload.connected[i].eq(grants[i].any()),
                    # binary encoding of the one-hot grant row
                    self.steps.payload.dest[i].eq(Cat(*[
                        Cat(*[grants[i][j] for j in range(n) if j >> b & 1]).any()
                        for b in range(Shape.cast(range(n)).width)])),
                ]
            with m.If(~remaining):
                m.d.sync += [running.eq(0), loading.eq(1), finished.eq(1)]
        with m.Elif(self.steps.ready):
            m.d.sync += self.steps.valid.eq(0)
        with m.If(running & ~any_nz):  # an all-zero matrix: nothing to emit
            m.d.sync += [running.eq(0), loading.eq(1), finished.eq(1)]
        # The final step may still wait in the output register: done only once it is taken.
        m.d.comb += self.done.eq(finished & ~self.steps.valid)

        return m
