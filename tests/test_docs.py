"""The documentation site (``make docs``): Sphinx builds it with warnings as errors, the block
reference is generated from the registry, and every Python example on its pages runs."""

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.cli import COMMANDS
from aifabric.rtl.catalog import BLOCKS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    # one headline figure drawn (as make reproduce would), the others not yet
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    drawn = tmp_path / "build" / "reproduce" / "railx_fig14a_alltoall.png"
    curve = tmp_path / "build" / "netsim" / "mesh16.png"      # as the netsim page's command
    for path, size in ((drawn, 1), (curve, 2)):
        path.parent.mkdir(parents=True)
        fig = plt.figure(figsize=(size, 1))
        fig.savefig(path)
        plt.close(fig)
    # the BvN engine's cycle distribution as make bench draws it
    from aifabric.scripts.bench.engine import draw_engine_cycles
    cycles = draw_engine_cycles({"params": {"w": 16, "matrices": 2},
                                 "results": [{"n": 16, "cycles": [253, 257]}]},
                                tmp_path / "build" / "bench" / "bvn_engine_cycles.png")
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                          "html", str(DOCS), str(tmp_path / "html")], capture_output=True,
                         text=True, timeout=600,
                         env={**os.environ, "AIFABRIC_BUILD": str(tmp_path / "build")})
    assert out.returncode == 0, out.stderr
    # the reproduction page shows the headline figures: the drawn one as drawn, the others
    # as the placeholder naming the command that draws them
    page = (tmp_path / "html" / "reproduction.html").read_text()
    shown = re.findall(r'<img alt="([\w.-]+\.png)" src="_images/([\w.-]+\.png)"', page)
    names = {a for a, b in shown if a == b}
    assert {"railx_fig14a_alltoall.png", "railx_fig15_allreduce.png",
            "fig6_moe_completion.png", "infinitehbd_fig10_waste_vs_faults.png",
            "railonly_fig3_gpt1t.png", "flexsipac_fig9_scale.png"} <= names, shown
    images = tmp_path / "html" / "_images"
    assert (images / drawn.name).read_bytes() == drawn.read_bytes()
    assert (images / "railx_fig15_allreduce.png").read_bytes() == \
        (DOCS / "_static" / "figure_not_drawn.png").read_bytes()
    # a placeholder has a line under it naming the command that draws it; a drawn one none
    text = re.sub(r"<[^>]+>", "", page)
    assert "Not drawn on this machine yet: make reproduce writes " \
           "build/reproduce/railx_fig15_allreduce.png; the picture above is a placeholder." \
           in text
    assert "writes build/reproduce/railx_fig14a_alltoall.png" not in text
    assert text.count("Not drawn on this machine yet") == len(names) - 1
    # the BvN figures on the Chronos page, the latency curves on the network simulator's
    # (the example sweep's from build/netsim, drawn here; Fig 14's from make reproduce)
    for page, want in (("models/chronos", ["bvn_quantisation.png", "bvn_breakeven.png",
                                           "sec81_volume.png", "sec81_tuning_budget.png"]),
                       ("models/netsim", ["mesh16.png", "railx_fig14a_alltoall.png"])):
        html_page = (tmp_path / "html" / f"{page}.html").read_text()
        shown = re.findall(r'<img alt="([\w.-]+\.png)" src="\.\./_images/([\w.-]+\.png)"',
                           html_page)
        assert [a for a, b in shown if a == b] == want, (page, shown)
    assert (images / "mesh16.png").read_bytes() == curve.read_bytes()
    # the measured figures' page: the engine's cycle distribution from build/bench, and the
    # synthesis and ASIC trends the build draws from the committed records (results/)
    page = (tmp_path / "html" / "figures.html").read_text()
    shown = dict(re.findall(r'<img alt="([\w.-]+\.png)" src="_images/([\w.-]+\.png)"', page))
    assert (images / shown["bvn_engine_cycles.png"]).read_bytes() == cycles.read_bytes()
    for name in ("synth_trend.png", "synth_history.png", "asic_trend.png"):
        drawn_here = (tmp_path / "build" / "records" / name).read_bytes()
        assert (images / shown[name]).read_bytes() == drawn_here, name
        assert drawn_here != (DOCS / "_static" / "figure_not_drawn.png").read_bytes()
    assert "Not drawn on this machine yet" not in re.sub(r"<[^>]+>", "", page)
    assert "Not drawn on this machine yet" not in \
        re.sub(r"<[^>]+>", "", (tmp_path / "html" / "models" / "netsim.html").read_text())
    html = tmp_path / "html" / "blocks"
    for name in BLOCKS:                                      # one page per block
        ref = (html / f"{name}.html").read_text()
        assert 'id="reference"' in ref and "Ports" in ref, name
    text = re.sub(r"<[^>]+>", " ", (html / "wwfa.html").read_text())
    # ports from the signatures, parameter ranges from the constructors
    assert re.search(r"requests\s+in\s+25", text) and re.search(r"n\s+2 \.\. 128\s+5", text)
    # payload layouts with their offsets (the BvN step at N = 6, W = 9: 6 destinations of 3
    # bits, then the connected mask, the weight and last)
    text = re.sub(r"<[^>]+>", " ", (html / "bvn.html").read_text())
    assert re.search(r"steps\.payload\.dest\[0\.\.5\]\s+0\s+3 x 6\s+"
                     r"steps\.payload\.connected\s+18\s+6\s+steps\.payload\.weight\s+24\s+9",
                     text), text[text.find("steps.payload"):][:300]
    for page in ("tutorial", "commands", "models", "models/chronos", "models/netsim",
                 "reproduction", "api", "changelog"):
        assert (tmp_path / "html" / f"{page}.html").is_file(), page
    # no directive or role shown as text: a reST directive a MyST page parsed as Markdown
    # (`.. list-table::`, its `:header-rows:`), an unknown MyST fence or role
    raw = re.compile(r"\.\. [a-z][\w-]*::|:header-rows:|```\{|\{[a-z][\w-]*\}`")
    for page in (tmp_path / "html").rglob("*.html"):
        text = re.sub(r"<[^>]+>", "", page.read_text())
        found = raw.search(text)
        assert found is None, f"{page.name}: {text[max(0, found.start() - 80):found.end() + 80]}"
    # the command reference is each command's parser: every option of every command
    spec = importlib.util.spec_from_file_location("aifabric_docs",
                                                  DOCS / "_ext" / "aifabric_docs.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    text = re.sub(r"<[^>]+>", " ", (tmp_path / "html" / "commands.html").read_text())
    parsers = ext._parsers()
    assert set(parsers) == set(COMMANDS)
    for name, parser in parsers.items():
        section = text[text.index(f"usage: aifabric {name} "):]
        section = section[:section.find("usage: aifabric", 10) % (len(section) + 1)]
        for action in parser._actions:
            for opt in action.option_strings:
                assert opt in section, f"aifabric {name}: {opt} not in the reference"


def test_every_block_has_its_page():
    """docs/blocks/<name>.md for every block of the registry, carrying its own generated
    reference, and listed in the blocks guide (a new block without a page fails here)."""
    guide = (DOCS / "blocks.md").read_text()
    for name in BLOCKS:
        page = DOCS / "blocks" / f"{name}.md"
        assert page.is_file(), f"no page for {name}: add docs/blocks/{name}.md"
        text = page.read_text()
        assert f"```{{aifabric-block}} {name}\n" in text, page
        # on the repository's web view the directive shows as a raw fence: the page's first
        # paragraph says where the rendered page is
        assert f"renders this page with them into `build/docs/blocks/{name}.html`" in \
            text.split("\n\n")[1].replace("\n", " "), page
        assert f"\nblocks/{name}\n" in guide, f"{name} not in the blocks guide's toctree"
    assert sorted(p.stem for p in (DOCS / "blocks").glob("*.md")) == sorted(BLOCKS)
    assert "into `build/docs/commands.html`" in \
        (DOCS / "commands.md").read_text().split("\n\n")[1].replace("\n", " ")


PAGES = sorted(p for p in [ROOT / "README.md", *DOCS.rglob("*.md")] if FENCE.search(p.read_text()))


def test_pages_with_examples_are_found():
    assert {p.name for p in PAGES} >= {"README.md", "tutorial.md", "chronos.md", "railonly.md"}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_python_example_runs(page, tmp_path, monkeypatch):
    """The page's ```python blocks in order, in one namespace (a later block may use an
    earlier one's names), from a scratch directory."""
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"docs_{page.stem}"}
    with _registrations_undone(namespace["__name__"]):
        for k, m in enumerate(FENCE.finditer(page.read_text())):
            line = page.read_text()[:m.start()].count("\n") + 2
            try:
                exec(compile(m.group(1), f"{page.name}:{line}", "exec"), namespace)
            except Exception as e:          # name the example, not only the exception
                raise AssertionError(f"{page.name}, example {k + 1} (line {line}): "
                                     f"{type(e).__name__}: {e}") from e


