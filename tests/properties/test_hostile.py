"""Hostile inputs, one class at a time: every command answers each with its documented exit
code and a clean message, never a traceback, within a second of CPU time.

Classes (issue 8): inputs that used to take seconds to forever (quadratic scans, FIFOs,
devices, no size cap), user mistakes that were internal errors, verdicts that differed
from OpenSSL/Cyclone, and an inconsistent PKI. Time is measured as this process's CPU
time, which other work on the machine does not inflate.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID
from helpers.signers import key_usage, make_cert
from helpers.variants import Wrapper
from typer.testing import CliRunner

from govkit.catalog.profiles import get_profile
from govkit.cli.main import app
from govkit.common.limits import MAX_DOCUMENT_BYTES, MAX_SMIME_BYTES
from govkit.documents.render import GovernanceDocument
from govkit.pki.issuance import init_pki
from govkit.pki.testpki import TestPKI
from govkit.smime.sign import sign_bytes, sign_document

DOC = MAX_DOCUMENT_BYTES
CPU_LIMIT_S = 1.0
GOVERNANCE = GovernanceDocument(get_profile("rtps_sign")).render()


def _make_base() -> Path:
    """A directory with a test PKI (pki/), a valid governance document and its .p7s.
    Made once, when the cases are collected (they embed its files)."""
    root = Path(tempfile.mkdtemp(prefix="govkit-hostile-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    init_pki(root / "pki")
    (root / "g.xml").write_bytes(GOVERNANCE)
    sign_document(root / "g.xml", root / "pki/permissions_ca.pem",
                  root / "pki/permissions_ca.key")
    return root


@dataclass
class Case:
    args: list[str]
    files: dict[str, bytes | Callable[[Path], None]]
    code: int
    says: str                 # must appear on stdout or stderr


def _with_comment(body: bytes) -> bytes:
    return GOVERNANCE.replace(b"<dds", b"<!--" + body + b"-->\n<dds", 1)


def _signed(base: Path) -> bytes:
    return (base / "g.p7s").read_bytes()


def _lint_value(value: bytes) -> bytes:
    return GOVERNANCE.replace(b"<max>230</max>", b"<max>" + value + b"</max>", 1)


def _ids(n: int) -> bytes:
    return (b"<dds><domain_access_rules><domain_rule><domains>" + b"<id>x</id>" * n +
            b"</domains></domain_rule></domain_access_rules></dds>")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _symlink_to(target: str) -> Callable[[Path], None]:
    return lambda path: path.symlink_to(target)


def _sign_with(base: Path, extra: str, *more: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        subprocess.run(["openssl", "smime", "-sign", "-text", "-md", "sha256", extra, *more,
                        "-signer", str(base / "pki/permissions_ca.pem"), "-inkey",
                        str(base / "pki/permissions_ca.key"), "-in", str(base / "g.xml"),
                        "-out", str(path)], check=True, capture_output=True)
    return make


def _signed_by(base: Path, **cert_args) -> Callable[[Path], None]:
    """A .p7s signed by a certificate the Permissions CA issued, with `cert_args`."""
    pki = TestPKI(base / "pki")
    cert, key = make_cert("hostile signer", (pki.certificate("permissions_ca"),
                                             pki.private_key("permissions_ca")), ca=False,
                          **cert_args)

    def make(path: Path) -> None:
        path.write_bytes(sign_bytes(GOVERNANCE, cert, key))
    return make


def _wrapper(base: Path, edit: Callable[[Wrapper], Wrapper]) -> bytes:
    return edit(Wrapper.parse(_signed(base))).render()


POLICY = (b'<policy version="0.2.0" xmlns:xi="http://www.w3.org/2001/XInclude"><enclaves>'
          b'<enclave path="/a"><profiles><profile ns="/" node="n"><topics publish="ALLOW">'
          b'<topic>t</topic></topics></profile></profiles></enclave></enclaves></policy>')
INCLUDE_LOOP = POLICY.replace(b"<enclaves>", b'<enclaves><xi:include href="loop1.xml"/>')
CAPTURE = (Path(__file__).parent.parent / "data/wire/leaks/cyclone-none.pcap").read_bytes()
RESULTS = (Path(__file__).parent.parent / "data/report/full/results.json").read_bytes()


def _with_lone_surrogate(results: bytes) -> bytes:
    return results.replace(b'"environment": {', b'"environment": {"host": "h\\ud800x", ', 1)


def cases(base: Path) -> dict[str, Case]:
    signed = _signed(base)
    w = Wrapper.parse(signed)
    v = ["validate"]
    vc = ["validate", "--target", "cyclone"]
    ver = ["verify", "--ca", str(base / "pki")]
    return {
        # -- validate: inputs that took seconds or never finished ------------------------
        "comments-20k": Case(v + ["f.xml"], {"f.xml": b"<!--" * 20_000}, 1, "not well-formed"),
        "comments-at-cap": Case(v + ["f.xml"], {"f.xml": b"<!--" * (DOC // 4)}, 1,
                                "not well-formed"),
        "pis-20k": Case(v + ["f.xml"], {"f.xml": b"<?" * 20_000}, 1, "not well-formed"),
        "pis-at-cap": Case(v + ["f.xml"], {"f.xml": b"<?" * (DOC // 2)}, 1, "not well-formed"),
        "cdata-20k": Case(v + ["f.xml"], {"f.xml": b"<![CDATA[" * 20_000}, 1,
                          "not well-formed"),
        "cdata-at-cap": Case(v + ["f.xml"], {"f.xml": b"<![CDATA[" * (DOC // 9)}, 1,
                             "not well-formed"),
        "lt-at-cap": Case(v + ["f.xml"], {"f.xml": b"<" * DOC}, 1, "not well-formed"),
        "tag-starts-at-cap": Case(v + ["f.xml"], {"f.xml": b"<a" * (DOC // 2)}, 1,
                                  "not well-formed"),
        "bare-crs-at-cap": Case(v + ["f.xml"], {"f.xml": b"\r" * DOC}, 1, "not well-formed"),
        "newlines-at-cap": Case(v + ["f.xml"], {"f.xml": b"\n" * DOC}, 1, "empty"),
        "invalid-siblings-100k": Case(v + ["f.xml"], {"f.xml": _ids(99_000)}, 1,
                                      "nodes (limit 50000)"),
        "invalid-siblings-5000": Case(v + ["f.xml"], {"f.xml": _ids(5000)}, 1,
                                      "children (limit 1000 per element)"),
        "invalid-siblings-900": Case(v + ["f.xml"], {"f.xml": _ids(900)}, 1,
                                     "too many problems"),
        "too-many-nodes": Case(v + ["f.xml"], {"f.xml": b"<dds><domain_access_rules>" + (
            b"<domain_rule>" + b"<x/>" * 900 + b"</domain_rule>") * 60 +
            b"</domain_access_rules></dds>"}, 1, "nodes (limit 50000)"),
        "deep-nesting": Case(v + ["f.xml"], {"f.xml": b"<a>" * 100_000 + b"</a>" * 100_000},
                             1, "not well-formed"),
        "huge-attribute": Case(v + ["f.xml"], {"f.xml": GOVERNANCE.replace(
            b"<dds", b'<dds a="' + b"v" * (DOC - 2000) + b'"', 1)}, 1, "attribute 'a'"),
        "many-attributes": Case(v + ["f.xml"], {"f.xml": b"<dds " + b" ".join(
            b'a%d="1"' % i for i in range(50_000)) + b"/>"}, 1, "f.xml:1:"),
        "comment-in-document-with-crs": Case(v + ["f.xml"], {
            "f.xml": _with_comment(b"\r" * 300_000)}, 0, "valid"),
        "over-the-cap": Case(v + ["f.xml"], {"f.xml": b" " * (MAX_SMIME_BYTES + 1)}, 2,
                             "too large"),
        "plain-over-document-cap": Case(v + ["f.xml"], {"f.xml": b" " * (DOC + 1)}, 2,
                                        f"limit {DOC} bytes"),
        "fifo": Case(v + ["p.xml"], {"p.xml": _fifo}, 2, "named pipe"),
        "symlink-to-fifo": Case(v + ["l.xml"], {"p.xml": _fifo, "l.xml": _symlink_to("p.xml")},
                                2, "named pipe"),
        "dev-zero": Case(v + ["/dev/zero"], {}, 2, "character device"),
        "dev-null": Case(v + ["/dev/null"], {}, 2, "character device"),
        "directory": Case(v + ["."], {}, 2, "directory"),
        "missing": Case(v + ["nope.xml"], {}, 2, "cannot read"),
        "fifo-among-files": Case(v + ["g.xml", "p.xml"], {"g.xml": GOVERNANCE, "p.xml": _fifo},
                                 2, "g.xml: valid"),
        # -- validate: DTDs, entities ------------------------------------------------------
        "doctype": Case(v + ["f.xml"], {"f.xml": b'<?xml version="1.0"?>\n<!DOCTYPE dds ['
                                        b'<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
                                        b"<dds>&x;</dds>"}, 1, "DTD/DOCTYPE is not allowed"),
        "doctype-after-unterminated-pi": Case(v + ["f.xml"], {
            "f.xml": b"<?x <!DOCTYPE a><dds/>"}, 1, "f.xml:1:"),
        "encoding-name-with-nul": Case(v + ["f.xml"], {"f.xml": GOVERNANCE.replace(
            b'encoding="UTF-8"', b'encoding="\0UTF-8"', 1)}, 1, "not well-formed"),
        "doctype-utf16": Case(v + ["f.xml"], {"f.xml": '<?xml version="1.0" encoding="UTF-16"?>'
                                             '\n<!DOCTYPE x>\n<dds/>'.encode("utf-16")}, 1,
                              "DTD/DOCTYPE"),
        # -- validate: a comment must not hide a value from the lint ----------------------
        # (under Cyclone DDS 0.10's reading, whose limit is 230: validate --target cyclone)
        "comment-before-value": Case(vc + ["f.xml"], {"f.xml": _lint_value(b"<!-- c -->231")},
                                     1, "GK010 error"),
        "comment-inside-value": Case(vc + ["f.xml"], {"f.xml": _lint_value(b"2<!-- c -->31")},
                                     1, "domain id 231"),
        "pi-inside-value": Case(vc + ["f.xml"], {"f.xml": _lint_value(b"23<?x y?>1")}, 1,
                                "GK010 error"),
        "cdata-value": Case(vc + ["f.xml"], {"f.xml": _lint_value(b"<![CDATA[231]]>")}, 1,
                            "GK010 error"),
        "huge-domain-id": Case(v + ["f.xml"], {"f.xml": _lint_value(b"9" * 5000)}, 1,
                               "GK010 error"),
        # -- validate/verify: S/MIME that took seconds --------------------------------------
        "smime-bare-crs-at-cap": Case(v + ["f.p7s"], {"f.p7s": signed[:200] + b"\r" * (
            MAX_SMIME_BYTES - 300)}, 1, "S/MIME"),
        "smime-header-flood": Case(v + ["f.p7s"], {"f.p7s": b"Content-Type: multipart/signed;"
                                                   b" boundary=b\n" + b"a\n" * 500_000}, 1,
                                   "header block longer than"),
        "smime-delimiter-flood": Case(v + ["f.p7s"], {
            "f.p7s": b"Content-Type: multipart/signed; boundary=b\n\n" + b"--b\n" * 300_000},
            1, "closing boundary"),
        "verify-crs-60k": Case(ver + ["f.p7s"], {"f.p7s": b"\r" * 60_000}, 1, "malformed"),
        "verify-crs-at-cap": Case(ver + ["f.p7s"], {"f.p7s": b"\r" * MAX_SMIME_BYTES}, 1,
                                  "malformed"),
        "verify-crs-in-signed-part": Case(ver + ["f.p7s"], {"f.p7s": signed.replace(
            b"<dds", b"<!--" + b"\r" * 500_000 + b"-->\n<dds", 1)}, 1, "digest mismatch"),
        "verify-opaque-garbage": Case(ver + ["f.p7s"], {
            "f.p7s": b"Content-Type: application/pkcs7-mime\n\n" + b"!\n" * 600_000}, 1,
            "malformed"),
        "verify-over-the-cap": Case(ver + ["f.p7s"], {"f.p7s": b"x" * (MAX_SMIME_BYTES + 1)},
                                    2, "too large"),
        "verify-dev-zero": Case(ver + ["/dev/zero"], {}, 2, "character device"),
        "verify-fifo": Case(ver + ["p.p7s"], {"p.p7s": _fifo}, 2, "named pipe"),
        "verify-directory": Case(ver + ["."], {}, 2, "directory"),
        "verify-all-files-reported": Case(ver + ["g.p7s", "nope.p7s"], {"g.p7s": signed}, 2,
                                          "g.p7s: OK"),
        "verify-ca-garbage-pem": Case(["verify", "--ca", "ca.pem", "g.p7s"], {
            "ca.pem": b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
            "g.p7s": signed}, 2, "not a PEM certificate"),
        "verify-ca-fifo": Case(["verify", "--ca", "ca.pem", "g.p7s"], {"ca.pem": _fifo,
                                                                      "g.p7s": signed}, 2,
                               "named pipe"),
        "verify-nul-in-epilogue": Case(ver + ["f.p7s"], {"f.p7s": signed + b"\0junk"}, 0,
                                       "NUL byte"),
        "verify-nul-in-document": Case(ver + ["f.p7s"], {"f.p7s": signed.replace(
            b"<dds", b"<dds\0", 1)}, 1, "NUL byte"),
        # -- verify: verdicts that differed from OpenSSL / Cyclone ------------------------
        "verify-third-part": Case(ver + ["f.p7s"], {"f.p7s": _wrapper(
            base, lambda x: Wrapper(**{**x.__dict__, "extra_parts": [[b"third"]]}))}, 1,
            "exactly 2"),
        "verify-boundary-injected": Case(ver + ["f.p7s"], {"f.p7s": w.set_header(
            b"content-type", b"Content-Type: multipart/signed; micalg=x; boundary=evil; "
            b'boundary="' + w.boundary + b'"').render()}, 1, "boundary 'evil' not found"),
        "verify-duplicate-content-type": Case(ver + ["f.p7s"], {"f.p7s": Wrapper(
            **{**w.__dict__, "headers": [b"Content-Type: text/plain", *w.headers]}).render()},
            1, "MIME type text/plain"),
        "verify-nested-smime": Case(ver + ["f.p7s"], {"f.p7s": sign_bytes(
            signed, *_ca(base))}, 1, "itself a MIME message"),
        "verify-utf16-signed": Case(ver + ["f.p7s"], {"f.p7s": sign_bytes(
            GOVERNANCE.decode().replace("UTF-8", "UTF-16").encode("utf-16"), *_ca(base))}, 1,
            "NUL byte"),
        "verify-signer-without-digital-signature": Case(ver + ["f.p7s"], {
            "f.p7s": _signed_by(base, usage=key_usage(ke=True))}, 1, "digitalSignature"),
        "verify-signer-client-auth": Case(ver + ["f.p7s"], {"f.p7s": _signed_by(
            base, extensions=[(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
                               False)])},
            1, "emailProtection"),
        "verify-nocerts": Case(ver + ["f.p7s"], {"f.p7s": _sign_with(base, "-nocerts")}, 1,
                               "not in the signature"),
        "verify-signed-without-text": Case(ver + ["f.p7s"], {"f.p7s": _sign_with(
            base, "-binary")}, 1, "text/plain"),
        "verify-leaf-of-the-ca": Case(ver + ["f.p7s"], {"f.p7s": _signed_by(
            base, usage=key_usage(ds=True))}, 0, "OK (governance"),
        # -- sign -------------------------------------------------------------------------
        "sign-crs-in-comment": Case(["sign", "--ca", str(base / "pki"), "f.xml"], {
            "f.xml": _with_comment(b"\r" * 300_000)}, 0, "signed f.p7s"),
        "sign-utf16": Case(["sign", "--ca", str(base / "pki"), "f.xml"], {
            "f.xml": GOVERNANCE.decode().replace("UTF-8", "UTF-16").encode("utf-16")}, 1,
            "UTF-8"),
        "sign-latin1-declared": Case(["sign", "--ca", str(base / "pki"), "f.xml"], {
            "f.xml": GOVERNANCE.replace(b"UTF-8", b"ISO-8859-1")}, 1, "ISO-8859-1"),
        "sign-smime-renamed": Case(["sign", "--ca", str(base / "pki"), "f.xml"], {
            "f.xml": signed}, 1, "already a MIME"),
        "sign-fifo": Case(["sign", "--ca", str(base / "pki"), "p.xml"], {"p.xml": _fifo}, 2,
                          "named pipe"),
        "sign-over-the-cap": Case(["sign", "--ca", str(base / "pki"), "f.xml"], {
            "f.xml": b" " * (DOC + 1)}, 2, "too large"),
        "sign-garbage-ca-key": Case(["sign", "--ca", "k", "g.xml"], {
            "k/permissions_ca.pem": (base / "pki/permissions_ca.pem").read_bytes(),
            "k/permissions_ca.key": b"garbage", "g.xml": GOVERNANCE}, 2,
            "not an unencrypted PEM private key"),
        "sign-garbage-ca-pem": Case(["sign", "--ca", "k", "g.xml"], {
            "k/permissions_ca.pem": b"\x00" * 100,
            "k/permissions_ca.key": (base / "pki/permissions_ca.key").read_bytes(),
            "g.xml": GOVERNANCE}, 2, "not a PEM certificate"),
        "sign-mismatched-key": Case(["sign", "--ca", "k", "g.xml"], {
            "k/permissions_ca.pem": (base / "pki/permissions_ca.pem").read_bytes(),
            "k/permissions_ca.key": (base / "pki/identity_ca.key").read_bytes(),
            "g.xml": GOVERNANCE}, 2, "does not belong"),
        "sign-ca-typo": Case(["sign", "--ca", "typo/", "g.xml"], {"g.xml": GOVERNANCE}, 2,
                             "never creates"),
        "sign-expired-ca": Case(["sign", "--ca", "k", "g.xml"], {
            **_ca_files(make_cert("old", not_before=_days(-10), not_after=_days(-1))),
            "g.xml": GOVERNANCE}, 1, "would not verify"),
        "sign-ca-without-digital-signature": Case(["sign", "--ca", "k", "g.xml"], {
            **_ca_files(make_cert("nods", usage=key_usage(cert_sign=True))),
            "g.xml": GOVERNANCE}, 1, "digitalSignature"),
        # -- pki / generate: user mistakes that were internal errors ----------------------
        "pki-days-huge": Case(["pki", "init", "p", "--days", "1000000000"], {}, 2, "--days"),
        "pki-days-zero": Case(["pki", "init", "p", "--days", "0"], {}, 2, "--days"),
        "pki-garbage-ca-key": Case(["pki", "init", "k", "--participant", "new"], {
            "k/identity_ca.pem": (base / "pki/identity_ca.pem").read_bytes(),
            "k/identity_ca.key": b"garbage",
            "k/permissions_ca.pem": (base / "pki/permissions_ca.pem").read_bytes(),
            "k/permissions_ca.key": (base / "pki/permissions_ca.key").read_bytes()}, 2,
            "identity_ca.key: not an unencrypted PEM private key"),
        # (a comma separates two names, as in every list option: `a,b` is a and b)
        "pki-bad-participant": Case(["pki", "init", "p", "--participant", "a;b"], {}, 2,
                                    "invalid participant name"),
        "pki-directory-is-a-file": Case(["pki", "init", "f"], {"f": b"x"}, 2,
                                        "f: exists and is not a directory"),
        "generate-domain-digits": Case(["generate", "-p", "rtps_sign", "--domain",
                                        "9" * 5000], {}, 2, "need min <= max <= 230"),
        "generate-garbage-pki": Case(["generate", "-p", "rtps_sign", "--ca", "k"], {
            "k/identity_ca.pem": b"x", "k/identity_ca.key": b"x",
            "k/permissions_ca.pem": b"x", "k/permissions_ca.key": b"x"}, 2, "not a PEM"),
        # -- the held-out battery of 2026-12-07 (issue 46): crashes ----------------------
        "xinclude-symlink-loop": Case(["explain", "--policy", "p.xml"], {
            "p.xml": INCLUDE_LOOP, "loop1.xml": _symlink_to("loop2.xml"),
            "loop2.xml": _symlink_to("loop1.xml")}, 2,
            "p.xml:1:78: xi:include: loop1.xml: cannot read: Too many levels of symbolic"),
        "lint-xinclude-symlink-loop": Case(["lint", "p.xml"], {
            "p.xml": INCLUDE_LOOP, "loop1.xml": _symlink_to("loop1.xml")}, 1,
            "Too many levels of symbolic links"),
        "policy-itself-a-symlink-loop": Case(["explain", "--policy", "p.xml"], {
            "p.xml": _symlink_to("p.xml")}, 2, "p.xml: cannot read: Too many levels"),
        # (a file name that is not UTF-8 reaches Python as a lone surrogate: \xff here)
        "explain-policy-name-not-utf8": Case(["explain", "--policy", "p\udcff.xml"], {
            "p\udcff.xml": POLICY}, 0, "encrypt"),
        "explain-policy-name-control-character": Case(["explain", "--policy", "p\x01.xml"], {
            "p\x01.xml": POLICY}, 0, "encrypt"),
        "wire-check-read-superscript-size": Case(["wire-check", "--read",
                                                  "rtps_encrypt-latency-\u00b2.pcap"], {
            "rtps_encrypt-latency-\u00b2.pcap": CAPTURE}, 0, "uses no DDS Security"),
        "report-lone-surrogate": Case(["report", "r"], {
            "r/results.json": _with_lone_surrogate(RESULTS)}, 2,
            "\\ud800 is half of a UTF-16 surrogate pair"),
    }


def _ca(base: Path):
    pki = TestPKI(base / "pki")
    return pki.certificate("permissions_ca"), pki.private_key("permissions_ca")


def _days(n: int) -> dt.datetime:
    return dt.datetime.now(dt.UTC) + dt.timedelta(days=n)


def _ca_files(cert_key) -> dict[str, bytes]:
    cert, key = cert_key
    return {"k/permissions_ca.pem": cert.public_bytes(serialization.Encoding.PEM),
            "k/permissions_ca.key": key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption())}


CASES = cases(_make_base())


@contextlib.contextmanager
def _watchdog(seconds: int):
    """Fail instead of hanging the suite if a command blocks (e.g. on a FIFO)."""
    def expired(signum, frame):
        raise TimeoutError(f"command still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_there_are_enough_cases():
    assert len(CASES) >= 60


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input(tmp_path, monkeypatch, name):
    case = CASES[name]
    monkeypatch.chdir(tmp_path)
    for rel, content in case.files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        content(path) if callable(content) else path.write_bytes(content)
    cpu = time.process_time()
    with _watchdog(20):
        result = CliRunner().invoke(app, case.args)
    cpu = time.process_time() - cpu
    output = result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in output and "internal error" not in output
    assert result.exit_code == case.code, output[-2000:]
    assert case.says in output, output[-2000:]
    assert cpu <= CPU_LIMIT_S, f"{cpu:.2f} s of CPU"
