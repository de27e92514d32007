"""`govkit generate --policy`: the documents of an sros2 policy, and its test PKI.

One participant per enclave: its certificate's CN is the enclave path, its files are named
as every enclave participant's are (`+robot+driver.pem`); the test PKI is created, or
extended with the enclaves it lacks. Then, into --out:
    governance/ros2_<policy>.xml      one governance for the keystore (the protection's
                                      classes; without one, sros2's default: everything
                                      encrypted), govkit.documents.protection
    permissions/+robot+driver.xml     per enclave, its grants exactly as sros2 writes them
                                      (govkit.documents.ros_policy)
and with `sign` the .p7s beside each, signed by the Permissions CA. Every document is
validated before it is written; nothing is written from a policy that does not check
(govkit.check.ros_policy refuses it first).

A protection rule that names no topic or service any enclave is granted (lint's GK402,
run here: most often a misspelt name, and the name meant then falls to the default, in
clear) stops it before anything is written, PolicyInvalid with one FILE:LINE:COLUMN line
per such name (exit 2), unless `allow_unmatched`.

An enclave whose certificate the PKI's CRL revokes, or that an earlier Identity CA issued,
gets no permissions (a revoked certificate is never granted): it is left out, and said, and
the permissions an earlier run wrote for it in --out are removed (a signed grant of a
revoked certificate is never left to be shipped, nor for `pki status` to count).
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from govkit.check.ros_policy import PolicyInvalid, RosInput
from govkit.common.errors import EXIT_INVALID, GovkitError
from govkit.common.findings import DocumentKind, Finding
from govkit.common.fsutil import write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_DOCUMENT_BYTES
from govkit.documents.protection import SROS2_DEFAULT
from govkit.documents.render import DomainSet
from govkit.documents.ros_render import render_governance, render_permissions
from govkit.generate import grants
from govkit.generate.fleet import check_generated, ensure_identities, remove_earlier
from govkit.pki.participants import Participant
from govkit.pki.revocation import revoked_participants
from govkit.pki.ros import enclave_stem
from govkit.pki.testpki import TestPKI
from govkit.smime.sign import load_signer, sign_document, signature_of_unchanged, signed_path


@dataclass
class PolicyDocuments:
    """What `generate_policy` wrote: the governance, enclave -> participant stem (those
    with permissions), and the enclaves left out with the reason."""
    governance: Path
    enclaves: dict[str, str] = field(default_factory=dict)
    left_out: list[tuple[str, str]] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    pki: TestPKI | None = None
    removed: list[Path] = field(default_factory=list)   # left-out enclaves' earlier files


def governance_name(policy_path: Path | str) -> str:
    """The name of a policy's governance (and of its `export --profile`): ros2_ and the
    policy file's name without .xml and .policy."""
    stem = Path(policy_path).name.removesuffix(".xml").removesuffix(".policy")
    return f"ros2_{stem}"


def _write(path: Path, data: bytes, signer, written: list[Path]) -> None:
    """Write `data` to `path` and, with a signer, its .p7s; a document whose bytes and
    signature are already there is kept as it is (`export sros2 --policy --archive` run
    twice gave two checksums: every run signed everything again)."""
    if signer is not None and signature_of_unchanged(path, data, signer.certificate):
        written += [path, signed_path(path)]
        return
    write_atomic(path, data)
    written.append(path)
    if signer is not None:
        written.append(sign_document(path, signer.cert_path, None, signer=signer))


def _sidecar(ros: RosInput) -> Path | None:
    """The protection sidecar file given with the policy (None: none, or in <metadata>)."""
    return None if ros.protection_doc is None or ros.protection_doc is ros.policy_doc \
        else Path(ros.protection_source)


