"""`govkit verify` over many files gives `verify_file`'s verdicts, reasons included, on
valid, hostile and tampered files; its fast path is taken for the usual ones."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest
from helpers.signers import signer_variants
from helpers.variants import Wrapper, craft_pkcs7, mutants, with_signature, wrapper_variants

from govkit.catalog.profiles import get_profile
from govkit.catalog.runners import runner_info
from govkit.catalog.targets import TARGETS
from govkit.check.validate import check_bytes
from govkit.common.errors import GovkitError
from govkit.documents import mime
from govkit.documents.render import DomainSet, GovernanceDocument, PermissionsDocument
from govkit.pki.issuance import init_pki
from govkit.pki.testpki import TestPKI
from govkit.smime import pkcs7, verify_batch
from govkit.smime.sign import TEXT_HEADER, sign_bytes, sign_document, smime_message
from govkit.smime.verify import verify_file

NOW = dt.datetime.now(dt.UTC)


@pytest.fixture(scope="module")
def pki(pki_dir) -> TestPKI:
    return TestPKI(pki_dir)


@pytest.fixture(scope="module")
def governance(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("verify-batch") / "governance.xml"
    path.write_bytes(GovernanceDocument(get_profile("sign_origin_data_encrypt")).render())
    return path


def _template_signed(pki: TestPKI, document: bytes, when: bytes | None = None) -> bytes:
    """Signed as `govkit generate --sign` signs, optionally with a chosen signing time."""
    cert, key = pki.key_pair("permissions_ca")
    signed_part = TEXT_HEADER + mime.signed_text(document)
    when = when or pkcs7.signing_time(NOW)
    return smime_message(signed_part,
                         pkcs7.SignerTemplate.for_signer(cert, key).sign(signed_part, when))


def _variants(pki: TestPKI, governance: Path, work: Path) -> list[tuple[str, bytes]]:
    ours = sign_document(governance, pki.permissions_ca, pki.permissions_ca_key)
    theirs = work / "openssl.p7s"
    subprocess.run(["openssl", "smime", "-sign", "-text", "-md", "sha256", "-signer",
                    str(pki.permissions_ca), "-inkey", str(pki.permissions_ca_key), "-in",
                    str(governance), "-out", str(theirs)], check=True, capture_output=True)
    xml = governance.read_bytes()
    perm = PermissionsDocument.for_participant(pki, "pub", runner_info("ddsperf")).render()
    cases = [("openssl", theirs.read_bytes()), ("template-permissions",
                                                _template_signed(pki, perm))]
    cases += [(f"ours-{n}", d) for n, d in wrapper_variants(ours.read_bytes())]
    cases += [(f"openssl-{n}", d) for n, d in wrapper_variants(theirs.read_bytes())]
    cases += mutants(ours.read_bytes(), count=60, seed=12)
    good = _template_signed(pki, xml)
    cases += [
        # the canonical layout, wrong in one value each
        ("tampered-content", good.replace(b"<min>0</min>", b"<min>1</min>")),
        ("tampered-signature", _flip_signature(good)),
        ("invalid-utc-time", _template_signed(pki, xml, pkcs7.tlv(0x17, b"261399999999Z"))),
        ("leap-second-time", _template_signed(pki, xml, pkcs7.tlv(0x17, b"261231235960Z"))),
        ("generalized-time", _template_signed(pki, xml, pkcs7.signing_time(
            dt.datetime(2051, 1, 1, tzinfo=dt.UTC)))),
        ("invalid-document", _template_signed(pki, xml.replace(b"SIGN_WITH", b"SIGNED_WITH"))),
        ("nul-in-document", _template_signed(pki, xml.replace(b"</dds>", b"</dds>\0x"))),
        ("nul-in-file", good + b"\0"),
        ("foreign-ca", _template_signed(init_pki(work / "foreign", participants=[])[0], xml)),
    ]
    base = Wrapper.parse(ours.read_bytes())
    signed_part = mime.canonical(b"\n".join(base.content) + b"\n")
    cert, key = pki.key_pair("permissions_ca")
    for name, kwargs in {"crafted-sorted": {}, "crafted-reversed": {"order": lambda a: a[::-1]},
                         "crafted-no-digest": {"message_digest": False},
                         "crafted-sha384": {"digest": "sha384"}}.items():
        cases.append((name, with_signature(base, craft_pkcs7(signed_part, cert, key,
                                                             **kwargs)).render()))
    return cases


def _flip_signature(data: bytes) -> bytes:
    parsed = pkcs7.SignerTemplate.parse(mime.read_smime(data).signature())
    signature = bytearray(parsed.signature)
    signature[-1] ^= 1
    der = parsed.template.assemble(parsed.attributes, bytes(signature))
    w = Wrapper.parse(data)
    return with_signature(w, der).render()


def _write(cases, directory: Path) -> list[Path]:
    directory.mkdir(exist_ok=True)
    paths = []
    for i, (name, data) in enumerate(cases):
        path = directory / f"{i:03d}-{name[:60]}.p7s"
        path.write_bytes(data)
        paths.append(path)
    return paths


@pytest.mark.parametrize("processes", [1, 2], ids=["in-process", "pool"])
def test_batch_verdicts_are_verify_file_s(pki, governance, tmp_path, processes):
    cases = _variants(pki, governance, tmp_path)
    # a valid file first, in each chunk: the fast path is armed for what follows
    good = _template_signed(pki, governance.read_bytes())
    cases = [c for i, case in enumerate(cases) for c in
             ([("good", good)] if i % 40 == 0 else []) + [case]]
    paths = _write(cases, tmp_path / "files")
    (tmp_path / "files" / "dir.p7s").mkdir()
    os.mkfifo(tmp_path / "files" / "fifo.p7s")
    paths += [tmp_path / "files" / "dir.p7s", tmp_path / "files" / "fifo.p7s",
              tmp_path / "files" / "missing.p7s"]
    ca = pki.certificate("permissions_ca")
    batch = verify_batch.verify_files(paths, ca, NOW, processes)
    assert len(batch) == len(paths)
    accepted = 0
    for path, got in zip(paths, batch, strict=True):
        try:
            expected = verify_file(path, ca, NOW)
        except GovkitError as e:
            assert isinstance(got, GovkitError) and str(got) == str(e), path
            assert got.exit_code == e.exit_code
            continue
        assert got.to_json() == expected.to_json(), path.name
        accepted += expected.ok
    assert accepted >= 40 and len(paths) - accepted >= 100


def test_fast_path_is_taken_for_the_usual_files_and_only_says_ok(pki, governance, tmp_path,
                                                                 monkeypatch):
    full_checks = []   # the files the full check (verify_bytes) saw; the rest took the fast path
    full = verify_batch.verify_bytes
    monkeypatch.setattr(verify_batch, "verify_bytes",
                        lambda data, name, *a: full_checks.append(name) or full(data, name, *a))
    verifier = verify_batch.Verifier(pki.certificate("permissions_ca"), NOW)
    xml = governance.read_bytes()
    files = [_template_signed(pki, xml) for _ in range(5)]
    theirs = tmp_path / "openssl.p7s"
    for _ in range(3):   # OpenSSL's own layout is learned too
        subprocess.run(["openssl", "smime", "-sign", "-text", "-md", "sha256", "-signer",
                        str(pki.permissions_ca), "-inkey", str(pki.permissions_ca_key), "-in",
                        str(governance), "-out", str(theirs)], check=True, capture_output=True)
        files.append(theirs.read_bytes())
    results = [verifier.verify(data, f"f{i}.p7s") for i, data in enumerate(files)]
    assert all(r.ok for r in results)
    assert full_checks == ["f0.p7s", "f5.p7s"]   # all but the first of each layout: fast
    tampered = files[1].replace(b"<min>0</min>", b"<min>1</min>")
    v = verifier.verify(tampered, "t.p7s")
    assert not v.ok and any("digest mismatch" in p for p in v.problems)
    assert full_checks[-1] == "t.p7s"


def test_signer_variants_get_verify_file_s_verdicts(pki, governance, tmp_path):
    """Who signed, and which CA is trusted: a layout learned from a signer that passes
    must never let a file of another signer through, and refused signers stay refused."""
    for variant in signer_variants(pki):
        signed = [variant.sign(governance, tmp_path / f"{variant.name}-{i}.p7s")
                  for i in range(2)]
        signed_part = TEXT_HEADER + mime.signed_text(governance.read_bytes())
        template = pkcs7.SignerTemplate.for_signer(variant.signer, variant.key)
        ours = tmp_path / f"{variant.name}-template.p7s"
        ours.write_bytes(smime_message(signed_part, template.sign(
            signed_part, pkcs7.signing_time(NOW))))
        files = [*signed, ours, *signed]
        batch = verify_batch.verify_files(files, variant.anchor, NOW)
        for path, got in zip(files, batch, strict=True):
            expected = verify_file(path, variant.anchor, NOW)
            assert got.to_json() == expected.to_json(), (variant.name, path.name)


@pytest.mark.parametrize("processes", [1, 2], ids=["in-process", "pool"])
def test_the_target_reaches_every_worker_and_the_fast_path(pki, tmp_path, processes):
    """`verify --target`: each signed document gets `validate --target`'s verdict on it
    (domain 231: Cyclone DDS 0.10 refuses it, the specification warns), in the pool's
    workers and after a layout was learned (a domain-230 file first in each chunk)."""
    tops = (230, 231, 230, 232, 233, 230)
    docs = {top: PermissionsDocument.for_participant(
        pki, "pub", runner_info("ddsperf"), DomainSet(((0, top),))).render() for top in tops}
    files = []
    for i in range(2 * len(tops)):
        top = tops[i % len(tops)]
        files.append(tmp_path / f"{i:02d}-{top}.p7s")
        files[-1].write_bytes(_template_signed(pki, docs[top]))
    ca = pki.certificate("permissions_ca")
    verdicts = set()
    for target in TARGETS:
        batch = verify_batch.verify_files(files, ca, NOW, processes, target=target)
        for path, got in zip(files, batch, strict=True):
            assert got.to_json() == verify_file(path, ca, NOW, target).to_json()
            top = int(path.stem.split("-")[1])
            check = check_bytes(docs[top], "p.xml", target=target)
            assert got.ok == (not check.findings), (target, top, got.problems)
            assert len(got.warnings) == len(check.warnings), (target, top, got.warnings)
            verdicts.add((target, top, got.ok))
    assert {("omg", 231, True), ("cyclone", 231, False), ("fastdds", 232, True),
            ("omg", 233, False)} <= verdicts


def test_the_fast_path_takes_a_file_only_if_smime_message_writes_it_so(pki, governance):
    """`message_parts` checks the layout `sign.smime_message` writes without writing it
    again: on a file and thousands of its near misses (every byte of the MIME frame and of the
    base64 changed, lines re-wrapped, padding bits set, the boundary's quote dropped), it
    takes exactly those that rendering the parts again gives back byte for byte."""
    import random
    cert, key = pki.key_pair("permissions_ca")
    for _ in range(50):   # one whose base64 ends in padding (ECDSA signatures vary in size)
        data = sign_bytes(governance.read_bytes(), cert, key)
        if data.rstrip(b"\n-").rsplit(b"\n\n", 1)[0].endswith(b"="):
            break
    parts = verify_batch.message_parts(data)
    assert parts is not None

    def agrees(candidate: bytes) -> bool:
        found = verify_batch.message_parts(candidate)
        again = found is not None and \
            smime_message(found[1], found[2], found[0].decode()) == candidate
        rendered_equal = found is not None and again
        return (found is None) or rendered_equal

    head = data.index(b"\r\n")                       # the frame before the signed part
    b64_from = data.index(b"\n\n", data.index(b"Content-Disposition")) + 2
    positions = [*range(head), *range(b64_from, len(data))]
    rng = random.Random(35)
    near = [data[:i] + bytes([b]) + data[i + 1:] for i in positions
            for b in {data[i] ^ 1, ord("\n"), ord(" "), ord("A"), ord("=")}]
    b64 = data[b64_from:data.rindex(b"\n\n--")]
    flat = b64.replace(b"\n", b"")
    rewrapped = b"\n".join(flat[i:i + 76] for i in range(0, len(flat), 76))
    layouts = [data.replace(b64, rewrapped), data.replace(b64, flat),
               data.replace(b64, b64 + b"\n"), data.replace(b'"\n\nThis is', b'\n\nThis is')]
    assert flat.endswith(b"=")
    if flat.endswith(b"="):   # a padding bit set: OpenSSL decodes it; smime_message never
        alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        at = len(b64.rstrip(b"=")) - 1
        layouts.append(data.replace(b64, b64[:at] + bytes([alphabet[
            alphabet.index(b64[at]) | 1]]) + b64[at + 1:]))
    near += layouts + [bytes(rng.choice(data) if rng.random() < 0.001 else c for c in data)
                       for _ in range(200)]
    assert all(agrees(c) for c in near)
    assert all(verify_batch.message_parts(c) is None for c in layouts)


def test_a_leaf_signer_is_cyclone_0_10_s_verdict_and_cyclone_11_refuses_it(pki, governance,
                                                                          tmp_path):
    """issue 37: Cyclone DDS 11 takes the Permissions CA certificate itself as the only
    signer (PKCS7_NOINTERN, eclipse-cyclonedds/cyclonedds#1552); 0.10 and OpenSSL accept a
    leaf the CA issued. verify gives 0.10's verdict and says what 11 does; the CA's own
    signature draws no such line."""
    variants = {v.name: v for v in signer_variants(pki)}
    leaf = next(v for n, v in variants.items() if v.signer != v.anchor
                and n.startswith("leaf") and not v.chain)
    by_leaf = verify_file(leaf.sign(governance, tmp_path / "leaf.p7s"),
                                pki.permissions_ca)
    assert by_leaf.ok, by_leaf.problems
    (note,) = [w for w in by_leaf.warnings if "Cyclone DDS 11" in w]
    assert note.startswith(f"signed by {leaf.signer.subject.rfc4514_string()}, not by the "
                           "Permissions CA certificate itself: Cyclone DDS 11 accepts only "
                           "that one as the signer (PKCS7_NOINTERN) and refuses it")
    by_ca = verify_file(variants["permissions-ca"].sign(governance, tmp_path / "ca.p7s"),
                              pki.permissions_ca)
    assert by_ca.ok and not [w for w in by_ca.warnings if "Cyclone DDS 11" in w]
