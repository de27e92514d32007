"""A rotating runner hands out a ready pair (issue 45): `RotatingRunner.ready_pair` builds
the runner's own specs, starts them and waits until both sides matched, so bench
(govkit.bench.rotation) schedules slots and never builds a pair. Real Cyclone DDS and Fast
DDS processes; the checks are on what the pair is and says, never on how fast it was."""

from __future__ import annotations

import pytest
from helpers.dds import cyclone_runner, needs_cyclone, next_domain, pair_bundle

from govkit.runners.base import PairRequest
from govkit.runners.pair import NORMAL, PairFailed

WAIT_S = 120


def _fastdds():
    from helpers.fastdds import runner
    return runner()


def _check_ready_pair(r, tmp_path) -> None:
    bundle, work = pair_bundle(r, tmp_path, "rtps_sign")
    domain = next_domain()
    request = PairRequest("rtps_sign", "rtps_sign", 7, None, False, work,
                          timeout_s=WAIT_S)
    pair = r.ready_pair(bundle, domain, request)
    try:
        assert pair.alive and pair.instance == 7 and pair.domain_id == domain
        assert set(pair.ready_s) == {"pub", "sub"}          # both sides said `ready`
        assert pair.policy == NORMAL and pair.explain is not None
        assert len(pair.commands()) == 2 and all("perf" in c for c in pair.commands())
        assert any(pair.slot(32, 10_000, 100_000)["n"] > 0 for _ in range(50))
    finally:
        pair.close()


def _check_unready_pair(r, tmp_path) -> None:
    """A pair that cannot match in its time is closed, and the error carries its
    command lines (bench records them with the failed pair)."""
    bundle, work = pair_bundle(r, tmp_path, "none")
    request = PairRequest("none", "none", 0, None, False, work, timeout_s=0.001)
    with pytest.raises(PairFailed, match="did not answer in time") as caught:
        r.ready_pair(bundle, next_domain(), request)
    assert len(caught.value.commands) == 2
    assert all("perf" in c for c in caught.value.commands)


@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_hands_out_a_ready_pair(tmp_path):
    _check_ready_pair(cyclone_runner(), tmp_path)


@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_pair_that_does_not_match_in_time_is_closed_and_named(tmp_path):
    _check_unready_pair(cyclone_runner(), tmp_path)


@pytest.mark.fastdds
def test_fastdds_hands_out_a_ready_pair(tmp_path):
    _check_ready_pair(_fastdds(), tmp_path)


@pytest.mark.fastdds
def test_fastdds_pair_that_does_not_match_in_time_is_closed_and_named(tmp_path):
    _check_unready_pair(_fastdds(), tmp_path)


@pytest.mark.fastdds
def test_each_reader_adds_to_the_wait_for_a_match(tmp_path):
    """N readers are N + 1 participants authenticating each other: the sides wait
    MATCH_WAIT_S per reader (30 s for any count let loaded 4-reader pairs give up)."""
    from govkit.runners.base import MATCH_WAIT_S
    r = _fastdds()
    bundle, work = pair_bundle(r, tmp_path, "none")
    for readers in (1, 2):
        request = PairRequest("none", "none", 0, None, False, work, readers=readers,
                              timeout_s=0.001)
        with pytest.raises(PairFailed) as caught:
            r.ready_pair(bundle, next_domain(), request)
        wait = f"-w {MATCH_WAIT_S * readers:g} "
        assert all(wait in c for c in caught.value.commands), caught.value.commands
