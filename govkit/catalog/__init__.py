"""The data govkit knows, one table per fact: the protection profiles (and your own, from
a profiles file: `profiles_file`), the lint targets, the runner table, RTI's published
figures.

May import: govkit.common.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "BASELINE": "profiles",
    "DEFAULT_SOURCE": "rti_published",
    "DEFAULT_TARGET": "targets",
    "MODES": "runners",
    "PORTABLE_TARGET": "targets",
    "PROFILES": "profiles",
    "PROTECTION_KINDS": "profiles",
    "Profile": "profiles",
    "RTPS_MAX_DOMAIN_ID": "targets",
    "RUNNERS": "runners",
    "RunnerInfo": "runners",
    "SECURED_PROFILES": "profiles",
    "TARGETS": "targets",
    "Target": "targets",
    "VENDOR_TARGETS": "targets",
    "get_profile": "profiles",
    "known_profiles": "profiles",
    "open_range_readers": "targets",
    "published_cipher_pair": "rti_published",
    "published_overhead": "rti_published",
    "read_profiles": "profiles_file",
    "runner_info": "runners",
    "select_profiles": "profiles",
    "use_profiles": "profiles",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
