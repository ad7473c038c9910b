"""The testbench codec (``cosim/codec.py``, written from the documented layouts) and the RTL's
own payload helpers and layouts agree, field for field."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from amaranth.lib import data

from aifabric.cosim import codec
from aifabric.rtl.chronos.bvn import load_layout, pack_row, pack_step, step_layout, unpack_step
from aifabric.rtl.chronos.slot_layout import out_layout, word_layout


@st.composite
def steps(draw):
    n = draw(st.integers(2, 64))
    w = draw(st.integers(1, 32))
    outs = draw(st.permutations(range(n)))
    idle = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    perm = [-1 if off else j for j, off in zip(outs, idle)]
    return n, w, perm, draw(st.integers(0, (1 << w) - 1)), draw(st.booleans())


@given(steps())
def test_step_payloads_agree(s):
    n, w, perm, weight, last = s
    word = codec.encode_step(perm, weight, last, n, w)
    assert word == pack_step(perm, weight, last, n, w)
    assert codec.decode_step(word, n, w) == (perm, weight, last)
    assert unpack_step(word, n, w) == (perm, weight, last)
    assert codec.step_bits(n, w) == data.Layout.cast(step_layout(n, w)).size


@given(st.integers(4, 64).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, (1 << 32) - 1), min_size=n, max_size=n), st.booleans())))
def test_load_beats_agree(beat):
    values, last = beat
    n = len(values)
    word = codec.encode_row(values, last)
    assert word == pack_row(values, last, n)
    assert codec.decode_row(word, n) == (values, last)
    assert data.Layout.cast(load_layout(n)).size == 32 * n + 1


@pytest.mark.parametrize("n,rows", [(4, 2), (8, 4), (6, 6)])
def test_wide_load_beat_layout(n, rows):
    """R rows per beat: lane k N + j is row k of the beat, column j; ``last`` after them."""
    layout = data.Layout.cast(load_layout(n, rows))
    assert layout.size == 32 * n * rows + 1
    row = layout["row"]
    assert row.offset == 0 and row.shape.length == n * rows
    assert layout["last"].offset == 32 * n * rows
    values = list(range(1, n * rows + 1))
    word = codec.encode_row(values, True)
    assert word == pack_row(values, True, n * rows)      # the RTL's helper, same lane order
    assert codec.decode_row(word, n * rows) == (values, True)


def test_slot_word_layouts_agree():
    for d in (1, 16, 32):
        wl, ol = word_layout(d), out_layout(d)
        assert (wl["valid"].offset, wl["tag"].offset, wl["data"].offset) == (0, 1, 3)
        assert wl.size == d + 1 + codec.TAG_BITS and (ol["valid"].offset, ol["data"].offset) == (0, 1)
    value = (1 | 2 << 1 | 0x5A << 3) << (2 * (8 + 3))    # element 2: tag 2, data 0x5A
    assert codec.decode_words(value, 3, 8) == [None, None, (2, 0x5A)]
    assert codec.decode_outputs((1 | 0x33 << 1) << 9, 2, 8) == [None, 0x33]


@given(st.integers(1, 8), st.integers(8, 128), st.booleans(), st.booleans(), st.data())
def test_router_flits_agree(vcs, width, head, tail, draw):
    from aifabric.rtl.railx.router import flit_layout
    vc = draw.draw(st.integers(0, vcs - 1))
    payload = draw.draw(st.integers(0, (1 << width) - 1))
    layout = data.Layout.cast(flit_layout(vcs, width))
    word = codec.encode_flit(head, tail, vc, payload, vcs)
    const = layout.const({"head": head, "tail": tail, "vc": vc, "data": payload}).as_value()
    assert word == const.value and layout.size == 2 + codec.width_of(vcs) + width
    assert codec.decode_flit(word, vcs) == (head, tail, vc, payload)


@given(st.integers(1, 16), st.integers(1, 64), st.data())
def test_router_head_and_table_entries_agree(dst_width, packet, draw):
    from aifabric.rtl.railx.router import entry_layout, head_layout, table_layout
    dst = draw.draw(st.integers(0, (1 << dst_width) - 1))
    length = draw.draw(st.integers(0, packet))
    const = data.Layout.cast(head_layout(dst_width, packet)).const({"dst": dst,
                                                                    "length": length})
    word = codec.encode_head(dst, length, dst_width, packet)
    assert word == const.as_value().value
    assert codec.decode_head(word, dst_width, packet) == (dst, length)
    ports, vcs = draw.draw(st.integers(5, 16)), draw.draw(st.integers(1, 8))
    entry = {"row": draw.draw(st.integers(0, vcs - 1)), "dst": dst,
             "port": draw.draw(st.integers(0, ports - 1)),
             "vc_lo": draw.draw(st.integers(0, vcs - 1)), "vc_hi": draw.draw(st.integers(0, vcs - 1))}
    const = data.Layout.cast(entry_layout(ports, vcs, dst_width)).const(entry)
    assert codec.encode_entry(*entry.values(), ports=ports, vcs=vcs, dst_width=dst_width) == \
        const.as_value().value
    outs = draw.draw(st.integers(0, (1 << (ports - 1)) - 1))
    const = data.Layout.cast(table_layout(ports, vcs, dst_width)).const({**entry, "outs": outs})
    assert codec.encode_entry(*entry.values(), ports=ports, vcs=vcs, dst_width=dst_width,
                              outs=outs) == const.as_value().value


@given(st.integers(5, 16), st.integers(1, 8), st.data())
def test_router_routes_agree(ports, vcs, draw):
    """A route beside a head: the RTL's layout holds what the codec writes, the VC mask
    lo..hi (none on the ejection port), and no route is all zero."""
    from aifabric.rtl.railx.router import route_layout
    port = draw.draw(st.integers(0, ports - 1))
    lo = draw.draw(st.integers(0, vcs - 1))
    hi = draw.draw(st.integers(lo, vcs - 1))
    mask = 0 if port == 0 else sum(1 << w for w in range(lo, hi + 1))
    const = data.Layout.cast(route_layout(ports, vcs)).const({"valid": 1, "port": port,
                                                              "vcs": mask})
    assert codec.encode_route(port, lo, hi, ports=ports, vcs=vcs) == const.as_value().value
    assert codec.encode_route(-1, 0, 0, ports=ports, vcs=vcs) == 0


def test_wss_load_column_layout():
    """LOAD_COLUMN from rtl/optics/wss.py's documented layout (op 3 bits, lam = bit length
    of w, then per input enable + port of p bits), written out by hand at r = 5, w = 6
    (p = 3, lam 3 bits): a disabled cell carries the port field it is given, enable 0."""
    word = codec.wss_command(1, ports=5, wavelengths=6, lam=5, cells=[2, None, 4, None, 0],
                             dark_ports=[7, 6, 1, 5])
    cells = [0b0101, 0b1100, 0b1001, 0b1010, 0b0001]          # (port << 1) | enable
    want = 1 | 5 << 3 | sum(c << (6 + 4 * i) for i, c in enumerate(cells))
    assert word == want
    assert codec.wss_command(1, ports=5, wavelengths=6, lam=5,
                             cells=[2, None, 4, None, 0]) == want & ~(0b1100 << 10) & ~(
                                 0b1010 << 18)
    with pytest.raises(ValueError, match="does not fit in 3 bits"):   # would spill over
        codec.wss_command(1, ports=5, wavelengths=6, lam=0, cells=[None], dark_ports=[8])


def _const(layout, fields) -> int:
    return data.Layout.cast(layout).const(fields).as_value().value


@st.composite
def ocs_commands(draw):
    """An OCS transceiver command of any operation with any field values that fit, at any
    lane count and group count, as (codec word, the RTL layout's word)."""
    from aifabric.rtl.optics.ocstrx import Op, Timing, cmd_layout
    lanes = draw(st.sampled_from([2, 4, 8, 16]))
    groups = draw(st.integers(1, 8))
    code_bits, timer_bits = draw(st.integers(1, 16)), draw(st.integers(2, 32))
    layout = cmd_layout(lanes, groups, code_bits, timer_bits)
    op = draw(st.sampled_from(list(Op)))
    k = lanes.bit_length() - 1
    matrix = (lanes // 2) * (2 * k - 1)
    eb = (2 * groups + matrix).bit_length()
    u = lambda bits: draw(st.integers(0, (1 << bits) - 1))       # noqa: E731
    raw = {Op.SET_PATH: dict(group=u(4), path=u(2), backup=u(2), every=u(1)),
           Op.LOAD_PERM: dict(perm=[u(k) for _ in range(lanes)],
                              states=[u(1) for _ in range(matrix)]),
           Op.WRITE_CAL: dict(element=u(eb), state=u(1), code=u(code_bits)),
           Op.SET_TIMING: dict(which=draw(st.sampled_from(list(Timing))), value=u(timer_bits)),
           Op.CLEAR: {}, Op.ARM: dict(mask=u(8))}[op]
    word = codec.ocs_command(op, lanes=lanes, groups=groups, **raw)
    if op == Op.LOAD_PERM:
        raw["states"] = sum(b << e for e, b in enumerate(raw["states"]))
    arg = {} if op == Op.CLEAR else {op.name.lower(): raw}
    return word, _const(layout, {"op": op, "arg": arg}), layout.size


@given(ocs_commands())
def test_ocs_commands_agree(case):
    word, want, size = case
    assert word == want and word < 1 << size


@settings(max_examples=30)    # each example builds the layouts at up to 32 x 128
@given(st.data())
def test_wss_commands_and_drive_agree(draw):
    from aifabric.rtl.optics.wss import Op, cmd_layout, drive_layout
    ports, wavelengths = draw.draw(st.integers(2, 32)), draw.draw(st.integers(1, 128))
    timer_bits = draw.draw(st.integers(2, 32))
    p = (ports - 1).bit_length()
    layout = cmd_layout(ports, wavelengths, timer_bits)
    lam = draw.draw(st.integers(0, (1 << wavelengths.bit_length()) - 1))
    cells = draw.draw(st.lists(st.one_of(st.none(), st.integers(0, (1 << p) - 1)),
                               min_size=ports, max_size=ports))
    dark = draw.draw(st.lists(st.integers(0, (1 << p) - 1), min_size=ports, max_size=ports))
    rtl_cells = [{"enable": 1, "port": o} if o is not None else {"enable": 0, "port": d}
                 for o, d in zip(cells, dark)]
    assert codec.wss_command(Op.LOAD_COLUMN, ports=ports, wavelengths=wavelengths, lam=lam,
                             cells=cells, dark_ports=dark) == \
        _const(layout, {"op": Op.LOAD_COLUMN,
                        "arg": {"load_column": {"lam": lam, "cells": rtl_cells}}})
    port = draw.draw(st.integers(0, (1 << ports.bit_length()) - 1))
    value = draw.draw(st.integers(0, (1 << wavelengths.bit_length()) - 1))
    assert codec.wss_command(Op.SET_BUDGET, ports=ports, wavelengths=wavelengths, port=port,
                             value=value) == \
        _const(layout, {"op": Op.SET_BUDGET, "arg": {"set_budget": {"port": port,
                                                                    "value": value}}})
    settle = draw.draw(st.integers(0, (1 << timer_bits) - 1))
    assert codec.wss_command(Op.SET_SETTLE, ports=ports, wavelengths=wavelengths,
                             value=settle) == \
        _const(layout, {"op": Op.SET_SETTLE, "arg": {"set_settle": {"value": settle}}})
    for op in (Op.COMMIT, Op.CLEAR):
        assert codec.wss_command(op, ports=ports, wavelengths=wavelengths) == \
            _const(layout, {"op": op})
    # the drive: a table built in the RTL's layout reads back cell for cell
    w = min(wavelengths, 4)
    table = [[draw.draw(st.one_of(st.none(), st.integers(0, (1 << p) - 1)))
              for _ in range(ports)] for _ in range(w)]
    drive = _const(drive_layout(ports, w), [[{"enable": 1, "port": o} if o is not None
                                             else {} for o in row] for row in table])
    assert codec.wss_drive(drive, ports, w) == table


@given(st.data())
def test_deinterleaver_commands_agree(draw):
    from aifabric.rtl.optics.deinterleaver import Mode, Op, cmd_layout
    ports, wavelengths = draw.draw(st.integers(2, 4)), draw.draw(st.integers(1, 128))
    timer_bits = draw.draw(st.integers(2, 32))
    layout = cmd_layout(ports, wavelengths, timer_bits)
    split = draw.draw(st.lists(st.integers(0, (1 << wavelengths.bit_length()) - 1),
                               min_size=ports, max_size=ports))
    modes = draw.draw(st.lists(st.sampled_from(list(Mode)), min_size=ports - 1,
                               max_size=ports - 1))
    value = draw.draw(st.integers(0, (1 << timer_bits) - 1))
    for op, kw, arg in (
            (Op.SET_SPLIT, {"split": split}, {"set_split": {"count": split}}),
            (Op.SET_MODES, {"modes": modes}, {"set_modes": {"mode": modes}}),
            (Op.SET_SETTLE, {"value": value}, {"set_settle": {"value": value}}),
            (Op.CLEAR, {}, {})):
        assert codec.dix_command(op, wavelengths=wavelengths, **kw) == \
            _const(layout, {"op": op, "arg": arg})
