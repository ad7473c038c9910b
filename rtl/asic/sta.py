"""A static timer over a mapped netlist (Yosys JSON) with the cells' NLDM tables.

One ideal clock (every flip-flop's clock pin; arrival 0, slew ``clock_slew``), no wires (the
load of a net is the sum of its sink pins' rise or fall capacitances, ``output_load`` for a
top-level output): a pre-layout estimate. Rise and fall are propagated separately through
each arc's unateness; a net's slew is the largest of the arcs reaching it (the usual
conservative choice); delays and slews are the tables' bilinear interpolation in (input
slew, output load).

High-fanout nets: ABC leaves nets of thousands of sinks on one x1 gate (a reset or an
enable broadcast to every flop), which place and route would buffer. With ``max_fanout`` set,
a net of more than ``max_fanout`` sinks is timed through a balanced tree of ``buffer`` cells,
each driving at most ``max_fanout`` (the driver sees the top level's buffers, a leaf the
mean sink capacitance times its share): the delay of the buffers is added to the net's
arrival and the leaf buffer's slew is the sinks'.

Paths timed: register to register (clock-to-Q at the launching flop, setup at the capturing
one) and input to register (inputs arrive at 0 with slew ``input_slew``). Asynchronous
set/reset arcs (``clear``/``preset``, recovery/removal) are not timed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .liberty import Cell, Library

__all__ = ["Timer", "fo4", "time_netlist"]

RISE, FALL = 0, 1
_EDGE = ("rise", "fall")


def fo4(lib: Library, inverter: str | None = None) -> dict:
    """The delay of ``inverter`` (default: the library's smallest) driving four copies of
    itself, its input slew the output slew of the same stage (iterated to a fixed point):
    the mean of the rise and fall delays, in ps, with the slew."""
    cell = lib.cells[inverter] if inverter else lib.smallest_inverter()
    a = cell.inputs[0]
    arc = next(x for x in cell.outputs[0].arcs if x.related == a.name)
    l_rise, l_fall = 4 * a.caps[RISE], 4 * a.caps[FALL]
    s_rise = s_fall = arc.tables["rise_transition"].lookup(20.0, l_rise)
    for _ in range(50):    # output rise follows input fall and vice versa (negative unate)
        nr = arc.tables["rise_transition"].lookup(s_fall, l_rise)
        nf = arc.tables["fall_transition"].lookup(s_rise, l_fall)
        if abs(nr - s_rise) < 1e-9 and abs(nf - s_fall) < 1e-9:
            break
        s_rise, s_fall = nr, nf
    d_rise = arc.tables["cell_rise"].lookup(s_fall, l_rise)
    d_fall = arc.tables["cell_fall"].lookup(s_rise, l_fall)
    return {"cell": cell.name, "fo4_ps": (d_rise + d_fall) / 2, "rise_ps": d_rise,
            "fall_ps": d_fall, "slew_ps": (s_rise + s_fall) / 2,
            "load_ff": (l_rise + l_fall) / 2}


def _outs(sense: str, edge: int):
    """Output edges an input ``edge`` causes through an arc of ``sense``."""
    if sense == "positive_unate":
        return (edge,)
    if sense == "negative_unate":
        return (1 - edge,)
    return (RISE, FALL)


@dataclass
class Point:
    """Arrival of one edge on one net and where it came from."""
    time: float
    slew: float
    prev: tuple | None      # (net, edge, instance, cell, from pin, to pin) or None at a start


class Timer:
    """Time one module of a Yosys JSON netlist mapped onto ``lib``'s cells."""

    def __init__(self, module: dict, lib: Library, input_slew: float, clock_slew: float,
                 output_load: float = 0.0, max_fanout: int | None = None,
                 buffer: str | None = None):
        self.lib, self.input_slew, self.clock_slew = lib, input_slew, clock_slew
        self.names = {}
        for name, nn in sorted(module.get("netnames", {}).items(),
                               key=lambda kv: (kv[1].get("hide_name", 0), len(kv[0]))):
            for k, b in enumerate(nn["bits"]):
                if isinstance(b, int) and b not in self.names:
                    self.names[b] = name if len(nn["bits"]) == 1 else f"{name}[{k}]"
        self.inputs = []
        self.load = defaultdict(lambda: [0.0, 0.0])     # net -> load of a rise, of a fall
        for pname, port in module.get("ports", {}).items():
            for b in port["bits"]:
                if not isinstance(b, int):
                    continue
                if port["direction"] == "input":
                    self.inputs.append(b)
                else:
                    self.load[b][RISE] += output_load
                    self.load[b][FALL] += output_load
        self.insts = []             # (instance, Cell, {pin: bit})
        self.sinks = defaultdict(list)
        unknown = set()
        for iname, c in module.get("cells", {}).items():
            cell = lib.cells.get(c["type"])
            if cell is None:
                unknown.add(c["type"])
                continue
            conn = {p: bits[0] for p, bits in c["connections"].items() if bits}
            self.insts.append((iname, cell, conn))
            for p, b in conn.items():
                pin = cell.pins.get(p)
                if pin is not None and pin.direction == "input" and isinstance(b, int):
                    self.load[b][RISE] += pin.caps[RISE]
                    self.load[b][FALL] += pin.caps[FALL]
                    self.sinks[b].append(len(self.insts) - 1)
        if unknown:
            raise ValueError(f"cells not in {lib.name}: {', '.join(sorted(unknown))}")
        self.clocks = {conn.get(cell.ff["clocked_on"].strip("!() '"))
                       for _, cell, conn in self.insts if cell.ff}
        self.trees = {}         # net -> [load of each buffer level, rise and fall]
        if max_fanout:
            self._buffer_trees(max_fanout, lib.cells[buffer])
        self._order = self._topo()

    def _buffer_trees(self, fanout: int, buf: Cell) -> None:
        self.buf = buf
        bin_ = buf.inputs[0]
        self.buf_arc = next(a for a in buf.outputs[0].arcs if a.related == bin_.name)
        for b, sinks in self.sinks.items():
            k = len(sinks)
            if k <= fanout or b in self.clocks:
                continue
            per_sink = [self.load[b][e] / k for e in (RISE, FALL)]
            counts = []             # buffers per level, leaves first
            n = k
            while n > fanout:
                n = -(-n // fanout)
                counts.append(n)
            levels = []             # the load each level's buffer drives, top level first
            below = k
            for c in counts:        # leaves first: each drives its share of what is below
                share = below / c
                cap = per_sink if below == k else list(bin_.caps)
                levels.append([share * cap[RISE], share * cap[FALL]])
                below = c
            self.trees[b] = levels[::-1]
            self.load[b] = [counts[-1] * bin_.caps[RISE], counts[-1] * bin_.caps[FALL]]

    def _through(self, b, edge: int, t: float, s: float) -> tuple[float, float]:
        """Arrival and slew at the sinks of net ``b`` (through its buffer tree, if any)."""
        for load in self.trees.get(b, ()):
            tabs = self.buf_arc.tables
            t += tabs[f"cell_{_EDGE[edge]}"].lookup(s, load[edge])
            s = tabs[f"{_EDGE[edge]}_transition"].lookup(s, load[edge])
        return t, s

    def _topo(self) -> list[int]:
        """Combinational instances in topological order (flops and constants cut cycles)."""
        comb = [k for k, (_, cell, _) in enumerate(self.insts) if not cell.ff and not cell.latch]
        driver = {}
        for k in comb:
            _, cell, conn = self.insts[k]
            for p in cell.outputs:
                if isinstance(conn.get(p.name), int):
                    driver[conn[p.name]] = k
        indeg = {k: 0 for k in comb}
        users = defaultdict(list)
        for k in comb:
            _, cell, conn = self.insts[k]
            for p in cell.inputs:
                d = driver.get(conn.get(p.name))
                if d is not None:
                    indeg[k] += 1
                    users[d].append(k)
        order = [k for k in comb if indeg[k] == 0]
        for k in order:
            for u in users[k]:
                indeg[u] -= 1
                if indeg[u] == 0:
                    order.append(u)
        if len(order) != len(comb):
            raise ValueError(f"combinational loop through {len(comb) - len(order)} cells")
        return order

    def _propagate(self, starts: dict) -> dict:
        """Arrival (per net, per edge) of the latest signal from ``starts``."""
        at = dict(starts)                      # (bit, edge) -> Point
        for k in self._order:
            iname, cell, conn = self.insts[k]
            for out in cell.outputs:
                ob = conn.get(out.name)
                if not isinstance(ob, int):
                    continue
                load = self.load[ob]
                for arc in out.arcs:
                    if arc.type not in ("combinational", "combinational_rise",
                                        "combinational_fall"):
                        continue
                    ib = conn.get(arc.related)
                    for e in (RISE, FALL):
                        p = at.get((ib, e))
                        if p is None:
                            continue
                        for oe in _outs(arc.sense, e):
                            dt = arc.tables.get(f"cell_{_EDGE[oe]}")
                            st = arc.tables.get(f"{_EDGE[oe]}_transition")
                            if dt is None:
                                continue
                            t = p.time + dt.lookup(p.slew, load[oe])
                            s = st.lookup(p.slew, load[oe]) if st else p.slew
                            t, s = self._through(ob, oe, t, s)
                            q = at.get((ob, oe))
                            if q is None:
                                at[(ob, oe)] = Point(t, s, (ib, e, iname, cell.name,
                                                            arc.related, out.name))
                            else:
                                if t > q.time:
                                    q.time, q.prev = t, (ib, e, iname, cell.name,
                                                         arc.related, out.name)
                                q.slew = max(q.slew, s)
        return at

    def _launch(self) -> dict:
        """Clock-to-Q arrivals at every flip-flop output."""
        starts = {}
        for iname, cell, conn in self.insts:
            if not cell.ff:
                continue
            for out in cell.outputs:
                ob = conn.get(out.name)
                if not isinstance(ob, int):
                    continue
                for arc in out.arcs:
                    if arc.type != "rising_edge":
                        continue
                    for oe in (RISE, FALL):
                        dt = arc.tables.get(f"cell_{_EDGE[oe]}")
                        if dt is None:
                            continue
                        load = self.load[ob][oe]
                        t = dt.lookup(self.clock_slew, load)
                        s = arc.tables[f"{_EDGE[oe]}_transition"].lookup(self.clock_slew, load)
                        t, s = self._through(ob, oe, t, s)
                        q = starts.get((ob, oe))
                        if q is None or t > q.time:
                            starts[(ob, oe)] = Point(t, s, ("clock", oe, iname, cell.name,
                                                            arc.related, out.name))
        return starts

    def _capture(self, at: dict):
        """The worst (arrival + setup) over every flip-flop data pin: (time, point, setup,
        instance, cell, pin)."""
        worst = None
        for iname, cell, conn in self.insts:
            if not cell.ff:
                continue
            for pin in cell.inputs:
                for arc in pin.arcs:
                    if arc.type != "setup_rising":
                        continue
                    b = conn.get(pin.name)
                    for e in (RISE, FALL):
                        p = at.get((b, e))
                        tab = arc.tables.get(f"{_EDGE[e]}_constraint")
                        if p is None or tab is None:
                            continue
                        setup = tab.lookup(p.slew, self.clock_slew)
                        if worst is None or p.time + setup > worst[0]:
                            worst = (p.time + setup, (b, e), setup, iname, cell.name, pin.name)
        return worst

    def _register(self, iname: str) -> str | None:
        """The signal a flip-flop holds: the name of the net on its output."""
        for name, cell, conn in self.insts:
            if name == iname:
                for p in cell.outputs:
                    b = conn.get(p.name)
                    if isinstance(b, int):
                        return self.names.get(b)
        return None

    def _trace(self, at: dict, key) -> list[dict]:
        steps = []
        while key is not None:
            p = at[key]
            if p.prev is None:
                steps.append({"net": self.names.get(key[0], str(key[0])),
                              "edge": _EDGE[key[1]], "arrival_ps": round(p.time, 2),
                              "buffer_levels": len(self.trees.get(key[0], ()))})
                break
            ib, ie, iname, cname, frm, to = p.prev
            steps.append({"instance": iname, "cell": cname, "from": frm, "to": to,
                          "edge": _EDGE[key[1]], "arrival_ps": round(p.time, 2),
                          "slew_ps": round(p.slew, 2),
                          "net": self.names.get(key[0], str(key[0])),
                          "buffer_levels": len(self.trees.get(key[0], ()))})
            key = None if ib == "clock" else (ib, ie)
        steps.reverse()
        prev = 0.0
        for s in steps:
            s["delay_ps"] = round(s["arrival_ps"] - prev, 2)
            prev = s["arrival_ps"]
        return steps

    def worst(self, kind: str) -> dict | None:
        """The worst path of ``kind``: ``reg2reg`` or ``in2reg``."""
        if kind == "reg2reg":
            starts = self._launch()
        else:
            starts = {(b, e): Point(*self._through(b, e, 0.0, self.input_slew), None)
                      for b in self.inputs if b not in self.clocks for e in (RISE, FALL)}
        at = self._propagate(starts)
        w = self._capture(at)
        if w is None:
            return None
        total, key, setup, iname, cname, pin = w
        steps = self._trace(at, key)
        first = steps[0] if steps else {}
        return {"kind": kind, "delay_ps": round(total, 2), "setup_ps": round(setup, 2),
                "start": first.get("instance", first.get("net")),
                "start_signal": first.get("net"), "end": f"{iname}.{pin}",
                "end_signal": self._register(iname), "end_cell": cname,
                "cells": [s["cell"] for s in steps if "cell" in s], "steps": steps}


def time_netlist(module: dict, lib: Library, input_slew: float, clock_slew: float,
                 output_load: float = 0.0, max_fanout: int | None = None,
                 buffer: str | None = None) -> dict:
    """Worst register-to-register and input-to-register paths; ``period_ps`` is the larger;
    ``buffered_nets``: how many nets were timed through a buffer tree."""
    t = Timer(module, lib, input_slew, clock_slew, output_load, max_fanout, buffer)
    paths = {k: t.worst(k) for k in ("reg2reg", "in2reg")}
    delays = [p["delay_ps"] for p in paths.values() if p]
    return {"period_ps": max(delays) if delays else None, "buffered_nets": len(t.trees),
            **paths}
