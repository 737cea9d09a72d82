"""Files a person names to the harness: a plain UTF-8 file within its bound is read; a FIFO, a device, a folder,
an oversized or non-UTF-8 file is refused naming it, at once (a FIFO never blocks the process)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.app.userfiles import check_appendable, read_text
from harness.errors import ConfigError


def test_a_plain_file_within_its_bound_is_read(tmp_path: Path) -> None:
    path = tmp_path / "commands.toml"
    path.write_text("name = 'é'\n", encoding="utf-8")
    assert read_text(path, 100, "commands file") == "name = 'é'\n"
    with pytest.raises(FileNotFoundError):
        read_text(tmp_path / "missing.toml", 100, "commands file")


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: os.mkfifo(p), "not a regular file"),  # opening it for reading would wait for a writer
        (lambda p: p.mkdir(), "not a regular file"),
        (lambda p: p.write_bytes(b"x" * 101), "is 101 bytes; at most 100 are read"),
        (lambda p: p.write_bytes(b"caf\xe9"), "not UTF-8 text"),
    ],
)
def test_what_is_not_a_small_plain_text_file_is_refused_naming_it(tmp_path: Path, make: object, said: str) -> None:
    path = tmp_path / "state.json"
    make(path)  # type: ignore[operator]
    with pytest.raises(ConfigError, match=said) as caught:
        read_text(path, 100, "state file")
    assert str(path) in str(caught.value) and "state file" in str(caught.value)


def test_a_device_is_refused_before_it_is_read() -> None:
    with pytest.raises(ConfigError, match="not a regular file"):
        read_text("/dev/zero", 100, "trace")


def test_a_trace_is_appended_only_to_a_plain_file_or_a_new_one_in_a_folder_that_exists(tmp_path: Path) -> None:
    assert check_appendable(tmp_path / "new.jsonl", "trace") == tmp_path / "new.jsonl"
    with pytest.raises(ConfigError, match="the folder for the trace does not exist"):
        check_appendable(tmp_path / "no" / "t.jsonl", "trace")
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ConfigError, match="not a regular file"):
        check_appendable(tmp_path / "pipe", "trace")
