"""Networks for the cycle-level simulator: routers, ports, links and routing tables.

A :class:`Network` is plain arrays, the form both the reference step and the compiled kernel
read. Router ``r`` is chip ``r``. Every router has ``ports`` ports (unconnected ones have
``nbr == -1``), numbered the same way everywhere:

====  ===========================================================================
0     local: injection (input) and ejection (output)
1..4  mesh: 1 = +x (east), 2 = -x (west), 3 = +y (north), 4 = -y (south)
5..   further links a registered topology adds (RailX: a chip's optical rail links)
====  ===========================================================================

Output port ``p`` of router ``r`` drives input port ``nbr_port[r, p]`` of router
``nbr[r, p]``, and that router's output ``nbr_port[r, p]`` drives ``r``'s input ``p`` (links
are full duplex). ``width[r, p]`` is the link's bandwidth in flits/cycle (lanes; port 0: the
injection and ejection width) and ``delay[r, p]`` its latency in cycles.

Routing tables: ``route_port[r, row, dst]`` is the output port a head flit takes at router
``r`` towards chip ``dst`` (0 = eject at ``dst``), and ``route_vc_lo/hi[r, row, dst]`` the range
of output VCs it may be allocated (lo == hi for a routing function that fixes the VC, as
Algorithm 1 does). ``row`` is the flit's input VC at a network port and 0 at the local port,
so a VC rule that depends on the VC a packet arrives on ("one VC per hop taken") is a table
too. Tables are compiled from the routing functions (:func:`dor_tables` here; a system's own
compiler registers by name, :mod:`.registry`) and checked for deadlock freedom on their
channel dependency graph (:func:`check_deadlock_free`).

Mesh and torus are built in and registered as ``mesh`` and ``torus``; other topologies (RailX's, in
its own package) build a :class:`Network` from :func:`new_links` and :func:`connect`
and register themselves (:func:`.registry.register_topology`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from . import registry
from .errors import NetworkError

__all__ = ["Network", "mesh", "torus", "NetworkError", "check_deadlock_free",
           "channel_load_bound", "channel_loads", "new_links", "connect", "check_link",
           "check_int",
           "LOCAL", "EAST", "WEST", "NORTH", "SOUTH", "FIRST_RAIL"]

LOCAL, EAST, WEST, NORTH, SOUTH, FIRST_RAIL = 0, 1, 2, 3, 4, 5
KIND_NONE, KIND_MESH, KIND_RAIL = 0, 1, 2


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    """``value`` as an int in low..high, or a NetworkError naming ``name``."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise NetworkError(f"{name} must be an integer, not {value!r}")
    if value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in {low}..{high}"
        raise NetworkError(f"{name} must be {rng}, not {value}")
    return int(value)


@dataclass(eq=False)
class Network:
    """A router network and its routing tables (see the module docstring)."""

    name: str
    nbr: np.ndarray
    nbr_port: np.ndarray
    width: np.ndarray
    delay: np.ndarray
    kind: np.ndarray
    route_port: np.ndarray
    route_vc_lo: np.ndarray
    route_vc_hi: np.ndarray
    vcs_needed: int
    grid: tuple[int, int]
    coords: np.ndarray
    routing: str = ""
    topology: object = field(default=None, repr=False)
    max_throughput: float | None = None
    deadlock_hint: str = ""
    # links[r, p]: parallel links port p of router r is made of (its width[r, p] lanes split
    # evenly among them); read by the "parallel" link model only. None: one link per port.
    links: np.ndarray | None = None

    def link_counts(self) -> np.ndarray:
        """links[r, p] (ones where the network gives none; ports without a link: 1)."""
        if self.links is None:
            return np.ones(self.nbr.shape, np.int32)
        return np.maximum(self.links, 1).astype(np.int32)

    @property
    def routers(self) -> int:
        return self.nbr.shape[0]

    @property
    def ports(self) -> int:
        return self.nbr.shape[1]

    @property
    def vcs(self) -> int:
        """VCs the tables are compiled for (rows of the routing table)."""
        return self.route_port.shape[1]

    @property
    def inject_width(self) -> int:
        return int(self.width[0, LOCAL])

    def hops(self, src: int, dst: int) -> list[tuple[int, int, int]]:
        """(router, output port, output VC lo) of every hop of the table route src -> dst,
        ending with the ejection hop."""
        out, r, row = [], src, 0
        for _ in range(4 * self.routers + 4):
            p = int(self.route_port[r, row, dst])
            lo = int(self.route_vc_lo[r, row, dst])
            if p < 0:
                raise NetworkError(f"{self.name}: no route from {src} to {dst} at router {r} "
                                   f"(input VC {row})")
            out.append((r, p, lo))
            if p == LOCAL:
                return out
            r, row = int(self.nbr[r, p]), lo
        raise NetworkError(f"{self.name}: the route from {src} to {dst} does not end")


