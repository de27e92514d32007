"""The checking commands' values the command line shows: severities, lint's output formats,
the bounds and defaults of its options.

A light module, plain values only: the CLI imports it at start-up for its options' choices
and defaults, and the modules that act on them (config, output_formats, the rule registry)
import the same values from here. The expiry warning's default is the test PKI's
(govkit.pki.vocabulary.DEFAULT_WARN_DAYS): one horizon for lint and `pki status`.
"""

SEVERITIES = ("error", "warning", "info")
DEFAULT_FAIL_ON = "error"
OUTPUT_FORMATS = ("full", "concise", "json", "github", "sarif", "junit")
DEFAULT_OUTPUT_FORMAT = "full"
MAX_WARN_DAYS = 100_000          # ~270 years: any later date is "not soon"
