"""The OCS transceiver controller RTL in Amaranth's simulator: every N = 8 permutation through
the LOAD_PERM checks, hand-worked timelines of the failover, hold, matrix and calibration
rules, and the closed loop: two RTL controllers (the two ends of a ring's bypass hop) among
controller models on every other node, driven by the light between them."""

import itertools
import random

from amaranth.hdl import Value

from aifabric.cosim.codec import field, ocs_command
from aifabric.cosim.pysim import run_sync
from aifabric.models.infinitehbd import topology
from aifabric.models.infinitehbd.ocstrx import Command, OCSTrx, benes_route, ring_commands
from aifabric.models.infinitehbd.ringlight import RingPlant
from aifabric.rtl.optics.ocstrx import BenesCheck, OCSTrxController

SETTLING, CHECKING, UP, FAULT = 1, 2, 3, 4


def word(c: Command, lanes: int, groups: int) -> int:
    return ocs_command(c.op, lanes=lanes, groups=groups, group=c.group, path=c.path,
                       backup=c.backup, perm=c.perm, states=c.states, element=c.element,
                       state=c.state, code=c.code, which=c.which, value=c.value,
                       every=c.every, mask=c.mask)


def test_every_8_lane_permutation_passes_the_states_check():
    """All 40,320 permutations of 8 lanes with the looping algorithm's setting are realised
    (the N = 4 network cannot tell the lower sub-network's element offset: N = 8 can); and
    a setting of another permutation is refused."""
    dut = BenesCheck(8)
    rng = random.Random(8)
    perms = list(itertools.permutations(range(8)))
    pack = lambda p: sum(v << (3 * i) for i, v in enumerate(p))  # noqa: E731
    bits = lambda s: sum(b << e for e, b in enumerate(s))         # noqa: E731
    refused, missed = [], []

    async def bench(ctx):
        for n, p in enumerate(perms):
            ctx.set(dut.perm, pack(p))
            ctx.set(dut.states, bits(benes_route(list(p))))
            await ctx.delay(1e-9)
            if not (ctx.get(dut.is_perm) and ctx.get(dut.realised)):
                refused.append(p)
        for p in rng.sample(perms, 500):
            q = list(p)
            i, j = rng.sample(range(8), 2)
            q[i], q[j] = q[j], q[i]
            ctx.set(dut.perm, pack(p))
            ctx.set(dut.states, bits(benes_route(q)))
            await ctx.delay(1e-9)
            if ctx.get(dut.realised):
                missed.append(p)

    run_sync(bench, dut=dut)
    assert len(perms) == 40_320
    assert not refused, f"{len(refused)} realisable settings refused, e.g. {refused[:3]}"
    assert not missed, f"settings of other permutations accepted: {missed[:3]}"


# ------------------------------------------------------------------ timelines ---------

def drive(dut, cmds, cycles, pd, lanes, groups):
    """Offer ``cmds`` back to back; ``pd(t)``: the photodetector word; returns per cycle
    (link per group, path per group, failover bits, mstate, error, reconfigs, ready)."""
    trace = []

    async def bench(ctx):
        # the first cycle out of reset: ready (registered) is low; the timelines count from
        # the cycle after it
        assert not ctx.get(dut.cmd.ready)
        await ctx.tick()
        queue = [word(c, lanes, groups) for c in cmds]
        for t in range(cycles):
            ctx.set(dut.pd, pd(t))
            ctx.set(dut.cmd.valid, int(bool(queue)))
            if queue:
                ctx.set(Value.cast(dut.cmd.payload), queue[0])
            await ctx.delay(0)
            trace.append(([field(ctx.get(dut.link), g, 3) for g in range(groups)],
                          [field(ctx.get(dut.path), g, 2) for g in range(groups)],
                          ctx.get(dut.failover), ctx.get(dut.mstate), ctx.get(dut.error),
                          ctx.get(dut.reconfigs), ctx.get(dut.cmd.ready)))
            if queue and ctx.get(dut.cmd.ready):
                queue.pop(0)
            await ctx.tick()

    run_sync(bench, dut=dut)
    return trace


