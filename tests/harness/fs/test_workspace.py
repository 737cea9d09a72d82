"""Confinement: no path a model can write leaves the workspace, for reads, deletes and writes alike."""

from __future__ import annotations

import os
import resource
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from harness.errors import PermanentToolError, ToolError
from harness.fs.workspace import Workspace

HOSTILE = [
    "/etc/passwd",
    "/",
    "//etc/passwd",
    "~/.ssh/id_rsa",
    "~",
    "../outside.txt",
    "../../etc/passwd",
    "a/../../outside.txt",
    "./../outside.txt",
    "sub/../../outside.txt",
    "sub/../..",
    "..",
    "../",
    "./..",
    ".",
    "./",
    "",
    "   ",
    "sub/..",  # resolves to the root itself: refused by the '..' rule before anything else
    "C:\\Windows\\win.ini",
    "C:/Windows/win.ini",
    "..\\outside.txt",
    "sub\\..\\..\\outside.txt",
    "notes.txt\x00.png",
    "a" * 300,
    "x/" * 3000,
    "link_out/secret.txt",  # a symlinked folder pointing outside
    "link_file",  # a symlink to a file outside
    "link_in",  # a symlink to a file inside: still refused
    "dangling",  # a symlink to nowhere
    "sub/link_up/outside.txt",  # a symlink inside a subfolder pointing at the parent of the root
    "sub/deeper/../../../outside.txt",
    "link_loop",  # a symlink to itself
    "sub",  # a folder is not a file
]


@pytest.fixture
def jail(tmp_path: Path) -> Workspace:
    root = tmp_path / "root"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "notes.txt").write_text("inside")
    (tmp_path / "outside.txt").write_text("SECRET")
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "secret.txt").write_text("SECRET")
    os.symlink(tmp_path / "outdir", root / "link_out")
    os.symlink(tmp_path / "outside.txt", root / "link_file")
    os.symlink(root / "notes.txt", root / "link_in")
    os.symlink(root / "missing", root / "dangling")
    os.symlink(tmp_path, root / "sub" / "link_up")
    os.symlink(root / "link_loop", root / "link_loop")
    return Workspace(root)


def outside_untouched(jail: Workspace) -> None:
    assert (jail.root.parent / "outside.txt").read_text() == "SECRET"
    assert (jail.root.parent / "outdir" / "secret.txt").read_text() == "SECRET"


def test_the_table_is_long_enough() -> None:
    assert len(HOSTILE) >= 30


@pytest.mark.parametrize("path", HOSTILE)
def test_hostile_paths_cannot_be_read(jail: Workspace, path: str) -> None:
    with pytest.raises(ToolError) as caught:
        jail.read_bytes(path, 1000)
    assert "SECRET" not in str(caught.value)


@pytest.mark.parametrize("path", HOSTILE)
def test_hostile_paths_cannot_be_deleted(jail: Workspace, path: str) -> None:
    with pytest.raises(ToolError):
        jail.delete(path)
    outside_untouched(jail)
    assert (jail.root / "notes.txt").exists() and os.path.islink(jail.root / "link_file")


@pytest.mark.parametrize("path", HOSTILE)
def test_hostile_paths_cannot_be_written(jail: Workspace, path: str) -> None:
    with pytest.raises(ToolError):
        jail.write_atomic(path, b"PWNED")
    outside_untouched(jail)
    assert (jail.root / "notes.txt").read_text() == "inside"


def test_symlinks_are_refused_as_permanent(jail: Workspace) -> None:
    for path in ("link_file", "link_in", "link_out/secret.txt", "dangling"):
        with pytest.raises(PermanentToolError, match="symbolic link"):
            jail.read_bytes(path, 100)


def test_errors_are_written_for_the_model(jail: Workspace) -> None:
    with pytest.raises(ToolError, match=r"^no such file: timeout.log. Call list_files to see what exists.$"):
        jail.read_bytes("timeout.log", 100)
    with pytest.raises(ToolError, match="relative to the workspace"):
        jail.read_bytes("/etc/passwd", 100)
    with pytest.raises(ToolError, match="would leave the workspace"):
        jail.read_bytes("../x", 100)
    with pytest.raises(ToolError, match="names the workspace itself"):
        jail.read_bytes(".", 100)


