"""RailX chip-level networks for the cycle-level simulator (:mod:`models.common.netsim`).

Importing this module registers the topologies ``hyperx`` (2D-HyperX), ``railx-torus``
(2D-Torus) and ``dragonfly`` of a :class:`RailX` system, and the routing ``railx-minimal``
(the table compiler of :class:`~.routing.MinimalRouting`), with the simulator's registry; the
simulator core itself knows no RailX.

Link bandwidths (RailX Table 5 and eq 5): a rail link is one optical port, 1 flit/cycle and 10
cycles. Inside a node, eq 5 estimates the mesh by "the bisection bandwidth per port",
(2 · k · m · n) / (4 · m · n) > 1 ⇒ k > 2: the m·n chip-to-chip connections across a node's
bisection, each counted as n ports of k times the port bandwidth, against the 4·m·n optical
ports of the node. So one chip-to-chip mesh link carries **n · k** flits/cycle, and this is
how the links are built (``k``); ``mesh_width`` sets the lanes directly instead.
"""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import numpy as np

from aifabric.models.common.netsim.network import (EAST, FIRST_RAIL, KIND_MESH, KIND_RAIL, LOCAL, NORTH,
                                          SOUTH, WEST, Network, NetworkError, channel_load_bound,
                                          check_deadlock_free, check_int, check_link, connect,
                                          new_links)
from aifabric.models.common.netsim.registry import register_routing, register_topology
from aifabric.models.common.netsim.registry import routing as lookup_routing

from .routing import ORDERS, XY, MinimalRouting, check_order
from .system import RailX, Topology, dragonfly, hyperx_2d, torus_2d

# What a sweep point's model hash covers (models.common.netsim.sweep.point): this module and
# the topology and routing it compiles tables from.
MODEL_SOURCES = [str(Path(__file__).with_name(f)) for f in
                 ("netsim.py", "routing.py", "system.py", "rings.py")]

__all__ = ["railx", "railx_tables", "order_search", "DEFAULT_ORDER", "is_hyperx"]

# In-node dimension order per Algorithm 1 phase on the 2D-HyperX (X phase in the source node,
# Y phase, destination node), chosen by :func:`order_search` on Fig 14's instance: the highest
# channel-load bound of the 8 orders (every one of them has an acyclic CDG), ties broken by
# the mesh channels' own bound (see the README for the table).
DEFAULT_ORDER = ("yx", "xy", "yx")


def registered_name(topo: Topology) -> str:
    """The name ``topo``'s kind is registered under with the simulator."""
    for prefix, name in (("2D-HyperX", "hyperx"), ("2D-Torus", "railx-torus"),
                         ("Dragonfly", "dragonfly")):
        if topo.name.startswith(prefix):
            return name
    return "hyperx" if is_hyperx(topo) else "railx-torus"


def is_hyperx(topo: Topology) -> bool:
    return len(topo.dims) == 2 and all(len(d) == 1 and d[0].kind == "alltoall"
                                       for d in topo.dims)