def small(groups=2, settle=4):
    return OCSTrxController(lanes=4, groups=groups, code_bits=4, timer_bits=8, settle=settle)


TIMING = [Command.set_timing(1, 2), Command.set_timing(2, 30)]   # debounce 2, window 30


def test_bundle_fails_over_in_one_settle():
    """Both groups on path 1 (backup 2), UP; path 1 goes dark in cycle 20 for both: FAULT
    at 22 (two dark samples), both SETTLING on path 2 at 23 (in the same cycle), UP at 23 +
    4 + 2 = 29: 2D + S + 1 = 9 cycles after the first dark sample."""
    dut = small()
    cmds = TIMING + [Command.set_path(0, 1, 2, every=1)]
    tr = drive(dut, cmds, 34, lambda t: 0b010_010 if t >= 20 else 0b011_011, 4, 2)
    links = [x[0] for x in tr]
    assert links[19] == [UP, UP]
    assert links[21] == [UP, UP] and links[22] == [FAULT, FAULT]
    assert links[23] == [SETTLING, SETTLING] and tr[23][1] == [2, 2] and tr[23][2] == 0b11
    assert links[28] == [CHECKING, CHECKING] and links[29] == [UP, UP]
    assert tr[29][5] - tr[22][5] == 2          # two settles counted, started together


def test_held_group_does_not_fail_over_until_armed():
    dut = small()
    cmds = TIMING + [Command.set_path(0, 1, 2, every=1), Command.arm(0b10),
                     Command.set_timing(0, 4)]  # (a no-op filler: taken while idle)
    tr = drive(dut, cmds, 40, lambda t: 0b010_010 if t >= 20 else 0b011_011, 4, 2)
    links = [x[0] for x in tr]
    # group 0 held: FAULT and stays on path 1; group 1 armed: fails over
    assert links[22] == [FAULT, FAULT]
    assert links[23] == [FAULT, SETTLING] and tr[39][1] == [1, 2] and links[39] == [FAULT, UP]
    # ready stays high for a held fault (nothing waits)
    assert tr[39][6] == 1


def test_window_below_debounce_is_refused():
    dut = small()
    # reset: debounce 8, window 1,000 clipped to 255
    cmds = [Command.set_timing(1, 2), Command.set_timing(2, 5), Command.set_timing(1, 6),
            Command(5), Command.set_timing(1, 5), Command.set_timing(2, 4)]
    tr = drive(dut, cmds, 8, lambda t: 0, 4, 2)
    timing_bit = 1 << 6
    assert tr[2][4] == 0 and tr[3][4] == timing_bit    # debounce 6 > window 5: TIMING
    assert tr[5][4] == 0                               # debounce 5 = window: taken
    assert tr[6][4] == timing_bit                      # window 4 < debounce 5: TIMING


def test_set_path_to_the_path_in_use_keeps_the_link_up():
    dut = small()
    cmds = TIMING + [Command.set_path(0, 1, 0, every=1), Command.set_path(1, 1, 2)]
    tr = drive(dut, cmds, 20, lambda t: 0b011_011, 4, 2)
    up = next(t for t, x in enumerate(tr) if x[0] == [UP, UP])
    assert all(x[0] == [UP, UP] for x in tr[up:])          # never settles again
    assert tr[-1][5] == 2                                   # the two groups' one settle


def test_live_calibration_write_settles_the_element():
    dut = small()
    # group 0 on path 1: element 0 (A) is in state 1, element 1 (B) in state 0
    cmds = TIMING + [Command.set_path(0, 1, 0), Command.write_cal(1, 1, 5),
                     Command.write_cal(0, 1, 9)]
    tr = drive(dut, cmds, 30, lambda t: 0b111_111, 4, 2)
    links = [x[0][0] for x in tr]
    up = links.index(UP)
    # the write of B's unused state's code (taken at up) acts at once; A's live code
    # (taken at up + 1) re-settles the group: SETTLING at up + 2
    assert links[up + 1] == UP and links[up + 2] == SETTLING
    assert links[-1] == UP and tr[-1][5] == 2


