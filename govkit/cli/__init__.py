"""The command line: parse, call one stage function, print.

- `fast`: the `govkit` entry: lint's and validate's usual command lines, --version and a
  cached --help read without typer; everything else goes to `main`;
- `main`: the typer app, its commands in order, and where errors become exit codes;
- `artefacts`: profiles, validate, generate, sign and verify;
- `pki`: `pki init`, `pki revoke`, `pki renew` and `pki status`;
- `check`: lint, identify, explain and diff;
- `bench`: bench, wire-check and report;
- `calibrate`: calibrate, this machine's run-to-run term for bench;
- `export`: `export sros2`;
- `doctor`: doctor (the runtimes installed here against the advisory table);
- `lifetime`: `lifetime-check`;
- `examples`: one example per command, for its --help and the manual;
- `lint_validate`: what lint and validate do once their options are read (typer's commands
  and `fast` both call it);
- `output`: the consoles and printing helpers, without typer;
- `common`: what the command modules share (pip's cmdoptions): consoles, the options of
  more than one command (--profile, --ca, --participants, --policy/--protection and the
  rule that pairs them, the ROS input loader), printing. No command module imports
  another.

May import: every stage, each inside the command that uses it (start-up: `govkit lint FILE`
imports no typer, `govkit --help` from its cache nothing but govkit's cache reader).
"""
