"""Mutation score of every block (``make mutate``): mutants against the block's
co-simulation, survivors against its formal properties and equivalence checks.

Two kinds of mutant (``--mode``). ``netlist`` (the default): per block, ``--mutants``
mutants (default 30) drawn by Yosys's ``mutate -list N -seed S`` (its even sampling over the
cells, wires and source lines of the block's own file: a bit inverted or tied). ``source``:
edits of the block's Amaranth file as a designer's slip makes them (an operator, a
comparison, an integer constant or a slice bound off by one, an assignment of 0, a boolean
operand dropped; :mod:`cosim.source_edits`), in a seeded shuffle, each elaborated from a copy
of the source; edits that do not elaborate, change the ports or give the original's RTLIL
(equivalent by construction) are dropped and reported, and the next are drawn until
``--mutants`` remain. ``both`` runs the two. Either way every mutant is built into one
Verilated design behind a ``mutsel`` selector (see :mod:`cosim.mutate`) and runs the
block's cocotb testbench at its mutation parameters (``--param`` changes them). Survivors
then meet the formal properties (``cosim/formal/<block>.py``; the same mutation in the
harness's copy of the block, BMC), an unbounded equivalence proof against the original
(Yosys's ``equiv_induct``, then k-induction on the miter with every register equal to the
original's or both at their initial values) and, where those prove nothing, a bounded one (a miter, BMC from
reset). Results: a table on stdout and in build/mutate/report.md (source edits:
build/mutate/source/report.md), each survivor with its Amaranth source line, and both
latest scores per block in build/mutate/scores.md.

    aifabric mutate                         # every block, 30 netlist mutants each
    aifabric mutate --block ocstrx --mutants 60 --seed 2
    aifabric mutate --no-formal --no-equiv  # co-simulation only
    aifabric mutate --mode source --block wwfa --param n=4 --mutants 25

Score = killed / (mutants - equivalent). Exit code 0 when every block reaches ``--target``
(95 %), 1 otherwise (or when a block's unmutated design fails its own testbench).
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from aifabric.cosim.mutate import (SPECS, Outcome, SourceMutant, build, build_source,
                                   edited_parts, equivalent, flatten_gate, formal_kill,
                                   induct_equivalent, judged_dirs, mutants_of,
                                   proved_equivalent, run_mutant, source_mutants, unbuildable,
                                   verilate)

from aifabric.rtl.catalog import get_block

from ._cli import BUILD, Parser, UsageError, md_table, parse_params, run_main, write_json

HEADER = ["block", "co-simulated as", "mutants", "killed (cosim)", "killed (formal)",
          "equivalent", "survived", "score", "target", "seconds"]


def _params(p):
    return ", ".join(f"{k}={v}" for k, v in p.items())


def score(outcomes) -> tuple[int, int, float | None]:
    """(killed, non-equivalent, killed / non-equivalent or None when there are none)."""
    killed = sum(o.verdict == "killed" for o in outcomes)
    live = sum(o.verdict != "equivalent" for o in outcomes)
    return killed, live, (killed / live if live else None)


def mutate_block(spec, *, count, seed, jobs, out: Path, formal=True, equiv=True,
                 mode="netlist", parts=True, reuse=False, equiv_timeout=None, log=print):
    """Every step for one block; returns (outcomes, baseline seconds, error or '', the
    source edits dropped before judging). ``parts``: the equivalence checks judge an edited
    sub-block alone and cut shared memories out (:func:`cosim.mutate.judged`); ``reuse``:
    the co-simulation verdicts of the last run in ``out`` (:func:`reused_cosim`) instead of
    a new build and co-simulation."""
    wd = out / spec.block
    start = time.monotonic()
    dropped = []
    if mode == "source":
        mutants, dropped = source_mutants(spec, count, seed, wd, log=log)
        if not mutants:
            return [], 0.0, "no drawn edit gives a design that differs from the original", \
                dropped
    elif reuse:
        mutants = mutants_of(spec, count, seed, wd)
    else:
        mutants, verilog = _netlist_mutants(spec, count, seed, wd, log)
    if reuse:
        outcomes, base, error = reused_cosim(wd / "outcomes.json", spec, mutants, seed, count)
        if error:
            return [], 0.0, error, dropped
        log(f"{spec.block}: the co-simulation verdicts of {wd / 'outcomes.json'} reused")
    else:
        if mode == "source":
            verilog = build_source(spec, mutants, wd)
        secs = verilate(spec, verilog, wd)
        log(f"{spec.block}: {len(mutants)} mutants built into one model ({secs:.0f} s)")
        status, why, base = run_mutant(spec, 0, wd, seed=seed, timeout=1800)
        if status != "pass":
            return [], base, f"the original design fails its testbench ({status}: {why})", \
                dropped
        timeout = max(60.0, 4 * base)
        log(f"{spec.block}: original passes in {base:.0f} s; mutant time limit "
            f"{timeout:.0f} s")

        def one(m):
            st, why, s = run_mutant(spec, m.k, wd, seed=seed, timeout=timeout)
            if st == "pass":
                return Outcome(m, "", "", "", s)
            by = "timeout" if st == "timeout" else "cosim"
            return Outcome(m, "killed", by, why, s)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            outcomes = list(pool.map(one, mutants))
    limits = {} if equiv_timeout is None else {"timeout": equiv_timeout}

    def judge(o):
        """A co-simulation survivor: proven equivalent, killed by a property, equivalent
        within the miter's bound, or survived."""
        if mode == "source":
            flatten_gate(spec, o.mutant, wd)
        # the proof first: seconds where it holds, and an equivalent mutant can fail no
        # property (the properties' BMC runs take minutes)
        if equiv and proved_equivalent(spec, o.mutant, wd, parts=parts, **limits):
            o.verdict, o.by = "equivalent", "equiv_induct"
            o.detail = ("equiv_induct: every signal proven equal to the original's "
                        f"(unbounded){_scope(spec, o.mutant, wd, parts)}")
            return
        if equiv and induct_equivalent(spec, o.mutant, wd, parts=parts,
                                       **({"timeout": 2 * equiv_timeout} if equiv_timeout
                                          else {})):
            o.verdict, o.by = "equivalent", "induction"
            o.detail = ("k-induction on the miter: outputs equal, and every register equal to "
                        "the original's or both at their initial values (unbounded)"
                        f"{_scope(spec, o.mutant, wd, parts)}")
            return
        if formal:
            prop, tried = formal_kill(spec, o.mutant, wd)
            if prop:
                o.verdict, o.by, o.detail = "killed", f"formal:{prop}", tried
                return
            o.detail = tried
        if equiv:
            st = equivalent(spec, o.mutant, wd, parts=parts, **limits)
            if st == "PASS":
                o.verdict, o.by = "equivalent", "equiv"
                o.detail = (o.detail + "; " if o.detail else "") + \
                    "miter: no difference in any trace of the bound from reset" + \
                    _scope(spec, o.mutant, wd, parts)
                return
            o.detail = (o.detail + "; " if o.detail else "") + {
                "FAIL": "miter: differs from the original",
                "PART": "miter: the edited sub-block alone (free inputs) differs from the "
                        "original's; the design's equivalence is undecided",
                "SHARED": "miter: with the shared instances cut out (free outputs) it "
                          "differs from the original; the design's equivalence is undecided",
                "CUT": "miter: with the memories cut out (free read data) it differs from "
                       "the original; the design's equivalence is undecided",
                "TIMEOUT": "miter: equivalence undecided (time limit)"}.get(st, f"miter: {st}")
        o.verdict, o.by = "survived", ""

    # one survivor per worker: the proofs, properties and miter take minutes each
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(judge, [o for o in outcomes if not o.verdict]))
    log(f"{spec.block}: done in {time.monotonic() - start:.0f} s")
    return outcomes, base, "", dropped


