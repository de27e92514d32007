"""Where govkit's non-Python parts live.

In the repository `templates/` and `schemas/` sit at the top level (beside `govkit/`); a
wheel carries them inside the package (pyproject.toml maps them to `govkit.templates` and
`govkit.schemas`). The installed copy is used when present, else the checkout's.
"""

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def _resource_dir(name: str) -> Path:
    installed = _PACKAGE / name
    return installed if installed.is_dir() else _PACKAGE.parent / name


TEMPLATES_DIR = _resource_dir("templates")
SCHEMAS_DIR = _resource_dir("schemas")
# The JSON Schema (draft 2020-12) of results.json (bench) and of each command's --json
# output: COMMAND.schema.json describes {"schema": "govkit.COMMAND/N", ...}.
JSON_SCHEMAS_DIR = SCHEMAS_DIR / "json"
# The XSD of each document kind (govkit.common.findings.DocumentKind values).
SCHEMA_FILES = {"governance": "governance.xsd", "permissions": "permissions.xsd"}
DATA_DIR = _PACKAGE / "catalog" / "data"


def user_cache_dir() -> Path:
    """govkit's cache of things it can make again (the runners' compiled programs, the
    templates' compiled code): `$XDG_CACHE_HOME/govkit`, by default `~/.cache/govkit`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "govkit"
