"""The one place a Jinja2 environment for govkit's templates (templates/) is made.

Compiling a template costs more than rendering it (report.html.j2: 0.2 s of a report's 3 s),
and every govkit command is a new process; so the compiled code is cached in
`user_cache_dir()/templates` (Jinja's bytecode cache). A cached entry is used only for the
same template source (checksum), the same Python and Jinja (Jinja's own check) and the same
compile-time settings (compile_settings); the directory only if this user owns it and no
one else may write to it (the code in it is run); anything wrong with it is a cache miss,
never an error.
"""

from __future__ import annotations

import hashlib
import os
import stat
from functools import cache

import jinja2
from jinja2.bccache import Bucket

from govkit.common.paths import TEMPLATES_DIR, user_cache_dir

TEMPLATE_CACHE = "templates"     # under user_cache_dir()


class TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache of compiled templates, keyed also by the compile-time settings
    (two environments may compile one template differently), whose failures are misses."""

    def get_bucket(self, environment: jinja2.Environment, name: str, filename: str | None,
                   source: str) -> Bucket:
        key = hashlib.sha256(f"{name}\0{filename}\0{compile_settings(environment, name)}"
                             .encode()).hexdigest()
        bucket = Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:   # noqa: BLE001 - unreadable, or corrupt where Jinja does not
            bucket.reset()  # catch it (a truncated checksum: pickle's errors are any type)

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:                # Jinja writes a temporary file and renames it: never half-written
            super().dump_bytecode(bucket)
        except OSError:     # a full or read-only disk: compiled again next time
            pass


def compile_settings(environment: jinja2.Environment, name: str) -> str:
    """What changes the code Jinja compiles `name` to, besides its source."""
    autoescape = environment.autoescape
    return repr((environment.block_start_string, environment.block_end_string,
                 environment.variable_start_string, environment.variable_end_string,
                 environment.comment_start_string, environment.comment_end_string,
                 environment.line_statement_prefix, environment.line_comment_prefix,
                 environment.trim_blocks, environment.lstrip_blocks,
                 environment.newline_sequence, environment.keep_trailing_newline,
                 sorted(environment.extensions), environment.optimized,
                 autoescape(name) if callable(autoescape) else autoescape,
                 _qualified(environment.finalize)))


def _qualified(fn: object) -> str | None:
    if fn is None:
        return None
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', fn)}"


@cache
def template_cache() -> TemplateCache | None:
    """The cache (looked at once per process), or None where there can be none: a directory
    that cannot be made, is not a directory, is owned by another user or is writable by
    others."""
    directory = user_cache_dir() / TEMPLATE_CACHE
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(directory)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return None
    return TemplateCache(str(directory))


def template_environment(*, trim_blocks: bool = False) -> jinja2.Environment:
    """A new environment over templates/: undefined names are errors (a typo never renders
    as an empty string), XML and HTML templates are autoescaped, Markdown is not, and a
    template's final newline is kept. `trim_blocks` also strips block-tag whitespace (for
    templates written with that in mind). Callers add their own filters and cache it."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR), undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("xml.j2", "html.j2"),
                                            disabled_extensions=("md.j2",), default=True),
        trim_blocks=trim_blocks, lstrip_blocks=trim_blocks, keep_trailing_newline=True,
        bytecode_cache=template_cache())


@cache
def get_template(name: str) -> jinja2.Template:
    """A template from the default (untrimmed) environment, loaded once."""
    return _default().get_template(name)


@cache
def _default() -> jinja2.Environment:
    return template_environment()