def _scope(spec, mutant, wd, parts) -> str:
    """What the equivalence checks judged, for the report ('' for the whole design with its
    memories as registers)."""
    if not parts:
        return ""
    units = edited_parts(wd, mutant) if isinstance(mutant, SourceMutant) else []
    cut = any((d / "pair_cut.il").exists() for d in judged_dirs(wd, mutant, units))
    where = f" on {', '.join(u.rsplit('.', 1)[-1] for u in units)} alone" if units else ""
    if not units and (judged_dirs(wd, mutant, units)[0] / "gate_ev.il").exists():
        where = f" on the top, {spec.shared} cut out"
    return where + (", memories cut out" if cut else "")


def reused_cosim(path: Path, spec, mutants, seed, count):
    """(outcomes, the original's seconds, error or '') from a run's ``outcomes.json``: its
    co-simulation kills kept, every other mutant left to judge. An error when the run is
    not of these mutants (another seed, count, parameter set, or an edited source)."""
    if not path.exists():
        return [], 0.0, f"--reuse-cosim: no earlier run in {path.parent}"
    prior = json.loads(path.read_text())
    if (prior.get("seed"), prior.get("drawn"), prior.get("params")) != \
            (seed, count, spec.params):
        return [], 0.0, (f"--reuse-cosim: {path} is a run at another seed, --mutants or "
                         "parameter set")
    rows = {r["mutant"]["k"]: r for r in prior["outcomes"]}
    outcomes = []
    for m in mutants:
        r = rows.pop(m.k, None)
        if r is None and m.mode != "source":
            continue                    # not written as Verilog in that run: dropped there
        if r is None or (r["where"], r["what"]) != (m.where, m.what):
            return [], 0.0, (f"--reuse-cosim: {path} judged other mutants (the source or "
                             "the draw changed)")
        if r["verdict"] == "killed" and r["by"] in ("cosim", "timeout"):
            outcomes.append(Outcome(m, "killed", r["by"], r["detail"], r["seconds"]))
        else:
            outcomes.append(Outcome(m, "", "", "", r["seconds"]))
    if rows:
        return [], 0.0, f"--reuse-cosim: {path} judged other mutants"
    return outcomes, prior["original_seconds"], ""


