"""One pass over many documents: the same documents, layout and verdicts as the per-file
path (write_document per document, smime.sign.sign_document), checked by OpenSSL."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.serialization import pkcs7 as crypto_pkcs7

from govkit.catalog.profiles import PROFILES, get_profile
from govkit.catalog.runners import runner_info
from govkit.check import validate
from govkit.common import staging
from govkit.common.errors import GovkitError
from govkit.common.fsutil import collect_files
from govkit.documents import mime
from govkit.documents.render import DomainSet, GovernanceDocument, PermissionsDocument
from govkit.generate import fleet, grants
from govkit.pki.issuance import init_pki
from govkit.pki.participants import Grants, Participant
from govkit.pki.testpki import TestPKI
from govkit.smime import pkcs7
from govkit.smime.sign import TEXT_HEADER, sign_bytes, sign_document, sign_paths, smime_message
from govkit.smime.verify import verify_bytes, verify_file

VALID = GovernanceDocument(get_profile("rtps_sign")).render()
GOVKIT = str(Path(sys.executable).with_name("govkit"))


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> TestPKI:
    return init_pki(tmp_path_factory.mktemp("fleet-pki"),
                    participants=["pub", "sub", *(f"n{i:02d}" for i in range(30))])[0]


def openssl_verify(p7s: Path, ca: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", "smime", "-verify", "-CAfile", str(ca), "-no-CApath",
                           "-no-CAstore", "-text", "-in", str(p7s), "-out", "/dev/null"],
                          capture_output=True, timeout=30)


def _documents(directory: Path) -> list[Path]:
    """The files in `directory` but generate's record of who wrote them (generate.grants:
    it is rewritten only when it changes, and holds no document)."""
    return [p for p in directory.iterdir() if p.name != grants.RECORD]


def _files(directory: Path) -> dict[str, bytes]:
    """The documents under `directory` (not generate's record of who wrote them)."""
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file() and p.name != grants.RECORD}


# ------------------------------------------------------------------ generate


@pytest.mark.parametrize("processes", [1, 2], ids=["in-process", "pool"])
def test_generate_writes_what_the_per_file_path_writes(pki, tmp_path, processes):
    per_file, one_pass = tmp_path / "per-file", tmp_path / "one-pass"
    domains = DomainSet.parse("0,3-7")
    scope = runner_info("perftest")
    for p in PROFILES:   # the per-file path: one render, validate and write per document
        if p.security:
            fleet.write_document(GovernanceDocument(p, domains),
                                 per_file / "governance" / f"{p.name}.xml")
    for name in pki.participants():
        fleet.write_document(PermissionsDocument.for_participant(pki, name, scope, domains),
                             per_file / "permissions" / f"{name}.xml")
    result = fleet.generate(list(PROFILES), pki, one_pass, domains, "perftest",
                            processes=processes)
    assert _files(one_pass) == _files(per_file)
    assert result.errors == [] and result.stale == []
    assert [str(p.relative_to(one_pass)) for p in result.written] == [
        f"governance/{p.name}.xml" for p in PROFILES if p.security] + [
        f"permissions/{n}.xml" for n in pki.participants()]


@pytest.mark.parametrize("processes", [1, 2], ids=["in-process", "pool"])
def test_generate_sign_output_verifies_with_openssl_and_govkit(pki, tmp_path, processes):
    result = fleet.generate([get_profile("rtps_sign")], pki, tmp_path, DomainSet(), "ddsperf",
                            sign=True, processes=processes)
    signed = [p for p in result.written if p.suffix == ".p7s"]
    assert len(signed) == 1 + len(pki.participants())
    for p7s in signed[::4]:   # a sample for OpenSSL (a process each)
        run = openssl_verify(p7s, pki.permissions_ca)
        assert run.returncode == 0, run.stderr
    for p7s in signed:
        v = verify_file(p7s, pki.permissions_ca)
        assert v.ok, (p7s, v.problems)
        # the signed document is the .xml written beside it
        assert validate.signed_document(p7s.read_bytes(), str(p7s)).data == \
            mime.signed_text(p7s.with_suffix(".xml").read_bytes())


