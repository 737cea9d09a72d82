"""The structured scenario: the simplest document a client's schema accepts, checked against the schema before
it is sent, and a clear refusal for a schema it cannot fill."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from serve.errors import ScriptExhausted
from serve.scripted.script import Transcript
from serve.scripted.structured import instance, structured
from wire.types import ResponseFormat

SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {"level": {"enum": ["low", "high"]}},
    "properties": {
        "answer": {"type": "string", "maxLength": 5},
        "level": {"$ref": "#/$defs/level"},
        "count": {"type": "integer", "minimum": 3},
        "ratio": {"type": ["null", "number"], "exclusiveMinimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        "ok": {"type": "boolean"},
        "kind": {"const": "reply"},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    },
    "required": ["answer", "level", "count"],
}


def asked(form: dict[str, Any], question: str = "What is it?") -> Transcript:
    return Transcript("structured", [{"role": "user", "content": question}], ResponseFormat.model_validate(form))


def test_the_simplest_document_fits_the_schema() -> None:
    document = instance(SCHEMA, SCHEMA, "What is it?")
    assert document == {"answer": "What ", "level": "low", "count": 3, "ratio": 1.0, "tags": ["What is it?"] * 2,
                        "ok": True, "kind": "reply", "either": 0}  # fmt: skip
    assert not list(Draft202012Validator(SCHEMA).iter_errors(document))


def test_a_reply_is_json_of_the_schema_the_client_asked_for() -> None:
    reply = structured(asked({"type": "json_schema", "json_schema": {"name": "r", "schema": SCHEMA}}))
    assert json.loads(str(reply.content))["level"] == "low"
    assert json.loads(str(structured(asked({"type": "json_object"})).content)) == {"answer": "What is it?"}
    assert "response_format" in str(structured(Transcript("structured", [{"role": "user", "content": "q"}])).content)


def test_a_schema_no_simple_document_fits_is_refused_not_answered_wrongly() -> None:
    impossible = {"type": "object", "properties": {"n": {"type": "integer", "maximum": -5}}, "required": ["n"]}
    with pytest.raises(ScriptExhausted, match="cannot build a document for this schema"):
        structured(asked({"type": "json_schema", "json_schema": {"name": "r", "schema": impossible}}))
