"""netsim (build/bench/netsim.json): router-cycles/s of the compiled network simulator on 8x8
and 16x16 meshes (DOR, 2 and 4 VCs, uniform at 0.1 and near saturation) and the 1,296-chip
RailX 2D-HyperX at 0.6; baseline: the plain-Python reference step, same run. At the speed
targets' points every router is also run on the simulator of revision NETSIM_BASELINE (from
git), just before ours, ``--netsim-repeat`` times in turn (the median is reported, with the
range and the median of the pairs' ratios), and the two must give the same results (but the
registered router,
which that revision lacks; it is not run on the RailX point either, whose ports have several
lanes: the table says so). Each router's first run on a machine, a fresh process with an
empty numba cache, is timed against COMPILE_BASELINE's kernel (:func:`_cold_starts`). Given a
BookSim2 binary (``--booksim PATH``), the targets' two mesh points are also run on it, in the
same run (:func:`booksim_points`)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from .._cli import BUILD, md_table, write_json


def _netsim_point(net, rate: float, warmup: int, window: int) -> dict:
    from aifabric.models.common.netsim import simulate
    from aifabric.models.common.netsim.sim import shaped_by_default
    simulate(net, "uniform", rate, warmup=20, window=20, drain=0)        # compiled, loaded
    res = simulate(net, "uniform", rate, warmup=warmup, window=window, drain=0)
    return {"network": net.name, "vcs": net.vcs, "rate": rate, "accepted": res.accepted,
            "kernel": "shaped" if shaped_by_default(net) else "generic",
            "router_cycles_per_s": res.router_cycles_per_s,
            "router_cycles_per_cpu_s": res.router_cycles_per_cpu_s,
            "seconds": res.seconds, "cpu_seconds": res.cpu_seconds}


def _reference_rate(net, rate: float, cycles: int) -> float:
    from aifabric.models.common.netsim import Traffic
    from aifabric.models.common.netsim.reference import ReferenceNetwork
    ref = ReferenceNetwork(net, Traffic.make("uniform", net.coords, net.grid), rate=rate)
    for _ in range(200):                                                 # warm the network
        ref.step()
    start = time.perf_counter()
    for _ in range(cycles):
        ref.step()
    return net.routers * cycles / (time.perf_counter() - start)


def run(args) -> str:
    """Router-cycles per second of the compiled kernel, single process, against the plain
    Python reference step on the same network in the same run."""
    from aifabric.models.common.netsim import mesh
    from aifabric.models.common.netsim.sim import SHAPED_MIN_ROUTERS
    from aifabric.models.common.netsim.sweep import build
    from aifabric.models.railx import fig14
    rows, out = [], {"points": []}
    load_before = os.getloadavg()
    for k, sat in ((8, 0.38), (16, 0.21)):
        for vcs in (2, 4):
            net = mesh(k, vcs=vcs)
            for rate in (0.1, sat):
                pt = _netsim_point(net, rate, 2000, args.netsim_cycles)
                out["points"].append(pt)
                print(f"    {net.name} {vcs} VCs rate {rate}: "
                      f"{pt['router_cycles_per_s'] / 1e6:.2f} M router-cycles/s", flush=True)
    # the RailX point of the targets: Fig 14's HyperX at k = 2 with 18 VCs (the point the
    # targets were set on), routers compared on it below
    hx = build({**{k: v for k, v in fig14.spec("2D-HyperX 9x9", 2).items()
                   if k not in ("buffer", "length", "router", "links")}, "vcs": 18})
    pt = _netsim_point(hx, 0.6, 2000, args.netsim_cycles // 2)
    out["points"].append(pt)
    out["targets"] = _netsim_targets(hx, args.netsim_repeat)
    out["booksim"] = booksim_points(args.booksim)
    net = mesh(8, vcs=2)
    ref = _reference_rate(net, 0.3, args.reference_cycles)
    kern = _netsim_point(net, 0.3, 2000, args.netsim_cycles)["router_cycles_per_s"]
    out["reference"] = {"network": net.name, "rate": 0.3, "reference_router_cycles_per_s":
                        round(ref, 1), "kernel_router_cycles_per_s": kern,
                        "speedup": round(kern / ref, 1)}
    for p in out["points"]:
        rows.append([p["network"], p["vcs"], p["rate"], p["kernel"], f"{p['accepted']:.3f}",
                     f"{p['router_cycles_per_s'] / 1e6:.2f}",
                     f"{p['router_cycles_per_cpu_s'] / 1e6:.2f}"])
    out["load_average"] = {"before": [round(x, 2) for x in load_before],
                           "after": [round(x, 2) for x in os.getloadavg()],
                           "cores": os.cpu_count()}
    write_json(BUILD / "bench" / "netsim.json", out)
    r = out["reference"]
    la = out["load_average"]
    tg = out["targets"]
    trows = [[t["what"], f"{t['target']:,}",
              (f"{t['measured']:,}" + (f" ({t['range'][0]:,}-{t['range'][1]:,})"
                                       if t.get("range") else ""))
              if t["measured"] is not None else f"not run: {t['not_run']}",
              f"{t['baseline']:,}" if t.get("baseline") else "",
              f"{t['ratio']:.2f}x" if t.get("ratio") else "",
              f"{t['factor']:.2f}x" if t["factor"] is not None else "",
              "met" if t["met"] else "not met" if t["measured"] is not None else ""]
             for t in tg["rows"]]
    repeat = max((t.get("runs", 1) for t in tg["rows"]), default=1)
    e2e = tg["end_to_end"]
    target_text = (
        "\n\nTargets (16x16 mesh, 2 VCs, DOR, uniform, 15,000 cycles from an empty network; "
        "router-cycles per CPU-second of the simulation, the figure an idle machine gives; "
        f"each rate the median of {repeat} runs, each run beside one of the baseline, with "
        "the lowest and highest in parentheses, the baseline's median and the median of the "
        "pairs' ratios; factor = target / measured for rates, measured / target for the run "
        "time):\n\n"
        + md_table(["what", "target", "measured", f"baseline ({str(tg['baseline'])[:10]})",
                    "ours / baseline", "factor", ""], trows)
        + f"\n\nEnd to end, a fresh `python -c` process with warm caches (median of "
          f"{e2e['runs']}): {e2e['total_s']:.2f} s, of which start-up (interpreter, imports, "
          f"loading the cached kernel, the traffic) {e2e['startup_s']:.2f} s, building the "
          f"network {e2e['setup_s']:.2f} s and the simulated cycles {e2e['simulate_s']:.2f} "
          f"s; in CPU-seconds of that process {e2e['cpu_s']:.2f} s, of which start-up "
          f"(everything but the measured cycles) {e2e['startup_cpu_s']:.2f} s, with "
          + ", ".join(f"{k}={v}" for k, v in e2e["env"].items())
          + f" as the aifabric command sets it; in OpenBLAS's default of a worker thread "
          f"per core (the variable unset, interleaved with those runs) "
          f"{tg['end_to_end_default']['cpu_s']:.2f} CPU-s, of which start-up "
          f"{tg['end_to_end_default']['startup_cpu_s']:.2f}, in "
          f"{tg['end_to_end_default']['total_s']:.2f} s of wall time.")
    target_text += _cold_text(tg["cold"])
    target_text += _booksim_text(out["booksim"], tg["rows"])
    return ("## Network simulator (build/bench/netsim.json)\n\n"
            f"Uniform traffic, {args.netsim_cycles:,} measured cycles after 2,000 of warm-up, "
            "one process. Router-cycles count every router every cycle, the idle routers the "
            "kernel skips included. Per wall second and per CPU second of this process "
            "(time.process_time: what the figure would be on an idle machine); load average "
            f"{la['before'][0]:.2f} at the start, {la['after'][0]:.2f} at the end, on "
            f"{la['cores']} cores. Kernel against the plain-Python reference step on "
            f"{r['network']} at rate {r['rate']}: {r['kernel_router_cycles_per_s'] / 1e6:.2f} M "
            f"vs {r['reference_router_cycles_per_s'] / 1e3:.1f} k router-cycles/s "
            f"({r['speedup']:,}x, wall). Kernel: *shaped*, compiled for the network's shape "
            f"and router (networks of at least {SHAPED_MIN_ROUTERS} chips), else the generic "
            "one.\n\n"
            + md_table(["network", "VCs", "rate", "kernel", "accepted",
                        "M router-cycles/s (wall)", "M router-cycles/CPU-s"], rows)
            + target_text)


# The speed targets of the RailX issue's section 4 (router-cycles per second of simulation
# time, the fastest established C++ cycle-level simulator's figures on this machine)
NETSIM_TARGETS = {"light": 35e6, "saturation": 6e6, "railx": 1.5e6, "end_to_end_s": 1.5}

_E2E = """
import time
t0 = time.perf_counter()
from aifabric.models.common.netsim import mesh, simulate
t1 = time.perf_counter()
net = mesh(16, vcs=2)
t2 = time.perf_counter()
res = simulate(net, "uniform", 0.06, warmup=0, window=15000, drain=0)
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, res.seconds, res.cpu_seconds)
"""

# A first run on a machine: a fresh process with an empty compile cache runs 100 cycles of the
# 16x16 mesh at 0.06 on one router's shaped kernel, by today's kernel and COMPILE_BASELINE's
# (the revision before a shaped kernel stopped inlining the other router's phases)
COMPILE_BASELINE = "cdda3d06fcbe2bac016be2b55827fd7907f01bb1"
_COLD = """
import json, sys
from aifabric.models.common.netsim import mesh
from aifabric.scripts.bench.netsim import _baseline_simulator, _measure
rev, kw = sys.argv[1], json.loads(sys.argv[2])
_measure(mesh(16, vcs=2), 0.06, 0, 100, _baseline_simulator(rev) if rev else None, **kw)
"""


def _cold_starts(configs: dict) -> dict:
    """Per router (label -> Simulator keywords): the wall and CPU seconds of a fresh process
    with an empty numba cache (``_COLD``), today's kernel and COMPILE_BASELINE's, one after
    the other."""
    import json
    import resource
    import subprocess
    import sys
    import tempfile

    from aifabric.models.common.netsim.sim import SHAPED_ENV
    out = {}
    for label, kw in configs.items():
        row = {}
        for which, rev in (("today", ""), ("baseline", COMPILE_BASELINE)):
            with tempfile.TemporaryDirectory(prefix="netsim-cold-") as cache:
                env = {**os.environ, "NUMBA_CACHE_DIR": cache, SHAPED_ENV: "1"}
                start = time.perf_counter()
                used = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run([sys.executable, "-c", _COLD, rev, json.dumps(kw)], env=env,
                               cwd=Path(__file__).resolve().parents[2], check=True,
                               capture_output=True, text=True)
                now = resource.getrusage(resource.RUSAGE_CHILDREN)
            row[which] = {"wall_s": round(time.perf_counter() - start, 2),
                          "cpu_s": round(now.ru_utime + now.ru_stime - used.ru_utime
                                         - used.ru_stime, 2)}
        row["ratio_cpu"] = round(row["baseline"]["cpu_s"] / row["today"]["cpu_s"], 2)
        out[label] = row
        print(f"    first run, empty compile cache, {label}: {row['today']['cpu_s']:.1f} "
              f"CPU-s (baseline {row['baseline']['cpu_s']:.1f})", flush=True)
    return out


def _cold_text(cold: dict) -> str:
    rows = [[label, f"{r['today']['wall_s']:.1f}", f"{r['today']['cpu_s']:.1f}",
             f"{r['baseline']['wall_s']:.1f}", f"{r['baseline']['cpu_s']:.1f}",
             f"{r['ratio_cpu']:.2f}x"] for label, r in cold.items()]
    return ("\n\nA first run on a machine: a fresh process with an empty numba cache runs 100 "
            "cycles of the 16x16 mesh at 0.06 on the router's shaped kernel (everything it "
            f"compiles, kernel and helpers), by today's kernel and {COMPILE_BASELINE[:10]}'s "
            "(before a shaped kernel stopped inlining the other router's phases), one after "
            "the other:\n\n"
            + md_table(["router", "today (s)", "today (CPU-s)",
                        f"{COMPILE_BASELINE[:10]} (s)", f"{COMPILE_BASELINE[:10]} (CPU-s)",
                        "CPU ratio"], rows))


# the simulator the targets' speed-up is measured against, in the same run: the revision
# before the visit rule (routers skipped until a front flit is ready), the credit bit masks
# and the per-VC records
NETSIM_BASELINE = "19f53ef110d05223d69ba091581f511751f95372"


def _baseline_simulator(rev: str = NETSIM_BASELINE):
    """The Simulator class of git revision ``rev`` with the kernel of that revision (None if
    the repository does not hold it): the two files written as a package under build/bench/
    and imported from there (so numba caches them like ours), the rest of the simulator
    (registry, networks, traffic) today's."""
    import importlib
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    name = f"netsim_baseline_{rev[:10]}"
    pkg = BUILD / "bench" / "netsim_baseline" / name
    pkg.mkdir(parents=True, exist_ok=True)
    for file in ("__init__.py", "kernel.py", "sim.py"):
        text = ""
        if file != "__init__.py":
            proc = subprocess.run(["git", "show", f"{rev}:models/common/netsim/{file}"],
                                  cwd=root, capture_output=True, text=True)
            if proc.returncode != 0:
                return None
            text = proc.stdout
            for mod in ("registry", "network", "traffic"):
                text = text.replace(f"from . import {mod}\n",
                                    f"from aifabric.models.common.netsim import {mod}\n")
                text = text.replace(f"from .{mod} import",
                                    f"from aifabric.models.common.netsim.{mod} import")
        path = pkg / file
        if not path.exists() or path.read_text() != text:  # keep the mtime numba's cache keys
            path.write_text(text)
    if str(pkg.parent) not in sys.path:
        sys.path.insert(0, str(pkg.parent))
    return importlib.import_module(f"{name}.sim").Simulator


