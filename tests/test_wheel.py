"""The package as a user meets it: the wheel installed with plain ``pip install`` into a fresh
virtual environment (its dependencies from PyPI or pip's cache, nothing from this
environment), in a project that has its own ``rtl`` package (the name aifabric's folder has in
the repository). There the user generates Verilog, co-simulates a block and lints a FuseSoC
core of their own.

Kept cheap: one environment for the run, shared by the pytest-xdist workers (the install
is most of the module's time), the smallest block (WWFA, N = 4) with a short testbench run
(``--transactions``), and the lint flow of FuseSoC rather than a simulation.
"""

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from filelock import FileLock

from aifabric.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]


def _environment(tmp: Path) -> dict:
    """The wheel of this checkout and a fresh environment with it installed, under ``tmp``."""
    # setuptools builds the wheel inside the checkout (build/lib, the egg-info): one build
    # at a time, whoever else builds one
    (ROOT / "build").mkdir(exist_ok=True)
    with FileLock(str(ROOT / "build" / "wheel-build.lock")):
        out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                              "--wheel-dir", str(tmp / "dist"), str(ROOT)],
                             capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    whl = next((tmp / "dist").glob("aifabric-*.whl"))
    env_dir = tmp / "env"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True,
                             check=True).stdout.strip()
    # plain pip: the wheel with its declared dependencies, and FuseSoC for the user's core
    out = subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                          str(whl), "fusesoc"], capture_output=True, text=True, timeout=900,
                         env={k: v for k, v in os.environ.items()
                              if k not in ("PYTHONPATH", "VIRTUAL_ENV")})
    assert out.returncode == 0, out.stderr[-3000:]
    return {"whl": str(whl), "py": str(py), "bin": str(env_dir / "bin"), "purelib": purelib}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """One environment for the whole run: the first pytest-xdist worker to get here builds
    it, the other waits and uses it (the install is the module's cost). Each worker's
    tests run in a user's project of their own."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    done = shared / "wheel-env.json"
    with FileLock(str(shared / "wheel-env.lock")):
        if not done.is_file():
            tmp = shared / "wheel-env"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            done.write_text(json.dumps(_environment(tmp)))
    env = {k: Path(v) for k, v in json.loads(done.read_text()).items()}
    project = tmp_path_factory.mktemp("project")   # the user's project, with its own rtl
    (project / "rtl").mkdir(parents=True)
    (project / "rtl" / "__init__.py").write_text("OWNER = 'the user'\n")
    return {**env, "project": project}


def _run(installed, *args, timeout=300):
    """A command in the user's project with only the fresh environment's ``bin`` and the
    system's on PATH (no VERILATOR_ROOT, MAKEFLAGS or build directory of ours)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "AIFABRIC_BUILD", "VERILATOR_ROOT", "MAKEFLAGS",
                        "VIRTUAL_ENV", "SEED")}
    env["PATH"] = os.pathsep.join([str(installed["bin"]), "/usr/local/bin", "/usr/bin", "/bin"])
    return subprocess.run(list(args), cwd=installed["project"], env=env, capture_output=True,
                          text=True, timeout=timeout)


def _site_files(installed) -> set:
    return {p for p in installed["purelib"].joinpath("aifabric").rglob("*")
            if "__pycache__" not in p.parts}


def test_plain_pip_gives_verilog_cosim_and_a_fusesoc_lint_of_the_users_core(installed):
    before = _site_files(installed)
    out = _run(installed, "aifabric", "verilog", "--block", "wwfa", "--param", "n=5")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "lint-clean (verilator -Wall, pyslang)" in out.stdout, out.stdout
    assert (installed["project"] / "build" / "verilog" / "wwfa_n5.v").is_file()

    out = _run(installed, "aifabric", "cosim", "--block", "wwfa", "--param", "n=4",
               "--transactions", "300", "--seed", "5")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "| wwfa | n=4 | 3 |" in out.stdout and "1 of 1 passed" in out.stdout, out.stdout

    # the user's own core: the generator from the cores --cores writes under ./build
    out = _run(installed, "aifabric", "verilog", "--cores")
    assert out.returncode == 0, out.stderr
    cores = installed["project"] / "build" / "fusesoc"
    assert (cores / "generators.core").is_file() and (cores / "fusesoc_generator.py").is_file()
    (installed["project"] / "arb6.core").write_text(
        "CAPI=2:\nname: user:demo:arb6:1.0\n"
        "filesets:\n  gen:\n    depend: [\"aifabric:fusesoc:generators\"]\n"
        "generate:\n  it:\n    generator: aifabric_verilog\n"
        "    parameters: {block: wwfa, n: 6, module: arb6}\n"
        "targets:\n  lint:\n    filesets: [gen]\n    generate: [it]\n    toplevel: arb6\n"
        "    flow: lint\n    flow_options:\n      tool: verilator\n"
        "      verilator_options: [-Wall]\n")
    out = _run(installed, "fusesoc", "--config", "fusesoc.conf", "--cores-root", str(cores),
               "--cores-root", ".", "run", "--target", "lint", "user:demo:arb6")
    assert out.returncode == 0, out.stdout + out.stderr
    (made,) = (installed["project"] / "build").glob("user_demo_arb6*/lint/src/*/arb6.v")
    assert "module arb6(" in made.read_text()
    assert _site_files(installed) == before          # nothing written into the package


