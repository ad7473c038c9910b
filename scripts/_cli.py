"""What every entry script shares: parameter parsing and the one-line error convention.

A user mistake (unknown block, bad parameter, malformed value) prints one line
``error: <what is wrong>`` on stderr and exits with code 2, without a traceback.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import tempfile
from pathlib import Path

from aifabric import paths as _paths

from aifabric.models.common.figures import md_table  # noqa: F401  (the scripts' table writer)

BUILD = _paths.BUILD


class UsageError(Exception):
    """A mistake in what the user asked for."""


class Parser(argparse.ArgumentParser):
    """argparse with the one-line error convention. ``description`` may be a docstring's
    first paragraph: its reST literals (````x````) are shown as plain text."""

    def __init__(self, *args, description=None, **kwargs):
        if description:
            description = " ".join(description.replace("``", "").split())
        super().__init__(*args, description=description, **kwargs)

    def error(self, message):  # argparse's own usage errors: one line, exit 2
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


def parse_value(text: str):
    """``8`` -> 8, ``2.5`` -> 2.5, ``'8'``/``"8"`` -> the string "8", anything else -> str."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_params(items: list[str] | None) -> dict | None:
    if not items:
        return None
    params, seen = {}, {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--param {item!r}: expected NAME=VALUE, e.g. --param n=8")
        if key.strip() in params:
            raise UsageError(f"--param {key.strip()} is given twice ({seen[key.strip()]} and "
                             f"{item}); give each parameter once")
        seen[key.strip()] = item
        params[key.strip()] = parse_value(value.strip())
    return params


def add_block_args(parser: argparse.ArgumentParser) -> None:
    from aifabric.rtl.catalog import BLOCKS     # the RTL (amaranth), for the block commands only
    parser.add_argument("--block", action="append", metavar="NAME",
                        help=f"block(s) to process (default: all: {', '.join(BLOCKS)})")
    parser.add_argument("--param", action="append", metavar="NAME=VALUE",
                        help="one parameter set instead of the block's defaults: its first "
                             "default set with these values changed (needs one --block), "
                             "e.g. --param n=32")


def selected(args, attr: str = "params", cosim: bool = False,
             built: bool = False) -> list[tuple]:
    """(block, params) pairs the arguments select, each validated by building the component.
    With ``cosim``, blocks co-simulated inside another block are left out (or refused when
    asked for by name). With ``built``, (block, params, component) triples: the component
    that validated the set, for a command that converts or inspects it (built once)."""
    from aifabric.rtl.catalog import BLOCKS, get_block
    names = args.block or [name for name, b in BLOCKS.items() if not (cosim and b.cosim_in)]
    blocks = []
    for name in names:
        try:
            blocks.append(get_block(name))
        except ValueError as e:
            raise UsageError(str(e)) from None
        if cosim and blocks[-1].cosim_in:
            raise UsageError(f"{name} has no testbench of its own: it is co-simulated inside "
                             f"{blocks[-1].cosim_in} (--block {blocks[-1].cosim_in})")
    params = parse_params(args.param)
    if params is not None and len(blocks) != 1:
        raise UsageError("--param needs exactly one --block")
    try:
        sets = ([(blocks[0], params)] if params is not None
                else [(b, p) for b in blocks for p in getattr(b, attr)])
        if built:
            return [(b, *b.instance(p)) for b, p in sets]
        return [(b, b.resolve(p)) for b, p in sets]
    except (TypeError, ValueError) as e:
        raise UsageError(str(e)) from None


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so no reader ever sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as e:       # name the file the user asked for, not the temporary one
        raise OSError(e.errno, e.strerror, str(path)) from None
    try:
        # mkstemp creates the file 0600 whatever the umask; a report is for teammates and CI
        # artifact viewers too, so give it the mode open() would (0666 less the umask).
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def output_dir(path: Path, option: str = "--out") -> Path:
    """Create the output directory ``path`` (and its parents) now, before any long work, so
    an unwritable one is one line naming it, not a traceback at the end."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{option} {path}: cannot create the directory "
                         f"({e.strerror or e.__class__.__name__}"
                         f"{'' if e.filename in (None, str(path)) else ': ' + str(e.filename)})"
                         ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path}: the directory is not writable")
    return path


def _umask() -> int:
    mask = os.umask(0)      # reading the umask means setting it: put it straight back
    os.umask(mask)
    return mask


def write_json(path: Path, data) -> None:
    atomic_write(path, json.dumps(data, indent=2, default=str) + "\n")


def fmt_params(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def os_error_line(e: OSError) -> str:
    """``build/x/summary.md: Not a directory``: one line naming the path."""
    what = e.strerror or e.__class__.__name__
    if e.filename2 is not None:
        return f"{e.filename} -> {e.filename2}: {what}"
    return f"{e.filename}: {what}"


def run_main(main) -> None:
    """Call ``main()``; a :class:`UsageError` becomes one line on stderr and exit code 2, and
    so does a file the script cannot create or write (an unwritable ``--out``: under a
    regular file, in /sys, on a read-only disk...), naming the path."""
    try:
        code = main()
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:
        if isinstance(e, BrokenPipeError) or e.filename is None:
            if isinstance(e, BrokenPipeError):   # the reader left (``| head``): not ours
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                sys.exit(0)
            raise
        print(f"error: {os_error_line(e)}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(code or 0)
