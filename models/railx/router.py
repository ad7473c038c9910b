"""The RailX chip router's golden model: the router of the cycle-level network simulator.

:class:`~models.common.netsim.reference.RouterModel` is the router of
``models.common.netsim`` with its ports open (credits and flits in, traversals out), the
contract ``rtl/railx/router.py`` is held to cycle for cycle. :func:`table_entries` turns a
simulated network's routing tables into the entries the RTL's tables load (the RTL looks a
router's entry up one router ahead, lookahead routing, and its head arrives with it: the
same entry the model reads for that head, in the same cycles).
"""

from __future__ import annotations

from aifabric.models.common.netsim.network import Network
from aifabric.models.common.netsim.reference import Flit, Packet, RouterModel

__all__ = ["RouterModel", "Flit", "Packet", "table_entries", "check_table"]


def check_table(entries, *, ports: int, vcs: int, dst_width: int) -> list[tuple]:
    """Entries (row, destination, port, lowest VC, highest VC) as the router RTL loads them,
    checked: a ValueError names the first entry that the RTL would refuse (and flag) or
    that does not fit its fields."""
    out = []
    for k, entry in enumerate(entries):
        try:
            row, dst, port, lo, hi = (int(x) for x in entry)
        except (TypeError, ValueError):
            raise ValueError(f"table entry {k}: expected (row, destination, port, lowest VC, "
                             f"highest VC), not {entry!r}") from None
        where = f"table entry {k} (row {row}, destination {dst})"
        if not 0 <= row < vcs:
            raise ValueError(f"{where}: row {row} is not an input VC (0..{vcs - 1})")
        if not 0 <= dst < 1 << dst_width:
            raise ValueError(f"{where}: destination does not fit {dst_width} bits")
        if not 0 <= port < ports:
            raise ValueError(f"{where}: port {port} does not exist (ports 0..{ports - 1})")
        if port and not 0 <= lo <= hi < vcs:
            raise ValueError(f"{where}: VC range {lo}..{hi} is not within 0..{vcs - 1}")
        out.append((row, dst, port, lo if port else 0, hi if port else 0))
    return out


def table_entries(net: Network, router: int, *, ports: int | None = None,
                  dst_width: int | None = None) -> list[tuple[int, int, int, int, int]]:
    """(row, destination, output port, lowest VC, highest VC) of every routed (row,
    destination) of ``router`` in ``net``: row = input VC (0 at the local port), port 0 =
    eject, checked by :func:`check_table` for a router of ``ports`` ports (default: the
    network's) and ``dst_width`` destination bits (default: enough for its chips). Entries
    without a route (port < 0) are left out: the router then flags a head that needs one."""
    port, lo, hi = net.route_port[router], net.route_vc_lo[router], net.route_vc_hi[router]
    entries = [(row, dst, int(port[row, dst]), int(lo[row, dst]), int(hi[row, dst]))
               for row in range(port.shape[0]) for dst in range(port.shape[1])
               if port[row, dst] >= 0]
    return check_table(entries, ports=net.ports if ports is None else ports, vcs=net.vcs,
                       dst_width=max(1, (net.routers - 1).bit_length()) if dst_width is None
                       else dst_width)
