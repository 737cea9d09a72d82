"""write_file: atomic, confined, idempotent under retry, size-limited."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ToolContext
from harness.core.registry import Registry
from harness.core.state import Intent, new_run
from harness.errors import ToolError
from harness.fs.workspace import Workspace
from harness.tools.writes import AppendFile, EditFile, WriteFile
from tests.conftest import ROOT
from tests.harness.helpers import calls, script, tool_context


class Killed(Exception):
    """The process died here (the intent is on disk, nothing after it ran)."""


class Attempts:
    """One call's attempts across a kill: the first notes its intent, as the state would keep it; a retry is
    given that intent back, as the journal gives it from the saved state."""

    def __init__(self, kill_after_intent: bool = False) -> None:
        self.intent: Intent | None = None
        self.kill_after_intent = kill_after_intent

    def note(self, intent: Intent) -> None:
        self.intent = intent
        if self.kill_after_intent:
            raise Killed

    def first(self) -> ToolContext:
        return replace(tool_context(), intend=self.note)

    def retry(self) -> ToolContext:
        return replace(tool_context(), retry=True, intended=self.intent)


async def test_writes_land_whole_and_replace(workspace: Path) -> None:
    tool = WriteFile(Workspace(workspace))
    assert (
        await tool.run({"path": "notes.txt", "content": "new notes"}, tool_context())
    ).text == "Wrote 9 bytes to notes.txt."
    assert (workspace / "notes.txt").read_text() == "new notes"
    assert [p.name for p in workspace.iterdir() if p.name.endswith(".tmp")] == []


async def test_the_folder_must_exist(workspace: Path) -> None:
    with pytest.raises(ToolError, match="no such folder: a"):
        await WriteFile(Workspace(workspace)).run({"path": "a/b.txt", "content": "x"}, tool_context())
    assert not (workspace / "a").exists()


async def test_a_retried_write_with_the_same_key_does_not_write_twice(workspace: Path) -> None:
    tool = WriteFile(Workspace(workspace))
    await tool.run({"path": "out.txt", "content": "hello"}, tool_context())
    before = os.stat(workspace / "out.txt")
    again = (await tool.run({"path": "out.txt", "content": "hello"}, tool_context())).text
    after = os.stat(workspace / "out.txt")
    assert "nothing was written" in again
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


async def test_a_write_over_the_limit_is_refused_clearly(workspace: Path) -> None:
    with pytest.raises(ToolError, match="the content is 11 bytes; the limit per write is 10 bytes"):
        await WriteFile(Workspace(workspace), max_bytes=10).run({"path": "x.txt", "content": "x" * 11}, tool_context())
    assert not (workspace / "x.txt").exists()


async def test_write_file_needs_approval_by_default_and_runs_once_approved(workspace: Path) -> None:
    from harness.core.approvals import approve

    model = script(calls(("w1", "write_file", {"path": "notes.txt", "content": "approved"})), "done")
    tools = Registry([WriteFile(Workspace(workspace))])
    stopped = await run(new_run("write"), tools, RunOptions(model=model))
    assert stopped.interruption is not None and stopped.interruption.tool == "write_file"
    approve(stopped, "w1")
    done = await run(stopped, tools, RunOptions(model=model))
    assert done.status == "completed" and (workspace / "notes.txt").read_text() == "approved"


WRITER = """
import sys
from harness.fs.workspace import Workspace
ws = Workspace(sys.argv[1])
big = [bytes([65 + i]) * 8_000_000 for i in range(2)]
print("go", flush=True)
i = 0
while True:
    ws.write_atomic("big.bin", big[i % 2])
    i += 1
