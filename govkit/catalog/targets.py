"""What each DDS Security implementation accepts where the specification leaves room or the
implementations deviate from it: one table, one row per `govkit lint --target`.

`omg` is the specification (DDS Security 1.1 and its XSDs, RTPS 2.x); it is the portable
target: under it, lint also warns about each implementation below that would refuse or
read a document differently. Under a vendor target, lint reports exactly that vendor's
behaviour, as errors where the vendor refuses the document.

Where a fact was observed is said beside it. "spec" means nobody measured that vendor and
the specification's reading is assumed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from govkit.catalog.advisories import cite
from govkit.common.limits import MAX_DOMAIN_ID

# The RTPS 2.x default port mapping (PB 7400 + DG 250 x domain id + d3 11, below 65536)
# leaves room for domain ids 0..232; no implementation using it can go higher.
RTPS_MAX_DOMAIN_ID = 232
_RTPS_LIMIT = ("the RTPS default port mapping (port 7400 + 250 x domain id + 11) has no room "
               "above 232 below port 65536")

# How a grant's <subject_name> is compared with the identity certificate's subject.
#   dn      as distinguished names: same attributes in the same RDN order, values compared
#           case-insensitively with spaces normalised (the specification's reading)
#   tokens  Cyclone's ac_check_subjects_are_equal: both strings split on ',', '/' and '|'
#           into NAME=VALUE tokens, every token of the certificate's RFC 2253 subject must
#           appear in the grant with the same name and byte-identical value (no trimming)
#   ordered Fast DDS 2.9's rfc2253_string_compare: both strings split at ',', each part
#           trimmed of spaces and compared byte for byte, in the certificate's RFC 2253 order
SubjectMatch = Literal["dn", "tokens", "ordered"]
# How <id_range><min>N</min></id_range> (no max) is read.
#   up      N and every higher domain id (the specification's reading)
#   single  domain N only
OpenRange = Literal["up", "single"]
# Boolean spellings accepted beyond xs:boolean's true/false/1/0.
#   strict   none
#   anycase  true/false in any letter case
#   tinyxml2 tinyxml2's QueryBoolText: true True TRUE false False FALSE, and any integer
LenientBooleans = Literal["strict", "anycase", "tinyxml2"]
# Which certificates of the Permissions CA file are trusted to have signed governance and
# permissions documents.
#   first   the first certificate only (an intermediate alone, without its root, fails)
#   all     every certificate of the file, as `openssl smime -verify -CAfile` trusts them
#   None    not known (the specification speaks of one certificate)
CaFileCerts = Literal["first", "all"] | None
# Who may sign governance and permissions documents.
#   chain   any certificate the Permissions CA issued (PKCS7_verify builds a chain to it)
#   ca      the Permissions CA certificate itself only (PKCS7_NOINTERN | PKCS7_NOVERIFY)
#   None    not known
Signer = Literal["chain", "ca"] | None
# Whether a participant may create a topic that both read and write access control protect
# (the governance's topic rule enables both).
#   either  if its permissions allow publishing it or subscribing to it (per action, the
#           first rule naming the topic for that action decides)
#   first   the first rule naming the topic decides, whatever its action: a deny of
#           subscribe listed before an allow of publish refuses the topic, so no writer
TopicCreation = Literal["either", "first"]


@dataclass(frozen=True)
class Later:
    """What a later release of a target's implementation does differently, where it
    matters to a document: said beside the target's own verdict, never instead of it (the
    target's row holds the version govkit measures)."""
    version: str                          # "Cyclone DDS 11"
    subject_trims: bool = False           # spaces around a subject token's '=' trimmed
    permissions_signer: Signer = None
    topic_creation: TopicCreation | None = None
    source: str = ""
    # facts of the target's row that the later release keeps, checked in its source and by
    # running it (what lint --target says of them holds for it too)
    keeps: tuple[str, ...] = ()


