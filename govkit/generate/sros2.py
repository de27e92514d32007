"""`govkit export sros2`: a ROS 2 keystore (the layout sros2 makes and rmw reads) from the
test PKI and the signed documents `generate`/`sign` wrote.

    KEYSTORE/public/identity_ca.cert.pem, permissions_ca.cert.pem
    KEYSTORE/private/identity_ca.key.pem, permissions_ca.key.pem     (0600; dir 0700)
    KEYSTORE/enclaves/governance.p7s
    KEYSTORE/enclaves/<enclave path>/cert.pem, key.pem (0600), identity_ca.cert.pem,
        permissions_ca.cert.pem, governance.p7s, permissions.p7s

rmw_dds_common reads the six files of `<ROS_SECURITY_KEYSTORE>/enclaves/<enclave>/`; rcl
finds that directory from the node's --enclave (or ROS_SECURITY_ENCLAVE_OVERRIDE). Unlike
sros2 (one CA behind both names, sros2#282) the two CAs are govkit's separate ones, and
every file is a copy, never a symlink (symlinks break OpenSSL on Windows, sros2 PR#386),
and only signed files are copied: a plain .xml beside its .p7s may have been edited since
it was signed, and rmw reads none.
The CA keys stay under private/, apart from every enclave (`ca_keys=False` leaves them
out: a robot needs only enclaves/).

A participant's enclave is its certificate's CN when that is an enclave path
(`pki init --participant /talker_listener/talker`), else /CN; a CN rcl would refuse as an
enclave name is left out, and said so.

Why here, in generate: what is copied is checked first, as a runner's bundle is
(`bundle.participant_files` names the same six files): each .p7s verifies against the
Permissions CA (smime), each permissions document has a grant for exactly its
certificate's subject (check reads it), each key belongs to its certificate, each
certificate was issued by the Identity CA. generate is the lowest stage that makes files
to deploy and may import both smime and check.

The keystore is written whole or not at all: into a hidden sibling directory, made
durable (`staging`), then renamed into place. An existing keystore is refused unless
`force`; then it is swapped for the new one in one rename (renameat2 RENAME_EXCHANGE where
Linux has it), so it is never a mix of two exports. A private key in the old keystore that
is not one of the keys being written (e.g. sros2's own CA key) is never replaced: the
export stops and says which file to move away first. A key the PKI keeps (a participant
revoked since the last export, whose enclave this one leaves out) is no key lost: the
keystore is replaced, and `Export.dropped` names it ("revoke, then export again").
The sibling's name is short whatever the keystore's (`.govkit-export-<hash of the name>-
<random>`: a 240-character keystore name fits NAME_MAX), and an export holds a lock on the
parent directory (flock) while it works: a sibling of an export that was killed (it holds
private keys) is removed by the next export, which knows it is nobody's because it holds
the lock.

Shipped onward as one file (`archive_to`, `export sros2 --archive`): the same files,
bytes and modes as one tar (govkit.common.archive: deterministic, with NAME.sha256),
written after the keystore is in place and checked before anything is written (no
existing archive replaced without `force`, never one holding a key this one does not).
The keystore directory stays the output; the archive is offered beside it.

Revocation: a participant whose certificate the PKI's CRL revokes is left out (and said),
and the CRL is copied into every enclave as crl.pem, which rmw_dds_common hands to the
security plugins (Cyclone's <CRL>, Fast DDS's identity_crl), so every node refuses a
revoked peer.

Access control: sros2's keystores enforce the grants (its governance turns on join, read
and write access control); the catalog's governance documents, made to measure the cost of
protection alone, turn all three off. By default (`enforce`) an export whose governance
does not enforce them writes, in its place, the same governance with the three turned on,
signed by the Permissions CA (Export.enforcing says so); `enforce=False` copies the signed
governance as it is, and the CLI says loudly that the keystore enforces no grant.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from lxml import etree

from govkit.check.loaded import load_document
from govkit.check.validate import portable_findings, signed_document
from govkit.common import archive, staging
from govkit.common.errors import EXIT_INVALID, EXIT_USAGE, GovkitError
from govkit.common.findings import one_line, without_surrogates
from govkit.common.fsutil import write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_PEM_BYTES, MAX_SMIME_BYTES
from govkit.documents.parse import parse_xml, text_value
from govkit.pki.names import certificate_rdns, parse_subject
from govkit.pki.revocation import crl_path, current_crl
from govkit.pki.ros import enclave_of
from govkit.pki.testpki import TestPKI
from govkit.smime.sign import load_signer, sign_bytes, signature_of_unchanged
from govkit.smime.verify import verify_bytes

CRL_FILE = "crl.pem"   # optional in an enclave (rmw_dds_common reads it when present)
# The three settings that make the permissions' grants count (DDS Security 1.1, 9.4.1.2).
ACCESS_CONTROL = ("enable_join_access_control", "enable_read_access_control",
                  "enable_write_access_control")


@dataclass
class Export:
    """What an export wrote: the keystore, enclave path -> participant (file stem), the
    participants left out with the reason, whether the governance enforces the grants
    (`enforcing`; `resigned`: govkit turned access control on and signed it again), and
    whether a CRL went into every enclave."""
    keystore: Path
    enclaves: dict[str, str] = field(default_factory=dict)
    left_out: list[tuple[str, str]] = field(default_factory=list)
    replaced: bool = False
    enforcing: bool = True
    resigned: bool = False
    crl: bool = False
    cleaned: int = 0
    enforced: Path | None = None   # the enforcing governance govkit signed (`resigned`)
    archived: archive.Written | None = None   # the keystore as one archive (`archive_to`)
    # private keys of the replaced keystore this one leaves out, each one the PKI keeps
    # (a participant left out since, e.g. revoked)
    dropped: list[Path] = field(default_factory=list)


def _verified(path: Path, ca_cert, what: str, kind: str) -> bytes:
    """The bytes of a signed `kind` document that verifies against the Permissions CA."""
    if not path.is_file():
        raise GovkitError(f"{path}: not found ({what}; run `govkit generate --sign` or "
                          f"`govkit sign` first)", EXIT_USAGE)
    data = read_input(path, MAX_SMIME_BYTES, "signed document")
    result = verify_bytes(data, str(path), ca_cert)
    if result.kind is not None and result.kind != kind:
        # e.g. a signed governance copied over a permissions file: it may well verify
        raise GovkitError(f"{path}: is a signed {result.kind} document, not {kind} ({what}); "
                          f"regenerate it with `govkit generate --sign`", EXIT_INVALID)
    if not result.ok:
        raise GovkitError(f"{path}: does not verify against the Permissions CA: "
                          f"{'; '.join(result.problems)}", EXIT_INVALID)
    return data


def _governance(build: Path, profile: str | None) -> Path:
    found = sorted((build / "governance").glob("*.p7s"))
    if profile is not None:
        path = build / "governance" / f"{profile}.p7s"
        if path not in found:
            raise GovkitError(f"{path}: not found (sign the governance of profile "
                              f"{profile!r} first: `govkit generate --profile {profile} "
                              f"--sign`)", EXIT_USAGE)
        return path
    if len(found) != 1:
        names = ", ".join(p.stem for p in found) or "none"
        raise GovkitError(f"{build / 'governance'}: {len(found)} signed governance documents "
                          f"({names}); name the one every enclave gets with --profile",
                          EXIT_USAGE)
    return found[0]


def _common_name(cert) -> str | None:
    from cryptography.x509.oid import NameOID
    cns = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(cns[0].value) if len(cns) == 1 else None


def _grants_subject(permissions: Path, cert) -> bool:
    """The permissions document has a grant whose subject is the certificate's, compared
    as distinguished names (what the specification means)."""
    loaded = load_document(permissions)
    if loaded.kind.value != "permissions":   # _verified read it as permissions already
        raise GovkitError(f"{permissions}: is a {loaded.kind.value} document, not "
                          f"permissions", EXIT_INVALID)
    want = certificate_rdns(cert)
    for grant in loaded.model.grants:
        value = grant.subject.value
        try:
            if isinstance(value, str) and parse_subject(value) == want:
                return True
        except ValueError:
            continue
    return False


def _access_control(root) -> list:
    return [e for e in root.iter() if isinstance(e.tag, str) and e.tag in ACCESS_CONTROL]


def enforcing(governance_xml: bytes, filename: str = "governance") -> bool:
    """Every domain rule enforces join access control and every topic rule read and write
    access control (each value as the XSD reads it: true or 1, whitespace aside)."""
    settings = _access_control(parse_xml(governance_xml, filename).root)
    return bool(settings) and all(text_value(e).strip() in ("true", "1") for e in settings)


def _enforcing_governance(signed: bytes, path: Path, pki: TestPKI, build: Path,
                          result: Export) -> bytes:
    """The governance inside `signed` (verified) with join, read and write access control
    turned on, validated and signed by the Permissions CA: kept in
    BUILD/governance/enforced/ (reused while current, so exporting again writes the same
    keystore)."""
    doc = parse_xml(signed_document(signed, str(path)).data, str(path))
    for e in _access_control(doc.root):
        for child in list(e):   # a comment inside the value
            e.remove(child)
        e.text = "true"
    changed = etree.tostring(doc.tree, xml_declaration=True, encoding="UTF-8") + b"\n"
    problems = portable_findings(changed, f"{path} (access control on)")
    if problems:   # would be a govkit bug: the three values are plain xs:boolean
        raise GovkitError(f"{path}: with access control turned on it does not validate: "
                          f"{problems[0]}", EXIT_INVALID)
    xml = build / "governance" / "enforced" / f"{path.stem}.xml"
    p7s = xml.with_suffix(".p7s")
    result.enforced = p7s
    kept = signature_of_unchanged(xml, changed, pki.certificate("permissions_ca"))
    if kept is not None:
        return kept
    if not pki.permissions_ca_key.is_file():
        raise GovkitError(f"{path}: enforces no access control and the Permissions CA key "
                          f"({pki.permissions_ca_key}) is not there to sign one that does; "
                          f"give it, or export with --no-enforce (the keystore then enforces "
                          f"no grant)", EXIT_USAGE)
    signer = load_signer(pki.permissions_ca, pki.permissions_ca_key)
    fresh = sign_bytes(changed, signer.certificate, signer.key)
    xml.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(xml, changed)
    write_atomic(p7s, fresh)
    return fresh


class _Plan:
    """The files of the keystore, relative path -> (bytes, mode), checked."""

    def __init__(self):
        self.files: dict[str, tuple[bytes, int]] = {}

    def add(self, relative: str, data: bytes, mode: int = 0o644) -> None:
        self.files[relative] = (data, mode)

    def keys(self) -> set[bytes]:
        return {data for data, _ in self.files.values() if archive.KEY_MARK in data}

    def members(self, top: str) -> list[archive.Member]:
        """The files as archive members under `top`, the keystore's name: exactly what
        _write_tree writes, so the archive and the directory cannot differ."""
        return [archive.Member(f"{top}/{relative}", data, mode)
                for relative, (data, mode) in self.files.items()]


@dataclass(frozen=True)
class Selection:
    """What to export instead of every identity with build/'s one governance: the signed
    governance (`governance`), and only these participants (enclave path -> file stem),
    with the participants their maker already left out (and why)."""
    governance: Path
    enclaves: dict[str, str]
    left_out: tuple[tuple[str, str], ...] = ()


def _plan(pki: TestPKI, build: Path, profile: str | None, ca_keys: bool,
          result: Export, enforce: bool, selection: Selection | None) -> _Plan:
    if not pki.exists():
        raise GovkitError(f"{pki.directory}: no test PKI (create one with `govkit pki init "
                          f"{pki.directory}`)", EXIT_USAGE)
    plan = _Plan()
    id_pem = read_input(pki.identity_ca, MAX_PEM_BYTES, "certificate")
    perm_pem = read_input(pki.permissions_ca, MAX_PEM_BYTES, "certificate")
    pki.certificate("identity_ca")   # a broken Identity CA is refused before anything else
    # The CRL read once, capped at MAX_CRL_BYTES and refused if not the current Identity
    # CA's, or missing or older than the PKI manifest records (current_crl), before
    # anything is written (the enforcing governance); the enclaves get that very CRL, so
    # who is left out below and what every node refuses cannot differ.
    crl = current_crl(pki)
    perm_ca = pki.certificate("permissions_ca")
    plan.add("public/identity_ca.cert.pem", id_pem)
    plan.add("public/permissions_ca.cert.pem", perm_pem)
    if ca_keys:
        for stem in ("identity_ca", "permissions_ca"):
            pki.key_pair(stem)   # the key belongs to the certificate
            plan.add(f"private/{stem}.key.pem",
                     read_input(pki.path(stem, ".key"), MAX_PEM_BYTES, "private key"), 0o600)
    gov_path = selection.governance if selection else _governance(build, profile)
    governance = _verified(gov_path, perm_ca, "signed governance", "governance")
    if not enforcing(signed_document(governance, str(gov_path)).data, str(gov_path)):
        if enforce:
            governance = _enforcing_governance(governance, gov_path, pki, build, result)
            result.resigned = True
        else:
            result.enforcing = False
    plan.add("enclaves/governance.p7s", governance)
    crl_pem = crl.crl.public_bytes(serialization.Encoding.PEM) if crl is not None else None
    result.crl = crl_pem is not None
    stale = set(pki.stale_participants())
    wanted = None if selection is None else set(selection.enclaves.values())
    result.left_out += list(selection.left_out) if selection else []
    for stem in pki.identities():
        if wanted is not None and stem not in wanted:
            continue
        cert = pki.certificate(stem)
        cn = _common_name(cert)
        enclave = enclave_of(cn) if cn else None
        perm_path = build / "permissions" / f"{stem}.p7s"
        revoked = crl.revocation(cert) if crl is not None and stem not in stale else None
        why = ("not issued by the current Identity CA" if stem in stale else
               f"its certificate is revoked (serial {cert.serial_number:#x}, on "
               f"{revoked.revoked_at:%Y-%m-%d} by {crl_path(pki)})" if revoked else
               f"its CN {cn!r} is no ROS 2 enclave name" if enclave is None else
               f"it already has enclave {enclave}" if enclave in result.enclaves else
               f"no signed permissions ({perm_path})" if not perm_path.is_file() else None)
        if why:
            result.left_out.append((cn or stem, why))
            continue
        pki.key_pair(stem)
        permissions = _verified(perm_path, perm_ca, "signed permissions", "permissions")
        if not _grants_subject(perm_path, cert):
            raise GovkitError(f"{perm_path}: no grant for the certificate's subject "
                              f"{cert.subject.rfc4514_string()} ({pki.path(stem)}); "
                              f"regenerate it with `govkit generate`", EXIT_INVALID)
        base = f"enclaves/{enclave.lstrip('/')}"
        plan.add(f"{base}/cert.pem", read_input(pki.path(stem), MAX_PEM_BYTES, "certificate"))
        plan.add(f"{base}/key.pem", read_input(pki.path(stem, ".key"), MAX_PEM_BYTES,
                                          "private key"), 0o600)
        plan.add(f"{base}/identity_ca.cert.pem", id_pem)
        plan.add(f"{base}/permissions_ca.cert.pem", perm_pem)
        plan.add(f"{base}/governance.p7s", governance)
        plan.add(f"{base}/permissions.p7s", permissions)
        if crl_pem is not None:
            plan.add(f"{base}/{CRL_FILE}", crl_pem)
        result.enclaves[enclave] = stem
    if not result.enclaves:
        reasons = "; ".join(f"{n}: {w}" for n, w in result.left_out[:5]) or "no identities"
        raise GovkitError(f"nothing to export: no participant has an identity, a ROS 2 "
                          f"enclave name and signed permissions ({reasons})", EXIT_USAGE)
    return plan


# What an sros2 keystore holds at its top (sros2 and this export alike): --force replaces a
# directory holding nothing else. Anything more means it is not one: `export sros2 . --force`
# in a project directory swapped the whole directory (its pki/, build/ and every other file)
# for the keystore and deleted it.
KEYSTORE_TOP = ("enclaves", "private", "public")


def _not_keystore(keystore: Path) -> list[str]:
    """The names at the top of `keystore` that no keystore holds, sorted."""
    return sorted(set(os.listdir(keystore)) - set(KEYSTORE_TOP))


def pki_keys(pki: TestPKI) -> set[bytes]:
    """Every private key file the PKI keeps (its CAs', its participants', the re-keyed
    ones in retired/): an old keystore's copy of one that an export leaves out (a
    revoked participant's) is no key lost."""
    from govkit.pki.renewal import RETIRED_DIR
    found = set()
    for directory in (pki.directory, pki.directory / RETIRED_DIR):
        if not directory.is_dir():
            continue
        for path in directory.glob("*.key"):
            try:
                found.add(read_input(path, MAX_PEM_BYTES, "private key"))
            except GovkitError:
                continue
    return found


