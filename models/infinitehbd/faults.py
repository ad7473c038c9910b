"""Node fault traces (InfiniteHBD §6.1, Appendix A): the released production trace (JSON
loader), its placement on the simulated 9,792-GPU line, a generator calibrated to a trace's
statistics, a CSV importer, the 8-GPU -> 4-GPU node conversion, and the i.i.d. GPU fault
model.

A :class:`Trace` is a list of fault events ``(node, start_h, end_h)`` over ``hours`` on
``nodes`` nodes of ``R`` GPUs; :meth:`Trace.states` samples it into a boolean matrix
[time, node] (True = faulty).

The production trace. The paper's cluster (8-GPU nodes, about 10K GPUs, 348 days) has a
faulty-node ratio of mean 2.66 %, p99 7.92 % (Appendix A). The authors released 400 of its
servers (``data/fault_trace.json``, Apache-2.0, origin in ``data/ORIGIN.md``):
:func:`read_trace_json` loads it (:func:`production_trace`: the shipped file) and
:func:`place_on_line` places the 400 servers on the 1,224 8-GPU positions of the 9,792-GPU
line (see there for the rule and its two assumptions).

The generator. :func:`generate_trace` reproduces a mean and a p99 of the faulty-node ratio with
a cluster-wide fault intensity that drifts slowly (log-normal, AR(1) with a ``drift_days``
correlation time: the spread of the ratio is far wider than independent nodes would give),
Poisson fault arrivals and exponential fault durations (``mean_duration_h``: the appendix
does not state it; 48 h by default). The log-normal's width is calibrated (bisection on a
seeded run) so the generated ratio's p99 meets the target.

JSON format (:func:`read_trace_json`, the upstream release's): a list of events, each
``{"node_id": str, "event_time": days (non-decreasing), "event_type": "fault_start" |
"fault_end", "fault_type": {"Level", "Class", "Desc"}}``. A ``fault_end`` closes the open
fault of the same node and fault type; a node is faulty while any of its faults is open
(faults of different types may overlap); a fault still open at the end runs to the end.

CSV format (:func:`read_trace_csv`): a header ``node,start_h,end_h`` then one fault per row:
integer node id, start and end in hours from the trace start (end > start). Optional
comment lines start with ``#``; ``nodes``, ``hours`` and ``R`` are given by the caller.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Trace", "gpu_fault_prob", "node_fault_prob", "conversion", "convert_8_to_4",
           "generate_trace", "read_trace_csv", "read_trace_json", "production_trace",
           "tile_trace", "place_on_line", "trace_stats", "fixed_repair", "iid_faults", "PROD_MEAN", "PROD_P99",
           "PROD_DAYS", "PROD_NODES_8", "TRACE_PATH", "TRACE_SERVERS", "HALVES", "SPATIAL"]

PROD_MEAN = 0.0266      # mean faulty 8-GPU node ratio (Appendix A)
PROD_P99 = 0.0792       # its p99
PROD_DAYS = 348
PROD_NODES_8 = 1224     # 9,792 GPUs in 8-GPU nodes (the paper's simulated cluster)
TRACE_PATH = Path(__file__).with_name("data") / "fault_trace.json"
TRACE_SERVERS = 400     # servers in the released trace (upstream README; 231 have faults)
HALVES = ("split", "adjacent")
SPATIAL = ("independent", "clustered")


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
    ids: tuple[str, ...] = ()        # node names where the source has them (trace UUIDs)

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


def convert_8_to_4(trace: Trace, seed: int = 0, *, halves: str = "split",
                   q: float | None = None) -> Trace:
    """Appendix A's conversion: each fault of 8-GPU node ``n`` marks each of its two 4-GPU
    halves faulty with probability ``q`` = P(4 | 8), independently (default: from the trace's
    own mean faulty-node ratio, :func:`conversion`; 50.38 % at the paper's 2.66 %).

    ``halves``: where the two halves of 8-GPU node ``n`` of ``N`` sit on the 4-GPU line.
    ``"split"``: at ``n`` and ``n + N`` (the first halves of all 8-GPU nodes, then the second
    halves; a faulty 8-GPU node never makes neighbouring 4-GPU nodes faulty, as the paper's
    "node faults are i.i.d." asks). ``"adjacent"``: at ``2n`` and ``2n + 1`` (side by side, one
    reading of App. A's "linearly maps": both halves faulty, probability q^2, is a run of two
    faulty neighbours, which a K = 2 ring cannot bypass)."""
    if trace.R != 8:
        raise ValueError(f"convert_8_to_4 needs a trace of 8-GPU nodes, not R = {trace.R}")
    if halves not in HALVES:
        raise ValueError(f"halves must be one of {', '.join(HALVES)}, not {halves!r}")
    if q is None:
        q = conversion(float(trace.ratio().mean()) if trace.events else PROD_MEAN)["p4_given_8"]
    if not 0 <= q <= 1:
        raise ValueError(f"q = P(4 | 8) must be in [0, 1], not {q!r}")
    rng = np.random.default_rng(seed)
    events = []
    for node, s, e in trace.events:
        for half in (0, 1):
            if rng.random() < q:
                where = node + half * trace.nodes if halves == "split" else 2 * node + half
                events.append((where, s, e))
    return Trace(2 * trace.nodes, trace.hours, 4, tuple(events))


# ----------------------------------------------------------- the released trace ----------

def _check_trace_path(path: Path) -> None:
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a trace file")
    if not path.exists():
        raise ValueError(f"{path}: no such trace file")


def read_trace_json(path, *, servers: int = TRACE_SERVERS, days: float | None = None) -> Trace:
    """The released trace (see the module docstring) as a :class:`Trace` of ``servers``
    8-GPU nodes: node ``i`` is the ``i``-th UUID in order of first appearance (``ids``), the
    servers that never fault follow; times in hours. ``days``: the trace's length (default:
    its last event, rounded up to the hour). ValueError naming the file and the event index
    (0-based, in the file's list) on the first bad event."""
    path = Path(path)
    _check_trace_path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not a JSON trace ({e.msg}, column "
                         f"{e.colno})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a JSON trace (not UTF-8 text: a binary file?)") \
            from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read the trace ({e.strerror})") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of events, not {type(data).__name__}")
    if isinstance(servers, bool) or not isinstance(servers, int) or servers < 1:
        raise ValueError(f"servers must be an int >= 1, not {servers!r}")
    index: dict[str, int] = {}
    open_: dict[tuple[int, str], float] = {}
    events: list[tuple[int, float, float]] = []
    last = 0.0
    for i, ev in enumerate(data):
        where = f"{path}: event {i}"
        if not isinstance(ev, dict):
            raise ValueError(f"{where}: expected an object, not {type(ev).__name__}")
        missing = [k for k in ("node_id", "event_time", "event_type", "fault_type")
                   if k not in ev]
        if missing:
            raise ValueError(f"{where}: missing field {', '.join(missing)}")
        node_id, t, kind, ftype = (ev["node_id"], ev["event_time"], ev["event_type"],
                                   ev["fault_type"])
        if not isinstance(node_id, str) or not node_id:
            raise ValueError(f"{where}: node_id must be a non-empty string, not {node_id!r}")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) \
                or t < 0:
            raise ValueError(f"{where}: event_time must be a number of days >= 0, not {t!r}")
        if t < last:
            raise ValueError(f"{where}: event_time {t} is before the previous event's {last} "
                             f"(events must be in time order)")
        last = float(t)
        if not isinstance(ftype, dict):
            raise ValueError(f"{where}: fault_type must be an object {{Level, Class, Desc}}, "
                             f"not {ftype!r}")
        ftkey = json.dumps(ftype, sort_keys=True)
        if node_id not in index:
            if len(index) == servers:
                raise ValueError(f"{where}: node {node_id} is server {servers + 1}, more than "
                                 f"the trace's {servers}")
            index[node_id] = len(index)
        n = index[node_id]
        if kind == "fault_start":
            if (n, ftkey) in open_:
                raise ValueError(f"{where}: node {node_id} starts a fault of type "
                                 f"{ftype.get('Desc', ftype)!r} that is already open")
            open_[(n, ftkey)] = 24.0 * t
        elif kind == "fault_end":
            start = open_.pop((n, ftkey), None)
            if start is None:
                raise ValueError(f"{where}: fault_end of node {node_id} with no open fault "
                                 f"of type {ftype.get('Desc', ftype)!r}")
            if 24.0 * t > start:
                events.append((n, start, 24.0 * t))
        else:
            raise ValueError(f"{where}: event_type must be fault_start or fault_end, not "
                             f"{kind!r}")
    if days is not None and not (isinstance(days, (int, float)) and days * 24 >= 24 * last
                                 and math.isfinite(days)):
        raise ValueError(f"{path}: days {days!r} is shorter than the trace's last event "
                         f"({last} days)")
    hours = float(days * 24) if days is not None else float(math.ceil(24 * last))
    events += [(n, s, hours) for (n, _), s in open_.items() if s < hours]
    events.sort(key=lambda x: (x[1], x[0]))
    ids = tuple(sorted(index, key=index.get))
    return Trace(servers, hours, 8, tuple(events), ids)