def test_signing_again_leaves_unchanged_documents_in_place(pki, tmp_path):
    """Re-signing a fleet (a new Permissions CA, say) rewrites every .p7s but leaves each
    .xml that already holds exactly the document; a changed or odd one is replaced."""
    profile = [get_profile("rtps_sign")]
    fleet.generate(profile, pki, tmp_path, DomainSet(), "ddsperf", sign=True)
    perms = tmp_path / "permissions"
    before = {p.name: p.stat().st_ino for p in _documents(perms)}
    (perms / "sub.xml").write_bytes(b"changed")
    (perms / "n00.xml").chmod(0o600)
    result = fleet.generate(profile, pki, tmp_path, DomainSet(), "ddsperf", sign=True)
    after = {p.name: p.stat().st_ino for p in _documents(perms)}
    assert sorted(after) == sorted(before)
    for name, inode in after.items():
        kept = name.endswith(".xml") and name not in ("sub.xml", "n00.xml")
        assert (inode == before[name]) == kept, name
    assert len(result.written) == 2 + 2 * len(pki.participants())   # all reported
    assert (perms / "sub.xml").read_bytes() != b"changed"
    assert (perms / "n00.xml").stat().st_mode & 0o777 == 0o644
    for p7s in perms.glob("*.p7s"):
        assert verify_file(p7s, pki.permissions_ca).ok


def test_without_a_der_template_the_builder_signs(pki, tmp_path, monkeypatch):
    def unknown(*_):
        raise pkcs7.TemplateError("a layout this module does not know")
    monkeypatch.setattr(pkcs7.SignerTemplate, "for_signer", unknown)
    (tmp_path / "d.xml").write_bytes(VALID)
    signed, errors = fleet.sign_files([tmp_path], pki.permissions_ca, pki.permissions_ca_key,
                                      processes=1)
    assert not errors and verify_file(signed[0], pki.permissions_ca).ok


def test_participants_get_their_own_grants_and_subjects(tmp_path):
    fleet_ = [Participant("alpha", "Acme Corp", "Robots", "DE",
                          Grants(("Temperature", "Pressure"), ("Commands",), ("plant/*",))),
              Participant("beta", grants=Grants((), ("Temperature",), ())),
              Participant("gamma")]
    pki, _ = init_pki(tmp_path / "pki", fleet_)
    assert pki.certificate("alpha").subject.rfc4514_string() == \
        "C=DE,O=Acme Corp,OU=Robots,CN=alpha"
    result = fleet.generate([], pki, tmp_path / "build", DomainSet(), "ddsperf", fleet_,
                            sign=True)
    assert not result.errors
    alpha = (tmp_path / "build/permissions/alpha.xml").read_text()
    assert "<subject_name>C=DE,O=Acme Corp,OU=Robots,CN=alpha</subject_name>" in alpha
    assert re.findall(r"<(publish|subscribe)>\s*<topics>(.*?)</topics>", alpha, re.S) == [
        ("publish", "\n            <topic>Temperature</topic>\n            <topic>Pressure</topic>"
                    "\n          "),
        ("subscribe", "\n            <topic>Commands</topic>\n          ")]
    assert alpha.count("<partition>plant/*</partition>") == 2
    beta = (tmp_path / "build/permissions/beta.xml").read_text()
    assert "<publish>" not in beta and "<partitions>" not in beta
    assert "<topic>Temperature</topic>" in beta
    gamma = (tmp_path / "build/permissions/gamma.xml").read_text()
    assert "<topic>DDSPerfRDataKS</topic>" in gamma   # no grants: the runner's topics
    for name in ("alpha", "beta", "gamma"):
        assert verify_file(tmp_path / f"build/permissions/{name}.p7s",
                           pki.permissions_ca).ok


