"""What every stage uses: errors and exit codes, size limits, reading untrusted input,
findings, atomic writes and staging, archives, worker pools, templates and resource paths.

- `errors`: the exit codes and `GovkitError`, the one exception the CLI turns into one line;
- `limits`: the size and count limits more than one stage enforces;
- `inputs`: reading a user-named file: regular files only, its size capped before reading;
- `findings`: `Finding`, `DocumentKind`, `DocumentError`, and quoting values in messages;
- `fsutil`: atomic file writes, and collecting the files under the paths given;
- `staging`: many files written durably without an fsync per file;
- `archive`: files being shipped onward as one deterministic tar, with its SHA-256;
- `workers`: work spread over the CPUs in a process pool that dies with govkit;
- `templating`: the one Jinja2 environment, its compiled templates cached;
- `paths`: where the templates, the schemas and the user's cache live;
- `cachefile`: small files kept in the user's cache, read back digest-checked as untrusted;
- `xmltime`: xs:dateTime as govkit writes it (UTC, `Z`), the one writer;
- `toml_text`: TOML read after a linear check of its nesting (no input can make it recurse).

May import: nothing in govkit.
"""
