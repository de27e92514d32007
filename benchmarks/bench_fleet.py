#!/usr/bin/env python3
"""How fast is a fleet? govkit against its own full path, its per-file path, an `openssl
smime` loop, the code before (optional), and the per-document floor, in one run.

For a PKI of N participants (default 10,000; made once, not timed) this times, alternated
per round so a drifting machine hits every side alike:

* `govkit generate --participants FILE --all-profiles --sign` into a fresh directory (N
  permissions and the six governance documents, rendered, validated, signed and durably
  written) and `govkit verify` of the N + 6 files it wrote;
* the same with `--paranoid`: govkit's full path (every certificate verified against the
  Identity CA instead of the PKI manifest's hash, every document rendered by Jinja and
  validated in full, every signature verified; `verify` checks every file in full);
* with `--old DIR`, the same two commands from another govkit checkout (the code before
  this one: PYTHONPATH=DIR, this venv), on the very same PKI and files;
* govkit's per-file path, what `generate` + `sign` and `verify` did before the one-pass
  engine (`write_document`, `sign_document`, `verify_file` per file, one process), on a
  sample of --sample participants a round, extrapolated;
* the loop people run today: one `openssl smime -sign -text` process per file and one
  `openssl smime -verify` per file, on a sample of --sample files a round, extrapolated.

Each command's wall time and CPU time (user + system, its worker processes included) are
recorded, with how busy the machine was meanwhile: the load average, and the share of
both CPUs's time spent by anything (/proc/stat), so a run on a shared machine says how
shared it was. Then, on one core, in this process:

* the floor of the work per document: what no design can leave out (an ECDSA P-256
  signature, the SHA-256 of the document, creating and writing its two files in the
  output's file system, reading its certificate and hashing it; for verify an ECDSA
  verification, reading the file, hashing the document);
* what govkit's fast path spends on each stage (generate and verify).

It prints the medians over the rounds, the ratios of the others to govkit, govkit's CPU
per document against the floor, and checks a random sample of govkit's files with
`openssl smime -verify` (every one must pass).

    .venv/bin/python benchmarks/bench_fleet.py [--sizes 10000] [--rounds 3]
        [--sample 100] [--old /path/to/old/govkit] [--keep DIR] [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
GOVKIT = [str(BIN / "govkit")]
CPUS = os.cpu_count() or 1   # /proc/stat counts every CPU of the machine


def _cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]   # idle, iowait
    return sum(fields) - idle, sum(fields)


class Measured:
    """One command's wall time, CPU time and the machine's state meanwhile."""

    def __init__(self, wall: float, cpu: float, user: float, system: float, busy: float,
                 load: float):
        self.wall, self.cpu, self.user, self.system = wall, cpu, user, system
        self.busy, self.load = busy, load   # share of the machine's CPU time, load average

    @property
    def others(self) -> float:
        """The share of the machine's CPU time others took meanwhile (busy less ours)."""
        return max(0.0, self.busy - self.cpu / (self.wall * CPUS))

    def __str__(self) -> str:
        return (f"{self.wall:.2f} s wall, {self.cpu:.2f} s CPU ({self.user:.2f} user + "
                f"{self.system:.2f} sys), machine {self.busy:.0%} busy ({self.others:.0%} "
                f"by others), load {self.load:.1f}")


def measure(cmd: list[str], env: dict | None = None, check: bool = True) -> Measured:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0, total0 = _cpu_times()
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - start
    busy1, total1 = _cpu_times()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if check and done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:6])} …: exit {done.returncode}: "
                         f"{done.stderr.decode()[-2000:]}")
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return Measured(wall, user + system, user, system,
                    (busy1 - busy0) / max(1, total1 - total0), os.getloadavg()[0])


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


def openssl_sample(files: list[Path], pki: Path, count: int, seed: int) -> tuple[int, int]:
    """(passed, checked): `openssl smime -verify` on a random sample of govkit's files."""
    sample = random.Random(seed).sample(files, min(count, len(files)))
    ok = sum(subprocess.run(
        ["openssl", "smime", "-verify", "-text", "-CAfile", str(pki / "permissions_ca.pem"),
         "-no-CApath", "-no-CAstore", "-in", str(f), "-out", os.devnull],
        capture_output=True).returncode == 0 for f in sample)
    return ok, len(sample)


