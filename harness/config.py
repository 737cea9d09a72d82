"""One typed run configuration, stored in the run state: everything needed to rebuild a run after a restart.

Limits and prices live beside it in the state. The API key never does: only the name of the variable
that holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from harness.errors import ConfigError
from harness.limits import Limits
from harness.policy import Dedupe, ErrorMode
from harness.presets import CommandPreset

AnswerMode: TypeAlias = Literal["offered", "restated", "prose", "digest"]
Rendering: TypeAlias = Literal["native", "hermes", "words"]
EmptyMode: TypeAlias = Literal["ask", "call"]
ALL_TOOLS = ("list_files", "read_file", "delete_file", "write_file", "scan_archive", "research", "run_command")
READING_TOOLS = ("list_files", "read_file")


@dataclass(frozen=True)
class Controls:
    """What the harness does for a small model. Each is measured on and off in the README's controls table.

    look_turns: the first turns that must call a tool (tool_choice required), so the model looks before it
      answers (small models otherwise announce a call in words, or guess, and stop). The first such call goes
      to the one tool that needs no arguments, if there is exactly one: a look around needs no guess.
    act_on_intent: a reply that names an offered tool instead of calling it ("I will call list_files") is not
      an answer: the next turn is asked with tool_choice naming that tool (at most `nudges` times a run).
    call_after_error: when every result of the last batch was an error, the next turn must call a tool.
    repeat_guard: an identical read-only call that already has a result is not run again; its slot says so
      and points at the earlier result. After `repeats_before_answer` such repeats the next turn is an
      answer turn.
    answer_at_cap: the last turn `max_turns` allows is an answer turn (the status still says the cap was
      reached; the answer is kept).
    answer_mode: how an answer turn is asked: `offered` (tools still offered, tool_choice none), `restated`
      (no tools, the question asked again in words), `prose` (tools offered, tool_choice none, and a
      grammar that makes the reply prose: it cannot open with {, <, [ or a fence), `digest` (a fresh
      conversation: the run's system prompt and one message holding the question and every distinct call's
      result, no tools, the prose grammar; nothing of the transcript's call syntax or the model's own replies
      to copy).
    parallel_calls: ask for parallel_tool_calls, so one reply may hold several calls.
    empty_retries: a reply with neither text nor a call is not an answer; it is asked again this many times
      (each a turn), in words (empty_mode `ask`) or by requiring a tool call (`call`: it has not found it yet).
    remind_question: after tool results, the request ends with the question again (not saved in the transcript),
      so a small model answers the question rather than echoing the last result.
    tool_talk: an answer turn's reply that names an offered tool (it explains how to call one, or what each
      does, instead of answering) is not the answer: the question is asked again in words (at most `nudges`
      times a run, shared with act_on_intent).
    verify_answer: the first answer the model gives on its own is not taken yet: it is asked once to check it
      against the tool results and to look further if they do not yet show it (a turn), then answer again.
    answer_from_results: the first answer the model gives that was not asked as a digest (on its own, or on an
      answer turn asked another way) is asked once more as a digest (see answer_mode) when the run has tool
      results; the digest's reply is the answer. A small model that has looked in the right place often
      answers by echoing the last result or by describing its tools; beside the results alone, it states them.
    rendering: how past calls and results reach the model: `native` (the server's template), `hermes`
      (asks a server that supports it for the Hermes text), `words` (the harness writes them as plain sentences).
    """

    look_turns: int = 3
    # Off by default: measured on and off on both suites and both Qwen coders, they never changed an
    # answer, a turn or a tool run (the README's controls table); a control must help to be on.
    act_on_intent: bool = False
    call_after_error: bool = False
    repeat_guard: bool = True
    repeats_before_answer: int = 1
    answer_at_cap: bool = False
    answer_mode: AnswerMode = "digest"
    parallel_calls: bool = True
    empty_retries: int = 2
    empty_mode: EmptyMode = "call"
    nudges: int = 2
    remind_question: bool = False
    tool_talk: bool = False
    verify_answer: bool = False
    # Off: with answer turns asked as a digest it changed no answer on either coder, and costs a turn
    answer_from_results: bool = False
    rendering: Rendering = "native"

    @classmethod
    def off(cls) -> Controls:
        """The loop as the seed chapter wrote it: no guard, no answer turn, one call per reply, no re-ask."""
        return cls(
            look_turns=0,
            act_on_intent=False,
            call_after_error=False,
            repeat_guard=False,
            answer_at_cap=False,
            parallel_calls=False,
            empty_retries=0,
            answer_from_results=False,
        )

    def __post_init__(self) -> None:
        if self.repeats_before_answer < 1 or min(self.empty_retries, self.look_turns, self.nudges) < 0:
            raise ConfigError("repeats_before_answer must be at least 1 and empty_retries at least 0")


@dataclass(frozen=True)
class RunConfig:
    base_url: str
    model: str
    workspace: str
    api_key_env: str = "LLM_API_KEY"
    tools: tuple[str, ...] = ALL_TOOLS
    presets: tuple[CommandPreset, ...] = ()
    allow_writes: bool = False
    approve_deletes: bool = True
    dedupe: Dedupe = "off"
    tool_errors: ErrorMode = "text"
    max_tokens: int | None = None
    research_model: str | None = None
    research_limits: Limits = field(default_factory=lambda: Limits(max_turns=6, max_budget_usd=0.05))
    request_timeout_s: float = 120.0
    headers: dict[str, str] = field(default_factory=dict)  # extra request headers (never a secret)
    controls: Controls = field(default_factory=Controls)

    def __post_init__(self) -> None:
        unknown = set(self.tools) - set(ALL_TOOLS)
        if unknown:
            raise ConfigError(f"unknown tools {sorted(unknown)}; the tools are {', '.join(ALL_TOOLS)}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, not {self.max_tokens}")
        if not self.request_timeout_s > 0:
            raise ConfigError(f"the request timeout must be above 0 seconds, not {self.request_timeout_s}")
