"""The report's two tables of one row per repeat, as HTML: written here, not by the
template, because a run of tens of thousands of repeats makes hundreds of thousands of
template expressions (each an attribute lookup, a filter call and an escape), seconds of
the report's time. The rows are exactly what report.html.j2's loops wrote (trim_blocks),
every value escaped (markupsafe) and formatted by the report's own filters."""

from __future__ import annotations

from markupsafe import Markup, escape

from govkit.report.model import (
    DASH,
    RepeatRow,
    RepeatTable,
    Run,
    first_line,
    fmt_int,
    fmt_value,
    fmt_values,
)


def repeat_rows(rows: list[RepeatRow], table: RepeatTable, show_network: bool) -> Markup:
    """The <tr> of every repeat of one profile's block of `table`."""
    out: list[str] = []
    add = out.append
    columns = [(escape(c.key), c.kind) for c in table.columns]
    span = len(table.columns) + 1 + (1 if table.values_title else 0)
    for r in rows:
        add(f'      <tr data-size="{escape(r.size)}" data-repeat="{escape(r.repeat)}" '
            f'data-status="{escape(r.status)}" class="{"" if r.ok else "failed"}">\n')
        if show_network:
            add(f'<td data-col="network">{escape(r.network)}</td>')
        add(f'<td class="num">{escape(r.size)}</td><td class="num">{escape(r.repeat)}</td>\n'
            f'        <td class="num" data-col="order">'
            f'{escape(DASH if r.order is None else r.order)}</td>\n'
            f'        <td data-col="cpus">{escape(r.cpus)}</td>\n')
        if r.ok:
            figures = r.figures
            add("".join(f'<td class="num" data-col="{key}">'
                        f'{escape(fmt_value(figures.get(key), kind))}</td>'
                        for key, kind in columns))
            add(f'        <td class="num" data-col="count">{escape(fmt_int(r.count))}</td>\n')
            if table.values_title:
                add(f'<td class="values" data-col="values">'
                    f'{escape(fmt_values(r.values, table.values_kind))}</td>')
        else:
            add(f'        <td class="failed-msg" colspan="{span}">✗ {escape(r.status.upper())}: '
                f'{escape(first_line(r.error) or "no error message recorded")}</td>\n')
        add("      </tr>\n")
    return Markup("".join(out))


def run_rows(runs: list[Run], show_network: bool) -> Markup:
    """The <tr> of every repeat in the table of command lines run."""
    out: list[str] = []
    add = out.append
    for r in runs:
        add(f'        <tr data-profile="{escape(r.profile)}">\n'
            f'          <td class="num">{escape(DASH if r.order is None else r.order)}</td>\n'
            f'          <td><code>{escape(r.profile)}</code></td><td>{escape(r.mode)}</td>'
            f'<td class="num">{escape(r.size)}</td>')
        if show_network:
            add(f"<td>{escape(r.network)}</td>")
        failed = "" if r.status == "ok" else "failed"
        add(f'          <td class="num">{escape(r.repeat)}</td>\n'
            f'          <td class="{failed}">{escape(r.status)}</td>\n'
            f'          <td class="cmds"><pre>{escape(chr(10).join(r.commands))}</pre></td>\n'
            f'        </tr>\n')
    return Markup("".join(out))
