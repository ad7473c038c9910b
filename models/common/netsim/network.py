"""Networks for the cycle-level simulator: routers, ports, links and routing tables.

A :class:`Network` is plain arrays, the form both the reference step and the compiled kernel
read. Router ``r`` is chip ``r``. Every router has ``ports`` ports (unconnected ones have
``nbr == -1``), numbered the same way everywhere:

====  ===========================================================================
0     local: injection (input) and ejection (output)
1..4  mesh: 1 = +x (east), 2 = -x (west), 3 = +y (north), 4 = -y (south)
5..   optical rail links of a RailX chip, in :attr:`Topology.links` order
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
too. Tables are compiled from the routing functions (:func:`dor_tables`,
:func:`railx_tables`) and checked for deadlock freedom on their channel dependency graph
(:func:`check_deadlock_free`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

__all__ = ["Network", "mesh", "torus", "railx", "NetworkError", "check_deadlock_free",
           "channel_load_bound",
           "LOCAL", "EAST", "WEST", "NORTH", "SOUTH", "FIRST_RAIL"]

LOCAL, EAST, WEST, NORTH, SOUTH, FIRST_RAIL = 0, 1, 2, 3, 4, 5
KIND_NONE, KIND_MESH, KIND_RAIL = 0, 1, 2


class NetworkError(ValueError):
    """A network, routing function or parameter that cannot be simulated as asked."""


def _int(name: str, value, low: int, high: int | None = None) -> int:
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


def _links(n: int, ports: int):
    nbr = np.full((n, ports), -1, np.int32)
    return nbr, np.full((n, ports), -1, np.int32), np.zeros((n, ports), np.int32), \
        np.zeros((n, ports), np.int32), np.zeros((n, ports), np.int8)


def _connect(arrs, a, pa, b, pb, width, delay, kind):
    nbr, nport, w, d, k = arrs
    for u, pu, v, pv in ((a, pa, b, pb), (b, pb, a, pa)):
        if nbr[u, pu] != -1:
            raise NetworkError(f"router {u} port {pu} is wired twice")
        nbr[u, pu], nport[u, pu], w[u, pu], d[u, pu], k[u, pu] = v, pv, width, delay, kind


def _check_link(width, delay, what):
    _int(f"{what} width (flits/cycle)", width, 1, 64)
    _int(f"{what} delay (cycles)", delay, 1, 1000)


def _grid(k: int, wrap: bool, width: int, delay: int, inject: int):
    n = k * k
    arrs = _links(n, 5)
    for x in range(k):
        for y in range(k):
            c = x * k + y
            if x + 1 < k or wrap and k > 2:
                _connect(arrs, c, EAST, (x + 1) % k * k + y, WEST, width, delay, KIND_MESH)
            if y + 1 < k or wrap and k > 2:
                _connect(arrs, c, NORTH, x * k + (y + 1) % k, SOUTH, width, delay, KIND_MESH)
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


def mesh(k: int, *, vcs: int = 2, width: int = 1, delay: int = 1, inject: int = 1
         ) -> Network:
    """k x k 2D mesh, dimension-order routing (deadlock free on one VC)."""
    k = _int("mesh side k", k, 2, 64)
    vcs = _int("VCs", vcs, 1, 16)
    _check_link(width, delay, "link")
    _int("injection width", inject, 1, 64)
    arrs, coords = _grid(k, False, width, delay, inject)
    tables = dor_tables(k, False, vcs)
    net = Network(f"{k}x{k} mesh", *arrs, *tables, vcs_needed=1, grid=(k, k), coords=coords,
                  routing="DOR")
    net.max_throughput = _mesh_bisection(k, False, width, inject)
    return net


def torus(k: int, *, vcs: int = 2, width: int = 1, delay: int = 1, inject: int = 1,
          dateline: bool | None = None) -> Network:
    """k x k 2D torus, dimension-order routing with dateline VC classes (2 VCs or more).
    One VC (or ``dateline=False``) leaves the rings without a dateline, which can deadlock:
    the simulator refuses it unless forced."""
    k = _int("torus side k", k, 3, 64)
    vcs = _int("VCs", vcs, 1, 16)
    _check_link(width, delay, "link")
    _int("injection width", inject, 1, 64)
    dateline = vcs >= 2 if dateline is None else bool(dateline)
    if dateline and vcs < 2:
        raise NetworkError("DOR on a torus needs 2 VCs for the dateline, not 1")
    arrs, coords = _grid(k, True, width, delay, inject)
    tables = dor_tables(k, True, vcs, dateline)
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


def railx(topo, *, vcs: int | None = None, routing: str = "minimal", mesh_width: int = 2,
          mesh_delay: int = 1, rail_width: int = 1, rail_delay: int = 10,
          inject: int | None = None) -> Network:
    """The chip-level network of a :class:`models.railx.Topology`: every chip a router, the
    on-package mesh on ports 1..4 (``mesh_width`` flits/cycle, ``mesh_delay`` cycles; Table 5:
    k and 1), the chip's rail links on ports 5.. (Table 5: 1 flit/cycle, 10 cycles). Tables
    from :class:`models.railx.MinimalRouting`: Algorithm 1's VCs on a 2D-HyperX
    (``routing="minimal"``), one VC per node hop on the others. ``inject`` (default: the
    chip's 4n ports) is the injection and ejection width."""
    from models.railx.routing import MinimalRouting
    sysm = topo.system
    _check_link(mesh_width, mesh_delay, "mesh link")
    _check_link(rail_width, rail_delay, "rail link")
    inject = sysm.ports_per_chip if inject is None else _int("injection width", inject, 1, 64)
    if routing != "minimal":
        raise NetworkError(f"routing must be 'minimal' (Algorithm 1 and its generalisation), "
                           f"not {routing!r}")
    hyperx = len(topo.dims) == 2 and all(len(d) == 1 and d[0].kind == "alltoall"
                                         for d in topo.dims)
    rt = MinimalRouting(topo, vcs="algorithm1" if hyperx else "hops")
    vcs = rt.num_vcs if vcs is None else _int("VCs", vcs, 1, 64)
    if vcs < rt.num_vcs or vcs % rt.num_vcs:
        raise NetworkError(f"{topo.name}: {rt.vcs!r} routing needs {rt.num_vcs} VC classes, "
                           f"so VCs must be a multiple of {rt.num_vcs}, not {vcs}")
    n = topo.num_chips
    rails = {}
    for i, ln in enumerate(topo.links):
        if ln.kind == "optical":
            rails.setdefault(ln.u, []).append(i)
            rails.setdefault(ln.v, []).append(i)
    ports = FIRST_RAIL + max((len(v) for v in rails.values()), default=0)
    arrs = _links(n, ports)
    link_port = {}
    m = sysm.m
    for c in range(n):
        X, Y, x, y = topo.chip_coords(c)
        if x + 1 < m:
            _connect(arrs, c, EAST, topo.chip_id(X, Y, x + 1, y), WEST, mesh_width, mesh_delay,
                     KIND_MESH)
        if y + 1 < m:
            _connect(arrs, c, NORTH, topo.chip_id(X, Y, x, y + 1), SOUTH, mesh_width,
                     mesh_delay, KIND_MESH)
    for c, idx in rails.items():
        for j, i in enumerate(sorted(idx)):
            link_port[(i, c)] = FIRST_RAIL + j
    for i, ln in enumerate(topo.links):
        if ln.kind == "optical":
            _connect(arrs, ln.u, link_port[(i, ln.u)], ln.v, link_port[(i, ln.v)], rail_width,
                     rail_delay, KIND_RAIL)
    arrs[2][:, LOCAL] = inject
    coords = np.array([(X * m + x, Y * m + y) for X, Y, x, y in
                       (topo.chip_coords(c) for c in range(n))], np.int32)
    tables = _railx_tables(topo, rt, vcs, link_port)
    net = Network(f"RailX {topo.name} (m={m}, n={sysm.n})", *arrs, *tables,
                  vcs_needed=rt.num_vcs, grid=(topo.nodes[0] * m, topo.nodes[1] * m),
                  coords=coords, routing=f"minimal ({rt.vcs} VCs)", topology=topo)
    net.max_throughput = topo.all_to_all_throughput() * rail_width
    return net


def _railx_tables(topo, rt, vcs: int, link_port: dict):
    """Tables equal to ``rt.route``: inside the destination node dimension-order mesh
    routing; elsewhere mesh routing towards the nearest chip with a link to the next node of
    the dimension-ordered shortest path, then that link (see models.railx.routing).
    The routing's VC *classes* each get vcs / rt.num_vcs consecutive VCs (any of them)."""
    n, m = topo.num_chips, topo.system.m
    per = m * m
    width = vcs // rt.num_vcs
    port = np.full((n, vcs, n), -1, np.int8)
    cls = np.zeros((n, vcs, n), np.int16)
    rows = np.arange(vcs) // width                      # class of the input VC
    algo1 = rt.vcs == "algorithm1"

    def mesh_port(a, b):
        _, _, x, y = topo.chip_coords(a)
        _, _, x1, y1 = topo.chip_coords(b)
        if x != x1:
            return EAST if x1 > x else WEST
        return NORTH if y1 > y else SOUTH

    for c in range(n):
        here = topo.node_of(c)
        base = c - c % per
        for d in range(base, base + per):                 # destination in this node
            port[c, :, d] = LOCAL if d == c else mesh_port(c, d)
            cls[c, :, d] = 0 if d == c else (2 if algo1 else rows)
        for gx in range(topo.nodes[0]):
            for gy in range(topo.nodes[1]):
                goal = (gx, gy)
                if goal == here:
                    continue
                nxt = rt.next_node(here, goal)
                link, local, _ = rt.exit_link(c, nxt)
                optical = c == local
                p = link_port[(link, c)] if optical else mesh_port(c, local)
                if algo1:
                    k = (1 if nxt[0] != here[0] else 2) if optical else \
                        rt._phase_vc(here, goal)
                else:
                    k = rows + 1 if optical else rows
                g0 = topo.chip_id(gx, gy, 0, 0)
                port[c, :, g0:g0 + per] = p
                cls[c, :, g0:g0 + per] = np.broadcast_to(np.asarray(k).reshape(-1, 1)
                                                         if np.ndim(k) else k, (vcs, per))
    lo = cls * width
    bad = (lo >= vcs) & (port > LOCAL)
    port[bad] = -1                                        # class beyond the last: unreachable
    lo[port == LOCAL] = 0
    lo = np.minimum(lo, vcs - 1).astype(np.int8)
    hi = np.where(port == LOCAL, 0, np.minimum(lo + width - 1, vcs - 1)).astype(np.int8)
    return port, lo, hi


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


def channel_load_bound(net: Network) -> float:
    """Uniform-traffic throughput bound of ``net``'s tables (flits/cycle/chip): every chip
    sends 1/(N-1) of its rate to each other chip along its table route; the busiest channel,
    per flit/cycle of its width, bounds the rate (ejection included)."""
    load = _channel_loads(net.nbr, net.route_port, net.route_vc_lo) / (net.routers - 1)
    width = np.where(net.width > 0, net.width, 1)
    return float(1 / (load / width).max())


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
