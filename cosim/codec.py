"""Payload encoders and decoders written from the documented bit layouts, independent of the
RTL's own helpers (a layout error in ``rtl/`` then fails the co-simulation instead of fooling
both sides). ``tests/test_codec.py`` checks that the RTL helpers agree with these.

BvN engine (``rtl/chronos/bvn.py``)
    load beat: lane j of row i in bits ``32j .. 32j+31``; ``last`` at bit ``32N``. With R rows
    per beat (``rows``): lane ``kN + j`` (row ``bR + k`` of beat ``b``, column ``j``) in bits
    ``32(kN + j) ..``; ``last`` at bit ``32RN``.
    step / stack entry: ``dest[i]`` in bits ``b*i .. b*i+b-1`` (b = bits of N-1, at least 1),
    then ``connected[i]`` at bit ``bN + i``, ``weight`` (W bits) at ``bN + N``, ``last`` at
    ``bN + N + W``.
Slot blocks (``rtl/chronos/slot_layout.py``)
    up-fibre word: ``valid`` bit 0, ``tag`` bits 1..2, ``data`` from bit 3; array element k
    of a word array at bit ``k * (D + 3)``.
    crossbar output: ``valid`` bit 0, ``data`` from bit 1; element k at bit ``k * (D + 1)``.
Router (``rtl/railx/router.py``); c = bits of V - 1, at least 1
    flit: ``head`` bit 0, ``tail`` bit 1, ``vc`` bits 2 .. c + 1, ``data`` from bit c + 2.
    head data: destination in bits 0 .. dst_width - 1, packet length in the next l bits
    (l = bits of the longest packet length ``packet``, at least 1).
    table entry: ``row`` (c bits) from bit 0, then ``dst`` (dst_width), ``port`` (bits of
    P - 1, at least 1), ``vc_lo`` (c), ``vc_hi`` (c); as a router loads it, then ``outs``
    (P - 1 bits, bit q - 1 for output q).
    route (beside a flit on a link): ``valid`` bit 0, ``port`` (bits of P - 1, at least 1)
    from bit 1, then the mask of the VCs it may take (V bits, VC 0 lowest).
OCS transceiver controller (``rtl/optics/ocstrx.py``); N lanes, G groups, E = 2G + the
Benes elements, l = log2 N
    command: ``op`` bits 0..2, then from bit 3: SET_PATH ``group`` (4), ``path`` (2),
    ``backup`` (2), ``every`` (1); ARM ``mask`` (8); LOAD_PERM ``perm[i]`` (l bits each) then one state bit per matrix
    element; WRITE_CAL ``element`` (bit length of E), ``state`` (1), ``code`` (H);
    SET_TIMING ``which`` (2), ``value`` (T).
Wavelength-selective switch controller (``rtl/optics/wss.py``); r ports, w wavelengths,
p = bits of r - 1 (at least 1)
    command: ``op`` bits 0..2, then from bit 3: LOAD_COLUMN ``lam`` (bit length of w) and r
    cells of ``enable`` (1) + ``port`` (p), input 0 first; SET_BUDGET ``port`` (bit length
    of r), ``value`` (bit length of w); SET_SETTLE ``value`` (T).
    drive: cell (i, lam) at index lam * r + i, 1 + p bits each (``enable`` lowest).
De-interleaver controller (``rtl/optics/deinterleaver.py``); P ports, c = bit length of w
    command: ``op`` bits 0..2, then from bit 3: SET_SPLIT ``count[p]`` (c bits each, port 0
    first); SET_MODES ``mode[k]`` (2 bits each, unit 0 first); SET_SETTLE ``value`` (T).
"""

from __future__ import annotations

__all__ = ["LANE_BITS", "TAG_BITS", "dest_bits", "step_bits", "encode_row", "decode_row",
           "encode_step", "decode_step", "field", "decode_words", "decode_outputs",
           "width_of", "encode_flit", "decode_flit", "encode_head", "decode_head",
           "encode_entry", "encode_route", "ocs_command", "wss_command", "wss_drive",
           "dix_command"]

LANE_BITS = 32
TAG_BITS = 2


def dest_bits(n: int) -> int:
    return max(1, (n - 1).bit_length())


