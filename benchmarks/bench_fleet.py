#!/usr/bin/env python3
"""How fast is a fleet? govkit against an `openssl smime -sign` loop, and against the floor.

For N participants (default 1,000 and 10,000) of one test PKI this times, alternated per
round so a drifting machine hits every side alike:

* `govkit generate --participants FILE --sign` into a fresh directory (render, validate,
  sign, write; the PKI exists already, as in the issue), the same again over its output
  (re-signing: the .xml files are unchanged, the .p7s all new), and `govkit verify` over
  the N files it wrote;
* the same with `--paranoid`: govkit's full path in the same engine (every document
  rendered by Jinja, validated in full, every signature verified; `verify` checks every
  file in full), so the ratio is what validation by construction saves;
* govkit's per-file path, what `generate` + `sign` and `verify` did before the one-pass
  engine (`write_document`, `sign_document`, `verify_file` per file, one process);
* the loop people run today: one `openssl smime -sign -text` process per file (and one
  `openssl smime -verify` per file), over the very same files.

The per-file path and the loop run on a sample of --sample files per round, extrapolated
to N (they scale linearly; 10,000 would take minutes per round);
* the floor of the work itself on one core, measured here in the same process: the
  permissions template rendered, its parsed tree validated by the XSD, and a DER PKCS#7
  signature made with cryptography's builder (µs per document);
* what the fast path spends per document, stage by stage, on one core: reading and
  checking the participant's certificate, rendering and admitting its values, signing
  with the DER template, the MIME, creating and writing the two files; and for `verify`
  reading, the layout checks, the signature check and recognizing the document.

It prints medians over the rounds, the others' times as ratios of govkit's, and govkit's
µs per document (wall time × CPUs / N: the CPU time it occupies) beside the floor.
`govkit --help` start-up is timed against `python -c pass` too. Timings on a shared
machine are noisy: read the ratios, and the load averages printed with them.

    .venv/bin/python benchmarks/bench_fleet.py [--sizes 1000,10000] [--rounds 3]
        [--sample 100] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
GOVKIT = str(BIN / "govkit")


def wall(cmd: list[str], **kw) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    return time.perf_counter() - start


def openssl_loop(files: list[Path], pki: Path, verify: bool) -> float:
    """Seconds per file of one openssl process per file."""
    ca, key = pki / "permissions_ca.pem", pki / "permissions_ca.key"
    start = time.perf_counter()
    for f in files:
        if verify:
            cmd = ["openssl", "smime", "-verify", "-text", "-CAfile", str(ca), "-no-CApath",
                   "-no-CAstore", "-in", str(f.with_suffix(".p7s")), "-out", os.devnull]
        else:
            cmd = ["openssl", "smime", "-sign", "-text", "-md", "sha256", "-signer", str(ca),
                   "-inkey", str(key), "-in", str(f), "-out", str(f.with_suffix(".ossl"))]
        subprocess.run(cmd, check=True, capture_output=True)
    return (time.perf_counter() - start) / len(files)


_PER_FILE = """
import sys, time
from pathlib import Path
from govkit.catalog.runners import runner_info
from govkit.documents.render import PermissionsDocument
from govkit.generate.fleet import write_document
from govkit.pki.testpki import TestPKI
from govkit.smime.sign import sign_document
from govkit.smime.verify import verify_file
pki, out, verify = TestPKI(Path(sys.argv[1])), Path(sys.argv[2]), sys.argv[3] == "verify"
names = sys.argv[4:]
scope = runner_info("ddsperf")
ca = pki.certificate("permissions_ca")
start = time.perf_counter()
for name in names:
    xml = out / f"{name}.xml"
    if verify:
        assert verify_file(xml.with_suffix(".p7s"), ca).ok
    else:
        doc = PermissionsDocument.for_participant(pki, name, scope)
        write_document(doc, xml)
        sign_document(xml, pki.permissions_ca, pki.permissions_ca_key)
