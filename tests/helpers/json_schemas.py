"""Validate a JSON document against the schema govkit ships for it (schemas/json/)."""

from __future__ import annotations

import json
from functools import cache

from jsonschema import Draft202012Validator

from govkit.common.paths import JSON_SCHEMAS_DIR


@cache
def validator(name: str) -> Draft202012Validator:
    """The validator of schemas/json/NAME.schema.json (formats checked too)."""
    schema = json.loads((JSON_SCHEMAS_DIR / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def errors(doc, name: str) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator(name).iter_errors(doc)]


def assert_valid(doc, name: str) -> None:
    """`doc` is valid against NAME's schema, and says so in its own `schema` field."""
    problems = errors(doc, name)
    assert not problems, "\n".join(problems[:10])
