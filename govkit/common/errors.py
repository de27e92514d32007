"""Exit codes and the one base of every error a user can act on, with how it is shown.

Every exit code govkit uses is here (docs/reference/exit-codes is generated from EXIT_CODES).
A `GovkitError` carries its message, the lines that show it (`details`: a policy's problems,
FILE:LINE:COLUMN each) and what to do about it (`hint`); `rendered` is the one way it is
printed, by the root command (govkit.cli.main) and by the `python -m` entry points of the
native builds (`run_main`), never as a traceback.
"""

import sys
from collections.abc import Callable, Sequence

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


PREFIX = "govkit: "


class GovkitError(Exception):
    """An error the user can act on: `message` (one line; empty when the details say it
    all), then `details` (lines shown as they are) and a `hint`, exit `exit_code`."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE, *,
                 details: Sequence[str] = (), hint: str | None = None):
        self.message, self.details, self.hint = message, tuple(details), hint
        super().__init__(message or "\n".join(self.details))
        self.exit_code = exit_code

    def rendered(self) -> str:
        """What the user reads: `govkit: MESSAGE`, each detail line, `govkit: hint: HINT`."""
        lines = [f"{PREFIX}{self.message}"] if self.message else []
        lines += self.details
        if self.hint:
            lines.append(f"{PREFIX}hint: {self.hint}")
        return "\n".join(lines)


def run_main(main: Callable[[], object]) -> int:
    """A `python -m govkit.…` entry point's exit code: 0, or its GovkitError rendered on
    stderr as the root command renders it, and the error's code."""
    try:
        main()
    except GovkitError as e:
        print(e.rendered(), file=sys.stderr)
        return e.exit_code
    return EXIT_OK