def _measure(net, rate, warmup, window, simulator=None, **kw):
    """One point, simulated by ``simulator`` (None: today's Simulator)."""
    from aifabric.models.common.netsim import Simulator, Traffic
    sim = (simulator or Simulator)(net, Traffic.make("uniform", net.coords, net.grid),
                                   rate=rate, **kw)
    return sim.measure(warmup, window, 0)


def _same(a, b) -> bool:
    return (a.accepted, a.delivered_packets, a.latency_mean, a.latency_max) == \
        (b.accepted, b.delivered_packets, b.latency_mean, b.latency_max)


def summarise_pairs(ours: list, base: list) -> dict:
    """Router-cycles per CPU-second of ``len(ours)`` runs of a point, each beside a run of the
    baseline (``base``, the same length, or empty): the median, lowest and highest of ours,
    the baseline's median, and the median of the pairs' ratios ours / baseline (a pair shares
    the machine's state of its moment, so the ratio moves less than either figure)."""
    import statistics
    out = {"median": statistics.median(ours), "low": min(ours), "high": max(ours),
           "base": None, "ratio": None}
    if base:
        out["base"] = statistics.median(base)
        out["ratio"] = statistics.median(a / b for a, b in zip(ours, base))
    return out


def _netsim_targets(hx, repeat: int = 3) -> dict:
    """The section-4 targets: 16x16 mesh at 0.06 and near saturation (0.21), the RailX
    1,296-chip point, each run ``repeat`` times in turn with the baseline, and a whole
    15,000-cycle run in a fresh process."""
    import resource
    import statistics
    import subprocess
    import sys

    from aifabric.cli import BLAS_THREADS
    from aifabric.models.common.netsim import NetworkError, mesh, registry, simulate
    from aifabric.models.railx.fig14 import PAPER_ROUTER
    net = mesh(16, vcs=2)
    simulate(net, "uniform", 0.06, warmup=20, window=20, drain=0)       # compiled, loaded
    # every registered router at its defaults, and RailX's paper router (its switches on),
    # at the same points
    configs = {router: {"router": router} for router in registry.choices("router")}
    configs["paper (" + ", ".join(PAPER_ROUTER.values()) + ")"] = dict(PAPER_ROUTER)
    base = _baseline_simulator()
    points = ((net, 0.06, 0, 15_000), (net, 0.21, 0, 15_000), (hx, 0.6, 2_000, 3_000))
    measured, baseline, refused = {}, {}, {}
    for label, kw in configs.items():
        # the baseline kernel has no registered router (it would run it as pipelined)
        old = base if kw.get("router") != "registered" else None
        if old is not None:                      # compiled, loaded
            _measure(net, 0.06, 20, 20, old, **kw)
        now, before = [], []
        for i, pt in enumerate(points):
            runs, base_runs = [], []
            for _ in range(repeat):
                try:
                    res = _measure(*pt, **kw)
                except NetworkError as e:        # the registered router: one lane per port
                    refused[(label, i)] = str(e)
                    break
                runs.append(res)
                # the baseline kernel and ours on the same point, one after the other
                if old is not None:
                    base_runs.append(_measure(*pt, old, **kw))
                    if not _same(base_runs[-1], res):
                        raise SystemExit(f"netsim bench: the {label} router's results differ "
                                         f"from the baseline kernel's at rate {pt[1]} on "
                                         f"{pt[0].name}")
            now.append(runs or None)
            before.append(base_runs)
        measured[label], baseline[label] = now, before
    # the fresh process in the environment the aifabric command gives it (one OpenBLAS
    # thread, aifabric.cli.BLAS_THREADS) and, interleaved with it, in OpenBLAS's default
    # (a worker thread per core): what a plain `python -c` of the API costs without it
    plain = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS}
    runs = {"command": [], "default": []}
    for _ in range(3):
        for env_name, env in (("command", {**plain, **BLAS_THREADS}), ("default", plain)):
            start = time.perf_counter()
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.run([sys.executable, "-c", _E2E], capture_output=True,
                                  text=True, cwd=Path(__file__).resolve().parents[2],
                                  env=env, check=True)
            total = time.perf_counter() - start
            now = resource.getrusage(resource.RUSAGE_CHILDREN)
            _, setup, _, sim, sim_cpu = map(float, proc.stdout.split())
            cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
            # start-up: the interpreter, the imports, loading the cached kernel, the
            # traffic; the CPU-seconds of the process do not depend on what else the
            # machine runs
            runs[env_name].append({"total_s": total, "startup_s": total - setup - sim,
                                   "setup_s": setup, "simulate_s": sim, "cpu_s": cpu,
                                   "startup_cpu_s": cpu - sim_cpu})
    e2e, e2e_default = ({k: round(statistics.median(r[k] for r in rs), 3) for k in rs[0]}
                        for rs in (runs["command"], runs["default"]))
    e2e["runs"] = e2e_default["runs"] = len(runs["command"])
    e2e["env"] = BLAS_THREADS
    rows = []
    for router, results in measured.items():
        for i, (what, key) in enumerate((
                ("16x16 mesh at 0.06 (M router-cycles/CPU-s)", "light"),
                ("16x16 mesh at 0.21, near saturation", "saturation"),
                ("RailX 2D-HyperX 1,296 chips, k = 2, 18 VCs, at 0.6", "railx"))):
            if results[i] is None:
                rows.append({"what": f"{router} router: {what}", "router": router,
                             "target": round(NETSIM_TARGETS[key] / 1e6, 2), "measured": None,
                             "baseline": None, "cpu_seconds": None, "factor": None,
                             "met": False, "not_run": refused[(router, i)]})
                continue
            sm = summarise_pairs([r.router_cycles_per_cpu_s for r in results[i]],
                                 [r.router_cycles_per_cpu_s for r in baseline[router][i]])
            got = sm["median"]
            rows.append({"what": f"{router} router: {what}", "router": router,
                         "target": round(NETSIM_TARGETS[key] / 1e6, 2),
                         "measured": round(got / 1e6, 2),
                         "range": [round(sm["low"] / 1e6, 2), round(sm["high"] / 1e6, 2)],
                         "baseline": round(sm["base"] / 1e6, 2) if sm["base"] else None,
                         "ratio": round(sm["ratio"], 2) if sm["ratio"] else None,
                         "runs": len(results[i]),
                         "cpu_seconds": [r.cpu_seconds for r in results[i]],
                         "factor": round(NETSIM_TARGETS[key] / got, 2),
                         "met": got >= NETSIM_TARGETS[key]})
    rows.append({"what": "whole 15,000-cycle 16x16 run, fresh process (s)",
                 "target": NETSIM_TARGETS["end_to_end_s"], "measured": e2e["total_s"],
                 "factor": round(e2e["total_s"] / NETSIM_TARGETS["end_to_end_s"], 2),
                 "met": e2e["total_s"] <= NETSIM_TARGETS["end_to_end_s"]})
    # the same run in CPU-seconds of the process, the figure the rates above are given in
    rows.append({"what": "the same run, CPU-seconds of the process (s)",
                 "target": NETSIM_TARGETS["end_to_end_s"], "measured": e2e["cpu_s"],
                 "factor": round(e2e["cpu_s"] / NETSIM_TARGETS["end_to_end_s"], 2),
                 "met": e2e["cpu_s"] <= NETSIM_TARGETS["end_to_end_s"]})
    rows.append({"what": "the same run, CPU-seconds, OpenBLAS's default threads (s)",
                 "target": NETSIM_TARGETS["end_to_end_s"], "measured": e2e_default["cpu_s"],
                 "factor": round(e2e_default["cpu_s"] / NETSIM_TARGETS["end_to_end_s"], 2),
                 "met": e2e_default["cpu_s"] <= NETSIM_TARGETS["end_to_end_s"]})
    return {"rows": rows, "end_to_end": e2e, "end_to_end_default": e2e_default,
            "cold": _cold_starts(configs),
            "baseline": NETSIM_BASELINE if base is not None else None}


