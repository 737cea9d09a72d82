"""Generated attacks (hypothesis), as the seed tutorial's seeded batch and exception runs intended.

1. Random model behaviour through the loop: batches of valid, invalid and unknown calls, failing tools,
   writes that need approval, caps, budgets, stop conditions, empty replies, and kills at random points
   followed by resume from the last saved state. Invariants: every run ends in one of the five ways with a
   reason; every call gets exactly one result; cost is the sum of the turns' costs; no completed tool runs
   twice and no write takes effect twice; the transcript is valid to send; nothing but the kill escapes.
2. Random paths (links, FIFOs, sockets, devices, hard links to outside, long names, odd bytes) against the
   file tools: nothing outside the workspace is read or written and every call returns within a bound.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from harness.app.client import FunctionModel
from harness.app.trace import MemoryTrace
from harness.controls import build
from harness.core.approvals import approve, reject
from harness.core.config import ControlSpec, Profile
from harness.core.limits import Limits
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.policy import ToolErrorPolicy
from harness.core.protocols import ModelReply, ModelRequest, ToolContext
from harness.core.registry import Registry
from harness.core.results import as_result
from harness.core.state import RunState, new_run, state_from
from harness.core.turn import Control
from harness.errors import PermanentToolError, ToolError
from harness.fs.workspace import Workspace
from harness.tools.files import DeleteFile, ListFiles, ReadFile
from harness.tools.search import Search
from harness.tools.writes import EditFile, WriteFile
from tests.harness.helpers import X_PARAMETERS, tool_context
from wire.types import ChatCompletionRequest, usage_of

ENDINGS = {"completed", "failed", "max_turns_exceeded", "budget_exceeded", "interrupted"}


class Kill(BaseException):
    """The process dies here: nothing after this point happens, only what was saved survives."""


@dataclass
class World:
    """The model's plan, the tools' effects, and where the process will die."""

    plan: list[Any]
    kill_at: set[int]
    steps: int = 0
    effects: Counter[str] = field(default_factory=Counter)
    completed: Counter[str] = field(default_factory=Counter)

    def step(self) -> None:
        self.steps += 1
        if self.steps in self.kill_at:
            raise Kill


@dataclass
class Probe:
    world: World
    name: str
    read_only: bool = True
    fails: str | None = None  # "tool" or "permanent"
    needs_approval: bool = False
    honours_idempotency_key: bool = False
    description: str = "a probe"
    parameters: dict[str, Any] = field(default_factory=lambda: dict(X_PARAMETERS))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.world.step()
        if not self.read_only:
            self.world.effects[ctx.call_id] += 1
        self.world.step()
        if self.fails:
            raise (PermanentToolError if self.fails == "permanent" else ToolError)(f"{self.name} failed")
        self.world.completed[ctx.call_id] += 1
        return f"{self.name} ok {args.get('x')}"


CALL = st.one_of(
    st.tuples(st.sampled_from(["reader", "writer", "gate", "broken", "denied"]), st.integers(0, 3)),
    st.tuples(st.just("nope"), st.just(0)),  # an unknown tool
    st.tuples(st.just("reader"), st.just("x")),  # invalid arguments
)
REPLY = st.one_of(st.just("answer"), st.just("empty"), st.lists(CALL, min_size=1, max_size=3))


def model_for(world: World) -> FunctionModel:
    """The reply for a turn is fixed by the plan, so a resumed run gets the same reply a greedy model gives."""

    def reply(request: ModelRequest) -> ModelReply:
        world.step()
        turn = sum(m["role"] == "assistant" for m in request.messages)
        planned = world.plan[turn % len(world.plan)]
        if planned in ("answer", "empty"):
            message: Any = {"role": "assistant", "content": "the answer" if planned == "answer" else ""}
        else:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"t{turn}c{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps({"x": x})}}
                for i, (name, x) in enumerate(planned)
            ]}  # fmt: skip
        world.step()
        return ModelReply(message, usage_of(100 + turn, 10), "tool_calls" if "tool_calls" in message else "stop")

    return FunctionModel(reply)


class Snapshots:
    def __init__(self) -> None:
        self.saved: str | None = None

    def save(self, state: RunState) -> None:
        self.saved = state.to_json()


def tools_for(world: World) -> Registry:
    return Registry(
        [
            Probe(world, "reader"),
            Probe(world, "writer", read_only=False),
            Probe(world, "gate", read_only=False, needs_approval=True),
            Probe(world, "broken", fails="tool"),
            Probe(world, "denied", fails="permanent"),
        ]
    )


async def drive(
    world: World, limits: Limits, controls: list[Control], stop_at: int | None
) -> tuple[RunState, MemoryTrace]:
    """Run, die where the world says, resume from the last save, answer approvals; until the run ends."""
    store, trace, tools = Snapshots(), MemoryTrace(), tools_for(world)
    state = new_run("q", limits=limits)
    stop_when = [lambda s: s.turns >= stop_at] if stop_at is not None else []
    for _ in range(40):
        options = RunOptions(
            model=model_for(world), store=store, trace=trace, controls=controls, stop_when=stop_when,
            errors=ToolErrorPolicy(),
        )  # fmt: skip
        try:
            state = await run(state, tools, options)
        except Kill:
            event("killed and resumed")
            assert store.saved is not None or state.turns == 0
            state = state_from(json.loads(store.saved)) if store.saved else new_run("q", limits=limits)
            continue
        if not (state.interruption and state.interruption.type == "approval"):
            return state, trace
        event("stopped for approval")
        call = state.interruption.call_id or ""
        (reject if "may have taken effect" in state.reason or "" else approve)(state, call)  # type: ignore[operator]
    raise AssertionError("the run never ended")


def check_invariants(state: RunState, trace: MemoryTrace, world: World) -> None:
    assert state.status in ENDINGS and state.reason
    ChatCompletionRequest.model_validate({"model": "m", "messages": state.messages})  # valid to send
    asked = [c["id"] for m in state.messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    answered = Counter(m["tool_call_id"] for m in state.messages if m["role"] == "tool")
    assert all(count == 1 for count in answered.values()) and set(answered) <= set(asked)
    unanswered = set(asked) - set(answered)
    if unanswered:  # only the last batch may be left unanswered, and only when the run stopped before it
        last = (
            [c["id"] for c in state.messages[-1].get("tool_calls", [])]
            if state.messages[-1]["role"] == "assistant"
            else []
        )
        assert unanswered <= set(last) and state.status in (
            "interrupted",
            "budget_exceeded",
            "max_turns_exceeded",
            "failed",
        )
    turns = trace.of("turn")
    assert abs(sum(e["cost_usd"] for e in turns) - state.usage.cost_usd) < 1e-12
    assert state.usage.requests == len(turns) == state.turns
    assert all(count <= 1 for count in world.effects.values())  # no write took effect twice
    assert all(count <= 1 for count in world.completed.values())  # no completed tool ran again


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    plan=st.lists(REPLY, min_size=1, max_size=6),
    kill_at=st.sets(st.integers(1, 40), max_size=3),
    max_turns=st.integers(1, 8),
    tool_cap=st.one_of(st.none(), st.integers(0, 6)),
    budget=st.one_of(st.none(), st.floats(0.0, 0.01)),
    stop_at=st.one_of(st.none(), st.integers(1, 6)),
    controls=st.lists(  # any controls, in any order, with their settings at small values
        st.one_of(
            st.builds(
                ControlSpec, st.just("repeat_guard"), st.fixed_dictionaries({"before_answer": st.integers(1, 3)})
            ),
            st.builds(ControlSpec, st.just("empty_reply"), st.fixed_dictionaries({"retries": st.integers(0, 2)})),
            st.builds(ControlSpec, st.just("look_first"), st.fixed_dictionaries({"turns": st.integers(0, 3)})),
            st.just(ControlSpec("parallel_calls")),
            st.just(ControlSpec("digest_answers")),
        ),
        max_size=5,
        unique_by=lambda spec: spec.name,
    ).map(lambda specs: build(Profile("generated", tuple(specs)))),
)
@example(  # a digest offers the unused write again; the model, shown no ids, repeats the killed call's id
    plan=[[("writer", 0)], "empty"],
    kill_at={3},
    max_turns=3,
    tool_cap=None,
    budget=None,
    stop_at=None,
    controls=build(Profile("found", (ControlSpec("digest_answers"), ControlSpec("empty_reply", {"retries": 1})))),
)
def test_random_runs_with_kills_keep_every_invariant(
    plan: list[Any], kill_at: set[int], max_turns: int, tool_cap: int | None, budget: float | None,
    stop_at: int | None, controls: list[Control],
) -> None:  # fmt: skip
    world = World(plan, kill_at)
    limits = Limits(max_turns=max_turns, max_tool_calls=tool_cap, max_budget_usd=budget)
    state, trace = asyncio.run(drive(world, limits, controls, stop_at))
    event(f"ended {state.status}")
    check_invariants(state, trace, world)


# --- random paths against the file tools -------------------------------------------------------------------------
MARKER = "OUTSIDE-SECRET-7f3a"
SEGMENTS = st.sampled_from(
    ["..", ".", "", "ok.txt", "sub", "link", "dirlink", "fifo", "sock", "dev", "hard.txt", "nope", "a" * 300,
     "\\..", "~", "é.txt", "\x00", "\ud800", "%2e%2e", "ok.txt/..", " "]
)  # fmt: skip
PATHS = st.one_of(
    st.lists(SEGMENTS, min_size=1, max_size=5).map("/".join),
    st.lists(SEGMENTS, max_size=3).map(lambda parts: "/" + "/".join(parts)),
    st.text(max_size=30),
)


def hostile_workspace(root: Path) -> tuple[Path, Path]:
    """A workspace full of traps around an outside folder whose content must never come back."""
    outside = root / "outside"
    outside.mkdir(parents=True)
    (outside / "secret.txt").write_text(MARKER)
    ws = root / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "ok.txt").write_text("fine")
    (ws / "sub" / "ok.txt").write_text("fine too")
    (ws / "link").symlink_to(outside / "secret.txt")
    (ws / "dirlink").symlink_to(outside)
    (ws / "sub" / "up").symlink_to("../../outside")
    os.link(outside / "secret.txt", ws / "hard.txt")
    os.mkfifo(ws / "fifo")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(ws / "sock"))
    try:
        os.mknod(ws / "dev", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, OSError):
        (ws / "dev").write_text("not a device here")
    return ws, outside


async def attack(ws: Path, path: str) -> list[str]:
    jail = Workspace(ws)
    ctx = tool_context()
    outputs = []
    for tool, args in (
        (ReadFile(jail), {"path": path}),
        (ReadFile(jail), {"path": path, "offset": 1, "limit": 3}),
        (ListFiles(jail), {}),
        (ListFiles(jail), {"path": path}),
        (ListFiles(jail), {"glob": path}),
        (Search(jail), {"pattern": MARKER[:8]}),
        (Search(jail), {"pattern": "OUTSIDE", "path": path}),
        (Search(jail), {"pattern": "O.TSIDE", "regex": True, "glob": path}),
        (WriteFile(jail, needs_approval=False), {"path": path, "content": "written"}),
        (EditFile(jail, needs_approval=False), {"path": path, "old_text": "OUTSIDE", "new_text": "edited"}),
        (EditFile(jail, needs_approval=False), {"path": path, "old_text": "fine", "new_text": "edited"}),
        (DeleteFile(jail, needs_approval=False), {"path": path}),
    ):
        try:
            outputs.append(as_result(await asyncio.wait_for(tool.run(args, ctx), 2)).text)
        except ToolError as exc:
            outputs.append(str(exc))
    return outputs


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(path=PATHS)
def test_random_paths_never_leave_the_workspace(tmp_path_factory: Any, path: str) -> None:
    root = tmp_path_factory.mktemp("paths")
    ws, outside = hostile_workspace(root)
    outputs = asyncio.run(attack(ws, path))
    event("read something" if outputs[0] in ("fine", "fine too") else "read refused")
    assert not any(MARKER in out for out in outputs)
    assert (outside / "secret.txt").read_text() == MARKER and sorted(p.name for p in outside.iterdir()) == [
        "secret.txt"
    ]
    assert sorted(p.name for p in root.iterdir()) == ["outside", "ws"]  # nothing written beside the workspace
    shutil.rmtree(root)
