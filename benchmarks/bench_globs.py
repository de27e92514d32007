#!/usr/bin/env python3
"""Pattern containment and matching: govkit's bit-set rows against the cell-by-cell table
they replaced (issue 23: lint and explain took 24-40 s on 300 topic rules like
`*a*a…*bN`). Prints both times and their ratio, measured side by side in one run.

    .venv/bin/python benchmarks/bench_globs.py [--rules 300] [--stars 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "properties"))

from test_globs import reference_covers, reference_matches  # noqa: E402

from govkit.documents.globs import covers, matches  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", type=int, default=300)
    ap.add_argument("--stars", type=int, default=20)
    args = ap.parse_args()
    rules = ["*a" * args.stars + f"*b{i}" for i in range(args.rules)]
    # lint GK101's work: each rule against every earlier one
    pairs = [(p, r) for k, r in enumerate(rules) for p in rules[:k]]
    names = [("a" * (2 * args.stars)) + f"b{i}" for i in range(args.rules)]
    for label, new, old, work in (
            ("covers (rule pairs)", covers, reference_covers, pairs),
            ("matches (rule x name)", matches, reference_matches,
             [(r, n) for r in rules[:50] for n in names])):
        timings = []
        for fn in (new, old):
            t0 = time.perf_counter()
            results = [fn(a, b) for a, b in work]
            timings.append(time.perf_counter() - t0)
            if fn is new:
                expected = results
            else:
                assert results == expected, "the two implementations disagree"
        print(f"{label:24s} {len(work):7d} pairs: bit sets {timings[0]:.3f} s, cell table "
              f"{timings[1]:.3f} s, ratio {timings[1] / timings[0]:.1f}x")


if __name__ == "__main__":
    main()
