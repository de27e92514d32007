"""Package faces that cost nothing to import.

Each stage package lists its public names in `__all__` and maps them to the module that
defines them; a name is imported on first use (PEP 562), so importing a package, as the
CLI does at start-up for the defaults and the catalog, loads none of its modules.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_face(package: str, exports: dict[str, str]) -> Callable[[str], object]:
    """A module `__getattr__` for `package`: `exports` maps a public name to the module
    (relative to the package) that defines it."""
    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)
    return __getattr__