def test_ordinary_paths_work(jail: Workspace) -> None:
    assert jail.read_bytes("notes.txt", 100) == (b"inside", 6)
    assert jail.read_bytes("./notes.txt", 100)[0] == b"inside"
    assert jail.write_atomic("sub/deeper/new.txt", b"hello") is True
    assert jail.read_bytes("sub//deeper/new.txt", 100)[0] == b"hello"


def test_listing_skips_links_and_shows_sizes(jail: Workspace) -> None:
    entries, skipped = jail.entries()
    assert {e.path: e.size for e in entries} == {"notes.txt": 6} and skipped > 0


def read_in_child(root: Path, path: str) -> str:
    """Read through the workspace in a forked child that runs as `nobody` when we are root."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop privileges, read, report, exit without running pytest's teardown
        os.close(reader)
        try:
            if os.geteuid() == 0:
                os.setgroups([])
                os.setresgid(65534, 65534, 65534)
                os.setresuid(65534, 65534, 65534)
            Workspace(root).read_bytes(path, 10)
            outcome = "read it"
        except PermanentToolError as exc:
            outcome = f"permanent: {exc}"
        except BaseException as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        os.write(writer, outcome.encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        outcome = pipe.read()
    os.waitpid(pid, 0)
    return outcome


def test_a_file_the_process_may_not_open_is_a_permanent_error() -> None:
    root = Path(tempfile.mkdtemp(prefix="ws-perm-"))
    try:
        root.chmod(0o755)
        (root / "locked.txt").write_text("x")
        (root / "locked.txt").chmod(0)
        assert read_in_child(root, "locked.txt") == "permanent: permission denied: locked.txt"
    finally:
        shutil.rmtree(root)


def test_a_tree_broader_than_the_descriptor_limit_is_walked_whole(tmp_path: Path) -> None:
    """3,000 folders of one file each under a limit of 256 open descriptors: every file is walked, none is
    taken for a link (a folder waiting its turn holds no descriptor)."""
    for index in range(3000):
        (tmp_path / f"d{index:04d}").mkdir()
        (tmp_path / f"d{index:04d}" / "f.txt").write_text("x")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        walked = Workspace(tmp_path).walk(limit=100_000)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert len(walked.entries) == 3000 and walked.skipped == 0 and not walked.more


def test_nested_ignore_files_of_many_rules_cost_a_bounded_time(tmp_path: Path) -> None:
    folder = tmp_path
    for depth in range(10):
        folder = folder / f"level{depth}"
        folder.mkdir()
        (folder / ".gitignore").write_text("".join(f"pattern{depth}_{i}*.tmp\n" for i in range(1000)))
    for index in range(500):
        (folder / f"file{index}.txt").write_text("x")
    began = time.monotonic()
    walked = Workspace(tmp_path).walk(limit=100_000)
    assert len([e for e in walked.entries if e.path.endswith(".txt")]) == 500 and time.monotonic() - began < 10


def test_past_its_limit_a_walk_says_there_are_more_and_a_glob_reaches_past_it(tmp_path: Path) -> None:
    for index in range(120):
        (tmp_path / f"f{index:03d}.txt").write_text("x")
    (tmp_path / "z_last.md").write_text("x")
    space = Workspace(tmp_path)
    walked = space.walk(limit=100)
    assert walked.more and [e.path for e in walked.entries] == [f"f{i:03d}.txt" for i in range(100)]
    assert [e.path for e in space.walk(limit=100, match=lambda p: p.endswith(".md")).entries] == ["z_last.md"]
    assert not space.walk(limit=1000).more
    assert space.walk(limit=1000, over=lambda: True).stopped


def test_two_writers_of_one_file_never_remove_each_others_temp_file(tmp_path: Path) -> None:
    """Many concurrent writes of one file all land whole (no writer sweeps a live writer's temp file); the temp
    file of a process that is gone is swept by the next write."""
    (tmp_path / "a.txt").write_text("start")
    gone = tmp_path / ".harness-write-a.txt.999999999.1"
    gone.write_text("left by a killed writer")
    space = Workspace(tmp_path)
    errors: list[Exception] = []

    def write(index: int) -> None:
        try:
            space.write_atomic("a.txt", f"writer {index}\n".encode() * 1000)
        except Exception as exc:  # any failure of a concurrent write is the defect under test
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(index,)) for index in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and (tmp_path / "a.txt").read_text().startswith("writer ")
    assert not gone.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".harness-write-")]
