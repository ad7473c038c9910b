"""aifabric: hardware description and co-simulation kit for circuit-switched AI-training fabrics.

One import namespace over the repository's folders (the wheel's ``package-dir`` mapping):

- :mod:`aifabric.rtl`: the Amaranth blocks and their catalog (``rtl/``);
- :mod:`aifabric.models`: the golden models of the five systems (``models/``);
- :mod:`aifabric.cosim`: the cocotb testbenches and the Verilator runner (``cosim/``);
- :mod:`aifabric.scripts`: what the ``aifabric`` command runs (``scripts/``);
- :mod:`aifabric.cli`: the ``aifabric`` command.
"""

from __future__ import annotations

__all__ = ["__version__"]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("aifabric")
    except PackageNotFoundError:         # a source tree that was never installed
        import re
        from pathlib import Path
        text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
        return re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)


def __getattr__(name: str) -> str:
    # looked up on first use, not at import: reading the installed metadata costs every
    # process (the network simulator's included) about 20 ms it does not need
    if name == "__version__":
        globals()["__version__"] = v = _version()
        return v
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
