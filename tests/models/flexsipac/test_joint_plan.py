"""Wavelength plans the hardware can emit: every allocation the Flex-SiPAC experiments make,
checked jointly against the WSSs and each CU's de-interleaver cascade (§3.B)."""

import numpy as np
import pytest

from aifabric.models.flexsipac import allocation as al, experiments as ex, fabrics, traffic, transceiver
from aifabric.models.flexsipac.topology import SiPAC
from aifabric.models.flexsipac.transceiver import counts, joint_report, realisable, trace


def test_reviewers_finding_count_only_colouring_serves_no_cu():
    # SiPAC(4, 3), w = 60, four 16-CU jobs: every CU sends (30, 30, 0) per level, a split
    # the chain realises by counts; but the count-only colouring gives each CU wavelengths
    # no cascade setting routes to the right ports -- 0 of 64 served; the cascade-aware plan
    # serves all 64
    topo, w = SiPAC(4, 3), 60
    T = traffic.traffic_matrix(topo, [16] * 4, "sipco")
    lam = al.heuristic(topo, T, w)
    assert transceiver.split_report(topo, lam, w)["served"] == 64     # by counts: all
    # the count-only colouring (assign_wavelengths' Koenig step; its DSatur pass takes
    # minutes at this size and is no more cascade-aware)
    old = al._config(topo, al._koenig_paths(lam, w))
    al.check_assignment(topo, lam, old, w)
    assert joint_report(topo, old, w)["served"] == 0
    plan = al.allocate(topo, T, w)
    assert al.check_joint(topo, plan, w) == plan["lam"].sum()
    rep = joint_report(topo, plan, w)
    assert rep["served"] == 64
    # the setting the plan chose is one that serves each CU
    for x, modes in plan["settings"].items():
        tr = trace(modes, w)
        assert all(tr[c] == topo.level(i, j) for (i, j, _), c in plan["signals"].items()
                   if i == x)


def test_joint_check_names_a_wavelength_the_cascade_sends_elsewhere():
    topo, w = SiPAC(4, 2), 8
    lam = np.zeros((16, 16))
    lam[0, 1] = lam[1, 0] = 2
    lam[0, 4] = lam[4, 0] = 1               # a level-1 demand too: both ports carry lines
    plan = al.realise(topo, lam, w)
    assert al.check_joint(topo, plan, w) == 6 and plan["dropped"] == 0
    assert (plan["lam"] == lam).all()
    sig = (0, 1, 0)
    used = {c for (i, _, _), c in plan["signals"].items() if i == 0}
    other = next(c for c in plan["sets"][0][1] if c not in used)     # a port-1 line
    bad = dict(plan, signals={**plan["signals"], sig: other})
    with pytest.raises(ValueError, match=f"CU 0 sends wavelength {other} "
                       f"to CU 1 at level 0, but its cascade sends wavelength"):
        al.check_joint(topo, bad, w)


def _experiment_mappings():
    out = [(cfg["r"], cfg["L"], tuple(m), 60) for q in (True,) for cfg in [ex.FIG7[q]]
           for m in cfg["mappings"].values()]
    out += [(r, L, tuple(m), 60) for N, (r, L, maps) in ex.FIG8[True].items() for m in maps]
    out += [(2, 2, (2, 2), 2), (8, 3, (448, 64), 60)]      # testbed; one 512-CU Fig 8 case
    return out


@pytest.mark.parametrize("r,L,sizes,w", _experiment_mappings())
def test_every_experiment_allocation_is_emitted(r, L, sizes, w):
    topo = SiPAC(r, L)
    for name in ("flex-sipac", "sipac"):       # static SiPAC: its fixed interleaver's sets
        plan = fabrics.wavelength_plan(name, sizes, r, L, w)
        assert al.check_joint(topo, plan, w) > 0
    plan = fabrics.wavelength_plan("flex-sipac", sizes, r, L, w)
    assert plan["form"] == fabrics.FLEX_FORM == "chain_uniform"
    assert joint_report(topo, plan, w, plan["form"])["served"] == topo.N
    # every job keeps a wavelength on each level its Flex-SiPCO traffic uses (else its CUs
    # would be cut apart)
    t = al.scale(traffic.traffic_matrix(topo, list(sizes), "sipco"), w) * al.direct_mask(topo)
    for job in traffic.job_blocks(topo, list(sizes)):
        for l in range(L):
            pairs = [(x, y) for x in job for y in topo.neighbours(x, l)]
            if any(t[x, y] > 0 for x, y in pairs):
                assert sum(plan["lam"][x, y] for x, y in pairs) > 0


