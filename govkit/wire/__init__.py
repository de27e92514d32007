"""What a benchmark point put on the wire: capture (`capture`), RTPS parsing and the
per-profile expectation (`rtps`), and the verdicts (`verdict`).

May import: govkit.common, govkit.catalog.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "Capture": "capture",
    "METHOD": "rtps",
    "check_capture": "capture",
    "headline": "verdict",
    "judge_again": "verdict",
    "level": "verdict",
    "pcap_bytes": "capture",
    "profile_verdicts": "rtps",
    "readable": "verdict",
    "udp_datagrams": "capture",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
