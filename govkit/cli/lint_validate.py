"""What `govkit lint` and `govkit validate` do once their options are read, without typer:
the typer commands (check.py, artefacts.py) and the fast entry (fast.py) both call these,
so the two ways in print the same bytes and return the same exit code (issue 47).

Each returns the exit code; a user's error is a GovkitError, as from any command.
"""

from pathlib import Path

from govkit.cli.output import err, json_document, out, print_lines
from govkit.common.errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE, GovkitError
from govkit.common.findings import one_line


def print_rules(as_json: bool) -> None:
    """`govkit lint --rules`: every rule with its id, severity, why and example."""
    from govkit.check.rules.engine import rules_table
    table = rules_table()
    if as_json:
        print(json_document("lint-rules", rules=[r.to_json() for r in table]))
        return
    for r in table:
        kinds = ", ".join(k.value for k in r.kinds)
        out.print(f"{r.id} {r.severity:<7} {r.name} ({kinds})", markup=False)
        out.print(f"      why: {r.why}.", markup=False)
        out.print(f"      example: {r.example}", markup=False)
        if r.note:
            out.print(f"      note: {r.note}", markup=False)


def run_lint(files: list[Path] | None, *, ca: Path | None = None, target: str | None = None,
             warn_days: int | None = None, fail_on: str | None = None,
             select: list[str] | None = None, ignore: list[str] | None = None,
             as_json: bool = False, output_format: str | None = None,
             list_rules: bool = False, protection: Path | None = None) -> int:
    """`govkit lint`: None means the option was not given (the configuration's value or the
    default applies)."""
    from govkit import __version__
    from govkit.check.config import lint_settings
    from govkit.check.lint import LintOptions, lint_paths, worst
    from govkit.check.output_formats import format_lint
    from govkit.check.rules.registry import SEVERITY_RANK
    if list_rules:
        print_rules(as_json)
        return EXIT_OK
    if not files:
        raise GovkitError("give the files to lint (or --rules)")
    s = lint_settings({"target": target, "warn-days": warn_days, "fail-on": fail_on,
                       "select": select, "ignore": ignore,
                       "output-format": "json" if as_json else output_format}, Path.cwd())
    target, fail_on, fmt = s["target"], s["fail-on"], s["output-format"]
    options = LintOptions(target=target, warn_days=s["warn-days"], ca=ca, select=s["select"],
                          ignore=s["ignore"], protection=protection)
    reports = lint_paths(files, options)
    code = EXIT_USAGE if any(r.error for r in reports) else EXIT_OK
    if worst(reports) >= SEVERITY_RANK[fail_on]:
        code = max(code, EXIT_INVALID)
    if fmt in ("full", "concise"):   # the machine formats carry unreadable files inside
        for r in reports:
            if r.error:
                err.print(f"govkit: {r.error}", markup=False)
    text = format_lint(fmt, reports, target, fail_on, __version__)
    if text:
        print(text)
    return code


def run_validate(files: list[Path], target: str | None = None, as_json: bool = False) -> int:
    """`govkit validate`: each file's findings (or "valid"), or the --json document."""
    from govkit.check.config import lint_target
    from govkit.check.validate import check_file
    target = lint_target(target, Path.cwd())
    report, code = [], EXIT_OK
    for f in files:
        try:
            check = check_file(f, target)
        except GovkitError as e:
            report.append({"file": str(f), "valid": False, "error": str(e), "findings": [],
                           "warnings": []})
            err.print(f"govkit: {e}", markup=False)
            code = EXIT_USAGE
            continue
        findings = check.findings
        report.append({"file": str(f), "valid": not findings,
                       "findings": [x.to_json() for x in findings],
                       "warnings": [x.to_json() for x in check.warnings]})
        if findings:
            code = max(code, EXIT_INVALID)
        if not as_json:
            print_lines(map(str, sorted(findings + check.warnings,
                                        key=lambda x: (x.line, x.column))))
            if not findings:
                out.print(f"{one_line(f)}: valid", markup=False)
    if as_json:
        print(json_document("validate", target=target, files=report))
    return code
