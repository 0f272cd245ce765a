"""Sphinx configuration of gpuarr's documentation (docs/about.md says how to build it).

The build reads nothing from the network: no intersphinx, the theme (furo) comes from pip.
The API reference is generated from the package's exports before Sphinx reads the sources
(docs/_ext/gpuarr_apiref.py), so a new public name is documented with no edit here.
"""

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))  # the repository's gpuarr when it is not installed

# Importing gpuarr lists no devices; the examples run in tests/test_docs.py, not here.
os.environ.setdefault("GPUARR_FLAGS", "print_active_device=False")

import gpuarr_apiref  # noqa: E402

import gpuarr  # noqa: E402

project = "gpuarr"
author = "the gpuarr authors"
copyright = "the gpuarr authors, MIT license"
release = version = gpuarr.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "README.md"]

# Markdown: the pages under docs/ stay markdown (myst-parser); headings get anchors so that
# links such as [flags](getting_started.md#flags) resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# Docstrings are numpy style (napoleon) and write code in single backticks, as markdown does.
default_role = "code"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
autosummary_generate = False  # gpuarr_apiref writes the pages
autodoc_member_order = "groupwise"
add_module_names = False
# docs/benchmarks.md's tables sit under H4 headings below H2 ones; myst reports the jump.
suppress_warnings = ["myst.header"]

html_theme = "furo"
html_title = f"gpuarr {release}"
html_static_path = []


def _generate_reference(app):
    gpuarr_apiref.write(app.srcdir)


TOPICS_MARKER = "<!-- gpuarr-docs: topics -->"


def _topics(app, docname, source):
    """Put every top-level page of docs/ that index.md's toctrees do not name under
    "Topics", so a page another change adds joins the site by itself."""
    if docname != root_doc or TOPICS_MARKER not in source[0]:
        return
    named = set(re.findall(r"^([\w/.-]+)$", source[0], re.M))
    pages = sorted(p.stem for p in HERE.glob("*.md")
                   if p.stem not in named and p.stem not in (root_doc, "README"))
    head = "```{toctree}\n:caption: Topics\n:maxdepth: 1\n:hidden:\n\n"
    toctree = head + "\n".join(pages) + "\n```\n"
    source[0] = source[0].replace(TOPICS_MARKER, toctree)


def setup(app):
    app.connect("autodoc-process-docstring", gpuarr_apiref.process_docstring, priority=400)
    # Before autosummary and the reading of sources.
    app.connect("builder-inited", _generate_reference, priority=100)
    app.connect("source-read", _topics)
    # index.md's Topics depend on which pages exist: read it again at every build.
    app.connect("env-get-outdated", lambda app, env, added, changed, removed: [root_doc])
