"""The ASIC flow's static timer against chains computed by hand, on a test library whose
tables are linear (so bilinear interpolation is exact and every figure below is arithmetic on
the table entries), and its table lookup against the shipped files' own entries."""

import pytest

from aifabric.rtl.asic import LIBRARIES
from aifabric.rtl.asic.liberty import Library, Table, load
from aifabric.rtl.asic.sta import fo4, time_netlist


def _tab(name, rows, template="d2"):
    vals = ", ".join(f'"{r}"' for r in rows)
    return f"{name} ({template}) {{ values ({vals}); }}"


def _gate(name, pins, sense, rise, fall, trans=("10, 10", "10, 10"), area=1):
    ins = " ".join(f"pin ({p}) {{ direction : input; capacitance : 1; }}" for p in pins)
    arcs = " ".join(
        f'timing () {{ related_pin : "{p}"; timing_sense : {sense}; '
        f'{_tab("cell_rise", rise)} {_tab("cell_fall", fall)} '
        f'{_tab("rise_transition", trans)} {_tab("fall_transition", trans)} }}' for p in pins)
    return (f"cell ({name}) {{ area : {area}; {ins} pin (Y) {{ direction : output; "
            f'function : "x"; {arcs} }} }}')


# Units ps and fF. Tables over (input slew 0..100 ps) x (load 0..10 fF):
#   INV  rise 10 + 0.1 slew + 2 load, fall 8 + 0.1 slew + 1 load, transition 10 + load,
#        input capacitance 2 fF
#   AND2 10 + load, OR2 12 + load, XOR2 (non-unate) 15 + load, BUF 5 + load, transition 10,
#        inputs 1 fF
#   DFF  clock-to-Q 20 + load, Q transition 10 + load, setup 5 + 0.1 data slew, D/CLK 1 fF
LIB = "\n".join([
    'library (hand) { time_unit : "1ps"; capacitive_load_unit (1, ff);',
    'lu_table_template (d2) { variable_1 : input_net_transition; '
    'variable_2 : total_output_net_capacitance; index_1 ("0, 100"); index_2 ("0, 10"); }',
    'lu_table_template (c2) { variable_1 : constrained_pin_transition; '
    'variable_2 : related_pin_transition; index_1 ("0, 100"); index_2 ("0, 100"); }',
    'cell (INV) { area : 1; pin (A) { direction : input; capacitance : 2; } '
    'pin (Y) { direction : output; function : "!A"; timing () { related_pin : "A"; '
    'timing_sense : negative_unate; ' + _tab("cell_rise", ["10, 30", "20, 40"])
    + _tab("cell_fall", ["8, 18", "18, 28"]) + _tab("rise_transition", ["10, 20", "10, 20"])
    + _tab("fall_transition", ["10, 20", "10, 20"]) + "} } }",
    _gate("AND2", "AB", "positive_unate", ["10, 20", "10, 20"], ["10, 20", "10, 20"]),
    _gate("OR2", "AB", "positive_unate", ["12, 22", "12, 22"], ["12, 22", "12, 22"]),
    _gate("XOR2", "AB", "non_unate", ["15, 25", "15, 25"], ["15, 25", "15, 25"]),
    _gate("BUF", "A", "positive_unate", ["5, 15", "5, 15"], ["5, 15", "5, 15"]),
    'cell (DFF) { area : 4; ff (IQ, IQN) { clocked_on : "CLK"; next_state : "D"; } '
    'pin (CLK) { direction : input; capacitance : 1; clock : true; } '
    'pin (D) { direction : input; capacitance : 1; timing () { related_pin : "CLK"; '
    'timing_type : setup_rising; ' + _tab("rise_constraint", ["5, 5", "15, 15"], "c2")
    + _tab("fall_constraint", ["5, 5", "15, 15"], "c2") + "} } "
    'pin (Q) { direction : output; function : "IQ"; timing () { related_pin : "CLK"; '
    'timing_type : rising_edge; timing_sense : non_unate; '
    + _tab("cell_rise", ["20, 30", "20, 30"]) + _tab("cell_fall", ["20, 30", "20, 30"])
    + _tab("rise_transition", ["10, 20", "10, 20"])
    + _tab("fall_transition", ["10, 20", "10, 20"]) + "} } }",
    "}"])


