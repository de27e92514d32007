"""The crypto variant of a secured arm: which AES key size and how many blocks per session
key (`govkit bench --cipher`, `--rekey`), and what each runtime lets govkit vary.

DDS Security 1.1's builtin AES-GCM-GMAC plugin names the property
`dds.sec.crypto.keysize` (128 or 256) and Fast DDS adds `dds.sec.crypto.maxblockspersession`
(session key renewed after that many protected messages). Where the runtimes read them
(read in eProsima/Fast-DDS v2.9.1 and eclipse-cyclonedds/cyclonedds 0.10.2):
- Fast DDS 2.9 (AESGCMGMAC_KeyFactory.cpp): both properties on the participant
  (register_local_participant: the RTPS-level key) and on every writer and reader
  (register_local_datawriter/datareader: the submessage and payload keys); defaults
  keysize 256 and maxblockspersession 32. A session key is derived from the master key
  (HMAC-SHA256) on the sending side every `maxblockspersession` encodes; the receiver
  derives it from the session id of every message it decodes, whatever the sender chose.
- Cyclone DDS 0.10: the participant's crypto is registered with no properties
  (ddsi_security_omg.c: register_local_participant(..., NULL, ...)), so RTPS-level
  protection is always AES-256; writers and readers pass their QoS property list, so
  submessage and payload keys follow `dds.sec.crypto.keysize` (dds_security_utils.c,
  DDS_Security_getKeySize) — which ddsperf cannot set and govkit's cyclone_perf does not;
  session keys are never renewed (crypto_objects.c: max_blocks_per_session = INT64_MAX).

Pure data: nothing here starts a process.
"""

from __future__ import annotations

from dataclasses import dataclass

from govkit.catalog.measures import CIPHERS, DEFAULT_CIPHER

KEYSIZE_PROPERTY = "dds.sec.crypto.keysize"
REKEY_PROPERTY = "dds.sec.crypto.maxblockspersession"
FASTDDS_DEFAULT_REKEY = 32           # AESGCMGMAC_KeyFactory.cpp: "key update every 32 usages"
MAX_REKEY = 2 ** 31 - 1              # Fast DDS reads it with std::stoi (an int, > 0)

# What each runtime let govkit vary (results.json settings.crypto, the report, --help).
CRYPTO_DEFAULTS = {
    "fastdds": ("Fast DDS 2.9: AES-256 unless --cipher (dds.sec.crypto.keysize, set on the "
                "participant and on every writer and reader: RTPS-level, submessage and "
                f"payload keys alike); session key renewed every {FASTDDS_DEFAULT_REKEY} "
                "protected messages unless "
                "--rekey N (dds.sec.crypto.maxblockspersession, the same places)."),
    "cyclone": ("Cyclone DDS 0.10: AES-256 always at RTPS level (the participant's crypto "
                "is registered without properties); submessage and payload keys follow the "
                "writer/reader QoS property dds.sec.crypto.keysize, which govkit's "
                "cyclone_perf does not set (so AES-256 too); session keys never renewed."),
    "ddsperf": ("Cyclone DDS 0.10: AES-256 always at RTPS level (the participant's crypto "
                "is registered without properties); submessage and payload keys follow the "
                "writer/reader QoS property dds.sec.crypto.keysize, which ddsperf cannot set "
                "(so AES-256 too); session keys never renewed."),
}
REFUSALS = {
    ("cyclone", "cipher"): (
        "Cyclone DDS 0.10 protects RTPS messages with AES-256 always (its participant "
        "crypto is registered without properties) and govkit's cyclone_perf does not set "
        "the writer/reader property dds.sec.crypto.keysize; use --runner fastdds"),
    ("cyclone", "rekey"): (
        "Cyclone DDS 0.10 never renews session keys (max_blocks_per_session is INT64_MAX, "
        "not configurable); use --runner fastdds"),
    ("ddsperf", "cipher"): (
        "ddsperf cannot set the writer/reader property dds.sec.crypto.keysize and Cyclone "
        "DDS 0.10 keeps RTPS-level protection at AES-256 (variants are arms of the rotating "
        "design); use --runner fastdds"),
    ("ddsperf", "rekey"): "Cyclone DDS 0.10 never renews session keys; use --runner fastdds",
    ("perftest", "cipher"): "govkit's perftest runner does not vary the cipher; use --runner "
                            "fastdds",
    ("perftest", "rekey"): "govkit's perftest runner does not vary session keys; use "
                           "--runner fastdds",
}


@dataclass(frozen=True)
class CryptoVariant:
    """One arm's crypto settings; None: the runtime's default (not set at all)."""
    cipher: str | None = None      # a CIPHERS key
    rekey: int | None = None       # protected messages per session key

    @property
    def name(self) -> str:
        """`aes128`, `rekey4`, `aes128+rekey4` (an arm is `PROFILE@NAME`)."""
        parts = [self.cipher] if self.cipher else []
        if self.rekey is not None:
            parts.append(f"rekey{self.rekey}")
        return "+".join(parts) or "default"

    @property
    def key_bits(self) -> int | None:
        return CIPHERS[self.cipher] if self.cipher else None

    def properties(self) -> dict[str, str]:
        """The DDS Security properties this variant sets (nothing for a default)."""
        out = {}
        if self.cipher:
            out[KEYSIZE_PROPERTY] = str(CIPHERS[self.cipher])
        if self.rekey is not None:
            out[REKEY_PROPERTY] = str(self.rekey)
        return out

    def to_json(self) -> dict:
        return {"name": self.name, "cipher": self.cipher, "key_bits": self.key_bits,
                "rekey_blocks": self.rekey, "properties": self.properties()}


def variants_of(ciphers: list[str], rekeys: list[int]) -> list[CryptoVariant]:
    """Every combination asked for (none: no variants, every arm as the runtime has it)."""
    if not ciphers and not rekeys:
        return []
    return [CryptoVariant(c, r) for c in ciphers or [None] for r in rekeys or [None]]


def crypto_refusal(runner: str, ciphers: list[str], rekeys: list[int]) -> str | None:
    """Why `runner` cannot apply what was asked (one line), or None. On Cyclone's own
    program `--cipher aes256` alone is what the runtime does anyway, so it is measured;
    the per-repeat runners (ddsperf, perftest) take no variant at all."""
    if runner == "fastdds":
        return None
    rotating = runner == "cyclone"
    if any(c != DEFAULT_CIPHER for c in ciphers) or (ciphers and not rotating):
        return f"--cipher {','.join(ciphers)} on --runner {runner}: " \
               f"{REFUSALS[(runner, 'cipher')]}"
    if rekeys:
        return f"--rekey {','.join(map(str, rekeys))} on --runner {runner}: " \
               f"{REFUSALS[(runner, 'rekey')]}"
    return None
