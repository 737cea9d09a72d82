"""Profiles: built from their specs, and the one `auto` takes from the server's card."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.controls import SMALL, build, choose
from harness.controls.look_first import LookFirst
from harness.controls.profiles import fitted_profile, needs_card
from harness.core.config import ControlSpec, Profile
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.errors import ConfigError
from harness.fs.workspace import Workspace
from harness.tools.files import ListFiles, ReadFile
from tests.harness.controls.support import QUESTION, answering, qwen
from tests.harness.helpers import calls
from wire.types import ModelCard


def test_a_profile_builds_its_controls_and_refuses_unknown_ones() -> None:
    built = build(Profile("mine", (ControlSpec("look_first", {"turns": 1}), ControlSpec("digest_answers"))))
    assert [c.name for c in built] == ["look_first", "digest_answers"] and built[0] == LookFirst(turns=1)
    with pytest.raises(ConfigError, match="unknown control 'guess'"):
        build(Profile("mine", (ControlSpec("guess"),)))
    with pytest.raises(ConfigError, match="look_first"):
        build(Profile("mine", (ControlSpec("look_first", {"turn": 1}),)))


def test_auto_takes_tiny_or_small_for_a_model_the_server_says_is_small_and_none_otherwise() -> None:
    card = qwen(n_params=494_032_768)
    assert choose("qwen", [card]).name == "tiny" and "0.49B" in choose("qwen", [card]).why
    assert choose("other", [card]).name == "tiny"  # one card: a server of one model (llama-server's ids are paths)
    assert choose("qwen", [qwen(n_params=1_543_714_304)]).name == "small"
    assert choose("qwen", [qwen(n_params=70_000_000_000)]).name == "none"
    assert choose("solve", [ModelCard(id="solve"), ModelCard(id="plan")]).name == "none"
    assert choose("qwen", None).why == "auto: the server's model list could not be read"


def test_small_named_outright_is_told_the_window_as_auto_is() -> None:
    card = qwen(n_params=494_032_768, context=4096)
    told = fitted_profile(SMALL, "qwen", [card])
    windows = {s.name: s.params.get("context") for s in told.controls}
    assert windows["fit_context"] == windows["digest_answers"] == 4096 and windows["look_first"] is None
    assert needs_card(SMALL) and not needs_card(told) and not needs_card(choose("qwen", [card]))
    assert fitted_profile(SMALL, "qwen", [ModelCard(id="qwen")]) == SMALL  # a server that does not say


async def test_under_the_small_profile_the_tools_sent_stay_the_same_until_the_answer_turn(workspace: Path) -> None:
    """Chat templates write the tools at the top of the prompt: a list that changed at every turn would make
    the server read the whole conversation again each time. (On a server that takes `tool_parameters`.)"""
    space = Workspace(workspace)
    model, seen = answering(
        calls(("a", "list_files", {})),
        calls(("b", "read_file", {"path": "notes.txt"})),
        calls(("c", "read_file", {"path": "errors.log"})),
        calls(("d", "read_file", {"path": "access.log"})),
        "errors.log mentions it.",
    )
    card = qwen(n_params=494_032_768, extensions=["tool_parameters"])
    controls = build(choose("qwen", [card]))
    result = await run(
        new_run(QUESTION), Registry([ListFiles(space), ReadFile(space)]), RunOptions(model, controls=controls)
    )
    assert result.answer == "errors.log mentions it." and len(seen) == 5
    assert all(r.tools == seen[0].tools for r in seen[:4]) and seen[4].tools == []
    named = {"type": "function", "function": {"name": "read_file"}}
    assert seen[1].tool_choice == seen[2].tool_choice == named  # listed already: the forced call is a read