def refuse_unmatched(ros: RosInput) -> None:
    """PolicyInvalid (exit 2), one line per protection rule's name that no enclave is
    granted: lint's GK402 (govkit.check.rules.ros), the same verdict and place; and one
    line if lint's work budget ran out before every name was compared (GK003)."""
    if ros.protection is None:
        return
    from govkit.catalog.targets import DEFAULT_TARGET
    from govkit.check.ros_lint import lint_ros
    from govkit.check.rules.registry import RULES
    sidecar = _sidecar(ros)
    found = lint_ros(read_input(ros.source, MAX_DOCUMENT_BYTES, "policy"), ros.source,
                     DocumentKind.POLICY, [RULES["GK402"], RULES["GK003"]], DEFAULT_TARGET,
                     protection=sidecar)
    why = {"GK402": "a misspelt name? the name meant would fall to the default",
           "GK003": "whether every rule names a granted topic is not known"}
    lines = [Finding(file, line, column, f"{message} [{rule.id}]: nothing written "
                                         f"({why[rule.id]}; --allow-unmatched writes it "
                                         f"anyway)")
             for rule, file, line, column, message, _ in found.findings]
    if lines:
        raise PolicyInvalid(lines)


def generate_policy(ros: RosInput, ca_dir: Path, out_dir: Path, domains: DomainSet,
                    sign: bool, log, validity: tuple[dt.datetime, dt.datetime] | None = None,
                    allow_unmatched: bool = False) -> PolicyDocuments:
    """The policy's governance and permissions (module docstring). GovkitError: exit 2
    for an unusable PKI or a protection rule that names nothing granted
    (PolicyInvalid; not with `allow_unmatched`), exit 1 for a document govkit rendered
    invalid (a govkit bug)."""
    if not allow_unmatched:
        refuse_unmatched(ros)
    out_dir = Path(out_dir)
    participants = [Participant(e.path) for e in ros.policy.enclaves]
    stems = [p.name for p in participants]
    # never over grants `generate` wrote (its profiles' or fleet's): refused up front
    grants.refuse_other_mode(out_dir / "permissions", stems, grants.POLICY, Path(ca_dir))
    pki = ensure_identities(Path(ca_dir), participants, log)
    stale = set(pki.stale_participants(stems))
    revoked = revoked_participants(pki, [s for s in stems if s not in stale])
    signer = load_signer(pki.permissions_ca, pki.permissions_ca_key) if sign else None
    protection = ros.protection or SROS2_DEFAULT
    gov_path = out_dir / "governance" / f"{governance_name(ros.source)}.xml"
    result = PolicyDocuments(gov_path, pki=pki)
    planned: list[tuple[Path, bytes]] = [(gov_path, render_governance(
        protection, domains, ros.source, ros.protection_source))]
    for enclave in ros.policy.enclaves:
        stem = enclave_stem(enclave.path)
        if stem in stale:
            result.left_out.append((enclave.path, f"{pki.path(stem)} was not issued by the "
                                                  f"current Identity CA (reissue it with "
                                                  f"`govkit pki init {pki.directory} "
                                                  f"--force`)"))
            continue
        if stem in revoked:
            result.left_out.append((enclave.path, revoked[stem]))
            continue
        cert = pki.certificate(stem)
        planned.append((out_dir / "permissions" / f"{stem}.xml",
                        render_permissions(enclave, cert, domains, ros.source, validity)))
        result.enclaves[enclave.path] = stem
    for path, data in planned:   # all rendered and checked before the first is written
        check_generated(data, path)
    for path, data in planned:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, data, signer, result.written)
    for enclave, why in list(result.left_out):
        removed = remove_earlier(out_dir / "permissions", enclave_stem(enclave))
        if removed:
            result.removed += removed
            result.left_out[result.left_out.index((enclave, why))] = (
                enclave, f"removed {' and '.join(map(str, removed))}, written for it "
                         f"earlier: {why}")
    sidecar = _sidecar(ros)
    grants.record_modes(out_dir / "permissions", result.enclaves.values(), grants.POLICY,
                        removed=[enclave_stem(e) for e, _ in result.left_out],
                        policy=os.path.abspath(ros.source),
                        protection=os.path.abspath(sidecar) if sidecar else None)
    grants.record_policy_run(pki.directory, ros.source, str(sidecar) if sidecar else None,
                             out_dir, result.enclaves.values())
    if not result.enclaves:
        raise GovkitError(f"{ros.source}: no enclave got permissions ("
                          + "; ".join(f"{e}: {why}" for e, why in result.left_out[:3]) + ")",
                          EXIT_INVALID)
    return result
