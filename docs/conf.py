"""Sphinx configuration: MyST Markdown, built offline (`sphinx-build -W docs docs/_build`).

The generated reference pages under docs/reference/ are written from the code at every
build (docs/_ext/govkit_reference.py) and committed; a test fails when one is stale. The
fragments in docs/_generated/ that other pages include are generated at every build.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))

project = "govkit"
author = "the govkit developers"
from govkit import __version__ as release  # noqa: E402

extensions = ["myst_parser", "govkit_reference"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "_generated"]   # _generated: fragments other pages include
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]   # guide pages start at ## under a page title they share
html_theme = "alabaster"
html_title = f"govkit {release}"
html_static_path = []
# Offline: no intersphinx, no remote images, nothing fetched.