print((time.perf_counter() - start) / len(names))
"""


def per_file(names: list[str], pki: Path, out: Path, verify: bool) -> float:
    """Seconds per file of govkit's per-file path (what generate + sign and verify did
    before the one-pass engine: write_document, sign_document, verify_file per file)."""
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-c", _PER_FILE, str(pki), str(out),
                           "verify" if verify else "sign", *names],
                          check=True, capture_output=True, text=True)
    return float(done.stdout)


def _best_us(steps: dict, count: int = 300, rounds: int = 7) -> dict[str, float]:
    out = {}
    for name, step in steps.items():
        best = []
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(count):
                step()
            best.append((time.perf_counter() - start) / count * 1e6)
        out[name] = min(best)   # the floor: the least the machine took
    return out


def stages_us(pki: Path, work: Path) -> tuple[dict[str, float], dict[str, float]]:
    """µs per document of each stage of the fast path (generate, verify), one core."""
    import datetime as dt
    import itertools

    from cryptography import x509

    from govkit.catalog.runners import runner_info
    from govkit.check import construct
    from govkit.common import staging
    from govkit.common.inputs import read_input
    from govkit.common.limits import MAX_PEM_BYTES, MAX_SMIME_BYTES
    from govkit.documents.render import PermissionsDocument
    from govkit.generate.fleet import issued_check
    from govkit.pki.testpki import TestPKI
    from govkit.smime import pkcs7, verify_batch
    from govkit.smime.sign import TEXT_HEADER, smime_message

    t = TestPKI(pki)
    name = sorted(t.identities())[0]
    cert, key = t.key_pair("permissions_ca")
    identity_ca = t.certificate("identity_ca")
    template = pkcs7.SignerTemplate.for_signer(cert, key)
    when = pkcs7.signing_time(dt.datetime.now(dt.UTC))
    scope = runner_info("ddsperf")
    participant = x509.load_pem_x509_certificate(t.path(name).read_bytes())
    doc = PermissionsDocument.for_certificate(participant, name, scope)
    data = construct.render_proven(doc)
    part = TEXT_HEADER + data.replace(b"\n", b"\r\n")
    der = template.sign(part, when)
    signed = smime_message(part, der)
    scratch = staging.StagingDir(work / "stage-bench")
    scratch.create()
    counter = itertools.count()
    (work / "one.p7s").write_bytes(signed)
    verifier = verify_batch.Verifier(cert)
    assert verifier.verify(signed, "first").ok   # learns the layout and the shape

    issued = issued_check(identity_ca)

    def certificate():
        pem = read_input(t.path(name), MAX_PEM_BYTES, "certificate")
        c = x509.load_pem_x509_certificate(pem)
        issued(c)
        return PermissionsDocument.for_certificate(c, name, scope)

    generate = {
        "certificate read": lambda: read_input(t.path(name), MAX_PEM_BYTES, "certificate"),
        "certificate read+issuer's signature checked+subject": certificate,
        "render+admit": lambda: construct.render_proven(doc),
        "DER sign": lambda: template.sign(part, when),
        "MIME": lambda: smime_message(part, der),
        "2 files create+write": lambda: (scratch.write(f"{next(counter)}.xml", data),
                                         scratch.write(f"{next(counter)}.p7s", signed)),
    }
    verify = {
        "read": lambda: read_input(work / "one.p7s", MAX_SMIME_BYTES, "signed document"),
        "verify (fast path, all)": lambda: verifier.verify(signed, "x"),
        "of which recognize": lambda: verifier._documents.recognize(data),
    }
    try:
        return _best_us(generate, 200, 5), _best_us(verify, 200, 5)
    finally:
        staging.discard_dirs([scratch])


def floor_us(pki: Path) -> dict[str, float]:
    """The work itself on one core: render, XSD-validate a parsed tree, DER PKCS#7 sign."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.serialization import pkcs7
    from lxml import etree

    from govkit import __version__
    from govkit.catalog.runners import runner_info
    from govkit.check.xsd import xsd_schema
    from govkit.common.findings import DocumentKind
    from govkit.common.templating import get_template
    from govkit.documents.render import PermissionsDocument
    from govkit.pki.testpki import TestPKI

    t = TestPKI(pki)
    cert, key = t.key_pair("permissions_ca")
    doc = PermissionsDocument.for_participant(t, sorted(t.identities())[0],
                                              runner_info("ddsperf"))
    template = get_template("permissions.xml.j2")
    data = doc.render()
    tree = etree.fromstring(data)
    schema = xsd_schema(DocumentKind.PERMISSIONS)
    options = [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Binary]
    steps = {
        "render": lambda: template.render(doc=doc, domains=doc.domains, version=__version__),
        "xsd validate": lambda: schema.validate(tree),
        "DER PKCS#7 sign": lambda: pkcs7.PKCS7SignatureBuilder().set_data(data).add_signer(
            cert, key, hashes.SHA256()).sign(serialization.Encoding.DER, options),
    }
    return _best_us(steps)


