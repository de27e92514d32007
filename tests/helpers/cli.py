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


ENCLAVES = ("/talker_listener/talker", "/talker_listener/listener")


def enclave_project(root, enclaves=ENCLAVES):
    """`root` holding what a ROS 2 user has before exporting: pki init with the enclave
    paths as participants, then generate --sign (rtps_encrypt) into root/build."""
    pki, build = str(root / "pki"), str(root / "build")
    init = govkit("pki", "init", pki, *(a for e in enclaves for a in ("--participant", e)))
    assert init.exit_code == 0, init.output
    gen = govkit("generate", "--profile", "rtps_encrypt", "--ca", pki, "--out", build, "--sign")
    assert gen.exit_code == 0, gen.output
    return root
