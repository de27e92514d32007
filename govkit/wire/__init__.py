"""What a benchmark point put on the wire.

- `capture`: a point's RTPS datagrams read off a network interface, and written as a pcap;
- `rtps`: the RTPS parser and classifier, and the per-profile expectation;
- `verdict`: what a governance promises on the wire, and whether an observation keeps it;
- `pcapfile`, `cdr`: capture files read into datagrams; discovery and handshake data read
  as an eavesdropper reads them;
- `leaks`, `leak_entries`, `leak_content`, `leak_summary`: what a passive reader learns from
  a captured point, as entries per kind, and per profile;

May import: govkit.common, govkit.catalog, govkit.pki, govkit.documents, govkit.check.
"""
