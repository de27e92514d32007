"""Lint rules for a grant's <subject_name>: is it a distinguished name, does it name an
identity certificate of --ca, and does each implementation find it the way it compares
subjects (govkit.catalog.targets.SubjectMatch, govkit.pki.names)?
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from govkit.catalog.targets import VENDOR_TARGETS, Target
from govkit.check.rules.registry import PERM, Context, Hit, rule, vendor_names
from govkit.common.findings import quote_value
from govkit.documents.model import Grant
from govkit.pki import names


def subject_of(g: Grant) -> str | None:
    return g.subject.value if isinstance(g.subject.value, str) else None


def match(ctx: Context, g: Grant) -> names.Identity | None:
    """The --ca identity whose subject equals the grant's as a distinguished name."""
    try:
        rdns = names.parse_subject(subject_of(g) or "")
    except names.SubjectSyntaxError:
        return None
    return next((i for i in ctx.identities or () if i.rdns == rdns), None)


def accepts(t: Target, subject: str, identity: names.Identity) -> bool:
    """Whether implementation `t` finds `identity`'s grant in `subject`."""
    if t.subject_match == "tokens":
        return names.cyclone_accepts(subject, identity.cert, trims=t.subject_trims)
    if t.subject_match == "ordered":
        return names.fastdds_accepts(subject, identity.cert)
    try:
        return names.parse_subject(subject) == identity.rdns
    except names.SubjectSyntaxError:
        return False


@rule("GK202", "subject-unknown", "error", [PERM],
      "A grant applies only to the participant whose certificate subject equals its "
      "subject_name; one that matches no certificate gives nobody these permissions",
      "<subject_name>CN=pub,O=Other Org</subject_name>", needs_ca=True,
      note="as distinguished names under --target omg (saying which implementations still "
           "accept it); as the implementation compares under a vendor target")
def subject_unknown(ctx: Context) -> Iterator[Hit]:
    for g in ctx.model.grants:
        subject = subject_of(g)
        if subject is None:
            continue
        try:
            rdns = names.parse_subject(subject)
        except names.SubjectSyntaxError:
            continue   # GK204
        if ctx.portable:
            if match(ctx, g) is not None:
                continue
            lenient = [(t, i) for t in VENDOR_TARGETS for i in ctx.identities
                       if accepts(t, subject, i)]
        elif match(ctx, g) is not None or any(accepts(ctx.target, subject, i)
                                               for i in ctx.identities):
            continue   # matched, or a DN match the target refuses (GK203)
        else:
            lenient = []
        hint = ""
        reversed_match = next((i for i in ctx.identities if i.rdns == rdns[::-1]), None)
        if reversed_match is not None and len(rdns) > 1:
            hint = (f"; {reversed_match.path.name} has the same attributes in the reverse "
                    "order (RFC 4514 lists the most specific first, the /-form last)")
        if lenient:
            hint += (f"; {vendor_names([t for t, _ in lenient])} would still match it to "
                     f"{lenient[0][1].path.name}, comparing differently")
        known = "; ".join(f"{i.path.name}: {i.subject}" for i in ctx.identities[:3])
        more = f" and {len(ctx.identities) - 3} more" if len(ctx.identities) > 3 else ""
        how = "as a distinguished name" if ctx.portable else f"as {ctx.target.short} compares"
        yield Hit(g.subject.elem, (
            f"subject {quote_value(subject)} is, {how}, the subject of no identity "
            f"certificate in {ctx.ca_label} ({known or 'none found'}{more}){hint}"))


@rule("GK203", "subject-refused", "error", [PERM],
      "The subject names the certificate as a distinguished name, but an implementation "
      "that compares the strings differently still finds no grant for the participant",
      "<subject_name>CN=pub, O=govkit test PKI</subject_name> (a space after the comma)",
      needs_ca=True, note="Cyclone DDS compares NAME=VALUE tokens byte for byte; Fast DDS "
                          "needs the certificate's attribute order; a warning under "
                          "--target omg")
