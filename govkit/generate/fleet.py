"""One pass over many documents: render (or read), validate, sign and write each once.

`govkit generate` (governance per profile, permissions per participant, and with --sign
their .p7s) and `govkit sign` over many files run here. Every document gets the verdict
of the per-file path (`documents.write_document`, `smime.sign.sign_document`), without the
repeats:

* a permissions document is rendered from its shape's byte template and is valid by
  construction (`check.construct`: the shape validated once, per document only its
  values checked); one the construction cannot prove, every governance document, and with
  `paranoid` every document, is rendered by Jinja and validated in full (the same
  functions as the per-file path, so the same verdicts and messages);
* the schemas, the signer's key and the signer's certificate chain are loaded and checked
  once per worker process, and the PKCS#7 assembled from a per-signer DER template
  (`pkcs7`);
* `generate` writes each output directory's files into a fresh staging directory and
  commits them with one syncfs and one rename of the directory (file by file where the
  directory exists: `staging.StagingDir`); `sign` stages a temporary beside each file.

What `sign_document` does after signing, `verify` the result, is done here in full for
the first document each worker signs and whenever the signed part would not read back
byte for byte (lines over 1023 bytes, a lone CR): then as many times as needed. For
every other document it would re-check only facts that cannot differ: the signer's
chain and key (the same for all, checked with the first), our own MIME layout (which
then reads back exactly as written) and the document (validated above; reading it back
only turns LF into CRLF, which XML parsing undoes). If the first check fails (an expired
Permissions CA, say), every document is checked in full and refused with its own message.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from govkit.catalog.profiles import get_profile
from govkit.catalog.runners import RunnerInfo, runner_info
from govkit.catalog.targets import DEFAULT_TARGET
from govkit.check import construct
from govkit.check.validate import portable_findings
from govkit.common import staging, workers
from govkit.common.errors import EXIT_INVALID, EXIT_USAGE, GovkitError
from govkit.common.findings import DocumentKind, one_line
from govkit.common.fsutil import collect_files, write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_DOCUMENT_BYTES, MAX_PEM_BYTES
from govkit.documents.model import build_model
from govkit.documents.render import GovernanceDocument, PermissionsDocument
from govkit.generate import grants
from govkit.pki.issued import issued_certificate
from govkit.pki.manifest import read_manifest
from govkit.pki.names import certificate_grants
from govkit.pki.participants import Participant
from govkit.pki.revocation import current_crl, explain_recorded, revoked_certificates
from govkit.pki.testpki import TestPKI
from govkit.smime import pkcs7
from govkit.smime.sign import (
    TEXT_HEADER,
    check_own_signature,
    check_signable,
    load_signer,
    sign_bytes,
    signable_check,
    signed_path,
    smime_message,
)
from govkit.smime.status import grant_subjects, revoked_grant_lines

_MAX_PIECE = 1022   # longest line OpenSSL reads back in one piece (1023 with its LF)


@dataclass(frozen=True)
class GovernanceJob:
    profile: str
    xml: str


@dataclass(frozen=True)
class PermissionsJob:
    participant: Participant
    xml: str


@dataclass(frozen=True)
class FileJob:
    xml: str


@dataclass(frozen=True)
class Settings:
    """What every worker needs, sent to it once (plain data: it may be pickled)."""
    now: dt.datetime
    signer_pem: tuple[bytes, bytes] | None = None   # Permissions CA certificate, key
    write_xml: bool = True                          # generate writes the .xml; sign not
    pki_dir: str | None = None
    identity_ca_pem: bytes | None = None
    scope: RunnerInfo | None = None
    domains: object = None                          # documents.DomainSet
    # (not_before, not_after) of every grant; None: each certificate's (generate.validity)
    validity: tuple[dt.datetime, dt.datetime] | None = None
    paranoid: bool = False                          # every document checked in full
    target: str = DEFAULT_TARGET                    # `sign --target`: whose verdict
    stage_dirs: bool = False                        # write through StagingDirs (generate)
    staging_dirs: dict | None = None                # final directory -> its StagingDir
    # The PKI manifest's entries (name -> pki.manifest.Entry), None without one, and the
    # serials the Identity CA's CRL revokes
    manifest: dict | None = None
    revoked: frozenset = frozenset()
    # `sign`: (DER, one line) of every participant certificate the signing PKI's CRL
    # revokes; a permissions document granting one of them is not signed
    revoked_grants: tuple[tuple[bytes, str], ...] = ()


@dataclass
class Outcome:
    index: int
    written: tuple[str, ...] = ()
    stale: bool = False
    revoked: bool = False                           # its certificate is revoked: nothing
    error: tuple[str, int] | None = None            # message, exit code
    warnings: tuple[str, ...] = ()                  # validation's, under the target
    # why its certificate got the full check although there is a manifest: "changed"
    # (the file is not the one the manifest lists) or "unlisted"
    unproven: str | None = None


@dataclass
class Result:
    files: list[str] = field(default_factory=list)   # written, as the jobs named them
    stale: list[str] = field(default_factory=list)
    errors: list[GovkitError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # participants left out because their certificates are revoked: name -> why (a line)
    revoked: dict[str, str] = field(default_factory=dict)
    removed: list[Path] = field(default_factory=list)   # their earlier files, removed
    # why the PKI manifest was not used (every certificate checked in full), or None
    manifest_note: str | None = None
    # (participant, "changed" | "unlisted"): certificates checked in full, and why
    unproven: list[tuple[str, str]] = field(default_factory=list)

    @property
    def written(self) -> list[Path]:
        """The files written (`files`, as paths: 20,000 Path objects cost 0.1 s, so the
        command line prints `files`)."""
        return list(map(Path, self.files))


# ---------------------------------------------------------------- in a worker

_worker = None


def _reads_back_unchanged(signed_part: bytes) -> bool:
    """OpenSSL reads this signed part back byte for byte: CR only in CRLF, and every line
    one piece of its 1024-byte line buffer."""
    return signed_part.count(b"\r") == signed_part.count(b"\r\n") and \
        max(map(len, signed_part.split(b"\n"))) <= _MAX_PIECE


def _holds(path: Path, data: bytes) -> bool:
    """`path` is already a regular file with exactly `data`, mode 0644, so writing it again
    would change nothing (re-signing a fleet, e.g. after a new Permissions CA, leaves its
    documents as they are: reading one costs far less than creating and renaming one)."""
    try:
        st = os.stat(path, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(data) or \
                stat.S_IMODE(st.st_mode) != 0o644:
            return False
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            return os.read(fd, len(data) + 1) == data
        finally:
            os.close(fd)
    except OSError:
        return False


class _Worker:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.stager = staging.Stager()
        self.template = None
        if settings.signer_pem:
            cert_pem, key_pem = settings.signer_pem
            self.cert = x509.load_pem_x509_certificate(cert_pem)
            self.key = serialization.load_pem_private_key(key_pem, None)
            try:
                self.template = pkcs7.SignerTemplate.for_signer(self.cert, self.key)
            except pkcs7.TemplateError:   # an unknown layout: the builder, per document
                self.template = None
        self.identity_ca = x509.load_pem_x509_certificate(settings.identity_ca_pem) \
            if settings.identity_ca_pem else None
        # name -> manifest.Entry; None: no manifest (or --paranoid): every certificate
        # checked in full
        self.manifest = None if settings.paranoid else settings.manifest
        self.pki_prefix = os.path.join(settings.pki_dir or "", "")
        self.checked = False       # one signed document of this worker verified in full
        self.check_all = settings.paranoid   # (or that check failed): every one in full
        self.dirs = settings.staging_dirs or {}
        self.revoked_grants = [(certificate_grants(x509.load_der_x509_certificate(der)), line)
                               for der, line in settings.revoked_grants]
        self._stamp: tuple[int, bytes] = (-1, b"")

    def run(self, index: int, job) -> Outcome:
        try:
            if isinstance(job, FileJob):
                return self._sign_file(index, Path(job.xml))
            if isinstance(job, GovernanceJob):
                return Outcome(index, self._governance(job))
            return self._permissions(index, job)
        except GovkitError as e:
            return Outcome(index, error=(str(e), e.exit_code))

    def _governance(self, job: GovernanceJob) -> tuple[str, ...]:
        doc = GovernanceDocument(get_profile(job.profile), self.settings.domains)
        return self._generated(doc.render(), Path(job.xml))

    def _permissions(self, index: int, job: PermissionsJob) -> Outcome:
        p, settings = job.participant, self.settings
        try:
            pem = read_input(f"{self.pki_prefix}{p.name}.pem", MAX_PEM_BYTES, "certificate")
        except GovkitError:
            return Outcome(index, stale=True)
        entry = self.manifest.get(p.name) if self.manifest is not None else None
        unproven = None
        if entry is not None and entry.sha256 == hashlib.sha256(pem).digest():
            # the file the full check passed when the PKI wrote it (govkit.pki.manifest)
            if not entry.issued:
                return Outcome(index, stale=True)
            if entry.revoked or entry.serial in settings.revoked:
                return Outcome(index, revoked=True)
            doc = PermissionsDocument.for_subject(p.name, entry.subject, entry.not_before,
                                                  entry.not_after, settings.scope,
                                                  settings.domains, settings.validity,
                                                  p.grants)
        else:
            if self.manifest is not None:
                unproven = "changed" if entry is not None else "unlisted"
            # as TestPKI.stale_participants decides: the current Identity CA issued it
            cert = issued_certificate(pem, self.identity_ca)
            if cert is None:
                return Outcome(index, stale=True, unproven=unproven)
            if cert.serial_number in settings.revoked:   # (an issued one: the CRL's issuer)
                return Outcome(index, revoked=True, unproven=unproven)
            doc = PermissionsDocument.for_certificate(cert, p.name, settings.scope,
                                                      settings.domains, settings.validity,
                                                      grants=p.grants)
        data = None if settings.paranoid else construct.render_proven(doc)
        if data is None:   # not proven valid by construction: rendered and checked in full
            return Outcome(index, self._generated(doc.render(), Path(job.xml)),
                           unproven=unproven)
        return Outcome(index, self._proven(data, job.xml), unproven=unproven)

    def _write(self, path: Path | str, data: bytes, reuse: bool = True) -> None:
        """Into the final directory's StagingDir if it has one, else a temporary beside
        `path`; with `reuse`, an existing file that already holds `data` is left as is."""
        directory, name = os.path.split(path if isinstance(path, str) else os.fspath(path))
        staged = self.dirs.get(directory) or self.dirs.get(os.path.normpath(directory or "."))
        if reuse and (staged is None or staged.existed) and _holds(Path(path), data):
            return
        if staged is None:
            self.stager.write(path, data)
        else:
            staged.write(name, data)

    def _generated(self, data: bytes, xml: Path) -> tuple[str, ...]:
        check_generated(data, xml)
        written = []
        if self.settings.write_xml:
            self._write(xml, data)
            written.append(str(xml))
        if self.settings.signer_pem:
            written.append(self._sign(data, xml, validated=True))
        return tuple(written)

    def _proven(self, data: bytes, xml: str) -> tuple[str, ...]:
        """A document valid by construction (check.construct): what `_generated` writes
        for it, without re-checking what the construction proves (it is plain UTF-8 XML
        with the XML declaration first, no CR, no NUL, no line longer than OpenSSL reads
        in one piece, so the signed text is the document with CRLF line ends)."""
        self._write(xml, data)
        if not self.settings.signer_pem:
            return (xml,)
        return xml, self._sign_text(data.replace(b"\n", b"\r\n"), data, xml, proven=True)

    def _sign_file(self, index: int, xml: Path) -> Outcome:
        content = read_input(xml, MAX_DOCUMENT_BYTES, "document")
        text, check = signable_check(content, xml, False, self.settings.target)
        if self.revoked_grants and check.kind is DocumentKind.PERMISSIONS:
            self._refuse_revoked_grants(xml, check.document)
        return Outcome(index, (self._sign_text(text, content, xml),),
                       warnings=tuple(map(str, check.warnings)))

    def _refuse_revoked_grants(self, xml: Path, document) -> None:
        """A document granting a revoked certificate is not signed (a revoked certificate
        is never granted): one line, exit 1, and the .p7s signed for it earlier removed,
        as generate removes a revoked participant's (the .xml, the user's, stays)."""
        grants = grant_subjects(build_model(document.root, DocumentKind.PERMISSIONS))
        lines = revoked_grant_lines(grants, self.revoked_grants)
        if not lines:
            return
        p7s = signed_path(xml)
        try:
            removed = stat.S_ISREG(os.lstat(p7s).st_mode)
            if removed:
                p7s.unlink()
        except FileNotFoundError:
            removed = False
        gone = f", and {one_line(p7s)} signed for it earlier removed" if removed else ""
        more = f" (and {len(lines) - 1} more such grant(s))" if len(lines) > 1 else ""
        raise GovkitError(f"{one_line(xml)}: not signed{gone}: {lines[0]}{more}", EXIT_INVALID)

    def _signing_time(self) -> bytes:
        second = int(time.time())
        if second != self._stamp[0]:
            self._stamp = (second, pkcs7.signing_time(dt.datetime.fromtimestamp(second, dt.UTC)))
        return self._stamp[1]

    def _sign(self, content: bytes, xml: Path, validated: bool) -> str:
        return self._sign_text(check_signable(content, xml, validated), content, xml)

    def _sign_text(self, text: bytes, content: bytes, xml: Path | str,
                   proven: bool = False) -> str:
        """Sign `text` (the CRLF form of `content`, checked signable) and write the .p7s.
        `proven`: a document valid by construction, whose signed part reads back
        unchanged (check.construct)."""
        signed_part = TEXT_HEADER + text
        if self.template is not None:
            signed = smime_message(signed_part,
                                   self.template.sign(signed_part, self._signing_time()))
        else:
            signed = sign_bytes(content, self.cert, self.key)
        if self.check_all or not self.checked or \
                not (proven or _reads_back_unchanged(signed_part)):
            first = not self.checked
            try:
                check_own_signature(signed, xml, self.cert, self.settings.now,
                                    self.settings.target)
            except GovkitError:
                self.check_all = self.check_all or first
                raise
            finally:
                self.checked = True
        out = f"{xml[:-4]}.p7s" if isinstance(xml, str) and xml.endswith(".xml") else \
            str(signed_path(xml))
        self._write(out, signed, reuse=False)
        return out


def _init(settings: Settings) -> None:
    global _worker
    _worker = _Worker(settings)


def _run_chunk(jobs: list[tuple[int, object]]) -> tuple[list[Outcome], list[staging.Staged]]:
    worker = _worker
    try:
        outcomes = [worker.run(i, job) for i, job in jobs]
    except BaseException:
        worker.stager.discard()
        raise
    staged, worker.stager.staged = worker.stager.staged, []
    return outcomes, staged


# ---------------------------------------------------------------- in the calling process


def run_jobs(jobs: list, settings: Settings, processes: int | None = None) -> list[Outcome]:
    """Every job once, in worker processes if there are enough of them; then every file
    written committed at once. Returns the outcomes in job order."""
    indexed = list(enumerate(jobs))
    count, parts = workers.plan(indexed, processes)
    dirs: list[staging.StagingDir] = []
    for d in sorted({os.path.normpath(os.path.dirname(_xml(j)) or ".") for j in jobs}):
        if settings.stage_dirs:
            staged_dir = staging.StagingDir(d)
            staging.remove_orphans(os.path.dirname(d) or ".")   # staging dirs of killed runs
            dirs.append(staged_dir)
        else:
            os.makedirs(d, exist_ok=True)
        staging.remove_orphans(d)
    outcomes: list[Outcome] = []
    staged: list[staging.Staged] = []
    try:
        for staged_dir in dirs:
            staged_dir.create()
        if dirs:
            settings = dataclasses.replace(settings, staging_dirs={s.final: s for s in dirs})
        for chunk_outcomes, chunk_staged in workers.run(_run_chunk, parts, _init, (settings,),
                                                          count):
            outcomes += chunk_outcomes
            staged += chunk_staged
        staging.commit(staged)
        staging.commit_dirs(dirs)
    except BaseException:
        staging.discard(staged)
        staging.discard_dirs(dirs)
        raise
    return outcomes


def _xml(job) -> str:
    return job.xml


def collect(outcomes: list[Outcome], names: list[str] | None = None) -> Result:
    result = Result()
    for o in outcomes:
        result.files += o.written
        if o.stale and names is not None:
            result.stale.append(names[o.index])
        if o.revoked and names is not None:
            result.revoked[names[o.index]] = ""
        if o.unproven and names is not None:
            result.unproven.append((names[o.index], o.unproven))
        if o.error is not None:
            result.errors.append(GovkitError(*o.error))
        result.warnings += o.warnings
    return result


def signer_pem(cert_path: Path, key_path: Path) -> tuple[bytes, bytes]:
    """The Permissions CA for the workers, refused here (exit 2) as `sign` refuses it:
    unreadable, not a key of a type PKCS#7 signing supports, or not the certificate's."""
    signer = load_signer(cert_path, key_path)
    return (signer.certificate.public_bytes(serialization.Encoding.PEM),
            signer.key.private_bytes(serialization.Encoding.PEM,
                                     serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))


