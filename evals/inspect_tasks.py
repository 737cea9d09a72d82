"""The eval's suites as Inspect AI tasks: `inspect eval evals/inspect_tasks.py --model openai-api/<name>/<model>`.

`-T suite=NAME` picks a suite (default: the six file tasks); each task is a sample over a fresh copy of the
suite's folder, scored by the eval's own ground truth (`evals.truth`, `evals.scoring`), so the verdicts and
failure classes are those of `python -m evals`. `-T agent=harness` (the default) solves with this project's
harness, its model requests going through Inspect's model (every request and reply is in Inspect's
transcript and `inspect view`); `-T controls=small|none` picks its controls (default `none`: Inspect's
model reports no size). `-T agent=react` runs Inspect's own `react()` agent over the same file tools on the
same model: two harnesses, one model, one set of tasks. Needs the extra: `pip install -e '.[inspect]'`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import as_solver, react
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    get_model,
    messages_from_openai,
    messages_to_openai,
)
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolChoice, ToolDef, ToolFunction, ToolInfo, ToolParams

from evals.runner import run_to_end
from evals.scoring import classify, judge, read_paths, trajectory
from evals.suite import SUITES, Check, Suite, load_suite
from evals.suite import Task as SuiteTask
from evals.truth import files_of, truth_for
from harness.app.runtime import start, tools_for
from harness.app.trace import MemoryTrace
from harness.controls import named
from harness.core.config import NO_CONTROLS, RunConfig
from harness.core.limits import Limits
from harness.core.protocols import ModelReply, ModelRequest, ToolContext
from harness.core.registry import Registry
from harness.core.results import as_result
from harness.core.state import RunState
from harness.core.stop import StopSignal
from harness.errors import ToolError
from wire.types import AssistantMessage, Usage, choice_mode, choice_names

MAX_TURNS = 12


class InspectModel:
    """The harness's `Model` over Inspect's model: requests and replies in the OpenAI shapes both speak."""

    async def complete(self, request: ModelRequest) -> ModelReply:
        messages: list[ChatMessage] = await messages_from_openai(list(request.messages))  # type: ignore[arg-type]
        # Inspect has no allowed_tools: the tools a reply may not call are not offered
        choice = request.tool_choice
        kept = set(choice_names(choice)) if isinstance(choice, dict) and choice["type"] == "allowed_tools" else None
        tools = [
            ToolInfo.model_validate(t["function"])
            for t in request.tools
            if kept is None or t["function"]["name"] in kept
        ]
        config = GenerateConfig(
            max_tokens=request.max_tokens,
            parallel_tool_calls=request.parallel_tool_calls,
            extra_body=dict(request.extra) or None,
        )
        output = await get_model().generate(messages, tools, choice_of(request), config)
        return await reply_of(output)


def choice_of(request: ModelRequest) -> ToolChoice | None:
    choice = request.tool_choice
    if choice is None or not request.tools:
        return None
    if isinstance(choice, dict) and choice["type"] == "function":
        return ToolFunction(choice["function"]["name"])
    mode = choice_mode(choice)
    return "any" if mode == "required" else mode


async def reply_of(output: ModelOutput) -> ModelReply:
    message: dict[str, Any] = dict((await messages_to_openai([output.message]))[0])
    assistant: AssistantMessage = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        assistant["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]},
            }
            for c in message["tool_calls"]
        ]
    usage = output.usage
    counted = Usage(prompt_tokens=usage.input_tokens, completion_tokens=usage.output_tokens,
                    total_tokens=usage.total_tokens) if usage else None  # fmt: skip
    finish = "tool_calls" if assistant.get("tool_calls") else output.stop_reason
    return ModelReply(assistant, counted, "stop" if finish == "stop" else finish)


def workspace_for(suite: Suite) -> Path:
    return suite.build(Path(tempfile.mkdtemp(prefix=f"inspect-{suite.name}-")) / "ws")


@solver
def harness_agent(suite_name: str, controls: str) -> Solver:
    suite = load_suite(SUITES / f"{suite_name}.json")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        workspace = workspace_for(suite)
        state.store.set("workspace", str(workspace))
        profile = named(controls)
        config = RunConfig(base_url="inspect", model=str(state.model), workspace=str(workspace),
                           tools=tuple(suite.tools), controls=profile)  # fmt: skip
        run = start(state.input_text, config, limits=Limits(max_turns=MAX_TURNS))
        run = await run_to_end(run, MemoryTrace(), model=InspectModel())
        state.output.completion = run.answer or ""
        state.store.set("read", sorted(read_paths(run.tool_runs)))
        verdict = judge(check_of(suite, state), truth_for(check_of(suite, state), workspace), run.answer,
                        set(files_of(workspace)), read_paths(run.tool_runs))  # fmt: skip
        path = trajectory(run, tools_for(config), list(task_of(suite, state).needs))
        state.store.set("failure", classify(run, verdict, path))
        return state

    return solve


class NoChildren:
    def load(self) -> RunState | None:
        return None

    def save(self, state: RunState) -> None:
        pass


def inspect_tools(registry: Registry, names: Sequence[str]) -> list[ToolDef]:
    """The harness's read-only file tools as Inspect tools: the same code, the same words back."""
    made = []
    for tool in registry:
        if tool.name not in names or not tool.read_only:
            continue

        def bind(tool: Any = tool) -> ToolDef:
            async def execute(**arguments: Any) -> str:
                context = ToolContext("inspect", "call", StopSignal(), lambda _: None, NoChildren())
                try:
                    return as_result(await tool.run(arguments, context)).text
                except ToolError as exc:
                    return f"Error: {exc}"

            parameters = ToolParams.model_validate(dict(tool.parameters))
            return ToolDef(execute, name=tool.name, description=tool.description, parameters=parameters)

        made.append(bind())
    return made


