"""mesh (build/bench/mesh.json): cycles/s of the 4 x 4 router mesh RTL co-simulated on Verilator
(the cocotb testbench injecting, ejecting and checking every flit against the simulator);
baseline: the network simulator on the same packets, same cycles, same run."""

from __future__ import annotations

import time

from .._cli import BUILD, md_table, write_json
from ._common import machine


def run(args) -> str:
    """The mesh co-simulation's rate against the simulator's on the same packets."""
    from aifabric.cosim.runner import run
    from aifabric.models.common.netsim import Simulator, Traffic
    from aifabric.models.common.netsim.traffic import synthesize
    from aifabric.models.railx.mesh import mesh_network
    from aifabric.rtl.catalog import BLOCKS
    params = BLOCKS["mesh"].params[0]
    print("mesh: co-simulation on Verilator (builds first, at -O1)...", flush=True)
    # a model built for speed (the regression builds at -O0, which compiles faster)
    res = run("mesh", params, seed=1, build_opt="-O1", build_root=BUILD / "bench" / "cosim")
    if not res.passed:
        raise RuntimeError(f"mesh co-simulation failed: {res.describe()}")
    net = mesh_network(params["k"], vcs=params["vcs"], delay=params["delay"],
                       ports=params["ports"])
    rows_out, points = [], []
    for sc in res.stats[0]["scenarios"]:
        rows = synthesize(Traffic.make(sc["pattern"], net.coords, net.grid), sc["rate"],
                          params["packet"], sc["created_cycles"], seed=sc["traffic_seed"])
        traffic = Traffic.make("trace", net.coords, net.grid, trace=rows)

        def fresh():
            return Simulator(net, traffic, buffer=params["depth"],
                             allocator=params["allocator"])
        fresh().advance(50)                                            # compiled
        sims = [fresh() for _ in range(20)]        # built before timing: runs only
        start = time.perf_counter()
        for sim in sims:
            sim.advance(sc["cycles"])
        sim_rate = len(sims) * sc["cycles"] / (time.perf_counter() - start)
        cosim_rate = sc["cycles"] / sc["seconds"]
        points.append({**sc, "cosim_cycles_per_s": round(cosim_rate, 1),
                       "simulator_cycles_per_s": round(sim_rate, 1)})
        rows_out.append([f"{sc['pattern']} {sc['rate']}", f"{sc['cycles']:,}",
                         f"{sc['flits']:,}", f"{cosim_rate:,.0f}", f"{sim_rate:,.0f}",
                         f"{sim_rate / cosim_rate:,.0f}x"])
        print(f"    {sc['pattern']} {sc['rate']}: co-simulation {cosim_rate:,.0f} cycles/s, "
              f"simulator {sim_rate:,.0f} cycles/s", flush=True)
    write_json(BUILD / "bench" / "mesh.json", {"params": params, "machine": machine(),
                                                 "points": points})
    return ("## 4 x 4 router mesh (build/bench/mesh.json)\n\n"
            f"RTL on Verilator (C++ at -O1) under cocotb (every injection and ejection checked "
            f"against the simulator, each cycle) against the network simulator alone on the "
            f"same packets and cycles ({', '.join(f'{k}={v}' for k, v in params.items())}).\n\n"
            + md_table(["traffic", "cycles", "flits", "co-simulation cycles/s",
                        "simulator cycles/s", "simulator / co-simulation"], rows_out))
