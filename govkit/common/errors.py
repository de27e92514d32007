"""Exit codes and the one exception type the CLI turns into a one-line message.

Exit codes (documented in the README):
  0  success
  1  a document is invalid / a signature does not verify / a benchmark point failed
  2  unreadable input, bad usage, or a missing prerequisite (e.g. ddsperf not installed)
"""

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


class GovkitError(Exception):
    """An error the user can act on; printed as one line, never as a traceback."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE):
        super().__init__(message)
        self.exit_code = exit_code