@pytest.fixture(scope="module")
def lib():
    return Library("hand", [LIB])


class Net:
    """A Yosys JSON module built gate by gate (nets are integers from 2; clk is net 2)."""

    def __init__(self, inputs=("clk",)):
        self.bits, self.cells, self.ports = {}, {}, {}
        for p in inputs:
            self.ports[p] = {"direction": "input", "bits": [self.bit(p)]}

    def bit(self, name):
        return self.bits.setdefault(name, len(self.bits) + 2)

    def cell(self, inst, type_, **pins):
        self.cells[inst] = {"type": type_,
                            "connections": {p: [self.bit(n)] for p, n in pins.items()}}

    def dff(self, inst, d, q):
        self.cell(inst, "DFF", CLK="clk", D=d, Q=q)

    def module(self):
        return {"ports": self.ports, "cells": self.cells,
                "netnames": {n: {"bits": [b], "hide_name": 0} for n, b in self.bits.items()}}


def test_inverter_chain(lib):
    n = Net(inputs=("clk", "d"))
    n.dff("r0", "d", "q0")
    n.cell("i1", "INV", A="q0", Y="y1")
    n.cell("i2", "INV", A="y1", Y="y2")
    n.cell("i3", "INV", A="y2", Y="y3")
    n.dff("r1", "y3", "q1")
    t = time_netlist(n.module(), lib, input_slew=0.0, clock_slew=0.0)
    # by hand (loads: q0, y1, y2 drive an inverter, 2 fF; y3 the flop's D, 1 fF):
    #   q0 rise/fall 20 + 2 = 22, slew 12
    #   y1 rise 22 + 10 + 1.2 + 4 = 37.2, fall 22 + 8 + 1.2 + 2 = 33.2, slew 12
    #   y2 rise 33.2 + 15.2 = 48.4, fall 37.2 + 11.2 = 48.4, slew 12
    #   y3 rise 48.4 + 10 + 1.2 + 2 = 61.6, fall 48.4 + 8 + 1.2 + 1 = 58.6, slew 11
    #   setup 5 + 0.1 * 11 = 6.1: 61.6 + 6.1 = 67.7
    r = t["reg2reg"]
    assert r["delay_ps"] == pytest.approx(67.7)
    assert r["setup_ps"] == pytest.approx(6.1)
    assert r["cells"] == ["DFF", "INV", "INV", "INV"]
    assert [s["instance"] for s in r["steps"]] == ["r0", "i1", "i2", "i3"]
    assert r["start"] == "r0" and r["end"] == "r1.D"
    assert [s["delay_ps"] for s in r["steps"]] == pytest.approx([22, 15.2, 11.2, 13.2])
    # input d straight into r0.D: arrival 0, slew 0, setup 5
    assert t["in2reg"]["delay_ps"] == pytest.approx(5.0)
    assert t["period_ps"] == pytest.approx(67.7)


def test_ripple_adder(lib):
    """A 3-bit ripple-carry adder between registers: half adder, then two full adders."""
    n = Net()
    for i in range(3):
        n.dff(f"ra{i}", f"na{i}", f"a{i}")
        n.dff(f"rb{i}", f"nb{i}", f"b{i}")
    n.cell("x0", "XOR2", A="a0", B="b0", Y="s0")
    n.cell("c1", "AND2", A="a0", B="b0", Y="c1")
    for i in (1, 2):
        n.cell(f"x{i}", "XOR2", A=f"a{i}", B=f"b{i}", Y=f"x{i}")
        n.cell(f"s{i}", "XOR2", A=f"x{i}", B=f"c{i}", Y=f"s{i}")
        n.cell(f"g{i}", "AND2", A=f"a{i}", B=f"b{i}", Y=f"g{i}")
        n.cell(f"p{i}", "AND2", A=f"x{i}", B=f"c{i}", Y=f"p{i}")
        n.cell(f"o{i}", "OR2", A=f"g{i}", B=f"p{i}", Y=f"c{i + 1}")
    for s in ("s0", "s1", "s2", "c3"):
        n.dff(f"r_{s}", s, f"q_{s}")
    t = time_netlist(n.module(), lib, input_slew=0.0, clock_slew=0.0)
    # by hand: every a/b flop drives two gate inputs: Q at 20 + 2 = 22; x_i = 22 + 15 + 2
    # = 39; c1 = 22 + 10 + 2 = 34; p1 = max(39, 34) + 10 + 1 = 50; c2 = 50 + 12 + 2 = 64;
    # p2 = max(39, 64) + 10 + 1 = 75; c3 = 75 + 12 + 1 = 88 (s2 = 64 + 15 + 1 = 80);
    # setup 5 + 0.1 * 10 = 6: 88 + 6 = 94
    r = t["reg2reg"]
    assert r["delay_ps"] == pytest.approx(94.0)
    assert r["cells"] == ["DFF", "XOR2", "AND2", "OR2", "AND2", "OR2"]
    assert r["start"] in ("ra1", "rb1") and r["end"] == "r_c3.D"
    assert t["in2reg"] is None          # no input but the clock


