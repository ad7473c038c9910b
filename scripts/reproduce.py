"""The reproduction report: every system package under models/ is asked for its records
(``reproduce() -> list[Record]``) and, if it has them, its figures (``figures(out_dir)``).

Writes build/reproduce/report.json (a list of records: id, paper, kind, metric, unit,
paper_value, model_value, rel_error or margin, tolerance, status, note, why) and
build/reproduce/report.md (per paper: independent values, bounds, then definitions apart),
plus the figures as PNG. ``--readme FILE`` also rewrites the block between
``<!-- reproduce:begin -->`` and ``<!-- reproduce:end -->`` in FILE with the summary;
``--results FILE`` keeps the full run's records (the committed results/reproduce.json, from
which `make test` checks the README block). Exits 1 when a record contradicts its declared
expectation (the report is still written, the contradictions in bold).

    aifabric reproduce [--out DIR] [--quick] [--readme README.md] [--results FILE]
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from pathlib import Path

from aifabric.models.common.records import PAPERS, Record

from ._cli import BUILD, Parser, UsageError, atomic_write, md_table, run_main, write_json


def load_system(key: str):
    """The models/<key> package, or None while it does not exist yet."""
    try:
        return importlib.import_module(f"aifabric.models.{key}")
    except ModuleNotFoundError as e:
        if e.name == f"aifabric.models.{key}":
            return None
        raise


def _call(fn, quick: bool):
    kwargs = {"quick": quick} if "quick" in inspect.signature(fn).parameters else {}
    return fn(**kwargs)


DURATIONS = "durations.json"     # in --out: each paper's last run time, full and quick apart


def _durations(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _seconds(s: float) -> str:
    return f"{s / 60:.0f} min" if s >= 90 else f"{s:.0f} s"


class _PaperBar:
    """A paper's progress on stderr: a tqdm bar over its expected seconds (the last run's
    time, where there is one), moved by a thread once a second, since a paper's steps take
    minutes each and report nothing in between. Disabled where stderr is not a terminal
    (tqdm's ``disable=None``); then the step lines alone say what runs."""

    def __init__(self, desc: str, estimate: float | None) -> None:
        import threading

        from tqdm import tqdm
        total = max(1, round(estimate)) if estimate else None
        fmt = ("{desc}: {percentage:3.0f}%|{bar}| {elapsed} of about " + _seconds(estimate)
               if estimate else "{desc}: {elapsed} (no earlier run to estimate from)")
        self.bar = tqdm(total=total, desc=desc, file=sys.stderr, disable=None, leave=False,
                        bar_format=fmt, mininterval=1.0)
        self.stop = threading.Event()
        self.thread = None
        if not self.bar.disable:
            self.thread = threading.Thread(target=self._tick, daemon=True)
            self.thread.start()

    def _tick(self) -> None:
        while not self.stop.wait(1.0):
            total = self.bar.total
            now = self.bar.format_dict["elapsed"]
            self.bar.n = min(int(now), total) if total else int(now)
            self.bar.refresh()

    def write(self, line: str) -> None:
        from tqdm import tqdm
        tqdm.write(line, file=sys.stderr)
        sys.stderr.flush()

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        self.bar.close()


def collect(systems: dict[str, object], out_dir: Path, quick: bool = False):
    """Records, figures and tables of each system; ``systems`` maps a PAPERS key to its
    package (or None). Returns (records, figures, status, tables) where status[key] says what
    each contributed and tables[key] lists the markdown sections of the package's
    ``tables()`` (results that are not paper values: sweeps, tuned parameters).

    Progress goes to stderr: a line per step with the paper's estimate (its last run's time
    in ``out_dir/durations.json``, full and quick runs apart), a bar while it runs (on a
    terminal), and a line when it finishes (``flexsipac: 14 records in 33 s``); the paper's
    time is then kept for the next run's estimate."""
    import time
    records: list[Record] = []
    figures: list[Path] = []
    status: dict[str, str] = {}
    tables: dict[str, list[str]] = {}
    times_path = out_dir / DURATIONS
    mode = "quick" if quick else "full"
    last = _durations(times_path).get(mode, {})
    start = time.perf_counter()

    for k, (key, module) in enumerate(systems.items(), 1):
        if module is None:
            status[key] = "no records yet (no models/{} package)".format(key)
            continue
        reproduce = getattr(module, "reproduce", None)
        if reproduce is None:
            status[key] = "no records yet (package has no reproduce())"
            continue
        estimate = last.get(key) if isinstance(last.get(key), (int, float)) else None
        began = time.perf_counter()
        bar = _PaperBar(f"reproduce [{k}/{len(systems)}] {key}", estimate)

        def progress(what: str) -> None:
            # a line per step: a paper's run takes minutes (the full run hours)
            guess = (f"; about {_seconds(estimate)} for the paper, from its last {mode} run"
                     if estimate else "")
            bar.write(f"reproduce [{k}/{len(systems)}] {key}: {what} "
                      f"({time.perf_counter() - start:.0f} s so far{guess})")

        try:
            progress("records" + (" (quick)" if quick else ""))
            got = list(_call(reproduce, quick))
            for r in got:
                if not isinstance(r, Record) or r.paper != key:
                    raise UsageError(f"aifabric.models.{key}.reproduce() returned {r!r}, not "
                                     f"a Record of paper {key!r}")
            records += got
            if hasattr(module, "figures"):
                progress(f"{len(got)} records; figures")
                fig_kwargs = {"quick": quick} \
                    if "quick" in inspect.signature(module.figures).parameters else {}
                figures += [Path(p) for p in module.figures(out_dir, **fig_kwargs)]
            if hasattr(module, "tables"):
                tables[key] = [str(t) for t in _call(module.tables, quick)]
        finally:
            bar.close()
        took = time.perf_counter() - began
        print(f"{key}: {len(got)} records in {_seconds(took)}"
              + (f" (last {mode} run: {_seconds(estimate)})" if estimate else ""),
              file=sys.stderr, flush=True)
        status[key] = f"{len(got)} records" if got else "no records yet"
        # kept at once: a later paper that fails still leaves this one's estimate
        times = _durations(times_path)
        times.setdefault(mode, {})[key] = round(took, 1)
        write_json(times_path, times)
    return records, figures, status, tables


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:,.6g}" if abs(x) < 1e6 else f"{x:,.0f}"


