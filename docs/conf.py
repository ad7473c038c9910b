"""Sphinx configuration of aifabric's documentation (``make docs``: build/docs/index.html)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

from aifabric import __version__  # noqa: E402

project = "aifabric"
author = "the aifabric developers"
copyright = "2026, the aifabric developers"
version = release = __version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "aifabric_docs"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_generated"]
myst_heading_anchors = 3
napoleon_numpy_docstring = True
napoleon_google_docstring = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
html_theme = "alabaster"
html_title = f"aifabric {version}"