def test_the_verilator_command_is_the_packages(installed):
    exe = shutil.which("verilator", path=str(installed["bin"]))
    assert exe is not None and Path(exe).parent == installed["bin"]
    (installed["project"] / "w.v").write_text("module w(input wire [1:0] a, output wire y);\n"
                                              "  assign y = a;\nendmodule\n")
    out = _run(installed, "verilator", "--lint-only", "-Wall", "w.v")
    assert out.returncode != 0 and "%Warning-WIDTH" in out.stderr, out.stdout + out.stderr


def test_the_models_extra_is_named_where_it_is_missing(installed):
    """`pip install aifabric` leaves the system studies' plotting and sweeps out: a command
    that needs them says which extra brings them, in one line, exit code 2."""
    found = _run(installed, str(installed["py"]), "-c", "import matplotlib")
    assert found.returncode != 0                     # the plain install has no matplotlib
    out = _run(installed, "aifabric", "reproduce", "--quick", "--paper", "chronos",
               "--out", "rep")
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.count("\n") == 1 and "pip install 'aifabric[models]'" in out.stderr, \
        out.stderr


def test_the_wheel_installs_one_namespace_only(installed):
    names = zipfile.ZipFile(installed["whl"]).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("aifabric-")}
    assert tops == {"aifabric"}, tops
    # the folders are mapped into the namespace, data files included
    assert "aifabric/rtl/catalog.py" in names
    assert "aifabric/scripts/_cli.py" in names
    assert "aifabric/models/infinitehbd/data/fault_trace.json" in names
    assert {"aifabric/rtl/generators.core", "aifabric/rtl/chronos/wwfa.core",
            "aifabric/rtl/fusesoc_generator.py"} <= set(names)          # FuseSoC library
    # the ASIC flow's Liberty files and their licences
    assert {"aifabric/rtl/asic/lib/sg13g2_stdcell_typ_1p20V_25C.lib.gz",
            "aifabric/rtl/asic/lib/asap7_seq.lib.gz", "aifabric/rtl/asic/lib/LICENSE.sg13g2",
            "aifabric/rtl/asic/lib/LICENSE.asap7", "aifabric/rtl/asic/sta.py"} <= set(names)


def test_the_users_rtl_package_and_aifabric_import_side_by_side(installed):
    code = ("import rtl, aifabric; from aifabric.rtl.chronos.wwfa import WavefrontArbiter; "
            "from aifabric.rtl.catalog import BLOCKS; "
            "v = BLOCKS['wwfa'].verilog({'n': 4}); "
            "print(rtl.OWNER, aifabric.__version__, aifabric.__file__, 'module wwfa_n4' in v)")
    out = _run(installed, str(installed["py"]), "-c", code)
    assert out.returncode == 0, out.stderr
    owner, version, where, has_module = out.stdout.strip().rsplit(" ", 3)
    assert owner == "the user"
    assert version == installed["whl"].name.split("-")[1]
    assert Path(where).is_relative_to(installed["purelib"])      # the wheel, not the checkout
    assert has_module == "True"


def test_the_command_runs_blocks_and_verilog_and_every_help(installed):
    out = _run(installed, "aifabric", "blocks")
    assert out.returncode == 0, out.stderr
    assert "wwfa (chronos)" in out.stdout and "range 2..128" in out.stdout
    out = _run(installed, "aifabric", "verilog", "--block", "wwfa", "--param", "n=4",
               "--out", "gen")
    assert out.returncode == 0, out.stderr
    assert (installed["project"] / "gen" / "wwfa_n4.v").is_file()
    for command in COMMANDS:
        out = _run(installed, "aifabric", command, "--help")
        assert out.returncode == 0, f"aifabric {command} --help: {out.stderr}"
        assert out.stdout.startswith(f"usage: aifabric {command}"), out.stdout[:80]
    bad = _run(installed, "aifabric", "verilog", "--block", "nope")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "nope" in bad.stderr