def _best_us(steps: dict, count: int = 400, rounds: int = 5) -> dict[str, float]:
    """µs of CPU per call of each step: the least of `rounds` (the floor of the machine)."""
    out = {}
    for name, step in steps.items():
        best = []
        for _ in range(rounds):
            start = time.process_time()
            for _ in range(count):
                step()
            best.append((time.process_time() - start) / count * 1e6)
        out[name] = min(best)
    return out


def per_document(pki: Path, work: Path) -> tuple[dict, dict, dict, dict]:
    """(generate's floor, generate's fast path, verify's floor, verify's fast path): µs of
    CPU per document on one core, each stage alone."""
    import datetime as dt
    import hashlib
    import itertools

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    from govkit.catalog.runners import runner_info
    from govkit.check import construct
    from govkit.common import staging
    from govkit.common.inputs import read_input
    from govkit.common.limits import MAX_PEM_BYTES, MAX_SMIME_BYTES
    from govkit.documents.render import DomainSet, PermissionsDocument
    from govkit.pki.manifest import read_manifest
    from govkit.pki.testpki import TestPKI
    from govkit.smime import pkcs7, verify_batch
    from govkit.smime.sign import TEXT_HEADER, smime_message

    t = TestPKI(pki)
    manifest, why = read_manifest(t)
    assert manifest is not None, why
    name = sorted(manifest.entries)[0]
    entry = manifest.entries[name]
    cert_path = str(t.path(name))
    cert, key = t.key_pair("permissions_ca")
    template = pkcs7.SignerTemplate.for_signer(cert, key)
    when = pkcs7.signing_time(dt.datetime.now(dt.UTC))
    scope, domains = runner_info("ddsperf"), DomainSet.parse("0-230")
    doc = PermissionsDocument.for_subject(name, entry.subject, entry.not_before,
                                          entry.not_after, scope, domains)
    data = construct.render_proven(doc)
    part = TEXT_HEADER + data.replace(b"\n", b"\r\n")
    der = template.sign(part, when)
    signed = smime_message(part, der)
    (work / "one.p7s").write_bytes(signed)
    verifier = verify_batch.Verifier(cert)
    assert verifier.verify(signed, "first").ok   # learns the layout and the shape
    attributes = pkcs7.tlv(0x31, b"\0" * 200)
    ecdsa = key.sign(attributes, ec.ECDSA(hashes.SHA256()))
    public = cert.public_key()
    counter = itertools.count()
    scratch = staging.StagingDir(work / "stage-bench")   # the output's file system
    scratch.create()

    def two_files():
        scratch.write(f"{next(counter)}.xml", data)
        scratch.write(f"{next(counter)}.p7s", signed)

    try:
        gen_floor = _best_us({
            "ECDSA P-256 sign": lambda: key.sign(attributes, ec.ECDSA(hashes.SHA256())),
            "SHA-256 of the document": lambda: hashlib.sha256(part).digest(),
            "read+hash the certificate": lambda: hashlib.sha256(
                read_input(cert_path, MAX_PEM_BYTES, "certificate")).digest(),
            "create+write 2 files": two_files,
        })
        gen_fast = _best_us({
            "certificate read+hash, manifest entry": lambda: (hashlib.sha256(read_input(
                cert_path, MAX_PEM_BYTES, "certificate")).digest() == entry.sha256),
            "render+admit": lambda: construct.render_proven(PermissionsDocument.for_subject(
                name, entry.subject, entry.not_before, entry.not_after, scope, domains)),
            "DER sign": lambda: template.sign(part, when),
            "MIME": lambda: smime_message(part, der),
            "create+write 2 files": two_files,
        })
        ver_floor = _best_us({
            "ECDSA P-256 verify": lambda: public.verify(ecdsa, attributes,
                                                        ec.ECDSA(hashes.SHA256())),
            "read the file": lambda: read_input(work / "one.p7s", MAX_SMIME_BYTES, "x"),
            "SHA-256 of the document": lambda: hashlib.sha256(part).digest(),
        })
        ver_fast = _best_us({
            "read the file": lambda: read_input(work / "one.p7s", MAX_SMIME_BYTES, "x"),
            "verify (fast path, all)": lambda: verifier.verify(signed, "x"),
            "of which recognize the document": lambda: verifier._documents.recognize(data),
        })
    finally:
        staging.discard_dirs([scratch])
    return gen_floor, gen_fast, ver_floor, ver_fast


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sample", type=int, default=100,
                    help="files a round of the openssl loop and of the per-file path")
    ap.add_argument("--check", type=int, default=50,
                    help="govkit files openssl verifies, per size")
    ap.add_argument("--old", type=Path, help="a govkit checkout to alternate with")
    ap.add_argument("--keep", type=Path, help="work directory to keep (default: a temp one)")
    ap.add_argument("--quick", action="store_true", help="no --paranoid side")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cpus = len(os.sched_getaffinity(0))
    work = args.keep or Path(tempfile.mkdtemp(prefix="govkit-fleet-"))
    work.mkdir(parents=True, exist_ok=True)
    pki = work / "pki"
    print(f"load average {os.getloadavg()[0]:.2f} at the start; {cpus} CPUs; {work}",
          flush=True)
    if not (pki / "manifest").exists():
        took = measure([*GOVKIT, "pki", "init", str(pki), "--count", str(max(sizes)),
                        "--prefix", "p"])
        print(f"pki init of {max(sizes)} participants (not counted): {took}", flush=True)
    names = sorted(p.stem for p in pki.glob("p*.key"))
    old_env = {**os.environ, "PYTHONPATH": str(args.old)} if args.old else None
    # -P: not the current directory first (from a checkout it would be this govkit)
    old_govkit = [sys.executable, "-P", "-c", "from govkit.cli.main import main; main()"]
    if args.old:
        where = subprocess.run(
            [sys.executable, "-P", "-c", "import govkit; print(govkit.__file__)"],
            env=old_env, capture_output=True, text=True).stdout.strip()
        print(f"the old side runs {where}", flush=True)
        assert Path(where).resolve().is_relative_to(args.old.resolve()), where
    sides = ["govkit", "openssl", "per-file"] + ([] if args.quick else ["paranoid"]) + \
        (["old"] if args.old else [])
    runs: dict[tuple[int, str], list[Measured]] = {}
    sampled: dict[tuple[int, str, str], list[float]] = {}   # (N, side, task): seconds
    for n in sizes:
        (work / f"fleet-{n}.txt").write_text("\n".join(names[:n]) + "\n")
    for r in range(args.rounds):
        for n in sizes:
            fleet = work / f"fleet-{n}.txt"
            for side in sides if r % 2 == 0 else sides[::-1]:
                out = work / f"{side}-{n}-round{r}"   # a fresh directory: every file written
                if side == "per-file":
                    chosen = names[:n][:: max(1, n // args.sample)][:args.sample]
                    for task in ("generate", "verify"):
                        sampled.setdefault((n, side, task), []).append(
                            per_file(chosen, pki, out, task == "verify") * (n + 6))
                    shutil.rmtree(out)
                    continue
                if side == "openssl":
                    base = work / f"govkit-{n}-round{r}"
                    if not (base / "permissions").exists():
                        measure([*GOVKIT, "generate", "--participants", str(fleet),
                                 "--all-profiles", "--sign", "--ca", str(pki), "--out",
                                 str(base)])
                    xmls = sorted((base / "permissions").glob("*.xml"))
                    sample = xmls[:: max(1, len(xmls) // args.sample)][:args.sample]
                    for task in ("generate", "verify"):
                        sampled.setdefault((n, side, task), []).append(
                            openssl_loop(sample, pki, task == "verify") * (n + 6))
                    for f in sample:
                        f.with_suffix(".ossl").unlink(missing_ok=True)
                    continue
                command = old_govkit if side == "old" else GOVKIT
                env = old_env if side == "old" else None
                extra = ["--paranoid"] if side == "paranoid" else []
                if (out / "permissions").exists():
                    shutil.rmtree(out)
                gen = measure([*command, "generate", "--participants", str(fleet),
                               "--all-profiles", "--sign", "--ca", str(pki), "--out",
                               str(out), *extra], env)
                files = sorted(map(str, (out / "permissions").glob("*.p7s"))) + \
                    sorted(map(str, (out / "governance").glob("*.p7s")))
                assert len(files) == n + 6, len(files)
                ver = measure([*command, "verify", "--ca", str(pki), *extra, *files], env)
                runs.setdefault((n, f"{side} generate"), []).append(gen)
                runs.setdefault((n, f"{side} verify"), []).append(ver)
                print(f"round {r + 1}, N={n}, {side}: generate {gen}; verify {ver}",
                      flush=True)
                if side != "govkit":
                    shutil.rmtree(out)
            if r > 0:   # the first round's files stay, for openssl's check below
                shutil.rmtree(work / f"govkit-{n}-round{r}", ignore_errors=True)
    checked = {n: openssl_sample(sorted((work / f"govkit-{n}-round0").rglob("*.p7s")), pki,
                                 args.check, n) for n in sizes}
    gen_floor, gen_fast, ver_floor, ver_fast = per_document(pki, work)

    def median(values, attr):
        return statistics.median(getattr(v, attr) for v in values)

    print(f"\nmedians of {args.rounds} alternated rounds; load average "
          f"{os.getloadavg()[0]:.2f} at the end; per-file path and openssl loop: "
          f"{args.sample} files a round, extrapolated")
    for n in sizes:
        for task in ("generate", "verify"):
            g = runs[(n, f"govkit {task}")]
            gw, gc = median(g, "wall"), median(g, "cpu")
            line = (f"N={n} + 6 {task}: govkit {gw:.2f} s wall, {gc:.2f} s CPU ("
                    f"{median(g, 'user'):.2f} user + {median(g, 'system'):.2f} sys; machine "
                    f"{median(g, 'busy'):.0%} busy, {median(g, 'others'):.0%} by others, load "
                    f"{median(g, 'load'):.1f}), "
                    f"{gc / (n + 6) * 1e6:.0f} us CPU/document")
            for side in ("paranoid", "old"):
                if (n, f"{side} {task}") in runs:
                    o = runs[(n, f"{side} {task}")]
                    line += (f"; {side} {median(o, 'wall'):.2f} s wall = "
                             f"{median(o, 'wall') / gw:.1f}x, {median(o, 'cpu'):.2f} s CPU = "
                             f"{median(o, 'cpu') / gc:.1f}x")
            for side, what in (("per-file", "per-file path"), ("openssl", "openssl loop")):
                o = statistics.median(sampled[(n, side, task)])
                line += f"; {what} {o:.1f} s wall = {o / gw:.0f}x"
            print(line)
        ok, count = checked[n]
        print(f"N={n}: openssl smime -verify passed {ok} of {count} random files of govkit's")
    for title, floor, fast, task in (("generate", gen_floor, gen_fast, "generate"),
                                     ("verify", ver_floor, ver_fast, "verify")):
        total = sum(floor.values())
        print(f"{title}: floor per document on one core: " + " + ".join(
            f"{k} {v:.1f}" for k, v in floor.items()) + f" = {total:.1f} us")
        print(f"{title}: fast path per document on one core: " + ", ".join(
            f"{k} {v:.1f}" for k, v in fast.items()) + " us")
        for n in sizes:
            gc = median(runs[(n, f"govkit {task}")], "cpu") / (n + 6) * 1e6
            print(f"  N={n}: govkit {gc:.0f} us CPU per document (all of it: start-up, "
                  f"workers, the file system) = {gc / total:.1f}x the floor")


if __name__ == "__main__":
    main()
