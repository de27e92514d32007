"""verify over ../shared/reference/corpus2: the 79 signed files that come with the CA that
signed them (Fast DDS's chained CA file holds an intermediate, then its root). govkit's
signature verdict is `openssl smime -verify -text -CAfile CA` run now, and the index's
(computed with OpenSSL when the corpus was made) wherever time has not changed it; where
the implementations read the CA file differently, govkit says which certificate each one
trusts and what it decides."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from helpers.corpus2 import corpus2_dir, deadline, index_rows

from govkit.check.validate import check_bytes, read_document
from govkit.smime.verify import load_trusted, verify_file

CHAINED = "fastdds/permissions_signed_by_chained_ca.smime"


@pytest.fixture(scope="module")
def signed(shared) -> tuple[Path, list[dict[str, str]]]:
    rows = [r for r in index_rows(shared) if r["ca_file"]]
    assert len(rows) == 79
    return corpus2_dir(shared), rows


def _openssl(path: Path, ca: Path, *extra: str) -> bool:
    result = subprocess.run(["openssl", "smime", "-verify", *extra, "-in", str(path),
                             "-CAfile", str(ca), "-no-CApath", "-no-CAstore",
                             "-out", "/dev/null"], capture_output=True, timeout=30)
    return result.returncode == 0


def test_verify_agrees_with_openssl_on_every_signed_file(signed):
    root, rows = signed
    agreed = lines_checked = 0
    for row in rows:
        path, ca = root / row["file"], root / row["ca_file"]
        with deadline(f"verify {row['file']}"):
            v = verify_file(path, ca)
        assert v.signature_ok == _openssl(path, ca, "-text"), (row["file"], v.problems)
        assert v.trusted == [c.subject.rfc4514_string() for c in load_trusted(ca)]
        now = _openssl(path, ca)
        if now == (row["openssl_verify"] == "ok"):
            agreed += 1
        else:   # only time may have changed OpenSSL's verdict since the index was made
            assert any("expired" in p or "not valid before" in p for p in v.problems), row
        if v.signature_ok and v.problems:   # the signature holds, the document does not
            assert all(p.startswith(("signed document is invalid",
                                     "signed document is refused by an implementation"))
                       for p in v.problems)
            # the same lines validate names: lines of the file, not of the signed body
            check = check_bytes(read_document(path), str(path))
            first = (check.findings + check.warnings)[0]
            assert v.problems[0].endswith(f"(line {first.line}, column {first.column})"), \
                (v.problems[0], first)
            # two findings on one line were two identical lines (Test_Permissions_listener)
            assert len(set(v.problems)) == len(v.problems), v.problems
            lines_checked += 1
    assert lines_checked >= 10
    assert agreed >= 60   # all 79 in December 2026; later, certificates expire


def test_a_ca_file_with_an_intermediate_and_its_root_is_trusted_whole(signed, tmp_path):
    root, rows = signed
    (row,) = [r for r in rows if r["file"] == CHAINED]
    path, ca = root / CHAINED, root / row["ca_file"]
    certs = load_trusted(ca)
    assert len(certs) == 2 and certs[0].issuer == certs[1].subject   # intermediate, root
    v = verify_file(path, ca)
    # OpenSSL and Fast DDS 2.9 trust both: the signer is the intermediate, under the root
    assert v.ok and _openssl(path, ca, "-text")
    assert v.signer == certs[0].subject.rfc4514_string()
    # Cyclone DDS 0.10 trusts the first alone, which is not self-signed: OpenSSL refuses
    first = tmp_path / "first.pem"
    first.write_bytes(certs[0].public_bytes(serialization.Encoding.PEM))
    assert not _openssl(path, first, "-text")
    assert v.targets() == {"openssl": True, "cyclone": False, "fastdds": True}
    (line,) = v.target_lines()
    assert line.startswith("Cyclone DDS 0.10 trusts only the first certificate of the CA "
                           f"file ({v.signer}), so it refuses it: ")
    assert "is itself trusted, but is not self-signed" in line
    assert verify_file(path, first).problems == v.first_only


def test_verify_command_per_ca_never_crashes_and_says_what_it_trusts(signed):
    root, rows = signed
    by_ca = collections.defaultdict(list)
    for row in rows:
        by_ca[row["ca_file"]].append(str(root / row["file"]))
    for ca, files in by_ca.items():
        result = subprocess.run([sys.executable, "-m", "govkit", "verify", "--json", "--ca",
                                 str(root / ca), *files], capture_output=True, text=True,
                                timeout=120)
        assert result.returncode in (0, 1), (ca, result.stderr[-2000:])
        assert "Traceback" not in result.stderr + result.stdout
        n = len(x509.load_pem_x509_certificates((root / ca).read_bytes()))
        assert ("holds 2 certificates, all trusted" in result.stderr) == (n == 2), ca
        out = json.loads(result.stdout)
        results = out["files"] if isinstance(out, dict) else out
        assert [r["file"] for r in results] == files
        assert all(len(r["trusted"]) == n for r in results)


def test_verify_says_the_signature_holds_when_only_the_document_fails(signed):
    """Where OpenSSL accepts the signature but the signed document is refused, the verdict
    says so first: 'signed document is invalid' alone read as if the signature had failed
    (issue 23: verify agrees with OpenSSL, or says why it differs)."""
    root, rows = signed
    by_file = {r["file"]: r for r in rows}
    names = ["cyclonedds/Test_Permissions_invalid_element.p7s",   # signature ok, doc invalid
             "cyclonedds/Test_Permissions_not_signed.p7s",         # no signature at all
             "cyclonedds/Test_Permissions_expired.p7s"]            # both fine (dates: lint)
    ca = {by_file[n]["ca_file"] for n in names}
    assert len(ca) == 1
    result = subprocess.run([sys.executable, "-m", "govkit", "verify", "--ca",
                             str(root / ca.pop()), *(str(root / n) for n in names)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    said = {n: [x for x in result.stdout.splitlines() if x.startswith(str(root / n))]
            for n in names}
    first = said[names[0]]
    assert "signature OK (signed by CN=adlinktech.com" in first[0] and \
        first[0].endswith("but the document is refused:"), first
    assert first[1].split(": ", 1)[1].startswith("signed document is invalid: ufo:")
    assert _openssl(root / names[0], root / by_file[names[0]]["ca_file"], "-text")
    assert not any("signature OK" in x for x in said[names[1]]), said[names[1]]
    assert said[names[2]] == [f"{root / names[2]}: OK (permissions, signed by "
                              "CN=adlinktech.com,O=ADLINK Technolocy Inc.,ST=Some-State,C=NL)"]