@dataclass(frozen=True)
class Target:
    name: str
    short: str              # in messages: "Cyclone DDS refuses ..."
    title: str              # with the version the facts hold for
    max_domain_id: int
    domain_limit: str       # why max_domain_id, as GK010 says it (validate, sign and lint)
    open_range: OpenRange
    booleans: LenientBooleans
    subject_match: SubjectMatch
    # validity dates without a time zone read as local time (UTC otherwise, as the spec says)
    local_time_validity: bool
    # (parent, element) beyond DDS Security 1.1 that the implementation reads; any other
    # unknown element makes every implementation here refuse the document
    extensions: frozenset[tuple[str, str]] = frozenset()
    permissions_ca_certs: CaFileCerts = None
    permissions_signer: Signer = None
    # elements whose empty content crashes (not refuses) the access-control parser:
    # `dds` is a root without child elements, any other one without text
    crashes_on_empty: frozenset[str] = frozenset()
    # The rows of govkit.catalog.advisories (data/advisories.csv) behind the three facts
    # below, by id: lint cites their fixed releases from that table, as `govkit doctor` reads
    # them, so the two never disagree about a version.
    crash_advisories: tuple[str, ...] = ()
    # data_protection_kind SIGN (payload-only GMAC): the signature leaves out the payload's
    # padding, so a reader that includes it cannot verify the samples
    unpadded_sign_advisory: str = ""
    # a matched peer whose identity certificate expires stays matched (checked at the
    # handshake only)
    expired_peers_advisory: str = ""
    later: Later | None = None
    # spaces around a subject token's name and value trimmed (subject_match "tokens")
    subject_trims: bool = False
    topic_creation: TopicCreation = "either"
    # where crashes_on_empty was seen when no advisory names it (a run and a source line)
    crash_evidence: str = ""
    # the target whose `later` this row is (its own --target); such a row is not among
    # VENDOR_TARGETS, since --target omg already says its differences beside its base
    release_of: str = ""

    @property
    def crash_source(self) -> str:
        """The advisories behind crashes_on_empty, cited, else crash_evidence."""
        return cite(*self.crash_advisories) if self.crash_advisories else self.crash_evidence

    @property
    def unpadded_payload_sign(self) -> str:
        """The source when it signs payloads without their padding; "" when it does not."""
        return cite(self.unpadded_sign_advisory) if self.unpadded_sign_advisory else ""

    @property
    def keeps_expired_peers(self) -> str:
        """The source when it keeps a peer past its certificate's expiry; "" otherwise."""
        return cite(self.expired_peers_advisory) if self.expired_peers_advisory else ""

    def accepts_boolean(self, text: str) -> bool | None:
        """The boolean `text` means to this implementation beyond xs:boolean, or None."""
        word = text.strip()
        if self.booleans == "anycase" and word.lower() in ("true", "false"):
            return word.lower() == "true"
        if self.booleans == "tinyxml2":
            if word in ("true", "True", "TRUE", "false", "False", "FALSE"):
                return word.lower() == "true"
            digits = word.lstrip("+-")   # ASCII: "²".isdigit() holds, int("²") raises
            if digits.isascii() and digits.isdigit() and len(word) < 20:
                return int(word) != 0
        return None


# RTI Connext extensions, as (parent, element): the ones the reference corpus holds
# (rti-examples, rti-medtech; 1.2's enable_key_revision per RTI's 7.5 migration guide).
_CONNEXT_EXTENSIONS = frozenset({
    ("domain_rule", "enable_key_revision"), ("domain_rule", "rtps_psk_protection_kind"),
    ("domain_rule", "monitoring_metrics_protection_kind"),
    ("domain_rule", "monitoring_logging_protection_kind"),
    ("domains", "tag"), ("allow_rule", "subscribe_monitoring"),
})

TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("omg", "the specification", "the DDS Security 1.1 specification",
           max_domain_id=RTPS_MAX_DOMAIN_ID,      # RTPS default port mapping, above
           domain_limit=_RTPS_LIMIT,
           open_range="up",                       # spec 9.4.1.2.2.1 (domain id sets)
           booleans="strict",                     # the OMG XSD: xs:boolean
           subject_match="dn",                    # spec: the subject is an X.509 DN
           local_time_validity=False),            # spec: dates without offset are UTC
    Target("cyclone", "Cyclone DDS", "Cyclone DDS 0.10",
           # observed with Debian's libddsc0debian 0.10 (docs/background/vendors.md,
           # tests/integration/test_cyclone.py) unless said otherwise
           max_domain_id=MAX_DOMAIN_ID,           # observed: 231 refused ("Can not parse
                                                  # governance file"; test_cyclone.py)
           # cyclonedds 0.10.2 access_control_parser.c, governance_element_data_cb and
           # permissions_element_data_cb: a domain value above 230 is an error (a constant,
           # not computed from its port mapping), so the whole document fails to load;
           # unchanged on master as of 2026-08
           domain_limit="its access-control parser refuses any domain id above 230 in a "
                        "governance or permissions document, so the document does not load",
           # observed: <min>0</min> is domain 0 only (0.10.2 access_control.c,
           # domainid_within_sets: max = min when <max> is absent)
           open_range="single",
           booleans="anycase",                    # access_control_parser.c (strcasecmp)
           subject_match="tokens",                # observed: "CN=pub, O=..." refused;
                                                  # access_control_utils.c
           local_time_validity=False,             # spec (not measured)
           # 0.10.2 access_control_utils.c: ac_X509_certificate_read reads one
           # PEM_read_bio_X509; PKCS7_document_verify stores just that certificate
           permissions_ca_certs="first",
           # observed: a leaf the Permissions CA issued signs (tests/integration/
           # test_verify_cyclone.py); 0.10.2 calls PKCS7_verify without PKCS7_NOINTERN
           permissions_signer="chain",
           # observed, both versions (tests/runners/test_cyclone11.py::test_a_deny_of_
           # subscribe_before_an_allow_of_publish_refuses_the_topic_on_0_10_only): a deny
           # of subscribe listed before an allow of publish refuses the topic ("Not Allowed
           # By Security" at dds_create_topic) where the governance enables read and write
           # access control for it; 0.10.2 access_control.c:2018-2024,
           # is_topic_allowed_by_permissions, returns the first matching criterion's verdict
           topic_creation="first",
           # observed: SIGSEGV, 0.10.2 and 11.0.1 alike (test_cyclone11.py::test_an_empty_
           # topic_pattern_crashes_both_versions), at the first topic looked up past the
           # empty element: access_control_parser.c sets a value only in its data callback
           # (0.10.2 lines 641, 1008), which an empty element never reaches, so it stays
           # NULL and ac_fnmatch dereferences it (asserts compiled out) from
           # find_topic_from_domain_rule (0.10.2 access_control.c:1228, 11.0.1 :1232) and
           # is_topic_in_criteria (0.10.2 :1204, 11.0.1 :1208)
           crashes_on_empty=frozenset({"topic_expression", "topic"}),
           crash_evidence="seen: Cyclone DDS 0.10.2 and 11.0.1 end with SIGSEGV; "
                          "access_control.c find_topic_from_domain_rule and "
                          "is_topic_in_criteria pass the element's NULL value to ac_fnmatch; "
                          "no fix upstream as of eclipse-cyclonedds/cyclonedds@4c1beb2",
           later=Later(
               "Cyclone DDS 11", subject_trims=True, permissions_signer="ca",
               # topic creation per action: eclipse-cyclonedds/cyclonedds 5ac329b "Improve
               # asymmetric deny_rule handling for topics" (fixes #2267, 2025-09-02, in
               # 11.0.1: access_control.c:2015-2054); run: test_cyclone11.py
               topic_creation="either",
               # the signer: PKCS7_verify(..., PKCS7_TEXT | PKCS7_NOVERIFY |
               # PKCS7_NOINTERN) with the Permissions CA as the only candidate, since
               # eclipse-cyclonedds/cyclonedds#1552 (merged 2023-01-27, after 0.10.2;
               # CVE-2023-24011, sros2#282). Trimming: string_to_properties and
               # ac_check_subjects_are_equal trim each token's name and value
               # (ddsrt_str_trim_ord_space) in access_control_utils.c on master (read at
               # commit 0233f1c91926e2e11526842a04dc7463e440e891; proposed in
               # eclipse-cyclonedds/cyclonedds#1719). Both run on 11.0.1 built from
               # ../shared/vendor (2026-12-07, tests/runners/test_cyclone11.py): a leaf's
               # signature is refused ("PKCS7_get0_signers:signer certificate not found"),
               # "O=govkit test PKI, CN=pub" matches.
               source="https://github.com/eclipse-cyclonedds/cyclonedds/pull/1552; "
                      "https://github.com/eclipse-cyclonedds/cyclonedds/issues/2267; "
                      "https://github.com/eclipse-cyclonedds/cyclonedds/blob/"
                      "0233f1c91926e2e11526842a04dc7463e440e891/src/security/"
                      "builtin_plugins/access_control/src/access_control_utils.c; "
                      "https://github.com/eclipse-cyclonedds/cyclonedds/pull/1719",
               # 11.0.1's access_control_parser.c still refuses a domain value above 230 in
               # its data callback, and access_control.c domainid_within_sets still reads
               # an <id_range> without <max> as its <min> alone (vendored source, read
               # 2026-12-07); tests/runners/test_cyclone11.py runs the first. Its
               # CHANGELOG.rst stops at 0.7.0: it says nothing of either. `git diff 0.10.2
               # 11.0.1` of access_control_parser.c changes no data callback (booleans by
               # strcasecmp, empty elements left NULL: both crashes run on 11.0.1), nor
               # ac_X509_certificate_from_file (the CA file's first certificate only).
               keeps=("max_domain_id", "open_range", "booleans", "crashes_on_empty",
                      "permissions_ca_certs"))),
    Target("connext", "Connext", "RTI Connext DDS 6.1-7.x",
           max_domain_id=RTPS_MAX_DOMAIN_ID,      # spec (RTPS port mapping; not measured)
           domain_limit=f"{_RTPS_LIMIT} (not measured)",
           open_range="up",                       # RTI's perftest governance files (seed
                                                  # 000) use <min>0</min> for every domain
           booleans="anycase",                    # seed 000's "No protection" listing,
                                                  # TRUE/FALSE, loaded by RTI's perftest
           subject_match="dn",                    # spec (not measured)
           local_time_validity=False,             # spec (not measured)
           extensions=_CONNEXT_EXTENSIONS),
    Target("fastdds", "Fast DDS", "eProsima Fast DDS 2.9",
           # measured by the team on Fast DDS 2.9 unless said otherwise
           max_domain_id=RTPS_MAX_DOMAIN_ID,      # measured: 233 fails
           # Fast DDS 2.9 reads the document, but a participant on domain 233 would need UDP
           # ports past 65535 (docs/background/vendors.md: it calls exit() mid-creation)
           domain_limit=f"{_RTPS_LIMIT}, so Fast DDS cannot create a participant there",
           # v2.9.1 CommonParser.cpp parse_domain_id_set stores an id_range without <max>
           # as (min, 0), and Permissions.cpp is_domain_in_set reads a range whose max is 0
           # as the single domain min (governance and permissions alike); measured:
           # tests/integration/test_fastdds.py
           open_range="single",
           booleans="tinyxml2",                   # GovernanceParser.cpp (QueryBoolText)
           subject_match="ordered",               # measured: order and case must match
           local_time_validity=True,              # measured: dates read as local time
           # v2.9.1 artifact_providers/FileProvider.cpp FileProvider::load_ca adds every
           # certificate PEM_X509_INFO_read_bio finds (Permissions.cpp load_permissions_ca)
           permissions_ca_certs="all",
           # Facts of 2026 (govkit issue 37). Every Fast DDS before the 2026 fixes, 2.9.1
           # (Debian's) included: its access-control parser crashes on these elements
           # empty. The releases that fix "CVEs in Access Control parser (CVE-2026-45094,
           # CVE-2026-45095, CVE-2026-45096)" are data/advisories.csv's (their release
           # notes; the fixes were squashed from private branches, no public PR); which
           # element each CVE is, and the elements themselves: no public source found,
           # they are as issue 37 states them. Not run by govkit (a crash of the test).
           # https://github.com/eProsima/Fast-DDS/releases/tag/v2.6.12, .../v2.14.7,
           # .../v3.2.5
           crashes_on_empty=frozenset({"topic_expression", "dds", "not_after"}),
           crash_advisories=("CVE-2026-45094", "CVE-2026-45095", "CVE-2026-45096"),
           # payload-only SIGN: eProsima/Fast-DDS#6498 "Account for padding when protecting
           # payloads with GMAC only", merged 2026-08-04; released in 3.6.3 (a 3.2.x backport:
           # no release notes found on 2026-12-07):
           # https://github.com/eProsima/Fast-DDS/pull/6498
           unpadded_sign_advisory="eProsima/Fast-DDS#6498",
           # CVE-2025-67108 (CWE-298, improper validation of certificate expiration; CWE-370,
           # no revocation check after the initial one), fixed in data/advisories.csv's
           # releases ("Fix CVE-2025-67108", release notes): a fixed Fast DDS unmatches a peer whose
           # certificate expires, 2.9 keeps it. That the fix unmatches: no public source
           # found beyond the CVE record's weakness; as issue 37 states it. The record:
           # https://www.cve.org/CVERecord?id=CVE-2025-67108
           expired_peers_advisory="CVE-2025-67108"),
)}


