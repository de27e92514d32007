"""Shared fixtures: one test PKI per session, the optional ../shared reference tree, and
GOVKIT_REQUIRE (skips for a missing prerequisite become failures; see tests/helpers/require.py)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from helpers.require import ENV, missing, prerequisite_of, required, shared_dir

from govkit.pki.issuance import init_pki

SHARED_SKIP_REASON = missing("shared", "../shared not found: reference corpus/seeds only exist "
                                       "in the project's CI/dev workspace")


def pytest_configure(config):
    # A shell without job control starts a background command (`cmd &` in a script) with
    # SIGINT ignored, and every process it starts inherits that: the tests that stop govkit
    # or a remote process with SIGINT would find it ignored (exit 0, not 130). A handler
    # here is reset to the default in each child at exec; an ignored signal is not.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        config._govkit_required = required()
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    needed = prerequisite_of(reason)
    # test_report_browser.py skips with its own wording; its marker says what it needs.
    if needed is None and item.get_closest_marker("browser") is not None:
        needed = "browser"
    required_here = item.config._govkit_required
    if needed in required_here:
        report.outcome = "failed"
        report.longrepr = (f"{ENV} requires {needed!r}, but this test would have been skipped: "
                           f"{reason.removeprefix('Skipped: ')}")
    elif needed is None and required_here:
        # CI (any GOVKIT_REQUIRE) runs everything: a skip naming no prerequisite hides a
        # test as surely as one that does
        report.outcome = "failed"
        report.longrepr = (f"{ENV} is set, and a skip that names no prerequisite is a failure "
                           f"here: {reason.removeprefix('Skipped: ')}")


@pytest.fixture(scope="session")
def shared() -> Path:
    d = shared_dir()
    if not d.is_dir():
        pytest.skip(SHARED_SKIP_REASON)
    return d


@pytest.fixture(scope="session")
def pki_dir(tmp_path_factory) -> Path:
    """A complete EC P-256 test PKI (separate CAs, participants pub and sub). Read-only:
    tests that modify a PKI make their own."""
    directory = tmp_path_factory.mktemp("pki")
    init_pki(directory, participants=("pub", "sub"))
    return directory
