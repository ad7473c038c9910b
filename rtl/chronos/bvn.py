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
registers back to them (and to the "anything left" flag, the loop's only control
register): arbiter wave (N diagonals) over registered non-zero flags -> per-row
selection of the matched entry -> ``ceil(log4 N)``-level minimum tree of 4-input nodes ->
subtractors and write-back (the flags and "anything left" are written back beside the
residual: an entry stays non-zero when it was above the weight, and something is left when a
non-zero entry went unmatched, known before the minimum, or a matched one was above it). A step
depends on the previous one (the next request matrix is the residual after subtraction), so
pipeline registers inside this loop would add cycles per step without letting steps overlap;
the loop is therefore kept to a single stage and the clock period is the loop delay.

The residual is held in *wave order*: register ``(i, s)`` holds entry ``(i, (s + p - i) mod N)``
under the current priority diagonal ``p``, i.e. the cell row ``i`` visits at wave step ``s``.
The wave then reads its requests straight from the registers, with no barrel rotator on the
loop (the wave-front arbiter needs two per row, ``ceil(log2 N)`` multiplexer levels each).
Loading places row ``i`` under ``p = 0`` (a fixed rotation by ``i``: wiring); when ``p``
advances, every row moves down one position on write-back (wiring again); only the permutation
sent out is rotated back to column order, and that path ends at the output register, off the
loop. On the ECP5 this took N = 16, W = 10 from 19,131 LUTs at 13.0 MHz to 15,071 at 18.6 MHz
with the same sequence of permutations.

- Load: N / R beats of R rows each (``rows`` = R, 1 by default), one beat per cycle when
  ``load.valid`` is held, into a second bank of N^2 registers, also while the residual is
  being decomposed; the bank is copied into the residual in one cycle once the run before
  has ended and its final step has been taken. A stream of matrices pays the load once: the
  next frame loads while the current one runs. ``load.ready`` is low while the bank holds
  a frame that has not been copied out yet, and a frame's first beat is also refused while
  the final step of the run before waits in an output register, so ``done`` rises for
  every matrix, also under back-to-back loads.
- Latency and time to result: the bank is copied in the cycle after the edge that took
  the last beat; the engine computes the first step in the next cycle, and it is in the
  output register in the cycle after that. With the output always ready, a decomposition
  of S steps occupies the engine ``max(S + 2, N / R)`` cycles from its copy to the next
  frame's (``models.chronos.setting.engine_cycles``): S + 2 from its last load beat to
  its final step, alone or in a back-to-back stream (the load of the next frame hidden
  behind the run), N / R when its run is shorter than the next frame's load.
- Throughput: one step per cycle while ``steps.ready`` is high. The output is a register and
  a skid register behind it: a step computed while the output waits goes to the skid
  register, and the engine stalls only while that is full (no step is lost or repeated), so
  ``steps.ready`` reaches the two output registers and none of the residual's enables.
- ``done`` is high once the final step of the matrix run last has been taken from the output
  registers (for an all-zero matrix, which emits no step, two cycles after its copy) and
  stays high until the next frame's first beat is taken or the next matrix is copied in:
  a consumer that waits for ``done`` has every step. It rises once per matrix, in the
  order they were loaded: with the next frame already loading, the ``done`` seen is still
  the matrix before's, so a consumer of a stream counts its rises.

Load beat format (``load`` stream, payload :func:`load_layout`)
--------------------------------------------------------------
``row``: R x N lanes of 32 bits; in beat ``b``, lane ``k N + j`` is entry ``(b R + k, j)``
(R = 1: lane ``j`` is entry ``(b, j)``); beats are sent in order ``0..N/R-1``; ``last`` marks the
final beat. Lanes are 32 bits whatever W; a lane value ``>= 2**W`` is an overflow. A wider beat
shortens the load from N to N / R cycles (R must divide N).

