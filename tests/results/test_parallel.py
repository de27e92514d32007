"""The report's bootstraps in one worker per CPU (govkit.results.parallel): the very figures
one process gives, in the same order, and really computed in other processes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from helpers.large_results import shapes

from govkit.common import workers
from govkit.results.parallel import MIN_PARALLEL_VALUES, in_workers
from govkit.results.summary import Summarizer, summarize

ROTATION = Path(__file__).parent.parent / "data" / "report" / "rotation" / "results.json"


def _pids(part: list[int]) -> list[tuple[int, int]]:
    if len(part) > 1:
        time.sleep(0.3)     # long enough that no worker takes a second part first
    return [(i, os.getpid()) for i in part]


@pytest.mark.parametrize("name", ["rotation", "many_arms", "many_rounds", "many_profiles"])
def test_the_same_summary_in_workers_as_in_one_process(name):
    doc = json.loads(ROTATION.read_text()) if name == "rotation" else shapes(0.1)[name]
    one = Summarizer()
    spread = Summarizer(parallel=True)
    assert summarize(doc, spread) == summarize(doc, one)
    assert spread.overheads == one.overheads


def test_tasks_are_computed_in_other_processes_and_come_back_in_order():
    tasks = list(range(40))
    out = in_workers(_pids, tasks, [MIN_PARALLEL_VALUES] * 40)
    assert [i for i, _ in out] == tasks
    pids = {pid for _, pid in out}
    if workers.cpu_count() >= 2:       # one worker per CPU, none of them this process
        assert len(pids) == min(workers.cpu_count(), 40) and os.getpid() not in pids
    else:                      # one CPU: nothing to spread over
        assert pids == {os.getpid()}
    # too little work to pay for a fork: here
    assert {pid for _, pid in in_workers(_pids, tasks, [1] * 40)} == {os.getpid()}
