"""Limits that more than one stage enforces, each stated once.

Every size limit is checked before the input is read (govkit.common.inputs), so no input can make
govkit read, parse or hold more than these bounds; all parsing is linear in the input, so
anything below them is handled in well under a second.
"""

# Cyclone DDS 0.10 refuses a document with a domain id above 230 (its access-control
# parser's constant), so govkit never writes a higher one (`generate --domain`, bench's
# domain ids). The one home of this number; the target table (govkit.catalog.targets) gives
# each --target's limit with its reason (Cyclone 0.10: this one; the RTPS port mapping's
# 232: the specification, Fast DDS 2.9, Connext), and rule GK010 applies it in validate,
# sign and lint alike.
MAX_DOMAIN_ID = 230

# The identity key types Cyclone DDS 0.10 accepts (its authentication plugin refuses any
# other, e.g. EC P-384); `pki init --key-type` offers exactly these.
KEY_TYPES = ("ec-p256", "rsa-2048")

# A governance or permissions document (plain XML), and the signed document inside an
# S/MIME file. Real documents are a few KiB.
MAX_DOCUMENT_BYTES = 1_000_000
# An S/MIME file: the document plus its MIME headers and the base64 signature.
MAX_SMIME_BYTES = MAX_DOCUMENT_BYTES + 256 * 1024
# A MIME header block (OpenSSL reads any length; real ones are a few hundred bytes).
MAX_HEADER_BYTES = 16 * 1024
# The signature part of an S/MIME file (base64 CMS with a few certificates is a few KiB).
MAX_SIGNATURE_PART_BYTES = 64 * 1024
# A PEM certificate or private key of the test PKI.
MAX_PEM_BYTES = 100_000
# Nodes (elements, comments, processing instructions) in one document, and children of one
# element. libxml2 (through lxml) spends
# time proportional to an element's siblings on every schema error, so a document with
# 100,000 invalid siblings would take minutes; real documents have a few hundred elements.
MAX_ELEMENTS = 50_000
MAX_CHILDREN = 1_000

# A results.json keeps every raw row: a long run (8 sizes × 7 profiles × 2 modes × 8
# repeats) is a few MB; anything far larger is not one.
MAX_RESULTS_BYTES = 64 * 1024 * 1024

# A participants file (govkit pki init/generate --participants): a fleet of 100,000
# participants with a few topics each is a few MB.
MAX_PARTICIPANTS_BYTES = 32 * 1024 * 1024
# Participants in one fleet, and topics or partitions in one grant (a document element
# holds at most MAX_CHILDREN children, so more could never validate).
MAX_FLEET = 1_000_000
MAX_TOPICS_PER_ACTION = MAX_CHILDREN
# Worker processes one command may start (--jobs): each holds a Python interpreter and the
# crypto stack (~40 MB); beyond a few per CPU they only compete for the same cores.
MAX_JOBS = 64

# Revocations on the Identity CA's CRL: every participant of the largest fleet. The CRL
# govkit reads is bounded by what `pki revoke` writes, derived here, never by a guess:
# a CRL of 1,887 revocations once passed MAX_PEM_BYTES, and from then on every command
# that reads the CRL refused the PKI govkit itself had written (issue 37). `revoke`
# refuses to write more entries, or more bytes, than these.
MAX_REVOCATIONS = MAX_FLEET
# DER bytes of one CRL entry as govkit writes it: SEQUENCE (2) of the serial (at most 20
# octets, RFC 5280 4.1.2.2: 2 + 20), the revocation date (GeneralizedTime: 2 + 15) and
# the reasonCode extension (SEQUENCE of SEQUENCE: 2 + 2 + OID 5 + OCTET STRING 2 +
# ENUMERATED 3) (tests/pki/test_pki_writes.py builds the largest one and checks it).
CRL_ENTRY_DER_BYTES = 56
# Everything else in a CRL: the issuer (the Identity CA's subject), the dates, the CRL
# number, the authority key identifier, the algorithms, an RSA-2048 or ECDSA signature,
# and the length octets of the list of entries.
CRL_FRAME_DER_BYTES = 8192


def pem_bytes(der_bytes: int, label: str = "X509 CRL") -> int:
    """The size of the PEM encoding of `der_bytes` of DER: base64 in lines of 64."""
    b64 = 4 * -(-der_bytes // 3)
    return len(f"-----BEGIN {label}-----\n-----END {label}-----\n") + b64 + -(-b64 // 64)


MAX_CRL_BYTES = pem_bytes(CRL_FRAME_DER_BYTES + MAX_REVOCATIONS * CRL_ENTRY_DER_BYTES)

# Participants the PKI manifest lists (govkit.pki.manifest), and its size: each entry is
# at most 1 KiB (its writer leaves longer ones out), and a PKI of more participants gets a
# manifest saying so (each certificate is then checked in full, as before manifests).
MAX_MANIFEST_PARTICIPANTS = 100_000
MAX_MANIFEST_BYTES = 4096 + MAX_MANIFEST_PARTICIPANTS * 1024
