"""batch (build/bench/cosim_batch.json): cycles/s of today's co-simulation (the testbenches
on cosim.testbench, one simulator callback a clock and checks in numpy every few hundred
cycles, on a model whose ports only are public: cosim.test_bvn on BvN N = 64, W = 10, and
cosim.test_mesh on the 4 x 4 mesh) with simulation wall and CPU seconds, against the same
testbenches on models with every signal public (how cocotb's runner builds them); same seed
and budget, same run, the same transactions checked equal. The per-cycle testbenches of
before are measured once, at a pinned commit (docs/figures.md, "Co-simulation speed")."""

from __future__ import annotations

import os

from .._cli import BUILD, md_table, write_json
from ._common import machine

BATCH_BVN = {"n": 64, "w": 10}      # the slowest BvN set of the regression


def _timed_cosim(block: str, params: dict, module: str, testcase: str, **kw):
    """One co-simulation: (result, simulation wall seconds, simulation CPU seconds). The CPU
    time is the user + system time of this process's children over the run (the simulator
    process; the build is a no-op by then: :func:`run_batch` builds first)."""
    import resource

    from aifabric.cosim.runner import run

    def cpu() -> float:
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime
    before = cpu()
    res = run(block, params, test_module=module, testcase=testcase, **kw)
    used = cpu() - before
    if not res.passed:
        where = ", ".join(f"{k}={v}" for k, v in params.items())
        raise RuntimeError(f"{module} on {block} ({where}) failed: "
                           f"{res.first_failure or res.describe()}")
    return res, res.sim_seconds, used


PUBLIC_ROOT = BUILD / "bench" / "cosim_public"     # the baseline's all-public models

# (name, all signals public?): the baseline first, then today's
BATCH_VARIANTS = (("batched_public", True), ("batched", False))