_PRODUCTION: list = []


def production_trace() -> Trace:
    """The released production trace shipped in ``data/`` (400 8-GPU servers)."""
    if not _PRODUCTION:
        _PRODUCTION.append(read_trace_json(TRACE_PATH))
    return _PRODUCTION[0]


def trace_stats(trace: Trace, step: float = 1.0) -> dict:
    """Mean and p99 of the faulty-node ratio, mean fault duration (hours), faults per node
    per year: the statistics :func:`generate_trace` can be calibrated to."""
    r = trace.ratio(step)
    dur = [e - s for _, s, e in trace.events]
    return {"mean": float(r.mean()), "p99": float(np.quantile(r, 0.99)),
            "mean_duration_h": float(np.mean(dur)) if dur else 0.0,
            "faults_per_node_year": len(dur) / trace.nodes / (trace.hours / 8760)}


def fixed_repair(trace: Trace, hours: float | None = None) -> Trace:
    """Every fault lasting ``hours`` from its start (default: the trace's mean fault
    duration), cut at the trace's end: §6.2's Fig 12 'assume[s] the average recovery time in
    the fault trace as a fixed repair duration'."""
    if hours is None:
        hours = trace_stats(trace)["mean_duration_h"]
    if not hours > 0:
        raise ValueError(f"repair hours must be > 0, not {hours!r}")
    return Trace(trace.nodes, trace.hours, trace.R,
                 tuple((n, s, min(s + hours, trace.hours)) for n, s, _ in trace.events),
                 trace.ids)


