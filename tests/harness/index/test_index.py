"""The workspace index: built from one confined walk, ranking chunks of lines against a text in any language,
naming the question's words this folder holds, the definitions and uses of a name, the manifests, refreshed
after a write, and bounded (a build past its bound says it is partial)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex

FILES = {
    "logs/api.log": "INFO started\nERROR upstream call timed out after 30 s\nINFO retried\n",
    "logs/db.log": "INFO pool ready\nWARN slow query\n",
    "docs/notes.md": "# Notes\n\nRotate the logs weekly so they do not fill the disk.\n",
    "docs/说明.md": "日志轮转每周进行一次。\n",
    "src/retry.py": "class RetryPolicy:\n    def backoff(self, attempt):\n        return 2 ** attempt\n",
    "src/client.py": "from src.retry import RetryPolicy\n\npolicy = RetryPolicy()  # RetryPolicy in a comment\n",
    "pyproject.toml": '[project]\nname = "demo"\nversion = "1.4.0"\n'
    'requires-python = ">=3.9"\ndependencies = ["httpx>=0.27"]\n',
    "image.png": "\x89PNG\r\n\x1a\n",
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8") if not name.endswith(".png") else text.encode("latin-1"))
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.txt").write_text("RetryPolicy compiled\n")
    os.symlink("/etc/passwd", tmp_path / "passwd")
    return tmp_path


def test_the_table_holds_the_walks_files_and_a_binary_is_not_ranked(folder: Path) -> None:
    index = WorkspaceIndex(Workspace(folder))
    paths = [r.path for r in index.files()]
    assert "build/out.txt" not in paths and "passwd" not in paths and "image.png" in paths
    assert next(r for r in index.files() if r.path == "image.png").text is False
    assert index.built.skipped == 1 and index.built.ignored >= 1 and not index.partial


def test_the_files_most_like_a_question_come_first_in_any_language(folder: Path) -> None:
    index = WorkspaceIndex(Workspace(folder))
    assert index.files_for("Which file says to rotate the logs?")[0][0] == "docs/notes.md"
    assert index.files_for("Where is RetryPolicy defined?")[0][0] in ("src/retry.py", "src/client.py")
    assert index.files_for("哪个文件提到日志轮转？")[0][0] == "docs/说明.md"
    assert index.files_for("Welche Datei erwähnt RetryPolicy?")[0][0] in ("src/retry.py", "src/client.py")
    passage = index.passages_for("upstream timed out")[0]
    assert (passage.path, index.lines_of(passage, "upstream timed out")) == (
        "logs/api.log",
        [(2, "ERROR upstream call timed out after 30 s")],
    )


def test_the_questions_words_this_folder_holds_its_names_first(folder: Path) -> None:
    index = WorkspaceIndex(Workspace(folder))
    assert index.words_here("Where is `RetryPolicy` used, and what does backoff return?")[:2] == [
        "backoff",
        "RetryPolicy",
    ]
    assert index.words_here("Какой файл упоминает Kubernetes?") == []


def test_definitions_and_uses_come_from_the_code_not_from_comments(folder: Path) -> None:
    index = WorkspaceIndex(Workspace(folder))
    [(path, definition)] = index.definitions("RetryPolicy")
    assert (path, definition.line, definition.kind) == ("src/retry.py", 1, "class")
    assert index.uses("RetryPolicy") == {"src/client.py": [1, 3]}
    assert index.definitions("retrypolicy")[0][0] == "src/retry.py"  # any case, when none is exact


def test_manifests_are_read_as_written(folder: Path) -> None:
    [manifest] = WorkspaceIndex(Workspace(folder)).manifests()
    assert (manifest.name, manifest.version, manifest.runtime) == ("demo", "1.4.0", ("Python", ">=3.9"))
    assert manifest.dependencies == {"httpx": ">=0.27"}


def test_a_file_written_deleted_or_added_is_refreshed(folder: Path) -> None:
    index = WorkspaceIndex(Workspace(folder))
    assert index.files_for("slow query")[0][0] == "logs/db.log"
    (folder / "logs" / "db.log").write_text("INFO nothing to see\n")
    (folder / "logs" / "new.log").write_text("WARN slow query again\n")
    (folder / "src" / "client.py").unlink()
    index.refresh(["logs/db.log", "logs/new.log", "src/client.py"])
    assert index.files_for("slow query")[0][0] == "logs/new.log"
    assert "src/client.py" not in {r.path for r in index.files()} and index.uses("RetryPolicy") == {}


def test_a_build_past_its_bound_is_partial_and_says_how_far_it_got(folder: Path) -> None:
    index = WorkspaceIndex(Workspace(folder), max_text_bytes=100)
    index.build()
    assert index.partial and "ranked the first" in (index.built.stopped or "")
    assert len(index.files()) == len(FILES) + 1  # the table still holds every file (.gitignore too)