def _batch_set(label: str, block: str, params: dict, module: str, testcase: str, figures,
               roots: dict, **kw) -> dict:
    """The testbench on a model with every signal public, then on the ports-only model
    (today's), one after the other on the same seed and budget; ``figures(stats)`` ->
    (cycles, loop wall seconds, loop CPU seconds, what must be identical). ``roots``: the
    build root of the all-public and the ports-only model (True / False)."""
    out = {"block": block, "params": params, "testcase": testcase}
    for name, public in BATCH_VARIANTS:
        print(f"{label}: {module} on the {'all-public' if public else 'ports-only'} model ...",
              flush=True)
        res, wall, cpu = _timed_cosim(block, params, module, testcase, all_public=public,
                                      build_root=roots[public], **kw)
        stat = next(s for s in res.stats if s["test"] == testcase)
        cycles, seconds, loop_cpu, same = figures(stat)
        out[name] = {"module": module, "all_public": public, "cycles": cycles,
                     "transactions": stat["transactions"],
                     "loop_seconds": round(seconds, 2), "loop_cpu_seconds": round(loop_cpu, 2),
                     "cycles_per_s": round(cycles / seconds, 1),
                     "cycles_per_cpu_s": round(cycles / loop_cpu, 1),
                     "sim_wall_s": round(wall, 2), "sim_cpu_s": round(cpu, 2),
                     "coverage": same}
        print(f"    {cycles:,} cycles, {cycles / seconds:,.0f} cycles/s, "
              f"{cycles / loop_cpu:,.0f} cycles/CPU-s; simulation "
              f"{wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    base = out[BATCH_VARIANTS[0][0]]
    for name, _ in BATCH_VARIANTS[1:]:
        v = out[name]
        if v["coverage"] != base["coverage"]:
            raise RuntimeError(f"{label}: {name} did not run the same transactions as the "
                               f"all-public model (same seed and budget)")
        v["speedup"] = round(v["cycles_per_s"] / base["cycles_per_s"], 2)
        v["speedup_cpu"] = round(v["cycles_per_cpu_s"] / base["cycles_per_cpu_s"], 2)
    for name, _ in BATCH_VARIANTS:
        del out[name]["coverage"]
    out["speedup"], out["speedup_cpu"] = out["batched"]["speedup"], out["batched"]["speedup_cpu"]
    return out


def _prebuild(block: str, params: dict, module: str, testcase: str, roots: dict, **kw) -> None:
    """Build both models (all-public and ports-only) before anything is timed."""
    for public in (True, False):
        _timed_cosim(block, params, module, testcase, all_public=public,
                     build_root=roots[public], **kw)


def run(args) -> str:
    """The co-simulation of BvN N = 64 (W = 10) and of the 4 x 4 router mesh: the testbench
    on a Verilated model with every signal public against today's (the ports-only model), in
    the same run, on the same seed and budget."""
    from aifabric.rtl.catalog import BLOCKS
    seed = args.batch_seed
    load = [os.getloadavg()[0]]
    print(f"batch: BvN n={BATCH_BVN['n']}, w={BATCH_BVN['w']}: building both models...",
          flush=True)
    bvn_roots = {True: PUBLIC_ROOT, False: None}
    _prebuild("bvn", BATCH_BVN, "aifabric.cosim.test_bvn", "stall_keeps_every_step",
              bvn_roots, seed=seed)

    def bvn_figures(s):
        same = {k: s[k] for k in ("transactions", "cycles", "steps", "matrices",
                                  "moe_cycles", "quantised_cycles")}
        return s["cycles"], s["seconds"], s["cpu_seconds"], same
    bvn = _batch_set("batch: BvN", "bvn", BATCH_BVN, "aifabric.cosim.test_bvn",
                     "decompositions", bvn_figures,
                     bvn_roots, seed=seed, transactions=args.batch_bvn_steps)
    mesh_params = BLOCKS["mesh"].params[0]
    # the model `--only mesh` builds too (C++ at -O1, under build/bench/cosim)
    mesh_roots = {True: PUBLIC_ROOT, False: BUILD / "bench" / "cosim"}
    mesh_kw = {"seed": seed, "build_opt": "-O1"}
    print("batch: mesh: building both models (at -O1)...", flush=True)
    _prebuild("mesh", mesh_params, "aifabric.cosim.test_mesh", "edge_and_rail_ports",
              mesh_roots, **mesh_kw)

    def mesh_figures(s):
        sc = s["scenarios"]
        same = [{k: v for k, v in x.items() if k not in ("seconds", "cpu_seconds")}
                for x in sc]
        return (sum(x["cycles"] for x in sc), sum(x["seconds"] for x in sc),
                sum(x["cpu_seconds"] for x in sc), same)
    scale = os.environ.get("AIFABRIC_MESH_SCALE")
    os.environ["AIFABRIC_MESH_SCALE"] = str(args.batch_mesh_scale)
    try:
        mesh_out = _batch_set("batch: mesh", "mesh", mesh_params, "aifabric.cosim.test_mesh",
                              "traffic_patterns", mesh_figures, mesh_roots, **mesh_kw)
    finally:
        if scale is None:
            os.environ.pop("AIFABRIC_MESH_SCALE", None)
        else:
            os.environ["AIFABRIC_MESH_SCALE"] = scale
    load.append(os.getloadavg()[0])
    out = {"name": "cosim_batch", "seed": seed, "bvn_steps": args.batch_bvn_steps,
           "mesh_scale": args.batch_mesh_scale, "machine": machine(),
           "load_average_1min": load,
           "results": {"bvn": bvn, "mesh": mesh_out}}
    write_json(BUILD / "bench" / "cosim_batch.json", out)
    rows = []
    what_of = {"batched_public": "all signals public",
               "batched": "ports only (now)"}
    for what, r in ((f"BvN N = {BATCH_BVN['n']}, W = {BATCH_BVN['w']} (decompositions, "
                     f"{args.batch_bvn_steps:,}-step budget)", bvn),
                    (f"4 x 4 mesh (traffic_patterns, scale {args.batch_mesh_scale:g})",
                     mesh_out)):
        for name, _ in BATCH_VARIANTS:
            v = r[name]
            rows.append([what if name == BATCH_VARIANTS[0][0] else "", what_of[name], v["module"],
                         f"{v['cycles']:,}", f"{v['transactions']:,}",
                         f"{v['cycles_per_s']:,.0f}", f"{v['cycles_per_cpu_s']:,.0f}",
                         f"{v['sim_wall_s']:.1f}", f"{v['sim_cpu_s']:.1f}",
                         f"**{v['speedup']:.1f}x** ({v['speedup_cpu']:.1f}x per CPU-s)"
                         if "speedup" in v else ""])
    return ("## Co-simulation speed (build/bench/cosim_batch.json)\n\n"
            f"Each set in the same run, one after the other, on the same seed ({seed}) and "
            f"budget; the same transactions, cycles and statistics checked equal: the "
            f"testbench on a model built the way cocotb's runner does (--public-flat-rw), "
            f"then on a model whose ports only are public (now). cycles/s "
            f"and cycles/CPU-s: the test's own cycle loop (stimulus, checks, model calls "
            f"included) over its wall and its CPU time (the CPU figure holds on a loaded "
            f"machine); simulation wall and CPU: the whole simulator process (start-up and "
            f"imports included). Load average (1 min) {load[0]:.1f} before, {load[1]:.1f} "
            f"after. The per-cycle testbenches of before: docs/figures.md.\n\n"
            + md_table(["design", "co-simulation", "testbench", "cycles", "transactions",
                        "cycles/s", "cycles/CPU-s", "simulation wall (s)",
                        "simulation CPU (s)", "speed-up"], rows))


# small blocks whose netlists OpenSTA times in seconds
