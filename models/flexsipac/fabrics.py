"""The networks of Flex-SiPAC's evaluation (§6.A.2) as packet-simulator links, routes, and
the all-reduce flows that run on them. Every CU has the same injection bandwidth ``bw``
(bytes/s; the paper normalises to 1,920 Gb/s = 60 wavelengths x 32 Gb/s).

- ``flex-sipac``: SiPAC(r, L) with the wavelengths of :func:`allocation.allocate` on the
  jobs' Flex-SiPCO traffic (the paper's heuristic within the splits the transceiver
  realises -- the de-interleaver chain's and, through its front interleaver, the uniform
  one (:data:`FLEX_FORM`) -- coloured from each port's wavelength set, checked jointly): a
  direct CU pair gets lambda_ij x rate; pairs with no wavelength have no link.
- ``sipac``: the static SiPAC, each port's w / L wavelengths dealt as evenly as whole
  wavelengths allow over its r - 1 neighbours (:func:`static_allocation`), on a fixed
  interleaver (:func:`static_sets`), checked the same way.
- ``h100-superpod``: the giant-switch abstraction: every CU has one link of ``bw`` to and
  from one non-blocking switch.
- ``bcube``: the electronic BCube of the testbed (§5.B: "the same connections as the
  Flex-SiPAC but with electrical switches in each level"): SiPAC(r, L)'s wiring with an
  r-port packet switch in place of each WSS. A CU's level-l port is one link of the static
  SiPAC's port bandwidth (its w / L wavelengths, whole ones as :func:`static_allocation`
  deals them) to its level-l switch and one back, which the switch shares among the r - 1
  neighbours packet by packet. Routes are BCube's own (:func:`_bcube_route`: one digit
  corrected per level, level 0 first), so a pair differing in k digits takes 2k links
  through k switches and k - 1 relaying CUs.
- ``sip-ocs``: Q OCSs (Q = 16 up to 128 CUs, else 64), each CU one port of bw / Q on each.
  Every job's circuits are steered by SiP-ML's ILP (:mod:`.sipocs`) for the traffic the paper
  assumes, a mesh all-to-all: the optimum over circulant circuit sets (x_o circuits from
  every CU to the CU o places ahead in its job), certified optimal for every job size of the
  experiments; a CU pair joined by x circuits gets a link of x bw / Q. Routes follow the
  optimum's flow: one path of offsets per destination offset, the same for every source
  (:attr:`sipocs.Steering.paths`), chosen to balance the circuits' loads, its offsets in
  increasing order so that no cycle of credit waits (a deadlock) can form.
- ``tpuv4``: 4^3-CU blocks wired as 3-D tori (6 links of bw / 6 per CU); a job is laid out as
  a box of CUs (x fastest), whose dimensions that span whole blocks wrap through the OCS
  (extended rings) and whose partial dimensions stay open meshes.

Routes are fewest-hop paths (breadth-first, neighbours in a fixed order) except on SiP-OCS,
whose routes come from the steering, on BCube, which corrects digits level by level, and on
TPUv4, which routes in dimension order with a
dateline on each ring (:func:`_torus_route`: fewest-hop breadth-first routes on the rings
deadlock under back-pressure once messages fill the buffers); relaying CUs forward transit
packets as the simulator describes.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache

import numpy as np

from . import allocation, sipco, sipocs, traffic
from .packetsim import Flow, Link
from .topology import SiPAC

__all__ = ["FABRICS", "FLEX_FORM", "build", "flows_for", "Fabric", "port_lines",
           "static_allocation", "static_sets", "wavelength_plan"]

FABRICS = ("flex-sipac", "sipac", "h100-superpod", "sip-ocs", "tpuv4", "bcube")
# Flex-SiPAC's transceiver: the de-interleaver chain with the front interleaver, so that its
# split space holds the uniform split the paper starts from (transceiver.py)
FLEX_FORM = "chain_uniform"
GBPS = 1e9 / 8


class Fabric:
    """Links, and routes: ``router(s, d)`` when given and it returns a path, else fewest-hop
    breadth-first."""

    def __init__(self, name: str, links: dict, cus: int, topo: SiPAC | None = None,
                 router=None):
        self.name, self.links, self.cus, self.topo = name, links, cus, topo
        self.router = router
        self._adj: dict = {}
        for (u, v) in links:
            self._adj.setdefault(u, []).append(v)
        self._routes: dict = {}
        self._paths: dict = {}

    def route(self, s, d) -> tuple:
        key = (s, d)
        got = self._paths.get(key)
        if got is None:
            got = self._paths[key] = self._route(s, d)
        return got

    def _route(self, s, d) -> tuple:
        if s == d:
            raise ValueError("a route needs two different CUs")
        if self.router is not None:
            path = self.router(s, d)
            if path is not None:
                return tuple(path)
        if s not in self._routes:
            prev = {s: None}
            q = deque([s])
            while q:
                u = q.popleft()
                for v in self._adj.get(u, ()):
                    if v not in prev:
                        prev[v] = u
                        q.append(v)
            self._routes[s] = prev
        prev = self._routes[s]
        if d not in prev:
            raise ValueError(f"{self.name}: CU {d} is unreachable from CU {s}")
        path = [d]
        while path[-1] != s:
            path.append(prev[path[-1]])
        return tuple(reversed(path))


def static_allocation(topo: SiPAC, w: int) -> np.ndarray:
    """The static SiPAC's wavelengths: each port's w / L lines (the port count's share,
    extra lines to the lowest ports) dealt to its r - 1 neighbours as evenly as whole
    wavelengths allow, the neighbour a CU's port reaches first getting the extra ones."""
    lam = np.zeros((topo.N, topo.N))
    per_port = port_lines(topo.L, w)
    for x in range(topo.N):
        for l in range(topo.L):
            nb = topo.neighbours(x, l)
            base, extra = divmod(per_port[l], len(nb))
            start = topo.digits(x)[l]            # rotate so the extras spread over receivers
            for q in range(len(nb)):
                lam[x, nb[(q + start) % len(nb)]] = base + (1 if q < extra else 0)
    return lam


