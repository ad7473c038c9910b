"""Rail-only (Wang, Ghobadi et al.): a spine-less rail network for LLM training.

- :mod:`models.common.specs`: platforms (DGX A100 / H100 / GH200) and GPT models;
  Korthikanti et al.'s and MegatronLM's published runs (shared with InfiniteHBD).
- :mod:`.network`: Rail-optimized vs Rail-only minimum-tier Clos counts, cost and power
  (Table II, eq 4-5), built on :mod:`models.common.clos`.
- :mod:`.collectives`: hierarchical AllGather (eq 1), all-to-all direct or forwarded (eq 2-3),
  the bandwidth-optimal bounds (eq 12-13), and executable schedules that check them.
- :mod:`.traffic`: per-GPU-pair traffic of an iteration (Figs 2-5).
- :mod:`models.common.iteration`: the iteration-time model (eq 6-11) with the settings the
  paper leaves open as :class:`~models.common.iteration.Knobs`, one calibrated compute
  efficiency, and the strategy search (Figs 7-10; InfiniteHBD's Table 2 runs it too).
- :mod:`.placement`: rank layouts on a Rail-only network and the pipeline links that need
  forwarding.
- :mod:`.faults`: HB-domain failure policies over a fault trace (§IV-C).
- :mod:`.experiments`: the paper's numbers and figures, computed by the above.
"""

from __future__ import annotations

from pathlib import Path

from aifabric.models.common.records import Record, with_ranges

from .network import rail_only, rail_optimized, table2

__all__ = ["rail_only", "rail_optimized", "table2", "reproduce", "tables", "figures"]

_cache: dict = {}


def _cached(key, fn):
    if key not in _cache:
        _cache[key] = fn()
    return _cache[key]


def _traffic():
    from .experiments import traffic_study
    return _cached("traffic", traffic_study)


def _sweeps():
    from .experiments import fig8, fig9, fig10
    return _cached("sweeps", lambda: (fig8(), fig9(), fig10()))


def _bands():
    from .experiments import sweep_bands
    return _cached("bands", sweep_bands)


def _faults():
    from .experiments import fault_study
    return _cached("faults", fault_study)


def reproduce() -> list[Record]:
    """Table II (every cell, from built Clos networks), §I's Clos cost and power, §IV-B's
    slow-down (definitions and executed schedules), §III's traffic fractions (Figs 2-5),
    Fig 7's model error at one calibrated efficiency, the Figs 8-10 percentages from the
    strategy search with their sensitivity band over the knobs, and Rail-only vs
    Rail-optimized on the searched strategies (no --quick variant: all of it takes seconds)."""
    from .experiments import (collective_records, fig7, fig7_records, same_performance,
                              same_performance_records, sweep_records, table2_records,
                              traffic_records)
    records = (table2_records() + collective_records() + traffic_records(_traffic())
               + fig7_records(fig7()) + sweep_records(_bands())
               + same_performance_records(_cached("same", same_performance)))
    return with_ranges(records, Path(__file__).with_name("expected_ranges.json"))


def tables() -> list[str]:
    """Markdown: Table II side by side, the searched strategies of Fig 8, the fault-policy
    capacities and the Figs 8-10 values at every knob setting."""
    from .experiments import tables_md
    return tables_md(_sweeps(), _faults(), _bands())


def figures(out_dir: Path) -> list[Path]:
    """railonly_fig2_traffic.png, railonly_fig3/4/5 heatmaps, railonly_fig7_hfu.png,
    railonly_fig8/9/10 sweeps and railonly_faults.png."""
    from . import experiments as ex
    from .traffic import plot_heatmap
    out_dir = Path(out_dir)
    st = _traffic()
    f8, f9, f10 = _sweeps()
    return [ex.plot_fig2(st, out_dir / "railonly_fig2_traffic.png"),
            plot_heatmap(st["fig3"], out_dir / "railonly_fig3_gpt1t.png",
                         "Fig 3: GPT-1T, first 4 pipeline stages (DGX A100)", hb=8),
            plot_heatmap(st["fig4"], out_dir / "railonly_fig4_gh200.png",
                         "Fig 4: GPT-1T on 16 DGX GH200 (first 512 GPUs)", hb=256),
            plot_heatmap(st["fig5"], out_dir / "railonly_fig5_moe.png",
                         "Fig 5: MoE-1.3B on 16 DGX A100", hb=8),
            ex.plot_fig7(ex.fig7(), out_dir / "railonly_fig7_hfu.png"),
            ex.plot_fig8(f8, out_dir / "railonly_fig8_hb_size.png"),
            ex.plot_fig9(f9, out_dir / "railonly_fig9_bandwidth.png"),
            ex.plot_fig10(f10, out_dir / "railonly_fig10_batch.png"),
            ex.plot_faults(_faults(), out_dir / "railonly_faults.png")]
