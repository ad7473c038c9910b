"""Verilog for every block of the registry (or the ones asked for) into build/verilog/.

Each file is linted with ``verilator --lint-only -Wall`` before it is moved into place, so
build/verilog/ only ever holds complete, lint-clean files. Beside each ``<instance>.v`` goes
``<instance>.core``, its FuseSoC core description (CAPI2): ``fusesoc --cores-root
build/verilog core list`` lists them, and a design's own core depends on one by its name.

    aifabric verilog                       # every block, default parameters
    aifabric verilog --block wwfa --param n=32
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from aifabric.cosim.runner import LintError, lint, verilog_of

from ._cli import BUILD, Parser, add_block_args, fmt_params, output_dir, run_main, selected


def main(argv=None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    add_block_args(parser)
    parser.add_argument("--out", type=Path, default=BUILD / "verilog", help="output directory")
    parser.add_argument("--no-lint", action="store_true", help="skip the Verilator lint")
    args = parser.parse_args(argv)
    pairs = selected(args)

    output_dir(args.out)
    failed = 0
    with tempfile.TemporaryDirectory(dir=args.out, prefix=".staging-") as staging:
        for block, params in pairs:
            name = block.instance_name(params)
            start = time.perf_counter()
            staged = Path(staging) / f"{name}.v"
            staged.write_text(block.header(params) + verilog_of(block, params))
            status = "written"
            if not args.no_lint:
                try:
                    lint(staged)
                    status = "written, lint-clean (verilator -Wall)"
                except LintError as e:
                    print(e, file=sys.stderr)
                    failed += 1
                    continue
            core = Path(staging) / f"{name}.core"
            core.write_text(block.fusesoc_core(params))
            shutil.move(staged, args.out / staged.name)
            shutil.move(core, args.out / core.name)
            print(f"{block.name:8} {fmt_params(params):12} -> {args.out / staged.name} "
                  f"[{status}, {time.perf_counter() - start:.1f} s]")
    if failed:
        print(f"error: {failed} file(s) failed lint and were not written", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    run_main(main)
