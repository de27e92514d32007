"""govkit: DDS Security governance/permissions toolkit and per-profile benchmark driver."""

__version__ = "0.1.0"
