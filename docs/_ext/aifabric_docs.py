"""Sphinx directives that write reference tables from the code, so the pages cannot drift.

- ``aifabric-block NAME``: a block's description, its parameters (range the component enforces,
  default, the sets ``make`` generates) and its ports (direction, width, array dimensions) at
  its first default parameter set, from the component's signature (one on each page under
  ``docs/blocks/``).
- figures: the PNGs the pages show (``/_generated/figures/[<source>/]<name>.png``) are copied
  from the build directory, where ``make reproduce``, ``make bench``, ``aifabric netsim`` and
  ``make synth`` draw them, before each build; one not drawn yet is a placeholder with a line
  under it naming the command that draws it. The synthesis and ASIC figures (``records/``) are
  drawn by each build from the committed records, results/synth.json and results/asic.json.
- ``aifabric-commands``: the ``aifabric`` command's subcommands with their descriptions, then
  each one's usage and options from its own argparse parser.

Both build docutils nodes (tables, literal blocks), not reST text: a MyST page parses a
directive's nested text as Markdown, which showed ``.. list-table::`` raw.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


def _ports(component) -> list[tuple[str, str, str, str]]:
    from amaranth.hdl import Shape
    from amaranth.lib.wiring import Flow
    rows = []
    for path, member in component.signature.members.flatten():
        if not member.is_port:
            continue
        name = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path)
        name = name.replace(".[", "[")
        shape = Shape.cast(member.shape)
        dims = "".join(f"[{d}]" for d in member.dimensions) or "-"
        rows.append((name, "in" if member.flow is Flow.In else "out",
                     f"{shape.width}{' signed' if shape.signed else ''}", dims))
    return rows


def _width(shape) -> int:
    from amaranth.hdl import Shape
    from amaranth.lib import data
    return data.Layout.cast(shape).size if isinstance(shape, data.Layout) \
        else Shape.cast(shape).width


def _fields(prefix: str, layout, base: int = 0):
    """(field, bit offset, width) of a data layout, struct fields recursively; an array is
    one row (element width x length)."""
    from amaranth.lib import data
    if isinstance(layout, data.ArrayLayout):
        yield (f"{prefix}[0..{layout.length - 1}]", base,
               f"{_width(layout.elem_shape)} x {layout.length}")
        return
    for name, field in layout:
        if isinstance(field.shape, (data.StructLayout, data.UnionLayout, data.ArrayLayout)):
            yield from _fields(f"{prefix}.{name}", field.shape, base + field.offset)
        else:
            yield f"{prefix}.{name}", base + field.offset, _width(field.shape)


def _layouts(component) -> list[tuple[str, int, str]]:
    """The fields of every port whose shape is a data layout (a stream's payload, a command
    word), with their bit offsets: the layout a testbench or a driver encodes."""
    from amaranth.lib import data
    rows = []
    for path, member in component.signature.members.flatten():
        if member.is_port and isinstance(member.shape, data.Layout) \
                and not isinstance(member.shape, data.ArrayLayout):
            name = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path)
            rows += list(_fields(name.replace(".[", "["), member.shape))
    return rows


def _table(header: list[str], rows: list, widths: list[int] | None = None,
           code_first: bool = True) -> nodes.table:
    """A table as docutils nodes (not reST text: a MyST page would parse that as Markdown
    and show it raw); the first column of the body as code."""
    widths = widths or [1] * len(header)
    table = nodes.table()
    group = nodes.tgroup(cols=len(header))
    table += group
    for w in widths:
        group += nodes.colspec(colwidth=w)

    def row(cells, head=False):
        tr = nodes.row()
        for k, cell in enumerate(cells):
            text = str(cell).replace("\n", " ") or "-"
            para = nodes.paragraph()
            para += nodes.literal(text=text) if (k == 0 and code_first and not head) \
                else nodes.Text(text)
            tr += nodes.entry("", para)
        return tr

    thead = nodes.thead()
    thead += row(header, head=True)
    tbody = nodes.tbody()
    for r in rows:
        tbody += row(r)
    group += thead
    group += tbody
    return table


def _paragraph(state, text: str, offset: int) -> list:
    """One paragraph of inline markup (``*x*``, ``**x**``, double-backtick code: the same
    in MyST and reST) parsed by the page's own parser."""
    node = nodes.container()
    state.nested_parse(StringList([text]), offset, node)
    return node.children


