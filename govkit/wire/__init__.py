"""What a benchmark point put on the wire.

- `capture`: a point's RTPS datagrams read off a network interface, and written as a pcap;
- `rtps`: the RTPS parser and classifier, and the per-profile expectation;
- `verdict`: what a governance promises on the wire, and whether an observation keeps it.

May import: govkit.common, govkit.catalog.
"""
