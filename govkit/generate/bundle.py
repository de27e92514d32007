"""The signed bundle a runner needs for one profile, made current on demand.

For a profile, `ensure_bundle` makes sure the test PKI exists, that the governance and
permissions documents on disk are exactly what govkit would render now, that each has a
`.p7s` that verifies against the Permissions CA, and re-generates / re-signs whatever is
missing or stale. Nothing is signed from a document that fails validation.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from govkit.catalog.profiles import Profile
from govkit.catalog.runners import runner_info
from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_DOCUMENT_BYTES, MAX_SMIME_BYTES
from govkit.documents.render import GovernanceDocument, PermissionsDocument
from govkit.generate.fleet import write_document
from govkit.pki.hsm import key_uri, softhsm_conf
from govkit.pki.issuance import init_pki
from govkit.pki.revocation import crl_path, current_crl
from govkit.pki.testpki import DEFAULT_PARTICIPANTS, TestPKI, init_tls, tls_paths
from govkit.runners.base import Bundle, ParticipantFiles
from govkit.smime.sign import sign_document, signed_path
from govkit.smime.verify import verify_file


@dataclass
class BundleLog:
    """What ensure_* did, for the CLI to print."""
    messages: list[str] = field(default_factory=list)

    def say(self, message: str) -> None:
        self.messages.append(message)


def ensure_pki(ca_dir: Path, log: BundleLog, single_ca: bool = False,
               participants=DEFAULT_PARTICIPANTS) -> TestPKI:
    """Load the PKI in `ca_dir`, creating a test PKI there if it has none yet."""
    pki = TestPKI(Path(ca_dir))
    missing = [p for p in participants if not pki.has_key(p)]
    if not pki.exists() or missing:
        created = not pki.exists()
        if not created:   # nothing added to a PKI whose CRL is missing or older (exit 2)
            current_crl(pki)
        pki, files = init_pki(ca_dir, participants=participants, single_ca=single_ca)
        if created:
            log.say(f"created a {'single-CA ' if single_ca else ''}test PKI in {ca_dir}/ "
                    f"(TEST ONLY: identity CA, permissions CA, {', '.join(participants)})")
        elif files:
            log.say(f"added participants {', '.join(missing)} to {ca_dir}/")
    if single_ca and not pki.single_ca:
        raise GovkitError(f"{ca_dir}: this runner needs one CA for identities and permissions; "
                          f"create one with `govkit pki init DIR --single-ca` and pass --ca DIR")
    stale = pki.stale_participants(list(participants))   # only these: a fleet may be large
    if stale:
        raise GovkitError(f"{ca_dir}: {', '.join(stale)} not issued by the current Identity CA "
                          f"(left from an earlier PKI); reissue with `govkit pki init {ca_dir} "
                          f"--force`")
    return pki


def _is_current(xml_path: Path, rendered: bytes, p7s: Path, pki: TestPKI) -> bool:
    """The document on disk is `rendered` and its .p7s verifies. Whatever is there is read
    like any input (regular file, size limit): anything odd just means 'not current'."""
    try:
        return (read_input(xml_path, MAX_DOCUMENT_BYTES) == rendered
                and verify_file(p7s, pki.permissions_ca).ok)
    except GovkitError:
        return False


def _ensure_signed(doc, xml_path: Path, pki: TestPKI, log: BundleLog) -> Path:
    """Write + sign `doc` unless the files on disk are already current and verify."""
    rendered = doc.render()
    p7s = signed_path(xml_path)
    if _is_current(xml_path, rendered, p7s, pki):
        return p7s
    write_document(doc, xml_path)
    sign_document(xml_path, pki.permissions_ca, pki.permissions_ca_key)
    check = verify_file(p7s, pki.permissions_ca)
    if not check.ok:  # would be a govkit bug: never hand a runner a file that fails verify
        raise GovkitError(f"{p7s}: freshly signed file does not verify: "
                          f"{'; '.join(check.problems)}", exit_code=1)
    log.say(f"signed {p7s}")
    return p7s


def participant_files(pki: TestPKI, name: str, governance: Path, permissions: Path
                       ) -> ParticipantFiles:
    # The one place a runner learns of the CRL: from `govkit pki revoke` on, every
    # configuration names it (Cyclone <CRL>, Fast DDS identity_crl).
    crl = crl_path(pki)
    # A key moved into a SoftHSM2 token (`pki init --hsm softhsm`) is named by its URI.
    uri = key_uri(pki, name)
    return ParticipantFiles(
        name=name, identity_ca=pki.identity_ca.resolve(),
        certificate=pki.path(name).resolve(),
        private_key=uri or pki.path(name, ".key").resolve(),
        permissions_ca=pki.permissions_ca.resolve(), governance=governance.resolve(),
        permissions=permissions.resolve(), crl=crl.resolve() if crl.exists() else None,
        token_conf=softhsm_conf(pki).resolve() if uri else None)


@dataclass(frozen=True)
class _Given:
    """A document given as bytes, in the place of a rendered one (`_ensure_signed`)."""
    data: bytes

    def render(self) -> bytes:
        return self.data


def _file_governance(path: Path, name: str, pki: TestPKI, build_dir: Path,
                     log: BundleLog) -> Path:
    """The signed governance of a point made from the user's file (`bench --governance`):
    a signed file that verifies against the test PKI's Permissions CA as it is; a plain
    one copied to build/governance/NAME.xml and signed there (the caller validated it)."""
    data = read_input(path, MAX_SMIME_BYTES, "governance")
    if data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):   # plain XML, not S/MIME
        return _ensure_signed(_Given(data), build_dir / "governance" / f"{name}.xml", pki, log)
    check = verify_file(path, pki.permissions_ca)
    if not check.ok:
        raise GovkitError(f"{path}: a signed governance that does not verify against "
                          f"{pki.permissions_ca} ({'; '.join(check.problems)}); give the plain "
                          f"XML to have it signed with the test PKI", exit_code=1)
    return path.resolve()


def planned_bundle(profile: Profile, ca_dir: Path, build_dir: Path,
                   participants=DEFAULT_PARTICIPANTS) -> Bundle:
    """Where `ensure_bundle` would put the files, without reading or writing anything
    (for `bench --dry-run`)."""
    if not profile.security:
        return Bundle(profile)
    pki, build_dir = TestPKI(Path(ca_dir)), Path(build_dir)
    gov = build_dir / "governance" / f"{profile.name}.p7s"
    perm_dir = _permissions_dir(profile, build_dir)
    return Bundle(profile, {name: participant_files(
        pki, name, gov, perm_dir / f"{name}.p7s") for name in participants})


def _permissions_dir(profile: Profile, build_dir: Path) -> Path:
    """Where a profile's permissions go: a protection class's point (`bench --policy`)
    has its own, for exactly its names; every other point shares the runner's."""
    base = Path(build_dir) / "permissions"
    return base / profile.name if profile.topics is not None else base