def sign_files(paths: list[Path], cert_path: Path, key_path: Path,
               processes: int | None = None, target: str = DEFAULT_TARGET,
               warnings: list[str] | None = None, pki_dir: Path | None = None
               ) -> tuple[list[Path], list[GovkitError]]:
    """`smime.sign.sign_paths` in one pass: (signed .p7s paths, errors), the same verdicts
    under `target` (`sign --target`); what validation warns about (signed all the same)
    is appended to `warnings`. With `pki_dir`, the test PKI the Permissions CA is from,
    a permissions document granting a certificate its CRL revokes is an error, not
    signed (a CRL that cannot be read: refused, as generate refuses it)."""
    settings = Settings(dt.datetime.now(dt.UTC), signer_pem(cert_path, key_path),
                        write_xml=False, target=target,
                        revoked_grants=_revoked_grants(pki_dir, warnings))
    files = collect_files(paths, ".xml")
    result = collect(run_jobs([FileJob(str(f)) for f in files], settings, processes))
    if warnings is not None:
        warnings += result.warnings
    return result.written, result.errors


def _revoked_grants(pki_dir: Path | None, warnings: list[str] | None
                    ) -> tuple[tuple[bytes, str], ...]:
    """(DER, line) of every participant certificate of `pki_dir` its CRL revokes; one
    that cannot be read is a warning (whether it is revoked is not known)."""
    if pki_dir is None:
        return ()
    pki = TestPKI(Path(pki_dir))
    unreadable: list[str] = []
    found = revoked_certificates(pki, pki.identities(), unreadable)
    if warnings is not None:
        warnings += [f"govkit: warning: {line}" for line in unreadable]
    return tuple((cert.public_bytes(serialization.Encoding.DER), line)
                 for cert, line in found.values())