# -- BookSim2 on the same machine, in the same run: the field's reference C++ cycle-level
# simulator (github.com/booksim/booksim2), built by the user outside this project and given
# by path. It runs the targets' mesh points with our setting written in its configuration
# language; its figure is routers x cycles it simulated / CPU-seconds of its process, start-up
# (a run of BOOKSIM_STARTUP_CYCLES cycles) subtracted.
BOOKSIM_STARTUP_CYCLES = 10
BOOKSIM_POINTS = ((16, 0.06), (16, 0.21))
BOOKSIM_CYCLES = 15_000


def booksim_config(k: int, rate: float, cycles: int, *, vcs: int = 2, buffer: int = 16,
                   length: int = 4, seed: int = 1) -> str:
    """A BookSim2 configuration of our mesh point: k x k mesh, dimension-order routing, ``vcs``
    VCs of ``buffer`` flits, ``length``-flit packets, uniform Bernoulli traffic at ``rate``
    flits/node/cycle, one sample period of ``cycles`` cycles from an empty network (no
    warm-up; the run ends after that period). Its input-queued router at BookSim's own
    pipeline settings, written out."""
    return "\n".join([
        "// written by aifabric bench --only netsim: the speed targets' mesh point",
        "topology = mesh;", f"k = {k};", "n = 2;", "routing_function = dim_order;",
        "router = iq;", f"num_vcs = {vcs};", f"vc_buf_size = {buffer};",
        "wait_for_tail_credit = 0;",
        "routing_delay = 1;", "vc_alloc_delay = 1;", "sw_alloc_delay = 1;", "credit_delay = 0;",
        "st_prepare_delay = 0;", "st_final_delay = 1;", "speculative = 0;",
        "vc_allocator = islip;", "sw_allocator = islip;", "alloc_iters = 1;",
        "input_speedup = 1;", "output_speedup = 1;", "internal_speedup = 1.0;",
        "traffic = uniform;", f"packet_size = {length};", "injection_process = bernoulli;",
        "injection_rate_uses_flits = 1;", f"injection_rate = {rate};",
        "sim_type = latency;", "warmup_periods = 0;", f"sample_period = {cycles};",
        "max_samples = 1;", f"seed = {seed};", ""])


