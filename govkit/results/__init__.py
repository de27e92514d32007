"""What a run records and every figure computed from it.

- `record`: the run record: results.json's slots, pairs, repeats and settings as frozen
  records, read from every format version in one place;
- `point`: a summary row as a record, as the report, the terminal and the gates read it;
- `store`: results.json and the per-profile CSVs beside it;
- `check`: results.json checked, then loaded as the run record;
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
- `versions`: a version axis's table: each profile's cost on two installs, and between;
- `pool`: several runs of the same points pooled, the between-run term measured from them;
- `latency_state`: the CPUs' state behind absolute µs, and idle's effect where measured;

May import: every stage up to govkit.runners.
"""
