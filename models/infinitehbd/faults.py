"""Node fault traces (InfiniteHBD §6.1, Appendix A): a generator from the production trace's
statistics, a CSV importer for real traces, the 8-GPU -> 4-GPU node conversion, and the
i.i.d. GPU fault model.

A :class:`Trace` is a list of fault events ``(node, start_h, end_h)`` over ``hours`` on
``nodes`` nodes of ``R`` GPUs; :meth:`Trace.states` samples it into a boolean matrix
[time, node] (True = faulty).

The production trace (8-GPU nodes, about 10K GPUs, 348 days) is described by its faulty-node
ratio: mean 2.66 %, p99 7.92 %. :func:`generate_trace` reproduces these two statistics with
a cluster-wide fault intensity that drifts slowly (log-normal, AR(1) with a ``drift_days``
correlation time: the spread of the ratio is far wider than independent nodes would give),
Poisson fault arrivals and exponential fault durations (``mean_duration_h``: the appendix
does not state it; 48 h by default). The log-normal's width is calibrated (bisection on a
seeded run) so the generated ratio's p99 meets the target.

CSV format (:func:`read_trace_csv`): a header ``node,start_h,end_h`` then one fault per row:
integer node id, start and end in hours from the trace start (end > start). Optional
comment lines start with ``#``; ``nodes``, ``hours`` and ``R`` are given by the caller.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Trace", "gpu_fault_prob", "node_fault_prob", "conversion", "convert_8_to_4",
           "generate_trace", "read_trace_csv", "iid_faults", "PROD_MEAN", "PROD_P99",
           "PROD_DAYS", "PROD_NODES_8"]

PROD_MEAN = 0.0266      # mean faulty 8-GPU node ratio (Appendix A)
PROD_P99 = 0.0792       # its p99
PROD_DAYS = 348
PROD_NODES_8 = 1224     # 9,792 GPUs in 8-GPU nodes (the paper's simulated cluster)


def gpu_fault_prob(node_ratio: float, R: int) -> float:
    """p such that an R-GPU node with i.i.d. GPU faults is faulty with ``node_ratio``:
    1 - (1 - p)^R = node_ratio."""
    if not 0 <= node_ratio < 1:
        raise ValueError(f"node fault ratio must be in [0, 1), not {node_ratio!r}")
    return 1 - (1 - node_ratio) ** (1 / R)


def node_fault_prob(p: float, R: int) -> float:
    if not 0 <= p <= 1:
        raise ValueError(f"GPU fault probability must be in [0, 1], not {p!r}")
    return 1 - (1 - p) ** R


def conversion(p8: float = PROD_MEAN) -> dict:
    """Appendix A: the GPU fault probability behind an 8-GPU node fault ratio, the 4-GPU node
    fault ratio, and P(4-GPU half faulty | its 8-GPU node faulty) by Bayes."""
    p = gpu_fault_prob(p8, 8)
    p4 = node_fault_prob(p, 4)
    return {"p_gpu": p, "p4": p4, "p4_given_8": p4 / p8}


@dataclass(frozen=True)
class Trace:
    nodes: int
    hours: float
    R: int
    events: tuple[tuple[int, float, float], ...]

    def states(self, step: float = 1.0) -> np.ndarray:
        """Boolean [samples, nodes]: faulty at t = 0, step, 2 step, ..."""
        t = np.arange(0.0, self.hours, step)
        out = np.zeros((len(t), self.nodes), dtype=bool)
        for node, s, e in self.events:
            a, b = np.searchsorted(t, s, "left"), np.searchsorted(t, e, "left")
            out[a:b, node] = True
        return out

    def ratio(self, step: float = 1.0) -> np.ndarray:
        return self.states(step).mean(axis=1)


def convert_8_to_4(trace: Trace, seed: int = 0) -> Trace:
    """Appendix A's conversion: each fault of 8-GPU node ``n`` marks each of its two 4-GPU
    halves faulty with probability P(4 | 8) (independently). The halves are numbered
    ``n`` and ``n + nodes`` (the first halves of all 8-GPU nodes, then the second halves):
    the paper treats node faults as i.i.d. and maps the trace linearly, and numbering the
    halves side by side would instead put correlated faults on neighbouring nodes of the
    HBD."""
    if trace.R != 8:
        raise ValueError(f"convert_8_to_4 needs a trace of 8-GPU nodes, not R = {trace.R}")
    q = conversion(float(trace.ratio().mean()) if trace.events else PROD_MEAN)["p4_given_8"]
    rng = np.random.default_rng(seed)
    events = []
    for node, s, e in trace.events:
        for half in (0, 1):
            if rng.random() < q:
                events.append((node + half * trace.nodes, s, e))
    return Trace(2 * trace.nodes, trace.hours, 4, tuple(events))


def _intensity(hours: int, sigma: float, drift_h: float, rng) -> np.ndarray:
    phi = math.exp(-1.0 / drift_h)
    z = np.empty(hours)
    z[0] = rng.standard_normal()
    noise = rng.standard_normal(hours) * math.sqrt(1 - phi * phi)
    for i in range(1, hours):
        z[i] = phi * z[i - 1] + noise[i]
    return np.exp(sigma * z - sigma * sigma / 2)      # mean 1


def _events(nodes: int, hours: int, mean: float, dur: float, w: np.ndarray, rng) -> list:
    busy_until = np.zeros(nodes)
    rate = mean * nodes / dur * w                  # Little: faulty ~ rate x duration
    out = []
    # start in the steady state: faults already running at t = 0
    for n in np.flatnonzero(rng.random(nodes) < min(mean * w[0], 1.0)):
        e = min(rng.exponential(dur), float(hours))
        busy_until[n] = e
        out.append((int(n), 0.0, e))
    for h in range(hours):
        for _ in range(rng.poisson(rate[h])):
            t = h + rng.random()
            free = np.flatnonzero(busy_until <= t)
            if not len(free):
                continue
            n = int(rng.choice(free))
            e = min(t + rng.exponential(dur), float(hours))
            busy_until[n] = e
            out.append((n, t, e))
    return out


def generate_trace(nodes: int = PROD_NODES_8, days: float = PROD_DAYS, R: int = 8, *,
                   mean: float = PROD_MEAN, p99: float = PROD_P99,
                   mean_duration_h: float = 48.0, drift_days: float = 7.0,
                   seed: int = 0) -> Trace:
    """A seeded synthetic trace whose faulty-node ratio has the given mean and p99."""
    if not 0 < mean < p99 < 1:
        raise ValueError(f"need 0 < mean ({mean}) < p99 ({p99}) < 1")
    for name, v in (("nodes", nodes), ("days", days), ("mean_duration_h", mean_duration_h),
                    ("drift_days", drift_days)):
        if not v > 0:
            raise ValueError(f"{name} must be > 0, not {v!r}")
    hours = int(round(days * 24))

    def run(sigma: float, level: float) -> tuple[list, float, float]:
        rng = np.random.default_rng(seed)
        w = _intensity(hours, sigma, drift_days * 24, rng)
        ev = _events(nodes, hours, level, mean_duration_h, w, rng)
        r = Trace(nodes, float(hours), R, tuple(ev)).ratio()
        return ev, float(r.mean()), float(np.quantile(r, 0.99))

    # calibrate the log-normal width to the p99 / mean ratio (bisection), then the level to
    # the mean (busy nodes cannot fail again, so the realised mean runs a little low)
    level, sigma = mean, 0.5

    def fit_sigma(level: float) -> float:
        lo, hi = 0.0, 2.0
        for _ in range(12):
            mid = (lo + hi) / 2
            _, m, q = run(mid, level)
            lo, hi = (mid, hi) if q / m < p99 / mean else (lo, mid)
        return (lo + hi) / 2

    for _ in range(4):
        sigma = fit_sigma(level)
        _, m, _ = run(sigma, level)
        level *= mean / m
    sigma = fit_sigma(level)
    ev, _, _ = run(sigma, level)
    return Trace(nodes, float(hours), R, tuple(ev))


def read_trace_csv(path, *, nodes: int, hours: float, R: int) -> Trace:
    """Read a ``node,start_h,end_h`` CSV (see the module docstring). ValueError naming the
    file, line and rule on the first bad row."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such trace file")
    events = []
    with path.open(newline="") as f:
        rows = [(i, row) for i, row in enumerate(csv.reader(f), 1)
                if row and not row[0].lstrip().startswith("#")]
    if not rows or [c.strip() for c in rows[0][1]] != ["node", "start_h", "end_h"]:
        raise ValueError(f"{path}: the first row must be the header node,start_h,end_h")
    for line, row in rows[1:]:
        where = f"{path}:{line}"
        if len(row) != 3:
            raise ValueError(f"{where}: expected 3 columns node,start_h,end_h, got {len(row)}")
        try:
            node = int(row[0])
            s, e = float(row[1]), float(row[2])
        except ValueError:
            raise ValueError(f"{where}: node must be an integer and start_h, end_h numbers, "
                             f"not {','.join(row)!r}") from None
        if not 0 <= node < nodes:
            raise ValueError(f"{where}: node {node} is outside the cluster (0..{nodes - 1})")
        if not (math.isfinite(s) and math.isfinite(e)) or not 0 <= s < e:
            raise ValueError(f"{where}: need 0 <= start_h < end_h, not {s} .. {e}")
        if s >= hours:
            raise ValueError(f"{where}: start_h {s} is past the trace's {hours} hours")
        events.append((node, s, min(e, hours)))
    return Trace(nodes, float(hours), R, tuple(events))


def iid_faults(nodes: int, R: int, p_gpu: float, samples: int, seed: int = 0) -> np.ndarray:
    """The i.i.d. GPU fault model: boolean [samples, nodes, R], each GPU faulty with
    probability ``p_gpu``."""
    if not 0 <= p_gpu <= 1:
        raise ValueError(f"GPU fault ratio must be in [0, 1], not {p_gpu!r}")
    return np.random.default_rng(seed).random((samples, nodes, R)) < p_gpu
