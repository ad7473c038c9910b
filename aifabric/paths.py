"""Where aifabric reads and writes, in a source checkout and in an installed wheel.

- :data:`SOURCE`: the checkout's root (the folder holding ``pyproject.toml`` beside the
  ``aifabric`` package), or None when the package runs from an installed wheel.
- :data:`BUILD`: where generated files go: ``$AIFABRIC_BUILD`` if set, else ``build/`` in the
  checkout, else ``build/`` under the current directory (never inside site-packages).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["SOURCE", "BUILD", "BUILD_ENV", "source_revision"]

BUILD_ENV = "AIFABRIC_BUILD"
_here = Path(__file__).resolve().parent
SOURCE: Path | None = (_here.parent if (_here.parent / "pyproject.toml").is_file()
                       and (_here.parent / "rtl" / "catalog.py").is_file() else None)
BUILD: Path = (Path(os.environ[BUILD_ENV]).resolve() if os.environ.get(BUILD_ENV)
               else (SOURCE / "build" if SOURCE is not None else Path.cwd() / "build"))


def source_revision() -> str:
    """The checkout's git revision (``git describe --always --dirty``), ``release`` outside a
    checkout or where git cannot tell."""
    import subprocess
    if SOURCE is None or not (SOURCE / ".git").exists():
        return "release"
    try:
        out = subprocess.run(["git", "-C", str(SOURCE), "describe", "--always", "--dirty",
                              "--abbrev=12"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "release"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "release"
