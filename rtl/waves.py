"""GTKWave save files: a block's ports grouped so that a waveform opens readable.

:func:`gtkw_text` lists every port of a block, read from its component's signature (so the
file cannot drift from the RTL): one group per interface (a stream reads ``valid``,
``ready``, then its payload; the router's flit channels ``valid``, the flit, the credits),
one group for the remaining inputs and one for the remaining outputs. ``clk`` and ``rst``
come first. Names are those Verilator writes into a dump of the co-simulation:
``<module>.<port>`` (Verilator's scope of the top module; the ports also appear under
``$rootio``), vectors with their range (``grants[15:0]``). Multi-bit signals are
shown in hexadecimal, single bits as bits.

A co-simulation with waves (``aifabric cosim --waves``) writes ``dump.gtkw`` beside its dump,
naming it as its ``[dumpfile]``: ``gtkwave build/cosim/<instance>-waves/last/dump.gtkw`` opens
both;
``aifabric verilog`` writes ``<instance>.gtkw`` beside the Verilog.
"""

from __future__ import annotations

__all__ = ["port_groups", "gtkw_text"]

_ORDER = {"valid": 0, "ready": 1}


def _ports(block, params: dict, top=None):
    """(Verilog port name, width, direction) of every port but clk/rst, in signature order;
    ``top``: the component already built for ``params``, if there is one."""
    from amaranth.hdl import Value
    from amaranth.lib import wiring

    from ._util import not_elaborated
    component = top if top is not None else not_elaborated(block.build(params))
    for path, member, value in component.signature.flatten(component):
        yield tuple(path), len(Value.cast(value)), member.flow is wiring.In


def port_groups(block, params: dict, top=None) -> list[tuple[str, list[tuple[str, int]]]]:
    """``[(group name, [(port, width), ...]), ...]``: ``clock``, one group per interface,
    then ``inputs`` and ``outputs``."""
    groups: dict[tuple, list] = {}
    inputs, outputs = [], []
    for path, width, is_in in _ports(block, params, top):
        name = "__".join(str(p) for p in path)
        if len(path) > 1:
            groups.setdefault(path[:-1], []).append((path[-1], name, width))
        else:
            (inputs if is_in else outputs).append((name, width))
    out = [("clock", [("clk", 1), ("rst", 1)])]
    for key, members in groups.items():
        members.sort(key=lambda m: _ORDER.get(m[0], 2))     # stable: payload after the pair
        label = key[0] + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in key[1:])
        out.append((label, [(name, width) for _, name, width in members]))
    if inputs:
        out.append(("inputs", inputs))
    if outputs:
        out.append(("outputs", outputs))
    return out


def gtkw_text(block, params: dict, *, module: str | None = None,
              dumpfile: str | None = None, top=None) -> str:
    """The GTKWave save file of ``block`` at ``params`` (module ``module``, default
    :meth:`Block.instance_name`), written with pyvcd's :class:`vcd.gtkw.GTKWSave`; ``top``:
    the component already built for ``params``, if there is one."""
    import io

    from vcd.gtkw import GTKWSave
    module = module or block.instance_name(params)
    out = io.StringIO()
    save = GTKWSave(out)
    save.comment(f"GTKWave save file of {module} (aifabric {block.name}): ports by interface")
    save.comment("Signals are <module>.<port>, as Verilator writes a dump.")
    if dumpfile:
        save.dumpfile(dumpfile, abspath=False)      # beside the save file
    save.timestart(0)
    save.treeopen(f"{module}.")
    save.sst_expanded(True)
    save.signals_width(260)
    for label, ports in port_groups(block, params, top):
        with save.group(label):
            for name, width in ports:
                if width == 1:
                    save.trace(f"{module}.{name}", datafmt="bin")
                else:
                    save.trace(f"{module}.{name}[{width - 1}:0]", datafmt="hex")
    return out.getvalue()
