"""The reproduction report: every system package under models/ is asked for its records
(``reproduce() -> list[Record]``) and, if it has them, its figures (``figures(out_dir)``).

Writes build/reproduce/report.json (a list of records: id, paper, kind, metric, unit,
paper_value, model_value, rel_error or margin, tolerance, status, note, why) and
build/reproduce/report.md (per paper: independent values, bounds, then definitions apart),
plus the figures as PNG. ``--readme FILE`` also rewrites the block between
``<!-- reproduce:begin -->`` and ``<!-- reproduce:end -->`` in FILE with the summary.

    python -m scripts.reproduce [--out DIR] [--quick] [--readme README.md]
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


def _call(fn, quick: bool):
    kwargs = {"quick": quick} if "quick" in inspect.signature(fn).parameters else {}
    return fn(**kwargs)


def collect(systems: dict[str, object], out_dir: Path, quick: bool = False):
    """Records, figures and tables of each system; ``systems`` maps a PAPERS key to its
    package (or None). Returns (records, figures, status, tables) where status[key] says what
    each contributed and tables[key] lists the markdown sections of the package's
    ``tables()`` (results that are not paper values: sweeps, tuned parameters)."""
    records: list[Record] = []
    figures: list[Path] = []
    status: dict[str, str] = {}
    tables: dict[str, list[str]] = {}
    for key, module in systems.items():
        if module is None:
            status[key] = "no records yet (no models/{} package)".format(key)
            continue
        reproduce = getattr(module, "reproduce", None)
        if reproduce is None:
            status[key] = "no records yet (package has no reproduce())"
            continue
        got = list(_call(reproduce, quick))
        for r in got:
            if not isinstance(r, Record) or r.paper != key:
                raise UsageError(f"models.{key}.reproduce() returned {r!r}, not a Record of "
                                 f"paper {key!r}")
        records += got
        if hasattr(module, "figures"):
            fig_kwargs = {"quick": quick} \
                if "quick" in inspect.signature(module.figures).parameters else {}
            figures += [Path(p) for p in module.figures(out_dir, **fig_kwargs)]
        if hasattr(module, "tables"):
            tables[key] = [str(t) for t in _call(module.tables, quick)]
        status[key] = f"{len(got)} records" if got else "no records yet"
    return records, figures, status, tables


def _num(x: float) -> str:
    return f"{x:,.6g}" if abs(x) < 1e6 else f"{x:,.0f}"


def _paper(r: Record) -> str:
    return f"{_num(r.paper_value)} ({r.formula})" if r.formula else _num(r.paper_value)


def counts(records: list[Record]) -> dict:
    values = [r for r in records if r.kind == "value"]
    bounds = [r for r in records if r.kind == "bound"]
    return {"values": len(values), "match": sum(r.status == "match" for r in values),
            "differ": sum(r.status == "differs" for r in values),
            "bounds": len(bounds), "hold": sum(r.status == "holds" for r in bounds),
            "definitions": sum(r.kind == "definition" for r in records),
            "unexplained": sum(not r.ok for r in records)}


def headline(records: list[Record]) -> str:
    c = counts(records)
    line = (f"{c['match']} of {c['values']} independently reproduced values match (within 1 % "
            f"or the paper's printed precision), {c['hold']} of {c['bounds']} bounds hold, "
            f"{c['differ']} values differ (each with its reason); {c['definitions']} "
            f"definitions (the paper's own formulas evaluated) are listed apart and not counted")
    if c["unexplained"]:
        line += (f". **{c['unexplained']} records fail: a bound violated or a difference "
                 f"without a reason**")
    return line + "."


def _tables(mine: list[Record], *, matches: bool) -> list[str]:
    out = []
    values = sorted((r for r in mine if r.kind == "value"), key=lambda r: -r.rel_error)
    shown = values if matches else [r for r in values if r.status != "match"]
    if shown:
        out += ["Values (model computed independently):" if matches else
                "Values that differ:", ""]
        out.append(md_table(["id", "metric", "unit", "paper", "model", "error", "status",
                             "why / note"],
                            [[r.id, r.metric, r.unit, _paper(r), _num(r.model_value),
                              f"{100 * r.rel_error:.2f}%", r.status, r.why or r.note]
                             for r in shown]))
    bounds = [r for r in mine if r.kind == "bound"]
    if bounds:
        out += ["Bounds (the paper claims at most / at least):", ""]
        out.append(md_table(["id", "metric", "unit", "claim", "model", "margin", "status",
                             "note"],
                            [[r.id, r.metric, r.unit, f"{r.bound} {_paper(r)}",
                              _num(r.model_value), _num(r.margin), r.status, r.why or r.note]
                             for r in bounds]))
    defs = [r for r in mine if r.kind == "definition"]
    if not matches:
        same = [r.id for r in defs if r.status in ("match", "holds")]
        defs = [r for r in defs if r.status not in ("match", "holds")]
        if same:
            out += [f"Definitions that give the paper's printed value ({len(same)}): "
                    + ", ".join(f"`{i}`" for i in same) + ".", ""]
    if defs:
        out += ["Definitions (the paper's formula evaluated; not counted as reproduced):", ""]
        out.append(md_table(["id", "metric", "unit", "paper", "formula gives",
                             "error / margin", "why"],
                            [[r.id, r.metric, r.unit,
                              f"{r.bound} {_paper(r)}" if r.bound else _paper(r),
                              _num(r.model_value),
                              f"{_num(r.margin)} ({r.status})" if r.bound
                              else f"{100 * r.rel_error:.2f}%", r.why or r.note]
                             for r in defs]))
    return out


def render(records: list[Record], figures: list[Path], status: dict[str, str],
           tables: dict[str, list[str]] | None = None) -> str:
    out = ["# Reproduction report", "", headline(records), "",
           "rel. error = |model - paper| / |paper|; a value matches within its tolerance (1 %, "
           "or half a unit of the paper's last printed digit where that is larger).", ""]
    for key, title in PAPERS.items():
        out += [f"## {title}", ""]
        mine = [r for r in records if r.paper == key]
        if not mine:
            out += [f"_{status.get(key, 'no records yet')}._", ""]
            continue
        out += [headline(mine), ""] + _tables(mine, matches=True)
        for section in (tables or {}).get(key, []):
            out += [section.rstrip("\n"), ""]
    if figures:
        out += ["## Figures", ""] + [f"- `{p.name}`" for p in figures] + [""]
    return "\n".join(out)


BEGIN, END = "<!-- reproduce:begin -->", "<!-- reproduce:end -->"


def readme_block(records: list[Record], quick: bool) -> str:
    """The README's reproduction summary: headline per paper and every record that does not
    simply match (differing values with their reasons, bounds, definitions)."""
    run = "`--quick` run" if quick else "full run (`make reproduce`)"
    out = [BEGIN, f"_Generated by `scripts/reproduce.py --readme` from the {run}; "
                  f"do not edit by hand._", "", headline(records), ""]
    for key, title in PAPERS.items():
        mine = [r for r in records if r.paper == key]
        if mine:
            out += [f"**{title}**: {headline(mine)}", ""] + _tables(mine, matches=False)
    out.append(END)
    return "\n".join(out)


def check_readme(path: Path) -> str:
    """The file's text; UsageError unless it has exactly one reproduce block."""
    if not path.is_file():
        raise UsageError(f"--readme: no such file {path}")
    text = path.read_text()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise UsageError(f"--readme: {path} needs one {BEGIN} ... {END} block")
    return text


