"""The command line: parse, call one stage function, print (`main`: the typer app and the
list of commands; `artefacts`, `bench`, `check`: the commands; `common`: what they share).

May import: every stage, each inside the command that uses it (start-up: `govkit --help`
imports only typer, the defaults and the catalog).
"""
