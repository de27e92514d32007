"""What `govkit bench` measures and over what, one home per word: the mode words, the
transports, the network paths, the AES key sizes and the size of a discovery group.

bench's options check against these tables, results.json is read against them, the report
words them, and the CLI's help texts list them from here (a light module: `govkit --help`
imports it).
"""

from __future__ import annotations

# The mode words. A point measures latency or throughput (`--mode`, a row's `mode`); a
# rotation's CPU slot is a throughput slot paced at a fixed rate, whose figure is CPU per
# sample; discovery is no point's mode but groups of --peers participants; `both` asks for
# latency and throughput.
LATENCY = "latency"
THROUGHPUT = "throughput"
CPU = "cpu"
DISCOVERY = "discovery"
BOTH = "both"
MODES = (LATENCY, THROUGHPUT)                 # what a runner measures: a point's mode
SLOT_MODES = (LATENCY, THROUGHPUT, CPU)       # what a rotation's slot measures
MODE_CHOICES = (*MODES, BOTH, DISCOVERY)      # what --mode takes

# Cyclone's DDSI transports (--transport), in the order the report lists them.
TRANSPORTS = ("udp", "tcp", "tls")
# Where the two sides of a point run (--net), each as the report words it.
PATH_WORDS = {"lo": "loopback",
              "netns": "two network namespaces joined by a veth pair",
              "hosts": "two hosts over the network"}
PATHS = tuple(PATH_WORDS)
DEFAULT_PATH = "lo"

# The AES key sizes a run may vary (--cipher): name → bits. Both runtimes' default is
# AES-256, the reference every other key size is compared with.
CIPHERS = {"aes128": 128, "aes256": 256}
DEFAULT_CIPHER = "aes256"

# Participants per discovery group (--peers): a pair at least.
MIN_PEERS = 2
MAX_PEERS = 100
DEFAULT_PEERS = 10


def listed(names, last: str = "or") -> str:
    """`a, b or c`: a table's names for a help text or a message, in the table's order."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"