"""


def test_a_kill_during_a_write_leaves_a_whole_file(workspace: Path) -> None:
    (workspace / "big.bin").write_bytes(b"Z" * 100)
    whole = {b"Z" * 100, b"A" * 8_000_000, b"B" * 8_000_000}
    for delay in (0.05, 0.13, 0.21, 0.34, 0.5):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(workspace)], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None and writer.stdout.readline().strip() == "go"
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        assert (workspace / "big.bin").read_bytes() in whole


async def test_an_edit_replaces_the_one_place_and_keeps_every_other_byte(workspace: Path) -> None:
    before = b"[server]\r\nport = 1869\r\nhost = 0.0.0.0\r\n\r\n[cache]\r\nsize = 8\r\n"
    (workspace / "settings.ini").write_bytes(before)
    tool = EditFile(Workspace(workspace))
    out = (
        await tool.run({"path": "settings.ini", "old_text": "port = 1869", "new_text": "port = 17259"}, tool_context())
    ).text
    assert out.startswith(
        "Edited settings.ini at line 2: replaced 1 line with 1 line. Lines 1-4 now read:\n1: [server]"
    )
    assert (workspace / "settings.ini").read_bytes() == before.replace(b"1869", b"17259")


async def test_an_edit_that_names_no_place_or_several_changes_nothing_and_says_why(workspace: Path) -> None:
    (workspace / "todo.md").write_text("- [ ] a\n- [ ] b\n- [x] c\n")
    tool = EditFile(Workspace(workspace))
    with pytest.raises(ToolError, match=r"old_text occurs 2 times in todo.md \(lines 1, 2\): give more of the text"):
        await tool.run({"path": "todo.md", "old_text": "- [ ]", "new_text": "- [x]"}, tool_context())
    with pytest.raises(ToolError, match=r"old_text is not in todo\.md: read_file shows what it says"):
        await tool.run({"path": "todo.md", "old_text": "- [ ] d", "new_text": "x"}, tool_context())
    with pytest.raises(ToolError, match="old_text is empty"):
        await tool.run({"path": "todo.md", "old_text": "", "new_text": "x"}, tool_context())
    with pytest.raises(ToolError, match="old_text and new_text are the same, so nothing would change"):
        await tool.run({"path": "todo.md", "old_text": "- [ ] b", "new_text": "- [ ] b"}, tool_context())
    assert (workspace / "todo.md").read_text() == "- [ ] a\n- [ ] b\n- [x] c\n"


async def test_a_failed_edit_says_how_to_add_at_the_end_and_which_line_was_meant(workspace: Path) -> None:
    (workspace / "todo.md").write_text("# To do\n- [ ] a\n- [x] archive the reports\n\n")
    tool = EditFile(Workspace(workspace))
    with pytest.raises(ToolError) as empty:
        await tool.run({"path": "todo.md", "old_text": "", "new_text": "- [ ] d"}, tool_context())
    assert 'give the last line as old_text, "- [x] archive the reports", and that line followed by' in str(empty.value)
    with pytest.raises(ToolError) as typo:
        await tool.run({"path": "todo.md", "old_text": "- [x] archive teh reports", "new_text": "x"}, tool_context())
    assert str(typo.value).endswith('The line most like it is line 3: "- [x] archive the reports"')
    with pytest.raises(ToolError) as unlike:
        await tool.run({"path": "todo.md", "old_text": "port = 8080", "new_text": "x"}, tool_context())
    assert "most like" not in str(unlike.value)  # nothing close: no line is offered
    # the advice, followed, appends
    last = "- [x] archive the reports"
    await tool.run({"path": "todo.md", "old_text": last, "new_text": last + "\n- [ ] d"}, tool_context())
    assert (workspace / "todo.md").read_text() == "# To do\n- [ ] a\n- [x] archive the reports\n- [ ] d\n\n"


async def test_an_edit_copied_from_a_numbered_window_and_a_line_added_after_another(workspace: Path) -> None:
    (workspace / "todo.md").write_text("# To do\n- [ ] a\n- [x] c\n")
    tool = EditFile(Workspace(workspace))
    await tool.run({"path": "todo.md", "old_text": "3: - [x] c", "new_text": "- [x] c\n- [ ] d"}, tool_context())
    assert (workspace / "todo.md").read_text() == "# To do\n- [ ] a\n- [x] c\n- [ ] d\n"


async def test_an_edit_refuses_a_binary_file_and_a_retry_of_a_landed_edit_reports_it(workspace: Path) -> None:
    (workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\nport = 1")
    (workspace / "a.txt").write_text("port = 2\n")
    tool = EditFile(Workspace(workspace))
    with pytest.raises(ToolError, match=r"logo\.png is a binary file"):
        await tool.run({"path": "logo.png", "old_text": "port = 1", "new_text": "port = 3"}, tool_context())
    args = {"path": "a.txt", "old_text": "port = 2", "new_text": "port = 3"}
    attempts = Attempts()
    await tool.run(args, attempts.first())
    assert "already has this change" in (await tool.run(args, attempts.retry())).text
    with pytest.raises(ToolError, match=r"old_text is not in a\.txt"):
        await tool.run(args, tool_context())  # the same call, not a retry: the text is gone
    assert (workspace / "a.txt").read_text() == "port = 3\n"


async def test_an_edit_copied_from_search_results_loses_their_path_and_line_prefix(workspace: Path) -> None:
    (workspace / "todo.md").write_text("# To do\n- [ ] a\n- [x] c\n")
    tool = EditFile(Workspace(workspace))
    args = {"path": "todo.md", "old_text": "todo.md:3: - [x] c", "new_text": "todo.md:3: - [x] c\n- [ ] d"}
    assert ((await tool.run(args, tool_context())).text).startswith(
        "Edited todo.md at line 3: replaced 1 line with 2 lines."
    )
    assert (workspace / "todo.md").read_text() == "# To do\n- [ ] a\n- [x] c\n- [ ] d\n"
    with pytest.raises(ToolError, match=r"old_text is not in todo\.md"):  # another file's prefix is not this file's
        await tool.run({"path": "todo.md", "old_text": "notes.md:2: - [ ] a", "new_text": "x"}, tool_context())


async def test_an_append_adds_lines_at_the_end_and_keeps_the_files_final_newline(workspace: Path) -> None:
    (workspace / "todo.md").write_text("# To do\n- [x] c\n")
    (workspace / "bare.txt").write_text("one")
    tool = AppendFile(Workspace(workspace))
    out = await tool.run(
        {
            "path": "todo.md",
            "content": "- [ ] d",
        },
        tool_context(),
    )
    assert out.text == "Added 1 line at the end of todo.md (now 24 bytes)."
    assert (workspace / "todo.md").read_text() == "# To do\n- [x] c\n- [ ] d\n"
    await tool.run(
        {
            "path": "bare.txt",
            "content": "two\nthree\n",
        },
        tool_context(),
    )
    assert (workspace / "bare.txt").read_text() == "one\ntwo\nthree\n"  # the new text starts on a line of its own
    await tool.run(
        {
            "path": "new.txt",
            "content": "first",
        },
        tool_context(),
    )
    assert (workspace / "new.txt").read_text() == "first"  # a missing file is created, as `>>` does


async def test_an_append_retried_after_it_landed_is_not_added_twice_and_bad_targets_are_refused(
    workspace: Path,
) -> None:
    (workspace / "todo.md").write_text("- [x] c\n")
    (workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    tool = AppendFile(Workspace(workspace))
    args = {
        "path": "todo.md",
        "content": "- [ ] d",
    }
    attempts = Attempts()
    await tool.run(args, attempts.first())
    assert "already has this change" in (await tool.run(args, attempts.retry())).text
    assert (workspace / "todo.md").read_text() == "- [x] c\n- [ ] d\n"
    with pytest.raises(ToolError, match=r"logo\.png is a binary file; append_file adds to text files"):
        await tool.run(
            {
                "path": "logo.png",
                "content": "x",
            },
            tool_context(),
        )
    with pytest.raises(ToolError, match="content is empty"):
        await tool.run(
            {
                "path": "todo.md",
                "content": "\n",
            },
            tool_context(),
        )
    (workspace / "link.md").symlink_to(workspace / "todo.md")
    with pytest.raises(ToolError):
        await tool.run(
            {
                "path": "link.md",
                "content": "x",
            },
            tool_context(),
        )
    assert (workspace / "todo.md").read_text() == "- [x] c\n- [ ] d\n"
    assert (workspace / "logo.png").read_bytes() == b"\x89PNG\r\n\x1a\n"


async def test_an_edit_shows_the_lines_it_wrote_with_two_either_side(workspace: Path) -> None:
    lines = [f"key{n} = {n}" for n in range(1, 41)]
    (workspace / "big.ini").write_text("\n".join(lines) + "\n")
    tool = EditFile(Workspace(workspace))
    out = (
        await tool.run(
            {"path": "big.ini", "old_text": "key20 = 20", "new_text": "key20 = 7\nkey20b = 8"}, tool_context()
        )
    ).text
    assert out == (
        "Edited big.ini at line 20: replaced 1 line with 2 lines. Lines 18-23 now read:\n"
        "18: key18 = 18\n19: key19 = 19\n20: key20 = 7\n21: key20b = 8\n22: key21 = 21\n23: key22 = 22"
    )
    (workspace / "small.ini").write_text("[server]\nport = 1\n")
    out = (await tool.run({"path": "small.ini", "old_text": "port = 1", "new_text": "port = 2"}, tool_context())).text
    assert out.endswith("small.ini now reads:\n[server]\nport = 2\n")  # a short file is shown whole


async def test_an_edit_that_would_break_a_line_in_two_is_refused_and_says_which_line(workspace: Path) -> None:
    (workspace / "settings.ini").write_text("[server]\nport = 1869\nhost = x\n")
    tool = EditFile(Workspace(workspace))
    with pytest.raises(ToolError) as split:
        await tool.run({"path": "settings.ini", "old_text": "port = ", "new_text": "port = 17259\n"}, tool_context())
    assert str(split.value) == (
        'old_text ends inside line 2, "port = 1869", and new_text ends with a line break, so the rest of that line '
        "would be left on a line of its own: give the whole line as old_text"
    )
    assert (workspace / "settings.ini").read_text() == "[server]\nport = 1869\nhost = x\n"
    # a part of a line replaced by a part, and a whole line by a line and its break, are edits as ever
    await tool.run({"path": "settings.ini", "old_text": "port = ", "new_text": "port: "}, tool_context())
    await tool.run({"path": "settings.ini", "old_text": "host = x", "new_text": "host = y\n"}, tool_context())
    assert (workspace / "settings.ini").read_text() == "[server]\nport: 1869\nhost = y\n\n"


async def test_an_edit_that_takes_a_line_out_names_it_and_one_that_rewrites_lines_names_none(workspace: Path) -> None:
    (workspace / "settings.ini").write_text("[server]\nport = 1869\nhost = 0.0.0.0\n\n[logging]\nlevel = info\n")
    tool = EditFile(Workspace(workspace))
    slip = {"path": "settings.ini", "old_text": "port = 1869\nhost = 0.0.0.0\n", "new_text": "port = 17259\n"}
    out = (await tool.run(slip, tool_context())).text
    assert out.startswith(
        'Edited settings.ini at line 2: replaced 2 lines with 1 line. It removed 1 line: "host = 0.0.0.0"; '
        "if any was to stay, put it back. settings.ini now reads:\n[server]\nport = 17259\n\n"
    )
    # lines rewritten in place, or kept around a change, were not removed
    both = {"path": "settings.ini", "old_text": "[server]\nport = 17259", "new_text": "[server]\nport = 80"}
    assert "removed" not in (await tool.run(both, tool_context())).text
    # a value within a line replaced: the line stays, rewritten
    value = (await tool.run({"path": "settings.ini", "old_text": "80", "new_text": "17259"}, tool_context())).text
    assert "removed" not in value and "2: port = 17259" in value
    cut = "[logging]\nlevel = info\nformat = plain\ncolour = off\nrotate = daily\n"
    (workspace / "log.ini").write_text(cut)
    out = (await tool.run({"path": "log.ini", "old_text": cut, "new_text": "[logging]\n"}, tool_context())).text
    assert 'It removed 4 lines: "level = info", "format = plain", "colour = off" and 1 more;' in out


CHANGES: dict[str, tuple[type[Any], dict[str, str], str, str]] = {
    # tool, arguments, the file before, the file after
    "an edit whose new text holds the old": (
        EditFile, {"path": "t.md", "old_text": "last line", "new_text": "last line\nnew line"},
        "first\nlast line\n", "first\nlast line\nnew line\n"),
    "an edit of a version": (EditFile, {"path": "t.md", "old_text": "1.0", "new_text": "1.0.1"},
                             "v 1.0\n", "v 1.0.1\n"),
    "an append the file already ends with": (AppendFile, {"path": "t.md", "content": "- [ ] d"},
                                              "- [ ] d\n", "- [ ] d\n- [ ] d\n"),
    "an append": (AppendFile, {"path": "t.md", "content": "two"}, "one\n", "one\ntwo\n"),
    "a write": (WriteFile, {"path": "t.md", "content": "new\n"}, "old\n", "new\n"),
}  # fmt: skip


@pytest.mark.parametrize("point", ["before its intent was saved", "after its intent, before the write",
                                   "after the write, before the result was saved"])  # fmt: skip
@pytest.mark.parametrize("change", list(CHANGES))
async def test_a_change_retried_after_a_kill_at_any_point_is_made_exactly_once(
    workspace: Path, change: str, point: str
) -> None:
    kind, args, before, after = CHANGES[change]
    (workspace / "t.md").write_text(before)
    tool = kind(Workspace(workspace), needs_approval=False)
    attempts = Attempts(kill_after_intent=point == "after its intent, before the write")
    if point != "before its intent was saved":
        with contextlib.suppress(Killed):
            await tool.run(args, attempts.first())
    await tool.run(args, attempts.retry())
    assert (workspace / "t.md").read_text() == after


async def test_a_retry_after_the_file_changed_since_is_refused_and_changes_nothing(workspace: Path) -> None:
    (workspace / "t.md").write_text("port = 1\n")
    tool = EditFile(Workspace(workspace))
    attempts = Attempts(kill_after_intent=True)
    with contextlib.suppress(Killed):
        await tool.run({"path": "t.md", "old_text": "port = 1", "new_text": "port = 2"}, attempts.first())
    (workspace / "t.md").write_text("port = 1\nhost = x\n")  # a person saved the file meanwhile
    with pytest.raises(ToolError, match="changed since this call began"):
        await tool.run({"path": "t.md", "old_text": "port = 1", "new_text": "port = 2"}, attempts.retry())
    assert (workspace / "t.md").read_text() == "port = 1\nhost = x\n"


@pytest.mark.parametrize(
    ("before", "old", "new"),
    [
        ("version = 1.2.3\n", "version = 1.2.3", "version = 2.0.0"),
        ("debug: on\nlevel: 3\n", "debug: on", "debug: off"),
        ("[a]\r\nport = 1\r\nhost = x\r\n", "port = 1\r\nhost = x", "port = 2\r\nhost = y"),
    ],
)
async def test_a_value_changed_in_a_line_is_no_removed_line(workspace: Path, before: str, old: str, new: str) -> None:
    (workspace / "c.txt").write_bytes(before.encode())
    out = (
        await EditFile(Workspace(workspace)).run({"path": "c.txt", "old_text": old, "new_text": new}, tool_context())
    ).text
    assert "removed" not in out


async def test_a_large_edit_and_a_near_miss_on_a_long_file_answer_in_bounded_time(workspace: Path) -> None:
    """Replacing 2,000 lines with 2,000 others, and a near-miss old_text on a 5,000-line file, each within a few
    seconds (their reports are linear in the lines, not in their pairs)."""
    old = "".join(f"line {i} of the old block with some words\n" for i in range(2000))
    new = "".join(f"row {i} of the new block, other words\n" for i in range(2000))
    (workspace / "f.txt").write_text("head\n" + old + "tail\n")
    (workspace / "g.txt").write_text("".join(f"entry {i}: value {i * 7}\n" for i in range(5000)))
    tool = EditFile(Workspace(workspace))
    await asyncio.wait_for(tool.run({"path": "f.txt", "old_text": old, "new_text": new}, tool_context()), timeout=10)
    with pytest.raises(ToolError, match='line 18: "entry 17: value 119"'):
        await asyncio.wait_for(
            tool.run({"path": "g.txt", "old_text": "entry 17: valeu 119", "new_text": "x"}, tool_context()), timeout=10
        )


async def test_a_crlf_file_keeps_its_line_endings_through_an_append_and_an_edit(workspace: Path) -> None:
    (workspace / "w.ini").write_bytes(b"[a]\r\nport = 1\r\n")
    await AppendFile(Workspace(workspace)).run({"path": "w.ini", "content": "host = x\nmode = y"}, tool_context())
    await EditFile(Workspace(workspace)).run({"path": "w.ini", "old_text": "port = 1\nhost = x", "new_text":
                                              "port = 2\nhost = z"}, tool_context())  # fmt: skip
    assert (workspace / "w.ini").read_bytes() == b"[a]\r\nport = 2\r\nhost = z\r\nmode = y\r\n"


async def test_a_read_only_file_is_not_replaced_and_a_replaced_file_loses_set_user_id(workspace: Path) -> None:
    (workspace / "ro.txt").write_text("keep")
    (workspace / "ro.txt").chmod(0o444)
    with pytest.raises(ToolError, match="is read-only"):
        await WriteFile(Workspace(workspace)).run({"path": "ro.txt", "content": "new"}, tool_context())
    assert (workspace / "ro.txt").read_text() == "keep"
    (workspace / "tool.sh").write_text("echo")
    (workspace / "tool.sh").chmod(0o4755)
    await WriteFile(Workspace(workspace)).run({"path": "tool.sh", "content": "echo new"}, tool_context())
    assert (workspace / "tool.sh").stat().st_mode & 0o7777 == 0o755


async def test_a_name_in_another_unicode_form_is_not_made_beside_the_existing_one(workspace: Path) -> None:
    (workspace / "caf\u0065\u0301.txt").write_text("nfd")  # é as e and a combining accent
    with pytest.raises(ToolError, match="the same name in another Unicode form"):
        await WriteFile(Workspace(workspace)).run({"path": "caf\u00e9.txt", "content": "nfc"}, tool_context())
    assert len(list(workspace.glob("caf*"))) == 1


async def test_old_text_that_only_begins_like_a_number_is_not_taken_for_a_windows_line(workspace: Path) -> None:
    (workspace / "n.txt").write_text("a\nx\nb\n2: x\n")
    tool = EditFile(Workspace(workspace))
    await tool.run({"path": "n.txt", "old_text": "2: x", "new_text": "2: y"}, tool_context())
    assert (workspace / "n.txt").read_text() == "a\nx\nb\n2: y\n"  # the line that says `2: x`, not line 2
    await tool.run({"path": "n.txt", "old_text": "2: x", "new_text": "2: z"}, tool_context())  # line 2 is `x`
    assert (workspace / "n.txt").read_text() == "a\nz\nb\n2: y\n"
    with pytest.raises(ToolError, match=r"old_text is not in n\.txt"):
        await tool.run({"path": "n.txt", "old_text": "3: q", "new_text": "w"}, tool_context())