def test_a_high_fanout_net_is_timed_through_a_buffer_tree(lib):
    n = Net()
    n.dff("r0", "x", "q0")
    for i in range(20):
        n.dff(f"s{i}", "q0", f"o{i}")
    bare = time_netlist(n.module(), lib, input_slew=0.0, clock_slew=0.0)
    # q0 drives 20 D pins: 20 + 20 = 40, slew 30; setup 5 + 3 = 8: 48
    assert bare["reg2reg"]["delay_ps"] == pytest.approx(48.0)
    t = time_netlist(n.module(), lib, input_slew=0.0, clock_slew=0.0, max_fanout=8,
                     buffer="BUF")
    # three buffers (20 sinks, 8 each at most): q0 sees 3 fF, 20 + 3 = 23; each buffer
    # drives 20/3 fF: 5 + 6.667 = 11.667, slew 10; setup 5 + 1 = 6: 40.667
    assert t["reg2reg"]["delay_ps"] == pytest.approx(23 + 5 + 20 / 3 + 6, abs=0.01)
    assert t["buffered_nets"] == 1
    assert t["reg2reg"]["steps"][0]["buffer_levels"] == 1


def test_fo4_from_the_inverter_tables(lib):
    # load 4 x 2 fF = 8; slew fixed point 10 + 8 = 18; rise 10 + 1.8 + 16 = 27.8,
    # fall 8 + 1.8 + 8 = 17.8; FO4 the mean, 22.8
    f = fo4(lib, "INV")
    assert f["fo4_ps"] == pytest.approx(22.8)
    assert f["slew_ps"] == pytest.approx(18.0)


def test_table_interpolates_and_extrapolates():
    t = Table([0.0, 10.0], [0.0, 1.0, 3.0], [[0.0, 1.0, 5.0], [10.0, 13.0, 21.0]])
    assert t.lookup(0.0, 1.0) == 1.0
    assert t.lookup(5.0, 2.0) == pytest.approx((3.0 + 17.0) / 2)
    assert t.lookup(20.0, 0.0) == pytest.approx(20.0)           # beyond the grid: linear
    assert t.lookup(-10.0, 1.0) == pytest.approx(-11.0)


def test_shipped_libraries_read_in_ps_and_ff():
    """sg13g2 is in ns and pF, ASAP7 in ps and fF: the same entries come out in ps and fF."""
    ihp = load("sg13g2", LIBRARIES["sg13g2"].paths())
    inv = ihp.cells["sg13g2_inv_1"]
    rise = inv.pins["Y"].arcs[0].tables["cell_rise"]
    # the file: index_1 0.0186 ns, index_2 0.001 pF, value 0.0205719 ns
    assert rise.lookup(18.6, 1.0) == pytest.approx(20.5719)
    # capacitance 0.0028869 pF, rise_capacitance 0.00293856, fall_capacitance 0.00283525
    assert inv.pins["A"].cap == pytest.approx(2.8869)
    assert inv.pins["A"].caps == pytest.approx((2.93856, 2.83525))
    asap = load("asap7", LIBRARIES["asap7"].paths())
    assert asap.cells["INVx1_ASAP7_75t_R"].area == pytest.approx(0.04374)
    assert any(c.ff for c in asap.cells.values()) and any(c.ff for c in ihp.cells.values())
    # FO4 from each library's own inverter: 130 nm about three times 7 nm
    assert 30 < fo4(ihp, "sg13g2_inv_1")["fo4_ps"] < 100
    assert 5 < fo4(asap, "INVx1_ASAP7_75t_R")["fo4_ps"] < 30