def _booksim_run(exe: Path, cfg: Path) -> tuple[float, str]:
    """(CPU-seconds of one BookSim2 process, its output). BookSim2 exits with 255 after a run
    that converged and 0 after one that ended unconverged: a run counts as finished when it
    printed its ``Total run time``, whatever its exit code."""
    import resource
    import subprocess
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([str(exe), str(cfg)], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if "Total run time" not in proc.stdout:
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise SystemExit(f"netsim bench: {exe} {cfg.name} exited with {proc.returncode} "
                         f"before the end of its run: {last[0]}")
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime), proc.stdout


def booksim_output(text: str, period: int) -> tuple[int, float]:
    """(cycles simulated, accepted flits/node/cycle) read off BookSim2's output after one
    sample period of ``period`` cycles: the last ``Time taken is N cycles`` (a run that
    converged and drained), or ``period`` when the run ends unconverged after its one
    period ("Simulation unstable, ending"), and the last ``Accepted flit rate average``."""
    import re
    acc = re.findall(r"Accepted flit rate average\s*=\s*([0-9.eE+-]+)", text)
    cyc = re.findall(r"Time taken is (\d+) cycles", text)
    if not acc or not (cyc or "Simulation unstable" in text):
        raise ValueError("no 'Accepted flit rate average' line, or no end of the run "
                         "('Time taken is N cycles' or 'Simulation unstable')")
    return (int(cyc[-1]) if cyc else period), float(acc[-1])


