"""read_file and list_files on folders bigger than a model's window: windows of numbered lines, binaries
described, listings that fit and say how to narrow."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ToolError
from harness.fs.workspace import Workspace
from harness.tools.files import ListFiles, ReadFile


def read(root: Path, chars: int = 8000, **args: Any) -> str:
    return asyncio.run(ReadFile(Workspace(root), chars).run(args, None)).text  # type: ignore[arg-type]


def listing(root: Path, chars: int = 8000, **args: Any) -> str:
    return ListFiles(Workspace(root), chars).listing(args).text


def test_a_small_file_comes_whole_and_unchanged(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("Remember to rotate your logs.\n")
    assert read(tmp_path, path="notes.txt") == "Remember to rotate your logs.\n"


def test_a_long_file_comes_a_window_of_numbered_lines_at_a_time(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    first = read(tmp_path, chars=500, path="big.py").splitlines()
    assert first[0].startswith("[big.py: lines 1-") and first[0].endswith(" of 1,000]")
    assert first[1:3] == ["1: line 1", "2: line 2"]
    last_shown = int(first[-2].split(":")[0])
    assert first[-1] == f"[{1000 - last_shown:,} more lines; read on with offset={last_shown + 1}]"
    assert sum(len(line) + 1 for line in first) < 500 + 200
    again = read(tmp_path, path="big.py", offset=500, limit=3).splitlines()
    assert again == ["[big.py: lines 500-502 of 1,000]", "500: line 500", "501: line 501", "502: line 502",
                     "[498 more lines; read on with offset=503]"]  # fmt: skip
    assert read(tmp_path, path="big.py", offset=999).splitlines()[1:] == ["999: line 999", "1000: line 1000"]
    assert read(tmp_path, path="big.py", offset=5000).splitlines()[1:] == ["1000: line 1000"]


def test_a_very_long_line_is_cut_saying_so(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 100_000)
    out = read(tmp_path, path="min.js")
    assert len(out) < 1000 and "[... line cut: 100,000 characters]" in out


@pytest.mark.parametrize(
    ("data", "kind"),
    [(b"\x89PNG\r\n\x1a\n" + b"\x00" * 50, "PNG image"), (b"%PDF-1.7\n...", "PDF document"),
     (b"PK\x03\x04rest", "ZIP archive"), (b"text\x00with a NUL", "binary data"),
     (bytes(range(128, 256)) * 40, "binary data")],
)  # fmt: skip
def test_a_binary_file_is_described_never_dumped(tmp_path: Path, data: bytes, kind: str) -> None:
    (tmp_path / "blob").write_bytes(data)
    out = read(tmp_path, path="blob")
    assert out.startswith(f"blob is a binary file ({kind}") and f"{len(data):,} bytes" in out and "\x00" not in out


def test_utf8_text_with_a_few_bad_bytes_is_still_text(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("café naïve résumé\n".encode() * 20 + b"\xff\n")
    assert read(tmp_path, path="latin.txt").startswith("café naïve résumé")


def test_a_small_tree_is_listed_whole_largest_first(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("aaaa")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("bb")
    assert listing(tmp_path) == "2 files, largest first:\na.txt (4 bytes)\nsub/b.txt (2 bytes)"


def test_a_listing_sorted_smallest_newest_or_oldest_puts_that_file_first(tmp_path: Path) -> None:
    for name, size, changed in (("a.txt", 30, 300), ("b.txt", 10, 100), ("c.txt", 20, 200)):
        (tmp_path / name).write_text("x" * size)
        os.utime(tmp_path / name, (1_790_000_000 + changed, 1_790_000_000 + changed))
    first = {order: listing(tmp_path, sort=order).splitlines()[:2] for order in ("smallest", "newest", "oldest")}
    assert first["smallest"] == ["3 files, smallest first; the smallest is b.txt (10 bytes):", "b.txt (10 bytes)"]
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(1_790_000_300))
    assert first["newest"] == [f"3 files, newest first; the newest is a.txt (changed {when}):",
                               f"a.txt (30 bytes, changed {when})"]  # fmt: skip
    assert first["oldest"][0].startswith("3 files, oldest first; the oldest is b.txt (changed ")
    assert first["oldest"][1].startswith("b.txt (10 bytes, changed ")


def test_files_sharing_the_first_place_are_named_together_and_only_an_asked_order_names_any(tmp_path: Path) -> None:
    for name, size in (("a.txt", 0), ("b.txt", 0), ("c.txt", 5), ("d.txt", 0), ("e.txt", 0)):
        (tmp_path / name).write_text("x" * size)
        os.utime(tmp_path / name, (1_790_000_000.25, 1_790_000_000.75 if name == "c.txt" else 1_790_000_000.5))
    head = listing(tmp_path, sort="smallest").splitlines()[0]
    assert head == "5 files, smallest first; the smallest are 4 files (0 bytes each): a.txt, b.txt, d.txt and 1 more:"
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(1_790_000_000))
    assert (
        listing(tmp_path, sort="newest")
        .splitlines()[0]
        .startswith(f"5 files, newest first; the newest are 5 files (changed {when} each): c.txt, ")
    )  # a fraction of a second apart is the same time as shown
    assert (
        listing(tmp_path, sort="largest").splitlines()[0] == "5 files, largest first; the largest is c.txt (5 bytes):"
    )
    assert listing(tmp_path).splitlines()[0] == "5 files, largest first:"  # no order asked for: no file singled out


@pytest.fixture
def big_tree(tmp_path: Path) -> Path:
    for folder in ("src/core", "src/util", "tests", "docs"):
        (tmp_path / folder).mkdir(parents=True)
        for n in range(100):
            (tmp_path / folder / f"file_{n:03}.txt").write_text("x" * (n + 1))
    (tmp_path / "README.md").write_text("y" * 5000)
    return tmp_path


def test_a_large_tree_lists_the_largest_files_that_fit_a_line_per_folder_and_how_to_narrow(big_tree: Path) -> None:
    out = listing(big_tree, chars=3000)
    lines = out.splitlines()
    assert lines[0] == "401 files, largest first:" and lines[1] == "README.md (5,000 bytes)"
    assert len(out) < 3000 + 300
    assert any("more files not shown; call list_files with path set to a folder" in line for line in lines)
    by = lines[lines.index("By folder:") + 1 :]
    assert by == ["src/ (200 files, 10,100 bytes)", "docs/ (100 files, 5,050 bytes)", "tests/ (100 files, 5,050 bytes)"]


def test_a_cut_listing_names_the_listed_folders_own_files_it_left_out(big_tree: Path) -> None:
    """A project's LICENSE and pyproject.toml are small files at its top, below every large one: `ls` shows a
    folder's own files first, and so does the end of a listing cut to fit."""
    (big_tree / "LICENSE").write_text("MIT")
    (big_tree / ".gitignore").write_text("*.pyc")
    lines = listing(big_tree, chars=3000).splitlines()
    own = [line for line in lines if line.startswith("Files directly in the listed folder")]
    assert own == ["Files directly in the listed folder, not shown above: .gitignore (5 bytes), LICENSE (3 bytes)"]
    assert "README.md (5,000 bytes)" in lines[:3]  # shown above, so not named again
    sub = listing(big_tree, chars=1000, path="src").splitlines()  # src's own files: none, its folders hold them
    assert not any(line.startswith("Files directly") for line in sub)
    assert not any(line.startswith("Files directly") for line in listing(big_tree, chars=100_000).splitlines())


