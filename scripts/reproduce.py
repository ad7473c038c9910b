"""The reproduction report: every system package under models/ is asked for its records
(``reproduce() -> list[Record]``) and, if it has them, its figures (``figures(out_dir)``).

Writes build/reproduce/report.json (a list of records: id, paper, metric, unit, paper_value,
model_value, rel_error, note) and build/reproduce/report.md (one table per paper, worst error
first), plus the figures as PNG.

    python -m scripts.reproduce [--out DIR] [--quick]
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from models.common.records import PAPERS, Record

from ._cli import BUILD, Parser, UsageError, atomic_write, md_table, run_main, write_json


def load_system(key: str):
    """The models/<key> package, or None while it does not exist yet."""
    try:
        return importlib.import_module(f"models.{key}")
    except ModuleNotFoundError as e:
        if e.name == f"models.{key}":
            return None
        raise


def collect(systems: dict[str, object], out_dir: Path, quick: bool = False):
    """Records and figures of each system; ``systems`` maps a PAPERS key to its package (or
    None). Returns (records, figures, status) where status[key] says what each contributed."""
    records: list[Record] = []
    figures: list[Path] = []
    status: dict[str, str] = {}
    for key, module in systems.items():
        if module is None:
            status[key] = "no records yet (no models/{} package)".format(key)
            continue
        reproduce = getattr(module, "reproduce", None)
        if reproduce is None:
            status[key] = "no records yet (package has no reproduce())"
            continue
        kwargs = {"quick": quick} if "quick" in inspect.signature(reproduce).parameters else {}
        got = list(reproduce(**kwargs))
        for r in got:
            if not isinstance(r, Record) or r.paper != key:
                raise UsageError(f"models.{key}.reproduce() returned {r!r}, not a Record of "
                                 f"paper {key!r}")
        records += got
        if hasattr(module, "figures"):
            fig_kwargs = {"quick": quick} \
                if "quick" in inspect.signature(module.figures).parameters else {}
            figures += [Path(p) for p in module.figures(out_dir, **fig_kwargs)]
        status[key] = f"{len(got)} records" if got else "no records yet"
    return records, figures, status


def render(records: list[Record], figures: list[Path], status: dict[str, str]) -> str:
    out = ["# Reproduction report", "",
           "Each number a paper states, beside the number the golden model computes. "
           "rel_error = |model - paper| / |paper|.", ""]
    for key, title in PAPERS.items():
        out += [f"## {title}", ""]
        mine = sorted((r for r in records if r.paper == key), key=lambda r: -r.rel_error)
        if not mine:
            out += [f"_{status.get(key, 'no records yet')}._", ""]
            continue
        rows = [[r.id, r.metric, r.unit, f"{r.paper_value:.6g}", f"{r.model_value:.6g}",
                 f"{100 * r.rel_error:.2f}%", r.note] for r in mine]
        out.append(md_table(["id", "metric", "unit", "paper", "model", "error", "note"], rows))
    if figures:
        out += ["## Figures", ""] + [f"- `{p.name}`" for p in figures] + [""]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=BUILD / "reproduce")
    parser.add_argument("--quick", action="store_true", help="CI-sized runs where offered")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    systems = {key: load_system(key) for key in PAPERS}
    records, figures, status = collect(systems, args.out, args.quick)
    write_json(args.out / "report.json", [r.to_dict() for r in records])
    text = render(records, figures, status)
    atomic_write(args.out / "report.md", text)
    for key, title in PAPERS.items():
        print(f"{title:45} {status[key]}")
    print(f"\n{len(records)} records -> {args.out / 'report.md'}, {args.out / 'report.json'}")
    return 0


if __name__ == "__main__":
    run_main(main)