def port_lines(L: int, w: int) -> list[int]:
    """A CU's w wavelengths over its L ports as evenly as whole ones allow (the extra lines
    to the lowest ports): the static SiPAC's and the electronic BCube's port bandwidths."""
    return [w // L + (1 if l < w % L else 0) for l in range(L)]


def static_sets(L: int, w: int) -> tuple:
    """The static SiPAC's transceiver: a fixed 1 x L interleaver, wavelength c at port c mod
    L (w / L lines per port, the uniform split)."""
    return tuple(tuple(range(l, w, L)) for l in range(L))


@lru_cache(maxsize=64)
def wavelength_plan(name: str, sizes: tuple, r: int, L: int, w: int) -> dict:
    """The wavelengths of a SiPAC fabric as the hardware emits them, checked jointly
    (:func:`allocation.check_joint`: eq 1, the colouring, every CU's cascade or fixed split,
    every WSS through its controller's checks). Flex-SiPAC: :func:`allocation.allocate` on
    the jobs' Flex-SiPCO traffic (the de-interleaver chain with the front interleaver,
    :data:`FLEX_FORM`); static SiPAC: the static
    allocation on its fixed interleaver (:func:`static_sets`)."""
    topo = SiPAC(r, L)
    if name == "sipac":
        plan = allocation.realise(topo, static_allocation(topo, w), w,
                                  fixed_sets=static_sets(L, w))
    else:
        plan = allocation.allocate(topo, traffic.traffic_matrix(topo, list(sizes), "sipco"), w,
                                   form=FLEX_FORM)
    allocation.check_joint(topo, plan, w)
    return plan


def _sipac_links(topo: SiPAC, lam, rate: float, latency: float, buffer: float):
    return {(int(x), int(y)): Link(lam[x, y] * rate, latency, buffer)
            for x, y in np.argwhere(lam > 0)}


def build(name: str, sizes, *, r: int = 8, L: int = 3, w: int = 60, rate_gbps: float = 32,
          latency: float = 100e-9, switch_latency: float = 300e-9, buffer: float = 1 << 20,
          ocs: int | None = None, realisable: bool = True) -> Fabric:
    """The fabric ``name`` for the job mapping ``sizes`` on r^L CUs. ``realisable=False``
    (an ablation): Flex-SiPAC with eq 1's heuristic by counts, ignoring which splits the
    de-interleaver cascade gives (an allocation the hardware cannot emit)."""
    if name not in FABRICS:
        raise ValueError(f"fabric must be one of {', '.join(FABRICS)}, not {name!r}")
    topo = SiPAC(r, L)
    jobs = traffic.job_blocks(topo, sizes)
    N = topo.N
    rate = rate_gbps * GBPS
    bw = w * rate
    if name in ("flex-sipac", "sipac"):
        if name == "flex-sipac" and not realisable:
            plan = {"lam": allocation.heuristic(topo, traffic.traffic_matrix(topo, sizes,
                                                                             "sipco"), w)}
        else:
            plan = wavelength_plan(name, tuple(sizes), r, L, w)
        lam = plan["lam"]
        fab = Fabric(name, _sipac_links(topo, lam, rate, latency, buffer), N, topo)
        fab.lam, fab.plan = lam, plan
        return fab
    links = {}
    if name == "h100-superpod":
        for x in range(N):
            links[(x, "sw")] = Link(bw, switch_latency, buffer)
            links[("sw", x)] = Link(bw, latency, buffer)
        return Fabric(name, links, N)
    if name == "bcube":
        lines = port_lines(L, w)
        for x in range(N):
            for l in range(L):
                sw = ("sw",) + topo.wss(x, l)
                links[(x, sw)] = Link(lines[l] * rate, switch_latency, buffer)
                links[(sw, x)] = Link(lines[l] * rate, latency, buffer)
        return Fabric(name, links, N, topo, router=lambda a, b: _bcube_route(topo, a, b))
    if name == "sip-ocs":
        Q = ocs or (16 if N <= 128 else 64)
        where, steering = {}, {}
        for j, job in enumerate(jobs):
            s = len(job)
            if s < 2:
                continue
            st = steering[s] = _steering(s, Q)
            for o, count in st.offsets.items():
                for i, x in enumerate(job):
                    links[(x, job[(i + o) % s])] = Link(bw * count / Q, latency, buffer)
            for i, x in enumerate(job):
                where[x] = (j, i)

        def router(a, b):
            if a not in where or b not in where or where[a][0] != where[b][0]:
                return None
            job, i = jobs[where[a][0]], where[a][1]
            path = [a]
            for o in steering[len(job)].paths[(where[b][1] - i) % len(job)]:
                i = (i + o) % len(job)
                path.append(job[i])
            return path

        fab = Fabric(name, links, N, router=router)
        fab.steering, fab.ocs = steering, Q
        return fab
    # tpuv4: each job a box x*y*z of CUs laid out x fastest
    where = {}
    for j, job in enumerate(jobs):
        dims = _box(len(job))
        coord = lambda i: (i % dims[0], (i // dims[0]) % dims[1], i // (dims[0] * dims[1]))
        index = {coord(i): job[i] for i in range(len(job))}
        for i, x in enumerate(job):
            c = coord(i)
            where[x] = (j, c, dims, index)
            for axis in range(3):
                n = dims[axis]
                if n == 1:
                    continue
                wrap = n % 4 == 0 and n >= 4           # whole blocks: torus / extended ring
                for step in (1, -1):
                    cc = list(c)
                    cc[axis] += step
                    if not 0 <= cc[axis] < n:
                        if not wrap:
                            continue
                        cc[axis] %= n
                    y = index[tuple(cc)]
                    if y != x and (x, y) not in links:
                        links[(x, y)] = Link(bw / 6, latency, buffer)

    def router(a, b):
        if where[a][0] != where[b][0]:
            return None
        return _torus_route(where[a][1], where[b][1], where[a][2], where[a][3])

    return Fabric(name, links, N, router=router)


def _bcube_route(topo: SiPAC, src: int, dst: int) -> list:
    """BCube's routing on SiPAC(r, L)'s wiring: from ``src``, correct one differing digit at
    a time, level 0 first, each through that level's switch (``("sw", l, index)``). Levels
    only rise along a route, so no cycle of links can wait on each other under
    back-pressure."""
    path, x = [src], src
    for l, d in enumerate(topo.digits(dst)):
        if topo.digits(x)[l] != d:
            path.append(("sw",) + topo.wss(x, l))
            x = topo.with_digit(x, l, d)
            path.append(x)
    return path


def _torus_route(src, dst, dims, index) -> list:
    """Dimension-order route (x, then y, then z) on a job's box; a dimension that wraps is a
    ring whose wrap link may only be a route's last hop in that dimension (a dateline: no
    cycle of links waiting on each other for buffer space, so back-pressure cannot
    deadlock). The shorter allowed direction, + on a tie; the direction that does not cross
    the wrap is always allowed."""
    c = list(src)
    path = [index[tuple(c)]]
    for axis in range(3):
        n = dims[axis]
        wrap = n % 4 == 0 and n >= 4
        target = dst[axis]
        if c[axis] == target:
            continue
        if wrap:
            fwd = (target - c[axis]) % n
            bwd = n - fwd
            ok_fwd = c[axis] + fwd < n or target == 0
            ok_bwd = c[axis] - bwd >= 0 or target == n - 1
            step = 1 if ok_fwd and (fwd <= bwd or not ok_bwd) else -1
        else:
            step = 1 if target > c[axis] else -1
        while c[axis] != target:
            c[axis] = (c[axis] + step) % n
            path.append(index[tuple(c)])
    return path


@lru_cache(maxsize=None)
def _steering(s: int, Q: int) -> sipocs.Steering:
    """SiP-ML's steering of a job of ``s`` CUs with mesh (uniform all-to-all) traffic."""
    return sipocs.steer(np.ones((s, s)) - np.eye(s), Q)


def _box(s: int) -> tuple[int, int, int]:
    """The most cube-like x <= y <= z box of s CUs (powers of two: 64 -> 4 x 4 x 4)."""
    best = None
    for x in range(1, s + 1):
        if s % x:
            continue
        for y in range(x, s // x + 1):
            if (s // x) % y:
                continue
            z = s // (x * y)
            if z < y:
                continue
            key = (z - x, z)
            if best is None or key < best[0]:
                best = (key, (x, y, z))
    return best[1]


def flows_for(fabric: Fabric, sizes, algorithm: str, message: float) -> list[Flow]:
    """The all-reduce of ``message`` bytes in every job as flows: ``"mesh"`` (M) or
    ``"sipco"`` (F, Flex-SiPAC and SiPAC only)."""
    if algorithm not in ("mesh", "sipco"):
        raise ValueError(f"algorithm must be 'mesh' or 'sipco', not {algorithm!r}")
    if algorithm == "sipco" and fabric.topo is None:
        raise ValueError(f"Flex-SiPCO runs on SiPAC fabrics, not {fabric.name}")
    topo = fabric.topo or SiPAC(2, max(1, int(np.ceil(np.log2(fabric.cus)))))
    out = []
    for j, job in enumerate(traffic.job_blocks(topo, sizes)):
        if len(job) < 2:
            continue
        if algorithm == "mesh":          # sipco.mesh_schedule's transfers, built directly
            part = message / len(job)
            for step in (0, 1):
                out += [Flow(j, step, fabric.route(x, y), part) for x in job for y in job
                        if x != y]
            continue
        make = sipco.sipco_schedule
        merged: dict = {}
        for t in make(topo, job, message):
            key = (t.step, t.src, t.dst)
            merged[key] = merged.get(key, 0.0) + t.size
        for (step, s, d), size in merged.items():
            out.append(Flow(j, step, fabric.route(s, d), size))
    return out
