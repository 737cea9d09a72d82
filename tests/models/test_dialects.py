"""Golden tests: Qwen-format tool calls parsed, and conversations rendered the way Qwen's template does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from models.dialects import Parsed, ParsedCall, native_messages, parse, written_messages
from models.template import ChatTemplate

QWEN_TEMPLATE = (Path(__file__).parent / "data" / "qwen2_5_chat_template.jinja").read_text()
SMOLLM2_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}  # noqa: E501 (golden text)
]  # fmt: skip
CONVERSATION: list[Any] = [
    {"role": "system", "content": "You are a file agent."},
    {"role": "user", "content": "What do the logs say?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "errors.log"}'}},
        {"id": "b", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}}]},
    {"role": "tool", "tool_call_id": "a", "content": "worker 7 timed out"},
    {"role": "tool", "tool_call_id": "b", "content": "rotate your logs"},
    {"role": "assistant", "content": "Worker 7 timed out; rotate your logs."},
]  # fmt: skip

EXPECTED_QWEN = (
    "<|im_start|>system\nYou are a file agent.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"  # noqa: E501 (golden text)
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    '{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}\n'  # noqa: E501 (golden text)
    "</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"  # noqa: E501 (golden text)
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
    "<|im_start|>user\nWhat do the logs say?<|im_end|>\n"
    '<|im_start|>assistant\n<tool_call>\n{"name": "read_file", "arguments": {"path": "errors.log"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call><|im_end|>\n'
    "<|im_start|>user\n<tool_response>\nworker 7 timed out\n</tool_response>\n<tool_response>\nrotate your logs\n</tool_response><|im_end|>\n"  # noqa: E501 (golden text)
    "<|im_start|>assistant\nWorker 7 timed out; rotate your logs.<|im_end|>\n<|im_start|>assistant\n"
)


def test_a_conversation_renders_through_qwens_template_with_arguments_as_objects() -> None:
    rendered = ChatTemplate(QWEN_TEMPLATE).render(native_messages(CONVERSATION), TOOLS)
    assert rendered == EXPECTED_QWEN
    assert '"{\\"path\\"' not in rendered  # never double-encoded


def test_a_template_without_tools_gets_the_same_hermes_text_written_for_it() -> None:
    template = ChatTemplate(SMOLLM2_TEMPLATE)
    assert not template.supports_tools and ChatTemplate(QWEN_TEMPLATE).supports_tools
    rendered = template.render(written_messages(CONVERSATION, TOOLS))
    assert rendered == EXPECTED_QWEN  # SmolLM2 sees exactly what Qwen's template would have shown it


def test_without_a_system_message_the_tools_get_one() -> None:
    rendered = ChatTemplate(SMOLLM2_TEMPLATE).render(written_messages(CONVERSATION[1:2], TOOLS))
    assert rendered.startswith("<|im_start|>system\nYou are a helpful assistant.\n\n# Tools\n")


def test_parse_a_single_call() -> None:
    assert parse('<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>') == Parsed(
        None, [ParsedCall("read_file", {"path": "a.txt"})], 0
    )


def test_parse_several_calls_with_text_around() -> None:
    text = (
        'Let me look.\n<tool_call>\n{"name": "list_files", "arguments": {}}\n</tool_call>\n'
        '<tool_call>{"name": "read_file", "arguments": {"path": "b.log"}}</tool_call>\nDone.'
    )
    parsed = parse(text)
    assert parsed.calls == [ParsedCall("list_files", {}), ParsedCall("read_file", {"path": "b.log"})]
    assert parsed.content == "Let me look.\n\n\nDone." and parsed.malformed == 0


def test_arguments_written_as_a_json_string_are_accepted() -> None:
    parsed = parse('<tool_call>{"name": "f", "arguments": "{\\"x\\": 1}"}</tool_call>')
    assert parsed.calls == [ParsedCall("f", {"x": 1})]


def test_a_malformed_block_stays_content_and_is_counted() -> None:
    for body in (
        '{"name": "f", "arguments": {"x": 1}',
        '{"arguments": {}}',
        "not json",
        '{"name": "f", "arguments": [1]}',
    ):
        text = f"<tool_call>{body}</tool_call>"
        assert parse(text) == Parsed(text, [], 1)


def test_good_and_malformed_blocks_together() -> None:
    text = '<tool_call>{"name": "ok", "arguments": {}}</tool_call> <tool_call>{oops}</tool_call>'
    parsed = parse(text)
    assert (
        parsed.calls == [ParsedCall("ok", {})]
        and parsed.content == "<tool_call>{oops}</tool_call>"
        and parsed.malformed == 1
    )


def test_an_unclosed_block_stays_content_and_is_counted() -> None:
    text = 'Sure.\n<tool_call>\n{"name": "read_file", "arguments": {"pa'
    assert parse(text) == Parsed(text, [], 1)


def test_plain_text_is_content() -> None:
    assert parse("  Hello.  ") == Parsed("Hello.", [], 0)
    assert parse("") == Parsed(None, [], 0)