def booksim_points(exe: Path | None, repeat: int = 3) -> dict:
    """BookSim2 at the targets' mesh points (best and median of ``repeat`` runs each), or why
    not."""
    import statistics
    if exe is None:
        return {"skipped": "no BookSim2 binary (aifabric bench --booksim PATH, or "
                           "AIFABRIC_BOOKSIM)"}
    cfgdir = BUILD / "bench" / "booksim"
    cfgdir.mkdir(parents=True, exist_ok=True)
    start = cfgdir / "startup.cfg"
    start.write_text(booksim_config(16, 0.06, BOOKSIM_STARTUP_CYCLES))
    startup = min(_booksim_run(exe, start)[0] for _ in range(repeat))
    rows = []
    for k, rate in BOOKSIM_POINTS:
        cfg = cfgdir / f"mesh{k}_{rate}.cfg"
        cfg.write_text(booksim_config(k, rate, BOOKSIM_CYCLES))
        runs = []
        for _ in range(repeat):
            cpu, text = _booksim_run(exe, cfg)
            try:
                cycles, accepted = booksim_output(text, BOOKSIM_CYCLES)
            except ValueError as e:
                raise SystemExit(f"netsim bench: {exe} {cfg.name}: {e}") from None
            runs.append((cycles, accepted, cpu))
        cycles, accepted = runs[0][0], runs[0][1]
        cpus = [max(c - startup, 1e-9) for _, _, c in runs]
        rows.append({"network": f"{k}x{k} mesh", "rate": rate, "cycles": cycles,
                     "accepted": round(accepted, 4),
                     "cpu_seconds": [round(c, 3) for c in cpus],
                     "router_cycles_per_cpu_s_best": round(k * k * cycles / min(cpus)),
                     "router_cycles_per_cpu_s_median":
                         round(k * k * cycles / statistics.median(cpus))})
    return {"binary": str(exe), "startup_cpu_s": round(startup, 3), "repeat": repeat,
            "rows": rows}


