"""The package's layout read from its source: the module import graph (every ``import`` of an
``aifabric`` module, relative ones and those inside functions included) has no cycle, and no
system package under ``models/`` reaches into another's private names."""

import ast
import functools
import os
import re
import tomllib
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# import name -> folder, from pyproject's package-dir (aifabric.rtl = rtl/, ...)
PACKAGE_DIR = PYPROJECT["tool"]["setuptools"]["package-dir"]


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its ``__init__.py``)."""
    out = {}
    for name, folder in PACKAGE_DIR.items():
        base = ROOT / folder
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("").parts
            if any(not p.isidentifier() for p in rel):
                continue
            if rel[-1] == "__init__":
                rel = rel[:-1]
            out[".".join((name, *rel))] = path
    return out


MODULES = modules()


def imports(module: str, path: Path) -> list[tuple[str, str, int]]:
    """``(imported module, imported name or "", line)`` for every import statement of the
    file that names a module of the package; ``from m import n`` names ``m.n`` where that
    is a module, else ``m`` (and ``n`` as the name)."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                target = a.name
                while target and target not in MODULES:
                    target = target.rpartition(".")[0]
                if target:
                    found.append((target, "", node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            if not source.startswith("aifabric"):
                continue
            for a in node.names:
                if f"{source}.{a.name}" in MODULES:
                    found.append((f"{source}.{a.name}", "", node.lineno))
                elif source in MODULES:
                    found.append((source, a.name, node.lineno))
    return found


def import_graph() -> nx.DiGraph:
    """The graph of every import (a fresh copy: a test may add to it)."""
    return _import_graph().copy()


@functools.cache
def _import_graph() -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(MODULES)
    for module, path in MODULES.items():
        for target, _, line in imports(module, path):
            if target != module:
                g.add_edge(module, target, line=line)
    return g


def cycles(g: nx.DiGraph) -> list[str]:
    """One cycle of every strongly connected component that has one, each edge with the line
    of its import: ``a (12) -> b (30) -> a``."""
    out = []
    for scc in nx.strongly_connected_components(g):
        if len(scc) < 2:
            continue
        cyc = nx.find_cycle(g.subgraph(scc))
        out.append(" -> ".join(f"{a} (line {g.edges[a, b]['line']})" for a, b in cyc)
                   + f" -> {cyc[0][0]}")
    return sorted(out)


def test_the_graph_sees_every_kind_of_import():
    """The reader resolves what the checks below rely on: relative imports of a module and
    of a name, absolute ones, and imports inside functions."""
    g = import_graph()
    assert len(MODULES) > 100 and "aifabric.models.common.netsim.registry" in MODULES
    assert MODULES["aifabric.models"] == ROOT / "models" / "__init__.py"
    # sim.py: `from . import registry` and `from .network import Network, ...` at the top
    assert g.has_edge("aifabric.models.common.netsim.sim", "aifabric.models.common.netsim.registry")
    assert g.has_edge("aifabric.models.common.netsim.sim", "aifabric.models.common.netsim.network")
    # reference.py imports the wave-front arbiter inside a method, two levels up
    assert g.has_edge("aifabric.models.common.netsim.reference", "aifabric.models.common.wwfa")
    # the chronos package's reproduce() imports its experiments inside the function
    assert g.has_edge("aifabric.models.chronos", "aifabric.models.chronos.experiments")
    assert g.has_edge("aifabric.models.chronos.experiments", "aifabric.models.common.records")
    # and a cycle, when there is one, is found and named
    g.add_edge("aifabric.models.common.records", "aifabric.models.chronos.experiments", line=1)
    assert any("aifabric.models.common.records (line 1) -> aifabric.models.chronos.experiments"
               in c for c in cycles(g))


def test_no_import_cycle():
    """A cycle hidden by an import inside a function still ties the two modules together:
    neither can be read, tested or moved without the other."""
    assert cycles(import_graph()) == []


PAPERS = sorted(p.parent.name for p in (ROOT / "models").glob("*/__init__.py")
                if p.parent.name != "common")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports() -> list[str]:
    """Imports by a module of one system package (``models/<paper>/``) of another system
    package's private module or name (one starting with ``_``)."""
    out = []
    for module, path in MODULES.items():
        parts = module.split(".")
        if parts[:2] != ["aifabric", "models"] or len(parts) < 3 or parts[2] not in PAPERS:
            continue
        for target, name, line in imports(module, path):
            t = target.split(".")
            if t[:2] != ["aifabric", "models"] or len(t) < 3 or t[2] not in PAPERS \
                    or t[2] == parts[2]:
                continue
            if any(_private(p) for p in t[3:]) or _private(name):
                out.append(f"{module} (line {line}) imports "
                           f"{target}{'.' + name if name else ''}")
    return sorted(out)


def test_papers_import_no_other_papers_private_names():
    """What two systems share is public and lives in models/common; a name with a leading
    underscore is its own package's business."""
    assert PAPERS == ["chronos", "flexsipac", "infinitehbd", "railonly", "railx"]
    assert private_imports() == []


def test_models_common_imports_no_system_package():
    """The shared models take a system's specifics as arguments or through a registry
    (docs/layout.md); they never import a system package."""
    found = [f"{m} imports {t}" for m, path in MODULES.items()
             if m.startswith("aifabric.models.common")
             for t, _, _ in imports(m, path)
             if any(t.startswith(f"aifabric.models.{p}") for p in PAPERS)]
    assert found == []


def package_folders() -> dict[str, str]:
    """Every package folder of the tree (one with an ``__init__.py`` under a mapped root):
    import name -> path from the repository root, with a trailing slash."""
    out = {}
    for name, folder in PACKAGE_DIR.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            out[".".join((name, *rel))] = init.parent.relative_to(ROOT).as_posix() + "/"
    return out


LAYOUT = ROOT / "docs" / "layout.md"
# the folders whose every module docs/layout.md names (a system package's modules are on its
# page under docs/models/, an area's blocks on docs/blocks/)
LISTED_MODULES = ("aifabric", "rtl", "rtl/asic", "models/common", "models/common/netsim",
                  "cosim", "scripts", "scripts/bench")


def unnamed(layout: str) -> list[str]:
    """Package folders and modules of :data:`LISTED_MODULES` that ``layout`` does not name in
    backquotes (a folder by its path, ``models/common/netsim/``; a module by its name, or by
    a pattern such as ``test_<block>.py`` or ``bench_*``)."""
    quoted = set(re.findall(r"`([^`\n]+)`", layout))
    # a pattern names modules by a prefix: test_<block>.py, bench_* (not <block>.py)
    parts = [re.split(r"<[^>]*>|\*", q) for q in quoted]
    patterns = [re.compile(".+".join(map(re.escape, p)) + "$") for p in parts
                if len(p) > 1 and p[0]]
    missing = [f"package folder {path}" for path in package_folders().values()
               if path not in quoted]
    for folder in LISTED_MODULES:
        for path in sorted((ROOT / folder).glob("*.py")):
            stem = path.stem
            if stem == "__init__" or stem in quoted or path.name in quoted or \
                    any(p.match(stem) or p.match(path.name) for p in patterns):
                continue
            missing.append(f"module {folder}/{path.name}")
    return missing


def package_folder(name: str) -> Path:
    """The folder of a dotted package name, through pyproject's package-dir."""
    root = max((n for n in PACKAGE_DIR if name == n or name.startswith(n + ".")), key=len)
    return ROOT / PACKAGE_DIR[root] / Path(*name[len(root):].split(".")[1:])


def test_every_package_is_declared_in_pyproject():
    """pyproject lists its packages by name (no discovery): a package folder left out would
    be missing from the wheel, a stale entry names a folder that is gone."""
    declared = PYPROJECT["tool"]["setuptools"]["packages"]
    folders = package_folders()
    assert sorted(set(folders) - set(declared)) == []
    for name in declared:                        # data packages have no __init__.py
        path = package_folder(name)
        assert path.is_dir(), f"pyproject lists {name}, but {path} is not a folder"


def test_every_package_data_pattern_names_a_file():
    """A package-data entry that matches no file ships nothing: a stale or premature entry
    (a table a package does not keep) fails here, and so does a planted one."""
    def stale(data: dict) -> list[str]:
        out = []
        for name, patterns in data.items():
            out += [f"{name}: {p}" for p in patterns if not any(package_folder(name).glob(p))]
        return out
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    assert stale(data) == []
    assert stale({**data, "aifabric.models.railx": ["no_such_table.json"]}) == \
        ["aifabric.models.railx: no_such_table.json"]


def test_the_layout_page_names_every_package_and_module():
    layout = LAYOUT.read_text()
    assert unnamed(layout) == []
    # and the check sees a deletion: drop the netsim row or the word batch
    row = next(line for line in layout.splitlines() if line.startswith("| `models/common/netsim/`"))
    assert "package folder models/common/netsim/" in unnamed(layout.replace(row, ""))
    assert unnamed(layout.replace("`batch`", "batch")) == ["module cosim/batch.py",
                                                            "module scripts/bench/batch.py"]


def unlisted_system_modules(page_of) -> list[str]:
    """Modules of a system package (``models/<paper>/*.py``) its page
    (``page_of(paper)``, the text of ``docs/models/<paper>.md``) does not name in backquotes,
    by file name (``bvn.py``, or within ``models/<paper>/bvn.py``)."""
    missing = []
    for paper in PAPERS:
        names = {q.rpartition("/")[2] for q in re.findall(r"`([^`\n]+)`", page_of(paper))}
        for path in sorted((ROOT / "models" / paper).glob("*.py")):
            if path.name != "__init__.py" and path.name not in names:
                missing.append(f"models/{paper}/{path.name}")
    return missing


def test_every_system_module_is_named_on_its_page():
    """docs/layout.md leaves a system package's modules to its page under docs/models/
    (see LISTED_MODULES): each page names every module of its package."""
    def page(paper):
        return (ROOT / "docs" / "models" / f"{paper}.md").read_text()
    assert unlisted_system_modules(page) == []
    # and the check sees a deletion: the row of RailX's router model taken out
    text = page("railx")
    row = next(line for line in text.splitlines() if line.startswith("| `router.py`"))
    assert unlisted_system_modules(lambda p: text.replace(row, "") if p == "railx"
                                   else page(p)) == ["models/railx/router.py"]


def rtl_reached_from(g: nx.DiGraph, module: str) -> list[str]:
    """The modules of ``aifabric.rtl`` that ``module`` imports, directly or through others."""
    return sorted(m for m in nx.descendants(g, module) if m.startswith("aifabric.rtl"))


def test_the_codec_reads_no_rtl_layout():
    """cosim/codec.py encodes and decodes from the documented bit layouts, the independent
    check of the RTL's own (tests/test_codec.py compares the two): it must not reach any
    module of rtl/, or a wrong layout would check itself."""
    g = import_graph()
    assert rtl_reached_from(g, "aifabric.cosim.codec") == []
    # and the check sees a layout reached through another module
    g.add_edge("aifabric.cosim.codec", "aifabric.cosim.stats", line=1)
    g.add_edge("aifabric.cosim.stats", "aifabric.rtl.optics.wss", line=1)
    assert "aifabric.rtl.optics.wss" in rtl_reached_from(g, "aifabric.cosim.codec")


GUIDES = ("adding_a_block.md", "adding_a_model.md", "adding_a_router.md")
# files a guide's worked example creates: not in the tree, and must not be
EXAMPLE_FILES = {"rtl/myarea/echo.py"}


@functools.cache
def file_names() -> frozenset[str]:
    """The names of the files and folders of the tree (not the build's, git's or the venv's)."""
    names = set()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in (".git", ".venv", "build")]
        names.update(dirs, files)
    return frozenset(names)


def missing_files(text: str) -> list[str]:
    """Files and folders a page names in backquotes that the tree lacks: a path with a
    folder (``cosim/testbench.py``, ``models/common/``) from the repository's root, a bare
    file name (``registry.py``) anywhere in it; names with placeholders (``<block>``,
    ``bench_*``) are patterns, not files."""
    tree = file_names()
    out = []
    for q in sorted(set(re.findall(r"`([^`\n]+)`", text))):
        if not re.fullmatch(r"[\w./-]+", q) or not (
                "/" in q or re.search(r"\.(py|md|toml|json|tsv|yaml|core)$", q)):
            continue
        path = q.rstrip("/")
        if "/" in path and not (ROOT / path).exists() or "/" not in path and path not in tree:
            out.append(q)
    return out


def test_the_guides_name_only_files_in_the_tree():
    """The adding-a-... pages walk a newcomer through the files to read and to copy: each
    file or folder they name is there (a file moved or renamed fails here)."""
    for guide in GUIDES:
        text = (ROOT / "docs" / guide).read_text()
        assert sorted(set(missing_files(text)) - EXAMPLE_FILES) == [], guide
    assert not any((ROOT / f).exists() for f in EXAMPLE_FILES)
    # and the check sees a renamed file and a removed folder
    assert missing_files("read `cosim/testbench2.py` and `kernel2.py`, not `models/gone/`") \
        == ["cosim/testbench2.py", "kernel2.py", "models/gone/"]
    assert missing_files("`cosim/testbench.py`, `kernel.py`, `test_<block>.py`") == []
