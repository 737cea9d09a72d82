"""The schema check: every bad schema refused on every request, the good ones remembered within a bound."""

from __future__ import annotations

import time
from typing import Any

import pytest

from serve.core.validation import MAX_SCHEMA_DEPTH, SchemaChecks
from serve.errors import InvalidRequest
from tests.serve.schemas import nested_schema, ref_chain

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


def refused(schema: dict[str, Any]) -> str:
    with pytest.raises(InvalidRequest) as caught:
        SchemaChecks()(schema, "tool 'f'", "tools[0].function.parameters")
    assert caught.value.status == 400 and caught.value.param == "tools[0].function.parameters"
    return caught.value.message


def test_a_schema_no_finite_value_fits_is_refused_before_a_grammar_is_built_for_it() -> None:
    defs: dict[str, Any] = {"a": {"$ref": "#/$defs/b"}}
    loop = {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": defs}
    defs["b"] = {"$ref": "#/$defs/a"}
    assert "refers to itself without end" in refused(loop)
    node = {"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]}
    assert "no value of finite size" in refused(node)
    pair = {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/n"}}
    defs = {"n": {"allOf": [{"$ref": "#/$defs/n"}]}}
    assert "no value of finite size" in refused(
        {"type": "object", "properties": {"p": pair}, "required": ["p"], "$defs": defs}
    )
    assert "points at nothing" in refused({"type": "object", "properties": {"p": pair}})


def test_a_recursive_schema_a_value_can_end_passes() -> None:
    tree = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["name", "children"],
    }
    either = {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/list"}]}
    linked = {
        "type": "object",
        "properties": {"head": {"$ref": "#/$defs/list"}},
        "required": ["head"],
        "$defs": {"list": {"type": "object", "properties": {"next": either}, "required": ["next"]}},
    }
    for schema in (tree, linked, ref_chain(300, "object"), ref_chain(300, "array")):
        SchemaChecks()(schema, "tool 'f'", "p")


def test_references_that_branch_at_every_link_are_checked_in_linear_work() -> None:
    links = 400  # each link may be either of two references to the next: 2**400 paths, the last of which fails
    defs: dict[str, Any] = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]} for i in range(links)
    }
    defs[f"d{links}"] = False
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "required": ["x"], "$defs": defs}
    started = time.perf_counter()
    assert "no value of finite size" in refused(schema)
    assert time.perf_counter() - started < 5  # a bound for a hang, not a speed claim: the work is about 1,200 steps
