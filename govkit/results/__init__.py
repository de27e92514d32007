"""What a run records and every figure computed from it.

- `store`: results.json and the per-profile CSVs beside it;
- `check`: results.json checked before a report recomputes from it;
- `summary`: what a point is, and one summary row per point;
- `stats`: every figure computed from the runners' raw rows, and their intervals;
- `paired`: the paired, per-round overhead estimate of a rotating run;
- `parallel`: the report's bootstraps spread over the CPUs;
- `figures`: every figure a repeat yields, named once;
- `flags`: every flag a result can carry, in one table;
- `gates`: a run's figures as a pass or a fail for CI;
- `discovery`: discovery figures, recomputed from the raw rows;
- `perftest_csv`: the per-profile CSVs in perftest's file names and columns.
- `cost_model`: each profile's added cost as a line through the measured sizes;

May import: every stage up to govkit.runners.
"""
