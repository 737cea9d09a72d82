"""Run states on disk: one JSON file per run, written atomically, and a lock so one process runs a run.

Save writes a temp file in the same folder, fsyncs it, renames it over the old file and fsyncs the
folder: a kill at any instant leaves the previous state or the new one, never a torn file (the temp file a
kill leaves is removed when the run is next locked). A run id is
checked before any path is built from it, so no id can put a file outside the state folder. OS errors
are translated here into StateError with the path and what to do.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from harness.app.userfiles import read_text
from harness.core.state import FORMAT_VERSION, RunState, state_from
from harness.errors import ConfigError, InvalidState, RunInUse, RunNotFound, StateError, StateFileError

MAX_STATE_BYTES = 256_000_000  # a run's transcript and its sub-agents' runs
SAFE_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_run_id(run_id: str) -> str:
    if not SAFE_RUN_ID.match(run_id) or ".." in run_id:
        raise StateError(
            f"invalid run id {run_id!r}: use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return run_id


class FileStore:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def path(self, run_id: str) -> Path:
        return self.directory / f"{check_run_id(run_id)}.json"

    def folder(self) -> Path:
        """The state folder, created if needed; a file in its place or no permission is a clear error."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if not os.access(self.directory, os.W_OK | os.X_OK):
                raise PermissionError(f"no permission to write in {self.directory}")
        except (FileExistsError, NotADirectoryError) as exc:
            raise StateError(f"the state folder {self.directory} is a file, not a folder") from exc
        except OSError as exc:
            raise StateError(f"cannot use the state folder {self.directory}: {exc.strerror or exc}") from exc
        return self.directory

    def exists(self, run_id: str) -> bool:
        return self.path(run_id).exists()

    def save(self, state: RunState) -> None:
        target = self.path(state.run_id)
        folder = self.folder()
        data = state.to_json()
        try:
            fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{state.run_id}.", suffix=".tmp")
        except OSError as exc:
            raise StateError(f"cannot write in {folder}: {exc.strerror or exc}") from exc
        try:
            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def load(self, run_id: str) -> RunState:
        path = self.path(run_id)
        try:
            text = read_text(path, MAX_STATE_BYTES, "state file")
        except FileNotFoundError as exc:
            raise RunNotFound(f"no run {run_id!r} in {self.directory}") from exc
        except ConfigError as exc:
            raise StateFileError(path, str(exc).removeprefix(f"{path}: ")) from exc
        return parse_state(path, text)

    def sweep(self, run_id: str) -> None:
        """Remove what a save of this run left when its process was killed mid-write (the lock is ours, so no
        save of it is under way)."""
        for leftover in self.directory.glob(f".{check_run_id(run_id)}.*.tmp"):
            with suppress(OSError):
                leftover.unlink()

    @contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        """Hold the run for this process; a second holder gets RunInUse. The kernel drops it if we die."""
        lock_path = self.folder() / f"{check_run_id(run_id)}.lock"
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            raise StateError(f"cannot create the lock {lock_path}: {exc.strerror or exc}") from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise RunInUse(f"run {run_id} is in use by another process ({lock_path} is locked)") from exc
            self.sweep(run_id)
            yield
        finally:
            os.close(fd)


def parse_state(path: Path, text: str) -> RunState:
    try:
        raw: Any = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        problem = f"{exc.msg} at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise StateFileError(path, f"not valid JSON ({problem}); the file is corrupt") from exc
    if not isinstance(raw, dict):
        raise StateFileError(path, "not a run state (expected a JSON object)")
    version = raw.get("format_version")
    if version not in range(1, FORMAT_VERSION + 1):
        raise StateFileError(path, f"unknown state format version {version!r}; this harness reads {FORMAT_VERSION}")
    try:
        return state_from(raw)
    except InvalidState as exc:
        raise StateFileError(path, f"field {exc.where}: {exc.problem}") from exc
    except RecursionError as exc:
        raise StateFileError(path, "nested too deeply to be a run state") from exc
