"""The one place a Jinja2 environment for govkit's templates (templates/) is made."""

from __future__ import annotations

from functools import cache

import jinja2

from govkit.common.paths import TEMPLATES_DIR


def template_environment(*, trim_blocks: bool = False) -> jinja2.Environment:
    """A new environment over templates/: undefined names are errors (a typo never renders
    as an empty string), XML and HTML templates are autoescaped, Markdown is not, and a
    template's final newline is kept. `trim_blocks` also strips block-tag whitespace (for
    templates written with that in mind). Callers add their own filters and cache it."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR), undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("xml.j2", "html.j2"),
                                            disabled_extensions=("md.j2",), default=True),
        trim_blocks=trim_blocks, lstrip_blocks=trim_blocks, keep_trailing_newline=True)


@cache
def get_template(name: str) -> jinja2.Template:
    """A template from the default (untrimmed) environment, loaded once."""
    return _default().get_template(name)


@cache
def _default() -> jinja2.Environment:
    return template_environment()
