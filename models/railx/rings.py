"""Rail-ring all-to-all (RailX §3.1, Lemma 3.1, Appendix A.1).

``rail_rings(k)`` decomposes the complete digraph K*_k (every ordered pair of the nodes
0..k-1) into k-1 directed Hamiltonian cycles. Ring j is realised by rail j of every node:
the arc ``c[t] -> c[t+1]`` of ring j is the optical link from node c[t]'s rail-j ``+`` port
to node c[t+1]'s rail-j ``-`` port. Every ordered pair appears on exactly one ring, so every
two nodes A, B are linked on two different rails: A+ <-> B- on one, A- <-> B+ on another.

Odd k = 2M+1: the Walecki construction of A.1. The zig-zag Hamiltonian paths
(i, i-1, i+1, i-2, ..., i+M-1, i-M) mod 2M, i = 0..M-1, closed through vertex 2M, are M
edge-disjoint undirected Hamiltonian cycles; each is used in both directions.

Even k = q+1 (q odd, k >= 8): the q-1 directed Walecki cycles of K*_q, plus one new vertex v.
Given a *rainbow* Hamiltonian path y_0 .. y_{q-1} of K*_q (its q-1 arcs lie on q-1
different Walecki cycles), the arc y_t -> y_{t+1} of cycle c is replaced in c by
y_t -> v -> y_{t+1}, and the path closed through v (y_{q-1} -> v -> y_0) is the k-1-th cycle:
v gets every in- and out-arc once and every old arc stays on exactly one cycle. The rainbow
path is found by a seeded local search (or-opt moves that keep a Hamiltonian cycle through v,
each move steered to bring a missing cycle onto the path); every result is verified before it
is returned, and ``make reproduce`` checks every valid k up to 257 (see
:func:`models.railx.experiments.ring_records`). K*_4 and K*_6 have no decomposition
(Bermond & Faber 1976); k < 3 has no Hamiltonian cycle.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numba
import numpy as np

__all__ = ["rail_rings", "check_rings", "RailLink", "rail_links", "walecki", "NotAnInteger"]


class NotAnInteger(TypeError, ValueError):
    """A size parameter that is not an integer: a TypeError by this project's convention and
    a ValueError for callers that catch every bad parameter value as one."""

# Local-search settings: restarts after _ITERATIONS moves (a stuck search is cheaper to
# restart than to continue). Long candidate segments matter most: with up to 64 nodes per
# moved segment every valid k <= 257 takes about 4 s in all (the slowest k 0.2 s; `make
# reproduce` measures it), k = 512 about 5 s; k in the thousands takes minutes.
_TEMPERATURE = 0.12
_MAX_SEGMENT = 64
_RANDOM_MOVES = 0.05
_ITERATIONS = 500_000
_ATTEMPTS = 400


def _check_k(k) -> None:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise NotAnInteger(f"k must be an int >= 3 other than 4 and 6, not {k!r}")
    if k < 3:
        raise ValueError(f"k must be >= 3 (a directed Hamiltonian cycle needs 3 nodes), "
                         f"not {k}")
    if k in (4, 6):
        raise ValueError(f"k = {k}: the complete digraph K*_{k} has no decomposition into "
                         f"{k - 1} directed Hamiltonian cycles (Bermond & Faber 1976), so "
                         f"{k} nodes cannot be joined all-to-all by rail rings")


def walecki(q: int) -> list[list[int]]:
    """The q-1 directed Hamiltonian cycles of K*_q, q odd >= 3 (Walecki, A.1): cycle i and
    cycle i + (q-1)/2 are the i-th zig-zag cycle in its two directions. Vertex q-1 is the
    vertex the paths are closed through."""
    if q % 2 == 0 or q < 3:
        raise ValueError(f"walecki(q) needs an odd q >= 3, not {q}")
    m = (q - 1) // 2
    n = 2 * m
    forward = []
    for i in range(m):
        path = [i]
        for t in range(1, m):
            path += [(i - t) % n, (i + t) % n]
        path.append((i - m) % n)
        forward.append([n] + path)
    return forward + [c[:1] + c[1:][::-1] for c in forward]


def check_rings(rings, k: int) -> None:
    """Raise ValueError unless ``rings`` are k-1 directed Hamiltonian cycles over 0..k-1 that
    use every ordered pair (a, b), a != b, exactly once."""
    if len(rings) != k - 1:
        raise ValueError(f"{len(rings)} rings for k = {k}; need {k - 1}")
    seen = np.zeros((k, k), dtype=bool)
    for j, ring in enumerate(rings):
        if sorted(ring) != list(range(k)):
            raise ValueError(f"ring {j} is not a Hamiltonian cycle over 0..{k - 1}: {ring}")
        for t in range(k):
            a, b = ring[t], ring[(t + 1) % k]
            if seen[a, b]:
                raise ValueError(f"arc {a} -> {b} is on two rings (ring {j} and another)")
            seen[a, b] = True
    missing = k * (k - 1) - int(seen.sum())
    if missing:
        raise ValueError(f"{missing} ordered pairs are on no ring")


@numba.njit(cache=True)
def _segment_end(nxt, prv, a, length, c):
    """End of the segment of ``length`` vertices starting at ``a``, or -1 if the or-opt move
    'put the segment after c' is not a proper move (segment wraps, c inside it or before it)."""
    b = a
    for _ in range(length - 1):
        b = nxt[b]
        if b == prv[a]:
            return -1
    if nxt[b] == prv[a] or c == prv[a]:
        return -1
    x = a
    for _ in range(length):
        if x == c:
            return -1
        x = nxt[x]
    return b


@numba.njit(cache=True)
def _arc_delta(colour, count, nxt, prv, a, b, c):
    """Change in the number of repeated colours if the segment a..b moves after c."""
    old = (colour[prv[a], a], colour[b, nxt[b]], colour[c, nxt[c]])
    new = (colour[prv[a], nxt[b]], colour[c, a], colour[b, nxt[c]])
    d = 0
    for x in old:
        if x >= 0:
            count[x] -= 1
            if count[x] >= 1:
                d -= 1
    for x in new:
        if x >= 0:
            if count[x] >= 1:
                d += 1
            count[x] += 1
    for x in new:
        if x >= 0:
            count[x] -= 1
    for x in old:
        if x >= 0:
            count[x] += 1
    return d


@numba.njit(cache=True)
def _count(count, missing, where, x, step):
    """count[x] += step, keeping ``missing`` (the colours with count 0, ``missing[0]`` its
    size) and ``where`` (positions in it) up to date."""
    if x < 0:
        return
    if step > 0 and count[x] == 0:          # leaves the missing set
        i, last = where[x], missing[missing[0]]
        missing[i], where[last] = last, i
        missing[0] -= 1
        where[x] = -1
    count[x] += step
    if count[x] == 0:                       # joins the missing set
        missing[0] += 1
        missing[missing[0]] = x
        where[x] = missing[0]


@numba.njit(cache=True)
def _move(colour, count, missing, where, nxt, prv, a, b, c):
    pa, sb, sc = prv[a], nxt[b], nxt[c]
    for x in (colour[pa, a], colour[b, sb], colour[c, sc]):
        _count(count, missing, where, x, -1)
    nxt[pa] = sb
    prv[sb] = pa
    nxt[c] = a
    prv[a] = c
    nxt[b] = sc
    prv[sc] = b
    for x in (colour[pa, sb], colour[c, a], colour[b, sc]):
        _count(count, missing, where, x, 1)


@numba.njit(cache=True)
def _rainbow_cycle(colour, succ, ncolour, start, seed, iterations, temperature, max_segment,
                   random_moves):
    """A Hamiltonian cycle of the k vertices whose coloured arcs (colour >= 0) have pairwise
    different colours; returns its successor array, or an empty array after ``iterations``."""
    np.random.seed(seed)
    n = colour.shape[0]
    nxt = np.empty(n, np.int64)
    prv = np.empty(n, np.int64)
    order = start if len(start) == n else np.random.permutation(n)
    for i in range(n):
        nxt[order[i]] = order[(i + 1) % n]
        prv[order[(i + 1) % n]] = order[i]
    count = np.zeros(ncolour, np.int64)
    missing = np.zeros(ncolour + 1, np.int64)       # missing[0] = size, then the colours
    where = -np.ones(ncolour, np.int64)
    for x in range(ncolour):
        missing[x + 1] = x
        where[x] = x + 1
    missing[0] = ncolour
    repeats = 0
    for a in range(n):
        x = colour[a, nxt[a]]
        if x >= 0:
            if count[x] >= 1:
                repeats += 1
            _count(count, missing, where, x, 1)
    for _ in range(iterations):
        if repeats == 0:
            return nxt
        if np.random.random() < random_moves:
            a = np.random.randint(n)
            c = np.random.randint(n)
            b = _segment_end(nxt, prv, a, 1 + np.random.randint(max_segment), c)
            if b < 0:
                continue
            d = _arc_delta(colour, count, nxt, prv, a, b, c)
            if d <= 0 or np.random.random() < np.exp(-d / temperature):
                _move(colour, count, missing, where, nxt, prv, a, b, c)
                repeats += d
            continue
        # Steered move: bring an arc x -> y of a colour the cycle lacks onto the cycle, by
        # moving the segment that starts at y behind x, or the segment that ends at x in
        # front of y; the best segment length wins.
        m = missing[1 + np.random.randint(missing[0])]
        x = np.random.randint(n)
        y = succ[m, x]
        if y < 0 or nxt[x] == y:
            continue
        best, ba, bb, bc = 1 << 30, -1, -1, -1
        # segments y .. b of growing length, put behind x (x must stay outside)
        b = y
        for length in range(1, max_segment + 1):
            if length > 1:
                b = nxt[b]
                if b == x or b == prv[y]:
                    break
            if nxt[b] == prv[y]:
                break
            d = _arc_delta(colour, count, nxt, prv, y, b, x)
            if d < best or (d == best and np.random.random() < 0.5):
                best, ba, bb, bc = d, y, b, x
        # segments a .. x of growing length, put in front of y (behind c = prv[y])
        c = prv[y]
        a = x
        for length in range(1, max_segment + 1):
            if length > 1:
                a = prv[a]
                if a == c or a == y or a == nxt[x]:
                    break
            if nxt[x] == prv[a]:
                break
            d = _arc_delta(colour, count, nxt, prv, a, x, c)
            if d < best or (d == best and np.random.random() < 0.5):
                best, ba, bb, bc = d, a, x, c
        if ba >= 0 and (best <= 0 or np.random.random() < np.exp(-best / temperature)):
            _move(colour, count, missing, where, nxt, prv, ba, bb, bc)
            repeats += best
    return np.empty(0, np.int64)


def _even(k: int) -> list[list[int]]:
    q = k - 1
    base = walecki(q)
    v = q
    colour = -np.ones((k, k), dtype=np.int64)
    succ = -np.ones((len(base), k), dtype=np.int64)
    for j, ring in enumerate(base):
        for t in range(q):
            a, b = ring[t], ring[(t + 1) % q]
            colour[a, b] = j
            succ[j, a] = b
    for attempt in range(_ATTEMPTS):
        nxt = _rainbow_cycle(colour, succ, len(base), np.empty(0, np.int64), 1 + attempt,
                             _ITERATIONS, _TEMPERATURE, _MAX_SEGMENT, _RANDOM_MOVES)
        if len(nxt):
            break
    else:  # never observed; the caller's contract is a verified result or an error
        raise RuntimeError(f"rail_rings({k}): no rainbow path after {_ATTEMPTS} attempts")
    # The cycle through v, read as the path y_0 .. y_{q-1} from v's successor.
    path = [int(nxt[v])]
    while len(path) < q:
        path.append(int(nxt[path[-1]]))
    rings = [list(r) for r in base]
    where = {(a, b): j for j, ring in enumerate(base) for a, b in zip(ring, ring[1:] + ring[:1])}
    for a, b in zip(path, path[1:]):
        ring = rings[where[(a, b)]]
        ring.insert(ring.index(a) + 1, v)
    rings.append(path + [v])
    return rings


@functools.lru_cache(maxsize=None)
def _rings(k: int) -> tuple[tuple[int, ...], ...]:
    rings = walecki(k) if k % 2 else _even(k)
    # Rotate every ring to start at node 0 (a canonical form; ring order is unchanged).
    rings = [r[r.index(0):] + r[:r.index(0)] for r in rings]
    check_rings(rings, k)
    return tuple(tuple(r) for r in rings)


def rail_rings(k: int) -> list[list[int]]:
    """k-1 directed Hamiltonian cycles over nodes 0..k-1 using every ordered pair (a, b),
    a != b, exactly once; each ring is the list of its k nodes in ring order, starting at 0.

    k >= 3 and k not in {4, 6}; anything else raises ValueError (TypeError for a non-int).
    Deterministic: the same k always gives the same rings.
    """
    _check_k(k)
    return [list(r) for r in _rings(int(k))]


@dataclass(frozen=True)
class RailLink:
    """One optical link of a rail-ring all-to-all: ``src`` node's rail-``rail`` ``+`` port to
    ``dst`` node's rail-``rail`` ``-`` port (full duplex)."""

    rail: int
    src: int
    dst: int


def rail_links(k: int, rails: int | None = None) -> list[RailLink]:
    """The links of a rail-ring all-to-all over k nodes with ``rails`` rails per node
    (default k-1, one per ring). With more rails than rings, rail j realises ring
    j mod (k-1) (2·rails/(k-1) links between every pair when k-1 divides rails); with fewer,
    only the first ``rails`` rings are wired and the topology is not all-to-all."""
    rings = rail_rings(k)
    rails = k - 1 if rails is None else rails
    if not isinstance(rails, int) or isinstance(rails, bool) or rails < 1:
        raise ValueError(f"rails must be a positive int, not {rails!r}")
    out = []
    for rail in range(rails):
        ring = rings[rail % (k - 1)]
        out += [RailLink(rail, ring[t], ring[(t + 1) % k]) for t in range(k)]
    return out
