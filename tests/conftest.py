"""Shared fixtures: one test PKI per session, and the optional ../shared reference tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from govkit.pki import init_pki

SHARED_SKIP_REASON = ("../shared not found: reference corpus/seeds only exist in the project's "
                      "CI/dev workspace")


def shared_dir() -> Path:
    """The reference corpus and seeds (outside the repository); may not exist."""
    return Path(os.environ.get("GOVKIT_SHARED") or Path(__file__).resolve().parents[2] / "shared")


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
