"""The testbench codec (``cosim/codec.py``, written from the documented layouts) and the RTL's
own payload helpers and layouts agree, field for field."""

import pytest
from hypothesis import given
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
    from aifabric.rtl.railx.router import head_layout, table_layout
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
    const = data.Layout.cast(table_layout(ports, vcs, dst_width)).const(entry)
    assert codec.encode_entry(*entry.values(), ports=ports, vcs=vcs, dst_width=dst_width) == \
        const.as_value().value


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