def startup(rounds: int = 15) -> tuple[float, float]:
    """Median ms of `govkit --help` and of `python -c pass`, alternated."""
    helps, passes = [], []
    for _ in range(rounds):
        helps.append(wall([GOVKIT, "--help"]) * 1e3)
        passes.append(wall([sys.executable, "-c", "pass"]) * 1e3)
    return statistics.median(helps), statistics.median(passes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sample", type=int, default=100, help="openssl runs per round")
    ap.add_argument("--keep", type=Path, help="work directory to keep (default: a temp one)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cpus = len(os.sched_getaffinity(0))
    work = args.keep or Path(tempfile.mkdtemp(prefix="govkit-fleet-"))
    work.mkdir(parents=True, exist_ok=True)
    pki = work / "pki"
    print(f"load average {os.getloadavg()[0]:.2f} at the start; {cpus} CPUs; {work}",
          flush=True)
    if not (pki / "permissions_ca.pem").exists():
        took = wall([GOVKIT, "pki", "init", str(pki), "--count", str(max(sizes)), "--prefix",
                     "p"])
        print(f"pki init of {max(sizes)} participants: {took:.1f} s (not counted)", flush=True)
    names = sorted(p.stem for p in pki.glob("p*.key"))
    times: dict[tuple[int, str], list[float]] = {}
    for n in sizes:
        (work / f"fleet-{n}.txt").write_text("\n".join(names[:n]) + "\n")
    for r in range(args.rounds):
        for n in sizes:
            out = work / f"build-{n}-round{r}"   # a fresh directory: every file written
            fleet = work / f"fleet-{n}.txt"
            sides = ["govkit", "paranoid", "per-file", "openssl"]
            sides = sides if r % 2 == 0 else sides[::-1]
            for side in sides:
                if side == "govkit":
                    command = [GOVKIT, "generate", "--participants", str(fleet), "--sign",
                               "--ca", str(pki), "--out", str(out)]
                    if (out / "permissions").exists():   # openssl went first and made them
                        shutil.rmtree(out)
                    gen = wall(command)
                    again = wall(command)   # re-signing: the documents are unchanged
                    files = sorted((out / "permissions").glob("*.p7s"))
                    ver = wall([GOVKIT, "verify", "--ca", str(pki), *map(str, files)])
                    times.setdefault((n, "govkit sign"), []).append(gen)
                    times.setdefault((n, "govkit re-sign"), []).append(again)
                    times.setdefault((n, "govkit verify"), []).append(ver)
                elif side == "paranoid":
                    full = work / f"paranoid-{n}-round{r}"
                    command = [GOVKIT, "generate", "--participants", str(fleet), "--sign",
                               "--paranoid", "--ca", str(pki), "--out", str(full)]
                    times.setdefault((n, "paranoid sign"), []).append(wall(command))
                    files = sorted((full / "permissions").glob("*.p7s"))
                    times.setdefault((n, "paranoid verify"), []).append(wall(
                        [GOVKIT, "verify", "--paranoid", "--ca", str(pki), *map(str, files)]))
                    shutil.rmtree(full)
                elif side == "per-file":
                    sample = names[:n][:: max(1, n // args.sample)][:args.sample]
                    scratch = work / f"per-file-{n}"
                    times.setdefault((n, "per-file sign"), []).append(
                        per_file(sample, pki, scratch, verify=False) * n)
                    times.setdefault((n, "per-file verify"), []).append(
                        per_file(sample, pki, scratch, verify=True) * n)
                else:
                    xmls = sorted((out / "permissions").glob("*.xml"))
                    if not xmls:   # the first round starts with openssl: make the files
                        wall([GOVKIT, "generate", "--participants", str(fleet), "--sign",
                              "--ca", str(pki), "--out", str(out)])
                        xmls = sorted((out / "permissions").glob("*.xml"))
                    sample = xmls[:: max(1, len(xmls) // args.sample)][:args.sample]
                    times.setdefault((n, "openssl sign"), []).append(
                        openssl_loop(sample, pki, verify=False) * n)
                    times.setdefault((n, "openssl verify"), []).append(
                        openssl_loop(sample, pki, verify=True) * n)
            print(f"round {r + 1}, N={n}: " + ", ".join(
                f"{k[1]} {v[-1]:.2f} s" for k, v in times.items() if k[0] == n), flush=True)
    floor = floor_us(pki)
    generate_us, verify_us = stages_us(pki, work)
    help_ms, pass_ms = startup()
    load = os.getloadavg()[0]
    print(f"\nmedians of {args.rounds} rounds (per-file and openssl: {args.sample} files a "
          f"round, extrapolated); load average {load:.2f} at the end")
    print(f"{'N':>6}  {'task':7} {'govkit s':>9} {'paranoid s':>11} {'per-file s':>11} "
          f"{'openssl s':>10} {'paranoid/govkit':>16} {'per-file/govkit':>16} "
          f"{'openssl/govkit':>15}  govkit us/doc x {cpus} CPUs")
    floor_total = sum(floor.values())
    for n in sizes:
        for task in ("sign", "re-sign", "verify"):
            g = statistics.median(times[(n, f"govkit {task}")])
            us = g / n * 1e6 * cpus
            if task == "re-sign":   # the same files again: compared with the same others
                task, note = "sign", " (re-sign: documents unchanged)"
            else:
                note = f" ({us / floor_total:.1f}x the floor)" if task == "sign" else ""
            f, p, o = (statistics.median(times[(n, f"{side} {task}")])
                       for side in ("paranoid", "per-file", "openssl"))
            print(f"{n:>6}  {task:7} {g:9.2f} {f:11.2f} {p:11.2f} {o:10.2f} {f / g:15.1f}x "
                  f"{p / g:15.1f}x {o / g:14.1f}x  {us:6.0f}{note}")
    print("floor of the work on one core: " + " + ".join(
        f"{k} {v:.1f}" for k, v in floor.items()) + f" = {floor_total:.1f} us/document")
    print("generate's fast path per document, one core: " + ", ".join(
        f"{k} {v:.1f}" for k, v in generate_us.items())
        + f"; in all {sum(v for k, v in generate_us.items() if k != 'certificate read'):.1f} us")
    print("verify's fast path per file, one core: " + ", ".join(
        f"{k} {v:.1f}" for k, v in verify_us.items()) + " us")
    print(f"start-up: govkit --help {help_ms:.0f} ms, python -c pass {pass_ms:.0f} ms "
          f"(medians of 15)")


if __name__ == "__main__":
    main()
