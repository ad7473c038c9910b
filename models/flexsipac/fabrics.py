"""The networks of Flex-SiPAC's evaluation (§6.A.2) as packet-simulator links, routes, and
the all-reduce flows that run on them. Every CU has the same injection bandwidth ``bw``
(bytes/s; the paper normalises to 1,920 Gb/s = 60 wavelengths x 32 Gb/s).

- ``flex-sipac``: SiPAC(r, L) with the wavelengths of :func:`allocation.heuristic` on the
  jobs' Flex-SiPCO traffic: a direct CU pair gets lambda_ij x rate; pairs with no wavelength
  have no link.
- ``sipac``: the static SiPAC, each port's w / L wavelengths dealt as evenly as whole
  wavelengths allow over its r - 1 neighbours (:func:`static_allocation`).
- ``h100-superpod``: the giant-switch abstraction: every CU has one link of ``bw`` to and
  from one non-blocking switch.
- ``sip-ocs``: Q OCSs, each CU one port of bw / Q on each; every OCS realises one circuit per
  CU inside its job. SiP-ML steers circuits with an ILP (maximise the minimum inverse
  completion time); for the uniform mesh traffic of these jobs we use a regular chordal
  ring instead -- OCS q joins each CU to the CU ``offset_q`` places ahead in its job, offsets
  1, 2, 4, ... and their negatives (a stated substitution, not the ILP).
- ``tpuv4``: 4^3-CU blocks wired as 3-D tori (6 links of bw / 6 per CU); a job is laid out as
  a box of CUs (x fastest), whose dimensions that span whole blocks wrap through the OCS
  (extended rings) and whose partial dimensions stay open meshes.

Routes are fewest-hop paths (breadth-first, neighbours in a fixed order), so relaying CUs
forward transit packets as the simulator describes.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from . import allocation, sipco, traffic
from .packetsim import Flow, Link
from .topology import SiPAC

__all__ = ["FABRICS", "build", "flows_for", "Fabric", "static_allocation"]

FABRICS = ("flex-sipac", "sipac", "h100-superpod", "sip-ocs", "tpuv4")
GBPS = 1e9 / 8


class Fabric:
    def __init__(self, name: str, links: dict, cus: int, topo: SiPAC | None = None):
        self.name, self.links, self.cus, self.topo = name, links, cus, topo
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
    per_port = [w // topo.L + (1 if l < w % topo.L else 0) for l in range(topo.L)]
    for x in range(topo.N):
        for l in range(topo.L):
            nb = topo.neighbours(x, l)
            base, extra = divmod(per_port[l], len(nb))
            start = topo.digits(x)[l]            # rotate so the extras spread over receivers
            for q in range(len(nb)):
                lam[x, nb[(q + start) % len(nb)]] = base + (1 if q < extra else 0)
    return lam


def _sipac_links(topo: SiPAC, lam, rate: float, latency: float, buffer: float):
    return {(int(x), int(y)): Link(lam[x, y] * rate, latency, buffer)
            for x, y in np.argwhere(lam > 0)}


def build(name: str, sizes, *, r: int = 8, L: int = 3, w: int = 60, rate_gbps: float = 32,
          latency: float = 100e-9, switch_latency: float = 300e-9, buffer: float = 1 << 20,
          ocs: int | None = None) -> Fabric:
    """The fabric ``name`` for the job mapping ``sizes`` on r^L CUs."""
    if name not in FABRICS:
        raise ValueError(f"fabric must be one of {', '.join(FABRICS)}, not {name!r}")
    topo = SiPAC(r, L)
    jobs = traffic.job_blocks(topo, sizes)
    N = topo.N
    rate = rate_gbps * GBPS
    bw = w * rate
    if name in ("flex-sipac", "sipac"):
        lam = static_allocation(topo, w) if name == "sipac" else \
            allocation.heuristic(topo, traffic.traffic_matrix(topo, sizes, "sipco"), w)
        fab = Fabric(name, _sipac_links(topo, lam, rate, latency, buffer), N, topo)
        fab.lam = lam
        return fab
    links = {}
    if name == "h100-superpod":
        for x in range(N):
            links[(x, "sw")] = Link(bw, switch_latency, buffer)
            links[("sw", x)] = Link(bw, latency, buffer)
        return Fabric(name, links, N)
    if name == "sip-ocs":
        Q = ocs or (16 if N <= 128 else 64)
        for job in jobs:
            s = len(job)
            for off, share in _chords(s, Q):
                for i, x in enumerate(job):
                    links[(x, job[(i + off) % s])] = Link(bw * share, latency, buffer)
        return Fabric(name, links, N)
    # tpuv4: each job a box x*y*z of CUs laid out x fastest
    for job in jobs:
        dims = _box(len(job))
        coord = lambda i: (i % dims[0], (i // dims[0]) % dims[1], i // (dims[0] * dims[1]))
        index = {coord(i): job[i] for i in range(len(job))}
        for i, x in enumerate(job):
            c = coord(i)
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
    return Fabric(name, links, N)


def _chords(s: int, Q: int) -> list[tuple[int, float]]:
    """(offset, share of a CU's bandwidth) of the circuits of a job of ``s`` CUs over ``Q``
    OCSs: every other CU directly when s - 1 <= Q (ports shared evenly), else Q distinct
    offsets -- +-1, +-2, +-4, ... then evenly spaced ones -- of one port each."""
    if s < 2:
        return []
    if s - 1 <= Q:
        return [(o, 1.0 / (s - 1)) for o in range(1, s)]
    offs: list = []
    k = 1
    while k < s and len(offs) < Q:
        for o in (k, s - k):
            if o not in offs and len(offs) < Q:
                offs.append(o)
        k *= 2
    for o in np.linspace(1, s - 1, Q + 2).astype(int)[1:-1]:
        if len(offs) >= Q:
            break
        if int(o) not in offs:
            offs.append(int(o))
    return [(o, 1.0 / Q) for o in offs]


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
