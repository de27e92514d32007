"""docs/_ext/govkit_reference.py, the docs build's generator of reference pages and of the
layout page's stages and import graph, loaded as a module for the tests that check them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext" / "govkit_reference.py"


def load_reference():
    spec = importlib.util.spec_from_file_location("govkit_reference", EXT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
