"""What a benchmark point put on the wire: capture (`capture`), RTPS parsing and the
per-profile expectation (`rtps`), the verdicts (`verdict`); and what an eavesdropper reads
in it (`leaks`, reading samples with `cdr` and `leak_content`, entries in `leak_entries`,
per profile in `leak_summary`), from a capture or a capture file (`pcapfile`).

May import: govkit.common, govkit.catalog, govkit.documents.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "Capture": "capture",
    "KINDS": "leak_entries",
    "METHOD": "rtps",
    "capture_file_point": "leaks",
    "captured_frames": "pcapfile",
    "check_capture": "capture",
    "datagrams": "pcapfile",
    "find_leaks": "leaks",
    "headline": "verdict",
    "judge_again": "verdict",
    "level": "verdict",
    "pcap_bytes": "capture",
    "profile_leaks": "leak_summary",
    "profile_verdicts": "rtps",
    "readable": "verdict",
    "udp_datagrams": "capture",
    "unescape": "leak_entries",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
