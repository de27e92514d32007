"""`govkit doctor`: the DDS Security runtimes installed here and the advisories that bear on
them (main.py registers it; the work is govkit.runners.doctor's).

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up.
"""

from pathlib import Path
from typing import Annotated

import typer

from govkit.cli.common import json_document, print_lines

# Start-up: nothing heavy at module level (govkit --help imports this module).


def doctor(
    dds_prefix: Annotated[Path | None, typer.Option(
        "--dds-prefix", metavar="DIR", show_default=False,
        help="Also a Cyclone DDS installed in DIR (lib/libddsc.so and its DDS Security "
             "plugins). Default: $GOVKIT_DDS_PREFIX, else the first $AMENT_PREFIX_PATH entry "
             "holding a Cyclone DDS, else the system's alone.")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="JSON, as {\"schema\": \"govkit.doctor/1\", ...} (its JSON Schema: "
                       "govkit/schemas/json/doctor.schema.json).")] = False,
):
    """The DDS Security runtimes installed here (Cyclone DDS, Fast DDS, OpenSSL), each
    version as the runtime states it, against govkit's table of advisories bearing on DDS
    Security (each with its source). Exit 1 if an advisory affects an installed runtime."""
    from govkit.runners.doctor import doctor as examine
    from govkit.runners.doctor import doctor_json, doctor_lines
    report = examine(dds_prefix)
    if as_json:
        print(json_document("doctor", **doctor_json(report)))
    else:
        print_lines(doctor_lines(report))
    raise typer.Exit(report.exit_code)
