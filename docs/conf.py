"""Sphinx configuration of the HTML documentation (scripts/build-docs.sh).

The pages are Markdown (MyST), the C API reference is read from the
headers by the ``c-header`` directive (``_ext/c_header.py``) and the Python
API from the docstrings of the installed package (autodoc). The build is
strict: it runs with warnings as errors and with every cross-reference
checked (``nitpicky``), so a broken reference fails it. Nothing is fetched:
no intersphinx, and the few names of other projects are left unlinked
below.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))


def _version() -> str:
    """MAJOR.MINOR.PATCH from include/mpidht.h, where the version is defined."""
    header = (ROOT / "include" / "mpidht.h").read_text(encoding="utf-8")
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"^#define MPIDHT_VERSION_{part} (\d+)$", header, re.M)
        if m is None:
            raise RuntimeError(f"MPIDHT_VERSION_{part} not found in include/mpidht.h")
        parts.append(m.group(1))
    return ".".join(parts)


project = "mpidht"
author = "The mpidht authors"
project_copyright = "2024-2026 The mpidht authors (BSD-3-Clause)"
version = release = _version()

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "c_header"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns: list[str] = []
templates_path: list[str] = []

# Every Markdown heading down to level 3 gets a GitHub-style anchor, so
# that links written for GitHub (page.md#a-heading) resolve here too.
myst_heading_anchors = 3

nitpicky = True
# Names of other projects, which are not linked (no intersphinx: offline):
# C's and MPI's types in the C API, the standard library's enum classes
# the Python enums derive from.
nitpick_ignore = [("c:identifier", name)
                  for name in ("size_t", "uint64_t", "int64_t", "MPI_Comm")]
nitpick_ignore_regex = [("py:class", r"enum\.\w+")]

autodoc_member_order = "bysource"
# The docstrings' "Returns:" sections are prose ("(values, found): an
# array ..."), not "type: description": shown as written.
napoleon_custom_sections = ["Returns"]
# Signatures show names and defaults; the docstrings say what each
# argument and result is. (The annotations, NumPy's ArrayLike above all,
# would show as unions of NumPy's private protocols.)
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "show-inheritance": True}

html_theme = "alabaster"
html_title = f"mpidht {release}"
html_static_path: list[str] = []
html_copy_source = False
html_show_sourcelink = False


# The docstrings write absolute values as |x|, which reST would read as a
# substitution: a bar outside ``literal text`` is taken as a bar.
_LITERAL_OR_BAR = re.compile(r"(``.*?``)|\|")


def _bars_as_text(app: object, what: str, name: str, obj: object, options: object,
                  lines: list[str]) -> None:
    lines[:] = [_LITERAL_OR_BAR.sub(lambda m: m.group(1) or "\\|", line) for line in lines]


# Napoleon reads the text before a colon in an attribute's comment as its
# type; the attributes' comments here are prose ("#: overwrote another key:
# the table was too small"), so they are kept as written.
_ATTRIBUTES: dict[str, list[str]] = {}


def _keep_attribute(app: object, what: str, name: str, obj: object, options: object,
                    lines: list[str]) -> None:
    if what == "attribute":
        _ATTRIBUTES[name] = list(lines)


def _restore_attribute(app: object, what: str, name: str, obj: object, options: object,
                       lines: list[str]) -> None:
    if what == "attribute" and name in _ATTRIBUTES:
        lines[:] = _ATTRIBUTES.pop(name)


def setup(app: Sphinx) -> None:
    # Napoleon's handler runs at the default priority, 500.
    app.connect("autodoc-process-docstring", _keep_attribute, priority=400)
    app.connect("autodoc-process-docstring", _restore_attribute, priority=600)
    app.connect("autodoc-process-docstring", _bars_as_text, priority=700)
