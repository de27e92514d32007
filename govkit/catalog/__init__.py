"""The data govkit knows, one table per fact: the protection profiles (and your own, from a
profiles file), the lint targets, the runner table, bench's words, RTI's published figures.

- `profiles`: the protection-profile catalog, and the profiles a command may name;
- `profiles_file`: your own profiles, from a TOML file or govkit.toml;
- `targets`: what each DDS Security implementation accepts (one row per `lint --target`);
- `runners`: the runner table: every fact about a runner that is not its code;
- `measures`: what bench measures and over what: the mode words, transports, network
  paths, ciphers and the discovery group's size;
- `rti_published`: RTI's published secure-latency figures (with `data/rti_published.csv`);
- `advisories`: the security advisories bearing on DDS Security (with `data/advisories.csv`),
  which versions each affects; `doctor` and lint's target facts read it;
- `data/`: the tables kept as files.

May import: govkit.common.
"""
