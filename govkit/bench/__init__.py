"""The experiment: its options, the machine, one repeat, the schedule, the captured wire
phase, latency by rotation, discovery, the machine's load, the defaults.

- `defaults`: default settings, sizes and --mode choices (light: the CLI reads it at
  start-up);
- `options`: what `bench` and `wire-check` are asked, and what they answer;
- `context`: one run's context (options, runner, store, bundles, pinning, seed, console,
  budget, work directory, network paths, load watch), handed down whole;
- `governance_files`: `bench --governance FILE`: your governance, measured as a point;
- `policy_points`: `bench --policy POLICY`: one point per protection class of an sros2
  policy, on names its rule covers;
- `domains`: the domain ids a run's processes join (a governance file's own);
- `machine`: where the two processes run, and whether the machine can pin them;
- `awake`: the measured CPUs kept awake while a run measures;
- `loadwatch`: how quiet the machine was while a run measured;
- `repeat`: one repeat of a point;
- `rotation`: latency, throughput and CPU by rotation: long-lived pairs, short slots,
  paired rounds;
- `calibration`: `govkit calibrate`: the run-to-run term measured on this machine, kept
  in the user's cache, and the term a run carries;
- `watchdog`: between rounds, an idle pair that burns CPU is stopped and counted failed;
- `forecast`: which ratios a rotating run will not narrow to its target in time, said
  at once;
- `discovery`: how long N participants started together take to match;
- `wire_phase`: one extra repeat of every point with its traffic captured;
- `schedule`: `govkit bench`: every point's repeats, in a shuffled order;
- `runs`: `govkit bench --runs N`: N runs into one directory, pooled.
- `lifetime`: `govkit lifetime-check`: what each runtime does at expiry, one real pair per
  runtime and event;
- `lifetime_events`: its events, outcomes and runtimes (light: the CLI reads them);
- `lifetime_material`: a cell's PKI, bundle and the one file that expires or revokes;
- `lifetime_pair`: a live pair of govkit's programs, every line kept with its time.

May import: every stage up to govkit.results and govkit.generate.
"""