def _netlist_mutants(spec, count, seed, wd, log):
    """Yosys's mutants of the block and the Verilog of all of them behind ``mutsel``."""
    mutants = mutants_of(spec, count, seed, wd)
    try:
        return mutants, build(spec, mutants, wd)
    except RuntimeError:
        # a mutant Yosys cannot write out (e.g. non-constant memory contents): drop it,
        # say so, and build the rest (the others keep their mutsel numbers)
        bad = unbuildable(spec, mutants, wd)
        if not bad:
            raise
        for m in bad:
            log(f"{spec.block}: mutant {m.k} ({m.where}: {m.what}) cannot be written as "
                f"Verilog; dropped")
        mutants = [m for m in mutants if m not in bad]
        return mutants, build(spec, mutants, wd)


MODES = ("netlist", "source")


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell (an edit may hold ``|``)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _mode_dir(out: Path, mode: str) -> Path:
    """Where a mode's work and report go: ``out`` for Yosys's mutants (as before the source
    mode existed), ``out/source`` for source edits."""
    return out if mode == "netlist" else out / "source"


def run_mode(mode, specs, args, out: Path, log) -> tuple[int, str]:
    """One mode over the blocks: writes ``report.md``/``.json`` and per block
    ``<block>/outcomes.json`` under the mode's directory; returns (blocks that failed or
    missed the target, the tables printed)."""
    mdir = _mode_dir(out, mode)
    mdir.mkdir(parents=True, exist_ok=True)
    rows, records, survivors, dropped_rows, bad = [], [], [], [], 0
    for spec in specs:
        name = spec.block
        start = time.monotonic()
        outcomes, base, error, dropped = mutate_block(
            spec, count=args.mutants, seed=args.seed, jobs=args.jobs, out=mdir,
            formal=not args.no_formal, equiv=not args.no_equiv, mode=mode,
            parts=args.equiv_scope == "parts", reuse=args.reuse_cosim,
            equiv_timeout=args.equiv_timeout, log=log)
        secs = time.monotonic() - start
        bench = f"{spec.bench} ({_params(spec.params)})"
        same = sum(d.why == "identical" for d in dropped)
        dropped_rows += [[name, d.edit.line, _cell(d.edit.what), d.why, _cell(d.detail)]
                         for d in dropped]
        if error:
            bad += 1
            rows.append([name, bench, "-", "-", "-", "-", "-", "ERROR", "-", f"{secs:.0f}"])
            records.append({"block": name, "mode": mode, "error": error})
            log(f"{name}: {error}")
            continue
        killed, live, frac = score(outcomes)
        by_formal = sum(o.by.startswith("formal") for o in outcomes)
        eq = sum(o.verdict == "equivalent" for o in outcomes)
        surv = [o for o in outcomes if o.verdict == "survived"]
        ok = frac is None or frac >= args.target
        bad += not ok
        rows.append([name, bench, len(outcomes), killed - by_formal, by_formal,
                     eq if mode == "netlist" else f"{eq} (+{same} identical)", len(surv),
                     "-" if frac is None else f"{100 * frac:.1f} %",
                     "met" if ok else "NOT met", f"{secs:.0f}"])
        survivors += [[name, o.mutant.k, o.mutant.where, _cell(o.mutant.what), o.detail]
                      for o in surv]
        records.append({"block": name, "mode": mode, "bench": spec.bench,
                        "params": spec.params, "source": spec.source, "seed": args.seed,
                        "drawn": args.mutants, "mutants": len(outcomes), "killed": killed,
                        "killed_by_formal": by_formal, "equivalent": eq,
                        "survived": len(surv), "score": frac, "seconds": round(secs, 1),
                        "original_seconds": round(base, 1),
                        "equiv_scope": args.equiv_scope, "cosim_reused": args.reuse_cosim,
                        "outcomes": [o.row() for o in outcomes],
                        "dropped": [d.row() for d in dropped]})
        write_json(mdir / name / "outcomes.json", records[-1])
    table = md_table(HEADER, rows)
    surv_table = md_table(["block", "mutsel", "source", "mutation", "checks run"], survivors) \
        if survivors else "none\n"
    drawn = (f"Yosys `mutate -list`, seed {args.seed}" if mode == "netlist" else
             f"source edits of the block's Amaranth file in a seed-{args.seed} shuffle, "
             "each elaborated; those that do not elaborate, change the ports or give the "
             "original's RTLIL (identical: equivalent by construction) are dropped and the "
             "next drawn")
    report = (f"# Mutation score per block ({mode} mutants)\n\n"
              f"Mutants per block: {args.mutants} ({drawn}); score = killed / (mutants - "
              "equivalent); equivalent = "
              + ("not checked (--no-equiv): every score is a lower bound"
                 if args.no_equiv else
                 "proven by Yosys's equiv_induct or by k-induction on the miter with "
                 "registers equal or both at their initial values (unbounded), or a "
                 "bounded miter (BMC from reset) found no difference") + ".\n\n" + _judging(args) + table +
              "\n## Survivors\n\n" + surv_table)
    if mode == "source":
        report += "\n## Edits dropped before judging\n\n" + (md_table(
            ["block", "line", "edit", "why", "detail"], dropped_rows) if dropped_rows
            else "none\n")
    (mdir / "report.md").write_text(report)
    write_json(mdir / "report.json", records)
    log(f"report: {mdir / 'report.md'}")
    return bad, f"{mode} mutants:\n{table}Survivors:\n{surv_table}"


