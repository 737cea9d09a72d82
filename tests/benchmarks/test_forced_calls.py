"""The forced-calls measurement counts a reply as good only when it is a call that parses, fits the schema the
client sent and max_tokens, and names the function when one was named: each near miss is counted bad."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from benchmarks.forced_calls import BARE, requests, schemas, valid_call

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
          "required": ["path"], "additionalProperties": False}  # fmt: skip


def reply(*calls: tuple[str, Any], tokens: int = 20) -> dict[str, Any]:
    made = [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": args if isinstance(args, str)
             else json.dumps(args)}} for i, (name, args) in enumerate(calls)]  # fmt: skip
    message: dict[str, Any] = {"role": "assistant", "content": None, **({"tool_calls": made} if made else {})}
    return {"choices": [{"message": message}], "usage": {"completion_tokens": tokens}}


def test_a_call_that_fits_counts_whether_required_or_named() -> None:
    good = reply(("act", {"path": "a.txt", "limit": 3}))
    assert valid_call(good, SCHEMA, 64, named=False) and valid_call(good, SCHEMA, 64, named=True)
    assert valid_call(reply(("list_files", {})), SCHEMA, 64, named=False)  # required: any offered tool


@pytest.mark.parametrize(
    ("near_miss", "named"),
    [
        (reply(), False),  # words, no call
        (reply(("act", {"path": "a.txt"}), tokens=65), False),  # longer than max_tokens
        (reply(("list_files", {})), True),  # another function than the one named
        (reply(("act", '{"path": "a.txt"')), False),  # arguments that do not parse
        (reply(("act", {"limit": 3})), False),  # a required key missing
        (reply(("act", {"path": "a.txt", "extra": 1})), False),  # a key the strict schema forbids
        (reply(("act", {"path": 7})), False),  # a value of the wrong type
        (reply(("act", {"path": "a"}), ("delete", {})), False),  # a second call to a tool never offered
    ],
)
def test_each_near_miss_counts_as_bad(near_miss: dict[str, Any], named: bool) -> None:
    assert not valid_call(near_miss, SCHEMA, 64, named=named)


def test_every_peer_gets_the_same_valid_schemas_each_required_and_named() -> None:
    assert schemas() == schemas() and len(schemas()) == 30
    for schema in schemas():
        jsonschema.Draft202012Validator.check_schema(schema)
    made = requests()
    assert len(made) == 60
    assert [body["tool_choice"] for body, _, _ in made[:2]] == [
        "required",
        {"type": "function", "function": {"name": "act"}},
    ]
    assert all(body["tools"][1]["function"]["parameters"] == BARE for body, _, _ in made)
