"""Exit codes and the one exception type the CLI turns into a one-line message.

Every exit code govkit uses is here (docs/reference/exit-codes is generated from EXIT_CODES).
"""

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130

EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_INVALID: "a document is invalid, a signature does not verify, a benchmark point "
                  "failed, the traffic does not match the governance (--wire, wire-check), "
                  "a benchmark gate tripped (--fail-on-flag, --max-ratio), or a security "
                  "advisory of govkit's table affects an installed runtime (doctor)",
    EXIT_USAGE: "unreadable input, bad usage, or a missing prerequisite (e.g. ddsperf not "
                "installed)",
    EXIT_INTERNAL: "an internal error (a govkit bug: set GOVKIT_DEBUG=1 for the traceback)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); completed results are kept",
}


class GovkitError(Exception):
    """An error the user can act on; printed as one line, never as a traceback."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE):
        super().__init__(message)
        self.exit_code = exit_code
