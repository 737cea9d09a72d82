"""From a chat request to what the llama backend decodes: which replies must be a call, under which schema."""

from __future__ import annotations

from typing import Any

from serve.llama.chat import as_decoded, constrains_a_call, document_schema
from wire.types import ChatCompletionRequest

TOOL: Any = {"type": "function", "function": {"name": "read", "parameters": {"type": "object", "properties": {}}}}
OTHER: Any = {"type": "function", "function": {"name": "list", "parameters": {"type": "object", "properties": {}}}}


def request(**fields: object) -> ChatCompletionRequest:
    return ChatCompletionRequest.model_validate(
        {"model": "m", "messages": [{"role": "user", "content": "q"}], **fields}
    )


def test_a_reply_is_a_call_from_its_first_token_only_when_the_request_says_so() -> None:
    named = {"type": "function", "function": {"name": "read"}}
    document = {"type": "json_object"}
    assert constrains_a_call(request(tools=[TOOL], tool_choice="required"))
    assert constrains_a_call(request(tools=[TOOL], tool_choice=named))
    assert constrains_a_call(request(tools=[TOOL], response_format=document))  # a call or the document
    assert not constrains_a_call(request(tools=[TOOL]))  # auto: the model may answer in words
    assert not constrains_a_call(request(tools=[TOOL], tool_choice="none", response_format=document))
    assert not constrains_a_call(request(tool_choice="required"))  # no tools: nothing to call
    for mode in ("auto", "required"):
        allowed = {"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": [named]}}
        assert constrains_a_call(request(tools=[TOOL, OTHER], tool_choice=allowed)) == (mode == "required")


def test_the_document_schema_is_the_one_response_format_names() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    named = {"type": "json_schema", "json_schema": {"name": "n", "schema": schema}}
    assert document_schema(request(response_format=named)) == schema
    assert document_schema(request(response_format={"type": "json_object"})) == {"type": "object"}
    assert document_schema(request(response_format={"type": "text"})) is None and document_schema(request()) is None


def test_tool_parameters_replace_the_schema_a_call_is_decoded_under_and_nothing_else() -> None:
    narrowed = {"type": "object", "properties": {"path": {"enum": ["a.txt"]}}, "required": ["path"]}
    decoded = as_decoded([TOOL, OTHER], {"read": narrowed, "absent": {}})
    assert decoded[0]["function"]["parameters"] == narrowed and decoded[0]["function"]["name"] == "read"
    assert decoded[1] == OTHER and TOOL["function"]["parameters"] == {"type": "object", "properties": {}}
