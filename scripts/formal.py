"""Formal proofs of every block's promises (``make formal``): SymbiYosys from pip.

Each property of ``cosim/formal/<block>.py`` is proved at the block's smallest meaningful
parameters, by k-induction (``prove``: unbounded) where it closes and by bounded model checking
(``bmc``: every trace of the stated number of cycles from reset) where it does not; then its
negative control, the block with a planted bug, must fail the same check with a
counter-example trace. Results: a table on stdout and in build/formal/report.md (and .json);
each job's directory (log, trace) under build/formal/.

    aifabric formal                      # every block, every property
    aifabric formal --block wwfa --block router
    aifabric formal --block router --param depth=5   # one parameter set
    aifabric formal --ci                 # the subset `make test` runs
    aifabric formal --no-controls        # proofs only

Exit code 0 when every proof passes and every negative control fails; 1 otherwise.
"""

from __future__ import annotations

import sys

from aifabric.cosim.formal import BLOCK_MODULES, properties, run, toolchain_missing

from ._cli import BUILD, Parser, UsageError, md_table, run_main, write_json

HEADER = ["block", "parameters", "property", "mode", "depth", "result", "seconds",
          "negative control", "control result", "control seconds"]


def _params(p):
    return ", ".join(f"{k}={v}" for k, v in p.items())


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--block", action="append", metavar="NAME",
                    help=f"block(s) to prove (default: all: {', '.join(BLOCK_MODULES)})")
    ap.add_argument("--property", action="append", metavar="NAME",
                    help="only the properties of this name")
    ap.add_argument("--param", action="append", metavar="KEY=VALUE", default=[],
                    help="only the parameter sets with this parameter at this value")
    ap.add_argument("--ci", action="store_true", help="only the subset `make test` runs")
    ap.add_argument("--no-controls", action="store_true",
                    help="skip the negative controls (planted bugs)")
    ap.add_argument("--timeout", type=float, default=1800, metavar="S",
                    help="seconds per job before it counts as TIMEOUT (default 1800)")
    args = ap.parse_args(argv)
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be positive, not {args.timeout}")
    try:
        props = properties(args.block)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.property:
        known = {p.name for p in props}
        for name in args.property:
            if name not in known:
                raise UsageError(f"--property {name!r}: no such property; properties are "
                                 f"{', '.join(sorted(known))}")
        props = [p for p in props if p.name in args.property]
    for given in args.param:
        key, eq, value = given.partition("=")
        keys = sorted({k for p in props for k in p.params})
        if not eq or key not in keys:
            raise UsageError(f"--param {given!r}: give KEY=VALUE with KEY one of "
                             f"{', '.join(keys)}")
        props = [p for p in props if str(p.params.get(key)) == value]
        if not props:
            raise UsageError(f"--param {given!r}: no property has {key} = {value}")
    if args.ci:
        props = [p for p in props if p.ci]
    missing = toolchain_missing()
    if missing:
        raise UsageError(missing)
    out = BUILD / "formal"
    rows, records, bad = [], [], 0
    print("| " + " | ".join(HEADER) + " |", flush=True)
    for prop in props:
        res = run(prop, out_dir=out, timeout=args.timeout)
        ctl = None if args.no_controls else run(prop, mutant=True, out_dir=out,
                                                timeout=args.timeout)
        ok = res.expected and (ctl is None or ctl.expected)
        bad += not ok
        row = [prop.block, _params(prop.params), prop.name, res.mode, res.depth, res.status,
               f"{res.seconds:.1f}",
               "-" if ctl is None else prop.mutant,
               "-" if ctl is None else (f"{ctl.status} (caught)" if ctl.expected
                                        else f"{ctl.status} (NOT caught)"),
               "-" if ctl is None else f"{ctl.seconds:.1f}"]
        rows.append(row)
        print("| " + " | ".join(str(c) for c in row) + " |", flush=True)
        records.append({"block": prop.block, "params": prop.params, "property": prop.name,
                        "promise": prop.promise, "mode": res.mode, "depth": res.depth,
                        "result": res.status, "seconds": round(res.seconds, 2),
                        "workdir": str(res.workdir),
                        "control": None if ctl is None else {
                            "bug": prop.mutant, "mode": ctl.mode, "depth": ctl.depth,
                            "result": ctl.status, "seconds": round(ctl.seconds, 2),
                            "trace": str(ctl.trace) if ctl.trace else None}})
    report = md_table(HEADER, rows)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(
        "# Formal proofs\n\nmode prove: k-induction (unbounded); bmc: every trace of `depth` "
        "cycles from reset. Negative control: the planted bug, bounded model check; it must "
        "FAIL.\n\n" + report)
    write_json(out / "report.json", records)
    print(f"{len(props) - bad} of {len(props)} properties as promised; report: "
          f"{out / 'report.md'}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    run_main(main)
