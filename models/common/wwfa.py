"""Bit-exact golden model of the wrapped wave-front arbiter (WWFA).

Tamir & Chi, "Symmetric crossbar arbiters for VLSI communication switches", IEEE TPDS 4(1),
1993. Chronos (NAIC'25, §8) builds its BhaVaN Birkhoff-von-Neumann engine on this arbiter, and the
network simulator's ``allocator="wavefront"`` switch allocation uses it too (a shared model:
neither system owns it; Chronos re-exports it under its old module name).

Semantics (identical to ``rtl/chronos/wwfa.py``): cell ``(i, j)`` of an N x N request matrix
lies on wrapped diagonal ``(i + j) mod N``. With priority diagonal ``p`` the diagonals
``p, p+1, ..., p+N-1 (mod N)`` are visited in order, and ``(i, j)`` is granted when it is
requested and neither row ``i`` nor column ``j`` was granted on an earlier diagonal. One call of
:meth:`WavefrontArbiter.arbitrate` is one clock cycle: it uses the current priority and then
advances it by one (mod N). The priority is 0 after construction or :meth:`reset`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["WavefrontArbiter", "arbitrate_reference", "N_MIN", "N_MAX"]

N_MIN = 2
N_MAX = 128


def _check_n(n: object) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)):
        raise TypeError(f"Parameter 'n' must be an int in {N_MIN}..{N_MAX}, not {n!r}")
    if not N_MIN <= n <= N_MAX:
        raise ValueError(f"Parameter 'n' must be in {N_MIN}..{N_MAX}, not {n!r}")
    return int(n)


def _check_requests(requests: object, n: int) -> np.ndarray:
    req = np.asarray(requests)
    if req.shape != (n, n):
        raise ValueError(f"'requests' must be a {n}x{n} matrix, not shape {req.shape}")
    if req.dtype != np.bool_:
        if not np.issubdtype(req.dtype, np.integer) or ((req != 0) & (req != 1)).any():
            raise ValueError(f"'requests' must hold booleans or 0/1 integers, not {req.dtype}")
        req = req.astype(np.bool_)
    return req


def arbitrate_reference(requests: np.ndarray, priority: int) -> np.ndarray:
    """The arbiter's definition written out cell by cell: the independent reference the fast
    model is tested against, and the baseline of ``make bench``. Pure Python, O(N^2)."""
    req = np.asarray(requests, dtype=bool)
    n = req.shape[0]
    grants = np.zeros((n, n), dtype=bool)
    row_taken = [False] * n
    col_taken = [False] * n
    for k in range(n):
        diagonal = (priority + k) % n
        for i in range(n):
            j = (diagonal - i) % n
            if req[i, j] and not row_taken[i] and not col_taken[j]:
                grants[i, j] = True
                row_taken[i] = col_taken[j] = True
    return grants


class WavefrontArbiter:
    """N x N wrapped wave-front arbiter, one :meth:`arbitrate` call per clock cycle.

    Parameters
    ----------
    n : int
        Number of inputs and outputs, 2..128.

    Attributes
    ----------
    n : int
    priority : int
        The priority diagonal used by the next :meth:`arbitrate` call.
    """

    def __init__(self, n: int) -> None:
        self.n = _check_n(n)
        self.priority = 0
        self._full = (1 << self.n) - 1
        rows = np.arange(self.n)
        # _diag_index[d, i]: flat index of the cell where row i meets wrapped diagonal d,
        # i.e. (i, (d - i) mod n). The cells of one diagonal share no row and no column.
        self._diag_index = rows * self.n + (rows[:, None] - rows[None, :]) % self.n

    def reset(self) -> None:
        """Return to the state after reset: priority diagonal 0."""
        self.priority = 0

    def arbitrate(self, requests: np.ndarray) -> np.ndarray:
        """Grant a maximal matching of ``requests`` (N x N bool) under the current priority,
        then advance the priority. Returns the N x N bool grant matrix."""
        n, full = self.n, self._full
        req = _check_requests(requests, n).ravel()
        # Each diagonal as an n-bit integer over rows: bit i set if row i requests on it.
        packed = np.packbits(req[self._diag_index], axis=1, bitorder="little")
        diagonals = [int.from_bytes(row.tobytes(), "little") for row in packed]
        remaining = int(np.count_nonzero(req))
        # Bit-parallel wave over rows. row_free bit i: row i still free. col_free is kept in
        # the frame of the current diagonal d: bit i = column (d - i) mod n still free. Moving
        # to diagonal d+1 row i meets column (d+1-i), which was row i-1's column on d: a
        # rotation left by one.
        row_free = col_free = full
        granted = []
        for k in range(n):
            if remaining == 0 or row_free == 0:
                break
            d = (self.priority + k) % n
            on_diag = diagonals[d]
            remaining -= on_diag.bit_count()
            g = on_diag & row_free & col_free
            if g:
                granted.append((d, g))
                row_free &= ~g
                col_free &= ~g
            col_free = ((col_free << 1) | (col_free >> (n - 1))) & full
        grants = np.zeros((n, n), dtype=bool)
        for d, g in granted:
            while g:
                i = (g & -g).bit_length() - 1
                grants[i, (d - i) % n] = True
                g &= g - 1
        self.priority = (self.priority + 1) % n
        return grants
