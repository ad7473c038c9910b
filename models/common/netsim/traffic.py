"""Traffic for the network simulator: synthetic patterns, Bernoulli injection, traces.

Randomness is counter-based (splitmix64 of the seed and a key), so every random draw is a
pure function of *which* draw it is, not of the order the simulator happens to make them:
the reference step and the compiled kernel see the same packets, and a sweep point gives the
same result on any worker.

Injection (per chip, ``rate`` flits/cycle, packets of ``length`` flits, injection width W):
W independent Bernoulli streams, each creating a packet in a cycle with probability
q = rate / (W · length). Stream s's j-th packet is created ``gap`` cycles after its previous
one, ``gap = 1 + floor(log(1 - u) / log(1 - q))`` with u = :func:`uniform` (seed, chip, s, j)
(the first: ``gap - 1`` cycles after cycle 0), the geometric law of a Bernoulli process. The
streams feed one unbounded FIFO source queue in creation order (ties: lower stream first), so
the queue never needs storing: its head is the earliest of the W next creation times.
The k-th packet a chip sends goes to ``destination(k)`` of the pattern, drawn with
u = :func:`uniform` (seed, chip, k, -1).

A trace is a list of (cycle, src, dst, flits) rows; ``load_trace`` reads one from CSV.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np

__all__ = ["Traffic", "PATTERNS", "uniform", "uniform_py", "load_trace", "TrafficError",
           "synthesize"]

PATTERNS = ("uniform", "transpose", "bitcomp", "hotspot", "permutation", "trace")
MODE_UNIFORM, MODE_PERM, MODE_HOTSPOT, MODE_TRACE = 0, 1, 2, 3
_MASK = (1 << 64) - 1


class TrafficError(ValueError):
    """A traffic pattern, trace or rate that cannot be simulated."""


def _mix_py(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def uniform_py(seed: int, a: int, b: int, c: int) -> float:
    """The reference definition: a uniform double in [0, 1) keyed by (seed, a, b, c)."""
    seed, a, b, c = (int(x) & _MASK for x in (seed, a, b, c))
    h = _mix_py(seed ^ _mix_py(a ^ _mix_py(b ^ _mix_py(c))))
    return (h >> 11) * 2.0 ** -53


@numba.njit(cache=True, inline="always")
def _mix(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True)
def uniform(seed, a, b, c):
    """:func:`uniform_py`, compiled (equal bit for bit; tested)."""
    h = _mix(np.uint64(seed) ^ _mix(np.uint64(a) ^ _mix(np.uint64(b) ^ _mix(np.uint64(c)))))
    return float(h >> np.uint64(11)) * 1.1102230246251565e-16


@numba.njit(cache=True)
def gap(u, q):
    """Cycles to the next Bernoulli(q) success."""
    if q >= 1.0:
        return 1
    return 1 + int(math.floor(math.log1p(-u) / math.log1p(-q)))


@numba.njit(cache=True)
def destination(mode, perm, hot, hot_frac, n, src, u, u2):
    """The destination of a packet from ``src`` drawn with the uniforms u, u2 (see
    :class:`Traffic`); never ``src`` itself (a permutation's fixed points do not send at all,
    :attr:`Traffic.sends`)."""
    if mode == MODE_PERM:
        return perm[src]
    if mode == MODE_HOTSPOT and u2 < hot_frac:
        h = hot[min(int(u * hot.shape[0]), hot.shape[0] - 1)]
        if h != src:
            return h
        # a hot chip does not send to itself: its hot share goes uniformly to the others
    j = min(int(u * (n - 1)), n - 2)
    return j + 1 if j >= src else j


@dataclass(frozen=True)
class Traffic:
    """A traffic pattern over ``n`` chips with grid coordinates ``coords`` ((x, y) per chip,
    on a ``grid`` of gx x gy).

    - ``uniform``: every other chip equally likely (all-to-all).
    - ``transpose``: (x, y) -> (y, x) on a square grid.
    - ``bitcomp``: chip i -> ~i (n a power of two).
    - ``hotspot``: a fraction ``hot_frac`` of packets to the ``hot`` chips, the rest uniform.
    - ``permutation``: a random permutation of the chips (seeded by ``perm_seed``).
    - ``trace``: the packets of ``trace`` (rows (cycle, src, dst, flits)); no rate.

    A chip never sends to itself (the field's convention; such a packet would eject at once
    and count as accepted throughput without crossing a link): a chip a permutation maps to
    itself (transpose's diagonal, a random permutation's fixed points) sends nothing
    (:attr:`sends`), a hot chip's hotspot share goes uniformly to the other chips, and a trace
    row with src == dst is refused. Offered and accepted throughput stay per chip of the
    whole network.
    """

    pattern: str
    n: int
    perm: np.ndarray
    hot: np.ndarray
    hot_frac: float = 0.0
    trace: np.ndarray | None = None

    @property
    def sends(self) -> np.ndarray:
        """sends[chip]: whether the chip's source creates packets (False at a fixed point of
        a permutation pattern)."""
        if self.mode == MODE_PERM:
            return self.perm != np.arange(self.n)
        return np.ones(self.n, np.bool_)

    @property
    def mode(self) -> int:
        return {"uniform": MODE_UNIFORM, "hotspot": MODE_HOTSPOT,
                "trace": MODE_TRACE}.get(self.pattern, MODE_PERM)

    @classmethod
    def make(cls, pattern: str, coords: np.ndarray, grid: tuple[int, int], *,
             hot: tuple[int, ...] = (0,), hot_frac: float = 0.1, perm_seed: int = 1,
             trace=None) -> Traffic:
        n = len(coords)
        if pattern not in PATTERNS:
            raise TrafficError(f"unknown traffic {pattern!r}; choose one of "
                               f"{', '.join(PATTERNS)}")
        perm = np.arange(n, dtype=np.int64)
        hot_arr = np.zeros(1, np.int64)
        if pattern == "transpose":
            if grid[0] != grid[1]:
                raise TrafficError(f"transpose needs a square grid of chips, not "
                                   f"{grid[0]} x {grid[1]}")
            index = {tuple(map(int, xy)): i for i, xy in enumerate(coords)}
            perm = np.array([index[(int(y), int(x))] for x, y in coords], np.int64)
        elif pattern == "bitcomp":
            if n & (n - 1):
                raise TrafficError(f"bitcomp needs a power-of-two number of chips, not {n}")
            perm = (n - 1) ^ np.arange(n, dtype=np.int64)
        elif pattern == "permutation":
            perm = np.random.default_rng(perm_seed).permutation(n).astype(np.int64)
        elif pattern == "hotspot":
            if not 0 < hot_frac <= 1:
                raise TrafficError(f"hotspot fraction must be in (0, 1], not {hot_frac}")
            hot_arr = np.array(hot, np.int64)
            if not len(hot_arr) or hot_arr.min() < 0 or hot_arr.max() >= n:
                raise TrafficError(f"hotspot chips must be in 0..{n - 1}, not {hot}")
        elif pattern == "trace":
            if trace is None:
                raise TrafficError("traffic 'trace' needs a trace (--trace FILE)")
            trace = check_trace(trace, n)
        return cls(pattern, n, perm, hot_arr, float(hot_frac), trace)


def check_trace(rows, n: int, where: str = "trace", lines=None) -> np.ndarray:
    """Rows (cycle, src, dst, flits) as an int64 array sorted by (src, cycle), validated.
    ``lines``: each row's 1-based line in the file ``where`` (errors then read
    ``FILE:LINE: ...``); without it an error names the row (1-based)."""
    try:
        arr = np.asarray(rows, dtype=np.int64) if len(rows) else np.zeros((0, 4), np.int64)
    except (OverflowError, ValueError, TypeError):
        raise TrafficError(f"{where}: every row must be 4 integers (cycle, src, dst, flits) "
                           f"within 64 bits") from None
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise TrafficError(f"{where}: every row must be 4 integers (cycle, src, dst, flits)")
    for i, (t, s, d, f) in enumerate(arr):
        if t < 0 or not 0 <= s < n or not 0 <= d < n or f < 1 or s == d:
            at = f"{where}:{lines[i]}:" if lines is not None else f"{where} row {i + 1}:"
            raise TrafficError(f"{at} ({t}, {s}, {d}, {f}) needs cycle >= 0, "
                               f"src and dst in 0..{n - 1}, src != dst (a chip does not "
                               f"send to itself) and flits >= 1")
    order = np.lexsort((np.arange(len(arr)), arr[:, 0], arr[:, 1]))
    return arr[order]


def load_trace(path: Path, n: int) -> np.ndarray:
    """A CSV trace: header ``cycle,src,dst,flits`` then one packet per row. Errors name the
    file and line: ``FILE:LINE: message``."""
    path = Path(path)
    if path.is_dir():
        raise TrafficError(f"{path}: is a directory, not a trace file")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise TrafficError(f"cannot read trace {path}: {e.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise TrafficError(f"{path}: not a CSV text file ({e.__class__.__name__})") from None
    if not rows or [c.strip() for c in rows[0]] != ["cycle", "src", "dst", "flits"]:
        raise TrafficError(f"{path}: the first line must be the header cycle,src,dst,flits")
    out, lines = [], []
    for i, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        lines.append(i)
        try:
            if len(row) != 4:
                raise ValueError
            out.append([int(c) for c in row])
            if any(not -2 ** 62 < x < 2 ** 62 for x in out[-1]):
                raise ValueError
        except ValueError:
            raise TrafficError(f"{path}:{i}: expected 4 integers, got "
                               f"{','.join(row)!r}") from None
    return check_trace(out, n, where=str(path), lines=lines)


def synthesize(traffic: Traffic, rate: float, length: int, cycles: int, *, seed: int = 1,
               width: int = 1) -> np.ndarray:
    """The packets the simulator's own source creates in cycles 0 .. ``cycles`` - 1 for
    ``traffic`` at ``rate`` flits/cycle/chip (same ``seed``, same packets: W = ``width``
    Bernoulli streams, the k-th packet's destination drawn with key k), as trace rows
    (cycle, src, dst, length). A trace run on them repeats the pattern run event for event
    up to ``cycles``, and a testbench can drive the same packets into RTL."""
    if traffic.mode == MODE_TRACE:
        raise TrafficError("synthesize needs a pattern, not a trace")
    q, seed = rate / (width * length), int(seed)
    rows = []
    sends = traffic.sends
    for r in range(traffic.n):
        if not sends[r]:
            continue
        nxt = [gap(uniform(seed, r, s, 0), q) - 1 for s in range(width)]
        sj = [0] * width
        k = 0
        while True:
            s = min(range(width), key=lambda i: (nxt[i], i))
            if nxt[s] >= cycles:
                break
            dst = destination(traffic.mode, traffic.perm, traffic.hot, traffic.hot_frac,
                              traffic.n, r, uniform(seed, r, k, -1), uniform(seed, r, k, -2))
            rows.append((nxt[s], r, int(dst), length))
            k += 1
            sj[s] += 1
            nxt[s] += gap(uniform(seed, r, s, sj[s]), q)
    return check_trace(rows, traffic.n)