def test_a_folder_or_a_glob_lists_just_those_files_with_paths_from_the_root(big_tree: Path) -> None:
    """Beside the whole folder's count: small models asked how many files there are in all answered with the
    count of the last folder they had listed."""
    sub = listing(big_tree, chars=20000, path="src/util").splitlines()
    assert sub[0] == "100 files in src/util (of 401 in the whole folder), largest first:"
    assert sub[1] == "src/util/file_099.txt (100 bytes)"
    assert listing(big_tree, glob="file_00[12].txt", path="docs").splitlines() == [
        "2 files in docs matching file_00[12].txt (of 401 in the whole folder), largest first:",
        "docs/file_002.txt (3 bytes)", "docs/file_001.txt (2 bytes)"]  # fmt: skip
    assert listing(big_tree, glob="*.rs") == "No files matching *.rs (of 401 in the whole folder)."


def test_ignored_entries_are_counted_not_listed(big_tree: Path) -> None:
    (big_tree / ".gitignore").write_text("tests/\n")
    (big_tree / ".git").mkdir()
    (big_tree / ".git" / "HEAD").write_text("ref")
    out = listing(big_tree, chars=50_000)
    assert (
        out.splitlines()[0] == "302 files, largest first:" and "tests/" not in out and ".git" not in out.split("(")[0]
    )
    assert out.splitlines()[-1] == "(2 entries not shown: version-control folders and what .gitignore names)"


@pytest.mark.parametrize("name", ["odd\nname.txt", "bell\x07.txt", '"quoted".txt'])
def test_a_name_the_listing_writes_as_json_is_read_back_as_written(tmp_path: Path, name: str) -> None:
    """A name holding a newline or an escape code (or beginning with a quote) is listed as a JSON string, so it
    adds no line of its own; passed back verbatim, quotes and escapes and all, it names the same file."""
    (tmp_path / name).write_text("the odd one\n")
    (tmp_path / "plain.txt").write_text("plain\n")
    [line] = [line for line in listing(tmp_path).splitlines() if "plain" not in line and "(" in line]
    written = line[: line.rindex(" (")]
    assert written.startswith('"') and "\n" not in written
    assert read(tmp_path, path=written) == "the odd one\n"
    assert read(tmp_path, path=name) == "the odd one\n"
    with pytest.raises(ToolError, match="no such file"):
        read(tmp_path, path='"missing.txt"')


def test_a_name_that_is_not_utf8_is_listed_quoted_and_read_back(tmp_path: Path) -> None:
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xffname.txt"), "wb") as handle:
        handle.write(b"hello\n")
    out = listing(tmp_path)
    quoted = json.dumps("bad\udcffname.txt")
    assert quoted in out
    assert read(tmp_path, path=quoted) == "hello\n"


def test_a_listing_past_its_time_bound_shows_what_it_reached_and_says_so(big_tree: Path) -> None:
    listed = ListFiles(Workspace(big_tree), seconds=0.0).listing({})
    assert listed.text.startswith("No file was reached") and "the listing stopped after 0 s" in listed.text
    assert listed.shown.cut and not listed.shown.whole
