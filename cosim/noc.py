"""Pieces the router and mesh testbenches share: the payload a test flit carries (so every
flit names its packet and position without the DUT's help), the link handles of a port,
and an invariant checker of what leaves an output port, built on the RTL's outputs alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aifabric.cosim.codec import decode_flit, decode_head, encode_flit, encode_head, encode_route

__all__ = ["PacketIds", "Payload", "Link", "OutputChecker", "read_int", "expect_flags",
           "IdleTable",
           "reset_idle"]

ID_BITS, SEQ_BITS = 24, 8


def read_int(handle) -> int:
    """A signal's value as an integer (one-bit signals read as a Logic, wider ones as a
    LogicArray)."""
    value = handle.value
    return value.to_unsigned() if hasattr(value, "to_unsigned") else int(value)


async def expect_flags(tb, expect: int, what: str) -> None:
    """The system's sticky ``error`` flags are ``expect`` now (``what`` names the case in the
    failure); then one cycle of ``clear`` (``tb``: a :class:`~cosim.testbench.Testbench`),
    which the next case starts from."""
    dut = tb.dut
    got = read_int(dut.error)
    assert got == expect, f"{what}: error flags {got:05b}, expected {expect:05b}"
    dut.clear.value = 1
    await tb.tick()
    dut.clear.value = 0


async def reset_idle(tb, inject, edges) -> None:
    """Reset a network of routers (a :class:`~cosim.testbench.Testbench` with a ``table``
    bus; its routing tables, memories, survive it) with its ``inject`` links and the
    ``edges`` stubs, (in, out) link pairs, idle; then one idle cycle out of reset."""
    from aifabric.cosim.testbench import Testbench
    for link in inject:
        link.send(None)
    for i, o in edges:
        i.send(None)
        o.send_credit(None)
    tb.table.valid.value = 0
    tb.dut.clear.value = 0
    await Testbench.reset(tb)
    await tb.tick()


# the packet-number field holds pid * _PID_MUL mod 2**ID_BITS (a bijection: packet numbers
# are small and sequential, so stored plainly the field's upper bits would never be 1), the
# sequence field seq + pid * _SEQ_OFF mod 2**SEQ_BITS (packets are a few flits long)
_PID_MUL, _SEQ_OFF = 0x9E3779 | 1, 0x3B
_PID_INV = pow(_PID_MUL, -1, 1 << ID_BITS)
_ID_MASK, _SEQ_MASK = (1 << ID_BITS) - 1, (1 << SEQ_BITS) - 1


class IdleTable:
    """A component that keeps a system's ``table`` payload moving while the bench holds
    ``valid`` low (a stream's payload is no entry then, and a design must not take it): at
    every edge the next of ``words``, each router r's ejection entry of one row (r's own chip
    as destination) turned to a link port r routes to, so a design that takes a payload
    without ``valid`` sends the heads that reach r away from it. The bench's own writes after
    the edge (the entries of a load) take precedence. :meth:`of` builds the words from the
    entries loaded."""

    def __init__(self, bus, words: list[int]):
        self.write, self.words = bus.writer("payload"), words

    @classmethod
    def of(cls, bus, entries, vcs: int, encode) -> "IdleTable":
        """``entries``: the (router, (row, dst, port, lo, hi)) loaded; ``encode(router,
        entry)``: the payload word of one."""
        port = {}
        for r, e in entries:
            if e[2] != 0:
                port.setdefault(r, e[2])
        return cls(bus, [encode(r, (row, r, q, 0, vcs - 1)) for r, q in port.items()
                         for row in range(vcs)])

    def edge(self, t: int) -> None:
        self.write(self.words[t % len(self.words)])


@dataclass
class Payload:
    """A test flit's data: the head fields (destination, length) in the low bits of a head
    (in a body flit those bits carry a pattern of the packet and sequence number), then the
    packet number (``ID_BITS``) and the flit's sequence number (``SEQ_BITS``), both stored
    scrambled; with ``data_bits`` (the flit's data width) the bits above carry a pattern
    of the packet and sequence number too. Every data bit of a link then takes both values
    (a datapath bit stuck, or swapped with another, changes some flit)."""

    dst_width: int
    packet: int
    data_bits: int = 0

    @property
    def header_bits(self) -> int:
        return self.dst_width + self.packet.bit_length()

    def check_width(self, data: int) -> None:
        need = self.header_bits + ID_BITS + SEQ_BITS
        if data < need:
            raise ValueError(f"the testbench needs flits of at least {need} data bits, "
                             f"not {data}")

    def data(self, pid: int, seq: int, dst: int, length: int) -> int:
        hb = self.header_bits
        low = encode_head(dst, length, self.dst_width, self.packet) if seq == 0 else \
            (pid * 2654435761 + seq * 40503) & ((1 << hb) - 1)
        word = (low | (pid * _PID_MUL & _ID_MASK) << hb |
                ((seq + pid * _SEQ_OFF) & _SEQ_MASK) << (hb + ID_BITS))
        top = hb + ID_BITS + SEQ_BITS
        if self.data_bits > top:
            fill = (pid * 0x85EBCA77 + seq * 0xC2B2AE3D) >> 7
            word |= (fill & ((1 << (self.data_bits - top)) - 1)) << top
        return word

    def packet_words(self, pid: int, dst: int, length: int) -> list[int]:
        """``[data(pid, s, dst, length) for s in range(length)]``, the terms the flits of a
        packet share computed once (the mesh bench formats every injected flit before its
        cycle loop)."""
        hb = self.header_bits
        top = hb + ID_BITS + SEQ_BITS
        fill_mask = (1 << (self.data_bits - top)) - 1 if self.data_bits > top else 0
        low_mask = (1 << hb) - 1
        base = (pid * _PID_MUL & _ID_MASK) << hb
        low0, seq0, fill0 = pid * 2654435761, pid * _SEQ_OFF, pid * 0x85EBCA77
        words = []
        for seq in range(length):
            low = encode_head(dst, length, self.dst_width, self.packet) if seq == 0 else \
                (low0 + seq * 40503) & low_mask
            word = low | base | ((seq + seq0) & _SEQ_MASK) << (hb + ID_BITS)
            if fill_mask:
                word |= ((fill0 + seq * 0xC2B2AE3D) >> 7 & fill_mask) << top
            words.append(word)
        return words

    def ident(self, data: int) -> tuple[int, int]:
        """-> (packet number mod 2**ID_BITS, sequence number)."""
        hb = self.header_bits
        pid = (data >> hb & _ID_MASK) * _PID_INV & _ID_MASK
        return pid, ((data >> (hb + ID_BITS)) - pid * _SEQ_OFF) & _SEQ_MASK

    def head(self, data: int) -> tuple[int, int]:
        return decode_head(data, self.dst_width, self.packet)


class PacketIds:
    """Packet numbers that fit the payload's field."""

    def __init__(self) -> None:
        self.next = 0

    def take(self) -> int:
        pid = self.next
        self.next = (self.next + 1) % (1 << ID_BITS)
        return pid


class Link:
    """One link port: a :class:`~cosim.testbench.Bus` with ``valid`` and ``flit`` (and
    ``credit``, ``credit_vc`` where the port has them), read and driven through the fast
    accessors of ``cosim.batch`` (a write takes effect at once: drive at a falling edge)."""

    def __init__(self, bus, vcs: int) -> None:
        self.bus, self.vcs = bus, vcs
        self.valid, self.flit = bus.valid, bus.flit
        self.credit = getattr(bus, "credit", None)
        self.credit_vc = getattr(bus, "credit_vc", None)
        self._valid, self._put_valid = bus.reader("valid"), bus.writer("valid")
        self._flit, self._put_flit = bus.reader("flit"), bus.writer("flit")
        self.route = getattr(bus, "route", None)
        if self.route is not None:
            self._route, self._put_route = bus.reader("route"), bus.writer("route")
        if self.credit is not None:
            self._credit, self._put_credit = bus.reader("credit"), bus.writer("credit")
            self._credit_vc = bus.reader("credit_vc")
            self._put_credit_vc = bus.writer("credit_vc")

    @classmethod
    def ports(cls, tb, side: str, vcs: int) -> list["Link"]:
        """Every link of the array ``side`` of a :class:`~cosim.testbench.Testbench`'s DUT."""
        return [cls(bus, vcs) for bus in tb.buses(side)]

    def read(self):
        """(head, tail, vc, data) of the flit on the link, or None."""
        if not self._valid():
            return None
        return decode_flit(self._flit(), self.vcs)

    def send(self, flit, route: int | None = None) -> None:
        """Drive (head, tail, vc, data) or nothing (None); ``route``: the encoded route
        beside it (:func:`~cosim.codec.encode_route`), where the link has one."""
        if flit is None:
            self._put_valid(0)
            return
        self._put_flit(encode_flit(*flit, self.vcs))
        if route is not None:
            self._put_route(route)
        self._put_valid(1)

    def read_route(self) -> int:
        """The encoded route on the link (read where a head is valid)."""
        return self._route()

    def read_credit(self):
        """The VC of the credit on the link, or None."""
        if not self._credit():
            return None
        return self._credit_vc()

    def send_credit(self, vc) -> None:
        if vc is None:
            self._put_credit(0)
            return
        self._put_credit_vc(vc)
        self._put_credit(1)


class RoutedLink:
    """A router's input link whose heads carry their route at that router (lookahead
    routing: the upstream router or, at the local port, the source reads it), from
    ``route_of(vc, data)`` (an encoded route, 0: none) when the head is sent."""

    def __init__(self, link: Link, route_of) -> None:
        self.link, self.route_of = link, route_of

    def send(self, flit) -> None:
        self.link.send(flit, None if flit is None or not flit[0] else
                       self.route_of(flit[2], flit[3]))

    def __getattr__(self, name):
        return getattr(self.link, name)


class RouteTables:
    """The routing tables of a system's routers as loaded, (router, row, destination) ->
    encoded route; entries the RTL refuses are not kept."""

    def __init__(self, *, ports: int, vcs: int, dst_width: int) -> None:
        self.P, self.V, self.DW = ports, vcs, dst_width
        self.routes: dict[tuple[int, int, int], int] = {}

    def load(self, router: int, row: int, dst: int, port: int, lo: int, hi: int) -> None:
        if 0 <= row < self.V and 0 <= port < self.P and (port == 0 or 0 <= lo <= hi < self.V):
            self.routes[router, row, dst] = encode_route(port, lo, hi, ports=self.P,
                                                         vcs=self.V)

    def route(self, router: int, row: int, data: int) -> int:
        """The route of a head with ``data`` in ``row`` of ``router``'s table (0: none)."""
        return self.routes.get((router, row, data & ((1 << self.DW) - 1)), 0)

    def link(self, link: Link, router: int, local: bool) -> RoutedLink:
        """``link`` into ``router``, its heads routed by row = their VC (0: ``local``)."""
        return RoutedLink(link, lambda vc, data: self.route(router, 0 if local else vc, data))


@dataclass
class OutputChecker:
    """The rules of what leaves one output port, checked on the RTL alone: on a VC, a
    packet's flits are contiguous, head first and tail last, in sequence; on the ejection
    port (``interleave``) packets may interleave but each one's flits still arrive in
    sequence; no flit arrives twice."""

    name: str
    payload: Payload
    interleave: bool = False
    open: dict = field(default_factory=dict)     # vc (or packet) -> (pid, next seq)
    seen: set = field(default_factory=set)
    flits: int = 0

    def check(self, cycle: int, flit) -> tuple[int, int]:
        head, tail, vc, data = flit
        pid, seq = self.payload.ident(data)
        key = pid if self.interleave else vc
        seen, opened = self.seen, self.open
        # the rules first, the message only for the one broken (once a flit, a formatted
        # message cost as much as the checks: the mesh's batch check calls this 4 times a
        # cycle)
        if (pid, seq) in seen:
            broken = "arrived twice"
        elif head and seq != 0:
            broken = ": head flag on a body flit"
        elif head and key in opened:
            broken = f": a head while packet {opened.get(key)} is still open"
        elif not head and key not in opened:
            broken = ": a body flit with no open packet"
        elif not head and opened[key] != (pid, seq):
            broken = f": expected {opened[key]}"
        else:
            broken = None
        if broken is not None:
            sep = " " if broken[0] != ":" else ""
            raise AssertionError(f"cycle {cycle}, {self.name} VC {vc}: packet {pid} flit "
                                 f"{seq}{sep}{broken}")
        seen.add((pid, seq))
        if tail:
            opened.pop(key, None)
        else:
            opened[key] = (pid, seq + 1)
        self.flits += 1
        return pid, seq
