"""The co-simulation regression: every block of the registry at its default parameter sets,
built with Verilator and checked by its cocotb testbench against the golden model.

Prints a summary table and writes it to build/summary.md (and build/summary.json).

    python -m scripts.run_cosim                  # everything
    python -m scripts.run_cosim --block wwfa --param n=32 --seed 7 --waves
"""

from __future__ import annotations

import time

from cosim.runner import run
from rtl.catalog import BLOCKS

from ._cli import (BUILD, Parser, add_block_args, atomic_write, fmt_params, md_table, run_main,
                   selected, write_json)


def main(argv=None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    add_block_args(parser)
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--transactions", type=int, default=None,
                        help="transactions per testbench (default: the testbench's own)")
    parser.add_argument("--waves", action="store_true",
                        help="write waveforms: build/cosim/<instance>/dump.fst (dump.vcd where "
                             "Verilator's FST writer cannot be built)")
    args = parser.parse_args(argv)
    if args.transactions is not None and args.transactions < 1:
        parser.error(f"--transactions must be >= 1, not {args.transactions}")
    pairs = selected(args, cosim=True)

    results = []
    start = time.perf_counter()
    for k, (block, params) in enumerate(pairs, 1):
        print(f"[{k}/{len(pairs)}] {block.name} {fmt_params(params)}: building and simulating...",
              flush=True)
        r = run(block.name, params, seed=args.seed, transactions=args.transactions,
                waves=args.waves)
        results.append(r)
        print(f"[{k}/{len(pairs)}] {block.name} {fmt_params(params)}: {r.describe()} "
              f"({r.tests} tests, {r.transactions:,} transactions, {r.cycles:,} cycles, "
              f"{r.seconds:.1f} s)", flush=True)
        if r.waveform is not None and r.waveform.exists():
            note = "" if r.waveform.suffix == ".fst" else (
                " (VCD: Verilator's FST writer needs the zlib header and liblz4, "
                "e.g. Debian's zlib1g-dev and liblz4-1)")
            print(f"    waveform: {r.waveform}{note}")

    covers = {name: [b for b, spec in BLOCKS.items() if spec.cosim_in == name] for name in BLOCKS}
    rows = [[r.block + "".join(f" + {c}" for c in covers[r.block]), fmt_params(r.params),
             r.tests, f"{r.transactions:,}", f"{r.cycles:,}",
             f"{r.seconds:.1f}", "PASS" if r.passed else f"FAIL: {r.describe()}"]
            for r in results]
    table = md_table(["block", "parameters", "tests", "transactions", "cycles", "seconds",
                      "result"], rows)
    passed = sum(r.passed for r in results)
    text = (f"# Co-simulation summary\n\nVerilator (PyPI wheel) under cocotb, checked against "
            f"the golden models; seed {args.seed}.\n\n{table}\n"
            f"{passed} of {len(results)} passed in {time.perf_counter() - start:.0f} s.\n")
    atomic_write(BUILD / "summary.md", text)
    write_json(BUILD / "summary.json", [
        {"block": r.block, "params": r.params, "seed": r.seed, "tests": r.tests,
         "failed": r.failed, "transactions": r.transactions, "cycles": r.cycles,
         "seconds": round(r.seconds, 3), "passed": r.passed, "error": r.error}
        for r in results])
    print()
    print(text)
    print(f"(written to {BUILD / 'summary.md'})")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    run_main(main)