def update_readme(path: Path, block: str) -> None:
    text = check_readme(path)
    head, rest = text.split(BEGIN)
    tail = rest.split(END, 1)[1]
    atomic_write(path, head + block + tail)


def main(argv=None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=BUILD / "reproduce")
    parser.add_argument("--quick", action="store_true", help="CI-sized runs where offered")
    parser.add_argument("--readme", type=Path, help="rewrite this file's reproduce block")
    args = parser.parse_args(argv)
    if args.readme is not None:
        check_readme(args.readme)      # before the long run, not after it
    args.out.mkdir(parents=True, exist_ok=True)
    systems = {key: load_system(key) for key in PAPERS}
    records, figures, status, tables = collect(systems, args.out, args.quick)
    write_json(args.out / "report.json", [r.to_dict() for r in records])
    text = render(records, figures, status, tables)
    atomic_write(args.out / "report.md", text)
    if args.readme is not None:
        update_readme(args.readme, readme_block(records, args.quick))
    for key, title in PAPERS.items():
        print(f"{title:45} {status[key]}")
    print(f"\n{headline(records)}")
    print(f"{len(records)} records -> {args.out / 'report.md'}, {args.out / 'report.json'}"
          + (f", {args.readme}" if args.readme is not None else ""))
    return 0


if __name__ == "__main__":
    run_main(main)