def _paper(r: Record) -> str:
    return f"{_num(r.paper_value)} ({r.formula})" if r.formula else _num(r.paper_value)


def counts(records: list[Record]) -> dict:
    """Per kind, what the run gave. Only ``value`` records are reproductions; ``simulated``
    counts those that come out of a simulation (a paper's headline experiments)."""
    def of(kind):
        return [r for r in records if r.kind == kind]
    values, bounds = of("value"), of("bound")
    sim = [r for r in values if r.simulated]
    return {"values": len(values), "match": sum(r.status == "match" for r in values),
            "differ": sum(r.status == "differs" for r in values),
            "missing": sum(r.status == "missing" for r in records),
            "simulated": len(sim), "simulated_match": sum(r.status == "match" for r in sim),
            "bounds": len(bounds), "hold": sum(r.status == "holds" for r in bounds),
            "arithmetic": len(of("arithmetic")),
            "arithmetic_match": sum(r.agrees for r in of("arithmetic")),
            "fitted": len(of("fitted")),
            "definitions": len(of("definition")),
            "ablations": len(of("ablation")),
            "unexpected": sum(not r.ok for r in records)}


def headline(records: list[Record]) -> str:
    c = counts(records)
    line = (f"simulated headline numbers: **{c['simulated_match']} of {c['simulated']} "
            f"match**; reproduced values (simulations, built graphs, searches, executed "
            f"schedules, the simulated ones included): {c['match']} of {c['values']} match, "
            f"{c['differ']} differ")
    if c["missing"]:
        line += f", {c['missing']} missing"
    line += (f"; bounds: {c['hold']} of {c['bounds']} hold; not counted as reproduced: "
             f"{c['arithmetic']} arithmetic checks on the paper's own parts and closed forms "
             f"({c['arithmetic_match']} give the printed value), {c['fitted']} fitted values, "
             f"{c['definitions']} definitions")
    if c.get("ablations"):
        line += f", {c['ablations']} ablation{'s' if c['ablations'] != 1 else ''}"
    if c["unexpected"]:
        line += (f". **{c['unexpected']} records contradict their declared expectation "
                 f"(a match expected and not found, or a difference expected and gone)**")
    return line + "."


