"""GOVKIT_REQUIRE turns a skip for a missing prerequisite into a failure (what `.ci/run` relies
on), shown by running pytest on real tests with the prerequisite hidden."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.require import ENV

HERE = Path(__file__).resolve().parent.parent   # tests/
CI_RUN = HERE.parent / ".ci" / "run"

# (prerequisite, test to run, how to hide the prerequisite)
CASES = {
    "shared": ("properties/test_schema_equivalence.py::test_reference_corpus_is_complete",
               {"GOVKIT_SHARED": "/nonexistent/govkit-shared"}),
    "cyclone": ("integration/test_cyclone.py::test_permissions_signed_by_another_ca_are_refused",
                {"PATH": "/nonexistent/bin"}),
    # a name with digits: conftest.py reads it back from the skip reason
    "cyclone11": ("runners/test_cyclone11.py::test_the_build_is_cached_and_is_cyclone_11_with_"
                  "security", {"GOVKIT_SHARED": "/nonexistent/govkit-shared"}),
}


def _pytest(test: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != ENV} | env
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-rfEs", str(HERE / test)], cwd=HERE.parent, env=full_env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("prerequisite", sorted(CASES))
def test_missing_prerequisite_skips_by_default_and_fails_when_required(prerequisite):
    test, hide = CASES[prerequisite]
    skipped = _pytest(test, hide)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "1 skipped" in skipped.stdout
    assert f"missing prerequisite: {prerequisite}" in skipped.stdout

    failed = _pytest(test, hide | {ENV: f"root,{prerequisite}"})
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "skipped" not in failed.stdout.splitlines()[-1]
    assert f"{ENV} requires '{prerequisite}'" in failed.stdout


def test_unknown_prerequisite_name_is_a_usage_error():
    result = _pytest(CASES["shared"][0], {ENV: "cyclone,chrome"})
    assert result.returncode == 4, result.stdout + result.stderr  # pytest: usage error
    assert "chrome" in result.stderr


def test_ci_requires_every_prerequisite_and_runs_the_readme_command():
    text = CI_RUN.read_text()
    assert f"{ENV}=cyclone,root,browser,shared" in text
    readme = (HERE.parent / "README.md").read_text()
    command = "bash .ci/setup && .venv/bin/python -m pytest"
    assert command in readme and command in text


def test_in_ci_a_skip_that_names_no_prerequisite_fails_too(tmp_path):
    """A bare pytest.skip passes on a user's machine and fails under any GOVKIT_REQUIRE
    (tests/conftest.py, loaded here as a plugin)."""
    (tmp_path / "test_bare_skip.py").write_text(
        "import pytest\n\ndef test_x():\n    pytest.skip('not today')\n")
    env = {k: v for k, v in os.environ.items() if k != ENV} | {"PYTHONPATH": str(HERE)}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
            "-rfEs", str(tmp_path / "test_bare_skip.py")]
    run = lambda extra: subprocess.run(argv, cwd=tmp_path, env=env | extra,  # noqa: E731
                                       capture_output=True, text=True, timeout=120)
    local = run({})
    assert local.returncode == 0 and "1 skipped" in local.stdout, local.stdout + local.stderr
    ci = run({ENV: "shared"})
    assert ci.returncode == 1, ci.stdout + ci.stderr
    assert "names no prerequisite" in ci.stdout and "not today" in ci.stdout
