"""Reading the report pages' text back: what test_report and test_compare check figures on."""

from __future__ import annotations


def text(el) -> str:
    return " ".join(el.text_content().split())


def words(el) -> str:
    """Text with a space between elements (a header's hint is a block of its own)."""
    return " ".join(" ".join(el.itertext()).split())


def num(s: str) -> float:
    """A number as shown: thin-space thousands separators, optional sign and ×."""
    return float("".join(s.split()).removesuffix("\u00d7"))


def interval(s: str) -> tuple[float, float]:
    """'[low, high]' as shown."""
    assert s.startswith("[") and s.endswith("]"), s
    lo, hi = s[1:-1].split(",")
    return num(lo), num(hi)
