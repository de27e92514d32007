"""Default lint options from the project's configuration, so a repository says once how its
documents are linted (target, rules, thresholds, format) instead of on every command line.

    # govkit.toml                     # or pyproject.toml
    [lint]                            [tool.govkit.lint]
    target = "cyclone"                target = "cyclone"
    ignore = ["GK213"]                ignore = ["GK213"]

Read from the working directory, as `govkit.toml`'s `[[profile]]` tables are
(govkit.catalog.profiles_file): its `govkit.toml`, else its `pyproject.toml` if that has a
`[tool.govkit]` table. Only the lint table is read here; the file's other tables belong to
other commands (but its `target` is `validate`'s and `sign`'s default too: one verdict per
target). An option given on the command line wins over the file; a key the lint
table should not have, or a value of the wrong kind, is one line naming the file and the
key (exit 2), never silently ignored.
"""

from __future__ import annotations

from pathlib import Path

from govkit.catalog.targets import DEFAULT_TARGET, TARGETS
from govkit.check.vocabulary import (
    DEFAULT_FAIL_ON,
    DEFAULT_OUTPUT_FORMAT,
    MAX_WARN_DAYS,
    OUTPUT_FORMATS,
    SEVERITIES,
)
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import quote_value
from govkit.common.inputs import read_input
from govkit.pki.vocabulary import DEFAULT_WARN_DAYS

__all__ = ["LINT_DEFAULTS", "find_config", "lint_config", "lint_settings",
           "lint_target"]

MAX_CONFIG_BYTES = 1 << 20
# Every key of the lint table, with the command line's default.
LINT_DEFAULTS: dict[str, object] = {
    "target": DEFAULT_TARGET, "warn-days": DEFAULT_WARN_DAYS, "fail-on": DEFAULT_FAIL_ON,
    "select": [], "ignore": [], "output-format": DEFAULT_OUTPUT_FORMAT,
}
_CHOICES = {"target": tuple(TARGETS), "fail-on": SEVERITIES, "output-format": OUTPUT_FORMATS}


def _table(path: Path) -> dict | None:
    """The govkit table of `path` ([tool.govkit] in a pyproject.toml), None if it has none."""
    import tomllib  # only where there is a configuration file (start-up: issue 47)

    from govkit.common.toml_text import parse_toml
    try:
        doc = parse_toml(read_input(path, MAX_CONFIG_BYTES, "configuration file")
                         .decode("utf-8"), str(path))
    except UnicodeDecodeError:
        raise GovkitError(f"{path}: not UTF-8 text", EXIT_USAGE) from None
    except tomllib.TOMLDecodeError as e:
        raise GovkitError(f"{path}: not valid TOML: {e}", EXIT_USAGE) from None
    if path.name == "pyproject.toml":
        tool = doc.get("tool")
        return tool.get("govkit") if isinstance(tool, dict) else None
    return doc


def find_config(directory: Path) -> tuple[Path, dict] | None:
    """The configuration file of `directory` and its govkit table, if it has one."""
    for name in ("govkit.toml", "pyproject.toml"):
        path = directory / name
        if path.is_file():
            table = _table(path)
            if table is not None:
                return path, table
    return None


def _checked(path: Path, section: str, key: str, value):
    where = f"{path}: [{section}] {key}"
    default = LINT_DEFAULTS[key]
    if isinstance(default, list):
        if isinstance(value, str):
            value = [value]
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise GovkitError(f"{where}: expected a list of rule ids or names", EXIT_USAGE)
        return value
    if isinstance(default, int):
        if not (isinstance(value, int) and not isinstance(value, bool)
                and 0 <= value <= MAX_WARN_DAYS):
            raise GovkitError(f"{where}: expected a whole number of days from 0 to "
                              f"{MAX_WARN_DAYS}", EXIT_USAGE)
        return value
    if not isinstance(value, str) or value not in _CHOICES[key]:
        raise GovkitError(f"{where}: expected one of {', '.join(_CHOICES[key])}, got "
                          f"{quote_value(str(value))}", EXIT_USAGE)
    return value


def lint_config(directory: Path) -> tuple[Path | None, dict]:
    """The lint options `directory`'s configuration sets (checked), and its path."""
    found = find_config(directory)
    if found is None:
        return None, {}
    path, table = found
    section = "tool.govkit.lint" if path.name == "pyproject.toml" else "lint"
    lint = table.get("lint", {})
    if not isinstance(lint, dict):
        raise GovkitError(f"{path}: [{section}]: expected a table", EXIT_USAGE)
    out = {}
    for key, value in lint.items():
        if key not in LINT_DEFAULTS:
            raise GovkitError(f"{path}: [{section}]: unknown key {quote_value(key)} (known: "
                              f"{', '.join(LINT_DEFAULTS)})", EXIT_USAGE)
        out[key] = _checked(path, section, key, value)
    return path, out


def lint_settings(given: dict, directory: Path) -> dict:
    """Every lint option: what the command line gave (None: not given), else what the
    configuration of `directory` says, else the default."""
    _, config = lint_config(directory)
    return {key: given[key] if given.get(key) not in (None, [], ()) else config.get(key, default)
            for key, default in LINT_DEFAULTS.items()}


def lint_target(given: str | None, directory: Path) -> str:
    """`validate --target` and `sign --target`: as given, else the lint table's target,
    else the default: the target `govkit lint` uses there, so the three commands give one
    verdict."""
    return lint_settings({"target": given}, directory)["target"]
