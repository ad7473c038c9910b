"""The OCS transceiver (OCSTrx, InfiniteHBD §4.1, Fig 3) and its controller, as behaviour.

Optics
======
Each *lane group* of the transceiver (the upper and the lower SerDes half of a bundle: one
GPU each) has two MZI elements on its Tx path: ``A`` sends the light out (1) or into the
internal loopback (0); ``B`` picks external path 1 (0) or 2 (1). Paths: 1 = external 1
(A = 1, B = 0), 2 = external 2 (A = 1, B = 1), 3 = internal loopback (A = 0, B = 0). The
loopback light of the N lanes crosses an N x N MZI matrix, a Benes network of 2 x 2 MZI
elements (N = 2^k lanes, 2k - 1 stages of N / 2 elements; 0 = bar, 1 = cross), so any lane
permutation is a setting:

- N = 2: one element.
- N > 2: a first column of N / 2 elements (element j takes lanes 2j and 2j + 1; its upper
  output feeds input j of the upper N / 2 sub-network, its lower output input j of the lower
  one), the two sub-networks, and a last column (element j takes output j of the upper and of
  the lower sub-network and drives lanes 2j and 2j + 1).
- Element numbering: stage-major, ``s * N/2 + j``; in an inner stage the upper sub-network's
  elements come first. Of all the transceiver's elements, the path elements come first
  (group g: ``A`` = 2g, ``B`` = 2g + 1), then the matrix (``2G + s * N/2 + j``).

:func:`benes_route` is the control-plane routine (the looping algorithm) that finds element
states for a permutation; :func:`benes_trace` follows the light through the elements and
returns the permutation a setting realises.

Controller (the contract ``rtl/optics/ocstrx.py`` implements)
=============================================================
Commands (:class:`Command`) arrive on a stream and are taken only while the controller is
idle (no group settling or checking, the matrix not settling), no failover waits, and not in
reset (``ready``); a command is checked in the cycle it is taken and either applied whole or
rejected whole, setting one sticky error bit:

=====  =============  ===========================================================
op     command        checks (error bit)
=====  =============  ===========================================================
1      SET_PATH       group < G, and 0 when ``every`` (GROUP); path in 1..3, backup in
                      0..3, backup != path (PATH). ``every`` = 1: all groups at once
2      LOAD_PERM      a permutation of the lanes (PERM); the states realise it (STATES)
3      WRITE_CAL      element < E (ELEMENT)
4      SET_TIMING     which in 0..2 (settle, debounce, window), value >= 1, and the window
                      never below the debounce (a link could never come up) (TIMING)
5      CLEAR          clears the sticky error bits
6      ARM            ``mask``: bit g arms group g (1) or holds it (0); no bit at or above
                      G (GROUP)
other                 (OPCODE)
=====  =============  ===========================================================

Order of events after an accepted SET_PATH taken in cycle t (``settle`` S, ``debounce`` D,
``window`` W as set):

1. t + 1: the group's (``every``: each group's) path, backup and MZI states are the new ones, the heater codes follow
   (``cal[e][state]``), its link is SETTLING, ``reconfigs`` + 1, ``cause`` 0, ``failover`` 0.
   A SET_PATH to the path a group has UP (in the cycle it is taken) only replaces its
   backup: no settle (should the light monitor fault the link in that same cycle, the FAULT
   stands).
2. t + 1 .. t + S: SETTLING (exactly S cycles). Then CHECKING: in each checking cycle the
   photodetector of the active Rx path is sampled; after D consecutive lit samples the link
   is UP in the next cycle; if W samples pass first it is FAULT (cause 1, no light). So UP
   comes in cycle t + S + D + 1 with light throughout, and FAULT by t + S + W + 1 without.
3. While UP, D consecutive dark samples make it FAULT (cause 2, light lost); this is watched
   in every group at once, also while another group reconfigures. A group on the loopback
   path is not watched while the matrix settles (its light crosses the matrix); when the
   matrix is READY again every loopback group that was UP or FAULT is checked again (as in
   2, from CHECKING).
4. Every armed group in FAULT with a backup path fails over in the next cycle, all such
   groups together (each has its own timers: a bundle whose groups lose light together comes
   back in one settle): path := backup, backup := 0 (a failover is used once), failover :=
   1, SETTLING, reconfigs + 1; then as 2. A held group (ARM bit 0, for a planned change at
   the far end) still reports FAULT but does not fail over until it is armed again.

Bundle failover latency: light lost in cycle t0 (first dark sample) -> FAULT in t0 + D ->
SETTLING on the backup in t0 + D + 1 -> UP in t0 + 2D + S + 1 when the backup is lit (both
groups of the bundle in the same cycles). At 100 MHz with S = 100,000 (1 ms) and D = 8 that
is 1 ms + 17 cycles = 1.00017 ms, one settle for the whole bundle.

LOAD_PERM sets the matrix states, SETTLING for S cycles, then the matrix is READY. WRITE_CAL
of the code an element is driven with now (its state is the written one) changes a live
heater: the element settles (a path element: its group settles and is checked again as in 2;
a matrix element: the matrix settles as after LOAD_PERM); a write of the other state's code
acts at once. SET_TIMING, ARM and CLEAR act at once and keep the controller idle.

Reset (there is one reset, and it is cold): every group on the loopback path, DOWN, no
backup, armed; the matrix all bar (the identity) and IDLE; ``cal[e] = (0, 2^(H-1))``;
settle = the parameter, debounce 8, window 1,000 (each clipped to the timer width); errors
and counters 0. So a reset tears down every circuit the transceiver carries: the system
must re-issue its configuration (``ring_commands``) after one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..common.controller import check_ranges, check_settle

__all__ = ["Op", "LOOP_PATH", "PATH_ELEMENTS", "LINK", "ERRORS", "Command", "OCSTrx",
           "benes_size", "benes_route", "benes_trace", "element_count", "path_states",
           "join_perm", "trx_commands", "ring_backups", "ring_commands", "check_params"]

LOOP_PATH = 3
PATH_ELEMENTS = {1: (1, 0), 2: (1, 1), 3: (0, 0)}       # path -> (A, B)
LINK = ("DOWN", "SETTLING", "CHECKING", "UP", "FAULT")
ERRORS = ("OPCODE", "GROUP", "PATH", "PERM", "STATES", "ELEMENT", "TIMING")


class Op(enum.IntEnum):
    """The command codes (``op``); the RTL's own enumeration must match it
    (``tests/rtl/optics``)."""
    SET_PATH = 1
    LOAD_PERM = 2
    WRITE_CAL = 3
    SET_TIMING = 4
    CLEAR = 5
    ARM = 6


COUNTER_BITS = 16


def _is_pow2(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 2 and n & (n - 1) == 0


def check_params(lanes: int, groups: int, code_bits: int, timer_bits: int, settle: int):
    """ValueError naming the first parameter out of range."""
    check_ranges(("groups", groups, 1, 8), ("code_bits", code_bits, 1, 16),
                 ("timer_bits", timer_bits, 2, 32))
    if not _is_pow2(lanes) or lanes > 16:
        raise ValueError(f"lanes must be a power of two in 2..16 (a Benes matrix), "
                         f"not {lanes!r}")
    check_settle(settle, timer_bits)


# ---------------------------------------------------------------------------- Benes -----

def benes_size(n: int) -> tuple[int, int]:
    """(stages, elements) of an n-lane Benes network."""
    k = n.bit_length() - 1
    return 2 * k - 1, (n // 2) * (2 * k - 1)


def element_count(lanes: int, groups: int) -> int:
    return 2 * groups + benes_size(lanes)[1]


def _layout(n: int, base: int = 0, stage0: int = 0, offset: int = 0, out=None):
    """Element ids of a sub-network of size n whose stages start at ``stage0`` of the full
    network and whose elements sit at ``offset`` within each stage: a nested tuple
    (first column, upper, lower, last column) or the single element id (n = 2)."""
    half = base // 2 if base else n // 2
    if n == 2:
        return stage0 * half + offset
    first = [stage0 * half + offset + j for j in range(n // 2)]
    sub = (n.bit_length() - 1) * 2 - 3                 # stages of a sub-network
    upper = _layout(n // 2, base or n, stage0 + 1, offset)
    lower = _layout(n // 2, base or n, stage0 + 1, offset + n // 4)
    last = [(stage0 + 1 + sub) * half + offset + j for j in range(n // 2)]
    return (first, upper, lower, last)


def _trace(n: int, ids, states, values: list) -> list:
    """Push ``values`` (one per input lane) through the sub-network; returns the values at
    its output lanes."""
    if n == 2:
        return values[::-1] if states[ids] else list(values)
    first, upper, lower, last = ids
    top, bottom = [], []
    for j, e in enumerate(first):
        a, b = values[2 * j], values[2 * j + 1]
        if states[e]:
            a, b = b, a
        top.append(a)
        bottom.append(b)
    top = _trace(n // 2, upper, states, top)
    bottom = _trace(n // 2, lower, states, bottom)
    out = []
    for j, e in enumerate(last):
        a, b = top[j], bottom[j]
        out += [b, a] if states[e] else [a, b]
    return out


def benes_trace(states, n: int) -> list[int]:
    """The permutation a Benes setting realises: ``perm[i]`` = the output lane the light of
    input lane i reaches (``states[e]`` for e in the matrix numbering, 0-based)."""
    stages, count = benes_size(n)
    if len(states) != count:
        raise ValueError(f"a {n}-lane Benes network has {count} elements, got {len(states)}")
    at_output = _trace(n, _layout(n), list(states), list(range(n)))
    perm = [0] * n
    for o, i in enumerate(at_output):
        perm[i] = o
    return perm


def _check_perm(perm, n: int) -> list[int]:
    perm = [int(p) for p in perm]
    if len(perm) != n or sorted(perm) != list(range(n)):
        raise ValueError(f"{perm} is not a permutation of the {n} lanes")
    return perm


def benes_route(perm, n: int | None = None) -> list[int]:
    """Element states realising ``perm`` (input lane i -> output lane perm[i]): the looping
    algorithm. Every permutation has a setting (the network is rearrangeable)."""
    n = len(perm) if n is None else n
    if not _is_pow2(n):
        raise ValueError(f"a Benes network needs a power-of-two lane count, not {n}")
    perm = _check_perm(perm, n)
    states = [0] * benes_size(n)[1]
    _route(n, _layout(n), perm, states)
    return states


def _route(n: int, ids, perm: list[int], states: list) -> None:
    if n == 2:
        states[ids] = int(perm[0] == 1)
        return
    first, upper, lower, last = ids
    inv = [0] * n
    for i, o in enumerate(perm):
        inv[o] = i
    side = [None] * n                     # sub-network (0 upper, 1 lower) of each input lane
    for start in range(0, n, 2):
        if side[start] is not None:
            continue
        i, s = start, 0
        while side[i] is None:
            side[i], side[i ^ 1] = s, 1 - s
            # the other input of i's partner's output element must take the other side
            j = inv[perm[i ^ 1] ^ 1]
            i, s = j, s                   # i ^ 1 is on side 1 - s, so j is on side s
            if side[i] is not None:
                break
    sub = ([0] * (n // 2), [0] * (n // 2))
    for j in range(n // 2):
        states[first[j]] = side[2 * j]    # 0: lane 2j to the upper sub-network (bar)
        for i in (2 * j, 2 * j + 1):
            sub[side[i]][j] = perm[i] // 2
    for j in range(n // 2):
        states[last[j]] = side[inv[2 * j]]  # output 2j fed from the upper side: bar
    _route(n // 2, upper, sub[0], states)
    _route(n // 2, lower, sub[1], states)


def path_states(path: int) -> tuple[int, int]:
    return PATH_ELEMENTS[path]


# ----------------------------------------------------------------------- controller -----

@dataclass(frozen=True)
class Command:
    """One command with its raw fields (malformed values are kept: the controller rejects
    them). Unused fields are 0."""

    op: int
    group: int = 0
    path: int = 0
    backup: int = 0
    perm: tuple = ()
    states: tuple = ()
    element: int = 0
    state: int = 0
    code: int = 0
    which: int = 0
    value: int = 0
    mask: int = 0
    every: int = 0

    @classmethod
    def set_path(cls, group, path, backup=0, every=0):
        """``every`` = 1: all groups of the bundle (``group`` must be 0)."""
        return cls(Op.SET_PATH, group=group, path=path, backup=backup, every=every)

    @classmethod
    def load_perm(cls, perm, states=None):
        perm = tuple(int(p) for p in perm)
        return cls(Op.LOAD_PERM, perm=perm, states=tuple(benes_route(perm) if states is None
                                              else states))

    @classmethod
    def write_cal(cls, element, state, code):
        return cls(Op.WRITE_CAL, element=element, state=state, code=code)

    @classmethod
    def set_timing(cls, which, value):
        return cls(Op.SET_TIMING, which=which, value=value)

    @classmethod
    def arm(cls, mask):
        return cls(Op.ARM, mask=mask)


DOWN, SETTLING, CHECKING, UP, FAULT = range(5)
M_IDLE, M_SETTLING, M_READY = range(3)


class OCSTrx:
    """The controller's behaviour, one :meth:`outputs` / :meth:`edge` pair per clock."""

    def __init__(self, lanes: int = 8, groups: int = 2, code_bits: int = 12,
                 timer_bits: int = 20, settle: int = 100_000) -> None:
        check_params(lanes, groups, code_bits, timer_bits, settle)
        self.N, self.G, self.H, self.T = lanes, groups, code_bits, timer_bits
        self.E = element_count(lanes, groups)
        self.settle0 = settle
        self.reset()

    def reset(self) -> None:
        top = (1 << self.T) - 1
        self.timing = [self.settle0, min(8, top), min(1000, top)]   # settle, debounce, window
        self.cal = [[0, 1 << (self.H - 1)] for _ in range(self.E)]
        self.states = [0] * self.E
        self.path = [LOOP_PATH] * self.G
        self.backup = [0] * self.G
        self.link = [DOWN] * self.G
        self.cause = [0] * self.G
        self.failover = [0] * self.G
        self.armed = [1] * self.G
        self.left = [0] * self.G        # settle cycles left (SETTLING)
        self.waited = [0] * self.G      # samples taken (CHECKING)
        self.run = [0] * self.G         # consecutive lit (CHECKING) or dark (UP) samples
        self.mstate = M_IDLE
        self.mleft = 0
        self.perm = list(range(self.N))
        self.errors = 0
        self.reconfigs = 0

    # -- outputs of this cycle ------------------------------------------------------------
    def pending(self) -> list[int]:
        """Groups that fail over at the next edge."""
        return [g for g in range(self.G)
                if self.link[g] == FAULT and self.backup[g] and self.armed[g]]

    @property
    def busy(self) -> bool:
        return self.mstate == M_SETTLING or any(x in (SETTLING, CHECKING) for x in self.link)

    @property
    def ready(self) -> bool:
        return not self.busy and not self.pending()

    def outputs(self) -> dict:
        return {"ready": self.ready, "mzi": list(self.states),
                "heater": [self.cal[e][self.states[e]] for e in range(self.E)],
                "path": list(self.path), "backup": list(self.backup),
                "link": list(self.link), "cause": list(self.cause),
                "failover": list(self.failover), "armed": list(self.armed),
                "mstate": self.mstate, "perm": list(self.perm), "busy": self.busy,
                "error": self.errors, "reconfigs": self.reconfigs}

    # -- checks ---------------------------------------------------------------------------
    def check(self, c: Command) -> str | None:
        """The error a command raises (None when it is applied)."""
        if c.op == Op.SET_PATH:
            if not 0 <= c.group < self.G or (c.every and c.group):
                return "GROUP"
            if c.path not in (1, 2, 3) or not 0 <= c.backup <= 3 or c.backup == c.path:
                return "PATH"
        elif c.op == Op.LOAD_PERM:
            if sorted(c.perm) != list(range(self.N)):
                return "PERM"
            if benes_trace(list(c.states), self.N) != list(c.perm):
                return "STATES"
        elif c.op == Op.WRITE_CAL:
            if not 0 <= c.element < self.E:
                return "ELEMENT"
        elif c.op == Op.SET_TIMING:
            if c.which not in (0, 1, 2) or c.value < 1:
                return "TIMING"
            timing = list(self.timing)
            timing[c.which] = c.value
            if timing[2] < timing[1]:
                return "TIMING"
        elif c.op == Op.ARM:
            if c.mask >> self.G:
                return "GROUP"
        elif c.op != Op.CLEAR:
            return "OPCODE"
        return None

    # -- the clock edge -------------------------------------------------------------------
    def _watched(self, g: int, matrix_settling: bool) -> bool:
        """Whether group g's light is watched while UP: not on the loopback while the matrix
        settles."""
        return not (matrix_settling and self.path[g] == LOOP_PATH)

    def _recheck(self, pend) -> list[int]:
        """Groups checked again when the matrix becomes READY: the loopback groups UP or in
        FAULT (not those failing over now)."""
        return [g for g in range(self.G) if self.path[g] == LOOP_PATH and
                self.link[g] in (UP, FAULT) and g not in pend]

    def _count(self) -> None:
        self.reconfigs = (self.reconfigs + 1) % (1 << COUNTER_BITS)

    def _start(self, g: int, path: int, backup: int, failover: int) -> None:
        self.path[g], self.backup[g], self.failover[g] = path, backup, failover
        self.states[2 * g], self.states[2 * g + 1] = PATH_ELEMENTS[path]
        self.link[g], self.left[g] = SETTLING, self.timing[0]
        self._count()

    def _settle_matrix(self) -> None:
        self.mstate, self.mleft = M_SETTLING, self.timing[0]
        self._count()

    def edge(self, cmd: Command | None, pd, rst: bool = False) -> str | None:
        """Advance one clock. ``cmd``: the command offered (taken if :attr:`ready`); ``pd``:
        per group the three photodetectors (path 1, 2, loopback), booleans. Returns the error
        of a rejected command, "ok" for an accepted one, None when nothing was taken."""
        if rst:
            self.reset()
            return None
        lit = [bool(pd[g][self.path[g] - 1]) for g in range(self.G)]
        ready, pend = self.ready, self.pending()
        link0 = list(self.link)
        D, W = self.timing[1], self.timing[2]
        matrix_settling = self.mstate == M_SETTLING
        recheck = []
        if matrix_settling:
            if self.mleft <= 1:
                self.mstate = M_READY
                recheck = self._recheck(pend)
            else:
                self.mleft -= 1
        for g in range(self.G):
            link = self.link[g]
            if link == SETTLING:
                if self.left[g] <= 1:
                    self.link[g], self.waited[g], self.run[g] = CHECKING, 0, 0
                else:
                    self.left[g] -= 1
            elif link == CHECKING:
                self.waited[g] += 1
                self.run[g] = self.run[g] + 1 if lit[g] else 0
                if lit[g] and self.run[g] >= D:
                    self.link[g], self.run[g] = UP, 0
                elif self.waited[g] >= W:
                    self.link[g], self.cause[g] = FAULT, 1
            elif link == UP:
                if not self._watched(g, matrix_settling):
                    self.run[g] = 0                   # not watched while the matrix settles
                else:
                    self.run[g] = 0 if lit[g] else self.run[g] + 1
                    if self.run[g] >= D:
                        self.link[g], self.cause[g] = FAULT, 2
        for g in recheck:
            self.link[g], self.cause[g], self.waited[g], self.run[g] = CHECKING, 0, 0, 0
        for g in pend:
            self._start(g, self.backup[g], 0, 1)
        if not ready or cmd is None:
            return None
        err = self.check(cmd)
        if err is not None:
            self.errors |= 1 << ERRORS.index(err)
            return err
        if cmd.op == Op.SET_PATH:
            for g in (range(self.G) if cmd.every else [cmd.group]):
                if cmd.path == self.path[g] and link0[g] == UP:
                    self.backup[g] = cmd.backup           # the path in use: no settle
                else:
                    self._start(g, cmd.path, cmd.backup, 0)
                    self.cause[g] = 0
        elif cmd.op == Op.LOAD_PERM:
            base = 2 * self.G
            self.states[base:] = list(cmd.states)
            self.perm = list(cmd.perm)
            self._settle_matrix()
        elif cmd.op == Op.WRITE_CAL:
            e, s = cmd.element, cmd.state & 1
            self.cal[e][s] = cmd.code
            if self.states[e] == s:                       # a live heater changes: settle
                if e < 2 * self.G:
                    g = e // 2
                    self._start(g, self.path[g], self.backup[g], 0)
                    self.cause[g] = 0
                else:
                    self._settle_matrix()
        elif cmd.op == Op.SET_TIMING:
            self.timing[cmd.which] = cmd.value
        elif cmd.op == Op.CLEAR:
            self.errors = 0
        elif cmd.op == Op.ARM:
            self.armed = [cmd.mask >> g & 1 for g in range(self.G)]
        return "ok"


