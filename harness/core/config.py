"""One typed run configuration, stored in the run state: everything needed to rebuild a run after a restart.

Limits and prices live beside it in the state. The API key never does: only the name of the variable
that holds it.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TypeAlias

from harness.core.limits import Limits
from harness.core.policy import Dedupe, ErrorMode
from harness.errors import ConfigError
from wire.types import TOOL_NAME


@dataclass(frozen=True)
class CommandPreset:
    """A command `run_command` may run, named by the operator (never by the model), run without a shell."""

    name: str
    argv: tuple[str, ...]
    cwd: str = "."
    timeout_s: float = 60.0
    max_output_bytes: int = 32_000
    needs_approval: bool = True
    description: str = ""

    def __post_init__(self) -> None:
        if not TOOL_NAME.match(self.name):
            raise ConfigError(f"invalid command name {self.name!r}: use letters, digits, '_' or '-'")
        if not self.argv or not all(isinstance(a, str) and a and "\x00" not in a for a in self.argv):
            raise ConfigError(f"command {self.name!r} needs an executable and no empty or NUL-bearing argument")
        if not (math.isfinite(self.timeout_s) and self.timeout_s > 0) or self.max_output_bytes <= 0:
            raise ConfigError(f"command {self.name!r}: timeout and output cap must be positive")


# every tool a run can have, in the order they are offered; the looking tools are what a run gets unless it
# names others (writing, deleting, commands and the research sub-agent are asked for; scan_archive is the
# scripted scenarios' and the chapter's demonstration tool, offered only when named)
ALL_TOOLS = (
    "list_files", "read_file", "search", "find_symbol", "project_info", "count_lines", "repo_map", "delete_file",
    "write_file", "edit_file", "append_file", "scan_archive", "research", "run_command",
)  # fmt: skip
LOOKING_TOOLS = ("list_files", "read_file", "search", "find_symbol", "project_info", "count_lines", "repo_map")
RESEARCH_TURNS, RESEARCH_BUDGET_USD = 6, 0.05  # what one research call's sub-agent may spend, unless configured


def research_limits() -> Limits:
    return Limits(max_turns=RESEARCH_TURNS, max_budget_usd=RESEARCH_BUDGET_USD)


def known_tools(names: Collection[str]) -> None:
    """Refuses a tool name the harness does not have, naming the ones it has."""
    unknown = set(names) - set(ALL_TOOLS)
    if unknown:
        raise ConfigError(f"unknown tools {sorted(unknown)}; the tools are {', '.join(ALL_TOOLS)}")


ControlParameter: TypeAlias = int | bool | str


@dataclass(frozen=True)
class ControlSpec:
    """One control of a profile, by its registered name, with the parameters it is built with."""

    name: str
    params: dict[str, ControlParameter] = field(default_factory=dict)


@dataclass(frozen=True)
class Profile:
    """The controls a run uses, in the order they act, and how they were chosen.

    `auto` is a choice not yet made: the run asks the server about the model when it starts, and records
    the profile it chose (its name, its controls and why) in the run's config.
    """

    name: str
    controls: tuple[ControlSpec, ...] = ()
    why: str = ""


AUTO = Profile("auto")
NO_CONTROLS = Profile("none", why="asked for")


@dataclass(frozen=True)
class RunConfig:
    base_url: str
    model: str
    workspace: str
    api_key_env: str = "LLM_API_KEY"
    tools: tuple[str, ...] = LOOKING_TOOLS
    presets: tuple[CommandPreset, ...] = ()
    allow_writes: bool = False
    approve_deletes: bool = True
    dedupe: Dedupe = "off"
    tool_errors: ErrorMode = "text"
    max_tokens: int | None = None
    research_model: str | None = None
    research_limits: Limits = field(default_factory=research_limits)
    request_timeout_s: float = 120.0
    headers: dict[str, str] = field(default_factory=dict)  # extra request headers (never a secret)
    controls: Profile = AUTO
    window: int | None = None  # the model's context window in tokens, as its server said at the run's start
    private: tuple[str, ...] = ()  # folders no tool may reach (where the run's own records are kept)

    def __post_init__(self) -> None:
        known_tools(self.tools)
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, not {self.max_tokens}")
        if not self.request_timeout_s > 0:
            raise ConfigError(f"the request timeout must be above 0 seconds, not {self.request_timeout_s}")
