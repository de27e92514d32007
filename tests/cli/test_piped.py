"""Listings written to a pipe (issue 23, CLI and CI conventions 2): `govkit profiles | cat`
broke names mid-word, as rich folds a table at 80 columns (or $COLUMNS) when stdout is not
a terminal. Every listing command runs here as a user pipes it, a real process with its
stdout a pipe, at 40, 80 and 200 columns: no name or path is folded, wrapped or cut."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from govkit.catalog.profiles import PROFILES

GOVKIT = str(Path(sys.executable).with_name("govkit"))
COMPARE = Path(__file__).resolve().parent.parent / "data" / "compare"
WIDTHS = ("40", "80", "200")
# A name of the longest kind each input allows (a profile or participant name: 63 characters)
LONG = "a_rather_long_name_that_no_table_may_fold_or_cut_" + "x" * 14


def piped(*args: str, cwd: Path, columns: str) -> subprocess.CompletedProcess:
    """`govkit ARGS | cat` at COLUMNS=columns: stdout a pipe, not a terminal."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "COLUMNS": columns, "LC_ALL": "C.UTF-8"}
    return subprocess.run([GOVKIT, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)   # stdout a pipe


def whole(output: str, *names: str) -> None:
    """Every name is in `output` on one line, and nothing was cut with an ellipsis."""
    for name in names:
        assert any(name in line for line in output.splitlines()), (name, output)
    assert "…" not in output, output


@pytest.mark.parametrize("columns", WIDTHS)
def test_profiles_piped(tmp_path, columns):
    (tmp_path / "govkit.toml").write_text(
        f'[[profile]]\nname = "{LONG}"\nallow_unauthenticated_participants = false\n'
        'rtps_protection_kind = "SIGN"\n'
        'metadata_protection_kind = "ENCRYPT_WITH_ORIGIN_AUTHENTICATION"\n'
        'data_protection_kind = "ENCRYPT"\n')
    done = piped("profiles", cwd=tmp_path, columns=columns)
    assert done.returncode == 0, done.stderr
    names = [p.name for p in PROFILES] + [a for p in PROFILES for a in p.aliases]
    whole(done.stdout, *names, LONG, "SIGN_WITH_ORIGIN_AUTHENTICATION",
          "ENCRYPT_WITH_ORIGIN_AUTHENTICATION")
    rows = [line for line in done.stdout.splitlines() if LONG in line]
    assert len(rows) == 1 and "ENCRYPT_WITH_ORIGIN_AUTHENTICATION" in rows[0]   # one row


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    root = tmp_path_factory.mktemp("piped")
    done = subprocess.run([GOVKIT, "pki", "init", "pki", "--participant", f"pub,{LONG}"],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([GOVKIT, "generate", "--profile", "rtps_sign", "--sign"],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return root


@pytest.mark.parametrize("columns", WIDTHS)
def test_pki_status_piped(pki, columns):
    done = piped("pki", "status", "pki", cwd=pki, columns=columns)
    assert done.returncode == 0, done.stderr
    whole(done.stdout, LONG, "pub", "identity_ca", "permissions_ca")
    row = next(line for line in done.stdout.splitlines() if line.startswith("participant")
               and LONG in line)
    # kind, name, two dates, days left, revoked, within: columns two or more spaces apart
    assert len(re.split(r"\s{2,}", row.strip())) == 7, row


@pytest.mark.parametrize("columns", WIDTHS)
def test_lint_and_validate_piped(pki, columns):
    deep = pki / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True, exist_ok=True)
    document = deep / f"{LONG}.xml"
    # domain 231: a warning under the default target (Cyclone DDS 0.10 refuses it), so
    # every command prints a line naming the file
    source = (pki / "build" / "permissions" / f"{LONG}.xml").read_text()
    assert "<max>230</max>" in source
    document.write_text(source.replace("<max>230</max>", "<max>231</max>"))
    for command in (["lint", "--output-format", "full"], ["lint", "--output-format", "concise"],
                    ["validate"]):
        done = piped(*command, str(document), cwd=pki, columns=columns)
        assert done.returncode == 0, done.stderr
        whole(done.stdout, f"{document}:", "GK010 warning")


@pytest.mark.parametrize("columns", WIDTHS)
def test_report_comparison_piped(tmp_path, columns):
    """Two real runs compared, one profile renamed to a long name: the table keeps every
    column whole (at 160 columns it used to squeeze the figures to nothing)."""
    runs, long = [], "rtps_sign_" + "y" * 140
    for name in ("ddsperf", "fastdds"):
        runs.append(tmp_path / f"{name}-run-with-a-directory-name-longer-than-a-column")
        shutil.copytree(COMPARE / name, runs[-1])
        results = runs[-1] / "results.json"
        results.write_text(results.read_text().replace('"rtps_sign"', f'"{long}"'))
    done = piped("report", *map(str, runs), "--out", str(tmp_path / "cmp"), cwd=tmp_path,
                 columns=columns)
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("\nwrote ")[0]
    for line in table.splitlines():
        assert not re.search(r"…\s*[│┃]", line), line      # no cell cut with an ellipsis
    rows = [line for line in table.splitlines() if long in line or "rtps_encrypt" in line]
    assert len(rows) == 2, table
    for row in rows:   # profile, B, one figure with its interval per run, RTI's ratio
        assert len(re.findall(r"\d+\.\d\d \[\d+\.\d\d…\d+\.\d\d\]", row)) == 2, row
    assert "1: ddsperf" in table and "2: fastdds" in table
    assert f"wrote {tmp_path / 'cmp'}" in done.stdout


def test_a_table_is_as_wide_as_its_widest_row_when_piped(capsys, monkeypatch):
    """The printer every table goes through (bench, wire-check, report, profiles)."""
    from rich.table import Table

    from govkit.cli.common import wide
    monkeypatch.setenv("COLUMNS", "40")
    table = Table(title="t")
    for header in ("profile", "value"):
        table.add_column(header, no_wrap=header == "profile")
    table.add_row("x" * 150, "a long value of many words that would wrap at forty columns")
    wide.print(table)
    printed = capsys.readouterr().out
    whole(printed, "x" * 150, "a long value of many words that would wrap at forty columns")