def step_bits(n: int, w: int) -> int:
    return dest_bits(n) * n + n + w + 1


def field(value: int, index: int, width: int) -> int:
    """Element ``index`` of an array of ``width``-bit fields packed from bit 0."""
    return value >> (index * width) & ((1 << width) - 1)


def encode_row(values, last: bool) -> int:
    word = 0
    for j, v in enumerate(values):
        if not 0 <= int(v) < 1 << LANE_BITS:
            raise ValueError(f"lane {j}: {v} does not fit in {LANE_BITS} bits")
        word |= int(v) << (LANE_BITS * j)
    return word | int(bool(last)) << (LANE_BITS * len(values))


def decode_row(word: int, n: int) -> tuple[list[int], bool]:
    return [field(word, j, LANE_BITS) for j in range(n)], bool(word >> (LANE_BITS * n) & 1)


def encode_step(perm, weight: int, last: bool, n: int, w: int, *, raw_dest=None) -> int:
    """``perm[i]``: input i's output or -1 (idle). ``raw_dest``: (input, value) pairs written
    into ``dest`` as they are, for malformed entries (an output >= N, a repeated output)."""
    b = dest_bits(n)
    word = 0
    for i, j in enumerate(perm):
        if j >= 0:
            word |= (j & ((1 << b) - 1)) << (b * i) | 1 << (b * n + i)
    for i, value in raw_dest or ():
        if not 0 <= value < 1 << b:
            raise ValueError(f"raw dest {value} of input {i} does not fit in {b} bits")
        word &= ~(((1 << b) - 1) << (b * i))
        word |= value << (b * i) | 1 << (b * n + i)
    if not 0 <= weight < 1 << w:
        raise ValueError(f"weight {weight} does not fit in {w} bits")
    return word | weight << (b * n + n) | int(bool(last)) << (b * n + n + w)


def decode_step(word: int, n: int, w: int) -> tuple[list[int], int, bool]:
    b = dest_bits(n)
    conn = word >> (b * n)
    perm = [field(word, i, b) if conn >> i & 1 else -1 for i in range(n)]
    return perm, field(word >> (b * n + n), 0, w), bool(word >> (b * n + n + w) & 1)


def decode_words(value: int, n: int, d: int) -> list[tuple[int, int] | None]:
    """An array of N up-fibre words -> (tag, data) or None where not valid."""
    out = []
    for k in range(n):
        x = field(value, k, d + 1 + TAG_BITS)
        out.append((x >> 1 & ((1 << TAG_BITS) - 1), x >> (1 + TAG_BITS)) if x & 1 else None)
    return out


def decode_outputs(value: int, n: int, d: int) -> list[int | None]:
    """An array of N crossbar outputs -> data or None where not valid."""
    return [x >> 1 if (x := field(value, k, d + 1)) & 1 else None for k in range(n)]


def width_of(count: int) -> int:
    """Bits of a number in 0 .. count - 1, at least 1 (VC and port fields)."""
    return max(1, (count - 1).bit_length())


def encode_flit(head: bool, tail: bool, vc: int, data: int, vcs: int) -> int:
    c = width_of(vcs)
    if not 0 <= vc < 1 << c:
        raise ValueError(f"vc {vc} does not fit in {c} bits")
    return int(bool(head)) | int(bool(tail)) << 1 | vc << 2 | data << (2 + c)


def decode_flit(word: int, vcs: int) -> tuple[bool, bool, int, int]:
    """-> (head, tail, vc, data)."""
    c = width_of(vcs)
    return bool(word & 1), bool(word >> 1 & 1), field(word >> 2, 0, c), word >> (2 + c)


def encode_head(dst: int, length: int, dst_width: int, packet: int) -> int:
    """The low bits of a head flit's data."""
    if not 0 <= dst < 1 << dst_width:
        raise ValueError(f"destination {dst} does not fit in {dst_width} bits")
    return dst | length << dst_width


def decode_head(data: int, dst_width: int, packet: int) -> tuple[int, int]:
    """-> (destination, length)."""
    return field(data, 0, dst_width), field(data >> dst_width, 0, packet.bit_length())


