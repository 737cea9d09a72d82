"""Confinement: every file tool goes through here, so no path can leave the workspace.

A path must be relative, must not contain `..`, must not name the workspace itself, and no component may
be a symbolic link. Paths are walked one component at a time with `openat` and O_NOFOLLOW, so a link
swapped in between a check and a use is refused by the kernel, not by a check that already passed.
Only plain files with a single name are read (not pipes, sockets or devices, and not a file with a
second hard link, which may be a file from outside); listings walk the tree with directory descriptors.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError, PermanentToolError, ToolError
from wire.text import LONE_SURROGATE

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
TEMP_PREFIX = ".harness-write-"  # a write's temp file: never listed, never read, swept by the next write
MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255


@dataclass(frozen=True)
class Entry:
    path: str
    size: int


def check_text(path: str) -> None:
    if "\x00" in path or LONE_SURROGATE.search(path):
        raise ToolError("a path may not contain a NUL byte or an invalid character")
    if len(path.encode()) > MAX_PATH_BYTES:
        raise ToolError(f"the path is longer than {MAX_PATH_BYTES} bytes")


class Workspace:
    def __init__(self, root: str | Path) -> None:
        resolved = Path(root).resolve()
        if not resolved.is_dir():
            raise ConfigError(f"workspace {root} is not a directory")
        self.root = resolved

    def components(self, path: object) -> list[str]:
        """The validated components of a model-supplied path; raises ToolError saying what is wrong."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("a path is required: give a file name relative to the workspace, e.g. notes.txt")
        check_text(path)
        if path.endswith("/"):
            raise ToolError(f"{path} ends with '/', so it names a folder; name a file, e.g. notes.txt")
        if path.startswith(("/", "~")) or (len(path) > 1 and path[1] == ":"):
            raise ToolError(f"{path} is not allowed: use a path relative to the workspace, e.g. notes.txt")
        if "\\" in path:
            raise ToolError(f"{path} is not allowed: use '/' between folders")
        parts = [part for part in path.split("/") if part not in ("", ".")]
        if ".." in parts:
            raise ToolError(f"{path} is not allowed: '..' would leave the workspace")
        if not parts:
            raise ToolError(f"{path} names the workspace itself; name a file inside it")
        if any(len(part.encode()) > MAX_NAME_BYTES for part in parts):
            raise ToolError(f"a name in {path} is longer than {MAX_NAME_BYTES} bytes")
        if parts[-1].startswith(TEMP_PREFIX):
            raise ToolError(f"no such file: {path}. Call list_files to see what exists.")
        return parts

    @contextmanager
    def parent(self, path: str) -> Iterator[tuple[int, str]]:
        """An open descriptor of the path's folder (walked without following links) and the final name."""
        parts = self.components(path)
        fd = os.open(self.root, DIR_FLAGS)
        try:
            for index, part in enumerate(parts[:-1]):
                try:
                    next_fd = os.open(part, DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise self.explain(exc, "/".join(parts[: index + 1]), folder=True) from exc
                os.close(fd)
                fd = next_fd
            yield fd, parts[-1]
        finally:
            os.close(fd)

    def explain(self, exc: OSError, path: str, folder: bool = False) -> ToolError:
        """Translate an OS error into words the model can act on (or a permanent refusal)."""
        if exc.errno in (errno.ELOOP, errno.EMLINK) or self.is_link(path):
            return PermanentToolError(f"permission denied: {path} is a symbolic link, and links are never followed")
        if exc.errno == errno.ENOENT:
            kind = "folder" if folder else "file"
            return ToolError(f"no such {kind}: {path}. Call list_files to see what exists.")
        if exc.errno == errno.ENOTDIR:
            return ToolError(f"{path} is not a folder. Call list_files to see what exists.")
        if exc.errno == errno.EISDIR:
            return ToolError(f"{path} is a folder, not a file. Call list_files to see the files in it.")
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return PermanentToolError(f"permission denied: {path}")
        return ToolError(f"{path}: {exc.strerror or exc}")

    def is_link(self, path: str) -> bool:
        try:
            return (self.root / path).is_symlink()
        except OSError:
            return False

    def refuse_links(self, fd: int, name: str, path: str) -> os.stat_result | None:
        """lstat of the final component (None if absent); a link there is refused."""
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self.explain(exc, path) from exc
        if stat.S_ISLNK(info.st_mode):
            raise PermanentToolError(f"permission denied: {path} is a symbolic link, and links are never followed")
        return info

    def regular(self, info: os.stat_result, path: str) -> None:
        """Only a plain file with one name is read: a FIFO would block, a device may act on open, and a second
        hard link may be a file from outside the workspace."""
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{path} is a folder, not a file. Call list_files to see the files in it.")
        if not stat.S_ISREG(info.st_mode):
            raise PermanentToolError(f"permission denied: {path} is not a regular file (a pipe, socket or device)")
        if info.st_nlink > 1:
            raise PermanentToolError(
                f"permission denied: {path} has {info.st_nlink} hard links; a file linked from elsewhere may hold "
                "data from outside the workspace, so it is not read"
            )

    def open_regular(self, fd: int, name: str, path: str) -> tuple[int, os.stat_result]:
        """A descriptor of a plain file, checked before it is opened and again (same inode) once it is."""
        info = self.refuse_links(fd, name, path)
        if info is None:
            raise ToolError(f"no such file: {path}. Call list_files to see what exists.")
        self.regular(info, path)
        try:
            file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
        except OSError as exc:
            raise self.explain(exc, path) from exc
        opened = os.fstat(file_fd)
        if (opened.st_ino, opened.st_dev) != (info.st_ino, info.st_dev):  # swapped between the check and the open
            os.close(file_fd)
            raise PermanentToolError(f"permission denied: {path} changed while it was being opened")
        return file_fd, opened

    def read_bytes(self, path: str, limit: int) -> tuple[bytes, int]:
        """Up to `limit` bytes of a regular file, and its full size."""
        with self.parent(path) as (fd, name):
            file_fd, info = self.open_regular(fd, name, path)
            with os.fdopen(file_fd, "rb") as handle:
                return handle.read(limit), info.st_size

    def delete(self, path: str) -> None:
        with self.parent(path) as (fd, name):
            info = self.refuse_links(fd, name, path)
            if info is None:
                raise ToolError(f"no such file: {path}. Call list_files to see what exists.")
            if stat.S_ISDIR(info.st_mode):
                raise ToolError(f"{path} is a folder; only files can be deleted")
            try:
                os.unlink(name, dir_fd=fd)  # removes the name only: never what a link points at
            except OSError as exc:
                raise self.explain(exc, path) from exc

    def entries(self, limit: int = 1000) -> tuple[list[Entry], int]:
        """Plain files under the root (sorted by path) and how many other entries were left out.

        The tree is walked with directory descriptors, each opened without following links, so a folder
        swapped for a link during the walk is never entered."""
        found: list[Entry] = []
        skipped = 0
        stack = [(os.open(self.root, DIR_FLAGS), "")]
        while stack:
            fd, prefix = stack.pop()
            try:
                skipped += self.scan(fd, prefix, found, stack, limit)
            finally:
                os.close(fd)
        return sorted(found, key=lambda e: e.path)[:limit], skipped

    def scan(self, fd: int, prefix: str, found: list[Entry], stack: list[tuple[int, str]], limit: int) -> int:
        skipped = 0
        with os.scandir(fd) as items:
            for item in items:
                if len(found) >= limit:
                    return skipped
                try:
                    info = os.stat(item.name, dir_fd=fd, follow_symlinks=False)
                    if stat.S_ISDIR(info.st_mode):
                        stack.append((os.open(item.name, DIR_FLAGS, dir_fd=fd), f"{prefix}{item.name}/"))
                        continue
                except OSError:  # gone, or swapped for a link since it was listed
                    skipped += 1
                    continue
                if item.name.startswith(TEMP_PREFIX):
                    continue  # a write in progress, or one a kill cut short
                if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                    found.append(Entry(f"{prefix}{item.name}", info.st_size))
                else:
                    skipped += 1
        return skipped

    def same_content(self, fd: int, name: str, path: str, data: bytes) -> bool:
        file_fd, _ = self.open_regular(fd, name, path)
        with os.fdopen(file_fd, "rb") as handle:
            return handle.read(len(data) + 1) == data

    def write_atomic(self, path: str, data: bytes) -> bool:
        """Replace `path` with `data` via a temp file and a rename in the same folder; False if it already held it.

        A kill at any instant leaves the old file or the new one. The folder must already exist.
        """
        with self.parent(path) as (fd, name):
            info = self.refuse_links(fd, name, path)
            if info is not None and stat.S_ISDIR(info.st_mode):
                raise ToolError(f"{path} is a folder, not a file")
            if info is not None and not stat.S_ISREG(info.st_mode):
                raise PermanentToolError(f"permission denied: {path} is not a regular file (a pipe, socket or device)")
            unchanged = info is not None and info.st_nlink == 1 and info.st_size == len(data)
            if unchanged and self.same_content(fd, name, path, data):
                return False
            mode = stat.S_IMODE(info.st_mode) if info is not None else 0o644
            sweep(fd, f"{TEMP_PREFIX}{name}.")  # what an earlier write of this file left when it was killed
            temp = f"{TEMP_PREFIX}{name}.{os.getpid()}.{time.monotonic_ns()}"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                temp_fd = os.open(temp, flags, mode, dir_fd=fd)
                with os.fdopen(temp_fd, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
                os.fsync(fd)
            except OSError as exc:
                with suppress(OSError):
                    os.unlink(temp, dir_fd=fd)
                raise self.explain(exc, path) from exc
        return True

    def exists(self, path: str) -> bool:
        """Whether anything is at the path (a link included), without following links."""
        try:
            with self.parent(path) as (fd, name):
                return self.lstat(fd, name) is not None
        except ToolError:
            return False

    @staticmethod
    def lstat(fd: int, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def folder(self, path: str) -> Path:
        """The absolute path of a folder inside the workspace, reached without following links."""
        path = path.rstrip("/")
        if path in ("", "."):
            return self.root
        with self.parent(path) as (fd, name):
            try:
                os.close(os.open(name, DIR_FLAGS, dir_fd=fd))
            except OSError as exc:
                raise self.explain(exc, path, folder=True) from exc
        return self.root.joinpath(*self.components(path))


def sweep(fd: int, prefix: str) -> None:
    """Remove the temp files of earlier writes (names starting with `prefix`) from the folder open at `fd`."""
    with os.scandir(fd) as items:
        stale = [item.name for item in items if item.name.startswith(prefix)]
    for name in stale:
        with suppress(OSError):
            os.unlink(name, dir_fd=fd)
