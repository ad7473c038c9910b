"""Non-blocking folded Clos (fat-tree) networks: switch, link and transceiver counts, and the
graph they describe.

A ``t``-tier folded Clos of ``radix``-port switches: tiers ``0 .. t-2`` have ``radix/2`` ports
down and ``radix/2`` up, the top tier has every port down. With one link per host and tier
(full bisection), ``n`` hosts need ``ceil(n / (radix/2))`` switches in every lower tier and
``ceil(n / radix)`` at the top; a single switch (``t = 1``) serves up to ``radix`` hosts. A
``t``-tier network serves at most ``radix * (radix/2)^(t-1)`` hosts (``radix``, ``radix^2/2``,
``radix^3/4``, ...). The *minimum-tier* network for ``n`` hosts is the smallest such ``t``.

Every link (host-switch or switch-switch) has a transceiver at each end, so a ``t``-tier
network has ``n * t`` links and ``2 n t`` transceivers. ``ports`` counts the switch ports in
use (``2 n`` per lower tier, ``n`` at the top); ``radix * switches`` is the ports bought.

:func:`clos_graph` wires the network explicitly (hosts, switches, parallel links as
capacities) so the counts can be checked on a graph: degrees, reachability, and the max-flow
across a bisection of the hosts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Clos", "min_tier_clos", "clos_capacity", "clos_graph"]


def _int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, not {value!r}")
    return value


def clos_capacity(radix: int, tiers: int) -> int:
    """Most hosts a non-blocking ``tiers``-tier folded Clos of ``radix``-port switches serves."""
    _int("radix", radix, 2)
    _int("tiers", tiers, 1)
    if radix % 2:
        raise ValueError(f"radix must be even (half down, half up), not {radix}")
    return radix * (radix // 2) ** (tiers - 1)


@dataclass(frozen=True)
class Clos:
    """Counts of one non-blocking folded Clos: ``per_tier[i]`` switches in tier ``i``
    (0 = the tier the hosts attach to)."""

    hosts: int
    radix: int
    per_tier: tuple[int, ...]

    @property
    def tiers(self) -> int:
        return len(self.per_tier)

    @property
    def switches(self) -> int:
        return sum(self.per_tier)

    @property
    def links(self) -> int:
        """One host link per host, one up-link per host and tier boundary."""
        return self.hosts * self.tiers

    @property
    def transceivers(self) -> int:
        return 2 * self.links

    @property
    def ports(self) -> int:
        """Switch ports in use: both ends of every link that ends on a switch."""
        return 2 * self.links - self.hosts

    @property
    def ports_bought(self) -> int:
        return self.radix * self.switches


def min_tier_clos(hosts: int, radix: int, tiers: int | None = None) -> Clos:
    """The minimum-tier non-blocking Clos for ``hosts`` (or exactly ``tiers`` tiers)."""
    _int("hosts", hosts, 1)
    clos_capacity(radix, 1)   # validates radix
    if tiers is None:
        tiers = 1
        while clos_capacity(radix, tiers) < hosts:
            tiers += 1
    elif clos_capacity(radix, tiers) < hosts:
        raise ValueError(f"a {tiers}-tier Clos of radix {radix} serves at most "
                         f"{clos_capacity(radix, tiers):,} hosts, not {hosts:,}")
    if tiers == 1:
        return Clos(hosts, radix, (1,))
    half = radix // 2
    return Clos(hosts, radix, (math.ceil(hosts / half),) * (tiers - 1)
                + (math.ceil(hosts / radix),))


def clos_graph(clos: Clos):
    """The network as an undirected networkx Graph: hosts ``("h", i)``, switches
    ``("s", tier, j)``; edge attribute ``capacity`` = number of parallel links. Host ``i``
    attaches to tier-0 switch ``i // down``; each lower-tier switch spreads its up-links
    round-robin over the tier above, so parallel links appear where the tier above is small."""
    import networkx as nx
    g = nx.Graph()
    n, radix = clos.hosts, clos.radix
    down = radix if clos.tiers == 1 else radix // 2

    def link(a, b):
        if g.has_edge(a, b):
            g[a][b]["capacity"] += 1
        else:
            g.add_edge(a, b, capacity=1)

    received = [0] * clos.per_tier[0]
    for i in range(n):
        link(("h", i), ("s", 0, i // down))
        received[i // down] += 1
    for tier in range(clos.tiers - 1):
        above = clos.per_tier[tier + 1]
        # Every switch below the top has as many links up as it has down (non-blocking);
        # up-links are numbered switch by switch and dealt to the tier above in turn.
        q = 0
        nxt = [0] * above
        for j, ups in enumerate(received):
            for _ in range(ups):
                link(("s", tier, j), ("s", tier + 1, q % above))
                nxt[q % above] += 1
                q += 1
        received = nxt
    return g