def _booksim_text(bs: dict, target_rows: list) -> str:
    """The BookSim2 comparison's paragraph: its figure beside each router's at the same
    point."""
    if "skipped" in bs:
        return f"\n\nBookSim2 on this machine: skipped, {bs['skipped']}."
    rows = []
    for b in bs["rows"]:
        key = f"16x16 mesh at {b['rate']}"
        ours = [t for t in target_rows if key in t["what"] and t["measured"] is not None]
        for t in ours:
            rows.append([f"{b['network']} at {b['rate']}", t["router"], f"{t['measured']:,}",
                         f"{b['router_cycles_per_cpu_s_best'] / 1e6:.3f}",
                         f"{t['measured'] * 1e6 / b['router_cycles_per_cpu_s_best']:.1f}x"])
    accepted = ", ".join(f"{b['accepted']:.3f} at {b['rate']}" for b in bs["rows"])
    return ("\n\nBookSim2 on this machine, in this run (`" + bs["binary"] + "`; its "
            "input-queued router, dimension-order routing, the same mesh, VCs, buffers, "
            f"packets and traffic, one {BOOKSIM_CYCLES:,}-cycle sample period from empty, "
            f"best of {bs['repeat']} processes, start-up of {bs['startup_cpu_s']:.3f} CPU-s "
            f"subtracted; configurations in build/bench/booksim/; accepted {accepted}):\n\n"
            + md_table(["point", "our router", "ours (M router-cycles/CPU-s)",
                        "BookSim2", "ours / BookSim2"], rows))