def test_realise_drops_what_a_cascade_cannot_send():
    # one CU sends 3 of w = 4 at level 0 and 1 at level 1: (3, 1) is not a split the chain
    # gives ((2, 2), (4, 0), (0, 4)); the plan keeps what fits and says how much it dropped
    topo, w = SiPAC(4, 2), 4
    lam = np.zeros((16, 16))
    lam[0, 1] = lam[0, 2] = lam[0, 3] = 1
    lam[0, 4] = 1
    for y in (1, 2, 3, 4):
        lam[y, 0] = 1
    plan = al.realise(topo, lam, w)
    al.check_joint(topo, plan, w)
    assert plan["dropped"] > 0 and plan["lam"].sum() == lam.sum() - plan["dropped"]
    assert (plan["lam"] <= lam).all()


def test_reconfigure_inside_the_cascade_sets():
    topo, w = SiPAC(4, 2), 8
    a1 = al.allocate(topo, traffic.traffic_matrix(topo, [8, 8], "sipco"), w)
    a2 = al.allocate(topo, traffic.traffic_matrix(topo, [8, 4, 4], "sipco"), w)
    new, moved = al.reconfigure(topo, a1, a2["lam"], w, sets=a2["sets"])
    new.update(settings=a2["settings"], form="chain")
    al.check_joint(topo, new, w)
    kept = [s for s, c in a1["signals"].items() if new["signals"].get(s) == c]
    assert kept and moved == len(new["signals"]) - len(kept)


def test_tree_gives_the_uniform_split_the_chain_cannot():
    # unit 0 (bit 0) feeds unit 1 (even lines) and unit 2 (odd), each splitting on bit 1
    assert trace((2, 2, 2), 8, "tree") == [0, 2, 1, 3, 0, 2, 1, 3]
    assert counts((2, 2, 2), 64, "tree") == (16, 16, 16, 16)
    assert (16, 16, 16, 16) not in realisable(4, 64)
    assert (16, 16, 16, 16) in realisable(4, 64, "tree")
    assert max(min(s) for s in realisable(4, 64)) == 8          # (32, 16, 8, 8)
    # at three ports the two-unit tree is the chain
    assert realisable(3, 60, "tree") == realisable(3, 60)
    topo, w = SiPAC(2, 4), 64
    plan = al.allocate(topo, traffic.traffic_matrix(topo, [16], "sipco"), w, form="tree")
    al.check_joint(topo, plan, w)
    assert joint_report(topo, plan, w, "tree")["served"] == 16


def test_a_job_takes_the_split_whose_busiest_level_finishes_first():
    # SiPAC(4, 3), w = 60, jobs 32/16/16: the 16-CU jobs use levels 0 and 1 alike and take
    # (30, 30, 0); the 32-CU job uses all three levels and needs about a third on each, so
    # with the front interleaver it takes the uniform (20, 20, 20) -- the static SiPAC's --
    # and not the chain's nearest by least squares (30, 15, 15), which halves its level 1-2
    # bandwidth and made it 20 % slower than the static SiPAC at 100 MB
    plan = fabrics.wavelength_plan("flex-sipac", (32, 16, 16), 4, 3, 60)
    split = {x: tuple(len(s) for s in plan["sets"][x]) for x in plan["sets"]}
    assert {split[x] for x in range(32)} == {(20, 20, 20)}
    assert {split[x] for x in range(32, 64)} == {(30, 30, 0)}
