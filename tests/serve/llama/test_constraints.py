"""The bounds a forced call's arguments are decoded under: every free value a scalar of bounded size."""

from __future__ import annotations

import jsonschema
import pytest

from serve.llama.constraints import bounded, closed, least, least_call, value_chars


def test_a_forced_calls_free_values_are_bounded_and_the_clients_own_bounds_kept() -> None:
    schema = {"type": "object", "properties": {
        "note": {"type": "string"}, "code": {"type": "string", "maxLength": 500}, "n": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}}, "kind": {"type": "string", "enum": ["a", "b"]},
        "other": {"not": {"type": "string"}}}}  # fmt: skip
    chars = value_chars(schema, 64)
    out = bounded(schema, chars)["properties"]
    assert 16 <= chars < 64 and out["note"]["maxLength"] == chars and out["code"]["maxLength"] == 500
    assert out["n"]["maximum"] < 10**15 and out["tags"]["maxItems"] >= 1 and out["tags"]["items"]["maxLength"] == chars
    assert "maxLength" not in out["kind"] and out["other"] == {"not": {"type": "string"}}
    assert value_chars(schema, 4096) > 1000  # a roomy budget leaves long values alone


def test_a_value_of_any_kind_in_a_forced_call_is_a_bounded_scalar() -> None:
    """`{}` allows an object, which a small model fills with nested objects until max_tokens cuts the call."""
    schema = {"type": "object", "properties": {"s": {}, "t": {"description": "anything"}}, "required": ["s"]}
    chars = value_chars(schema, 64)
    out = bounded(schema, chars)["properties"]
    for value in ("x" * chars, 1.5, True, None):
        jsonschema.validate(value, out["s"])
        jsonschema.validate(value, out["t"])
    for wrong in ({"a": 1}, [1], "x" * (chars + 1)):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, out["s"])
    assert out["t"]["description"] == "anything" and value_chars(schema, 64) < value_chars({"type": "object"}, 64)


def test_an_object_that_says_nothing_of_other_keys_is_closed_and_what_it_allows_still_valid() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}, "opts": {
        "type": "object", "properties": {"n": {"type": "integer"}}}}, "required": ["path"]}  # fmt: skip
    out = closed(schema)
    assert out["additionalProperties"] is False and out["properties"]["opts"]["additionalProperties"] is False
    jsonschema.validate({"path": "a", "opts": {"n": 1}}, out)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"path": "a", "invented": 1}, out)
    # what the client said of other keys, and a required key it never declared, are left alone
    assert "additionalProperties" not in closed({"type": "object", "required": ["x"]})
    assert closed({"type": "object", "additionalProperties": {"type": "string"}})["additionalProperties"] == {
        "type": "string"
    }


def test_the_least_a_call_holds_is_its_required_values_at_their_shortest_over_every_choice() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 3},
            "mode": {"enum": ["r", "append"]},
            "n": {"type": "integer", "minimum": 5},
            "items": {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/flag"}},
            "note": {"type": "string"},
        },
        "required": ["path", "mode", "n", "items"],
        "$defs": {"flag": {"type": "boolean"}},
    }
    found = least(schema, schema)
    assert found.value == {"path": "", "mode": "append", "n": 5, "items": [False, False]} and found.chars == 3
    call = least_call("read", schema)
    assert call.value == {"name": "read", "arguments": found.value} and call.size() > found.size()
    looping = {"$ref": "#"}  # a schema that refers to itself ends at the depth bound
    assert least(looping, looping).value is None