def _block_nodes(state, offset: int, name: str) -> list:
    """One block's reference (description, parameters, ports, payload layouts) as nodes."""
    from aifabric.rtl._util import not_elaborated
    from aifabric.rtl.catalog import get_block
    block = get_block(name)
    info = block.describe()
    params = [(p["name"], f"{p['low']} .. {p['high']}" if p["low"] is not None else "any",
               p["default"]) for p in info["parameters"]]
    base = dict(block.params[0]) if block.params else {}
    component = not_elaborated(block.build(base))
    sets = "; ".join(", ".join(f"{k}={v}" for k, v in s.items()) for s in info["params"])
    out = _paragraph(state, f"*{info['description']}* (``aifabric.rtl.{info['area']}."
                            f"{block.name}``, class ``{block.component.__name__}``)", offset)
    out += _paragraph(state, "**Parameters** (the ranges the constructor enforces; generated "
                             f"and co-simulated at: {sets})", offset)
    out.append(_table(["parameter", "range", "default"], params, [30, 40, 30]))
    where = ", ".join(f"{k}={v}" for k, v in base.items())
    out += _paragraph(state, f"**Ports** at {where or 'its defaults'} (widths in bits; arrays "
                             "of ports have their dimensions), besides ``clk`` and ``rst`` "
                             "(one clock domain, synchronous active-high reset)", offset)
    out.append(_table(["port", "direction", "width", "array"], _ports(component),
                      [40, 20, 20, 20]))
    fields = _layouts(component)
    if fields:
        out += _paragraph(state, "**Payload and command layouts** (bit offsets from the least "
                                 "significant bit; the fields a driver encodes)", offset)
        out.append(_table(["field", "offset", "width"], fields, [50, 25, 25]))
    rows = measured_rows(name)
    if rows:
        out += _paragraph(state, "**Measured** (the committed records ``results/synth.json`` "
                                 "and ``results/asic.json``, newest first with the one before "
                                 "it in brackets; ``make synth`` and ``make asic`` append to "
                                 "them): ECP5 LUTs, flip-flops and Fmax from place and route, "
                                 "ASIC area and period from the standard-cell flow", offset)
        out.append(_table(["parameters", "ECP5 LUTs", "FFs", "Fmax (MHz)",
                           "SG13G2 area (µm²) / period (ps, FO4)",
                           "ASAP7 area (µm²) / period (ps, FO4)"], rows,
                          [24, 12, 10, 12, 21, 21]))
    return out


def _newest_two(path: Path, block: str) -> dict[str, list[dict]]:
    """Per instance of ``block``: its newest record and the one before (if any)."""
    from aifabric.scripts.synth import load_records
    by: dict[str, list[dict]] = {}
    for r in load_records(path):
        if r["block"] == block:
            by.setdefault(r["instance"], []).append(r)
    return {k: v[::-1][:2] for k, v in by.items()}


def _now_then(values: list) -> str:
    """'now (before)' where the previous record differs, else 'now'; '' if none."""
    shown = [v for v in values if v not in (None, "")]
    if not shown:
        return ""
    return shown[0] + (f" ({shown[1]})" if len(shown) > 1 and shown[1] != shown[0] else "")