def new_links(n: int, ports: int):
    """Empty link arrays (nbr, nbr_port, width, delay, kind) of n routers x ``ports``."""
    nbr = np.full((n, ports), -1, np.int32)
    return nbr, np.full((n, ports), -1, np.int32), np.zeros((n, ports), np.int32), \
        np.zeros((n, ports), np.int32), np.zeros((n, ports), np.int8)


def connect(arrs, a, pa, b, pb, width, delay, kind):
    """A full-duplex link: router a's port pa to router b's port pb."""
    nbr, nport, w, d, k = arrs
    for u, pu, v, pv in ((a, pa, b, pb), (b, pb, a, pa)):
        if nbr[u, pu] != -1:
            raise NetworkError(f"router {u} port {pu} is wired twice")
        nbr[u, pu], nport[u, pu], w[u, pu], d[u, pu], k[u, pu] = v, pv, width, delay, kind


def check_link(width, delay, what):
    check_int(f"{what} width (flits/cycle)", width, 1, 64)
    check_int(f"{what} delay (cycles)", delay, 1, 1000)


def _grid(k: int, wrap: bool, width: int, delay: int, inject: int):
    n = k * k
    arrs = new_links(n, 5)
    for x in range(k):
        for y in range(k):
            c = x * k + y
            if x + 1 < k or wrap and k > 2:
                connect(arrs, c, EAST, (x + 1) % k * k + y, WEST, width, delay, KIND_MESH)
            if y + 1 < k or wrap and k > 2:
                connect(arrs, c, NORTH, x * k + (y + 1) % k, SOUTH, width, delay, KIND_MESH)
    arrs[2][:, LOCAL] = inject
    coords = np.array([(c // k, c % k) for c in range(n)], np.int32)
    return arrs, coords


def _step(a: int, b: int, k: int, wrap: bool) -> tuple[int, bool]:
    """Direction (+1/-1) from coordinate a to b along a ring/line of k, and whether the rest
    of the way in that dimension still crosses the wrap-around link."""
    if not wrap:
        return (1 if b > a else -1), False
    fwd = (b - a) % k
    if fwd <= k - fwd:
        return 1, b < a
    return -1, b > a


def dor_tables(k: int, wrap: bool, vcs: int, dateline: bool = True):
    """Dimension-order (x then y) tables for a k x k mesh or torus. A mesh may use any VC.
    A torus with ``dateline`` splits the VCs into two classes: class 0 (the lower half) while
    the rest of the path in the current dimension still crosses the wrap-around link, class 1
    after it (the dateline rule: no cycle within either class). Without ``dateline`` every VC
    is allowed everywhere, which can deadlock (refused unless forced)."""
    n = k * k
    port = np.zeros((n, vcs, n), np.int8)
    lo = np.zeros((n, vcs, n), np.int8)
    hi = np.full((n, vcs, n), vcs - 1, np.int8)
    half = vcs // 2
    for c in range(n):
        x, y = divmod(c, k)
        for d in range(n):
            dx, dy = divmod(d, k)
            if (x, y) == (dx, dy):
                port[c, :, d] = LOCAL
                lo[c, :, d] = hi[c, :, d] = 0
                continue
            if x != dx:
                s, crosses = _step(x, dx, k, wrap)
                port[c, :, d] = EAST if s > 0 else WEST
            else:
                s, crosses = _step(y, dy, k, wrap)
                port[c, :, d] = NORTH if s > 0 else SOUTH
            if wrap and dateline:
                lo[c, :, d], hi[c, :, d] = (0, half - 1) if crosses else (half, vcs - 1)
    return port, lo, hi


def mesh(k: int, *, vcs: int = 2, width: int = 1, delay: int = 1, inject: int = 1,
         routing: str | None = None) -> Network:
    """k x k 2D mesh, dimension-order routing (deadlock free on one VC); ``routing``: a
    routing registered for ``mesh`` (default: the registry's, ``dor``)."""
    k = check_int("mesh side k", k, 2, 64)
    vcs = check_int("VCs", vcs, 1, 16)
    check_link(width, delay, "link")
    check_int("injection width", inject, 1, 64)
    compile_tables = registry.routing(routing, "mesh").compile
    arrs, coords = _grid(k, False, width, delay, inject)
    tables = compile_tables(k, False, vcs)
    net = Network(f"{k}x{k} mesh", *arrs, *tables, vcs_needed=1, grid=(k, k), coords=coords,
                  routing="DOR")
    net.max_throughput = _mesh_bisection(k, False, width, inject)
    return net


def torus(k: int, *, vcs: int = 2, width: int = 1, delay: int = 1, inject: int = 1,
          dateline: bool | None = None, routing: str | None = None) -> Network:
    """k x k 2D torus, dimension-order routing with dateline VC classes (2 VCs or more).
    One VC (or ``dateline=False``) leaves the rings without a dateline, which can deadlock:
    the simulator refuses it unless forced."""
    k = check_int("torus side k", k, 3, 64)
    vcs = check_int("VCs", vcs, 1, 16)
    check_link(width, delay, "link")
    check_int("injection width", inject, 1, 64)
    compile_tables = registry.routing(routing, "torus").compile
    dateline = vcs >= 2 if dateline is None else bool(dateline)
    if dateline and vcs < 2:
        raise NetworkError("DOR on a torus needs 2 VCs for the dateline, not 1")
    arrs, coords = _grid(k, True, width, delay, inject)
    tables = compile_tables(k, True, vcs, dateline)
    net = Network(f"{k}x{k} torus", *arrs, *tables, vcs_needed=1, grid=(k, k), coords=coords,
                  routing="DOR+dateline" if dateline else "DOR without dateline")
    if not dateline:
        net.deadlock_hint = "DOR on a torus needs 2 VCs (dateline classes) to be deadlock free"
    net.max_throughput = _mesh_bisection(k, True, width, inject)
    return net


def _mesh_bisection(k: int, wrap: bool, width: int, inject: int) -> float:
    """Uniform-random throughput bound (flits/cycle/chip) from the bisection: half the
    traffic of every chip crosses the middle cut, which has k (mesh) or 2k (torus) links of
    ``width`` per direction: rate · N/2 · 1/2 <= links · width."""
    links = (2 if wrap else 1) * k * width
    return min(float(inject), 4.0 * links / (k * k))


@numba.njit(cache=True)
def _channel_loads(nbr, route_port, lo):
    n = nbr.shape[0]
    load = np.zeros(nbr.shape, np.int64)
    for s in range(n):
        for d in range(n):
            if s == d:
                continue
            r, row = s, 0
            for _ in range(4 * n + 4):
                p = route_port[r, row, d]
                if p < 0:
                    break
                load[r, p] += 1
                if p == 0:
                    break
                r, row = nbr[r, p], lo[r, row, d]
    return load


def channel_loads(net: Network) -> np.ndarray:
    """load[r, p]: flits/cycle on output p of router r per flit/cycle/chip of uniform traffic
    (every chip sends 1/(N-1) of its rate to each other chip along its table route), per lane
    of the channel's width (ejection included at port 0)."""
    load = _channel_loads(net.nbr, net.route_port, net.route_vc_lo) / (net.routers - 1)
    return load / np.where(net.width > 0, net.width, 1)


def channel_load_bound(net: Network, kind: int | None = None) -> float:
    """Uniform-traffic throughput bound of ``net``'s tables (flits/cycle/chip): the busiest
    channel, per flit/cycle of its width, bounds the rate (ejection included). ``kind``:
    only channels of that kind (KIND_MESH, KIND_RAIL) count."""
    load = channel_loads(net)
    if kind is not None:
        load = np.where(net.kind == kind, load, 0.0)
    return float(1 / load.max())


# -- deadlock freedom -------------------------------------------------------------------------

@numba.njit(cache=True)
def _dependencies(nbr, nbr_port, route_port, lo, hi):
    """dep[r, p_in, v_in, p_out, v_out]: a packet reaching router r on input (p_in, v_in) may
    request output (p_out, v_out), over the states reachable from every injection."""
    n, vcs, _ = route_port.shape
    ports = nbr.shape[1]
    dep = np.zeros((n, ports, vcs, ports, vcs), np.bool_)
    missing = np.full(3, -1, np.int64)       # a reachable state without a route
    seen = np.zeros((n, ports, vcs), np.bool_)
    stack = np.empty((n * ports * vcs + n, 3), np.int64)
    for d in range(n):
        seen[:] = False
        top = 0
        for s in range(n):
            stack[top, 0], stack[top, 1], stack[top, 2] = s, 0, 0
            top += 1
        while top > 0:
            top -= 1
            r, p, v = stack[top, 0], stack[top, 1], stack[top, 2]
            row = v if p > 0 else 0
            q = route_port[r, row, d]
            if q < 0 and missing[0] < 0:
                missing[0], missing[1], missing[2] = r, v, d
            if q <= 0:
                continue
            for w in range(lo[r, row, d], hi[r, row, d] + 1):
                if p > 0:
                    dep[r, p, v, q, w] = True
                u, pu = nbr[r, q], nbr_port[r, q]
                if not seen[u, pu, w]:
                    seen[u, pu, w] = True
                    stack[top, 0], stack[top, 1], stack[top, 2] = u, pu, w
                    top += 1
    return dep, missing


@numba.njit(cache=True)
def _find_cycle(dep, nbr, nbr_port):
    """A cycle of the channel dependency graph (node = output channel r * P * V + q * V + w)
    as an array of nodes, or an empty array if it is acyclic (Kahn's algorithm, then a walk
    inside what is left)."""
    n, P, V = dep.shape[0], dep.shape[1], dep.shape[2]
    nodes = n * P * V
    idx = np.nonzero(dep)
    m = idx[0].shape[0]
    src = np.empty(m, np.int64)
    dst = np.empty(m, np.int64)
    for e in range(m):
        r, p, v, q, w = idx[0][e], idx[1][e], idx[2][e], idx[3][e], idx[4][e]
        src[e] = (nbr[r, p] * P + nbr_port[r, p]) * V + v
        dst[e] = (r * P + q) * V + w
    order = np.argsort(src)
    src, dst = src[order], dst[order]
    start = np.searchsorted(src, np.arange(nodes + 1))
    indeg = np.zeros(nodes, np.int64)
    for e in range(m):
        indeg[dst[e]] += 1
    stack = np.empty(nodes, np.int64)
    top = 0
    for x in range(nodes):
        if indeg[x] == 0:
            stack[top] = x
            top += 1
    removed = np.zeros(nodes, np.bool_)
    while top > 0:
        top -= 1
        x = stack[top]
        removed[x] = True
        for e in range(start[x], start[x + 1]):
            indeg[dst[e]] -= 1
            if indeg[dst[e]] == 0:
                stack[top] = dst[e]
                top += 1
    left = -1
    for x in range(nodes):
        if not removed[x]:
            left = x
            break
    if left < 0:
        return np.empty(0, np.int64)
    # every node left has a predecessor left; walk backwards until a node repeats
    pred = np.full(nodes, -1, np.int64)
    for e in range(m):
        if not removed[src[e]] and not removed[dst[e]]:
            pred[dst[e]] = src[e]
    seen = np.full(nodes, -1, np.int64)
    x, i = left, 0
    while seen[x] < 0:
        seen[x] = i
        x = pred[x]
        i += 1
    cyc = [x]
    y = pred[x]
    while y != x:
        cyc.append(y)
        y = pred[y]
    out = np.empty(len(cyc), np.int64)
    for j in range(len(cyc)):
        out[j] = cyc[len(cyc) - 1 - j]
    return out


def check_deadlock_free(net: Network, vcs: int) -> list | None:
    """None if the channel dependency graph of ``net``'s tables restricted to ``vcs`` VCs is
    acyclic (Dally & Seitz: deterministic routing is then deadlock free); otherwise one
    dependency cycle as a list of (router, output port, VC) channels. Raises NetworkError if
    a reachable state has no table entry."""
    lo = np.minimum(net.route_vc_lo, vcs - 1)
    hi = np.minimum(net.route_vc_hi, vcs - 1)
    dep, missing = _dependencies(net.nbr, net.nbr_port, net.route_port[:, :vcs],
                                 lo[:, :vcs], hi[:, :vcs])
    if missing[0] >= 0:
        r, v, d = (int(x) for x in missing)
        raise NetworkError(f"{net.name}: a packet for chip {d} can reach router {r} on VC {v}, "
                           f"where the routing table has no entry")
    cyc = _find_cycle(dep, net.nbr, net.nbr_port)
    if not len(cyc):
        return None
    P = net.ports
    return [(int(x) // (P * vcs), int(x) // vcs % P, int(x) % vcs) for x in cyc]


def _build_mesh(k: int = 8, **kw) -> Network:
    return mesh(k, **kw)


def _build_torus(k: int = 8, **kw) -> Network:
    return torus(k, **kw)


def _register() -> None:
    params = {"k", "vcs", "width", "delay", "inject", "routing"}
    registry.register_topology("mesh", _build_mesh, params,
                               doc="k x k 2D mesh, dimension order")
    registry.register_topology("torus", _build_torus, params | {"dateline"},
                               doc="k x k 2D torus, dimension order with dateline VC classes")
    registry.register_routing("dor", dor_tables, topologies=("mesh", "torus"), default=True,
                              doc="dimension order, x then y (dateline VC classes on a torus)")


_register()
