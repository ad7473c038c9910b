"""Light between the OCS transceivers of an InfiniteHBD line or ring, for closed-loop tests
of the transceiver controllers (``models.infinitehbd.ocstrx.OCSTrx`` or the RTL).

Every healthy node has one controller per bundle of the wiring table
(:func:`models.infinitehbd.topology.wiring`), each with two lane groups (group 0 the upper
GPU track, group 1 the lower). What a photodetector sees:

- external path p of bundle b at node n (wired to ``(side, d)``): the fibre to the far end
  ``n + d`` (E) or ``n - d`` (W), whose bundle b' serves ``(other side, d)`` on path p'.
  Lit when the far node is alive, its group (same track) selects p' and is not SETTLING
  (its MZIs have settled): both ends select the same fibre.
- the loopback (path 3): the light crosses the bundle's own matrix; lit when the matrix is
  READY (settled) on the joining permutation (lane i -> i + N/2).

A dead node's controllers stop and its fibres go dark. :class:`RingPlant` steps every
controller one clock at a time, the photodetectors computed from the outputs of that
cycle.
"""

from __future__ import annotations

from .ocstrx import LOOP_PATH, join_perm
from .topology import HBD, wiring

__all__ = ["RingPlant", "SETTLING", "UP", "FAULT"]

SETTLING, UP, FAULT = 1, 3, 4
READY = 2


class RingPlant:
    """``controllers[(node, bundle)]``: objects with ``outputs()`` (a dict with ``path``,
    ``link``, ``mstate``, ``perm``) and ``edge(cmd, pd)`` (taking ``cmd`` when ready:
    returns non-None then). ``queues[(node, bundle)]``: commands still to offer."""

    def __init__(self, hbd: HBD, make, lanes: int = 8) -> None:
        self.hbd, self.lanes = hbd, lanes
        self.table = wiring(hbd.K)
        self.join = join_perm(lanes)
        self.controllers = {(n, b): make(n, b) for n in range(hbd.nodes)
                            for b in range(len(self.table.bundles))}
        self.queues = {key: [] for key in self.controllers}
        self.dead: set = set()
        self.t = 0

    def send(self, node: int, bundle: int, cmds) -> None:
        self.queues[(node, bundle)].extend(cmds)

    def kill(self, node: int) -> None:
        self.dead.add(node)

    def light(self, outs: dict) -> dict:
        """The photodetectors of every live controller, ``[[p1, p2, loop] per group]``."""
        hbd, table = self.hbd, self.table
        pds = {}
        for (n, b), o in outs.items():
            rows = []
            for g in range(len(o["path"])):
                row = []
                for p, end in enumerate(table.bundles[b], 1):
                    lit = False
                    if end is not None:
                        side, d = end
                        v = hbd.neighbour(n, d if side == "E" else -d)
                        if v is not None and v not in self.dead:
                            fb, fp = table.path_of("W" if side == "E" else "E", d)
                            far = outs[(v, fb)]
                            lit = far["path"][g] == fp and far["link"][g] != SETTLING
                    row.append(lit)
                row.append(o["mstate"] == READY and list(o["perm"]) == self.join)
                rows.append(row)
            pds[(n, b)] = rows
        return pds

    def outputs(self) -> dict:
        return {key: c.outputs() for key, c in self.controllers.items()
                if key[0] not in self.dead}

    def step(self) -> dict:
        """One clock; returns the outputs of the cycle stepped."""
        outs = self.outputs()
        pds = self.light(outs)
        for key, pd in pds.items():
            q = self.queues[key]
            if self.controllers[key].edge(q[0] if q else None, pd) is not None and q:
                q.pop(0)
        self.t += 1
        return outs

    def quiet(self) -> bool:
        """No command waiting and no controller busy."""
        return all(not self.queues[k] for k in self.controllers if k[0] not in self.dead) \
            and not any(o["busy"] for o in self.outputs().values())

    def run_until_quiet(self, limit: int) -> int:
        """Step until :meth:`quiet` (at most ``limit`` cycles); returns the cycles."""
        start = self.t
        while not self.quiet():
            if self.t - start >= limit:
                raise AssertionError(f"not quiet after {limit} cycles")
            self.step()
        return self.t - start

    def state_of(self, node: int, side: str) -> tuple:
        """(path of group 0, path of group 1), links and the hop distance or "loop" the side
        of ``node`` selects (None when its groups disagree or select an unwired path)."""
        res = []
        for b in self.table.bundles_of(side):
            o = self.controllers[(node, b)].outputs()
            for g in range(len(o["path"])):
                p = o["path"][g]
                if p == LOOP_PATH:
                    res.append((b, "loop", o["link"][g]))
                else:
                    end = self.table.bundles[b][p - 1]
                    res.append((b, end[1] if end and end[0] == side else None, o["link"][g]))
        return res
