"""The test PKI's values the command line shows: the lifetimes govkit gives by default, how
soon an expiry is worth a warning, the revocation reasons, the HSM kinds.

A light module, plain values only: the CLI imports it at start-up for its options' defaults
and choices, and the modules that act on them (testpki, renewal, revocation, status, hsm,
and lint's expiry rule) import the same values from here.
"""

DEFAULT_CERT_DAYS = 365        # a new CA or participant certificate (pki init, pki renew)
DEFAULT_CRL_DAYS = 365         # until the CRL's next update (pki revoke)
DEFAULT_GRANT_DAYS = 365       # a permissions grant given a --valid-from but no --valid-for
DEFAULT_WARN_DAYS = 30         # an expiry this close is a warning (pki status, lint)
# RFC 5280 reason codes that apply to a participant certificate, as the command line spells
# them (cACompromise and aACompromise are about CAs; removeFromCRL only in delta CRLs).
REASON_NAMES = ("unspecified", "keyCompromise", "affiliationChanged", "superseded",
                "cessationOfOperation", "certificateHold", "privilegeWithdrawn")
HSM_KINDS = ("softhsm",)       # pki init --hsm
