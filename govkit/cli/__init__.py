"""The command line: parse, call one stage function, print.

- `main`: the typer app, its commands in order, and where errors become exit codes;
- `artefacts`: profiles, validate, generate, sign, verify and `pki init`;
- `pki`: `pki revoke`, `pki renew` and `pki status`;
- `check`: lint, identify, explain and diff;
- `bench`: bench, wire-check and report;
- `calibrate`: calibrate, this machine's run-to-run term for bench;
- `export`: `export sros2`;
- `examples`: one example per command, for its --help and the manual;
- `common`: what the command modules share: consoles, options, printing.

May import: every stage, each inside the command that uses it (start-up: `govkit --help`
imports only typer, the light defaults and vocabularies, and the catalog).
"""
