"""Sphinx configuration of the kit's documentation site (docs/).

Built in CI by .ci/run with `sphinx-build -W --keep-going -n -b html docs <out>`: every warning, a broken
internal link or heading anchor included, fails the build."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # autodoc and sphinx-argparse import the kit from this checkout

project = "Attention course kit"
author = "the course staff"
copyright = "the course staff"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinxarg.ext"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# Markdown links to headings (`security.md#what-is-enforced-and-in-which-mode`) resolve; a link to a page or
# anchor that does not exist is a warning (myst.xref_missing), hence an error in CI.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True  # `suites=SUITES`, not the building machine's absolute path
autodoc_default_options = {"members": False}
# Types from outside the kit (no intersphinx: the build needs no network) and names the kit's own
# signatures use that are not documented here are not link targets.
nitpick_ignore_regex = [
    ("py:class", r"(torch|pathlib|collections|typing|datetime|argparse|concurrent|types)\..*"),
    ("py:class", r"autograder\..*"),
    ("py:class", r"(Path|Any|Optional|Callable|Sequence|Iterator|Iterable|Zygote|Result|Course|Assignment"
                 r"|Release|Scoring|Found|Batch|dt\.datetime|config_mod\..*|late\..*)"),
]

html_theme = "furo"
html_title = "Attention course kit"
html_static_path: list[str] = []
