"""Your own profiles as data: a TOML file of `[[profile]]` tables with the fields of the
catalog table (govkit.catalog.profiles), given with `--profiles FILE` or found as the
`[[profile]]` tables of `govkit.toml` in the working directory.

    [[profile]]
    name = "sros2_like"                      # required; a file name: letters, digits _ . -
    title = "sros2's protection kinds"       # optional (default: the name)
    allow_unauthenticated_participants = false          # required, true or false
    rtps_protection_kind = "ENCRYPT"                    # required, each a ProtectionKind
    metadata_protection_kind = "ENCRYPT"
    data_protection_kind = "ENCRYPT"                    # NONE, SIGN or ENCRYPT
    alias = "..."                            # optional: another name it answers to
    perftest_governance_file = "..."         # optional: RTI Perftest's file name for it

Every field is checked on load; each bad one is one line FILE:LINE: ... (exit 2), all of
them at once. A profile's other settings are the catalog's common ones (COMMON_SETTINGS),
as for every catalog profile. `use_profiles` then makes them known to every command in
this process, wherever a catalog name is taken.

tomllib keeps no positions: the lines come from a scan of the file for `[[profile]]`
headers and `key =` lines (good for every file a person writes; a key inside a multi-line
string could mislead it, and then the line shown is the table's).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from govkit.catalog.profiles import PROFILES, PROTECTION_KINDS, Profile
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import quote_input, quote_value
from govkit.common.inputs import read_text_input
from govkit.common.toml_text import parse_toml

CONFIG_FILE = "govkit.toml"
MAX_PROFILES_BYTES = 1_000_000
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_HEADER_RE = re.compile(r"\s*\[\[\s*profile\s*\]\]")
_TABLE_RE = re.compile(r"\s*\[")
_KEY_RE = re.compile(r"""\s*(["']?)([A-Za-z0-9_-]+)\1\s*=""")
_BASIC_KINDS = ("NONE", "SIGN", "ENCRYPT")   # data_protection_kind: BasicProtectionKind
_KINDS = {"rtps_protection_kind": tuple(PROTECTION_KINDS),
          "metadata_protection_kind": tuple(PROTECTION_KINDS),
          "data_protection_kind": _BASIC_KINDS}
_REQUIRED = ("name", "allow_unauthenticated_participants", *_KINDS)
_OPTIONAL = ("title", "alias", "perftest_governance_file")


def _lines(text: str) -> list[tuple[int, dict[str, int]]]:
    """Per [[profile]] table: its header line and the line of each key in it."""
    tables: list[tuple[int, dict[str, int]]] = []
    current: dict[str, int] | None = None
    for number, line in enumerate(text.split("\n"), 1):
        if _HEADER_RE.match(line):
            current = {}
            tables.append((number, current))
        elif _TABLE_RE.match(line):
            current = None
        elif current is not None and (m := _KEY_RE.match(line)):
            current.setdefault(m[2], number)
    return tables


def _problem(field: str, value, taken: dict[str, str]) -> str | None:
    """Why `value` cannot be `field` of a profile (None if it can)."""
    if field in _KINDS:
        if value not in _KINDS[field]:
            return f"{quote_input(str(value))} is no {field}; valid: {', '.join(_KINDS[field])}"
    elif field == "allow_unauthenticated_participants":
        if not isinstance(value, bool):
            return "must be true or false"
    elif not isinstance(value, str):
        return "must be a string"
    elif field in ("name", "alias"):
        if not _NAME_RE.fullmatch(value) or "--" in value:
            return (f"invalid name {quote_input(value)}: letters, digits, '_' '.' '-', at most "
                    f"63, not starting with '.' or '-' (it names files)")
        if value in taken:
            return f"{quote_input(value)} is already {taken[value]}"
    elif field == "perftest_governance_file":
        if not _NAME_RE.fullmatch(value):
            return f"invalid file name {quote_input(value)}"
    elif not value.strip() or len(value) > 200 or not value.isprintable():
        return "a title is one printable line of at most 200 characters"
    return None


def parse_profiles(text: str, source: str, only_profiles: bool = True) -> list[Profile]:
    """The profiles of a profiles file's `text`; GovkitError (exit 2) with one line per bad
    field. `only_profiles` (a profiles file) refuses other top-level keys; govkit.toml
    may hold others."""
    try:
        doc = parse_toml(text, source)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        where = f"{source}:{m[1]}:{m[2]}" if m else source
        raise GovkitError(f"{where}: not TOML: {str(e).split(' (at line')[0]}",
                          EXIT_USAGE) from None
    tables = doc.get("profile", [])
    errors: list[str] = []
    if only_profiles:
        errors += [f"{source}: unknown key {quote_value(k)}: a profiles file holds "
                   f"[[profile]] tables" for k in doc if k != "profile"]
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise GovkitError(f"{source}: 'profile' must be [[profile]] tables", EXIT_USAGE)
    taken = {k: f"the catalog profile {p.name}" for p in PROFILES for k in (p.name, p.alias)}
    lines = _lines(text)
    found = []
    for i, table in enumerate(tables):
        header, keys = lines[i] if i < len(lines) else (0, {})
        # a profile is named by its name only where that is a valid one: a file that is a
        # link to a secret must not get its values quoted line after line (issue 23, item 7)
        name = table.get("name")
        label = f"profile '{name}'" if isinstance(name, str) and _problem("name", name, {}) \
            is None else f"profile #{i + 1}"
        bad = False
        for key in table:
            if key not in _REQUIRED + _OPTIONAL:
                errors.append(f"{source}:{keys.get(key, header)}: {label}: unknown field "
                              f"{quote_value(key)}; known: {', '.join(_REQUIRED + _OPTIONAL)}")
                bad = True
        missing = [key for key in _REQUIRED if key not in table]
        if missing:
            errors.append(f"{source}:{header}: {label}: {', '.join(missing)} "
                          f"{'is' if len(missing) == 1 else 'are'} missing")
            bad = True
        for key in (*_REQUIRED, *_OPTIONAL):
            if key in table:
                problem = _problem(key, table[key], taken)
                if problem:
                    errors.append(f"{source}:{keys.get(key, header)}: {label}: {key}: {problem}")
                    bad = True
        if bad:
            continue
        name = table["name"]
        alias = table.get("alias", name)
        taken.update({name: f"profile {name} ({source}:{header})",
                      alias: f"profile {name} ({source}:{header})"})
        found.append(Profile(name, alias,
                             "true" if table["allow_unauthenticated_participants"] else "false",
                             table["rtps_protection_kind"], table["metadata_protection_kind"],
                             table["data_protection_kind"],
                             table.get("perftest_governance_file"),
                             table.get("title", name)))
    if errors:
        raise GovkitError("\n".join(errors), EXIT_USAGE)
    if only_profiles and not found:
        raise GovkitError(f"{source}: holds no [[profile]] tables", EXIT_USAGE)
    return found


def read_profiles(path: Path | None) -> list[Profile]:
    """The profiles of `path` (--profiles), or of ./govkit.toml when `path` is None and
    that file exists ([] when it does not)."""
    only = path is not None
    path = Path(path) if path is not None else Path(CONFIG_FILE)
    if not only and not path.is_file():
        return []
    text = read_text_input(path, MAX_PROFILES_BYTES, "profiles file")
    return parse_profiles(text, str(path), only)