def measured_rows(block: str, root: Path | None = None) -> list[tuple]:
    """A block's measured hardware, one row per parameter set with a record: ECP5 LUTs, FFs
    and Fmax (``results/synth.json``), each library's area and period (``results/asic.json``);
    each cell the newest value with the previous record's in brackets where it differs."""
    root = root or Path(__file__).resolve().parents[2]
    synth = _newest_two(root / "results" / "synth.json", block)
    asic = _newest_two(root / "results" / "asic.json", block)
    params = {r["instance"]: r["params"] for v in (*synth.values(), *asic.values()) for r in v}

    def ecp5(recs, key, fmt):
        return _now_then([fmt(r[key]) if r.get(key) is not None else None for r in recs])

    def lib(recs, name):
        cells = []
        for r in recs:
            x = r.get("libraries", {}).get(name)
            cells.append(None if x is None else
                         f"{x['area_um2']:,.0f} / {x['period_ps']:,.0f}, {x['period_fo4']:.1f}")
        return _now_then(cells)

    rows = []
    for inst, p in params.items():
        s, a = synth.get(inst, []), asic.get(inst, [])
        if s and s[0].get("fits") is False:     # Yosys' count: no place and route
            luts = _now_then([f"{r['lut4']:,}" if r.get("lut4") else None
                              for r in s]) + " LUT4 (Yosys): does not fit"
        else:
            luts = ecp5(s, "slices_comb", lambda x: f"{x:,}")
        rows.append((", ".join(f"{k}={v}" for k, v in p.items()), luts,
                     ecp5(s, "ffs", lambda x: f"{x:,}"),
                     ecp5(s, "fmax_mhz", lambda x: f"{x:.1f}"), lib(a, "sg13g2"),
                     lib(a, "asap7")))
    return rows


