"""Verilog for every block of the registry (or the ones asked for) into build/verilog/.

Each file is linted with ``verilator --lint-only -Wall`` and pyslang before it is moved into
place, so build/verilog/ only ever holds complete, lint-clean files; its header names the
package version, the source revision and the parameters.

FuseSoC users do not need these files: one core per block (``rtl/<area>/<block>.core``) runs
the ``aifabric_verilog`` generator with the parameters a design asks for. ``--cores`` writes
those cores from the registry into build/fusesoc (or ``--out``), never into the package.

    aifabric verilog                       # every block, default parameters
    aifabric verilog --block wwfa --param n=32
    aifabric verilog --cores               # the FuseSoC cores, into build/fusesoc
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from aifabric.rtl.toolchain import LintError, lint
from aifabric.rtl.verilog import slang_lint, verilog_of
from aifabric.rtl.waves import gtkw_text

from ._cli import BUILD, Parser, add_block_args, fmt_params, output_dir, run_main, selected


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    add_block_args(parser)
    parser.add_argument("--out", type=Path, default=None,
                        help="The output directory (default build/verilog; with --cores "
                             "build/fusesoc).")
    parser.add_argument("--no-lint", action="store_true",
                        help="Skip the lint (Verilator -Wall and pyslang).")
    parser.add_argument("--cores", action="store_true",
                        help="Only write the FuseSoC cores (the generator's and one per "
                             "block) from the registry into --out; add the folder to "
                             "FuseSoC with --cores-root.")
    args = parser.parse_args(argv)
    if args.cores:
        from aifabric.rtl.fusesoc_generator import write_cores
        for path in write_cores(output_dir(args.out or BUILD / "fusesoc")):
            print(path)
        return 0
    args.out = args.out or BUILD / "verilog"
    instances = selected(args, built=True)      # each component built once, here

    output_dir(args.out)
    slang = not args.no_lint
    if slang:
        try:
            import pyslang  # noqa: F401
        except ImportError:
            slang = False
            print("note: pyslang is not importable: lint by Verilator alone "
                  "(pip install pyslang adds slang's -Weverything)", file=sys.stderr)
    failed = 0
    with tempfile.TemporaryDirectory(dir=args.out, prefix=".staging-") as staging:
        for block, params, top in instances:
            name = block.instance_name(params)
            start = time.perf_counter()
            staged = Path(staging) / f"{name}.v"
            staged.write_text(block.header(params) + verilog_of(block, params, top))
            status = "written"
            if not args.no_lint:
                try:
                    lint(staged)
                    found = slang_lint(staged) if slang else []
                    if found:
                        raise LintError(f"{staged.name}: pyslang -Weverything:\n"
                                        + "\n".join(found))
                    status = ("written, lint-clean (verilator -Wall"
                              + (", pyslang)" if slang else ")"))
                except LintError as e:
                    print(e, file=sys.stderr)
                    failed += 1
                    continue
            (Path(staging) / f"{name}.gtkw").write_text(gtkw_text(block, params, module=name,
                                                                        top=top))
            shutil.move(staged, args.out / staged.name)
            shutil.move(Path(staging) / f"{name}.gtkw", args.out / f"{name}.gtkw")
            print(f"{block.name:8} {fmt_params(params):12} -> {args.out / staged.name} "
                  f"[{status}, {time.perf_counter() - start:.1f} s]")
    if failed:
        print(f"error: {failed} file(s) failed lint and were not written", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    run_main(main)