def tile_trace(trace: Trace, positions: int = PROD_NODES_8, *, spatial: str = "independent",
               seed: int = 0) -> Trace:
    """Tile the ``trace.nodes`` traced servers over ``positions`` positions of the line (the
    trace is shorter than the cluster: 400 servers for 1,224 positions). Position ``j`` is
    copy ``c = j // nodes`` of server ``order_c[j % nodes]``; the copies replay the server's
    faults at the same times (no time shift: the cluster's faulty-node ratio over time stays
    the trace's, mean and p99), a last partial copy takes the first servers of its order.

    ``spatial``: which server sits next to which (the trace has no physical location).
    ``"independent"``: each copy's order is its own seeded random permutation, so neighbours
    on the line are unrelated servers (the paper's i.i.d. assumption). ``"clustered"``: every
    copy orders the servers by the time of their first fault (servers that fail together, and
    the fault-prone ones, side by side; the never-faulty servers after them), a pessimistic
    reading in which correlated faults are spatially close."""
    if spatial not in SPATIAL:
        raise ValueError(f"spatial must be one of {', '.join(SPATIAL)}, not {spatial!r}")
    if isinstance(positions, bool) or not isinstance(positions, int) or positions < 1:
        raise ValueError(f"positions must be an int >= 1, not {positions!r}")
    N = trace.nodes
    per_node: list[list] = [[] for _ in range(N)]
    for n, s, e in trace.events:
        per_node[n].append((s, e))
    copies = -(-positions // N)
    if spatial == "clustered":
        first = [min(s for s, _ in ev) if ev else math.inf for ev in per_node]
        order = sorted(range(N), key=lambda n: (first[n], n))
        orders = [order] * copies
    else:
        rng = np.random.default_rng(seed)
        orders = [[int(x) for x in rng.permutation(N)] for _ in range(copies)]
    events = []
    for j in range(positions):
        src = orders[j // N][j % N]
        events += [(j, s, e) for s, e in per_node[src]]
    events.sort(key=lambda x: (x[1], x[0]))
    ids = tuple(trace.ids[orders[j // N][j % N]] if orders[j // N][j % N] < len(trace.ids)
                else "" for j in range(positions)) if trace.ids else ()
    return Trace(positions, trace.hours, trace.R, tuple(events), ids)


def place_on_line(trace: Trace, positions: int = PROD_NODES_8, *, halves: str = "split",
                  spatial: str = "independent", seed: int = 0,
                  q: float | None = None) -> tuple[Trace, Trace]:
    """The rule placing the traced 8-GPU servers on the simulated line: :func:`tile_trace`
    over ``positions`` 8-GPU positions (1,224 for 9,792 GPUs), then Appendix A's 8 -> 4
    conversion (:func:`convert_8_to_4`, ``halves``) onto ``2 positions`` 4-GPU nodes.
    Returns (8-GPU trace, 4-GPU trace); ``q``: P(4 | 8), default from the tiled trace."""
    t8 = tile_trace(trace, positions, spatial=spatial, seed=seed)
    return t8, convert_8_to_4(t8, seed=seed, halves=halves, q=q)


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
    _check_trace_path(path)
    events = []
    try:
        with path.open(newline="", encoding="utf-8") as f:
            rows = [(i, row) for i, row in enumerate(csv.reader(f), 1)
                    if row and not row[0].lstrip().startswith("#")]
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a CSV trace (not UTF-8 text: a binary file?)") from None
    except csv.Error as e:
        raise ValueError(f"{path}: not a CSV trace ({e})") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read the trace ({e.strerror})") from None
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
