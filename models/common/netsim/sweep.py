"""Sweeps: many simulated points (topology x k x traffic x rate x seed), in parallel.

A point is a plain dict (JSON): the network spec (:func:`build`), the traffic, the rate, the
seed and the measurement lengths. Points run on local processes (``workers``) or, given a
``scheduler`` address, on an existing Dask distributed cluster; every finished point is
appended to a JSON-lines log at once, so a killed sweep keeps what it finished and a rerun
with the same log skips those points (resume).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from . import registry
from .network import Network, NetworkError
from .sim import Simulator
from .traffic import Traffic, load_trace

__all__ = ["build", "topologies", "run_point", "sweep", "key", "point", "saturation",
           "MODEL_VERSION", "model_version"]

MEASURE = {"warmup": 5000, "window": 10000, "drain": 20000}
# The sources whose behaviour a point's numbers depend on, whatever the topology: the router
# (reference definition and kernel), the measurement, the traffic and the core's networks.
_MODEL_SOURCES = ("kernel.py", "reference.py", "sim.py", "traffic.py", "network.py",
                  "registry.py")
# Spec keys the simulator reads (the rest are the topology builder's parameters).
SIM_KEYS = {"topology", "buffer", "length", "trace", "force", "hot", "hot_frac", "allocator",
            "router", "links", "source"}


def model_version() -> str:
    """A hash of the simulator model's sources (:data:`_MODEL_SOURCES`): part of every point's
    identity, so a resumed sweep never mixes results of two models. A topology's own tables
    are part of its spec (routing order, widths) and its provider's sources are hashed in
    :func:`point` through ``provider_version``."""
    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for name in _MODEL_SOURCES:
        h.update(name.encode() + b"\0" + (here / name).read_bytes())
    return h.hexdigest()[:12]


MODEL_VERSION = model_version()


def topologies() -> tuple[str, ...]:
    """The registered topology names."""
    return registry.topologies()


def key(p: dict) -> str:
    """The identity of a point (its parameters, canonical JSON)."""
    return json.dumps({k: v for k, v in sorted(p.items())}, sort_keys=True)


def _provider_version(module: str) -> str:
    """A hash of the sources the provider builds its networks from: its ``MODEL_SOURCES``
    (paths), else its own file."""
    mod = sys.modules.get(module)
    files = getattr(mod, "MODEL_SOURCES", None) or [getattr(mod, "__file__", None)]
    h = hashlib.sha256()
    for f in files:
        if f and Path(f).is_file():
            h.update(Path(f).name.encode() + b"\0" + Path(f).read_bytes())
    return h.hexdigest()[:12]


def point(spec: dict, traffic: str, rate: float, seed: int = 1, **measure) -> dict:
    """One sweep point. ``provider`` names the module that registered the spec's topology
    (imported by a worker before it builds the point); ``model`` hashes the simulator's and
    the provider's sources."""
    entry = registry.topology(spec.get("topology"))
    prov = entry.provider
    model = MODEL_VERSION if prov == _CORE else f"{MODEL_VERSION}+{_provider_version(prov)}"
    return {"net": dict(spec), "traffic": traffic, "rate": round(float(rate), 6),
            "seed": int(seed), "model": model, "provider": prov, **{**MEASURE, **measure}}


_CORE = "aifabric.models.common.netsim.network"


@functools.lru_cache(maxsize=8)
def _build(spec_json: str, provider: str | None = None) -> Network:
    spec = json.loads(spec_json)
    entry = registry.topology(spec.get("topology"), provider)
    kw = {k: v for k, v in spec.items() if k not in SIM_KEYS}
    extra = sorted(set(kw) - entry.params)
    if extra:
        raise NetworkError(f"{entry.name}: unknown parameter(s) {', '.join(extra)} (known: "
                           f"{', '.join(sorted(entry.params))})")
    try:
        return entry.build(**kw)
    except TypeError as e:
        raise NetworkError(f"{entry.name}: {e}") from None


def build(spec: dict, provider: str | None = None) -> Network:
    """The network of a spec, its ``topology`` resolved through the registry (``provider``:
    the module to import if the name is not registered yet): ``{"topology": "mesh", "k": 8,
    "vcs": 2}``, or a registered system's, e.g. ``{"topology": "hyperx", "m": 4, "n": 2,
    "R": 18, "k": 2, "vcs": 6}``."""
    return _build(json.dumps(spec, sort_keys=True), provider)


