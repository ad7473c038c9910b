"""Flex-SiPAC (Wu et al., JOCN 2024): wavelength-reconfigurable silicon-photonic BCube.

- :mod:`.topology`: SiPAC(r, L), Fig 3's bandwidth scaling and Fig 9's network sizes.
- :mod:`.traffic`: job mappings, per-collective traffic matrices, skewness (eq 2).
- :mod:`.allocation`: eq 1 exact and heuristic, per-WSS wavelength colouring,
  minimal-change reconfiguration.
- :mod:`.sipco`: Flex-SiPCO (Algorithm 1) and mesh all-reduce schedules, executed.
- :mod:`.packetsim`: the packet-level simulator (back-pressure, relaying, blocking steps);
  :mod:`.fabrics`: the evaluated networks as simulator links; :mod:`.sipocs`: SiP-ML's
  circuit steering (ILP) for the SiP-OCS baseline.
- :mod:`.experiments`: the paper's numbers and figures, computed by the above.
"""

from __future__ import annotations

from pathlib import Path

from aifabric.models.common.records import Record

from .topology import SiPAC

__all__ = ["SiPAC", "reproduce", "tables", "figures"]

_cache: dict = {}
_COUNT = {False: 100, True: 15}


def _cached(key, fn):
    if key not in _cache:
        _cache[key] = fn()
    return _cache[key]


def _gaps(quick: bool):
    from .experiments import gap_study
    return _cached(("gaps", quick), lambda: gap_study(_COUNT[quick]))


def _sim(quick: bool) -> dict:
    """Figs 7-8 on the authors' packet-level setting, and Fig 7's 1 MB points with one
    parameter changed (the ablations the reasons quote); the full run adds the credit model
    (the ablation: quick mode stays CI-sized)."""
    from . import experiments as ex

    def run():
        groups = {"f7": ex.fig7_tasks(quick), "f8": ex.fig8_tasks(quick),
                  "abl": ex.fig7_ablation_tasks(quick)}
        if not quick:
            groups["credit.f7"] = ex.fig7_tasks(quick, "credit")
            groups["credit.f8"] = ex.fig8_tasks(quick, "credit")
        # one pool over every point, so the processes stay busy to the end
        done = ex.run_tasks([((g, key), args, kw) for g, tasks in groups.items()
                             for key, args, kw in tasks], "Flex-SiPAC Figs 7-8")
        out = {g: {} for g in groups}
        for (g, key), res in done.items():
            out[g][key] = res
        out["tb"] = ex.testbed()
        if not quick:
            out["credit"] = {"f7": out.pop("credit.f7"), "f8": out.pop("credit.f8")}
        return out
    return _cached(("sim", quick), run)


def reproduce(quick: bool = False) -> list[Record]:
    """Topology counts (Fig 9's scales) from built graphs, Fig 9's crossover with TPUv4,
    Fig 3's link figures (definitions), Flex-SiPCO's per-link load against §4's bound and
    Fig 7's JCT gain over the H100 SuperPOD and Fig 8's share of wins from the packet
    simulator. ``quick``: 64 CUs
    instead of 512 for Figs 7-8 and fewer random mappings for eq 1."""
    from aifabric.models.common.records import with_ranges

    from .experiments import records, sim_records
    s = _sim(quick)
    return with_ranges(records(_gaps(quick)) + sim_records(s["f7"], s["f8"], quick, s["tb"],
                                                           s.get("credit"), s.get("abl")),
                       Path(__file__).with_name("expected_ranges.json"), quick=quick)


def tables(quick: bool = False) -> list[str]:
    from .experiments import reconfig_study, sim_tables_md, tables_md
    s = _sim(quick)
    return tables_md(_gaps(quick), _cached(("rc", quick),
                                           lambda: reconfig_study(12 if quick else 50))) \
        + sim_tables_md(s["f7"], s["f8"], s["tb"], quick, s.get("credit"), s.get("abl"))


def figures(out_dir: Path, quick: bool = False) -> list[Path]:
    """flexsipac_fig3_bandwidth.png, flexsipac_fig9_scale.png, flexsipac_eq1_gap.png,
    flexsipac_fig7_allreduce.png, flexsipac_fig8_workloads.png."""
    from .experiments import plot_fig3, plot_fig7, plot_fig8, plot_fig9, plot_gap
    out_dir = Path(out_dir)
    s = _sim(quick)
    return [plot_fig3(out_dir / "flexsipac_fig3_bandwidth.png"),
            plot_fig9(out_dir / "flexsipac_fig9_scale.png"),
            plot_gap(_gaps(quick), out_dir / "flexsipac_eq1_gap.png"),
            plot_fig7(s["f7"], out_dir / "flexsipac_fig7_allreduce.png", quick),
            plot_fig8(s["f8"], out_dir / "flexsipac_fig8_workloads.png")]