def _judging(args) -> str:
    """The report's sentence on how equivalence was judged and where the co-simulation
    verdicts come from."""
    text = ("Equivalence judged on the whole co-simulated design, memories as registers "
            "(--equiv-scope design).\n\n" if args.equiv_scope == "design" else
            "Equivalence judged on an edited sub-block alone where a source edit changes "
            "only sub-blocks, and with the memories the two designs share unchanged cut out "
            "(their read data free inputs, their addresses and write data proven equal; "
            "--equiv-scope parts).\n\n")
    if args.reuse_cosim:
        text += ("Co-simulation verdicts reused from the earlier run in this directory "
                 "(--reuse-cosim); only the judging was run again.\n\n")
    return text


def both_scores(out: Path) -> str:
    """Per block, the latest score of each mode found under ``out`` (its report.json)."""
    found = {}
    for mode in MODES:
        path = _mode_dir(out, mode) / "report.json"
        if path.exists():
            for r in json.loads(path.read_text()):
                found.setdefault(r["block"], {})[mode] = r
    rows = []
    for block, by in found.items():
        cells = []
        for mode in MODES:
            r = by.get(mode)
            if r is None or "error" in r:
                cells.append("-" if r is None else "ERROR")
                continue
            frac = "-" if r["score"] is None else f"{100 * r['score']:.1f} %"
            cells.append(f"{r['killed']}/{r['mutants'] - r['equivalent']} = {frac}")
        rows.append([block] + cells)
    return md_table(["block", "score (netlist mutants)", "score (source edits)"], rows)


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--block", action="append", metavar="NAME",
                    help=f"block(s) to mutate (default: all: {', '.join(SPECS)})")
    ap.add_argument("--mode", choices=MODES + ("both",), default="netlist",
                    help="netlist: Yosys's mutants of the netlist (default); source: edits "
                         "of the block's Amaranth source; both")
    ap.add_argument("--param", action="append", metavar="NAME=VALUE",
                    help="co-simulate at these parameters instead of the block's mutation "
                         "set (needs one --block), e.g. --param n=4")
    ap.add_argument("--mutants", type=int, default=30, metavar="N",
                    help="mutants drawn per block (default 30)")
    ap.add_argument("--seed", type=int, default=1, help="the sampling seed (default 1)")
    ap.add_argument("--jobs", type=int, default=2, help="co-simulations at once (default 2)")
    ap.add_argument("--target", type=float, default=0.95,
                    help="the score every block must reach (default 0.95)")
    ap.add_argument("--no-formal", action="store_true",
                    help="survivors do not meet the formal properties")
    ap.add_argument("--no-equiv", action="store_true",
                    help="no equivalence check of the survivors")
    ap.add_argument("--equiv-scope", choices=("parts", "design"), default="parts",
                    help="parts (default): a source edit that changes only sub-blocks is "
                         "proven equivalent on those alone, and memories the two designs "
                         "share unchanged are cut out of the checks (their read data free); "
                         "design: the whole co-simulated design, memories as registers")
    ap.add_argument("--equiv-timeout", type=float, metavar="S",
                    help="seconds per equivalence step (default: 150 for the proof, 300 for "
                         "the k-induction (twice S when given), 180 for the miter)")
    ap.add_argument("--reuse-cosim", action="store_true",
                    help="judge again: take the co-simulation verdicts from the last run in "
                         "--out (same blocks, --mode, --seed, --mutants, --param) instead of "
                         "building and co-simulating the mutants")
    ap.add_argument("--out", type=Path, default=BUILD / "mutate",
                    help="output directory (default build/mutate; source edits under "
                         "its source/)")
    args = ap.parse_args(argv)
    for name in args.block or ():
        if name not in SPECS:
            raise UsageError(f"--block {name!r}: unknown block; blocks are {', '.join(SPECS)}")
    if args.mutants < 1:
        raise UsageError(f"--mutants must be at least 1, not {args.mutants}")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    if args.equiv_timeout is not None and args.equiv_timeout <= 0:
        raise UsageError(f"--equiv-timeout must be positive, not {args.equiv_timeout}")
    if not 0 < args.target <= 1:
        raise UsageError(f"--target must be in (0, 1], not {args.target}")
    specs = [SPECS[name] for name in args.block or SPECS]
    over = parse_params(args.param)
    if over is not None:
        if len(specs) != 1:
            raise UsageError("--param needs exactly one --block")
        params = {**specs[0].params, **over}
        try:
            get_block(specs[0].bench).validate(params)
        except (TypeError, ValueError) as e:
            raise UsageError(f"--param: {e}") from None
        specs = [replace(specs[0], params=params)]
    from aifabric.cosim.formal import toolchain_missing
    missing = toolchain_missing()
    if missing:
        raise UsageError(missing)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    log = lambda s: print(s, file=sys.stderr, flush=True)   # noqa: E731
    bad = 0
    for mode in (MODES if args.mode == "both" else (args.mode,)):
        failed, text = run_mode(mode, specs, args, out, log)
        bad += failed
        print(text)
    scores = both_scores(out)
    (out / "scores.md").write_text("# Mutation score per block, both kinds of mutant\n\n"
                                   "The latest run of each kind under this directory.\n\n"
                                   + scores)
    print("Both scores (the latest run of each kind):")
    print(scores)
    return 1 if bad else 0


if __name__ == "__main__":
    run_main(main)
