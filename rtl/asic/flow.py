"""One block parameter set through the ASIC flow: Yosys maps the Verilog onto a library's
cells (``synth``, ``dfflibmap``, ``abc`` with a delay target, ``stat`` for the area) and the
timer of :mod:`.sta` finds the worst path."""

from __future__ import annotations

import gzip
import json
import subprocess
import time
from pathlib import Path

from . import LIBRARIES, MAPPINGS, MAX_FANOUT
from .liberty import Library, load
from .sta import fo4, time_netlist

_LIBS: dict[str, Library] = {}


def library(name: str) -> Library:
    """The parsed library ``name`` (parsed once per process)."""
    if name not in _LIBS:
        _LIBS[name] = load(name, LIBRARIES[name].paths())
    return _LIBS[name]


def unpack(name: str, out: Path) -> list[Path]:
    """The library's Liberty files, uncompressed into ``out`` (Yosys' ABC reads plain text)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for src in LIBRARIES[name].paths():
        dst = out / src.name.removesuffix(".gz")
        if not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime:
            with gzip.open(src, "rb") as f:
                dst.write_bytes(f.read())
        paths.append(dst)
    return paths


def yosys_script(top: str, libs: list[str], dff_lib: str, target_ps: float,
                 mapping: str = "full") -> str:
    """The Yosys script of one mapping (:data:`MAPPINGS`; a script of its own is read from
    ``abc.script`` in the working directory)."""
    lib_args = " ".join(f"-liberty {p}" for p in libs)
    script = "" if MAPPINGS[mapping] is None else " -script abc.script"
    return (f"read_verilog {top}.v; synth -flatten -top {top}; "
            f"dfflibmap -liberty {dff_lib}; abc{script} -D {target_ps:.0f} {lib_args}; "
            f"opt_clean; "
            f"tee -q -o stat.json stat -json {lib_args}; "
            f"write_json netlist.json; write_verilog -noattr -simple-lhs netlist.v")


def run(yosys: str, verilog: str, top: str, lib_name: str, out: Path,
        target_fo4: float = 20.0, max_fanout: int | None = MAX_FANOUT,
        retime: bool = False, mapping: str = "full") -> dict:
    """Map ``verilog`` (module ``top``) onto library ``lib_name`` in ``out`` by ``mapping``
    and time it (with ``retime``, time the netlist an earlier run left in ``out`` instead,
    whose mapping ``flow.json`` there names)."""
    if mapping not in MAPPINGS:
        raise ValueError(f"mapping must be one of {', '.join(MAPPINGS)}, not {mapping!r}")
    spec = LIBRARIES[lib_name]
    out.mkdir(parents=True, exist_ok=True)
    libs = unpack(lib_name, out.parent.parent / "lib" / lib_name)
    rel = [str(Path("..", "..", "lib", lib_name, p.name)) for p in libs]
    dff = rel[[p.name for p in libs].index(spec.dff.removesuffix(".gz"))]
    lib = library(lib_name)
    f = fo4(lib, spec.inverter)
    t0 = time.perf_counter()
    if retime:
        if not (out / "netlist.json").exists():
            raise FileNotFoundError(2, "no netlist to retime (run without --retime)",
                                    str(out / "netlist.json"))
        flow = out / "flow.json"
        mapping = json.loads(flow.read_text())["mapping"] if flow.exists() else "full"
    else:
        (out / f"{top}.v").write_text(verilog)
        (out / "flow.json").write_text(json.dumps({"mapping": mapping}) + "\n")
        if MAPPINGS[mapping] is not None:
            (out / "abc.script").write_text(
                MAPPINGS[mapping].replace("{D}", f"-D {target_fo4 * f['fo4_ps']:.0f}") + "\n")
        # YoWASP tools see the working directory only: the libraries are reached as ../../lib
        subprocess.run([yosys, "-q", "-l", "yosys.log", "-p",
                        yosys_script(top, rel, dff, target_fo4 * f["fo4_ps"], mapping)],
                       cwd=out, check=True, stdout=subprocess.DEVNULL)
    t1 = time.perf_counter()
    stat = next(iter(json.loads((out / "stat.json").read_text())["modules"].values()))
    module = json.loads((out / "netlist.json").read_text())["modules"][top]
    timing = time_netlist(module, lib, input_slew=f["slew_ps"], clock_slew=f["slew_ps"],
                          max_fanout=max_fanout, buffer=spec.buffer)
    bare = time_netlist(module, lib, input_slew=f["slew_ps"], clock_slew=f["slew_ps"]) \
        if max_fanout else timing
    t2 = time.perf_counter()
    by_type = stat.get("num_cells_by_type", {})
    flops = sum(n for c, n in by_type.items() if c in lib.cells and lib.cells[c].ff)
    period = timing["period_ps"]
    return {
        "library": lib_name, "process": spec.process, "cells": stat.get("num_cells"),
        "flops": flops, "area_um2": round(float(stat.get("area", 0.0)), 2),
        "period_ps": round(period, 1) if period is not None else None,
        "fmax_mhz": round(1e6 / period, 1) if period else None,
        "fo4_ps": round(f["fo4_ps"], 2), "fo4_cell": f["cell"], "fo4_slew_ps": f["slew_ps"],
        "period_fo4": round(period / f["fo4_ps"], 1) if period else None,
        "abc_target_ps": round(target_fo4 * f["fo4_ps"], 1), "mapping": mapping,
        "max_fanout": max_fanout, "buffered_nets": timing["buffered_nets"],
        "period_unbuffered_ps": round(bare["period_ps"], 1) if bare["period_ps"] else None,
        "reg2reg": timing["reg2reg"], "in2reg": timing["in2reg"],
        "yosys_s": round(t1 - t0, 1), "sta_s": round(t2 - t1, 1),
    }