@solver
def react_agent(suite_name: str) -> Solver:
    suite = load_suite(SUITES / f"{suite_name}.json")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        workspace = workspace_for(suite)
        state.store.set("workspace", str(workspace))
        config = RunConfig(base_url="inspect", model=str(state.model), workspace=str(workspace),
                           tools=tuple(suite.tools), controls=NO_CONTROLS)  # fmt: skip
        agent = react(tools=inspect_tools(tools_for(config), suite.tools), submit=False)
        state = await as_solver(agent)(state, generate)
        read = {str(c.arguments.get("path")) for m in state.messages if m.role == "assistant"
                for c in m.tool_calls or [] if c.function == "read_file"}  # fmt: skip
        state.store.set("read", sorted(read))
        return state

    return solve


def task_of(suite: Suite, state: TaskState) -> SuiteTask:
    return next(t for t in suite.tasks if t.id == state.sample_id)


def check_of(suite: Suite, state: TaskState) -> Check:
    return task_of(suite, state).check


@scorer(metrics=[accuracy()])
def ground_truth(suite_name: str) -> Scorer:
    """The eval's own verdict: the answer against the truth computed from the sample's folder."""
    suite = load_suite(SUITES / f"{suite_name}.json")

    async def score(state: TaskState, target: Target) -> Score:
        workspace = Path(state.store.get("workspace"))
        check = check_of(suite, state)
        answer = state.output.completion or None
        verdict = judge(check, truth_for(check, workspace), answer, set(files_of(workspace)),
                        set(state.store.get("read", [])))  # fmt: skip
        failure = state.store.get("failure") or (
            None if verdict.correct else "no_answer" if not answer else "wrong_answer"
        )
        return Score(value=CORRECT if verdict.correct else INCORRECT, answer=answer or "", explanation=verdict.why,
                     metadata={"failure": failure})  # fmt: skip

    return score


@task
def file_tasks(suite: str = "default", agent: str = "harness", controls: str = "none") -> Task:
    if agent not in ("harness", "react"):
        raise ValueError(f"agent must be harness or react, not {agent!r}")
    loaded = load_suite(SUITES / f"{suite}.json")
    samples = [Sample(input=t.prompt, id=t.id, target=t.id) for t in loaded.tasks]
    chosen = harness_agent(suite, controls) if agent == "harness" else react_agent(suite)
    return Task(dataset=samples, solver=chosen, scorer=ground_truth(suite), name=f"{suite}-{agent}", cleanup=removed)


async def removed(state: TaskState) -> None:
    """A sample's folder, once it has been scored (Inspect calls this after the scorer, and after a failure)."""
    workspace = state.store.get("workspace")
    if workspace:
        shutil.rmtree(Path(workspace).parent, ignore_errors=True)