def release(base: Target, name: str, title: str) -> Target:
    """`base` as its `later` release reads documents: its own --target, its facts the
    base's except where `later` says otherwise (one place holds each difference)."""
    later = base.later
    assert later is not None
    return replace(base, name=name, short=later.version, title=title, later=None,
                   subject_trims=later.subject_trims or base.subject_trims,
                   permissions_signer=later.permissions_signer or base.permissions_signer,
                   topic_creation=later.topic_creation or base.topic_creation,
                   release_of=base.name)


# Cyclone DDS 11.0.1 (ROS 2 Lyrical's), run from ../shared/vendor: a row of its own so that
# `--target cyclone11` gives its verdicts as errors, as `--target cyclone` gives 0.10's.
_CYCLONE11 = release(TARGETS["cyclone"], "cyclone11", "Cyclone DDS 11.0")
TARGETS = {name: {**TARGETS, _CYCLONE11.name: _CYCLONE11}[name]     # beside its base
           for name in ("omg", "cyclone", "cyclone11", "connext", "fastdds")}
# The specification: the one target that warns about every implementation that differs.
PORTABLE_TARGET = "omg"
# The implementations --target omg warns about: a later release is said beside its base.
VENDOR_TARGETS = tuple(t for t in TARGETS.values()
                       if t.name != PORTABLE_TARGET and not t.release_of)
# lint's, validate's and sign's --target when none is given or configured
DEFAULT_TARGET = PORTABLE_TARGET


def open_range_readers(reading: OpenRange) -> str:
    """The implementations that read an id_range without <max> this way, for sentences
    ("Cyclone DDS 0.10 and eProsima Fast DDS 2.9"); empty if none does."""
    names = [t.title for t in VENDOR_TARGETS if t.open_range == reading]
    return " and ".join(filter(None, (", ".join(names[:-1]), names[-1]))) if names else ""
