"""The schema check: every bad schema refused on every request, the good ones remembered within a bound."""

from __future__ import annotations

from typing import Any

import pytest

from serve.core.validation import MAX_SCHEMA_DEPTH, SchemaChecks
from serve.errors import InvalidRequest
from tests.serve.test_fuzz import nested_schema

GOOD: dict[str, Any] = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
BAD: dict[str, Any] = {"type": "object", "properties": {"path": {"type": 7}}}


def test_a_bad_schema_is_refused_every_time_it_comes() -> None:
    check = SchemaChecks()
    for _ in range(3):
        with pytest.raises(InvalidRequest, match="tool 'read': not a valid JSON Schema") as refused:
            check(BAD, "tool 'read'", "tools[0].function.parameters")
        assert refused.value.param == "tools[0].function.parameters"
    assert not check.passed


def test_a_remembered_schema_still_passes_and_a_changed_one_is_checked_again() -> None:
    check = SchemaChecks()
    check(GOOD, "tool 'read'", "p")
    check(GOOD, "tool 'read'", "p")
    assert len(check.passed) == 1
    changed = {**GOOD, "properties": {"path": {"type": "strin"}}}
    with pytest.raises(InvalidRequest, match="not a valid JSON Schema"):
        check(changed, "tool 'read'", "p")
    with pytest.raises(InvalidRequest, match="nested deeper"):
        check(nested_schema(MAX_SCHEMA_DEPTH + 1), "response_format", "p")


def test_the_memory_keeps_the_most_recent_schemas_up_to_its_size() -> None:
    check = SchemaChecks(size=3)
    schemas = [{"type": "object", "properties": {f"p{i}": {"type": "string"}}} for i in range(5)]
    for schema in [*schemas[:3], schemas[0], *schemas[3:]]:
        check(schema, "tool", "p")
    assert len(check.passed) == 3 and '"p0"' in next(iter(check.passed)) and '"p4"' in next(reversed(check.passed))
