"""Sweeps: local processes, a Dask LocalCluster end to end, the resumable log; the
``scripts.netsim`` command line and its one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.models.common.netsim import sweep as S

ROOT = Path(__file__).resolve().parents[3]
SPEC = {"topology": "mesh", "k": 4, "vcs": 2}


def points():
    return [S.point(SPEC, "uniform", rate, seed, warmup=200, window=600, drain=1000)
            for rate in (0.1, 0.3) for seed in (1, 2)]


def strip(rows):
    drop = {"seconds", "router_cycles_per_s", "cpu_seconds", "router_cycles_per_cpu_s"}
    return [{k: v for k, v in r.items() if k not in drop} for r in rows]


def test_local_processes_equal_one_process_and_the_log_resumes(tmp_path, monkeypatch):
    pts = points()
    one = S.sweep(pts, tmp_path / "one.jsonl", workers=1, progress=False)
    two = S.sweep(pts, tmp_path / "two.jsonl", workers=2, progress=False)
    assert strip(one) == strip(two)                        # seeds, not workers, decide
    assert [r["point"] for r in one] == pts
    assert one[0]["accepted"] != one[1]["accepted"]        # different seeds differ
    # resume: a finished log runs nothing; a torn last line is ignored and rerun
    log = tmp_path / "one.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])
    ran = []
    real = S.run_point
    monkeypatch.setattr(S, "run_point", lambda p: ran.append(p) or real(p))
    again = S.sweep(pts, log, workers=1, progress=False)
    assert len(ran) == 1 and strip(again) == strip(one)
    S.sweep(pts, log, workers=1, progress=False)
    assert len(ran) == 1


def test_the_workers_kernels_are_compiled_here_once_per_network(monkeypatch):
    """Before the worker processes start, the sweep runs ten cycles of the first point of
    each network and traffic in this process (their kernels compiled once, not once per
    worker), and no more."""
    other = S.point({**SPEC, "k": 3}, "uniform", 0.1, 1)
    hot = S.point(SPEC, "hotspot", 0.1, 1)
    ran = []

    class Stub:
        def __init__(self, p):
            self.p = p

        def measure(self, *cycles):
            ran.append((self.p["net"]["k"], self.p["traffic"], cycles))

    monkeypatch.setattr(S, "simulator", Stub)
    S._compile(points() + [other, hot, other])
    assert ran == [(4, "uniform", (0, 10, 0)), (3, "uniform", (0, 10, 0)),
                   (4, "hotspot", (0, 10, 0))]


def test_dask_local_cluster_gives_the_local_results(tmp_path):
    import distributed
    pts = points()[:2]
    local = S.sweep(pts, tmp_path / "local.jsonl", workers=1, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        remote = S.sweep(pts, tmp_path / "dask.jsonl", scheduler=cluster.scheduler_address,
                         progress=False)
    assert strip(remote) == strip(local)


def test_saturation_of_a_curve():
    rows = [{"rate": 0.1, "offered": 0.1, "accepted": 0.1, "saturated": False},
            {"rate": 0.2, "offered": 0.2, "accepted": 0.195, "saturated": False},
            {"rate": 0.3, "offered": 0.3, "accepted": 0.22, "saturated": True}]
    assert S.saturation(rows) == {"throughput": 0.22, "rate": 0.2}


def netsim(*args, out):
    return subprocess.run([sys.executable, "-m", "aifabric.scripts.netsim", "--quiet", "--out",
                           str(out), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_command_line_writes_curves(tmp_path):
    proc = netsim("--topology", "mesh", "--side", "4", "--rates", "0.1:0.3:0.1",
                  "--allocator", "wavefront", "--router", "vct", "--routing", "dor",
                  "--warmup", "200", "--window", "500", "--drain", "500", "--name", "m",
                  out=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "m.json").read_text())
    rows = summary["curves"]["mesh"]["points"]
    assert [r["rate"] for r in rows] == [0.1, 0.2, 0.3]
    net = rows[0]["point"]["net"]
    assert (net["allocator"], net["router"], net["routing"]) == ("wavefront", "vct", "dor")
    assert "links" not in net                     # the registered default is not restated
    assert summary["max_throughput"] == pytest.approx(1.0)
    assert (tmp_path / "m.png").stat().st_size > 5000
    assert len((tmp_path / "m.jsonl").read_text().splitlines()) == 3


@pytest.mark.parametrize("args,message", [
    (["--topology", "mesh", "--rates", "0:0.5:0.1"], "rate must be in (0, 1]"),
    (["--topology", "mesh", "--rates", "x"], "--rates 'x': expected a:b:step"),
    (["--topology", "torus", "--side", "4", "--vcs", "1"], "needs 2 VCs (dateline"),
    (["--topology", "hyperx", "--vcs", "4"], "VCs must be a multiple of 3, not 4"),
    (["--topology", "mesh", "--buffer", "2"], "buffer 2 < 4 flits"),
    (["--topology", "mesh", "--side", "3", "--traffic", "bitcomp"], "power-of-two"),
    (["--topology", "ring"], "argument --topology: invalid choice: 'ring'"),
    (["--traffic", "zipf"], "argument --traffic: invalid choice: 'zipf'"),
    (["--topology", "mesh", "--traffic", "trace"], "--traffic trace needs --trace FILE"),
    (["--topology", "mesh", "--warmup", "-1"], "--warmup must be >= 0"),
    (["--topology", "mesh", "--seed", "99999999999999999999"], "seed must be an integer"),
    (["--topology", "mesh", "--vcs", "0"], "VCs must be in 1..16, not 0"),
    (["--router", "nope"], "argument --router: invalid choice: 'nope' (choose from "
                           "'pipelined', 'vct', 'registered')"),
    (["--topology", "hyperx", "--router", "registered"],
     "router 'registered' needs ports of at most 1 lane, allocator separable or wavefront, "
     "links shared (given 8 lanes, separable, shared)"),
    (["--links", "nope"], "argument --links: invalid choice: 'nope'"),
    (["--topology", "mesh", "--routing", "railx-minimal"],
     "routing 'railx-minimal' does not route a mesh; for it: dor"),
])
def test_command_line_bad_input_is_one_line_and_writes_nothing(tmp_path, args, message):
    proc = netsim(*args, out=tmp_path / "out")
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_command_line_help_lists_the_registered_names(tmp_path):
    proc = netsim("--help", out=tmp_path)
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    for option, names in (("--router", "pipelined,vct,registered"),
                          ("--allocator", "separable,wavefront,age"),
                          ("--links", "shared,parallel,perlink"), ("--source", "fifo,open"),
                          ("--routing", "dor,railx-minimal")):
        assert f"{option} {{{names}}}" in text, option
    assert "(default pipelined)" in text and "ideal virtual cut-through" in text
    assert "registered: the router RTL's" in text


def test_command_line_bad_trace_and_forced_deadlock(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("cycle,src,dst,flits\n0,1,2,4\n3,1,oops,4\n")
    proc = netsim("--topology", "mesh", "--side", "4", "--traffic", "trace", "--trace",
                  str(trace), out=tmp_path / "out")
    assert proc.returncode == 2 and "t.csv:3: expected 4 integers" in proc.stderr
    assert not (tmp_path / "out").exists()
    proc = netsim("--topology", "torus", "--side", "4", "--vcs", "1", "--rates", "0.9",
                  "--force", "--warmup", "100", "--window", "3000", out=tmp_path / "out")
    assert proc.returncode == 1 and proc.stderr.startswith("error: 4x4 torus: deadlock at "
                                                           "cycle"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_curve_plot_when_every_point_is_saturated(tmp_path):
    # short quick runs can leave every point past saturation: no line to draw on a log
    # axis, but the figure must still be written (it once raised inside matplotlib)
    from aifabric.models.common.netsim.plot import latency_curves
    sat = [{"accepted": a, "saturated": True, "latency_mean": None, "max_throughput": 0.5}
           for a in (0.3, 0.31)]
    ok = [{"accepted": 0.1, "saturated": False, "latency_mean": 20.0, "max_throughput": 1.0},
          {"accepted": 0.2, "saturated": False, "latency_mean": 35.0, "max_throughput": 1.0}]
    for name, curves in (("all", {"a": sat, "b": sat}), ("mixed", {"a": sat, "b": ok})):
        out = latency_curves(curves, tmp_path / f"{name}.png", name)
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert not list(tmp_path.glob(".*.tmp.png"))
