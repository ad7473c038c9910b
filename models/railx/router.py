"""The RailX chip router's golden model: the router of the cycle-level network simulator.

:class:`~models.common.netsim.reference.RouterModel` is the router of
``models.common.netsim`` with its ports open (credits and flits in, traversals out), the
contract ``rtl/railx/router.py`` is held to cycle for cycle. :func:`table_entries` turns a
simulated network's routing tables into the entries the RTL's run-time routing table loads.
"""

from __future__ import annotations

from models.common.netsim.network import Network
from models.common.netsim.reference import Flit, Packet, RouterModel

__all__ = ["RouterModel", "Flit", "Packet", "table_entries"]


def table_entries(net: Network, router: int) -> list[tuple[int, int, int, int, int]]:
    """(row, destination, output port, lowest VC, highest VC) of every routed (row,
    destination) of ``router`` in ``net``: row = input VC (0 at the local port), port 0 =
    eject. Entries without a route (port < 0) are left out: the router then flags a head
    that needs one."""
    port, lo, hi = net.route_port[router], net.route_vc_lo[router], net.route_vc_hi[router]
    return [(row, dst, int(port[row, dst]), int(lo[row, dst]), int(hi[row, dst]))
            for row in range(port.shape[0]) for dst in range(port.shape[1])
            if port[row, dst] >= 0]