def simulator(p: dict) -> Simulator:
    """A :class:`Simulator` for point ``p`` (validates everything before anything runs)."""
    spec = p["net"]
    net = build(spec, p.get("provider"))
    trace = None
    if p["traffic"] == "trace":
        trace = load_trace(Path(spec["trace"]), net.routers)
    tr = Traffic.make(p["traffic"], net.coords, net.grid, trace=trace,
                      hot=tuple(spec.get("hot", (0,))), hot_frac=spec.get("hot_frac", 0.1))
    return Simulator(net, tr, rate=p["rate"], buffer=spec.get("buffer", 16),
                     length=spec.get("length", 4), seed=p["seed"],
                     force=spec.get("force", False),
                     allocator=spec.get("allocator"), router=spec.get("router"),
                     links=spec.get("links"), source=spec.get("source"))


def run_point(p: dict) -> dict:
    """Simulate one point; the row written to the sweep log."""
    sim = simulator(p)
    res = sim.measure(p["warmup"], p["window"], p["drain"])
    return {"point": p, "key": key(p), "max_throughput": sim.net.max_throughput,
            "chips": sim.net.routers, **res.as_dict()}


def load_log(path: Path) -> dict[str, dict]:
    """Finished points of a sweep log, by key (a torn last line is ignored)."""
    done = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
                done[row["key"]] = row
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return done


def sweep(points: list[dict], log: Path, *, workers: int | None = None,
          scheduler: str | None = None, progress: bool = True) -> list[dict]:
    """Run every point not yet in ``log``; return the rows of all ``points`` in order."""
    log = Path(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    done = load_log(log)
    todo = [p for p in points if key(p) not in done]
    if todo:
        bar = _bar(len(points), len(points) - len(todo), progress)
        with open(log, "a+") as f:
            if f.tell() and (f.seek(f.tell() - 1) or True) and f.read(1) != "\n":
                f.write("\n")                 # a killed run left a torn last line: end it
            for row in _execute(todo, workers, scheduler):
                f.write(json.dumps(row) + "\n")
                f.flush()
                done[row["key"]] = row
                bar.update(1)
        bar.close()
    return [done[key(p)] for p in points]


def _bar(total: int, initial: int, enabled: bool):
    from tqdm import tqdm
    return tqdm(total=total, initial=initial, unit="point", disable=not enabled,
                desc="netsim", leave=False)


def _execute(todo: list[dict], workers: int | None, scheduler: str | None):
    # longest first (higher rates carry more flits per cycle), so the last points to
    # finish are short ones and no worker idles long at the end; rows go to the log as
    # they finish and are returned by key, so the order changes nothing else
    todo = sorted(todo, key=lambda p: -float(p.get("rate") or 0.0))
    if scheduler:
        from dask.distributed import Client, as_completed as dask_completed
        with Client(scheduler) as client:
            futures = client.map(run_point, todo, pure=False)
            for fut in dask_completed(futures):
                yield fut.result()
        return
    workers = workers or min(len(todo), os.cpu_count() or 1)
    if workers <= 1 or len(todo) == 1:
        for p in todo:
            yield run_point(p)
        return
    _compile(todo)
    pool = ProcessPoolExecutor(workers)
    try:
        futures = [pool.submit(run_point, p) for p in todo]
        for fut in as_completed(futures):
            yield fut.result()
    finally:                  # on an error (or an interrupt) do not wait for the rest
        pool.shutdown(wait=True, cancel_futures=True)


def _compile(todo: list[dict]) -> None:
    """Ten cycles of the first point of each network and traffic, here, before the workers
    start: the kernels they run on are compiled once (a worker forked after it has them, and
    the networks built), where workers on a cold numba cache would each compile the same
    kernel at once (over a minute of CPU each)."""
    seen = set()
    for p in todo:
        k = json.dumps([p["net"], p["traffic"]], sort_keys=True)
        if k not in seen:
            seen.add(k)
            simulator(p).measure(0, 10, 0)


def saturation(rows: list[dict], tolerance: float = 0.05) -> dict:
    """Of one curve (rows of increasing rate): ``throughput`` = the highest accepted
    throughput, ``rate`` = the highest offered rate still accepted within ``tolerance`` and
    fully drained (the curve's last stable point)."""
    best = max((r["accepted"] for r in rows), default=float("nan"))
    stable = [r["rate"] for r in rows if not r["saturated"]
              and r["accepted"] >= (1 - tolerance) * r["offered"]]
    return {"throughput": best, "rate": max(stable) if stable else None}