def summary_table(by_paper: dict[str, dict]) -> str:
    """The first screen: per paper, the simulated headline numbers and every other kind."""
    rows = []
    for key, title in PAPERS.items():
        c = by_paper.get(key)
        if c is None:
            rows.append([title] + ["—"] * 6)
            continue
        rows.append([title, f"**{c['simulated_match']} of {c['simulated']}**",
                     f"{c['match']} of {c['values']}", f"{c['hold']} of {c['bounds']}",
                     f"{c['arithmetic_match']} of {c['arithmetic']}", str(c["fitted"]),
                     str(c["definitions"]) + (f" ({c['missing']} missing)"
                                              if c["missing"] else "")])
    tot = {k: sum(c[k] for c in by_paper.values()) for k in next(iter(by_paper.values()))} \
        if by_paper else None
    if tot:
        rows.append(["all five", f"**{tot['simulated_match']} of {tot['simulated']}**",
                     f"{tot['match']} of {tot['values']}", f"{tot['hold']} of {tot['bounds']}",
                     f"{tot['arithmetic_match']} of {tot['arithmetic']}", str(tot["fitted"]),
                     str(tot["definitions"]) + (f" ({tot['missing']} missing)"
                                                if tot["missing"] else "")])
    return md_table(["paper", "simulated headline numbers that match",
                     "reproduced values that match", "bounds that hold",
                     "arithmetic checks (not counted)", "fitted (not counted)",
                     "definitions (not counted)"], rows)


RULE = ("A number matches within 1 % or half a unit of the paper's last printed digit, "
        "whichever is larger (one rule for every record). Every record declares whether it "
        "is expected to match or to differ (with its reason); `make test` fails when a run "
        "contradicts the declaration, in either direction.")


def _value_rows(rs: list[Record]) -> list[list[str]]:
    return [[r.id, r.metric, r.unit, _paper(r), _num(r.model_value),
             "—" if r.rel_error is None else f"{100 * r.rel_error:.2f}%", r.status,
             (r.why or r.note) + (f" (fitted: {r.fit})" if r.fit else "")] for r in rs]


def _range(r: Record) -> str:
    """The run's own expected range, marked where it holds the paper's value too."""
    if r.expected_range is None:
        return "—"
    lo, hi = r.expected_range
    text = f"{_num(lo)} – {_num(hi)}"
    if r.in_range is False:
        text = f"**{text} (outside)**"
    return text + (" (holds the paper's)" if r.paper_in_range else "")


def _setting(r: Record) -> str:
    if not r.setting:
        return "—"
    chosen = r.choices or {}
    return "; ".join(f"{k} = {v}" + (" (ours)" if k in chosen else "")
                     for k, v in r.setting.items())


def _sim_rows(rs: list[Record]) -> list[list[str]]:
    return [row[:5] + [_range(r)] + row[5:] for row, r in zip(_value_rows(rs), rs)]


VALUE_HEAD = ["id", "metric", "unit", "paper", "model", "error", "status", "why / note"]
SIM_HEAD = VALUE_HEAD[:5] + ["expected range (this run's)"] + VALUE_HEAD[5:]
SECTION = {"value": "Reproduced values (simulation, built graph, search, executed schedule)",
           "arithmetic": "Arithmetic on the paper's own parts and closed forms (not counted)",
           "fitted": "Fitted to the paper (not counted)",
           "definition": "Definitions: the paper's formula evaluated (not counted)"}