def test_listed_participants_must_be_current_identities(pki, tmp_path):
    with pytest.raises(GovkitError, match="no identity for ghost"):
        fleet.generate([], pki, tmp_path, DomainSet(), "ddsperf", [Participant("ghost")])
    other = tmp_path / "other"
    shutil.copytree(pki.directory, other)
    stranger, _ = init_pki(tmp_path / "stranger", participants=["pub"])
    for suffix in (".pem", ".key"):   # an identity from another Identity CA
        shutil.copy(stranger.path("pub", suffix), other / f"pub{suffix}")
    result = fleet.generate([], TestPKI(other), tmp_path / "b", DomainSet(), "ddsperf",
                            [Participant("pub"), Participant("sub")])
    assert [str(e) for e in result.errors] == [
        f"{other}/pub.pem: not issued by the current Identity CA (left from an earlier PKI); "
        f"no permissions written for it (reissue with `govkit pki init {other} --force`)"]
    assert sorted(p.name for p in _documents(tmp_path / "b/permissions")) == ["sub.xml"]
    # without a list, such identities are skipped, as `generate` always did
    result = fleet.generate([], TestPKI(other), tmp_path / "c", DomainSet(), "ddsperf")
    assert result.stale == ["pub"] and not result.errors


# ------------------------------------------------------------------ layout


def _normalised(data: bytes) -> bytes:
    """The file with its boundary and base64 signature replaced by placeholders."""
    boundary = re.search(rb'boundary="([^"]+)"', data).group(1)
    head, _, _ = data.replace(boundary, b"BOUNDARY").partition(b'filename="smime.p7s"\n\n')
    return head + b"<signature>" + data[data.rindex(b"\n\n--"):].replace(boundary, b"BOUNDARY")


def test_one_pass_layout_is_sign_document_s(pki, tmp_path):
    for name, data in (("gov.xml", VALID), ("nonl.xml", VALID.rstrip(b"\n")),
                       ("crlf.xml", VALID.replace(b"\n", b"\r\n"))):
        (tmp_path / "a").mkdir(exist_ok=True)
        (tmp_path / "b").mkdir(exist_ok=True)
        (tmp_path / "a" / name).write_bytes(data)
        (tmp_path / "b" / name).write_bytes(data)
        per_file = sign_document(tmp_path / "a" / name, pki.permissions_ca,
                                 pki.permissions_ca_key).read_bytes()
        signed, errors = fleet.sign_files([tmp_path / "b" / name], pki.permissions_ca,
                                          pki.permissions_ca_key)
        assert not errors
        one_pass = signed[0].read_bytes()
        assert _normalised(one_pass) == _normalised(per_file)
        assert verify_bytes(one_pass, name, pki.certificate("permissions_ca")).ok


def _builder_der(signed_part: bytes, cert, key) -> bytes:
    return (crypto_pkcs7.PKCS7SignatureBuilder().set_data(signed_part)
            .add_signer(cert, key, hashes.SHA256())
            .sign(serialization.Encoding.DER, [crypto_pkcs7.PKCS7Options.DetachedSignature,
                                               crypto_pkcs7.PKCS7Options.Binary]))


@pytest.mark.parametrize("key_type", ["rsa-2048", "ec-p256"])
def test_der_template_is_the_builder_s_signature(tmp_path, key_type):
    """RSA PKCS#1 v1.5 is deterministic: with the builder's signing time the one-pass
    signature is the builder's byte for byte, and so is the whole file. ECDSA signatures
    differ per signing: everything else must be equal."""
    pki, _ = init_pki(tmp_path, participants=[], key_type=key_type)
    cert, key = pki.key_pair("permissions_ca")
    template = pkcs7.SignerTemplate.for_signer(cert, key)
    signed_part = TEXT_HEADER + mime.signed_text(VALID)
    theirs = _builder_der(signed_part, cert, key)
    when = pkcs7.SignerTemplate.parse(theirs).when   # the builder's signing time
    ours = template.sign(signed_part, when)
    boundary = "----" + "0123456789ABCDEF" * 2
    if key_type == "rsa-2048":
        assert ours == theirs
        assert smime_message(signed_part, ours, boundary) == \
            smime_message(signed_part, theirs, boundary)
    else:
        a, b = pkcs7.SignerTemplate.parse(ours), pkcs7.SignerTemplate.parse(theirs)
        assert a.template.layout == b.template.layout
        assert (a.when, a.digest, a.attributes) == (b.when, b.digest, b.attributes)
        assert a.signature != b.signature
    assert verify_bytes(smime_message(signed_part, ours), "x.p7s", cert).ok


