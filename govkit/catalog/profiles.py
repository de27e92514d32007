"""The protection-profile catalog: one table of data, the single source of truth.

Profiles follow the *prose* of RTI's secure-performance pages (shared/seeds/000); two of
that page's governance XML listings are wrong (a misspelt enumeration value, and a copy of
the previous profile's XML), which is exactly what `govkit validate` exists to catch.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from govkit.common.errors import GovkitError

# Settings shared by every secured profile (one domain_rule, one topic_rule "*").
COMMON_SETTINGS: dict[str, str] = {
    "enable_join_access_control": "false",
    "discovery_protection_kind": "NONE",
    "liveliness_protection_kind": "NONE",
    "topic_expression": "*",
    "enable_discovery_protection": "false",
    "enable_liveliness_protection": "false",
    "enable_read_access_control": "false",
    "enable_write_access_control": "false",
}

_COLUMNS = (
    "name", "alias", "allow_unauthenticated_participants", "rtps_protection_kind",
    "metadata_protection_kind", "data_protection_kind", "perftest_governance_file", "title",
)
# `none` loads no security plugins at all: it is the baseline every overhead is relative to.
_TABLE = (
    ("none", "none", None, None, None, None, None, "No security plugins (baseline)"),
    ("no_protection", "no_protection", "true", "NONE", "NONE", "NONE",
     "signed_PerftestGovernance_.xml", "Security plugins loaded, no protection"),
    ("rtps_sign", "rtps_sign", "false", "SIGN", "NONE", "NONE",
     "signed_PerftestGovernance_RTPSSign.xml", "RTPS sign"),
    ("rtps_encrypt", "rtps_encrypt", "false", "ENCRYPT", "NONE", "NONE",
     "signed_PerftestGovernance_RTPSEncrypt.xml", "RTPS encrypt"),
    ("sign_origin_data_encrypt", "rtps_sign_orig_data_encrypt", "false",
     "SIGN_WITH_ORIGIN_AUTHENTICATION", "NONE", "ENCRYPT",
     "signed_PerftestGovernance_RTPSSignWithOrigAuthEncryptData.xml",
     "RTPS sign with origin authentication, data encrypt"),
    ("sign_submsg_encrypt_origin_data_encrypt", "rtps_sign_submessage_encrypt_orig_data_encrypt",
     "false", "SIGN", "ENCRYPT_WITH_ORIGIN_AUTHENTICATION", "ENCRYPT",
     "signed_PerftestGovernance_RTPSSignEncryptSubmessageWithOrigAuthEncryptData.xml",
     "RTPS sign, submessage encrypt with origin authentication, data encrypt"),
    ("sign_submsg_encrypt", "rtps_sign_submessage_encrypt", "false", "SIGN", "ENCRYPT", "NONE",
     "signed_PerftestGovernance_SignEncryptSubmessage.xml", "RTPS sign, submessage encrypt"),
)


def domain_ids_text(ids) -> str:
    """Domain ids as ranges: '4', '0-9,12'."""
    ranges: list[list[int]] = []
    for d in sorted(set(ids)):
        if ranges and d == ranges[-1][1] + 1:
            ranges[-1][1] = d
        else:
            ranges.append([d, d])
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)


@dataclass(frozen=True)
class Profile:
    name: str
    alias: str
    allow_unauthenticated_participants: str | None
    rtps_protection_kind: str | None
    metadata_protection_kind: str | None
    data_protection_kind: str | None
    perftest_governance_file: str | None
    title: str
    # A point made from a governance file (`bench --governance`): the file, and the
    # settings of its rules that the runner's topics fall under (what the report shows).
    governance_file: str | None = None
    file_settings: tuple[tuple[str, str], ...] | None = None
    # The domain ids such a file's first domain_rule covers (0..MAX_DOMAIN_ID, as the
    # runner reads an open id_range): bench runs it there (govkit.bench.domains).
    domain_ids: tuple[int, ...] | None = None
    # A protection class's point (`bench --policy`): the DDS names its pairs run ping, pong
    # and data on (names its rule covers; govkit.bench.policy_points), and its
    # permissions grant exactly these. None: the runner's own topics.
    topics: tuple[str, str, str] | None = None

    @property
    def security(self) -> bool:
        return self.rtps_protection_kind is not None

    @property
    def aliases(self) -> list[str]:
        return sorted({self.alias} - {self.name})

    def governance_settings(self) -> dict[str, str]:
        """Every governance element value this profile sets, by XML element name."""
        if not self.security:
            return {}
        if self.file_settings is not None:
            return dict(self.file_settings)
        return {
            **COMMON_SETTINGS,
            "allow_unauthenticated_participants": self.allow_unauthenticated_participants,
            "rtps_protection_kind": self.rtps_protection_kind,
            "metadata_protection_kind": self.metadata_protection_kind,
            "data_protection_kind": self.data_protection_kind,
        }

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("alias")
        d.pop("file_settings")
        if d["governance_file"] is None:
            d.pop("governance_file")
        if d["topics"] is None:
            d.pop("topics")
        else:
            d["topics"] = list(d["topics"])
        ids = d.pop("domain_ids")
        if ids is not None:
            d["domain_ids"] = domain_ids_text(ids)
        settings = self.governance_settings()
        # The seven per-profile settings always appear (None for the baseline).
        for key in ("enable_join_access_control", "discovery_protection_kind",
                    "liveliness_protection_kind"):
            d[key] = settings.get(key)
        return {"name": self.name, "aliases": self.aliases, "security": self.security,
                **{k: v for k, v in d.items() if k != "name"}, "settings": settings}

    def listing_json(self) -> dict:
        """`profiles --json`: to_json() with the XML booleans ("true"/"false") as JSON
        booleans (results.json keeps to_json()'s strings: its readers compare them)."""
        def typed(v):
            return {"true": True, "false": False}.get(v, v) if isinstance(v, str) else v
        d = self.to_json()
        return {**{k: typed(v) for k, v in d.items() if k != "settings"},
                "settings": {k: typed(v) for k, v in d["settings"].items()}}


# The unsecured baseline every overhead is measured against (the first catalog row).
BASELINE = "none"
PROFILES: tuple[Profile, ...] = tuple(Profile(**dict(zip(_COLUMNS, row, strict=True)))
                                      for row in _TABLE)
SECURED_PROFILES: tuple[Profile, ...] = tuple(p for p in PROFILES if p.security)
_BY_NAME = {key: p for p in PROFILES for key in (p.name, p.alias)}
# Profiles from a profiles file (govkit.catalog.profiles_file), known to this process once
# `use_profiles` is called: the command line does so before it reads a profile name.
_USER: dict[str, Profile] = {}


def use_profiles(profiles: list[Profile]) -> None:
    """Make `profiles` (a profiles file's, checked on load) known wherever a catalog name
    is taken: get_profile, select_profiles, known_profiles."""
    _USER.clear()
    for p in profiles:
        _USER.update({p.name: p, p.alias: p})


def known_profiles() -> tuple[Profile, ...]:
    """The catalog, then the profiles of a profiles file (use_profiles)."""
    return PROFILES + tuple(dict.fromkeys(_USER.values()))


def get_profile(name: str) -> Profile:
    """A profile by canonical name or seed alias; unknown names list the valid ones."""
    try:
        return _BY_NAME.get(name) or _USER[name]
    except KeyError:
        valid = ", ".join(p.name for p in known_profiles())
        aliases = ", ".join(a for p in known_profiles() for a in p.aliases)
        raise GovkitError(f"unknown profile {name!r}; valid profiles: {valid} "
                          f"(aliases: {aliases})") from None


def select_profiles(names: list[str] | None, all_profiles: bool) -> list[Profile]:
    """Resolve --profile/--all-profiles into catalog order, without duplicates; --profile
    is repeatable and takes commas, like every list option (`--profile none,rtps_sign`)."""
    names = [n.strip() for item in names or () for n in item.split(",") if n.strip()]
    if all_profiles:
        chosen = list(known_profiles())
    elif names:
        wanted = {get_profile(n).name for n in names}
        chosen = [p for p in known_profiles() if p.name in wanted]
    else:
        raise GovkitError("give --profile NAME (repeatable) or --all-profiles")
    return chosen


# What each DDS Security protection kind means, in English: `short` for the report's
# one-line profile descriptions, `meaning` for `govkit explain`.
@dataclass(frozen=True)
class ProtectionKind:
    short: str
    meaning: str


PROTECTION_KINDS: dict[str, ProtectionKind] = {
    "NONE": ProtectionKind("not protected", "not protected"),
    "SIGN": ProtectionKind("signed (integrity)", "signed (a peer cannot alter or forge them, "
                                                 "but anyone can read them)"),
    "ENCRYPT": ProtectionKind("encrypted (confidentiality + integrity)",
                              "encrypted and authenticated (only participants holding the "
                              "keys read them)"),
    "SIGN_WITH_ORIGIN_AUTHENTICATION": ProtectionKind(
        "signed, with origin authentication",
        "signed, with origin authentication (each receiver can tell which participant sent "
        "them)"),
    "ENCRYPT_WITH_ORIGIN_AUTHENTICATION": ProtectionKind(
        "encrypted, with origin authentication", "encrypted, with origin authentication"),
}