def _tables(mine: list[Record], *, matches: bool) -> list[str]:
    """Per kind a table: with ``matches`` every record, else only those that do not simply
    agree with the paper (agreeing ones are listed by id)."""
    out = []
    for kind in ("value", "arithmetic", "fitted", "definition"):
        rs = sorted((r for r in mine if r.kind == kind and r.bound is None),
                    key=lambda r: (r.status != "missing", -(r.rel_error or 0)))
        rs += [r for r in mine if r.kind == kind and r.bound is not None]
        if not rs:
            continue
        shown = rs if matches else [r for r in rs if not r.agrees]
        same = [] if matches else [r.id for r in rs if r.agrees]
        if kind == "value":
            sim = [r for r in rs if r.simulated]
            if sim:
                out += ["Simulated headline numbers:", ""]
                out.append(md_table(SIM_HEAD, _sim_rows(sim)))
                out.append("")
            rs_other = [r for r in shown if not r.simulated]
            shown = rs_other
            same = [i for i in same if not next(r for r in rs if r.id == i).simulated]
            title = "Other reproduced values (built graphs, searches, executed schedules)"
        else:
            title = SECTION[kind]
        if shown:
            out += [title + ("" if matches else ", those that differ") + ":", ""]
            out.append(md_table(VALUE_HEAD, _value_rows(shown)))
            out.append("")
        if same:
            out += [f"{title}, matching ({len(same)}): " + ", ".join(f"`{i}`" for i in same)
                    + ".", ""]
    ablations = [r for r in mine if r.kind == "ablation"]
    if ablations:
        out += ["Ablations (the same metric at another setting; not counted, each held to its "
                "own range):", ""]
        out.append(md_table(["id", "metric", "unit", "paper (at its setting)", "model",
                             "expected range", "setting", "note"],
                            [[r.id, r.metric, r.unit, _paper(r), _num(r.model_value),
                              _range(r), _setting(r), r.note] for r in ablations]))
        out.append("")
    with_setting = [r for r in mine if r.setting and r.kind != "ablation"]
    if with_setting:
        out += ["Settings the simulated records ran at ((ours): a parameter the paper leaves "
                "open, chosen by us; why in the record's choices):", ""]
        out.append(md_table(["id", "setting", "our choices"],
                            [[r.id, _setting(r), "; ".join(f"{k}: {v}" for k, v in
                                                           (r.choices or {}).items()) or "—"]
                             for r in with_setting]))
        out.append("")
    bounds = [r for r in mine if r.kind == "bound"]
    if bounds:
        out += ["Bounds (the paper claims at most / at least):", ""]
        out.append(md_table(["id", "metric", "unit", "claim", "model", "margin", "status",
                             "why / note"],
                            [[r.id, r.metric, r.unit, f"{r.bound} {_paper(r)}",
                              _num(r.model_value), _num(r.margin), r.status, r.why or r.note]
                             for r in bounds]))
        out.append("")
    return out


def by_paper_counts(records: list[Record]) -> dict[str, dict]:
    return {key: counts([r for r in records if r.paper == key]) for key in PAPERS
            if any(r.paper == key for r in records)}


def render(records: list[Record], figures: list[Path], status: dict[str, str],
           tables: dict[str, list[str]] | None = None) -> str:
    out = ["# Reproduction report", "", summary_table(by_paper_counts(records)), "",
           headline(records), "", RULE, ""]
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
# The full run's records, committed: `make reproduce` rewrites it, the README block is
# generated from it, and `make test` checks both against each other and the quick run.
RESULTS = Path(__file__).resolve().parent.parent / "results" / "reproduce.json"


def readme_block(records: list[Record], quick: bool, full: bool = False) -> str:
    """The reproduction summary between the markers: the per-paper table of simulated
    headline numbers and kinds and each paper's headline line (the README's); with ``full``,
    then per paper every record that does not simply agree (the documentation's page)."""
    run = "`--quick` run" if quick else "full run (`make reproduce`, kept in " \
        "`results/reproduce.json`)"
    out = [BEGIN, f"_Generated by `aifabric reproduce` from the {run}; "
                  f"do not edit by hand._", "", summary_table(by_paper_counts(records)), "",
           RULE, ""]
    for key, title in PAPERS.items():
        mine = [r for r in records if r.paper == key]
        if mine:
            out += [f"**{title}**: {headline(mine)}", ""]
            if full:
                out += _tables(mine, matches=False)
    out.append(END)
    return "\n".join(out)


def results_data(records: list[Record]) -> dict:
    return {"run": "full", "counts": by_paper_counts(records),
            "records": [r.to_dict() for r in records]}