def railx(topo: Topology, *, vcs: int | None = None, routing: str | None = None,
          k: int | None = None, mesh_width: int | None = None, mesh_delay: int = 1,
          rail_width: int = 1, rail_delay: int = 10, inject: int | None = None,
          order=None) -> Network:
    """The chip-level network of ``topo``: every chip a router, the on-package mesh on ports
    1..4 (n·k flits/cycle per chip-to-chip link, eq 5, or ``mesh_width`` lanes; default
    k = 2; ``mesh_delay`` cycles, Table 5: 1), the chip's rail links on ports 5.. (Table 5: 1
    flit/cycle, 10 cycles). Tables from :class:`MinimalRouting`: Algorithm 1's VCs on a
    2D-HyperX, one VC class per node hop on the others. ``order``: the in-node dimension order
    per phase (default :data:`DEFAULT_ORDER` on a 2D-HyperX, x then y elsewhere).
    ``inject`` (default: the chip's 4n ports) is the injection and ejection width.
    ``routing``: a routing registered for the topology (default ``railx-minimal``).

    Links between chips (``Network.links``): built from k, a chip-to-chip mesh connection is
    n parallel links of k lanes each (the n ports of a chip edge, eq 5 and Fig 7: each port
    has k times the rail bandwidth); the "parallel" link model holds each of them for one
    packet, the "shared" one lets every packet share the n·k lanes flit by flit. Built from
    ``mesh_width`` it is one link."""
    sysm = topo.system
    if k is not None and mesh_width is not None:
        raise NetworkError("give the mesh bandwidth as k (n·k lanes per chip-to-chip link, "
                           "eq 5) or as mesh_width (lanes), not both")
    mesh_links = 1
    if mesh_width is None:
        k = 2 if k is None else check_int("internal bandwidth k", k, 1, 32)
        mesh_width, mesh_links = sysm.n * k, sysm.n
    check_link(mesh_width, mesh_delay, "mesh link")
    check_link(rail_width, rail_delay, "rail link")
    inject = sysm.ports_per_chip if inject is None else check_int("injection width", inject,
                                                                  1, 64)
    hyperx = is_hyperx(topo)
    compile_tables = lookup_routing(routing, registered_name(topo)).compile
    if order is None:
        order = DEFAULT_ORDER if hyperx else XY
    try:
        rt = MinimalRouting(topo, vcs="algorithm1" if hyperx else "hops", order=order)
    except ValueError as e:
        raise NetworkError(str(e)) from None
    vcs = rt.num_vcs if vcs is None else check_int("VCs", vcs, 1, 64)
    if vcs < rt.num_vcs or vcs % rt.num_vcs:
        raise NetworkError(f"{topo.name}: {rt.vcs!r} routing needs {rt.num_vcs} VC classes, "
                           f"so VCs must be a multiple of {rt.num_vcs}, not {vcs}")
    n = topo.num_chips
    rails: dict[int, list[int]] = {}
    for i, ln in enumerate(topo.links):
        if ln.kind == "optical":
            rails.setdefault(ln.u, []).append(i)
            rails.setdefault(ln.v, []).append(i)
    ports = FIRST_RAIL + max((len(v) for v in rails.values()), default=0)
    arrs = new_links(n, ports)
    link_port = {}
    m = sysm.m
    for c in range(n):
        X, Y, x, y = topo.chip_coords(c)
        if x + 1 < m:
            connect(arrs, c, EAST, topo.chip_id(X, Y, x + 1, y), WEST, mesh_width, mesh_delay,
                    KIND_MESH)
        if y + 1 < m:
            connect(arrs, c, NORTH, topo.chip_id(X, Y, x, y + 1), SOUTH, mesh_width,
                    mesh_delay, KIND_MESH)
    for c, idx in rails.items():
        for j, i in enumerate(sorted(idx)):
            link_port[(i, c)] = FIRST_RAIL + j
    for i, ln in enumerate(topo.links):
        if ln.kind == "optical":
            connect(arrs, ln.u, link_port[(i, ln.u)], ln.v, link_port[(i, ln.v)], rail_width,
                    rail_delay, KIND_RAIL)
    arrs[2][:, LOCAL] = inject
    coords = np.array([(X * m + x, Y * m + y) for X, Y, x, y in
                       (topo.chip_coords(c) for c in range(n))], np.int32)
    tables = compile_tables(topo, rt, vcs, link_port)
    links = np.where(arrs[4] == KIND_MESH, mesh_links, 1).astype(np.int32)
    net = Network(f"RailX {topo.name} (m={m}, n={sysm.n})", *arrs, *tables,
                  vcs_needed=rt.num_vcs, grid=(topo.nodes[0] * m, topo.nodes[1] * m),
                  coords=coords, routing=f"minimal ({rt.vcs} VCs, in-node order "
                                         f"{','.join(rt.order)})", topology=topo,
                  links=links)
    net.max_throughput = topo.all_to_all_throughput() * rail_width
    return net


def _mesh_port(topo: Topology, a: int, b: int, order: str) -> int:
    """First mesh port of the dimension-order route a -> b inside one node."""
    _, _, x, y = topo.chip_coords(a)
    _, _, x1, y1 = topo.chip_coords(b)
    if order == "xy" and x != x1 or order == "yx" and y == y1:
        return EAST if x1 > x else WEST
    return NORTH if y1 > y else SOUTH


