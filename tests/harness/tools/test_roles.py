"""The roles controls rely on: each built-in tool says which parameter carries a file, a folder, a pattern or a
symbol, and which workspace it works in, through the one set of Protocols in tools/roles.py."""

from __future__ import annotations

from pathlib import Path

from harness.core.config import ALL_TOOLS
from harness.fs.workspace import Workspace
from harness.tools.catalogue import catalogue
from harness.tools.roles import ChangesWhatItRead, ListsFolders, NamesSymbol, OverWorkspace, ReadsOneFile, SearchesText


def test_each_built_in_tool_takes_the_roles_its_parameters_carry(tmp_path: Path) -> None:
    tools = catalogue(Workspace(tmp_path), names=[n for n in ALL_TOOLS if n not in ("research", "run_command")])
    roles = {
        tool.name: {role.__name__ for role in (OverWorkspace, ReadsOneFile, ChangesWhatItRead, ListsFolders,
                                               SearchesText, NamesSymbol) if isinstance(tool, role)}
        for tool in tools
    }  # fmt: skip
    assert {"OverWorkspace", "ReadsOneFile"} <= roles["read_file"] and "ListsFolders" in roles["list_files"]
    assert "SearchesText" in roles["search"] and "NamesSymbol" in roles["find_symbol"]
    assert {"ChangesWhatItRead", "OverWorkspace"} <= roles["write_file"] & roles["edit_file"]
    assert roles["scan_archive"] == set()  # it reaches no file: no control treats it as one that does
    for tool in tools:
        if isinstance(tool, ReadsOneFile):
            assert tool.path_parameter in tool.parameters["properties"]
        for role, parameter in ((ListsFolders, "folder_parameter"), (SearchesText, "pattern_parameter")):
            if isinstance(tool, role):
                assert getattr(tool, parameter) in tool.parameters["properties"]
