"""Mutation score of every block (``make mutate``): Yosys mutants against the block's
co-simulation, survivors against its formal properties and equivalence checks.

Per block, ``--mutants`` mutants (default 30) are drawn by Yosys's ``mutate -list N -seed S``
(its even sampling over the cells, wires and source lines of the block's own file) and built
into one Verilated design behind a ``mutsel`` selector (see :mod:`cosim.mutate`); each runs
the block's cocotb testbench at its CI parameters. Survivors then meet the formal properties
(``cosim/formal/<block>.py``, the same mutation at the harness's parameters, BMC), an
unbounded equivalence proof against the original (Yosys's ``equiv_induct``) and, where that
proves nothing, a bounded one (a miter, BMC from reset). Results: a table on stdout
and in build/mutate/report.md (and .json), each survivor with its Amaranth source line.

    aifabric mutate                         # every block, 30 mutants each
    aifabric mutate --block ocstrx --mutants 60 --seed 2
    aifabric mutate --no-formal --no-equiv  # co-simulation only

Score = killed / (mutants - equivalent). Exit code 0 when every block reaches ``--target``
(95 %), 1 otherwise (or when a block's unmutated design fails its own testbench).
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from aifabric.cosim.mutate import (SPECS, Outcome, build, equivalent, formal_kill, mutants_of,
                                   proved_equivalent, run_mutant, unbuildable, verilate)

from ._cli import BUILD, Parser, UsageError, md_table, run_main, write_json

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
                 log=print):
    """Every step for one block; returns (outcomes, baseline seconds, error or '')."""
    wd = out / spec.block
    start = time.monotonic()
    mutants = mutants_of(spec, count, seed, wd)
    try:
        verilog = build(spec, mutants, wd)
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
        verilog = build(spec, mutants, wd)
    secs = verilate(spec, verilog, wd)
    log(f"{spec.block}: {len(mutants)} mutants built into one model ({secs:.0f} s)")
    status, why, base = run_mutant(spec, 0, wd, seed=seed, timeout=1800)
    if status != "pass":
        return [], base, f"the original design fails its testbench ({status}: {why})"
    timeout = max(60.0, 4 * base)
    log(f"{spec.block}: original passes in {base:.0f} s; mutant time limit {timeout:.0f} s")

    def one(m):
        st, why, s = run_mutant(spec, m.k, wd, seed=seed, timeout=timeout)
        if st == "pass":
            return Outcome(m, "", "", "", s)
        by = "timeout" if st == "timeout" else "cosim"
        return Outcome(m, "killed", by, why, s)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        outcomes = list(pool.map(one, mutants))

    def judge(o):
        """A co-simulation survivor: proven equivalent, killed by a property, equivalent
        within the miter's bound, or survived."""
        # the proof first: seconds where it holds, and an equivalent mutant can fail no
        # property (the properties' BMC runs take minutes)
        if equiv and proved_equivalent(spec, o.mutant, wd):
            o.verdict, o.by = "equivalent", "equiv_induct"
            o.detail = "equiv_induct: every signal proven equal to the original's (unbounded)"
            return
        if formal:
            prop, tried = formal_kill(spec, o.mutant, wd)
            if prop:
                o.verdict, o.by, o.detail = "killed", f"formal:{prop}", tried
                return
            o.detail = tried
        if equiv:
            st = equivalent(spec, o.mutant, wd)
            if st == "PASS":
                o.verdict, o.by = "equivalent", "equiv"
                o.detail = (o.detail + "; " if o.detail else "") + \
                    "miter: no difference in any trace of the bound from reset"
                return
            o.detail = (o.detail + "; " if o.detail else "") + {
                "FAIL": "miter: differs from the original",
                "TIMEOUT": "miter: equivalence undecided (time limit)"}.get(st, f"miter: {st}")
        o.verdict, o.by = "survived", ""

    # one survivor per worker: the proofs, properties and miter take minutes each
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(judge, [o for o in outcomes if not o.verdict]))
    log(f"{spec.block}: done in {time.monotonic() - start:.0f} s")
    return outcomes, base, ""


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--block", action="append", metavar="NAME",
                    help=f"block(s) to mutate (default: all: {', '.join(SPECS)})")
    ap.add_argument("--mutants", type=int, default=30, metavar="N",
                    help="mutants drawn per block (default 30)")
    ap.add_argument("--seed", type=int, default=1, help="Yosys's sampling seed (default 1)")
    ap.add_argument("--jobs", type=int, default=2, help="co-simulations at once (default 2)")
    ap.add_argument("--target", type=float, default=0.95,
                    help="the score every block must reach (default 0.95)")
    ap.add_argument("--no-formal", action="store_true",
                    help="survivors do not meet the formal properties")
    ap.add_argument("--no-equiv", action="store_true",
                    help="no equivalence check of the survivors")
    ap.add_argument("--out", type=Path, default=BUILD / "mutate",
                    help="output directory (default build/mutate)")
    args = ap.parse_args(argv)
    for name in args.block or ():
        if name not in SPECS:
            raise UsageError(f"--block {name!r}: unknown block; blocks are {', '.join(SPECS)}")
    if args.mutants < 1:
        raise UsageError(f"--mutants must be at least 1, not {args.mutants}")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    if not 0 < args.target <= 1:
        raise UsageError(f"--target must be in (0, 1], not {args.target}")
    from aifabric.cosim.formal import toolchain_missing
    missing = toolchain_missing()
    if missing:
        raise UsageError(missing)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    rows, records, survivors, bad = [], [], [], 0
    log = lambda s: print(s, file=sys.stderr, flush=True)   # noqa: E731
    for name in args.block or SPECS:
        spec = SPECS[name]
        start = time.monotonic()
        outcomes, base, error = mutate_block(
            spec, count=args.mutants, seed=args.seed, jobs=args.jobs, out=out,
            formal=not args.no_formal, equiv=not args.no_equiv, log=log)
        secs = time.monotonic() - start
        bench = f"{spec.bench} ({_params(spec.params)})"
        if error:
            bad += 1
            rows.append([name, bench, "-", "-", "-", "-", "-", "ERROR", "-", f"{secs:.0f}"])
            records.append({"block": name, "error": error})
            log(f"{name}: {error}")
            continue
        killed, live, frac = score(outcomes)
        by_formal = sum(o.by.startswith("formal") for o in outcomes)
        eq = sum(o.verdict == "equivalent" for o in outcomes)
        surv = [o for o in outcomes if o.verdict == "survived"]
        ok = frac is None or frac >= args.target
        bad += not ok
        rows.append([name, bench, len(outcomes), killed - by_formal, by_formal, eq, len(surv),
                     "-" if frac is None else f"{100 * frac:.1f} %",
                     "met" if ok else "NOT met", f"{secs:.0f}"])
        survivors += [[name, o.mutant.k, o.mutant.where, o.mutant.what, o.detail]
                      for o in surv]
        records.append({"block": name, "bench": spec.bench, "params": spec.params,
                        "source": spec.source, "seed": args.seed, "drawn": args.mutants,
                        "mutants": len(outcomes), "killed": killed, "killed_by_formal":
                        by_formal, "equivalent": eq, "survived": len(surv),
                        "score": frac, "seconds": round(secs, 1),
                        "original_seconds": round(base, 1),
                        "outcomes": [o.row() for o in outcomes]})
        write_json(out / name / "outcomes.json", records[-1])
    table = md_table(HEADER, rows)
    surv_table = md_table(["block", "mutsel", "source", "mutation", "checks run"], survivors) \
        if survivors else "none\n"
    report = ("# Mutation score per block\n\n"
              f"Mutants drawn per block: {args.mutants} (Yosys `mutate -list`, seed "
              f"{args.seed}); score = killed / (mutants - equivalent); equivalent = "
              + ("not checked (--no-equiv): every score is a lower bound"
                 if args.no_equiv else
                 "proven by Yosys's equiv_induct (unbounded), or a bounded miter (BMC from "
                 "reset) found no difference") + ".\n\n" + table +
              "\n## Survivors\n\n" + surv_table)
    (out / "report.md").write_text(report)
    write_json(out / "report.json", records)
    print(table)
    print("Survivors:")
    print(surv_table)
    log(f"report: {out / 'report.md'}")
    return 1 if bad else 0


if __name__ == "__main__":
    run_main(main)