def write_document(doc: GovernanceDocument | PermissionsDocument, path: Path) -> Path:
    """Validate the rendered document, then write it atomically; invalid ones never land."""
    data = doc.render()
    check_generated(data, path)
    write_atomic(path, data)
    return path


def check_generated(data: bytes, path: Path) -> None:
    """GovkitError (exit 1) if a document govkit rendered is invalid, or refused by any
    implementation (a warning under the omg target: a govkit bug)."""
    findings = portable_findings(data, str(path))
    if findings:
        raise GovkitError("generated document is invalid (a govkit bug):\n"
                          + "\n".join(map(str, findings)), exit_code=1)


def generate(profiles: list, pki, out_dir: Path, domains, runner: str,
             participants: list[Participant] | None = None, sign: bool = False,
             processes: int | None = None,
             validity: tuple[dt.datetime, dt.datetime] | None = None,
             paranoid: bool = False) -> Result:
    """governance/<profile>.xml per secured profile and permissions/<name>.xml per
    participant (with `sign`, their .p7s as well), as `write_document` + `sign` per file
    would write them. Without `participants`: every identity in the PKI, those another Identity CA
    issued skipped (Result.stale). With them: exactly those, each must be current.
    Permissions documents are valid by construction (check.construct) where that is
    proven, else (and with `paranoid`, always) rendered and validated in full."""
    scope = runner_info(runner)
    explicit = participants is not None
    if participants is None:
        participants = [Participant(n) for n in pki.identities()]
    else:
        _require_identities(pki, participants)
    identity_ca = read_input(pki.identity_ca, MAX_PEM_BYTES, "certificate")
    pki.certificate("identity_ca")   # a clean error now rather than in every worker
    manifest, manifest_note = read_manifest(pki)
    # a CRL that cannot be read, or is missing or older than the manifest records:
    # refused (who is revoked is not known)
    crl = current_crl(pki, manifest)
    settings = Settings(dt.datetime.now(dt.UTC),
                        signer_pem(pki.permissions_ca, pki.permissions_ca_key) if sign else None,
                        True, str(pki.directory), identity_ca, scope, domains, validity,
                        paranoid=paranoid, stage_dirs=True,
                        manifest=manifest.entries if manifest else None,
                        revoked=crl.serials if crl else frozenset())
    out_dir = Path(out_dir)
    jobs: list = [GovernanceJob(p.name, str(out_dir / "governance" / f"{p.name}.xml"))
                  for p in profiles if p.security]
    first_permission = len(jobs)
    permissions = os.path.join(out_dir, "permissions", "")   # (a Path per job: 10 µs)
    jobs += [PermissionsJob(p, f"{permissions}{p.name}.xml") for p in participants]
    if not participants:
        raise _no_identities(pki)
    names = [""] * first_permission + [p.name for p in participants]
    permissions_dir = out_dir / "permissions"
    # never over grants `generate --policy` wrote: refused before anything is written
    grants.refuse_other_mode(permissions_dir, names[first_permission:], grants.PROFILES,
                             pki.directory)
    result = collect(run_jobs(jobs, settings, processes), names)
    result.manifest_note = None if paranoid else manifest_note
    if result.revoked:
        _left_out(pki, crl, manifest, result, permissions_dir, explicit)
    left = set(result.revoked) | set(result.stale)
    grants.record_modes(permissions_dir, (n for n in names[first_permission:]
                                          if n not in left), grants.PROFILES,
                        removed=result.revoked)
    if explicit:
        result.errors += [GovkitError(
            f"{pki.path(name)}: not issued by the current Identity CA (left from an earlier "
            f"PKI); no permissions written for it (reissue with `govkit pki init "
            f"{pki.directory} --force`)") for name in result.stale]
    elif len(result.stale) == len(participants):
        raise _no_identities(pki)
    return result


