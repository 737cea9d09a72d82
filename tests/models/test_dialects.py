"""Golden tests: Qwen-format tool calls parsed, and conversations rendered the way Qwen's template does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from models.dialects import Opening, Parsed, ParsedCall, native_messages, opening, parse, written_messages
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


OFFERED = ("list_files", "read_file")
RECORDED = [json.loads(line) for line in (Path(__file__).parent / "data" / "replies.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("row", RECORDED, ids=[f"{r['model']}-{r['suite']}-{r['task']}-{r['turn']}" for r in RECORDED])
def test_real_replies_of_real_models_parse_as_recorded(row: dict[str, Any]) -> None:
    """Greedy replies of Qwen2.5-Coder 0.5B/1.5B and SmolLM2 on the eval's tasks, with no grammar applied."""
    parsed = parse(row["raw"], OFFERED)
    expected = row["expected"]
    assert [[c.name, c.arguments] for c in parsed.calls] == expected["calls"]
    assert parsed.content == expected["content"] and parsed.malformed == expected["malformed"]


def test_the_recordings_hold_every_form_the_family_writes() -> None:
    raws = [r["raw"] for r in RECORDED if r["expected"]["calls"]]
    assert any(r.startswith('{"name"') for r in raws)  # bare
    assert any("\n{" in r.strip() and r.startswith('{"name"') for r in raws)  # several, one per line
    assert any(r.startswith("```json") for r in raws)  # fenced
    assert any(r.startswith("{{") for r in raws)  # doubled braces


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "read_file", "arguments": {"path": "a.txt"}}',
        '  {"name":"read_file","arguments":"{\\"path\\": \\"a.txt\\"}"}  ',
        '```json\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n```',
        '```\n[{"name": "read_file", "arguments": {"path": "a.txt"}}]\n```',
        '{{"name": "read_file", "arguments": {"path": "a.txt"}}}',
        '[{"name": "read_file", "parameters": {"path": "a.txt"}}]',
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>',
    ],
)
def test_every_form_is_the_same_call(text: str) -> None:
    assert parse(text, OFFERED) == Parsed(None, [ParsedCall("read_file", {"path": "a.txt"})])


def test_several_bare_calls_on_their_own_lines() -> None:
    text = '{"name": "list_files", "arguments": {}}\n{"name": "read_file", "arguments": {"path": "b.log"}}'
    assert parse(text, OFFERED).calls == [ParsedCall("list_files", {}), ParsedCall("read_file", {"path": "b.log"})]


def test_text_before_a_fence_stays_content() -> None:
    text = 'I will read it.\n```json\n{"name": "read_file", "arguments": {"path": "a"}}\n```'
    assert parse(text, OFFERED) == Parsed("I will read it.", [ParsedCall("read_file", {"path": "a"})])


def test_json_that_names_no_offered_tool_is_an_answer_not_a_call() -> None:
    for answer in ('{"name": "Bob", "arguments": {"age": 3}}', '{"answer": 3}', "[1, 2, 3]", '```json\n{"a": 1}\n```'):
        parsed = parse(answer, OFFERED)
        assert parsed.calls == [] and parsed.content == answer
    assert parse('{"name": "Bob", "arguments": {}}', None).calls == [ParsedCall("Bob", {})]  # any name, if asked


def test_opening_says_when_a_reply_is_or_may_become_a_call_and_what_to_hold_back() -> None:
    assert opening('{"name":') == Opening("anchored", 0) == opening(' ```json\n {{ "name" :')
    assert opening("Sure <tool_call>") == Opening("tagged", 5)
    assert opening('Like so:\n```json\n{"name":') == Opening("fenced", 9)
    for start in ("", "  {", '```json\n[{"na', "{{"):
        assert opening(start) == Opening("maybe", 0)
    assert opening("Sure <tool_") == Opening("maybe", 5) and opening("Here ``") == Opening("maybe", 5)
    assert opening('Like so:\n```json\n{"na') == Opening("maybe", 9)
    names = ("read_file",)  # with the tools named, a call begins only once it names one of them
    assert opening('{"name": "read_file"', names) == Opening("anchored", 0)
    assert opening('{"name": "read_f', names) == Opening("maybe", 0)
    assert opening('{"name": "file_1.txt"', names) == Opening("no", 21)
    for text in ("The answer is 3", '{"answer": 3}', "```python", 'See:\n```python\nprint("name")'):
        assert opening(text) == Opening("no", len(text))
