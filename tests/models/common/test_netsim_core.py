"""The simulator core knows no system: its sources name none, importing and running it loads
none, topologies resolve through the registry (a point names the module that registers its
topology, so a fresh worker can build it), and the model version is a hash of the sources.
Also: no packet is self-addressed, so every measured flit crossed a link."""

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aifabric.models.common.netsim import NetworkError, Simulator, Traffic, mesh, simulate
from aifabric.models.common.netsim import kernel as K
from aifabric.models.common.netsim import sweep as S

ROOT = Path(__file__).resolve().parents[3]
CORE = ROOT / "models" / "common" / "netsim"
SYSTEMS = ("railx", "chronos", "infinitehbd", "railonly", "flexsipac")


def test_core_sources_name_no_system():
    pattern = re.compile(r"models\.(" + "|".join(SYSTEMS) + r")")
    hits = [f"{p.name}:{i}" for p in sorted(CORE.glob("*.py"))
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    hits += [f"wwfa.py:{i}" for i, line in
             enumerate((CORE.parent / "wwfa.py").read_text().splitlines(), 1)
             if pattern.search(line)]
    assert hits == []


def run_fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_mesh_sweep_point_loads_no_system_package():
    code = ("import sys, json\n"
            "from aifabric.models.common.netsim import sweep as S\n"
            "p = S.point({'topology': 'mesh', 'k': 3, 'vcs': 2, 'allocator': 'wavefront'}, "
            "'uniform', 0.2, warmup=50, window=100, drain=200)\n"
            "row = S.run_point(p)\n"
            "print(json.dumps([row['accepted'] > 0, p['provider'], sorted(m for m in "
            "sys.modules if m.split('.')[:3] in [['aifabric', 'models', s] for s in "
            + repr(SYSTEMS) + "])]))\n")
    ok, provider, loaded = json.loads(run_fresh(code))
    assert ok and provider == "aifabric.models.common.netsim.network" and loaded == []


def test_a_fresh_worker_imports_the_provider_of_a_registered_topology():
    """A RailX point built in a process that imported only the core: the point's provider is
    imported first, so the registry knows 'hyperx'."""
    import aifabric.models.railx.netsim  # noqa: F401  (registers hyperx in this process)
    p = S.point({"topology": "hyperx", "m": 2, "n": 1, "R": 8, "k": 1, "vcs": 3}, "uniform",
                0.5, warmup=100, window=300, drain=500)
    assert p["provider"] == "aifabric.models.railx.netsim"
    assert p["model"].startswith(S.MODEL_VERSION + "+")
    code = ("import json\nfrom aifabric.models.common.netsim import sweep as S\n"
            f"row = S.run_point(json.loads({json.dumps(json.dumps(p))}))\n"
            "print(json.dumps([row['chips'], row['delivered_packets']]))\n")
    chips, delivered = json.loads(run_fresh(code))
    assert chips == 36 and delivered > 50


def test_unknown_topology_names_the_registered_ones():
    with pytest.raises(NetworkError, match="unknown topology 'ring'; registered: mesh, torus"):
        S.build({"topology": "ring"})
    with pytest.raises(NetworkError, match="mesh: unknown parameter"):
        S.build({"topology": "mesh", "m": 4})


def test_model_version_is_the_hash_of_the_model_sources():
    h = hashlib.sha256()
    for name in ("kernel.py", "reference.py", "sim.py", "traffic.py", "network.py",
                 "registry.py"):
        h.update(name.encode() + b"\0" + (CORE / name).read_bytes())
    assert S.MODEL_VERSION == h.hexdigest()[:12] == S.model_version()
    p = S.point({"topology": "mesh", "k": 3}, "uniform", 0.1)
    assert p["model"] == S.MODEL_VERSION and S.MODEL_VERSION in S.key(p)


def test_no_chip_sends_to_itself_and_every_measured_flit_crossed_a_link():
    """Transpose fixes the diagonal, a hot chip draws itself: neither sends to itself, so
    every flit ejected was switched onto a link (out port > 0) at least once first."""
    net = mesh(4, vcs=2)
    for pattern in ("transpose", "hotspot", "permutation", "uniform"):
        tr = Traffic.make(pattern, net.coords, net.grid, hot=(5,), hot_frac=0.5, perm_seed=2)
        sim = Simulator(net, tr, rate=0.3, log=300_000)
        sim.advance(2000)
        ev = sim.events()
        sw = ev[ev[:, 1] == K.EV_SWITCH]
        ejected = {(int(t), int(f)) for t, f in sw[sw[:, 5] == 0][:, [7, 8]]}
        crossed = {(int(t), int(f)) for t, f in sw[sw[:, 5] > 0][:, [7, 8]]}
        assert len(ejected) > 500 and ejected <= crossed, pattern
        senders = {int(t) >> 32 for t in ev[ev[:, 1] == K.EV_INJECT][:, 7]}
        assert senders == set(np.nonzero(tr.sends)[0].tolist()), pattern
    tp = Traffic.make("transpose", net.coords, net.grid)
    assert tp.sends.sum() == 12                            # the 4 diagonal chips are silent


def test_transpose_offered_load_counts_only_chips_that_send():
    net = mesh(4, vcs=2)
    res = simulate(net, "transpose", 0.2, warmup=200, window=4000, drain=2000, seed=3)
    assert res.offered == pytest.approx(0.2 * 12 / 16, rel=0.06)
    assert res.accepted == pytest.approx(res.offered, rel=0.03)
