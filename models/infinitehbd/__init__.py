"""InfiniteHBD (Shou et al., 2025): a transceiver-centric HBD of OCS transceivers forming
fault-tolerant K-hop rings.

- :mod:`.topology`: nodes, the K-hop ring/line of OCS transceivers, TP rings with the
  transceiver configuration that realises them (Alg. 2), link-by-link verification.
- :mod:`.faults`: the released production trace (``data/``, JSON loader) and the rule
  placing its 400 servers on the 9,792-GPU line, a generator calibrated to a trace's
  statistics, CSV import, 8 -> 4-GPU conversion, i.i.d. GPU faults (Appendix A).
- :mod:`.waste`: GPU waste of Big-Switch, InfiniteHBD, NVL-36/72/576, TPUv4, SiP-Ring.
- :mod:`.bound`: Appendix C's bound (Table 7) and its Monte-Carlo check.
- :mod:`.orchestration`: Algorithms 2-5 and cross-ToR traffic (§4.3, §6.4).
- :mod:`.cost`: Table 8's parts, Table 6, the aggregate cost of Fig 13d.
- :mod:`.experiments`: the paper's numbers and figures, computed by the above.
"""

from __future__ import annotations

from pathlib import Path

from aifabric.models.common.records import Record, with_ranges

from .topology import HBD, Ring, build_rings, verify

__all__ = ["HBD", "Ring", "build_rings", "verify", "reproduce", "tables", "figures"]

_cache: dict = {}
_MC = {False: 4000, True: 400}


def _cached(key, fn):
    if key not in _cache:
        _cache[key] = fn()
    return _cache[key]


def _study(quick: bool) -> dict:
    from . import bound, experiments as ex, faults

    def mc():
        p = faults.gpu_fault_prob(faults.PROD_P99, 8)
        out = {}
        for R in (4, 8):
            for K in (2, 3, 4):
                m = bound.monte_carlo_waste(R, K, 32, p, samples=_MC[quick], seed=R * 10 + K)
                out[(R, K)] = {**m, "samples": _MC[quick]}
        return out

    return _cached(("study", quick), lambda: {
        "trace": ex.trace_study(),
        "sens": ex.sensitivity_study(ex.SENS_SEEDS if quick else ex.PLACEMENT_SEEDS),
        "trace12": ex.trace_study(repair="mean"),
        "sweep": ex.fault_sweep(samples=40 if quick else 200),
        "orch": ex.orchestration_study(seeds=(1,) if quick else (1, 2, 3)),
        "orch16": ex.orchestration_study(seeds=(1,) if quick else (1, 2, 3), p=4),
        "agg": ex.aggregate_study(samples=20 if quick else 100), "mc": mc()})


def reproduce(quick: bool = False) -> list[Record]:
    """Appendix A's conversion and the released trace's statistics, Table 7 (bound and
    Monte-Carlo), the §6.2 waste headline over the released 348-day trace placed on the
    9,792-GPU line (mean of 24 placements, both TPUv4 readings), Table 6 from Table 8's
    parts, Fig 13d's crossover (with its GPU-price band), §6.4's cross-ToR figures and Table
    2's MFU (:mod:`.mfu`).
    ``quick``: fewer Monte-Carlo and sweep samples, and five placements of the trace instead
    of the full run's 24."""
    from . import mfu
    from .experiments import records
    s = _study(quick)
    out = records(s["trace"], s["orch"], s["agg"], s["mc"], s["sens"], s["orch16"]) \
        + mfu.records()
    return with_ranges(out, Path(__file__).with_name("expected_ranges.json"), quick)


def tables(quick: bool = False) -> list[str]:
    from .experiments import tables_md
    s = _study(quick)
    from . import mfu
    return tables_md(s["trace"], s["sweep"], s["sens"], s["mc"], s["agg"],
                     (s["orch"], s["orch16"]), s["trace12"]) + [mfu.table_md()]


def figures(out_dir: Path, quick: bool = False) -> list[Path]:
    """infinitehbd_fig9 (waste over the released trace and CDF), fig10 (waste vs GPU fault
    ratio), fig11 (maximal job scale), fig12 (waiting time, every fault lasting the trace's
    mean repair time), fig13 (orchestration with 8- and 16-GPU ToRs, cost with its GPU-price
    band)."""
    from .experiments import plot_all
    s = _study(quick)
    return plot_all(s["trace"], s["sweep"], s["orch"], s["agg"], Path(out_dir),
                    orch16=s["orch16"], ts12=s["trace12"])
