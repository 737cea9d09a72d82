"""A profile's controls do the same whatever order they are listed in: each phase asks every control, and
what two controls do to one request (narrowing the same tool's arguments, making the answer turn) combines
the same way either way round."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from harness.app.client import FunctionModel
from harness.controls import build
from harness.controls.profiles import PROFILES, fitted_profile
from harness.core.config import LOOKING_TOOLS, Profile
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply, ModelRequest
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex
from harness.tools.catalogue import catalogue
from tests.harness.controls.support import qwen
from tests.harness.helpers import calls
from wire.types import AssistantMessage, usage_of

SCRIPTS: dict[str, tuple[str, list[AssistantMessage | str]]] = {
    "looks, then answers": (
        "Which log holds the timeout?",
        [calls(("a", "list_files", {})), calls(("b", "read_file", {"path": "errors.log"})), "errors.log"],
    ),
    "answers at once": ("Which log holds the timeout?", ["errors.log", "errors.log", "errors.log"]),
    "reads, then changes": (
        "Add a line 'done' to notes.txt.",
        [
            calls(("a", "read_file", {"path": "notes.txt"})),
            calls(("b", "append_file", {"path": "notes.txt", "content": "done\n"})),
            "Added.",
        ],
    ),
    "loops on one call": (
        "Which log holds the timeout?",
        [calls((f"r{i}", "read_file", {"path": "access.log"})) for i in range(8)],
    ),
}


def scripted(replies: list[AssistantMessage | str]) -> tuple[FunctionModel, list[ModelRequest]]:
    seen: list[ModelRequest] = []

    def reply(request: ModelRequest) -> ModelReply:
        seen.append(request)
        out = replies[min(len(seen), len(replies)) - 1]
        message: AssistantMessage = {"role": "assistant", "content": out} if isinstance(out, str) else out
        return ModelReply(message, usage_of(100, 2), "tool_calls" if message.get("tool_calls") else "stop")

    return FunctionModel(reply), seen


async def requests_under(profile: Profile, script: str, root: Path) -> tuple[list[ModelRequest], str | None]:
    question, replies = SCRIPTS[script]
    space = Workspace(root)
    index = WorkspaceIndex(space)
    tools = catalogue(space, names=[*LOOKING_TOOLS, "append_file"], approve_writes=False, index=index)
    model, seen = scripted(replies)
    options = RunOptions(model, controls=build(profile), index=index)
    state = await run(new_run(question), tools, options)
    return seen, state.answer


@pytest.mark.parametrize("name", sorted(PROFILES))
@pytest.mark.parametrize("script", sorted(SCRIPTS))
async def test_every_order_of_a_profile_s_controls_sends_the_same_requests(
    name: str, script: str, tmp_path: Path, workspace: Path
) -> None:
    card = qwen(n_params=494_032_768, context=4096, extensions=["tool_parameters"])
    profile = fitted_profile(PROFILES[name], "qwen", [card])
    orders = [list(profile.controls)]
    for seed in range(3):
        shuffled = list(profile.controls)
        random.Random(seed).shuffle(shuffled)
        orders.append(shuffled)
    outcomes = []
    for i, order in enumerate(orders):
        root = tmp_path / f"run{i}"
        shutil.copytree(workspace, root)
        outcomes.append(await requests_under(Profile(profile.name, tuple(order)), script, root))
    first = outcomes[0]
    for other in outcomes[1:]:
        assert len(other[0]) == len(first[0]) and other[1] == first[1]
        for a, b in zip(first[0], other[0], strict=True):
            assert a == b
