"""The clients people already use, against both servers: openai (plain, stream, tools, parse), the OpenAI
Agents SDK (Runner.run with function tools) and pydantic-ai (an agent with tools)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI, OpenAI
from pydantic import BaseModel, SecretStr

from tests.conftest import AppServer, Server, default_files
from tests.serve.scripted.driver import TOOLS

LLAMA_MODEL = "smollm2-135m-instruct"


class Folder:
    """list_files and read_file over a real folder, as plain functions both agent SDKs can wrap; it counts calls."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls: list[tuple[str, dict[str, str]]] = []

    def list_files(self) -> str:
        """List the files in the workspace with their sizes in bytes."""
        self.calls.append(("list_files", {}))
        return "\n".join(f"{p.name} ({p.stat().st_size} bytes)" for p in sorted(self.root.iterdir()))

    def read_file(self, path: str) -> str:
        """Read a text file from the workspace."""
        self.calls.append(("read_file", {"path": path}))
        target = self.root / Path(path).name
        return target.read_text() if target.is_file() else f"Error: no such file: {path}"


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    return Folder(default_files(tmp_path / "ws"))


class Place(BaseModel):
    city: str
    visitors: int


def test_openai_plain_stream_tools_and_parse_on_the_scripted_server(scripted: AppServer) -> None:
    with OpenAI(base_url=scripted.base_url, api_key="unused", max_retries=0) as client:
        question: Any = [{"role": "user", "content": "q"}]
        plain = client.chat.completions.create(model="plan", messages=question, tools=TOOLS)
        assert plain.choices[0].message.tool_calls
        streamed = list(client.chat.completions.create(model="plan", messages=question, tools=TOOLS, stream=True))
        assert streamed[-1].choices[0].finish_reason == "tool_calls"
        parsed = client.chat.completions.parse(
            model="structured", messages=[{"role": "user", "content": "Paris"}], response_format=Place
        )
        assert parsed.choices[0].message.parsed == Place(city="Paris", visitors=0)


def test_openai_parse_on_the_llama_server(llama: Server) -> None:
    with OpenAI(base_url=llama.base_url, api_key="unused", max_retries=0, timeout=300) as client:
        parsed = client.chat.completions.parse(
            model=LLAMA_MODEL,
            messages=[{"role": "user", "content": "Name a city and how many visitors it gets."}],
            response_format=Place,
            max_tokens=80,
        )
    place = parsed.choices[0].message.parsed
    assert isinstance(place, Place)


async def agents_run(base_url: str, model: str, folder: Folder, question: str, forced: bool, turns: int = 4) -> Any:
    from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from agents.exceptions import MaxTurnsExceeded

    set_tracing_disabled(True)
    async with AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=300) as client:
        agent = Agent(
            name="files",
            instructions="Answer questions about the files. Use the tools.",
            tools=[function_tool(folder.list_files), function_tool(folder.read_file)],
            model=OpenAIChatCompletionsModel(model=model, openai_client=client),
            model_settings=ModelSettings(tool_choice="required" if forced else None, max_tokens=96),
        )
        try:
            return (await Runner.run(agent, question, max_turns=turns)).final_output
        except MaxTurnsExceeded:
            return None


@pytest.mark.slow
async def test_the_agents_sdk_runs_its_loop_on_both_servers(scripted: AppServer, llama: Server, folder: Folder) -> None:
    answer = await agents_run(scripted.base_url, "solve", folder, "How many files are in the directory?", False)
    assert folder.calls == [("list_files", {})] and "3 files" in answer
    folder.calls.clear()
    # forced calls never end the loop: two turns are a call, run, and its result read back by the model
    await agents_run(llama.base_url, LLAMA_MODEL, folder, "What does notes.txt say?", True, turns=2)
    assert folder.calls and folder.calls[0][0] in ("list_files", "read_file")  # a real call went round the loop


async def pydantic_run(
    base_url: str, model: str, folder: Folder, question: str, forced: bool, requests: int = 3
) -> Any:
    from pydantic_ai import Agent, UsageLimits
    from pydantic_ai.exceptions import UsageLimitExceeded
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=base_url, api_key="unused")
    settings: Any = {"max_tokens": 96} | ({"extra_body": {"tool_choice": "required"}} if forced else {})
    agent = Agent(
        OpenAIChatModel(model, provider=provider), instructions="Use the tools to answer.", model_settings=settings
    )
    agent.tool_plain(folder.list_files)
    agent.tool_plain(folder.read_file)
    try:
        return (await agent.run(question, usage_limits=UsageLimits(request_limit=requests))).output
    except UsageLimitExceeded:
        return None


@pytest.mark.slow
async def test_pydantic_ai_runs_its_agent_on_both_servers(scripted: AppServer, llama: Server, folder: Folder) -> None:
    answer = await pydantic_run(scripted.base_url, "solve", folder, "Which file is the largest?", False)
    assert folder.calls == [("list_files", {})] and "errors.log" in answer
    folder.calls.clear()
    await pydantic_run(llama.base_url, LLAMA_MODEL, folder, "What does notes.txt say?", True, requests=2)
    assert folder.calls and folder.calls[0][0] in ("list_files", "read_file")  # a real call went round the loop


@pytest.fixture
async def aclient(scripted: AppServer) -> AsyncIterator[AsyncOpenAI]:
    async with AsyncOpenAI(base_url=scripted.base_url, api_key="unused", max_retries=0) as client:
        yield client


async def test_list_content_and_developer_messages_from_sdks_are_read(aclient: AsyncOpenAI) -> None:
    reply = await aclient.chat.completions.create(
        model="solve",
        messages=[
            {"role": "developer", "content": "Be exact."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "How many files are"}, {"type": "text", "text": "there?"}],
            },
        ],
        tools=TOOLS,
    )
    assert reply.choices[0].message.tool_calls  # solve read the joined question and asks for the listing


@pytest.mark.slow
def test_langchain_and_litellm_recognise_a_context_overflow(llama: Server) -> None:
    """Both read the error's words (openai 3.x keeps only the message in str(error)), not its code."""
    import litellm
    from langchain_core.exceptions import ContextOverflowError
    from langchain_openai import ChatOpenAI
    from litellm.exceptions import ContextWindowExceededError

    too_long = [{"role": "user", "content": "log line " * 3000}]
    chat = ChatOpenAI(base_url=llama.base_url, api_key=SecretStr("unused"), model=LLAMA_MODEL, max_retries=0)
    with pytest.raises(ContextOverflowError):
        chat.invoke(too_long)
    with pytest.raises(ContextWindowExceededError):
        litellm.completion(
            model=f"openai/{LLAMA_MODEL}", api_base=llama.base_url, api_key="unused", messages=too_long, num_retries=0
        )