def _read_or_none(path: Path) -> bytes | None:
    try:
        return read_input(path, MAX_PEM_BYTES, "file")
    except GovkitError:
        return None


def refuse_keystore(keystore: Path, force: bool) -> None:
    """GovkitError (exit 2) for a keystore path no export may write, checked before anything
    is (before `--policy` generates, before the enforcing governance is signed into BUILD):
    '.', '..', '' or '/' (a directory named by where it is, never by its own name); a name
    that is not one printable line (the `use it with:` hint would break, and rmw reads
    ROS_SECURITY_KEYSTORE as text); an existing keystore without `force`, or what is no
    keystore. _replace checks the last two again under the lock."""
    given = str(keystore)
    if Path(keystore).name in ("", "..") or os.path.abspath(keystore) == "/":
        raise GovkitError(f"{one_line(given or repr(given))}: name the keystore directory by "
                          f"its own name (e.g. ../keystore), not by '.', '..' or '/'",
                          EXIT_USAGE)
    if not given.isprintable():
        raise GovkitError(f"{one_line(without_surrogates(given))}: a keystore name must be "
                          f"printable text on one line (no newline, control character or "
                          f"byte that is not UTF-8): ROS_SECURITY_KEYSTORE names it",
                          EXIT_USAGE)
    keystore = Path(os.path.abspath(keystore))
    exists = keystore.is_symlink() or keystore.exists()
    if not exists:
        return
    if not keystore.is_dir():
        raise GovkitError(f"{one_line(keystore)}: exists and is not a directory", EXIT_USAGE)
    if not keystore.is_symlink() and not any(keystore.iterdir()):
        return                              # an empty directory holds nothing to keep
    if not force:
        raise GovkitError(f"{one_line(keystore)}: already exists; refusing to change a "
                          f"keystore (use --force to replace it with this export as a whole)",
                          EXIT_USAGE)
    if keystore.is_symlink():
        raise GovkitError(f"{one_line(keystore)}: is a symlink; name the keystore directory "
                          f"itself", EXIT_USAGE)
    others = _not_keystore(keystore)
    if others:
        shown = ", ".join(map(one_line, others[:3])) + (" …" if len(others) > 3 else "")
        raise GovkitError(f"{one_line(keystore)}: is not an sros2 keystore (it holds {shown}, "
                          f"beside what a keystore holds: {', '.join(KEYSTORE_TOP)}); --force "
                          f"replaces a keystore only, never another directory", EXIT_USAGE)