def test_loopback_not_watched_while_the_matrix_settles_and_checked_again():
    """A group UP on the loopback; a new matrix permutation: the loopback photodetector goes
    dark while the matrix settles (20 cycles here, far above the debounce) -- no FAULT; when
    READY the group is checked again (CHECKING) and comes UP."""
    dut = small(settle=20)
    perm = [2, 3, 0, 1]
    cmds = TIMING + [Command.set_path(0, 3, 0), Command.load_perm(perm)]
    seen = {}

    def pd(t):
        return 0 if seen.get("settling") else 0b100

    trace = []

    async def bench(ctx):
        queue = [word(c, 4, 2) for c in cmds]
        for t in range(90):
            seen["settling"] = ctx.get(dut.mstate) == 1
            ctx.set(dut.pd, pd(t))
            ctx.set(dut.cmd.valid, int(bool(queue)))
            if queue:
                ctx.set(Value.cast(dut.cmd.payload), queue[0])
            await ctx.delay(0)
            trace.append((field(ctx.get(dut.link), 0, 3), ctx.get(dut.mstate)))
            if queue and ctx.get(dut.cmd.ready):
                queue.pop(0)
            await ctx.tick()

    run_sync(bench, dut=dut)
    ms = [m for _, m in trace]
    first = ms.index(1)
    ready = ms.index(2)
    assert trace[first - 1][0] == UP
    assert all(link == UP for link, _ in trace[first:ready])      # unwatched: no FAULT
    assert trace[ready][0] == CHECKING and trace[-1][0] == UP


# ------------------------------------------------------------------ closed loop -------

class RTLEnd:
    """An RTL controller in the plant: outputs read at the start of the cycle, inputs set
    for the edge."""

    def __init__(self, lanes):
        self.lanes, self.G = lanes, 2
        self.dut = OCSTrxController(lanes=lanes, groups=2, code_bits=8, timer_bits=12,
                                    settle=50)
        self.ctx = None
        self.out = None

    def read(self):
        ctx, d, G = self.ctx, self.dut, self.G
        k = self.lanes.bit_length() - 1
        self.out = {"path": [field(ctx.get(d.path), g, 2) for g in range(G)],
                    "link": [field(ctx.get(d.link), g, 3) for g in range(G)],
                    "failover": [ctx.get(d.failover) >> g & 1 for g in range(G)],
                    "mstate": ctx.get(d.mstate),
                    "perm": [field(ctx.get(d.perm), i, k) for i in range(self.lanes)],
                    "busy": bool(ctx.get(d.busy)), "ready": bool(ctx.get(d.cmd.ready))}

    def outputs(self):
        return self.out

    def edge(self, cmd, pd):
        ctx, d = self.ctx, self.dut
        ctx.set(d.pd, sum(int(pd[g][j]) << (3 * g + j) for g in range(2) for j in range(3)))
        ctx.set(d.cmd.valid, int(cmd is not None))
        if cmd is not None:
            ctx.set(Value.cast(d.cmd.payload), word(cmd, self.lanes, 2))
        return "taken" if cmd is not None and self.out["ready"] else None


