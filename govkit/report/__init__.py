"""Show a run: report.html and summary.md, the charts, the wire section, runs side by side,
the terminal tables.

- `run`: a run's results.json turned into report.html and summary.md;
- `model`: what the report shows, as dataclasses;
- `rows_html`: the report's tables of one row per repeat, as HTML;
- `plots`: the charts;
- `plot_process`: the charts drawn in a forked plotter, beside the report's own work;
- `wire_section`: what the report shows of `bench --wire`;
- `compare`: `govkit report RUN RUN …`: runs side by side;
- `terminal`: the run's summary as terminal tables;
- `lifetime_page`: `govkit lifetime-check --out`: lifetime.json and lifetime.html.

May import: every stage up to govkit.bench.
"""
