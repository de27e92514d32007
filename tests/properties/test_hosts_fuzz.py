"""Property-based fuzzing of the host and peer specifications of `govkit bench` (issue 23):
`--hosts pub=…,sub=…`, `--peer-address pub=…,sub=…` and `--ssh-config FILE`, whatever a
careless user or an attacker writes there.

Each spec is either refused in one line (GovkitError, exit 2) or becomes ssh command lines
in which the destination is one argument that ssh can only read as a destination: never an
option (a leading '-'), never two arguments or two lines (whitespace, newline, control
characters), never a string for ssh's %-expansion to hand a shell (shell characters). This
is checked where it matters: on the argv a real `ssh` would be given. An `ssh` of the test's
own (first on PATH) records every argv it is started with and fails like an unreachable
host, so govkit's own code runs to its first ssh call (nothing leaves the machine, no DNS
lookup is made). Nothing is written in the working directory. Through the CLI, `bench
--dry-run` prints the same command lines (exit 0) or refuses (exit 2), never a traceback.

Time is bounded by hypothesis's deadline per example. The budget is fixed and the examples
are derandomized, so every run tries the same specs.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from govkit.cli.main import app
from govkit.common.errors import GovkitError
from govkit.runners.netpath import NetPaths
from govkit.runners.network import parse_hosts, parse_peer_addresses

# What the destination may be (the contract, stated here independently of the code).
SAFE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9._-]*@)?[A-Za-z0-9_:][A-Za-z0-9._:%-]*")
ATOMS = ["pub=", "sub=", ",", "=", "local", "me@host", "host", "h.example", "198.18.0.1",
         "::1", "fe80::1%lo", "-oProxyCommand=touch pwned", "-", "--", "@", "@-x", " ", "\t",
         "\n", "\r", "\x00", "\x1b[31m", "\x7f", "\u2028", "\u00a0", "\x0b", ";", "$(id)",
         "`id`", "|", "'", '"', "%h", "[::1]", "[/red]", ":x:", "ü", "a" * 300, "ssh://h",
         "-F/dev/null", "user@-oX"]
PIECE = st.sampled_from(ATOMS) | st.text(max_size=4)
HOST = st.lists(PIECE, min_size=1, max_size=4).map("".join)
SPEC = (st.tuples(HOST, HOST).map(lambda t: f"pub={t[0]},sub={t[1]}")
        | st.lists(PIECE, max_size=10).map("".join))
PEER = (st.tuples(PIECE, PIECE).map(lambda t: f"pub={t[0]},sub={t[1]}")
        | st.sampled_from([None, "pub=198.18.0.1,sub=198.18.0.2"]))
CONFIG = st.sampled_from([None, "ssh_config", "-oProxyCommand=x", "a b\nc", "missing"])

STUB = """#!/bin/sh
# the test's ssh: record the argv (NUL-separated), fail like an unreachable host
printf '%s\\0' "$@" > "$GOVKIT_TEST_SSH_LOG/$$.argv"
echo "ssh: Could not resolve hostname (test stub)" >&2
exit 255
"""


@contextlib.contextmanager
def fake_ssh():
    """A directory with the recording `ssh` first on PATH; yields where its logs go."""
    with tempfile.TemporaryDirectory() as d:
        bin_dir, log = Path(d) / "bin", Path(d) / "log"
        bin_dir.mkdir()
        log.mkdir()
        (bin_dir / "ssh").write_text(STUB)
        (bin_dir / "ssh").chmod(0o755)
        saved = {k: os.environ.get(k) for k in ("PATH", "GOVKIT_TEST_SSH_LOG")}
        os.environ["PATH"] = f"{bin_dir}:{saved['PATH']}"
        os.environ["GOVKIT_TEST_SSH_LOG"] = str(log)
        try:
            yield log
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def argvs(log: Path) -> list[list[str]]:
    """Every argv the test's ssh was started with."""
    return [[a.decode("utf-8", "surrogateescape") for a in p.read_bytes().split(b"\0")[:-1]]
            for p in log.iterdir()]