def _left_out(pki, crl, manifest, result: Result, directory: Path, explicit: bool) -> None:
    """Say why each revoked participant got no permissions, and remove what an earlier
    run wrote for it there (a signed grant of a revoked certificate is never left to be
    shipped); with `explicit` participants each is an error."""
    from govkit.pki.revocation import explain_revocation
    for name in result.revoked:
        why = None
        try:
            cert = pki.certificate(name)
            found = crl.revocation(cert) if crl is not None else None
            if found is not None:
                why = explain_revocation(pki.path(name), cert, crl, found)
        except GovkitError:
            pass
        recorded = manifest.entries[name].revoked if manifest and name in manifest.entries \
            else None
        if why is None and recorded:
            why = explain_recorded(pki, name, recorded, manifest.path)
        removed = remove_earlier(directory, name)
        result.removed += removed
        gone = f"; removed {' and '.join(map(str, removed))}, written for it earlier" \
            if removed else ""
        result.revoked[name] = f"{name} is revoked: no permissions written{gone}: {why}"
        if explicit:
            result.errors.append(GovkitError(result.revoked[name]))


def remove_earlier(directory: Path, name: str) -> list[Path]:
    """Remove the permissions an earlier run wrote for `name` in `directory` (its .p7s
    and .xml, regular files only): a revoked participant's signed grant is never left to
    be shipped. Returns those removed."""
    removed = []
    for suffix in (".p7s", ".xml"):
        path = Path(directory) / f"{name}{suffix}"
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                path.unlink()
                removed.append(path)
        except FileNotFoundError:
            pass
    return removed