def test_signing_time_encoding():
    assert pkcs7.signing_time(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)) == \
        b"\x17\x0d260102030405Z"
    assert pkcs7.signing_time(dt.datetime(2050, 1, 2, 3, 4, 5, tzinfo=dt.UTC)) == \
        b"\x18\x0f20500102030405Z"


# ------------------------------------------------------------------ the same verdicts


def _hostile_inputs(directory: Path) -> None:
    """Documents the per-file path signs and refuses, for one directory each run."""
    directory.mkdir()
    cases = {
        "valid.xml": VALID,
        "crlf.xml": VALID.replace(b"\n", b"\r\n"),
        "no-final-newline.xml": VALID.rstrip(b"\n"),
        "lone-cr.xml": VALID.replace(b"<dds", b"<!-- a\rb -->\n<dds", 1),
        "cr-cr-lf.xml": VALID.replace(b"\n", b"\r\r\n"),
        "long-line.xml": VALID.replace(b"<dds", b"<!-- " + b"x" * 3000 + b" -->\n<dds", 1),
        "long-line-cr-at-1023.xml": VALID.replace(
            b"<dds", b"<!-- " + b"x" * 1017 + b"\ry -->\n<dds", 1),
        "invalid.xml": VALID.replace(b"SIGN", b"SIGNED"),
        "not-xml.xml": b"<dds><oops></dds>",
        "empty.xml": b"",
        "mime.xml": b"MIME-Version: 1.0\nContent-Type: text/plain\n\n" + VALID,
        "utf16.xml": VALID.decode().replace("UTF-8", "UTF-16").encode("utf-16"),
        "latin1.xml": VALID.replace(b"UTF-8", b"ISO-8859-1"),
        "bad-utf8.xml": VALID.replace(b"RTPS", b"RT\xffPS", 1),
        "nul.xml": VALID + b"\0",
        "doctype.xml": b'<?xml version="1.0"?>\n<!DOCTYPE dds [<!ENTITY x "y">]>\n' + VALID[38:],
        "too-large.xml": b"<dds>" + b" " * 1_000_001 + b"</dds>",
        "crlf-too-large.xml": VALID.replace(b"<dds", b"<!--" + b"\n" * 600_000 + b"-->\n<dds"),
    }
    for name, data in cases.items():
        (directory / name).write_bytes(data)
    (directory / "dir.xml").mkdir()
    os.mkfifo(directory / "fifo.xml")
    (directory / "link.xml").symlink_to(directory / "valid.xml")
    (directory / "dangling.xml").symlink_to(directory / "missing")


def _verdicts(signed: list[Path], errors: list[GovkitError], directory: Path):
    return (sorted(p.name for p in signed),
            sorted((str(e).replace(str(directory), "D"), e.exit_code) for e in errors))


@pytest.mark.parametrize("processes", [1, 2], ids=["in-process", "pool"])
def test_sign_gives_the_per_file_verdicts_on_hostile_inputs(pki, tmp_path, processes):
    per_file, one_pass = tmp_path / "per-file", tmp_path / "one-pass"
    _hostile_inputs(per_file)
    _hostile_inputs(one_pass)
    a = sign_paths([per_file], pki.permissions_ca, pki.permissions_ca_key)
    b = fleet.sign_files([one_pass], pki.permissions_ca, pki.permissions_ca_key, processes)
    assert _verdicts(*b, one_pass) == _verdicts(*a, per_file)
    signed = _verdicts(*b, one_pass)[0]
    assert {"valid.p7s", "crlf.p7s", "lone-cr.p7s", "long-line.p7s", "link.p7s"} <= set(signed)
    assert len(_verdicts(*b, one_pass)[1]) >= 12
    ca = pki.certificate("permissions_ca")
    for name in signed:
        assert verify_file(one_pass / name, ca).ok, name
        run = openssl_verify(one_pass / name, pki.permissions_ca)
        assert run.returncode == 0, (name, run.stderr)


