"""The block registry's naming rule: a block called ``name`` is ``rtl/<area>/<name>.py``
(its component defined there), has its golden model ``models/<area>/<name>.py`` (or the
module the registry names) and its testbench ``cosim/test_<name>.py``, or names the block
whose testbench covers it."""

from pathlib import Path

import pytest

from aifabric.rtl.catalog import BLOCKS

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_block_files_follow_the_naming_rule(name):
    block = BLOCKS[name]
    module = block.component.__module__.split(".")
    assert module[:2] == ["aifabric", "rtl"] and module[-1] == name, \
        f"{name}: component defined in {block.component.__module__}"
    area = module[2]
    assert (ROOT / "rtl" / area / f"{name}.py").is_file()
    model = ROOT.joinpath(*block.model_module.split(".")[1:]).with_suffix(".py")
    assert model.is_file(), f"{name}: no golden model {block.model_module}"
    assert (ROOT / "cosim" / "formal" / f"{name}.py").is_file() == block.formal, \
        f"{name}: formal={block.formal} in the registry, harness file disagrees"
    if block.cosim_in is None:
        assert (ROOT / "cosim" / f"test_{name}.py").is_file(), f"{name}: no testbench"
    else:
        host = BLOCKS[block.cosim_in]
        assert host.cosim_in is None and (ROOT / "cosim" / f"test_{host.name}.py").is_file()


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_ci_budgets_name_parameter_sets_the_block_has(name):
    """Each CI transaction budget matches at least one co-simulated parameter set (a budget
    left behind by a renamed parameter would silently fall back to the full run)."""
    block = BLOCKS[name]
    sets = block.params if block.ci_params is None else block.ci_params
    for match, count in block.ci_transactions:
        assert isinstance(count, int) and count > 0
        assert any(block.ci_budget(p) == count and all(p.get(k) == v for k, v in match.items())
                   for p in sets), f"{name}: budget {match} matches no parameter set"


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_default_parameters_validate(name):
    block = BLOCKS[name]
    for params in block.params + block.synth_params:
        block.validate(params)


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_the_registrys_ranges_are_the_components(name):
    """Each range in a block's entry is the one its component enforces: at the first default
    set, every ranged parameter at its low and high bound passes the range check, one below
    and one above (and a bool) the constructor itself refuses, naming the parameter, and
    :meth:`Block.validate` refuses with the one-line range message before building."""
    from aifabric.rtl._util import not_elaborated
    block = BLOCKS[name]
    base = dict(block.params[0])
    assert set(block.ranges) <= set(block.param_names)
    for param in block.ranges:
        low, high = block.range_of(param, base)
        for ok in (low, high):
            try:
                not_elaborated(block.component(**{**base, param: ok}))
            except ValueError as e:     # another rule (the mesh's k against its dst_width)
                assert f"Parameter '{param}' must be in" not in str(e)
        for bad in (low - 1, high + 1):
            msg = f"Parameter '{param}' must be in {low}..{high}, not {bad}"
            with pytest.raises(ValueError) as own:
                block.component(**{**base, param: bad})
            # (the mesh checks its dst_width against k before the router's range)
            assert str(own.value).startswith(f"Parameter '{param}' must ")
            with pytest.raises(ValueError) as checked:
                block.validate({**base, param: bad})
            assert str(checked.value) == msg
        with pytest.raises(TypeError, match=f"Parameter '{param}' must be an int"):
            block.validate({**base, param: True})


def test_a_dependent_bound_follows_the_parameter_it_depends_on():
    wss, bvn = BLOCKS["wss"], BLOCKS["bvn"]
    base = dict(wss.params[0])
    top = (1 << 9) - 1
    wss.validate({**base, "timer_bits": 9, "settle": top})
    with pytest.raises(ValueError, match=f"'settle' must be in 1..{top}, not {top + 1}"):
        wss.validate({**base, "timer_bits": 9, "settle": top + 1})
    # the bound's own parameter out of range is named first, not the dependent one
    with pytest.raises(ValueError, match="'timer_bits' must be in 2..32"):
        wss.validate({**base, "timer_bits": 33, "settle": 0})
    with pytest.raises(ValueError, match="'rows' must be in 1..12, not 13"):
        bvn.validate({"n": 12, "w": 32, "rows": 13})


def test_generated_verilog_carries_version_revision_and_parameters(tmp_path):
    import re
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "aifabric", "verilog", "--block", "bvn",
                          "--param", "n=4", "--param", "w=8", "--no-lint", "--out",
                          str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    head = (tmp_path / "bvn_n4_w8.v").read_text().splitlines()[:3]
    version = re.search(r'^version = "(.+)"', (ROOT / "pyproject.toml").read_text(),
                        re.M).group(1)
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    assert f"aifabric {version} (source {rev}" in head[1], head
    assert "parameters n=4, w=8." in head[1], head
    assert head[2].endswith("--block bvn --param n=4 --param w=8`."), head


