"""sipac (build/bench/flexsipac.json): the packet simulator on a 512-CU Fig 7 point, compiled
engine against the plain-Python reference (same result), and the whole Fig 7's wall time."""

from __future__ import annotations

import time

from .._cli import BUILD, md_table, write_json


def run(args) -> str:
    """Flex-SiPAC's packet simulator: one 512-CU Fig 7 point (sigma = 0, 1 MB, mesh on the
    static SiPAC: the most relaying) on the compiled engine and on the plain-Python reference
    (same rules, same result), then the whole Fig 7 (4 mappings x 7 fabric-algorithm pairs x
    6 message sizes) on the compiled engine."""
    from aifabric.models.flexsipac import experiments as ex, fabrics
    from aifabric.models.flexsipac.packetsim import simulate, simulate_reference
    sizes = [64] * 8
    fab = fabrics.build("sipac", sizes, r=8, L=3)
    flows = fabrics.flows_for(fab, sizes, "mesh", 1e6)
    packet = ex.packet_for(flows)
    simulate(fab.links, flows[:10], packet=packet)          # compile outside the timing
    t = time.perf_counter()
    fast = simulate(fab.links, flows, packet=packet)
    fast_s = time.perf_counter() - t
    t = time.perf_counter()
    ref = simulate_reference(fab.links, flows, packet=packet)
    ref_s = time.perf_counter() - t
    assert fast.step_time == ref.step_time, "compiled engine and reference disagree"
    t = time.perf_counter()
    f7 = ex.fig7(quick=False)
    fig7_s = time.perf_counter() - t
    out = {"point_events": fast.events, "point_packets": fast.packets,
           "compiled_s": round(fast_s, 3), "reference_s": round(ref_s, 2),
           "speedup": round(ref_s / fast_s, 1), "events_per_s": round(fast.events / fast_s),
           "fig7_points": len(f7), "fig7_s": round(fig7_s, 1)}
    write_json(BUILD / "bench" / "flexsipac.json", out)
    return ("## Flex-SiPAC packet simulator (build/bench/flexsipac.json)\n\n"
            + md_table(["measure", "value"], [
                ["Fig 7 point: 512 CUs, 8 jobs of 64, 1 MB mesh all-reduce on static SiPAC",
                 f"{fast.packets:,} packets, {fast.events:,} events"],
                ["compiled engine", f"{fast_s:.2f} s ({fast.events / fast_s / 1e6:.2f} M "
                                    f"events/s)"],
                ["plain-Python reference, same run, same result", f"{ref_s:.1f} s"],
                ["speed-up", f"{ref_s / fast_s:.1f}x"],
                [f"whole Fig 7 ({len(f7)} points)", f"{fig7_s / 60:.1f} min"]]))
