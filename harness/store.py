"""Run states on disk: one JSON file per run, written atomically, and a lock so one process runs a run.

Save writes a temp file in the same folder, fsyncs it, renames it over the old file and fsyncs the
folder: a kill at any instant leaves the previous state or the new one, never a torn file.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.errors import RunInUse, RunNotFound, StateFileError
from harness.state import FORMAT_VERSION, RunState

SAFE_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class FileStore:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def path(self, run_id: str) -> Path:
        if not SAFE_RUN_ID.match(run_id) or ".." in run_id:
            raise RunNotFound(f"invalid run id {run_id!r}")
        return self.directory / f"{run_id}.json"

    def save(self, state: RunState) -> None:
        target = self.path(state.run_id)
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=self.directory, prefix=f".{state.run_id}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(state.to_json())
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def load(self, run_id: str) -> RunState:
        path = self.path(run_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise RunNotFound(f"no run {run_id!r} in {self.directory}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise StateFileError(path, f"cannot read the state file ({exc})") from exc
        return parse_state(path, text)

    @contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        """Hold the run for this process; a second holder gets RunInUse. The kernel drops it if we die."""
        self.directory.mkdir(parents=True, exist_ok=True)
        lock_path = self.directory / f"{run_id}.lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise RunInUse(f"run {run_id} is in use by another process ({lock_path} is locked)") from exc
            yield
        finally:
            os.close(fd)


def parse_state(path: Path, text: str) -> RunState:
    try:
        raw: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateFileError(path, f"not valid JSON ({exc.msg} at line {exc.lineno}); the file is corrupt") from exc
    if not isinstance(raw, dict):
        raise StateFileError(path, "not a run state (expected a JSON object)")
    version = raw.get("format_version")
    if version != FORMAT_VERSION:
        raise StateFileError(path, f"unknown state format version {version!r}; this harness reads {FORMAT_VERSION}")
    try:
        return RunState.from_dict(raw)
    except (TypeError, KeyError, ValueError) as exc:
        raise StateFileError(path, f"not a valid run state ({exc})") from exc