class BlockDirective(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        return _block_nodes(self.state, self.content_offset, self.arguments[0])


def _parsers() -> dict:
    """Each command's argparse parser, as its own ``main`` builds it: ``main(["--help"])``
    is run with ``parse_args`` stopped before it prints, so the reference is the parser."""
    import importlib

    from aifabric.cli import COMMANDS
    from aifabric.scripts._cli import Parser

    class Caught(Exception):
        pass

    found = {}
    original = Parser.parse_args

    def catch(self, *args, **kwargs):
        raise Caught(self)

    Parser.parse_args = catch
    try:
        for name, (module, _) in COMMANDS.items():
            try:
                if module:
                    importlib.import_module(f"aifabric.scripts.{module}").main(["--help"])
                else:
                    from aifabric.cli import blocks
                    blocks(["--help"])
            except Caught as e:
                found[name] = e.args[0]
    finally:
        Parser.parse_args = original
    return found


class CommandsDirective(SphinxDirective):
    """The command table, then each command's usage and options from its parser."""
    has_content = False

    def run(self):
        from aifabric.cli import COMMANDS
        out = [_table(["command", "what it does"],
                      [(name, desc) for name, (_, desc) in COMMANDS.items()], [25, 75])]
        for name, parser in _parsers().items():
            parser.prog = f"aifabric {name}"
            section = nodes.section(ids=[f"aifabric-{name}"])
            section += nodes.title(text=f"aifabric {name}")
            usage = nodes.literal_block(text=parser.format_usage().strip())
            usage["language"] = "text"
            section += usage
            rows = []
            for action in parser._actions:
                if action.help == "==SUPPRESS==" or not action.option_strings:
                    continue
                opts = ", ".join(action.option_strings)
                if action.metavar or action.nargs != 0:
                    opts += f" {action.metavar or action.dest.upper()}"
                text = (action.help or "") % {"default": action.default, "prog": parser.prog} \
                    if action.help and "%(" in action.help else (action.help or "")
                rows.append((opts, " ".join(text.split())))
            section += _table(["option", "meaning"], rows, [35, 65])
            out.append(section)
        return out


FIGURES = "_generated/figures"
# where the commands draw their figures, under the build directory, and the command that does
FIGURE_SOURCES = {"reproduce": "make reproduce", "bench": "make bench",
                  "netsim": "aifabric netsim", "synth": "make synth",
                  "records": "make synth or make asic (results/synth.json, results/asic.json)"}
# a page names a figure as /_generated/figures/<name>.png (found in any source) or
# /_generated/figures/<source>/<name>.png (that command's only)
FIGURE_REF = re.compile(r"_generated/figures/(?:(%s)/)?([\w.-]+\.png)" % "|".join(FIGURE_SOURCES))
# the figures not drawn on this machine yet: path under _generated/figures -> (the command
# that draws it, where it writes it)
NOT_DRAWN: dict[str, tuple[str, str]] = {}


def collect_figures(app) -> None:
    """Before the build: every figure a page shows (``/_generated/figures/[<source>/]<name>.png``
    in a MyST ``figure`` or ``image`` directive) copied from where ``make reproduce``, ``make
    bench``, ``aifabric netsim`` or ``make synth`` drew it (``$AIFABRIC_BUILD`` or ``build/``:
    ``reproduce/``, ``bench/``, ``netsim/``, ``synth/``) into ``docs/_generated/figures`` (not
    tracked). A figure not drawn on this machine yet is a placeholder image, and a line under
    it (:func:`mark_not_drawn`) says which command draws it, so the site still builds."""
    import os
    import shutil

    from aifabric.paths import BUILD
    src = Path(app.srcdir)
    draw_records(src.parent / "results", BUILD / "records")
    refs = sorted({(m.group(1) or "", m.group(2)) for page in src.rglob("*.md")
                   if "_generated" not in page.parts
                   for m in FIGURE_REF.finditer(page.read_text())})
    placeholder = src / "_static" / "figure_not_drawn.png"
    NOT_DRAWN.clear()
    for source, name in refs:
        rel = f"{source}/{name}" if source else name
        dirs = [source] if source else list(FIGURE_SOURCES)
        found = next((BUILD / d / name for d in dirs if (BUILD / d / name).is_file()), None)
        if found is None:
            NOT_DRAWN[rel] = (FIGURE_SOURCES[source], f"build/{source}/{name}") if source \
                else ("make reproduce", f"build/reproduce/{name}")
            found = placeholder
        target = src / FIGURES / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_file() and target.read_bytes() == found.read_bytes():
            continue
        tmp = target.with_name(f".{name}.{os.getpid()}")
        shutil.copyfile(found, tmp)
        os.replace(tmp, target)


def draw_records(results: Path, out: Path) -> None:
    """The hardware figures drawn from the committed records into ``out``: the ECP5 trend
    against each block's size and each instance's figures over its records (results/synth.json,
    appended to by ``make synth``), the ASIC trend per library (results/asic.json, ``make
    asic``). A record missing leaves its figures to the placeholder."""
    from aifabric.scripts.asic import ASIC_TREND, draw_asic_trend
    from aifabric.scripts.synth import HISTORY, TREND, draw_history, draw_trend, load_records
    for record, draws in (("synth.json", ((TREND, draw_trend), (HISTORY, draw_history))),
                          ("asic.json", ((ASIC_TREND, draw_asic_trend),))):
        if (results / record).is_file():
            records = load_records(results / record)
            for name, draw in draws:
                draw(records, out / name)


def mark_not_drawn(app, doctree) -> None:
    """A line under each figure (or image) that is still the placeholder, saying so and
    naming the command that draws it: the placeholder's own text is a picture, which neither
    a search nor a screen reader sees."""
    for image in list(doctree.findall(nodes.image)):
        m = FIGURE_REF.search(image.get("uri", ""))
        rel = m and (f"{m.group(1)}/{m.group(2)}" if m.group(1) else m.group(2))
        if not m or rel not in NOT_DRAWN:
            continue
        anchor = image.parent if isinstance(image.parent, nodes.figure) else image
        if isinstance(anchor.parent, nodes.reference):
            anchor = anchor.parent
        command, where = NOT_DRAWN[rel]
        note = nodes.paragraph(classes=["figure-not-drawn"])
        note += nodes.Text("Not drawn on this machine yet: ")
        note += nodes.literal(text=command)
        note += nodes.Text(" writes ")
        note += nodes.literal(text=where)
        note += nodes.Text("; the picture above is a placeholder.")
        anchor.parent.insert(anchor.parent.index(anchor) + 1, note)


def setup(app):
    app.add_directive("aifabric-block", BlockDirective)
    app.add_directive("aifabric-commands", CommandsDirective)
    app.connect("builder-inited", collect_figures)
    app.connect("doctree-read", mark_not_drawn)
    return {"version": "1", "parallel_read_safe": True}