def test_one_resolution_of_parameters_for_the_api_the_cli_and_fusesoc(tmp_path):
    """Block.resolve: the first default set with the caller's values changed, checked; the
    Python API takes the same partial sets as the command line and the FuseSoC generator."""
    from aifabric.rtl.fusesoc_generator import generate
    from aifabric.scripts._cli import UsageError, selected

    router = BLOCKS["router"]
    want = {**router.params[0], "ports": 6, "vcs": 3}
    assert router.resolve({"ports": 6, "vcs": 3}) == want
    assert router.resolve() == router.params[0]
    with pytest.raises(TypeError, match=r"^router: unknown parameter 'port'; parameters are "):
        router.resolve({"port": 6})
    with pytest.raises(ValueError, match=r"^wwfa: .*'n' must be in 2\.\.128, not 500"):
        BLOCKS["wwfa"].resolve({"n": 500})
    with pytest.raises(TypeError, match="must be a mapping"):
        BLOCKS["wwfa"].resolve([("n", 4)])
    # the API: a partial set (was: TypeError, missing keyword-only arguments)
    text = BLOCKS["wwfa"].verilog({"n": 3})
    assert "module wwfa_n3(" in text
    # the command line: the same set, and a repeated --param is refused
    class Args:
        block, param = ["router"], ["ports=6", "vcs=3"]
    assert selected(Args()) == [(router, want)]
    Args.param = ["ports=6", "ports=7"]
    with pytest.raises(UsageError, match=r"--param ports is given twice \(ports=6 and ports=7\)"):
        selected(Args())
    # the FuseSoC generator: a partial set of the WSS controller, named in the file's header
    wss = BLOCKS["wss"]
    generate({"block": "wss", "ports": 5, "module": "wss5"}, "user:demo:wss5:1.0", tmp_path)
    header = (tmp_path / "wss5.v").read_text().splitlines()[1]
    assert ", ".join(f"{k}={v}" for k, v in wss.resolve({"ports": 5}).items()) in header
    assert f"wavelengths={wss.params[0]['wavelengths']}" in header


@pytest.mark.parametrize("name", list(BLOCKS))
def test_every_integer_parameter_has_its_range(name):
    """An integer parameter of a block (as its first default set or its constructor's default
    gives it) has a range in the block's entry: validation and ``aifabric blocks`` read the
    ranges from there, so one left out is checked only when the component is built."""
    import inspect
    block = BLOCKS[name]
    defaults = {p.name: p.default for p in
                inspect.signature(block.component.__init__).parameters.values()
                if p.default is not inspect.Parameter.empty}
    given = {**defaults, **block.params[0]}
    ints = {k for k in block.param_names
            if isinstance(given.get(k), int) and not isinstance(given.get(k), bool)}
    assert ints <= set(block.ranges), sorted(ints - set(block.ranges))


@pytest.mark.parametrize("cached", [False, True])
def test_a_command_builds_its_component_once(tmp_path, monkeypatch, cached):
    """``aifabric verilog --block ... --param ...`` and the FuseSoC generator build the
    component once: the one that validated the set is converted and its ports listed for the
    wave file (was four times: the command's check, the API's check, the conversion, the
    wave file). Also when the Verilog comes from the cache, which converts nothing."""
    import functools

    from aifabric.rtl.fusesoc_generator import generate
    from aifabric.scripts import generate_verilog

    cls = BLOCKS["wwfa"].component
    built = []
    init = cls.__init__

    @functools.wraps(init)
    def counting(self, *args, **kwargs):
        built.append(kwargs)
        init(self, *args, **kwargs)

    from aifabric.rtl import verilog
    monkeypatch.setattr(verilog, "BUILD", tmp_path / "build")   # an empty Verilog cache
    monkeypatch.setattr(cls, "__init__", counting)
    if cached:          # the same set once before: the cache then holds its Verilog
        assert generate_verilog.main(["--block", "wwfa", "--param", "n=6", "--no-lint",
                                      "--out", str(tmp_path / "first")]) == 0
    built.clear()
    assert generate_verilog.main(["--block", "wwfa", "--param", "n=6", "--no-lint",
                                  "--out", str(tmp_path / "v")]) == 0
    assert (tmp_path / "v" / "wwfa_n6.v").is_file() and (tmp_path / "v" / "wwfa_n6.gtkw").is_file()
    assert len(built) == 1, built
    built.clear()
    generate({"block": "wwfa", "n": 6, "module": "arb6"}, "user:demo:arb6:1.0", tmp_path)
    assert "module arb6(" in (tmp_path / "arb6.v").read_text()
    assert len(built) == 1, built