def _foreign_keys(keystore: Path, ours: set[bytes]) -> list[Path]:
    """Private keys in an existing keystore that this export would not write again (a file
    named *key* that cannot be read counts as one)."""
    foreign = []
    for root, _dirs, files in os.walk(keystore):
        for name in files:
            path = Path(root) / name
            try:
                data = read_input(path, MAX_PEM_BYTES, "file")
            except GovkitError:
                data = None
            if data is None and "key" in name or data is not None and \
                    archive.KEY_MARK in data and data not in ours:
                foreign.append(path)
    return sorted(foreign)


def _write_tree(directory: Path, plan: _Plan) -> None:
    """Every planned file under `directory` (new, empty), durable before it is renamed."""
    directory.mkdir(mode=0o700)   # private keys inside: only their owner lists them
    stager = staging.Stager()
    try:
        for relative, (data, mode) in sorted(plan.files.items()):
            path = directory / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            stager.write(path, data, mode=mode, overwrite=False)
        staging.commit(stager.staged)
    except BaseException:
        stager.discard()
        raise
    if (directory / "private").is_dir():
        os.chmod(directory / "private", 0o700)   # CA keys: only their owner lists them
    os.chmod(directory, 0o755)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one step (Linux renameat2 RENAME_EXCHANGE); False where the
    system cannot."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):   # EINVAL, ENOSYS, EOPNOTSUPP: not on this file system
        return False
    raise OSError(err, os.strerror(err), str(b))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    except OSError:
        pass   # a file system that cannot fsync a directory: nothing to do about it
    finally:
        os.close(fd)


