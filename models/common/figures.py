"""What every package's figures and report tables share: a headless pyplot, a save, a
Markdown table."""

from __future__ import annotations

from pathlib import Path

__all__ = ["pyplot", "save", "md_table"]


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, path) -> Path:
    """Lay out, write as a 110-dpi PNG (creating the folder), close; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
    return path


def md_table(header: list, rows: list) -> str:
    """A Markdown table (one line per row, a trailing newline)."""
    lines = ["| " + " | ".join(str(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
