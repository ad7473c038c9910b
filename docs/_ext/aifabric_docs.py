"""Sphinx directives that write reference tables from the code, so the pages cannot drift.

- ``aifabric-block NAME``: a block's description, its parameters (range the component enforces,
  default, the sets ``make`` generates) and its ports (direction, width, array dimensions) at
  its first default parameter set, from the component's signature (one on each page under
  ``docs/blocks/``).
- ``aifabric-commands``: the ``aifabric`` command's subcommands with their descriptions.
"""

from __future__ import annotations

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


def _table(header: list[str], rows: list, widths: list[int] | None = None) -> list[str]:
    out = [".. list-table::", "   :header-rows: 1"]
    if widths:
        out.append(f"   :widths: {' '.join(map(str, widths))}")
    out.append("")
    for row in [header, *rows]:
        for k, cell in enumerate(row):
            text = str(cell).replace("\n", " ") or "-"
            out.append(f"   {'* -' if k == 0 else '  -'} ``{text}``" if k == 0 and row is not header
                       else f"   {'* -' if k == 0 else '  -'} {text}")
    out.append("")
    return out


def _block_text(name: str) -> list[str]:
    """reStructuredText of one block's reference (description, parameters, ports)."""
    from aifabric.rtl._util import not_elaborated
    from aifabric.rtl.catalog import get_block
    block = get_block(name)
    info = block.describe()
    params = [(p["name"], f"{p['low']} .. {p['high']}" if p["low"] is not None else "any",
               p["default"]) for p in info["parameters"]]
    base = dict(block.params[0]) if block.params else {}
    component = not_elaborated(block.build(base))
    sets = "; ".join(", ".join(f"{k}={v}" for k, v in s.items()) for s in info["params"])
    text = [f"*{info['description']}* (``aifabric.rtl.{info['area']}.{block.name}``, "
            f"class ``{block.component.__name__}``)", "",
            "**Parameters** (the ranges the constructor enforces; generated and "
            f"co-simulated at: {sets})", ""]
    text += _table(["parameter", "range", "default"], params, [30, 40, 30])
    where = ", ".join(f"{k}={v}" for k, v in base.items())
    text += [f"**Ports** at {where or 'its defaults'} (widths in bits; arrays of ports have "
             "their dimensions), besides ``clk`` and ``rst`` (one clock domain, synchronous "
             "active-high reset)", ""]
    text += _table(["port", "direction", "width", "array"], _ports(component),
                   [40, 20, 20, 20])
    fields = _layouts(component)
    if fields:
        text += ["**Payload and command layouts** (bit offsets from the least significant "
                 "bit; the fields a driver encodes)", ""]
        text += _table(["field", "offset", "width"], fields, [50, 25, 25])
    return text


class BlockDirective(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        text = _block_text(self.arguments[0])
        node = nodes.container()
        self.state.nested_parse(StringList(text, source=f"aifabric-block {self.arguments[0]}"),
                                self.content_offset, node)
        return node.children


class CommandsDirective(SphinxDirective):
    has_content = False

    def run(self):
        from aifabric.cli import COMMANDS
        rows = [(name, desc) for name, (_, desc) in COMMANDS.items()]
        node = nodes.container()
        self.state.nested_parse(StringList(_table(["command", "what it does"], rows,
                                                  [25, 75])), self.content_offset, node)
        return node.children


def setup(app):
    app.add_directive("aifabric-block", BlockDirective)
    app.add_directive("aifabric-commands", CommandsDirective)
    return {"version": "1", "parallel_read_safe": True}
