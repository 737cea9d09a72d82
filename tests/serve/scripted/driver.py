"""A tiny agent of the tests' own, on the official openai client, to drive the scripted provider."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openai import OpenAI
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageFunctionToolCall


def tool(name: str, params: dict[str, Any]) -> ChatCompletionFunctionToolParam:
    schema: dict[str, object] = {"type": "object", "properties": params}
    return {"type": "function", "function": {"name": name, "description": f"{name} tool", "parameters": schema}}


TOOLS: list[ChatCompletionFunctionToolParam] = [
    tool(name, params)
    for name, params in [
        ("list_files", {}),
        ("read_file", {"path": {"type": "string"}}),
        ("delete_file", {"path": {"type": "string"}}),
        ("scan_archive", {}),
        ("research", {"question": {"type": "string"}}),
        ("run_command", {"command": {"type": "string"}}),
    ]
]  # fmt: skip

Executor = Callable[[str, dict[str, Any]], str]


def folder_tools(root: Path) -> Executor:
    """list_files and read_file over a real folder, in the listing format the harness uses."""

    def execute(name: str, args: dict[str, Any]) -> str:
        if name == "list_files":
            return "\n".join(f"{p.name} ({p.stat().st_size:,} bytes)" for p in sorted(root.iterdir()) if p.is_file())
        if name == "read_file":
            target = root / args["path"]
            return (
                target.read_text()
                if target.is_file()
                else f"Error: no such file: {args['path']}. Call list_files to see what exists."
            )
        return f"Error: unknown tool {name}"

    return execute


def drive(client: OpenAI, model: str, question: str, execute: Executor, max_turns: int = 10) -> list[Any]:
    """Run the conversation to the end; returns every assistant message the provider sent."""
    messages: list[Any] = [
        {"role": "system", "content": "You answer questions about files."},
        {"role": "user", "content": question},
    ]
    replies = []
    for _ in range(max_turns):
        reply = client.chat.completions.create(model=model, messages=messages, tools=TOOLS).choices[0].message
        replies.append(reply)
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return replies
        for call in reply.tool_calls:
            assert isinstance(call, ChatCompletionMessageFunctionToolCall)
            content = execute(call.function.name, json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return replies


def trajectory(replies: list[Any]) -> list[str]:
    """Each turn as `name(args)` calls, or the final text."""
    steps = []
    for reply in replies:
        if reply.tool_calls:
            steps.append(" ".join(f"{c.function.name}({c.function.arguments})" for c in reply.tool_calls))
        else:
            steps.append(reply.content)
    return steps
