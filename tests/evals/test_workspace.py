"""The eval's generated workspaces: the same seed gives the same files, the facts a question asks about hold in
exactly the files ground truth names, and a workspace is never built over another."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.workspace import DEFAULT_FILES, family_files, generated_files, write_files


def test_files_are_written_as_given_with_their_times_and_never_into_an_existing_folder(tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a/b.txt": "é\n", "c.bin": b"\x00\xff"}, {"c.bin": 1_000_000.0})
    assert (root / "a/b.txt").read_text(encoding="utf-8") == "é\n" and (root / "c.bin").read_bytes() == b"\x00\xff"
    assert (root / "c.bin").stat().st_mtime == 1_000_000.0
    with pytest.raises(FileExistsError, match="a workspace is built into a new folder"):
        write_files(root, DEFAULT_FILES)
    assert not (root / "errors.log").exists()


def test_the_default_workspaces_largest_file_is_the_one_with_the_timeout() -> None:
    largest = max(DEFAULT_FILES, key=lambda name: len(DEFAULT_FILES[name]))
    holding = [name for name, text in DEFAULT_FILES.items() if "timed out" in text]
    assert largest == "errors.log" and holding == ["errors.log"]


@given(st.integers(0, 10_000))
def test_a_generated_workspace_has_one_timeout_and_another_largest(seed: int) -> None:
    files = generated_files(seed)
    assert files == generated_files(seed)
    holding = [name for name, text in files.items() if "timeout" in text]
    largest = max(files, key=lambda name: len(files[name].encode()))
    assert len(holding) == 1 and largest not in holding and largest != "todo.md"


@settings(max_examples=50)
@given(st.integers(0, 10_000), st.integers(3, 18), st.booleans())
def test_a_family_folder_has_its_count_one_timeout_one_rotation_and_the_note(
    seed: int, count: int, nested: bool
) -> None:
    files = family_files(seed, count, nested, "notes/quote.txt")
    assert files == family_files(seed, count, nested, "notes/quote.txt")
    assert len(files) == count and "notes/quote.txt" in files
    timeouts = [name for name, text in files.items() if "timeout" in text or "timed out" in text]
    rotations = [name for name, text in files.items() if "rotat" in text]
    assert len(timeouts) == 1 and len(rotations) == 1
    largest = max(files, key=lambda name: len(files[name].encode()))
    assert largest not in {*timeouts, *rotations, "notes/quote.txt"}
    assert nested or all("/" not in name for name in files if name != "notes/quote.txt")
