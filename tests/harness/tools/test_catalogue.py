"""The catalogue: a run gets exactly the tools it names, in one order, changing tools behind approval unless the
person said otherwise; research only with a model to run it, commands only with presets; an unknown name is
refused listing the known ones."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.app.client import FunctionModel
from harness.core.config import ALL_TOOLS, LOOKING_TOOLS, CommandPreset
from harness.core.results import ToolResult
from harness.errors import ConfigError
from harness.fs.workspace import Workspace
from harness.tools.catalogue import catalogue
from tests.harness.helpers import tool_context


def names(**options: object) -> list[str]:
    return [tool.name for tool in catalogue(**options)]  # type: ignore[arg-type]


def test_the_default_is_the_looking_tools_and_nothing_that_changes_or_runs(tmp_path: Path) -> None:
    tools = catalogue(Workspace(tmp_path))
    assert [t.name for t in tools] == list(LOOKING_TOOLS) and all(t.read_only for t in tools)


def test_named_tools_come_in_catalogue_order_and_the_changing_ones_ask_first(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    tools = catalogue(workspace, names=("write_file", "read_file", "delete_file", "edit_file"))
    assert [t.name for t in tools] == [
        n for n in ALL_TOOLS if n in {"write_file", "read_file", "delete_file", "edit_file"}
    ]
    assert {t.name for t in tools if t.needs_approval} == {"write_file", "delete_file", "edit_file"}
    allowed = catalogue(workspace, names=("write_file", "delete_file"), approve_writes=False)
    assert {t.name for t in allowed if t.needs_approval} == {"delete_file"}  # deletes are approved apart


def test_research_needs_a_model_and_run_command_needs_presets(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    assert names(workspace=workspace, names=("research", "run_command")) == []
    preset = CommandPreset("tests", ("python", "-c", "pass"))
    model = FunctionModel(lambda request: "done")
    assert names(workspace=workspace, names=("research", "run_command"), research_model=model, presets=[preset]) == [
        n for n in ALL_TOOLS if n in {"research", "run_command"}
    ]


def test_an_unknown_tool_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown tools \['rm_rf'\]; the tools are list_files"):
        catalogue(Workspace(tmp_path), names=("read_file", "rm_rf"))


def test_results_are_sized_to_the_models_window(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {n} of a long file\n" for n in range(5000)))
    context = tool_context()

    def read_with(window: int) -> str:
        tool = catalogue(Workspace(tmp_path), window=window).get("read_file")
        assert tool is not None

        async def read() -> str | ToolResult:
            return await tool.run({"path": "big.txt"}, context)

        shown = asyncio.run(read())
        assert isinstance(shown, ToolResult)
        return shown.text

    small, large = read_with(2048), read_with(32768)
    assert len(small) < len(large) <= 32768 * 4  # a window's worth of characters at most
    assert small.startswith("[big.txt: lines 1-") and "more lines" in small


def test_a_small_window_gets_the_three_known_tools_and_every_tool_asked_for_that_changes_files(
    tmp_path: Path,
) -> None:
    """A 1,024-token server would refuse a first request holding seven definitions; an 8,192-token one gets all."""
    space = Workspace(tmp_path)
    names = [*LOOKING_TOOLS, "write_file", "edit_file"]
    assert catalogue(space, names=names, window=1024).names() == ["list_files", "read_file", "search", "write_file",
                                                                  "edit_file"]  # fmt: skip
    assert catalogue(space, names=names, window=8192).names() == names
    assert catalogue(space, names=names).names() == names  # a window nobody said: nothing is left out
