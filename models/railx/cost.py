"""Parts-based network cost (RailX §6.2, Table 3, Appendix A.7 Table 6).

Every chip has 36 x 400G ports. Parts and prices (§6.2): 64-port 400G packet switch or
128-port OCS $35K (an OCS has twice the ports of a packet switch at the same cost), 400G
active optical transceiver (AOT) $1,000 (one per optical link end, i.e. per chip, switch or
OCS-facing port), 400G passive copper cable (PCC) $250; on-package / PCB connectivity is free.

Each topology below counts its parts from its structure; :func:`table6` returns the twelve
rows of Table 6 with cost (M$), cost per injection bandwidth and cost per global bandwidth
normalised to the 2-tier non-blocking fat tree, and global bandwidth = bisection bandwidth /
half the injection bandwidth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aifabric.models.common.clos import min_tier_clos

__all__ = ["Parts", "Prices", "CostRow", "fat_tree", "tapered_fat_tree", "hammingmesh",
           "torus_3d", "rail_only_2d", "railx_mesh", "railx_bisection_ratio", "table6", "PORTS"]

PORTS = 36   # 400G ports per chip (1.8 TB/s)


@dataclass(frozen=True)
class Prices:
    switch: float = 35_000.0     # 64-port 400G packet switch
    ocs: float = 35_000.0        # 128-port OCS
    aot: float = 1_000.0         # 400G active optical transceiver
    pcc: float = 250.0           # 400G passive copper cable
    switch_radix: int = 64
    ocs_radix: int = 128


@dataclass(frozen=True)
class Parts:
    chips: int
    switches: int = 0
    ocs: int = 0
    pcc: int = 0
    aot: int = 0
    global_bw: float = 1.0   # bisection / (N/2 · 36 ports), 1.0 = non-blocking

    def cost(self, prices: Prices = Prices()) -> float:
        return (self.switches * prices.switch + self.ocs * prices.ocs + self.aot * prices.aot
                + self.pcc * prices.pcc)


def _int(name: str, value, low: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, not {value!r}")
    return value


def fat_tree(chips: int, tiers: int, radix: int = 64) -> Parts:
    """Non-blocking fat tree per port plane (36 planes): tiers-1 levels of radix/2-down
    switches and a top level of all-down switches; one link per chip and level
    (:func:`models.common.clos.min_tier_clos` with the tier count fixed)."""
    _int("tiers", tiers, 2)
    plane = min_tier_clos(_int("chips", chips), radix, tiers)
    return Parts(chips, switches=PORTS * plane.switches, aot=PORTS * plane.transceivers,
                 global_bw=1.0)


def tapered_fat_tree(chips: int, downs: tuple[int, ...], radix: int = 64) -> Parts:
    """Fat tree with over-subscribed levels: level i switches have downs[i] down ports and
    radix - downs[i] up ports; the top level is all-down. 1:3 two-tier: downs = (48,);
    1:7:49 three-tier: downs = (56, 56)."""
    _int("chips", chips)
    per_plane, links, ports = 0, 0, chips
    ratio = 1.0
    for d in downs:
        up = radix - d
        switches = math.ceil(ports / d)
        per_plane += switches
        links += ports
        ports = switches * up
        ratio *= up / d
    per_plane += math.ceil(ports / radix)
    links += ports
    return Parts(chips, switches=PORTS * per_plane, aot=2 * PORTS * links, global_bw=ratio)


def hammingmesh(a: int, boards_per_side: int, tiers: int, radix: int = 64) -> Parts:
    """HxaMesh (Hoefler et al.): a x a chip boards on a G x G board grid; 9 port planes x 4
    board edges; each board row (column), chip row and plane is joined by a fat tree over the
    2G east/west board ports (1 tier: one switch, 2G <= radix; 2 tiers: 2G/(radix/2) leaves
    and 2G/radix spines)."""
    _int("a", a)
    G = _int("boards_per_side", boards_per_side)
    planes = PORTS // 4
    ends = 2 * G
    if tiers == 1:
        if ends > radix:
            raise ValueError(f"one switch of radix {radix} joins at most {radix // 2} boards")
        switches, links = 1, ends
    elif tiers == 2:
        leaves = math.ceil(ends / (radix // 2))
        switches, links = leaves + math.ceil(leaves * (radix // 2) / radix), 2 * ends
    else:
        raise ValueError(f"tiers must be 1 or 2, not {tiers!r}")
    networks = 2 * G * a * planes
    return Parts((G * a) ** 2, switches=networks * switches, aot=2 * networks * links,
                 global_bw=1 / (2 * a))


def torus_3d(side: int = 16, cube: int = 4, board: int = 2, ocs: bool = True,
             ocs_radix: int = 128) -> Parts:
    """3D torus of side³ chips from cube³ cubes of board x board x 1 PCB boards (TPUv4), six
    ports per direction: PCCs between boards inside a cube, one AOT per cube-face port, and
    (``ocs``) the face ports through 128-port OCSes instead of direct fibres."""
    for name, v in (("side", side), ("cube", cube), ("board", board)):
        _int(name, v)
    if side % cube or cube % board:
        raise ValueError(f"side {side} must be a multiple of cube {cube}, cube of board {board}")
    per_dir = PORTS // 6
    cubes = (side // cube) ** 3
    pairs = 3 * cube ** 2 * (cube - 1)                 # neighbour pairs inside a cube
    on_board = (cube // board) ** 2 * cube * 2 * board * (board - 1)
    pcc = cubes * (pairs - on_board) * per_dir
    face_ports = cubes * 6 * cube ** 2 * per_dir
    bisection = 2 * side ** 2 * per_dir
    return Parts(side ** 3, ocs=math.ceil(face_ports / ocs_radix) if ocs else 0, pcc=pcc,
                 aot=face_ports, global_bw=bisection / (side ** 3 / 2 * PORTS))


def rail_only_2d(side: int = 64, radix: int = 64) -> Parts:
    """2D fat tree (Rail-only with two rail dimensions, 18 rails each): every row and column
    of ``side`` chips and every rail has one radix-port switch."""
    if _int("side", side) > radix:
        raise ValueError(f"a row of {side} chips does not fit a {radix}-port switch")
    rails = PORTS // 2
    switches = 2 * side * rails
    return Parts(side * side, switches=switches, aot=2 * switches * side, global_bw=0.5)


def railx_mesh(m: int, n: int = 9, R: int = 128) -> Parts:
    """RailX with m x m chips per node (n ports per chip edge, OCS radix R): N = (R/2)²m²
    chips, r·R OCSes, one AOT per node rail port (4r per node); global bandwidth as the paper
    counts it: Table 2's all-to-all throughput 2n/m (HyperX / Dragonfly) over the 4n ports of
    injection (see :func:`railx_bisection_ratio` for the other rows' convention)."""
    _int("m", m)
    _int("n", n)
    r = m * n
    nodes = (R // 2) ** 2
    return Parts(nodes * m * m, ocs=r * R, aot=nodes * 4 * r, global_bw=(2 * n / m) / (4 * n))


def railx_bisection_ratio(m: int, n: int) -> float:
    """One direction of a maximum 2D-HyperX's bisection over half the injection bandwidth,
    the convention of the other Table 6 rows: per node row (r+1)²/4 pairs, 2 links each, over
    (r+1)/2 nodes x m² chips x 4n ports: (r+1)/(4·m·r), about 1/(4m). The paper's RailX rows use
    Table 2's 2n/m instead, which counts both directions (TX+RX): twice this."""
    r = m * n
    return (r + 1) / (4 * m * r)


@dataclass(frozen=True)
class CostRow:
    name: str
    parts: Parts
    cost: float            # $
    per_inject: float      # cost per injection bandwidth, relative to the 2-tier FT
    global_pct: float      # global bandwidth, % of injection
    per_global: float      # cost per global bandwidth, relative to the 2-tier FT


def table6(prices: Prices = Prices()) -> list[CostRow]:
    """The twelve rows of Table 6. Upper part: each topology at its maximum (or original)
    scale with 64-port switches / 128-port OCSes; lower part: at the scale of RailX7Mesh."""
    radix = prices.switch_radix
    rx7 = railx_mesh(7)
    target = rx7.chips
    pod = (radix // 2) ** 3 * 2                               # 3-tier non-blocking pod
    rows = [
        ("2-Tier Nonbl. FT", fat_tree(2 * (radix // 2) ** 2, 2, radix)),
        ("1:3 Tap. 2-Tier FT", tapered_fat_tree(radix * (3 * radix // 4), (3 * radix // 4,),
                                                radix)),
        ("Hx4Mesh (1-Tier FT)", hammingmesh(4, radix // 2, 1, radix)),
        ("Hx7Mesh (1-Tier FT)", hammingmesh(7, radix // 2, 1, radix)),
        ("3D-Torus w/ OCS", torus_3d(ocs=True, ocs_radix=prices.ocs_radix)),
        ("3D Torus w/o OCS", torus_3d(ocs=False)),
        ("Rail-Only (2D FT)", rail_only_2d(radix, radix)),
        ("RailX4Mesh", railx_mesh(4)),
        ("RailX7Mesh", rx7),
        ("4-Tier Nonbl. FT", fat_tree(target // pod * pod, 4, radix)),
        ("1:7:49 Tap. 3-Tier FT", tapered_fat_tree(target, (7 * radix // 8, 7 * radix // 8),
                                                   radix)),
        ("Hx7Mesh (2-Tier FT)", hammingmesh(7, math.isqrt(target) // 7, 2, radix)),
    ]
    base = rows[0][1]
    base_per_chip = base.cost(prices) / base.chips
    out = []
    for name, parts in rows:
        cost = parts.cost(prices)
        per_inject = cost / parts.chips / base_per_chip
        out.append(CostRow(name, parts, cost, per_inject, 100 * parts.global_bw,
                           per_inject / parts.global_bw))
    return out