def subject_refused(ctx: Context) -> Iterator[Hit]:
    for g in ctx.model.grants:
        identity = match(ctx, g)
        if identity is None:
            continue
        subject = subject_of(g)
        refusers = ctx.refusing(lambda t, s=subject, i=identity: not accepts(t, s, i))
        if refusers:
            yield Hit(g.subject.elem, (
                f"subject {quote_value(subject)} is {identity.path.name}'s as a distinguished "
                f"name, but {vendor_names(refusers)} "
                f"{'compares' if len(refusers) == 1 else 'compare'} it as written and "
                f"{'refuses' if len(refusers) == 1 else 'refuse'} it: write it as "
                f"{quote_value(identity.subject)}"),
                "warning" if ctx.portable else None)


@rule("GK204", "subject-syntax", "error", [PERM],
      "A subject_name that is not a distinguished name can equal no certificate subject",
      "<subject_name>pub</subject_name>")
def subject_syntax(ctx: Context) -> Iterator[Hit]:
    for g in ctx.model.grants:
        subject = subject_of(g)
        if subject is None:
            continue
        try:
            names.parse_subject(subject)
        except names.SubjectSyntaxError as e:
            yield Hit(g.subject.elem, f"subject {quote_value(subject)} is not a "
                                      f"distinguished name: {e}")


@rule("GK205", "subject-whitespace", "warning", [PERM],
      "Cyclone DDS 0.10 compares subject names token by token without trimming, so a space "
      "around ',' or '=' (fine in RFC 4514) makes it refuse the grant (Cyclone DDS 11 "
      "trims them)",
      "<subject_name>CN=pub, O=Org</subject_name>",
      note="checked without --ca (with it, GK203 compares against the certificate); an "
           "error under --target cyclone, nothing under --target cyclone11")
def subject_whitespace(ctx: Context) -> Iterator[Hit]:
    if ctx.identities is not None:
        return
    for g in ctx.model.grants:
        subject = subject_of(g)
        if subject is None:
            continue
        tokens = [t for t in re.split(r"[,/|]", subject.strip()) if t]
        spaced = [t for t in tokens if "=" in t and any(
            part != part.strip() for part in t.split("=", 1))]
        refusers = ctx.refusing(lambda t: t.subject_match == "tokens" and not t.subject_trims)
        if spaced and refusers:
            later = [t.later for t in refusers if t.later and t.later.subject_trims]
            yield Hit(g.subject.elem, (
                f"subject {quote_value(subject)} has spaces around a separator "
                f"({quote_value(spaced[0])}): {vendor_names(refusers)} compares it verbatim "
                "and refuses the grant" + "".join(
                    f" ({v.version} trims the spaces and accepts it)" for v in later)),
                None if ctx.portable else "error")


@rule("GK216", "subject-revoked", "error", [PERM],
      "A grant for a certificate the Identity CA has revoked keeps permissions for an "
      "identity no implementation that checks the CRL will authenticate any more: the "
      "grant is stale, and wrong again the moment someone drops the CRL",
      "<subject_name>CN=sub,O=govkit test PKI</subject_name> after `govkit pki revoke sub`",
      needs_ca=True, note="--ca must be a test PKI directory holding identity_ca.crl.pem "
                          "(govkit pki revoke)")
def subject_revoked(ctx: Context) -> Iterator[Hit]:
    for g in ctx.model.grants:
        subject = subject_of(g)
        if subject is None:
            continue
        identity = match(ctx, g) or next(
            (i for i in ctx.identities if any(accepts(t, subject, i) for t in VENDOR_TARGETS)),
            None)
        if identity is not None and identity.revoked:
            yield Hit(g.subject.elem, f"subject {quote_value(subject)} is "
                                      f"{identity.path.name}'s, and its {identity.revoked}")