def test_a_ca_that_cannot_sign_is_refused_for_every_document_with_its_reason(tmp_path):
    """The first document's full check fails (the CA has expired): every document is then
    checked in full and refused with the per-file path's own message."""
    past = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    old, _ = init_pki(tmp_path / "old", participants=[], days=1, now=past)
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        for i in range(3):
            (tmp_path / run / f"d{i}.xml").write_bytes(VALID)
    a = sign_paths([tmp_path / "a"], old.permissions_ca, old.permissions_ca_key)
    b = fleet.sign_files([tmp_path / "b"], old.permissions_ca, old.permissions_ca_key)
    assert _verdicts(*b, tmp_path / "b") == _verdicts(*a, tmp_path / "a")
    assert len(b[1]) == 3 and not b[0]
    assert all("the signature would not verify" in str(e) and "expired" in str(e)
               for e in b[1])


def test_sign_refuses_a_key_that_is_not_the_certificate_s(pki, tmp_path):
    other, _ = init_pki(tmp_path / "other", participants=[])
    (tmp_path / "d.xml").write_bytes(VALID)
    with pytest.raises(GovkitError, match="does not belong to the certificate"):
        fleet.sign_files([tmp_path], pki.permissions_ca, other.permissions_ca_key)
    assert not (tmp_path / "d.p7s").exists()


# ------------------------------------------------------------------ fast path, staging


def test_paranoid_writes_the_same_documents_checked_in_full(pki, tmp_path):
    """--paranoid renders and validates every document in full and verifies every
    signature it makes: the same .xml files, .p7s files that verify the same."""
    profiles = [get_profile("rtps_sign")]
    fast = fleet.generate(profiles, pki, tmp_path / "fast", DomainSet(), "ddsperf", sign=True)
    full = fleet.generate(profiles, pki, tmp_path / "full", DomainSet(), "ddsperf", sign=True,
                          paranoid=True)
    assert not fast.errors and not full.errors
    a, b = _files(tmp_path / "fast"), _files(tmp_path / "full")
    assert sorted(a) == sorted(b)
    assert {k: v for k, v in a.items() if k.endswith(".xml")} == \
        {k: v for k, v in b.items() if k.endswith(".xml")}
    ca = pki.certificate("permissions_ca")
    for name, data in a.items():
        if name.endswith(".p7s"):
            assert _normalised(data) == _normalised(b[name]), name
            assert verify_bytes(data, name, ca).ok