Errors (``error``, cleared when the next load starts)
----------------------------------------------------
``short``: ``last`` came before N / R beats. ``long``: N / R beats without ``last`` (the engine then
drops beats until ``last``). ``overflow``: an entry does not fit in W bits. A rejected frame is
never copied out of the second bank, so a corrupted matrix is never decomposed and emits no
step (the good matrix before it, if it is still running, goes on).
"""

import functools

from amaranth.hdl import Cat, Const, Module, Mux, Shape, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .._util import check_params, not_elaborated, or_tree
from .wwfa import from_steps, rotation_counters, wave_steps

__all__ = ["BvnEngine", "LANE_BITS", "pack_row", "pack_step", "unpack_step", "N_RANGE", "W_RANGE",
           "load_layout", "step_layout", "error_layout"]

LANE_BITS = 32
N_RANGE = (4, 64)
W_RANGE = (8, 32)


def load_layout(n, rows=1):
    """``row``: ``rows`` x N lanes (lane ``k N + j``: row ``k`` of the beat, column ``j``)."""
    return data.StructLayout({"row": data.ArrayLayout(unsigned(LANE_BITS), n * rows),
                              "last": 1})


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
    """Integer payload of one load beat: ``values`` (R x N ints, each < 2**32, row by row)
    and ``last``; ``n`` is the number of lanes before ``last`` (R x N)."""
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
    rows : int, a divisor of n (default 1)
        Matrix rows per load beat.

    Members
    -------
    load : In(stream.Signature(load_layout(n, rows)))
        The matrix, ``rows`` rows per beat (see the module docstring).
    steps : Out(stream.Signature(step_layout(n, w)))
        One (permutation, weight) step per beat.
    busy : Out(1)
        Decomposing.
    done : Out(1)
        The last loaded matrix is fully decomposed.
    error : Out(error_layout)
        Why the last load was rejected.
    """

    def __init__(self, *, n, w, rows=1):
        check_params(self, [("n", n, *N_RANGE), ("w", w, *W_RANGE), ("rows", rows, 1, n)])
        if n % rows:
            not_elaborated(self)
            raise ValueError(f"'rows' must divide n = {n}, not {rows}")
        self._n, self._w, self._rows = n, w, rows
        super().__init__({
            "load": In(stream.Signature(load_layout(n, rows))),
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

    @property
    def rows(self):
        return self._rows

    def elaborate(self, platform):
        m = Module()
        n, w, rows = self._n, self._w, self._rows
        beats = n // rows

        # No reset on the N^2 residual registers, their non-zero flags and the second bank: a
        # frame writes every register of the bank before the bank is copied into the
        # residual, and the copy writes every residual register and flag before a step reads
        # them (``running`` rises only at the copy), so a reset would only load N^2 flops'
        # reset trees.
        resid = [[Signal(w, name=f"r{i}_{t}", reset_less=True) for t in range(n)]
                 for i in range(n)]
        nz = [[Signal(name=f"nz{i}_{t}", reset_less=True) for t in range(n)] for i in range(n)]
        # The second bank: a frame loads here, also while the residual is being decomposed,
        # and is copied into the residual in one cycle once the run before it has ended.
        bank = [[Signal(w, name=f"b{i}_{t}", reset_less=True) for t in range(n)]
                for i in range(n)]
        # One-hot beat pointer: row_at[b] is high while the next beat holds rows b*R .. b*R+R-1.
        row_at = Signal(beats, name="load_row", init=1)
        first_row, last_row = row_at[0], row_at[beats - 1]
        overflow = Signal(name="load_overflow")
        draining = Signal()    # dropping the rest of a too-long frame
        full = Signal()        # the bank holds a good frame not yet copied into the residual
        bank_left = Signal()   # the bank (the rows loaded so far) has a non-zero entry
        running = Signal()     # decomposing the residual
        finished = Signal()    # the matrix run last is decomposed (its final step may wait)
        left = Signal()        # RUN: the residual has a non-zero entry (registered)
        m.d.comb += self.busy.eq(running)

        # ---- output: register and skid register ----------------------------------------------
        # The engine commits a step whenever the skid register is empty, a registered
        # condition: ``steps.ready`` reaches only the two output registers, never the enables
        # of the residual flops. A step committed while the output register waits goes to
        # the skid register, and the output register takes it first when it frees.
        skid_valid = Signal(name="skid_valid")
        skid = Signal(step_layout(n, w), name="skid")
        pending = Signal()     # a step waits in either register
        m.d.comb += pending.eq(self.steps.valid | skid_valid)
        # The run before has ended (or ends this cycle: nothing is left) but its final step
        # still waits: the bank is not copied and no frame begins until it is taken, so
        # ``done`` rises once for every matrix. While something is left, every step out is
        # one before the final.
        final_waits = Signal()
        m.d.comb += final_waits.eq(pending & ~(running & left))
        # Copy the bank into the residual: a good frame waits in it and nothing runs.
        swap = Signal()
        m.d.comb += swap.eq(full & ~running & ~final_waits)

        # ---- load --------------------------------------------------------------------------
        lanes = self.load.payload.row
        take = Signal()
        # The bank takes a beat while it holds no waiting frame, or in the cycle the waiting
        # frame is copied out; a frame's first beat (which clears ``finished``) not while the
        # final step of the run before waits.
        accept = Signal()
        m.d.comb += [accept.eq((~full | swap) & ~draining & ~(final_waits & first_row)),
                     self.load.ready.eq(accept | draining),
                     take.eq(self.load.valid & accept)]
        beat_overflow = Signal()
        if w < LANE_BITS:
            m.d.comb += beat_overflow.eq(Cat(*[lanes[j][w:] for j in range(n * rows)]).any())
        lane_nz = [lanes[j][:w].any() for j in range(n * rows)]
        # An overflow in this frame so far, this beat included. The register holds the earlier
        # beats' only from the second beat on: on the first beat it is the previous frame's
        # (which matters when a frame is one beat, rows = n).
        frame_overflow = Signal()
        m.d.comb += frame_overflow.eq(beat_overflow | (overflow & ~first_row))

        with m.If(swap):
            m.d.sync += [full.eq(0), running.eq(1), left.eq(bank_left), finished.eq(0)]
        with m.If(take):
            with m.If(first_row):
                m.d.sync += [self.error.eq(0), finished.eq(0)]
            m.d.sync += [overflow.eq(frame_overflow),
                         bank_left.eq((bank_left & ~first_row) | Cat(*lane_nz).any())]
            with m.If(self.load.payload.last):
                m.d.sync += row_at.eq(1)
                with m.If(~last_row):
                    m.d.sync += self.error.short.eq(1)
                with m.Elif(frame_overflow):
                    m.d.sync += self.error.overflow.eq(1)
                with m.Else():
                    m.d.sync += full.eq(1)
            with m.Elif(last_row):
                m.d.sync += [row_at.eq(1), draining.eq(1)]
            with m.Else():
                m.d.sync += row_at.eq(row_at.rotate_left(1))
        with m.If(draining & self.load.valid & self.load.payload.last):
            m.d.sync += [draining.eq(0), self.error.long.eq(1)]

        # ---- one step: arbiter, selection, minimum, subtraction ----------------------------
        # The residual is stored in wave order: resid[i][s] is entry (i, (s + a_i) mod n), the
        # cell row i visits at wave step s under the current priority (a_i = (p - i) mod n,
        # the rotation counters). The wave then needs no barrel rotators inside the loop;
        # when the priority advances, every row shifts by one position on writeback (wiring),
        # and only the permutation sent out is rotated back to column order, off the loop.
        # The wave reads the registered non-zero flags: no W-bit OR in front of it.
        commit = Signal()
        m.d.comb += commit.eq(running & left & ~skid_valid)
        rot = rotation_counters(m, n, advance=commit, restart=swap)
        grants = wave_steps(m, nz)               # grants[i][s], wave order

        # Row i's matched entry (the arbiter grants at most one cell per row).
        row_has, sel = [], []
        for i in range(n):
            has, val = Signal(name=f"row_has{i}"), Signal(w, name=f"row_val{i}")
            m.d.comb += [
                has.eq(Cat(*grants[i]).any()),
                val.eq(or_tree(m, [Mux(grants[i][t], resid[i][t], 0) for t in range(n)], w)),
            ]
            row_has.append(has)
            sel.append(val)

        # Minimum over matched rows (unmatched ones count as the largest value).
        weight = min_tree(m, [Mux(row_has[i], sel[i], Const((1 << w) - 1, w))
                              for i in range(n)], w)

        diff, emptied = [], []
        for i in range(n):
            d, e = Signal(w, name=f"diff{i}"), Signal(name=f"emptied{i}")
            m.d.comb += [d.eq(sel[i] - weight), e.eq(sel[i] == weight)]
            diff.append(d)
            emptied.append(e)
        # "Anything left" after this step: an unmatched non-zero entry (known once the wave
        # settles, its N^2-input OR in parallel with the selection and the minimum), or a
        # matched entry above the weight (an N-input OR after the minimum).
        unmatched = Signal()
        m.d.comb += unmatched.eq(or_tree(m, [
            nz[i][t] & ~grants[i][t] for i in range(n) for t in range(n)], 1))
        remaining = Signal()
        m.d.comb += remaining.eq(unmatched | Cat(*[
            row_has[i] & ~emptied[i] for i in range(n)]).any())

        for i in range(n):
            for t in range(n):
                with m.If(take & row_at[i // rows]):
                    # Loaded under priority 0 (a_i = -i): step t holds entry (i, t - i).
                    lane = (i % rows) * n + (t - i) % n
                    m.d.sync += bank[i][t].eq(lanes[lane][:w])
                with m.If(swap):
                    m.d.sync += [resid[i][t].eq(bank[i][t]), nz[i][t].eq(bank[i][t].any())]
                with m.Elif(commit):
                    # The priority advances: the cell at step t + 1 moves to step t.
                    u = (t + 1) % n
                    m.d.sync += [resid[i][t].eq(Mux(grants[i][u], diff[i], resid[i][u])),
                                 nz[i][t].eq(Mux(grants[i][u], ~emptied[i], nz[i][u]))]

        # The permutation in column order (off the loop: it only feeds the output registers).
        col_grants = [from_steps(m, grants[i], rot[i], name=f"grant_row{i}") for i in range(n)]
        # This cycle's step as a payload value (fields in the layout's order: dest, connected,
        # weight, last); dest[i] is the binary encoding of the one-hot grant row i.
        step = Cat(*[Cat(*[Cat(*[col_grants[i][j] for j in range(n) if j >> b & 1]).any()
                           for b in range(Shape.cast(range(n)).width)]) for i in range(n)],
                   *[col_grants[i].any() for i in range(n)], weight, ~remaining)

        # ---- output registers --------------------------------------------------------------
        with m.If(~self.steps.valid | self.steps.ready):
            # the output register frees: the skid's step first, else this cycle's
            m.d.sync += [self.steps.valid.eq(skid_valid | commit),
                         self.steps.payload.eq(Mux(skid_valid, skid, step)),
                         skid_valid.eq(0)]
        with m.Elif(commit):
            m.d.sync += [skid_valid.eq(1), skid.eq(step)]
        # The loop ends at ``left`` alone: the run stops in the cycle after the step that
        # left nothing (that step is then in the output register: no cycle is lost before
        # the next copy, which waits for it to be taken), and at once for an all-zero matrix.
        with m.If(commit):
            m.d.sync += left.eq(remaining)
        with m.If(running & ~left):
            m.d.sync += [running.eq(0), finished.eq(1)]
        # The final step may still wait in an output register: done only once it is taken.
        m.d.comb += self.done.eq(finished & ~pending)

        return m


def min_tree(m, values, width, radix=4):
    """The smallest of ``values`` as a tree of ``radix``-input nodes: a node compares every
    pair of its inputs at once and selects the one below all earlier inputs and not above
    any later one (exactly one input qualifies), so each level costs one comparator and a
    one-hot multiplexer; radix 4 halves the comparator levels of a binary tree."""
    level = list(values)
    depth = 0
    while len(level) > 1:
        depth += 1
        nxt = []
        for k in range(0, len(level), radix):
            group = level[k:k + radix]
            v = Signal(width, name=f"min{depth}_{k // radix}")
            if len(group) == 1:
                m.d.comb += v.eq(group[0])
            else:
                below = {(a, b): group[a] < group[b]
                         for a in range(len(group)) for b in range(len(group)) if a != b}
                picks = []
                for a in range(len(group)):
                    chosen = Cat(*[below[a, b] for b in range(a)],
                                 *[~below[b, a] for b in range(a + 1, len(group))]).all()
                    picks.append(Mux(chosen, group[a], 0))
                m.d.comb += v.eq(or_tree(m, picks, width))
            nxt.append(v)
        level = nxt
    return level[0]