def staging_prefixes(keystore: Path) -> tuple[str, ...]:
    """The names of the hidden siblings an export of `keystore` stages in (new, old), and
    those older govkit versions used (long names: a 240-character keystore name made them
    too long for NAME_MAX)."""
    tag = hashlib.sha256(os.fsencode(keystore.name)).hexdigest()[:12]
    return (f".govkit-export-{tag}-", f".govkit-old-{tag}-",
            f".{keystore.name}.govkit-export-", f".{keystore.name}.govkit-old-")


def _remove_stale(parent: Path, keystore: Path) -> int:
    """Remove the staging siblings of exports of `keystore` that were killed (the caller
    holds the parent's lock, so none is another export's). Returns how many."""
    prefixes = staging_prefixes(keystore)
    removed = 0
    for name in os.listdir(parent):
        path = parent / name
        if name.startswith(prefixes) and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
            removed += 1
    return removed


def export_sros2(keystore: Path, ca_dir: Path, build_dir: Path, profile: str | None = None,
                 force: bool = False, ca_keys: bool = True, enforce: bool = True,
                 selection: Selection | None = None, archive_to: Path | None = None) -> Export:
    """Write the sros2 keystore `keystore` from the test PKI in `ca_dir` and the signed
    documents in `build_dir` (module docstring); `selection`: only these enclaves, with
    this governance (`export sros2 --policy`); `archive_to`: also the keystore's files as
    one archive there (govkit.common.archive), once the keystore is in place.
    GovkitError: exit 2 for missing input, a keystore or archive that exists (without
    `force`) or holds a foreign key, or an archive destination that is not a regular file
    or lies inside the keystore; exit 1 for a document that does not verify, is not of its
    kind, or does not grant its certificate's subject."""
    refuse_keystore(keystore, force)             # before anything is written
    keystore = Path(os.path.abspath(keystore))   # '.' and '..' named, for the renames
    if archive_to is not None:
        archive_to = Path(os.path.abspath(archive_to))
        _refuse_archive_inside(archive_to, keystore)
        archive.refuse_destination(archive_to, force)   # before any work
    result = Export(keystore)
    plan = _plan(TestPKI(Path(ca_dir)), Path(build_dir), profile, ca_keys, result, enforce,
                 selection)
    members = plan.members(keystore.name) if archive_to is not None else None
    if archive_to is not None:   # again with what it will hold: no key in it is lost
        archive.refuse_destination(archive_to, force, members)
    parent = keystore.parent
    parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)   # one export per directory at a time
        result.cleaned = _remove_stale(parent, keystore)
        _replace(keystore, plan, force, result, TestPKI(Path(ca_dir)))
        if archive_to is not None:
            result.archived = _write_archive(archive_to, members, force, keystore)
    finally:
        os.close(lock)
    return result


