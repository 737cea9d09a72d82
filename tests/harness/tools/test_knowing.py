"""The tools that answer from the workspace index: where a name is defined and used, a map of the code, what
the manifests declare, and counts a tool makes."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ToolError
from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex
from harness.tools.knowing import CountLines, FindSymbol, ProjectInfo, RepoMap, file_rank
from tests.harness.helpers import tool_context

FILES = {
    "src/retry.py": "class RetryPolicy:\n    def backoff(self, attempt):\n        return 2 ** attempt\n",
    "src/client.py": "from src.retry import RetryPolicy\n\npolicy = RetryPolicy()\n",
    "src/util.py": "def helper():\n    return RetryPolicy\n",
    "README.md": "RetryPolicy is documented here.\n",
    "data/orders.csv": "id,amount\n1,3.50\n2,7.25\n\n3,1.00\n",
    "logs/app.log": "INFO a\nERROR b\nINFO c\nERROR d\n",
    "package.json": '{"name": "demo", "version": "2.1.0", "license": "MIT", "engines": {"node": ">=18"},'
    ' "dependencies": {"ms": "^2.1.3"}, "scripts": {"test": "node --test"}}',
}


@pytest.fixture
def index(tmp_path: Path) -> WorkspaceIndex:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return WorkspaceIndex(Workspace(tmp_path))


def test_find_symbol_gives_the_definition_its_line_and_the_files_that_use_it(index: WorkspaceIndex) -> None:
    found = FindSymbol(index).find("RetryPolicy")
    assert found.text.splitlines() == [
        "RetryPolicy is defined in 1 place:",
        "  src/retry.py:1: class RetryPolicy:  (class)",
        "Used in 2 other files:",
        "  src/client.py: lines 1, 3",
        "  src/util.py: line 2",
    ]  # README.md mentions it in prose: no use
    assert found.shown.kind == "symbols" and set(found.shown.paths) == {"src/retry.py", "src/client.py", "src/util.py"}


def test_a_name_nothing_defines_is_answered_with_the_names_like_it(index: WorkspaceIndex) -> None:
    found = FindSymbol(index).find("RetryPolicies")
    assert found.text.startswith("Nothing in the code defines 'RetryPolicies' (3 code files parsed).")
    assert "Names defined here that are like it: RetryPolicy." in found.text
    with pytest.raises(ToolError, match="name is empty"):
        FindSymbol(index).find("")


def test_the_map_puts_the_most_used_file_first_with_its_definitions(index: WorkspaceIndex) -> None:
    mapped = RepoMap(index).map(".")
    assert mapped.text.splitlines()[:3] == [
        "src/retry.py",
        "  1: class RetryPolicy:",
        "  2: def backoff(self, attempt):",
    ]
    assert RepoMap(index).map("docs").text == "No code file in docs defines a function, class or type."
    assert RepoMap(index, output_chars=260).map(".").shown.cut


def test_pagerank_favours_the_files_others_use() -> None:
    from harness.index.symbols import Definition, FileSymbols

    found = {
        "a.py": FileSymbols((Definition("core", 1, "function"),), {}),
        "b.py": FileSymbols((Definition("b", 1, "function"),), {"core": [2]}),
        "c.py": FileSymbols((Definition("c", 1, "function"),), {"core": [2], "b": [3]}),
    }
    rank = file_rank(found)
    assert rank["a.py"] > rank["b.py"] > rank["c.py"]


async def test_project_info_reads_the_manifests_as_written(index: WorkspaceIndex) -> None:
    said = await ProjectInfo(index).run({}, tool_context())
    assert said.text.splitlines() == [
        "package.json: name demo, version 2.1.0, license MIT, requires Node.js >=18",
        "  dependencies: ms ^2.1.3",
        "  scripts: test: node --test",
    ]
    assert said.shown.paths == ("package.json",)


def test_count_lines_counts_lines_matching_lines_and_a_tables_rows(index: WorkspaceIndex) -> None:
    assert CountLines(index).count({"path": "logs/app.log", "pattern": "ERROR"}).text == (
        "logs/app.log has 4 lines; 2 lines hold 'ERROR'."
    )
    assert CountLines(index).count({"path": "logs/app.log", "pattern": "^INFO", "regex": True}).text == (
        "logs/app.log has 4 lines; 2 lines hold '^INFO'."
    )
    assert CountLines(index).count({"path": "data/orders.csv"}).text == (
        "data/orders.csv has 5 lines; as a table: a header and 3 data rows."
    )