# ------------------------------------------------------------ system-model interface -----

def join_perm(lanes: int) -> list[int]:
    """The loopback permutation that joins the two GPU halves: lane i -> i + N/2 (mod N)."""
    return [(i + lanes // 2) % lanes for i in range(lanes)]


def trx_commands(side: str, setting, lanes: int = 8, groups: int = 2, K: int = 2, *,
                 backup=0) -> list:
    """The commands that put one InfiniteHBD transceiver bundle (``side`` "W" or "E", as in
    :class:`~models.infinitehbd.topology.Ring`'s ``config``) on ``setting``: an external hop
    distance d (1..K) or ``topology.LOOP``, with ``backup`` (a hop distance, ``LOOP`` or 0
    for none; :func:`ring_commands` derives it from the faults and the rings).

    The bundle and path of a hop distance come from the wiring table
    (:func:`models.infinitehbd.topology.wiring`). Order: the matrix first (LOAD_PERM of the
    joining permutation, when the setting or the backup is the loopback), so no group
    checks light through a matrix that is still moving; then one SET_PATH for every lane
    group of the bundle (upper and lower GPU track): one settle for the bundle. Returns
    ``[(bundle, Command), ...]``."""
    from . import topology
    if side not in ("W", "E"):
        raise ValueError(f"side must be 'W' or 'E', not {side!r}")
    table = topology.wiring(K)

    def locate(d):
        if d == topology.LOOP:
            return None
        d = int(d)
        if not 1 <= d <= K:
            raise ValueError(f"hop distance {d} is outside 1..K = {K}")
        return table.path_of(side, d)

    main = locate(setting)
    spare = locate(backup) if backup else None
    if main is None:                                  # the loopback: the side's first bundle
        bundle, path = table.bundles_of(side)[0], LOOP_PATH
    else:
        bundle, path = main
    if spare is not None and spare[0] != bundle:
        raise ValueError(f"backup distance {backup} is on bundle {spare[0]}, not on the "
                         f"bundle {bundle} that serves {setting}")
    bpath = LOOP_PATH if backup == topology.LOOP else (spare[1] if spare else 0)
    cmds = []
    if path == LOOP_PATH or bpath == LOOP_PATH:
        cmds.append((bundle, Command.load_perm(join_perm(lanes))))
    cmds.append((bundle, Command.set_path(0, path, bpath, every=1)))
    return cmds


def ring_backups(hbd, rings) -> dict:
    """The backup of each transceiver side of ``rings`` (``{(side, node): distance, LOOP or
    0}``). A ring's link ``a -> b`` (E(a), W(b)) moves outward when ``b`` (for E(a)) or
    ``a`` (for W(b)) dies, both ends switching (§3 (ii), §4.2): E(a)'s backup is the hop to
    the ring node after b, W(b)'s the hop to the ring node before a -- the same fibre, so
    the two backups meet -- when that node is within K hops (it is healthy and in the same
    ring by construction); when the dead node is the ring's end, the survivor closes the
    ring with its loopback; otherwise there is no backup (0). Loopback ends have none, nor a
    hop whose bypass is wired to another bundle (a controller fails over between its own
    bundle's paths only)."""
    from . import topology
    table = topology.wiring(hbd.K)
    out = {}
    for r in rings:
        nodes = list(r.nodes)

        def hop(a, b):
            return (b - a) % hbd.nodes if hbd.ring else b - a

        for i, n in enumerate(nodes):
            for side in ("W", "E"):
                if r.config.get((side, n)) == topology.LOOP or (side, n) not in r.config:
                    out[(side, n)] = 0
                    continue
                step = 1 if side == "E" else -1
                j = i + 2 * step              # the ring node beyond the neighbour
                if 0 <= j < len(nodes):
                    d = hop(n, nodes[j]) if side == "E" else hop(nodes[j], n)
                    same = d <= hbd.K and table.path_of(side, d)[0] == \
                        table.path_of(side, r.config[(side, n)])[0]
                    out[(side, n)] = d if same else 0
                else:
                    out[(side, n)] = topology.LOOP   # the neighbour is the ring's end
    return out


def ring_commands(hbd, rings, lanes: int = 8, groups: int = 2) -> dict:
    """``{(side, node): [(bundle, Command), ...]}``: every transceiver side of ``rings`` on
    its setting with the backup :func:`ring_backups` derives."""
    backups = ring_backups(hbd, rings)
    out = {}
    for r in rings:
        for key, setting in r.config.items():
            out[key] = trx_commands(key[0], setting, lanes=lanes, groups=groups, K=hbd.K,
                                    backup=backups[key])
    return out