def load_results(path: Path = RESULTS) -> list[Record]:
    """The records of the committed full run."""
    data = json.loads(path.read_text())
    return [Record.from_dict(d) for d in data["records"]]


def check_readme(path: Path, option: str = "--readme") -> str:
    """The file's text; UsageError unless it has exactly one reproduce block."""
    if not path.is_file():
        raise UsageError(f"{option}: no such file {path}")
    text = path.read_text()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise UsageError(f"{option}: {path} needs one {BEGIN} ... {END} block")
    return text


def readme_section(text: str) -> str:
    """The reproduce block of a README's text, markers included."""
    return BEGIN + text.split(BEGIN, 1)[1].split(END, 1)[0] + END


def update_readme(path: Path, block: str) -> None:
    text = check_readme(path)
    head, rest = text.split(BEGIN)
    tail = rest.split(END, 1)[1]
    atomic_write(path, head + block + tail)


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=BUILD / "reproduce",
                        help="directory for report.md, report.json and the figures")
    parser.add_argument("--quick", action="store_true", help="CI-sized runs where offered")
    parser.add_argument("--readme", type=Path,
                        help="Rewrite this file's reproduce block with the summary and each "
                             "paper's headline.")
    parser.add_argument("--docs", type=Path,
                        help="Rewrite this file's reproduce block with the summary and every "
                             "record that does not simply agree (docs/reproduction.md).")
    parser.add_argument("--paper", action="append", choices=list(PAPERS), metavar="KEY",
                        help="run only this paper's package (repeatable; one of "
                             f"{', '.join(PAPERS)}); with --results the other papers' "
                             "records are kept from the file")
    parser.add_argument("--results", type=Path,
                        help="also keep the records in this file (the committed full run, "
                             "results/reproduce.json; not with --quick)")
    args = parser.parse_args(argv)
    if args.results is not None and args.quick:
        raise UsageError("--results keeps the full run's records; a --quick run cannot "
                         "replace them")
    for option, path in (("--readme", args.readme), ("--docs", args.docs)):
        if args.paper and path is not None and args.results is None:
            raise UsageError(f"{option} with --paper needs --results (the other papers' "
                             f"records come from it)")
        if path is not None:
            check_readme(path, option)      # before the long run, not after it
    kept: list[Record] = []
    if args.paper and args.results is not None:
        if not args.results.is_file():
            raise UsageError(f"--paper with --results: no such file {args.results} (run all "
                             f"papers once first)")
        try:
            kept = [r for r in load_results(args.results) if r.paper not in args.paper]
        except (ValueError, KeyError, TypeError) as e:
            raise UsageError(f"--results: {args.results} is not a records file ({e})") from None
    args.out.mkdir(parents=True, exist_ok=True)
    systems = {key: load_system(key) for key in (args.paper or PAPERS)}
    records, figures, status, tables = collect(systems, args.out, args.quick)
    if kept:
        records = sorted(kept + records, key=lambda r: list(PAPERS).index(r.paper))
        status.update({k: f"{sum(r.paper == k for r in kept)} records (kept from "
                          f"{args.results})" for k in PAPERS if k not in status})
    write_json(args.out / "report.json", [r.to_dict() for r in records])
    text = render(records, figures, status, tables)
    atomic_write(args.out / "report.md", text)
    if args.results is not None:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.results, results_data(records))
    if args.readme is not None:
        update_readme(args.readme, readme_block(records, args.quick))
    if args.docs is not None:
        update_readme(args.docs, readme_block(records, args.quick, full=True))
    for key, title in PAPERS.items():
        print(f"{title:45} {status.get(key, 'not run (--paper)')}")
    print(f"\n{headline(records)}")
    print(f"{len(records)} records -> {args.out / 'report.md'}, {args.out / 'report.json'}"
          + "".join(f", {p}" for p in (args.results, args.readme, args.docs) if p is not None))
    wrong = [r for r in records if not r.ok]
    for r in wrong:
        print(f"error: {r.paper}/{r.id}: expected {r.expect}, got {r.status} (paper "
              f"{_num(r.paper_value)}, model {_num(r.model_value)})", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    run_main(main)