@contextlib.contextmanager
def _registrations_undone(module: str):
    """A page may register a routing, topology or router with the network simulator
    (docs/adding_a_router.md does): what the page's own code registered is taken out again,
    so a later test in this process sees the registry the package fills. Entries registered
    by a module the page imported stay, as that module stays imported."""
    from aifabric.models.common.netsim import registry
    choices = {kind: dict(entries) for kind, entries in registry._CHOICES.items()}
    try:
        yield
    finally:
        for table, attr in ((registry._TOPOLOGIES, "build"), (registry._ROUTINGS, "compile")):
            for name in [n for n, e in table.items()
                         if getattr(getattr(e, attr), "__module__", None) == module]:
                del table[name]
        for kind, entries in choices.items():
            registry._CHOICES[kind].clear()
            registry._CHOICES[kind].update(entries)


def test_a_block_page_shows_its_measured_hardware_newest_beside_the_previous(tmp_path):
    """The block pages' "Measured" table comes from the committed records: the newest value
    of each instance, the previous record's in brackets where it differs, ASIC per library."""
    import json
    import sys
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    from aifabric_docs import measured_rows
    (tmp_path / "results").mkdir()
    synth = [{"block": "wwfa", "instance": "wwfa_n5", "params": {"n": 5}, "fits": True,
              "slices_comb": 1200, "ffs": 40, "fmax_mhz": 60.0},
             {"block": "wwfa", "instance": "wwfa_n5", "params": {"n": 5}, "fits": True,
              "slices_comb": 1000, "ffs": 40, "fmax_mhz": 81.25},
             {"block": "bvn", "instance": "bvn_n4", "params": {"n": 4}, "fits": True,
              "slices_comb": 7, "ffs": 7, "fmax_mhz": 7.0},
             {"block": "wwfa", "instance": "wwfa_n9", "params": {"n": 9}, "fits": False,
              "lut4": 90000, "slices_comb": None, "ffs": None, "fmax_mhz": None}]
    asic = [{"block": "wwfa", "instance": "wwfa_n5", "params": {"n": 5},
             "libraries": {"sg13g2": {"area_um2": 1234.4, "period_ps": 2000.0,
                                      "period_fo4": 32.39}}}]
    (tmp_path / "results" / "synth.json").write_text(json.dumps({"records": synth}))
    (tmp_path / "results" / "asic.json").write_text(json.dumps({"records": asic}))
    assert measured_rows("wwfa", tmp_path) == [
        ("n=5", "1,000 (1,200)", "40", "81.2 (60.0)", "1,234 / 2,000, 32.4", ""),
        ("n=9", "90,000 LUT4 (Yosys): does not fit", "", "", "", "")]
    assert measured_rows("router", tmp_path) == []