def _refuse_archive_inside(path: Path, keystore: Path) -> None:
    """An archive inside the keystore would be swapped away with it, or make it a directory
    that is no keystore (KEYSTORE_TOP)."""
    if path == keystore or keystore in path.parents:
        raise GovkitError(f"{one_line(path)}: is inside the keystore {one_line(keystore)}; "
                          f"write the archive beside it", EXIT_USAGE)


def _write_archive(path: Path, members: list, force: bool,
                   keystore: Path) -> archive.Written:
    """The archive of the keystore just written: its private/ 0700 as on disk. A failure
    here says that the keystore itself is in place."""
    try:
        return archive.write_archive(path, members, force,
                                     {f"{keystore.name}/private": 0o700})
    except GovkitError as e:
        raise GovkitError(f"{e} (the keystore {one_line(keystore)} is written; the archive "
                          f"is not)", e.exit_code) from None


def _replace(keystore: Path, plan: _Plan, force: bool, result: Export,
             pki: TestPKI | None = None) -> None:
    exists = keystore.is_symlink() or keystore.exists()
    if exists and not keystore.is_dir():
        raise GovkitError(f"{keystore}: exists and is not a directory", EXIT_USAGE)
    if exists and not keystore.is_symlink() and not any(keystore.iterdir()):
        exists = False   # an empty directory holds nothing to keep
    if exists and not force:
        raise GovkitError(f"{keystore}: already exists; refusing to change a keystore (use "
                          f"--force to replace it with this export as a whole)", EXIT_USAGE)
    if exists:
        if keystore.is_symlink():
            raise GovkitError(f"{keystore}: is a symlink; name the keystore directory itself",
                              EXIT_USAGE)
        others = _not_keystore(keystore)
        if others:
            shown = ", ".join(map(one_line, others[:3])) + (" …" if len(others) > 3 else "")
            raise GovkitError(f"{keystore}: is not an sros2 keystore (it holds {shown}, beside "
                              f"what a keystore holds: {', '.join(KEYSTORE_TOP)}); --force "
                              f"replaces a keystore only, never another directory",
                              EXIT_USAGE)
        foreign = _foreign_keys(keystore, plan.keys())
        if foreign and pki is not None:   # a left-out participant's: the PKI keeps it
            kept = pki_keys(pki)
            result.dropped = [p for p in foreign if _read_or_none(p) in kept]
            foreign = [p for p in foreign if p not in result.dropped]
        if foreign:
            shown = ", ".join(map(str, foreign[:3])) + (" …" if len(foreign) > 3 else "")
            raise GovkitError(f"{keystore}: holds private keys this export would not write "
                              f"again ({shown}); never replaced: move them (or the keystore) "
                              f"away first", EXIT_USAGE)
    parent = keystore.parent
    new_prefix, old_prefix = staging_prefixes(keystore)[:2]
    new = parent / f"{new_prefix}{secrets.token_hex(4)}"
    try:
        _write_tree(new, plan)
        if not exists:
            try:
                os.rename(new, keystore)   # onto an empty directory, or nothing: atomic
            except OSError as e:
                raise GovkitError(f"{keystore}: cannot create: {e.strerror} (did something "
                                  f"else create it meanwhile?)", EXIT_USAGE) from None
        elif _exchange(new, keystore):
            result.replaced = True         # `new` now holds the old keystore
        else:
            old = parent / f"{old_prefix}{secrets.token_hex(4)}"
            os.rename(keystore, old)
            os.rename(new, keystore)
            new, result.replaced = old, True
        _fsync_dir(parent)
    finally:
        if new.exists():
            shutil.rmtree(new, ignore_errors=True)