def test_a_fresh_directory_is_committed_whole_and_nothing_is_left_beside_it(pki, tmp_path):
    fleet.generate([get_profile("rtps_sign")], pki, tmp_path, DomainSet(), "ddsperf",
                   sign=True, processes=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["governance", "permissions"]
    names = sorted(p.name for p in _documents(tmp_path / "permissions"))
    assert names == sorted(f"{n}{s}" for n in pki.participants() for s in (".xml", ".p7s"))
    assert all((tmp_path / "permissions" / n).stat().st_mode & 0o777 == 0o644 for n in names)


def test_a_staging_directory_left_by_a_killed_run_is_removed_and_never_read(pki, tmp_path):
    left = tmp_path / ".permissions.1-2-ffffff-abcd.govkit-tmp"   # a dead owner's, foreign
    left.mkdir()
    (left / "x.xml").write_bytes(VALID)
    assert collect_files([tmp_path], ".xml") == []   # sign/verify scans never take it
    os.utime(left, (0, 0))   # old: its owner (another pid namespace) is taken to be gone
    staging.remove_orphans(tmp_path)
    assert not left.exists()


def _kill_fresh(pki_dir: Path, out: Path, fraction: float | None, duration: float) -> None:
    """Run generate into `out` and SIGKILL it after `fraction` of `duration`, or (None)
    once its staging directory holds 300 files."""
    proc = subprocess.Popen([GOVKIT, "generate", "--count", "400", "--sign", "--jobs", "2",
                             "--ca", str(pki_dir), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    if fraction is not None:
        time.sleep(duration * fraction)
    else:
        while proc.poll() is None:
            stages = list(out.glob(f".permissions.*{staging.TMP_SUFFIX}")) \
                if out.exists() else []
            try:
                if stages and len(os.listdir(stages[0])) >= 300:
                    break
            except FileNotFoundError:   # renamed meanwhile
                break
            time.sleep(0.0005)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


def test_sigkill_into_a_fresh_directory_leaves_it_absent_or_complete(tmp_path):
    """Killed at any moment, a run into a fresh directory leaves no permissions/ at all, or
    all of it, every .p7s verifying (the staging directory is renamed whole)."""
    pki_dir = tmp_path / "pki"
    init_pki(pki_dir, participants=[f"p{i:03d}" for i in range(400)])   # --count 400
    started = time.monotonic()
    subprocess.run([GOVKIT, "generate", "--count", "400",
                    "--sign", "--jobs", "2", "--ca", str(pki_dir), "--out",
                    str(tmp_path / "whole")], check=True, capture_output=True)
    duration = time.monotonic() - started
    complete = _files(tmp_path / "whole" / "permissions")
    ca = TestPKI(pki_dir).certificate("permissions_ca")
    seen = {"absent": 0, "complete": 0}
    for i, fraction in enumerate((None, None, 0.2, 0.4, 0.6, 0.8, 0.95)):
        out = tmp_path / f"kill{i}"
        _kill_fresh(pki_dir, out, fraction, duration)
        perms = out / "permissions"
        if not perms.exists():
            seen["absent"] += 1
            continue
        files = _files(perms)
        assert sorted(files) == sorted(complete)
        for name, data in files.items():
            if name.endswith(".xml"):
                assert data == complete[name]
            else:
                assert verify_bytes(data, name, ca).ok, name
        seen["complete"] += 1
    print(f"after the kills: {seen}")
    assert seen["absent"] >= 2   # the kills while the staging directory filled up


def test_verify_of_a_fleet_gives_the_full_verdicts_with_and_without_paranoid(pki, tmp_path):
    """verify's fast path (known layout, proven document shape) says what the full check
    says, on a generated fleet and on documents that are signed correctly but invalid or
    unusual (an inverted validity, escaped characters, a tampered value)."""
    from govkit.smime import verify_batch
    fleet.generate([get_profile("rtps_sign")], pki, tmp_path, DomainSet(), "ddsperf",
                   sign=True)
    files = sorted((tmp_path / "permissions").glob("*.p7s"))
    cert, key = pki.key_pair("permissions_ca")
    good = files[0].with_suffix(".xml").read_bytes()
    odd = {
        "inverted.xml": re.sub(rb"<not_before>[^<]*</not_before>",
                               b"<not_before>2999-01-01T00:00:00Z</not_before>", good),
        "escaped.xml": good.replace(b"<topic>", b"<topic>a&amp;b&lt;c&#34;", 1),
        "entity.xml": good.replace(b"<topic>", b"<topic>&#60;", 1),
        "tab.xml": good.replace(b"<topic>", b"<topic>\t", 1),
        "not-a-date.xml": re.sub(rb"<not_after>[^<]*</not_after>",
                                 b"<not_after>2030-02-30T00:00:00Z</not_after>", good),
    }
    for name, data in odd.items():
        (tmp_path / name).write_bytes(sign_bytes(data, cert, key))
        files.append(tmp_path / name)
    tampered = tmp_path / "tampered.p7s"
    tampered.write_bytes(files[1].read_bytes().replace(b"<default>DENY", b"<default>ALLOW"))
    files.append(tampered)
    full = [verify_file(f, cert) for f in files]
    verifier = verify_batch.Verifier(cert)
    fast = [verifier.verify(f.read_bytes(), str(f)) for f in files]
    paranoid = verify_batch.verify_files(files, cert, processes=2, paranoid=True)
    for a, b, c in zip(full, fast, paranoid, strict=True):
        assert (a.ok, a.problems, a.kind, a.signer) == (b.ok, b.problems, b.kind, b.signer) \
            == (c.ok, c.problems, c.kind, c.signer), a.file
    verdicts = {f.name: r.ok for f, r in zip(files, full, strict=True)}
    assert verdicts["inverted.xml"] is False and verdicts["not-a-date.xml"] is False
    assert verdicts["escaped.xml"] and verdicts["entity.xml"] and verdicts["tab.xml"]
    assert verdicts["tampered.p7s"] is False
    assert verifier._documents.count == 1   # the fleet's one shape, learned once
