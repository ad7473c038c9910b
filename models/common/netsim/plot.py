"""Latency-throughput curves of simulated sweeps as a PNG."""

from __future__ import annotations

from pathlib import Path

__all__ = ["latency_curves"]


def latency_curves(curves: dict[str, list[dict]], path: Path, title: str,
                   max_lines: bool = True) -> Path:
    """Mean latency against accepted throughput, one line per curve (stable points only: an
    unstable point has no finite latency); with ``max_lines`` a dotted vertical line at each
    curve's theoretical maximum. Written through a temporary file."""
    from matplotlib.figure import Figure      # no pyplot: no backend, no global state
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    plotted = 0
    for label, rows in curves.items():
        stable = [r for r in rows if not r["saturated"] and r["latency_mean"] > 0]
        plotted += len(stable)
        sat = max(r["accepted"] for r in rows)
        line, = ax.plot([r["accepted"] for r in stable], [r["latency_mean"] for r in stable],
                        "o-", ms=3, label=f"{label} (saturation {sat:.2f})")
        if max_lines and rows[0].get("max_throughput"):
            ax.axvline(rows[0]["max_throughput"], color=line.get_color(), ls=":", lw=1)
    ax.set_xlabel("accepted throughput (flits/cycle/chip)" +
                  ("; dotted: theoretical maximum" if max_lines else ""))
    ax.set_ylabel("mean packet latency (cycles)")
    if plotted:
        ax.set_yscale("log")
    else:  # every point saturated (short runs): keep the legend, say why the plot is empty
        ax.text(0.5, 0.5, "no stable point: every offered rate is past saturation",
                ha="center", va="center", transform=ax.transAxes, fontsize=9)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=120)
    tmp.replace(path)
    return path
