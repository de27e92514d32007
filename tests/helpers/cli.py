"""The govkit command line in-process, as a user runs it: an error is an exit code and a
line, never a traceback."""

from __future__ import annotations

from typer.testing import CliRunner

from govkit.cli.main import app


def govkit(*args: str):
    """`govkit ARGS...`; fails the test on a traceback or an exception other than exit."""
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result
