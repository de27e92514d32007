"""`govkit lifetime-check`: what each runtime does at expiry, measured on real pairs (the
work is govkit.bench.lifetime's; main.py registers the command).

No `from __future__ import annotations` here: typer would evaluate the annotations at
start-up (see govkit/cli/pki.py).
"""

from pathlib import Path
from typing import Annotated

import typer

from govkit.bench.lifetime_events import EVENTS, RUNTIMES
from govkit.cli.common import json_document, json_option, out
from govkit.common.errors import EXIT_INVALID


def _words(text: str, allowed: tuple[str, ...], option: str) -> tuple[str, ...]:
    from govkit.common.errors import EXIT_USAGE, GovkitError
    words = tuple(w.strip() for w in text.split(",") if w.strip())
    for w in words:
        if w not in allowed:
            raise GovkitError(f"{option} {w!r}: not one of {', '.join(allowed)}", EXIT_USAGE)
    if not words:
        raise GovkitError(f"{option}: give at least one of {', '.join(allowed)}", EXIT_USAGE)
    return words


def lifetime_check(
    runtime: Annotated[str, typer.Option(
        "--runtime", metavar="cyclone,fastdds",
        help="The runtimes to measure, comma-separated.")] = "cyclone,fastdds",
    event: Annotated[str | None, typer.Option(
        "--event", metavar="EVENT,...",
        help=f"The events to measure, comma-separated: {', '.join(EVENTS)} (default: "
             f"all).")] = None,
    lead: Annotated[float, typer.Option(
        "--lead", min=3, help="Seconds from a cell's start to an event that happens while "
                              "the pair talks: both sides must have matched by then (a "
                              "cell that had not is 'inconclusive').")] = 15.0,
    observe: Annotated[float, typer.Option(
        "--observe", min=1, help="The observation window: seconds after the event that "
                                 "round trips must go on for to count as kept_talking.")
    ] = 10.0,
    wait: Annotated[float, typer.Option(
        "--wait", min=1, help="Seconds each program waits for its peer to match (a "
                              "joining pub its peer refuses is refused after this).")
    ] = 15.0,
    jobs: Annotated[int, typer.Option(
        "--jobs", min=1, help="Cells run at the same time, each on a DDS domain of its "
                              "own.")] = 6,
    workdir: Annotated[Path | None, typer.Option(
        "--workdir", help="Keep every cell's PKI, documents and configuration here "
                          "(default: a temporary directory, removed after).")] = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Also write DIR/lifetime.json (the --json document) and "
                      "DIR/lifetime.html (the matrix and its evidence, a page to keep).")
    ] = None,
    as_json: json_option("lifetime-check") = False,
):
    """What each runtime does when a matched peer's certificate or grant expires, when a
    participant joins with an expired or not yet valid one, and when a CRL revoking the
    peer is written: one real pair per runtime and event, the runtime's own words as
    evidence. Exit 0 when every cell was measured, 1 when one was inconclusive (the pair
    had not matched by the event: give a longer --lead)."""
    from govkit.bench.lifetime import Timing, matrix_fields, run_matrix, table_rows
    timing = Timing(lead_s=lead, observe_s=observe, wait_s=wait)
    cells = run_matrix(_words(runtime, RUNTIMES, "--runtime"),
                       _words(event or ",".join(EVENTS), EVENTS, "--event"), timing, workdir, jobs)
    document = json_document("lifetime-check", **matrix_fields(cells, timing))
    if out_dir is not None:
        import json

        from govkit.report.lifetime_page import write_lifetime
        write_lifetime(out_dir, json.loads(document))
    if as_json:
        out.print(document, markup=False)
    else:
        for line in table_rows(cells):
            out.print(line, markup=False)
        if out_dir is not None:
            out.print(f"lifetime: {out_dir / 'lifetime.html'}", markup=False)
    if any(c.outcome == "inconclusive" for c in cells):
        raise typer.Exit(EXIT_INVALID)     # measured nothing there: say so in the status