def destination(argv: list[str], config: str | None) -> str:
    """The destination in an ssh argv govkit made: after its fixed options, exactly."""
    head = ["-F", os.path.abspath(config)] if config else []
    assert argv[:len(head)] == head, argv
    rest = argv[len(head):]
    assert rest[:4] == ["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"], argv
    return rest[4]


def check_one_line(message: str) -> None:
    assert "\n" not in message and "\r" not in message and len(message) < 400, message


FUZZ = settings(max_examples=250, deadline=timedelta(seconds=3), derandomize=True,
                database=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(SPEC, PEER, CONFIG)
def test_host_specs_reach_ssh_only_as_destinations(spec, peers, config):
    with tempfile.TemporaryDirectory() as cwd, fake_ssh() as log:
        here = os.getcwd()
        os.chdir(cwd)
        try:
            if config == "ssh_config" or config == "-oProxyCommand=x":
                Path(config).write_text("Host *\n")       # a real file with that name
            made = set(os.listdir(cwd))
            try:
                hosts = parse_hosts(spec)
                peer_map = parse_peer_addresses(peers)
            except GovkitError as e:
                check_one_line(str(e))
                return
            for role, target in hosts.items():
                assert target == "local" or SAFE.fullmatch(target), (role, target)
            for addr in peer_map.values():
                assert re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", addr), addr
            remote = {r: t for r, t in hosts.items() if t != "local"}
            paths = NetPaths(["hosts"], hosts, peer_map, Path(config) if config else None)
            try:
                paths.check()
            except GovkitError as e:                    # a missing --ssh-config
                check_one_line(str(e))
                assert config == "missing" or config == "a b\nc"
                return
            for line in paths.plan():                  # --dry-run's lines
                if line.startswith("ssh ") or "| ssh " in line:
                    argv = shlex.split(line.split("| ", 1)[-1])
                    assert destination(argv[1:], config) in remote.values(), line
            try:
                paths.open()                            # to the first ssh call, which fails
                raise AssertionError("the test's ssh cannot succeed")
            except GovkitError as e:
                check_one_line(str(e))
            calls = argvs(log)
            assert len(calls) == 1 if remote else not calls
            for argv in calls:
                target = destination(argv, config)
                assert target in remote.values() and SAFE.fullmatch(target), argv
                assert len(argv) == (2 if config else 0) + 6, argv      # + the probe script
            assert set(os.listdir(cwd)) == made, "written in the working directory"
        finally:
            os.chdir(here)


CLI_FUZZ = settings(max_examples=60, deadline=timedelta(seconds=5), derandomize=True,
                    database=None, suppress_health_check=[HealthCheck.too_slow])


@CLI_FUZZ
@given(SPEC, PEER)
def test_bench_dry_run_with_any_host_spec(spec, peers):
    """The CLI: exit 0 with ssh lines whose destination is a safe argument, or exit 2 in
    one line; nothing created (--dry-run)."""
    with tempfile.TemporaryDirectory() as cwd:
        here = os.getcwd()
        os.chdir(cwd)
        try:
            args = ["bench", "--dry-run", "--net", "hosts", "--hosts", spec, "--profile",
                    "none", "--sizes", "32", "--repeat", "1", "--max-repeat", "1", "--out",
                    "res", *(["--peer-address", peers] if peers is not None else [])]
            result = CliRunner().invoke(app, args)
            left = os.listdir(".")
        finally:
            os.chdir(here)
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            repr(result.exception)
        output = result.stdout + result.stderr
        assert "Traceback" not in output and "internal error" not in output, output
        assert result.exit_code in (0, 2), (result.exit_code, output[-800:])
        if result.exit_code == 2:
            assert result.stderr.count("\n") == 1, result.stderr
        else:
            for line in result.stdout.splitlines():
                if line.startswith("ssh "):
                    argv = shlex.split(line)
                    target = destination(argv[1:], None)
                    assert SAFE.fullmatch(target), line
        assert left == [], "a dry run created files"