def ensure_bundle(profile: Profile, pki: TestPKI, build_dir: Path, runner: str,
                  log: BundleLog, participants=DEFAULT_PARTICIPANTS) -> Bundle:
    """Current, verified, signed files for `profile` (none for the unsecured baseline)."""
    if not profile.security:
        return Bundle(profile)
    build_dir = Path(build_dir)
    scope = runner_info(runner)
    if profile.governance_file is not None:
        gov = _file_governance(Path(profile.governance_file), profile.name, pki, build_dir,
                               log)
    else:
        gov = _ensure_signed(GovernanceDocument(profile),
                             build_dir / "governance" / f"{profile.name}.xml", pki, log)
    perm_dir = _permissions_dir(profile, build_dir)
    if profile.topics is not None:
        scope = replace(scope, topics=tuple(dict.fromkeys(profile.topics)))
    files = {}
    for name in participants:
        perm = _ensure_signed(PermissionsDocument.for_participant(pki, name, scope),
                              perm_dir / f"{name}.xml", pki, log)
        files[name] = participant_files(pki, name, gov, perm)
    return Bundle(profile, files)


def bundle_hashes(bundle: Bundle) -> list[dict]:
    """SHA-256 of every signed file a bundle hands to the runner (for the report)."""
    seen: dict[Path, str] = {}
    for f in bundle.participants.values():
        for path in (f.governance, f.permissions):
            seen.setdefault(path, hashlib.sha256(path.read_bytes()).hexdigest())
    return [{"profile": bundle.profile.name, "path": str(p), "sha256": h}
            for p, h in seen.items()]




def tls_keystore_path(build_dir: Path, participant: str) -> Path:
    return (Path(build_dir) / "tls" / f"{participant}-keystore.pem").resolve()


def ensure_tls(pki: TestPKI, build_dir: Path, log: BundleLog,
               participants=DEFAULT_PARTICIPANTS) -> dict[str, Path]:
    """Per participant, Cyclone's TLS keystore: one PEM file with its TLS certificate, its
    private key and the Identity CA certificate that issued both sides' (Cyclone reads the
    certificate, the key and the trusted CAs all from <SSL><KeystoreFile>). Mode 0600: it
    holds a private key. Never a CA key."""
    for f in init_tls(pki, participants):
        if f.endswith(".pem"):
            log.say(f"issued TLS certificate {f} (by the Identity CA)")
    out = {}
    for name in participants:
        cert, key = tls_paths(pki, name)
        text = cert.read_bytes() + key.read_bytes() + pki.identity_ca.read_bytes()
        path = tls_keystore_path(build_dir, name)
        if not path.exists() or path.read_bytes() != text:
            write_atomic(path, text, mode=0o600)
        out[name] = path
    return out