def test_closed_loop_with_the_rtl_at_both_ends_of_the_bypass_hop():
    """Rings of 4 nodes on a 12-node K = 2 ring; E(4) and W(6) are RTL, every other
    controller the model. Node 5 dies: E(4) and W(6) lose light, both fail over (both groups,
    one settle) to the 2-hop path between them, within the documented 2D + S + 1 cycles;
    no group anywhere is left in FAULT."""
    S, D, W = 20, 3, 100
    hbd = topology.HBD(12, R=4, K=2)
    rtl = {(4, 1): RTLEnd(8), (6, 0): RTLEnd(8)}     # E bundle of 4, W bundle of 6

    def make(n, b):
        return rtl.get((n, b)) or OCSTrx(lanes=8, groups=2, code_bits=8, timer_bits=12,
                                         settle=50)

    plant = RingPlant(hbd, make)
    rings = topology.build_rings(hbd, [], 16)
    timing = [Command.set_timing(0, S), Command.set_timing(1, D), Command.set_timing(2, W)]
    for key in plant.controllers:
        plant.send(*key, timing)
    for (side, node), seq in ring_commands(hbd, rings).items():
        for bundle, c in seq:
            plant.send(node, bundle, [c])
    log = {}

    async def bench(ctx):
        for end in rtl.values():
            end.ctx = ctx

        async def cycle():
            for end in rtl.values():
                end.read()
            outs = plant.step()
            await ctx.tick()
            return outs

        for _ in range(150):
            await cycle()
        log["before"] = plant.outputs()
        plant.kill(5)
        t0 = plant.t
        while True:
            outs = await cycle()
            e4, w6 = outs[(4, 1)], outs[(6, 0)]
            if e4["link"] == [UP, UP] and w6["link"] == [UP, UP] and e4["path"] == [2, 2]:
                log["took"] = plant.t - 1 - t0
                break
            assert plant.t - t0 < 100, (e4, w6)
        for _ in range(2 * W):
            await cycle()
        for end in rtl.values():
            end.read()
        log["after"] = plant.outputs()

    run_sync(bench, **{f"trx{n}_{b}": end.dut for (n, b), end in rtl.items()})
    before = log["before"]
    assert all(o["link"] == [UP, UP] for o in before.values()), before
    assert log["took"] == 2 * D + S + 1, log["took"]
    after = log["after"]
    assert after[(4, 1)]["path"] == [2, 2] and after[(6, 0)]["path"] == [2, 2]
    assert after[(4, 1)]["failover"] == [1, 1] and after[(6, 0)]["failover"] == [1, 1]
    faults = {k: o["link"] for k, o in after.items() if FAULT in o["link"]}
    assert not faults, faults


def test_timings_at_the_full_counter_width():
    """T = 8: settle 251, debounce 200, window 255 (counters cut to fewer bits wrap early):
    UP exactly 1 + 251 + 200 cycles after the SET_PATH is taken; with no light, FAULT
    exactly 255 samples after the settle."""
    dut = OCSTrxController(lanes=4, groups=2, code_bits=4, timer_bits=8, settle=251)
    cmds = [Command.set_timing(2, 255), Command.set_timing(1, 200),
            Command.set_path(0, 1, 0), Command.set_path(1, 2, 0)]
    tr = drive(dut, cmds, 980, lambda t: 0b000_001, 4, 2)
    links0 = [x[0][0] for x in tr]
    links1 = [x[0][1] for x in tr]
    taken = 2                                      # the SET_PATH of group 0, at cycle 2
    assert links0.index(UP) == taken + 1 + 251 + 200
    start1 = links1.index(SETTLING)                # group 1 (path 2 dark) after group 0
    assert links1.index(FAULT) == start1 + 251 + 255


def test_ready_is_low_from_a_reset_edge_to_the_cycle_after_the_reset():
    """Reset in cycles 2-4: ready is a register, so it is still high in cycle 2 (before the
    first reset edge), low in 3 and 4 and in 5 (the first cycle after the reset), high from
    6; low in cycle 0 too (the first cycle after power-up)."""
    from amaranth.hdl import ClockDomain
    dut = small()
    cd = ClockDomain("sync")
    seen = []

    async def bench(ctx):
        ctx.set(dut.cmd.valid, 1)
        ctx.set(Value.cast(dut.cmd.payload), word(Command(5), 4, 2))
        for t in range(8):
            ctx.set(cd.rst, int(2 <= t < 5))
            await ctx.delay(0)
            seen.append((t, ctx.get(dut.cmd.ready)))
            await ctx.tick()

    run_sync(bench, domain=cd, dut=dut)
    assert [r for t, r in seen] == [0, 1, 1, 0, 0, 0, 1, 1]
