"""The package as a user meets it: the wheel installed into a fresh virtual environment, in a
project that has its own ``rtl`` package (the name aifabric's folder has in the repository).

The fresh environment gets aifabric's dependencies from this one through a ``.pth`` line (a
path entry, so this environment's editable aifabric is not visible there); aifabric itself
comes only from the wheel.
"""

import os
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from aifabric.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--wheel-dir", str(tmp / "dist"), str(ROOT)], check=True,
                   capture_output=True, timeout=300)
    whl = next((tmp / "dist").glob("aifabric-*.whl"))
    env_dir = tmp / "env"
    venv.create(env_dir, with_pip=False)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True,
                             check=True).stdout.strip()
    # the dependencies: this environment's site-packages as a plain path entry
    Path(purelib, "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    # this pip installs for the fresh interpreter (its console script, its site-packages)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet",
                    "--no-deps", "--no-compile", str(whl)], check=True,
                   capture_output=True, timeout=300)
    project = tmp / "project"                      # the user's project, with its own rtl
    (project / "rtl").mkdir(parents=True)
    (project / "rtl" / "__init__.py").write_text("OWNER = 'the user'\n")
    return {"whl": whl, "py": py, "bin": env_dir / "bin", "purelib": Path(purelib),
            "project": project}


def _run(installed, *args, timeout=120):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AIFABRIC_BUILD")}
    env["PATH"] = f"{installed['bin']}{os.pathsep}{env['PATH']}"
    return subprocess.run(list(args), cwd=installed["project"], env=env, capture_output=True,
                          text=True, timeout=timeout)


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