def encode_entry(row: int, dst: int, port: int, lo: int, hi: int, *, ports: int, vcs: int,
                 dst_width: int, outs: int | None = None) -> int:
    """A table entry; with ``outs`` (a mask of outputs 1..P-1, bit q - 1 for output q), as
    a router loads it (the tables of the routers downstream of those outputs)."""
    c, pb = width_of(vcs), width_of(ports)
    word, at = 0, 0
    fields = [(row, c), (dst, dst_width), (port, pb), (lo, c), (hi, c)]
    if outs is not None:
        fields.append((outs, ports - 1))
    for value, width in fields:
        if not 0 <= value < 1 << width:
            raise ValueError(f"table field {value} does not fit in {width} bits")
        word |= value << at
        at += width
    return word


def encode_route(port: int, lo: int, hi: int, *, ports: int, vcs: int) -> int:
    """The route of a head on a link: output ``port`` and the VCs ``lo .. hi`` (a port < 0:
    no route; an ejection route carries no VCs)."""
    if port < 0:
        return 0
    pb = width_of(ports)
    if not 0 <= port < 1 << pb:
        raise ValueError(f"route port {port} does not fit in {pb} bits")
    mask = 0 if port == 0 else sum(1 << w for w in range(lo, hi + 1) if w < vcs)
    return 1 | port << 1 | mask << (1 + pb)


def ocs_command(op: int, *, lanes: int, groups: int, group: int = 0, path: int = 0,
                backup: int = 0, perm=(), states=(), element: int = 0, state: int = 0,
                code: int = 0, which: int = 0, value: int = 0, every: int = 0,
                mask: int = 0) -> int:
    """An OCS transceiver command word from its raw fields (any values that fit)."""
    l = lanes.bit_length() - 1
    elements = 2 * groups + (lanes // 2) * (2 * l - 1)
    word = op
    if op == 1:
        word |= group << 3 | path << 7 | backup << 9 | every << 11
    elif op == 2:
        for i, p in enumerate(perm):
            word |= p << (3 + i * l)
        for e, b in enumerate(states):
            word |= int(b) << (3 + lanes * l + e)
    elif op == 3:
        eb = elements.bit_length()
        word |= element << 3 | state << (3 + eb) | code << (4 + eb)
    elif op == 4:
        word |= which << 3 | value << 5
    elif op == 6:
        word |= mask << 3
    return word


def wss_command(op: int, *, ports: int, wavelengths: int, lam: int = 0, cells=(),
                port: int = 0, value: int = 0, dark_ports=()) -> int:
    """A WSS controller command word; ``cells``: per input the output port or None.
    ``dark_ports``: per input the port field a disabled (None) cell carries (0 where not
    given); the contract ignores it (only an enabled cell's port is range-checked or used)."""
    p = width_of(ports)
    lb, rb = wavelengths.bit_length(), ports.bit_length()
    word = op
    if op == 1:
        word |= lam << 3
        dark = list(dark_ports) + [0] * (len(cells) - len(dark_ports))
        if not all(0 <= d < 1 << p for d in dark):
            raise ValueError(f"a dark cell's port field does not fit in {p} bits: {dark}")
        for i, o in enumerate(cells):
            cell = 1 | o << 1 if o is not None else dark[i] << 1
            word |= cell << (3 + lb + i * (1 + p))
    elif op == 3:
        word |= port << 3 | value << (3 + rb)
    elif op == 4:
        word |= value << 3
    return word


def wss_drive(value: int, ports: int, wavelengths: int) -> list[list[int | None]]:
    """The drive vector -> per wavelength, per input the output port or None."""
    c = 1 + width_of(ports)
    out = []
    for lam in range(wavelengths):
        row = []
        for i in range(ports):
            x = field(value, lam * ports + i, c)
            row.append(x >> 1 if x & 1 else None)
        out.append(row)
    return out


def dix_command(op: int, *, wavelengths: int, split=(), modes=(), value: int = 0) -> int:
    """A de-interleaver controller command word."""
    c = wavelengths.bit_length()
    word = op
    if op == 1:
        for p, n in enumerate(split):
            word |= n << (3 + p * c)
    elif op == 2:
        for k, mode in enumerate(modes):
            word |= mode << (3 + 2 * k)
    elif op == 3:
        word |= value << 3
    return word
