"""The command line: parse, call one stage function, print.

- `main`: the typer app, its commands in order, and where errors become exit codes;
- `artefacts`: profiles, validate, generate, sign and verify;
- `pki`: `pki init`, `pki revoke`, `pki renew` and `pki status`;
- `check`: lint, identify, explain and diff;
- `bench`: bench, wire-check and report;
- `export`: `export sros2`;
- `doctor`: doctor (the runtimes installed here against the advisory table);
- `examples`: one example per command, for its --help and the manual;
- `common`: what the command modules share (pip's cmdoptions): consoles, the options of
  more than one command (--profile, --ca, --participants, --policy/--protection and the
  rule that pairs them, the ROS input loader), printing. No command module imports
  another.

May import: every stage, each inside the command that uses it (start-up: `govkit --help`
imports only typer, the light defaults and vocabularies, and the catalog).
"""