def _no_identities(pki) -> GovkitError:
    return GovkitError(f"{pki.directory}: no participant identities; add some with "
                       f"`govkit pki init {pki.directory} --participant NAME`")


def _require_identities(pki, participants: list[Participant]) -> None:
    """Every participant has a certificate and a key in the PKI (one directory listing,
    not a stat per participant)."""
    present = set(os.listdir(pki.directory))
    missing = [p.name for p in participants
               if f"{p.name}.pem" not in present or f"{p.name}.key" not in present]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5
                                          else "")
        raise GovkitError(f"{pki.directory}: no identity for {shown} (create them with "
                          f"`govkit pki init {pki.directory} --participants FILE`)", EXIT_USAGE)


def ensure_identities(ca_dir: Path, participants: list[Participant], log,
                      single_ca: bool = False, processes: int | None = None):
    """The PKI in `ca_dir` with an identity for every participant: a test PKI is created
    there if it has none, missing participants are added (and `log` says so). Whether
    the current Identity CA issued each one is checked by `generate`, in its workers."""
    from govkit.pki.issuance import init_pki
    from govkit.pki.testpki import TestPKI
    pki = TestPKI(Path(ca_dir))
    created = not pki.exists()
    present = set(os.listdir(pki.directory)) if pki.directory.is_dir() else set()
    missing = [p for p in participants if f"{p.name}.key" not in present]
    if created or missing:
        if not created:   # nothing added to a PKI whose CRL is missing or older (exit 2)
            current_crl(pki)
        pki, _ = init_pki(ca_dir, missing, single_ca=single_ca, processes=processes)
        if created:
            log.say(f"created a {'single-CA ' if single_ca else ''}test PKI in {ca_dir}/ "
                    f"(TEST ONLY: identity CA, permissions CA, {len(missing)} participants)")
        else:
            shown = ", ".join(p.name for p in missing[:5])
            log.say(f"added participants {shown}"
                    f"{f' and {len(missing) - 5} more' if len(missing) > 5 else ''} to "
                    f"{ca_dir}/")
    if single_ca and not pki.single_ca:
        raise GovkitError(f"{ca_dir}: this runner needs one CA for identities and permissions; "
                          f"create one with `govkit pki init DIR --single-ca` and pass --ca DIR")
    return pki
