"""Who wrote each permissions file, so that no run overwrites grants another mode wrote.

`generate` writes a profile's or a fleet's grants (the runner's topics, or a participants
file's); `generate --policy` writes an sros2 policy's. Both name a participant's file
OUT/permissions/NAME.xml, so one run in the other's directory replaced every grant (issue
46: `pki renew`'s advice, run in a policy project, gave every enclave benchmark grants).
Each run records, beside the files, which mode wrote each one (`OUT/permissions/RECORD`,
JSON: name -> {"mode", and for a policy its file}), and refuses, before writing anything,
to overwrite a file the other mode wrote (one line, exit 2, and the command that made
it). A file with no record (written by hand, or by govkit before the record) is taken as
it is.

`generate --policy` also records, in the PKI directory (POLICY_RUN), the last run it made
with that PKI (the policy, the protection, --out, its enclaves), so that `pki renew`
advises the command that made the project.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_MANIFEST_BYTES

RECORD = ".govkit-grants.json"
POLICY_RUN = ".govkit-policy.json"
SCHEMA = "govkit.grants/1"
PROFILES, POLICY = "generate", "generate --policy"


def _read(path: Path) -> dict:
    """The JSON object at `path`; {} if there is none or it is not one (a record is
    advice, never a reason to stop)."""
    try:
        doc = json.loads(read_input(path, MAX_MANIFEST_BYTES, "record"))
    except (GovkitError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) and doc.get("schema") == SCHEMA else {}


def read_modes(directory: Path) -> dict[str, dict]:
    """name -> {"mode", ...} of the permissions files in `directory`."""
    files = _read(Path(directory) / RECORD).get("files")
    return {n: v for n, v in files.items() if isinstance(v, dict)} \
        if isinstance(files, dict) else {}


def policy_command(policy: str, protection: str | None, out: str | None, ca: str) -> str:
    """The `generate --policy` command line of a recorded run."""
    words = ["govkit", "generate", "--policy", policy]
    words += ["--protection", protection] if protection else []
    words += ["--ca", ca] + (["--out", out] if out else []) + ["--sign"]
    return shlex.join(words)


def refuse_other_mode(directory: Path, names, mode: str, ca: Path) -> None:
    """GovkitError (exit 2) if any of `names` has a permissions file in `directory` that
    the other mode wrote: `mode` would replace its grants."""
    modes = read_modes(directory)
    if not modes:
        return
    for name in names:
        made = modes.get(name)
        if made is None or made.get("mode") == mode:
            continue
        path = Path(directory) / f"{name}.xml"
        if not (path.exists() or path.with_suffix(".p7s").exists()):
            continue
        if made.get("mode") == POLICY and isinstance(made.get("policy"), str):
            again = policy_command(made["policy"], made.get("protection"),
                                   str(Path(directory).parent), str(ca))
        elif made.get("mode") == POLICY:
            again = "govkit generate --policy POLICY.xml ..."
        else:
            again = (f"govkit generate --ca {shlex.quote(str(ca))} --out "
                     f"{shlex.quote(str(Path(directory).parent))} with its profiles and "
                     f"participants")
        raise GovkitError(f"{path}: written by `{made.get('mode')}`; `{mode}` would replace "
                          f"its grants, nothing written (make it again as it was made: "
                          f"`{again}`; or write to another --out, or remove it first)",
                          EXIT_USAGE)


def record_modes(directory: Path, written, mode: str, removed=(), **details) -> None:
    """Record that `mode` wrote `written` in `directory` (and that `removed` are gone)."""
    directory = Path(directory)
    if not directory.is_dir():
        return
    files = read_modes(directory)
    for name in removed:
        files.pop(name, None)
    entry = {"mode": mode, **{k: v for k, v in details.items() if v is not None}}
    for name in written:
        files[name] = entry
    data = json.dumps({"schema": SCHEMA, "files": files}, sort_keys=True, indent=0) + "\n"
    path = directory / RECORD
    try:
        if path.read_text() == data:
            return
    except (OSError, UnicodeDecodeError):
        pass
    write_atomic(path, data, mode=0o644)


def record_policy_run(pki_dir: Path, policy: str, protection: str | None, out: Path,
                      enclaves) -> None:
    """The last `generate --policy` run with this PKI, for `pki renew`'s advice."""
    doc = {"schema": SCHEMA, "policy": os.path.abspath(policy),
           "protection": os.path.abspath(protection) if protection else None,
           "out": os.path.abspath(out), "enclaves": sorted(enclaves)}
    write_atomic(Path(pki_dir) / POLICY_RUN, json.dumps(doc, indent=0) + "\n", mode=0o644)


def policy_run(pki_dir: Path) -> dict | None:
    """What record_policy_run recorded ({"policy", "protection", "out", "enclaves"})."""
    doc = _read(Path(pki_dir) / POLICY_RUN)
    return doc if isinstance(doc.get("policy"), str) and isinstance(doc.get("enclaves"),
                                                                    list) else None
