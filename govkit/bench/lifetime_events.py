"""The words of `govkit lifetime-check` (light: the CLI reads them at start-up)."""

EVENTS = ("identity_expires", "expired_identity_joins", "not_yet_valid_joins",
          "permissions_expire", "expired_permissions_join", "crl_written")
# a participant that starts with the file: the others happen while a pair talks
JOINS = ("expired_identity_joins", "not_yet_valid_joins", "expired_permissions_join")
OUTCOMES = ("kept_talking", "dropped", "refused", "accepted", "crashed", "inconclusive")
RUNTIMES = ("cyclone", "fastdds")      # runner names (govkit.catalog.runners)
