"""The RTPS domain ids a run's processes join.

A catalog profile's processes may use any id 1..MAX_DOMAIN_ID (0, the default domain of
every other DDS program, is left alone). A governance file (`bench --governance`) is
measured on the ids its first domain_rule covers, as the runner's implementation reads
them: a file written for one domain (sros2's ROS_DOMAIN_ID, OpenDDS's sample's 4) runs
there, instead of failing at run time on a random one (issue 37). The ids come from the
system's randomness, not from --seed: two runs at once must not share them.
"""

from __future__ import annotations

import random

from govkit.catalog.profiles import Profile
from govkit.common.errors import GovkitError
from govkit.common.limits import MAX_DOMAIN_ID

_random = random.SystemRandom()


def usable_domains(profile: Profile) -> list[int]:
    """The ids `profile`'s processes may join, the default domain 0 last."""
    if profile.domain_ids is None:
        return list(range(1, MAX_DOMAIN_ID + 1))
    return sorted(profile.domain_ids, key=lambda d: (d == 0, d))


def random_domain(profile: Profile, avoid: int | None = None) -> int:
    """One usable id for a repeat, other than `avoid` (where a stranger was) if it can."""
    usable = usable_domains(profile)
    return _random.choice([d for d in usable if d != avoid] or usable)


def distinct_domains(n: int, taken: set[int], usable: list[int] | None = None) -> list[int]:
    """n ids of `usable` (default 1..MAX_DOMAIN_ID) no other pair of this run uses; 0 only
    when the others do not suffice."""
    pool = usable if usable is not None else list(range(1, MAX_DOMAIN_ID + 1))
    free = [d for d in pool if d not in taken]
    if len(free) < n:
        raise GovkitError(f"{n} process pairs need {n} domains; only {len(free)} are free")
    nonzero = [d for d in free if d != 0]
    if len(nonzero) >= n:
        return _random.sample(nonzero, n)
    return [*_random.sample(nonzero, len(nonzero)), 0][:n]