def railx_tables(topo: Topology, rt: MinimalRouting, vcs: int, link_port: dict):
    """Tables equal to ``rt.route``: inside the destination node dimension-order mesh routing
    (order ``rt.order[2]``); elsewhere mesh routing (the phase's order) towards the nearest chip
    with a link to the next node of the dimension-ordered shortest path, then that link.
    The routing's VC *classes* each get vcs / rt.num_vcs consecutive VCs (any of them)."""
    n, m = topo.num_chips, topo.system.m
    per = m * m
    width = vcs // rt.num_vcs
    port = np.full((n, vcs, n), -1, np.int8)
    cls = np.zeros((n, vcs, n), np.int16)
    rows = np.arange(vcs) // width                      # class of the input VC
    algo1 = rt.vcs == "algorithm1"
    o_dst = rt.order[2]
    # the next node depends on the node, not the chip, and a chip has a link towards few
    # nodes: each is worked out once (the tables of 1,296 chips took seconds otherwise)
    next_of = functools.lru_cache(maxsize=None)(rt.next_node)
    for c in range(n):
        here = topo.node_of(c)
        base = c - c % per
        exits = {}
        for d in range(base, base + per):                 # destination in this node
            port[c, :, d] = LOCAL if d == c else _mesh_port(topo, c, d, o_dst)
            cls[c, :, d] = 0 if d == c else (2 if algo1 else rows)
        for gx in range(topo.nodes[0]):
            for gy in range(topo.nodes[1]):
                goal = (gx, gy)
                if goal == here:
                    continue
                nxt = next_of(here, goal)
                if nxt not in exits:
                    exits[nxt] = rt.exit_link(c, nxt)
                link, local, _ = exits[nxt]
                optical = c == local
                if optical:
                    p = link_port[(link, c)]
                elif algo1:
                    p = _mesh_port(topo, c, local, rt.order[rt.phase(here, goal, 0)])
                else:                      # per-hop classes: source node (row 0) or not
                    p0 = _mesh_port(topo, c, local, rt.order[0])
                    p1 = _mesh_port(topo, c, local, rt.order[1])
                    p = np.where(rows == 0, p0, p1).reshape(-1, 1)
                if algo1:
                    kk = (1 if nxt[0] != here[0] else 2) if optical else \
                        rt._phase_vc(here, goal)
                else:
                    kk = rows + 1 if optical else rows
                g0 = topo.chip_id(gx, gy, 0, 0)
                port[c, :, g0:g0 + per] = p
                cls[c, :, g0:g0 + per] = np.asarray(kk).reshape(-1, 1) if np.ndim(kk) else kk
    lo = cls * width
    bad = (lo >= vcs) & (port > LOCAL)
    port[bad] = -1                                        # class beyond the last: unreachable
    lo[port == LOCAL] = 0
    lo = np.minimum(lo, vcs - 1).astype(np.int8)
    hi = np.where(port == LOCAL, 0, np.minimum(lo + width - 1, vcs - 1)).astype(np.int8)
    return port, lo, hi


def order_search(topo: Topology, **kw) -> list[dict]:
    """Every in-node order (8: "xy"/"yx" per phase) on ``topo``'s network (``kw``: as
    :func:`railx`), best first: ``order``, ``acyclic`` (the CDG check at the routing's VC
    count), ``bound`` (the channel-load bound, flits/cycle/chip, all channels), ``mesh``
    (mesh channels only), ``rail`` (rail channels only). Sorted by (acyclic, bound, mesh)."""
    out = []
    for order in itertools.product(ORDERS, repeat=3):
        net = railx(topo, order=order, **kw)
        acyclic = check_deadlock_free(net, net.vcs) is None
        out.append({"order": ",".join(order), "acyclic": acyclic,
                    "bound": channel_load_bound(net),
                    "mesh": channel_load_bound(net, KIND_MESH),
                    "rail": channel_load_bound(net, KIND_RAIL)})
    out.sort(key=lambda r: (r["acyclic"], round(r["bound"], 9), round(r["mesh"], 9)),
             reverse=True)
    return out


# -- registration with the simulator ------------------------------------------------------------

_PARAMS = {"m", "n", "R", "vcs", "k", "mesh_width", "mesh_delay", "rail_width", "rail_delay",
           "inject", "order", "routing"}



def _system(kw: dict) -> RailX:
    try:
        return RailX(kw.pop("m", 4), kw.pop("n", 2), kw.pop("R", 18))
    except (TypeError, ValueError) as e:
        raise NetworkError(str(e)) from None


def _topo(make, *args):
    try:
        return make(*args)
    except (TypeError, ValueError) as e:
        raise NetworkError(str(e)) from None


def _build_hyperx(side=None, **kw) -> Network:
    system = _system(kw)
    return railx(_topo(hyperx_2d, system, side), **kw)


def _build_torus(side=None, **kw) -> Network:
    system = _system(kw)
    return railx(_topo(torus_2d, system, side), **kw)


def _build_dragonfly(groups=None, group_size=None, **kw) -> Network:
    system = _system(kw)
    return railx(_topo(dragonfly, system, groups, group_size), **kw)


register_topology("hyperx", _build_hyperx, _PARAMS | {"side"},
                  doc="RailX 2D-HyperX, Algorithm 1 (m x m-chip nodes)")
register_topology("railx-torus", _build_torus, _PARAMS | {"side"},
                  doc="RailX 2D-Torus, one VC class per node hop")
register_topology("dragonfly", _build_dragonfly, _PARAMS | {"groups", "group_size"},
                  doc="RailX Dragonfly, one VC class per node hop")
register_routing("railx-minimal", railx_tables, topologies=("hyperx", "railx-torus",
                                                            "dragonfly"), default=True,
                 doc="RailX minimal routing: Algorithm 1 on a 2D-HyperX, one VC class per "
                     "node hop elsewhere")
