"""Confinement: every file tool goes through here, so no path can leave the workspace.

A path must be relative, must not contain `..`, must not name the workspace itself, and no component may
be a symbolic link. Paths are walked one component at a time with `openat` and O_NOFOLLOW, so a link
swapped in between a check and a use is refused by the kernel, not by a check that already passed.
Only plain files with a single name are read (not pipes, sockets or devices, and not a file with a
second hard link, which may be a file from outside); listings walk the tree with directory descriptors.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import time
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import ConfigError, PermanentToolError, ToolError
from harness.fs.ignore import Rule, ignored, rules_of

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
TEMP_PREFIX = ".harness-write-"  # a write's temp file: never listed, never read, swept by the next write
MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255
MAX_IGNORE_BYTES = 64 << 10
MAX_PATH_RULES = 1_000  # .gitignore rules that apply to one path: the nearest folders' last ones


@dataclass(frozen=True)
class Entry:
    path: str
    size: int
    modified: float = 0.0  # seconds since the epoch


Folder = tuple[int, str, list[Rule]]  # an open folder, its path from the root, the ignore rules over it


@dataclass
class Walk:
    entries: list[Entry] = field(default_factory=list)
    skipped: int = 0  # links, special files, files with several names
    ignored: int = 0  # files and folders a .gitignore or version control keeps out
    more: bool = False  # the walk stopped at its limit: the folder holds more files than `entries`
    stopped: bool = False  # the walk stopped when told to (its time bound, Stop) before it was done


def within(seconds: float, stop: Callable[[], bool] | None = None) -> Callable[[], bool]:
    """A walk's or a scan's `over`: true once `seconds` from now have passed, or once `stop` says so."""
    deadline = time.monotonic() + seconds
    return lambda: (stop is not None and stop()) or time.monotonic() > deadline


def folder_identity(folder: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(folder)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


# a lone surrogate other than those Python decodes a file name's undecodable bytes to (U+DC80-U+DCFF): a name
# the listing wrote with such bytes is passed back, and read, as the bytes it has on disk
FOREIGN_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def check_text(path: str) -> None:
    if "\x00" in path or FOREIGN_SURROGATE.search(path):
        raise ToolError("a path may not contain a NUL byte or an invalid character")
    if len(os.fsencode(path)) > MAX_PATH_BYTES:
        raise ToolError(f"the path is longer than {MAX_PATH_BYTES} bytes")


def unquoted(path: str) -> str:
    """A path as a listing shows it: one that begins with `"` is a JSON string (a listing writes a name holding
    anything unprintable, or beginning with a quote, that way), so it names the file it spells."""
    if len(path) >= 2 and path.startswith('"') and path.endswith('"'):
        try:
            value = json.loads(path)
        except ValueError:
            return path
        return value if isinstance(value, str) and value else path
    return path


class Workspace:
    """A folder the tools may touch. `private` folders (where a run keeps its own records: its state, its trace)
    are out of reach even when they lie inside it: a walk leaves them out, and a path through one is refused,
    whatever it is named (they are known by their device and inode, checked on each folder opened)."""

    def __init__(self, root: str | Path, private: Sequence[str | Path] = ()) -> None:
        resolved = Path(root).resolve()
        if not resolved.is_dir():
            raise ConfigError(f"workspace {root} is not a directory")
        self.root = resolved
        self.private = {identity for folder in private if (identity := folder_identity(Path(folder))) is not None}

    def components(self, path: object) -> list[str]:
        """The validated components of a model-supplied path; raises ToolError saying what is wrong."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("a path is required: give a file name relative to the workspace, e.g. notes.txt")
        path = unquoted(path)
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
        if any(len(os.fsencode(part)) > MAX_NAME_BYTES for part in parts):
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
                self.refuse_private(fd, "/".join(parts[: index + 1]))
            yield fd, parts[-1]
        finally:
            os.close(fd)

    def refuse_private(self, fd: int, path: str) -> None:
        """A folder that holds the harness's own records is refused, whatever its name."""
        if self.private:
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) in self.private:
                raise PermanentToolError(f"permission denied: {path} holds the harness's own records")

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

    def entries(self, limit: int = 1000, under: str = "") -> tuple[list[Entry], int]:
        """Plain files under the root, or under the folder `under` (sorted by path, each path relative to the
        root), at most `limit` of them, and how many other entries were left out (see `walk`)."""
        walked = self.walk(limit, under)
        return walked.entries, walked.skipped

    def walk(
        self,
        limit: int = 1000,
        under: str = "",
        match: Callable[[str], bool] | None = None,
        over: Callable[[], bool] | None = None,
    ) -> Walk:
        """The plain files under the root, or under the folder `under` (those `match` accepts, when given), the
        first `limit` of them in the order of their paths, and what was left out: links, special files and
        files with several names (`skipped`), what the repository's .gitignore files and version-control folders
        hold (`ignored`; see ignore.py), whether more files are there (`more`), and whether `over` (a time bound,
        Stop) ended the walk first (`stopped`).

        Folders are walked in the order of their names, each opened without following a link only when its turn
        comes (a folder waiting holds no descriptor), so a folder swapped for a link is never entered and a tree
        of any breadth is walked whole."""
        walked = Walk()
        parts = self.folder_parts(under)
        rules: list[Rule] = []
        for depth in range(len(parts)):  # the .gitignore files of the folders above `under` apply too
            base = "".join(f"{p}/" for p in parts[:depth])
            rules += self.ignore_rules(self.open_folder(base or "."), base)
        stack: list[tuple[str, list[Rule]]] = [("".join(f"{p}/" for p in parts), rules)]
        while stack:
            if over is not None and over():
                walked.stopped = True
                break
            prefix, rules = stack.pop()
            try:
                fd = self.open_folder(prefix.rstrip("/") or ".")
            except ToolError:
                if not prefix or prefix == "".join(f"{p}/" for p in parts):
                    raise
                walked.skipped += 1  # swapped for a link, or gone, since it was listed
                continue
            try:
                own = self.ignore_rules(fd, prefix, close=False)
                self.scan(fd, prefix, (rules + own)[-MAX_PATH_RULES:], walked, stack, limit, match)
            finally:
                os.close(fd)
            if len(walked.entries) >= limit:
                walked.more = walked.more or bool(stack)
                break
        walked.entries.sort(key=lambda e: e.path)
        walked.more = walked.more or len(walked.entries) > limit
        del walked.entries[limit:]
        return walked

    def ignore_rules(self, fd: int, base: str, close: bool = True) -> list[Rule]:
        """The rules of the .gitignore in the folder open at `fd` (a plain file of one name, read bounded)."""
        try:
            info = self.lstat(fd, ".gitignore")
            if info is None or not stat.S_ISREG(info.st_mode) or info.st_nlink > 1 or info.st_size > MAX_IGNORE_BYTES:
                return []
            file_fd = os.open(".gitignore", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
            with os.fdopen(file_fd, "rb") as handle:
                return rules_of(handle.read(MAX_IGNORE_BYTES).decode("utf-8", errors="replace"), base)
        except OSError:
            return []
        finally:
            if close:
                os.close(fd)

    def is_folder(self, path: str) -> bool:
        """Whether the path names a folder of the workspace (the root for `.`); a ToolError when it names
        nothing there, or a link."""
        parts = self.folder_parts(path)
        if not parts:
            return True
        joined = "/".join(parts)
        with self.parent(joined) as (fd, name):
            info = self.refuse_links(fd, name, joined)
        if info is None:
            raise ToolError(f"no such file or folder: {joined}. Call list_files to see what exists.")
        return stat.S_ISDIR(info.st_mode)

    def folder_parts(self, path: str) -> list[str]:
        """The components of a folder a model names (`src`, `src/`, `./src`; `.` or nothing for the root)."""
        if not isinstance(path, str):
            raise ToolError("a folder path must be a string, e.g. src or . for the whole workspace")
        trimmed = path.strip().rstrip("/")
        return [] if trimmed in ("", ".") else self.components(trimmed)

    def open_folder(self, path: str) -> int:
        """A descriptor of a folder of the workspace (the root for `.`), reached without following links."""
        parts = self.folder_parts(path)
        if not parts:
            return os.open(self.root, DIR_FLAGS)
        with self.parent("/".join(parts)) as (fd, name):
            try:
                opened = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise self.explain(exc, "/".join(parts), folder=True) from exc
        try:
            self.refuse_private(opened, "/".join(parts))
        except ToolError:
            os.close(opened)
            raise
        return opened

    def scan(
        self,
        fd: int,
        prefix: str,
        rules: list[Rule],
        walked: Walk,
        stack: list[tuple[str, list[Rule]]],
        limit: int,
        match: Callable[[str], bool] | None,
    ) -> None:
        """One folder's entries, in the order of their names: its files taken, its folders queued (by path)."""
        with os.scandir(fd) as items:
            names = sorted(item.name for item in items)
        folders = []
        for name in names:
            if len(walked.entries) >= limit:
                walked.more = True
                return
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:  # gone since it was listed
                walked.skipped += 1
                continue
            path, folder = f"{prefix}{name}", stat.S_ISDIR(info.st_mode)
            if name.startswith(TEMP_PREFIX):
                continue  # a write in progress, or one a kill cut short
            if ignored(path, folder, rules) or (folder and (info.st_dev, info.st_ino) in self.private):
                walked.ignored += 1
            elif folder:
                folders.append(f"{path}/")
            elif stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                if match is None or match(path):
                    walked.entries.append(Entry(path, info.st_size, info.st_mtime))
            else:
                walked.skipped += 1
        stack.extend((folder, rules) for folder in reversed(folders))  # popped in the order of their names

    def holds(self, fd: int, name: str, path: str, data: bytes) -> bool:
        """Whether the file holds exactly `data`; False when it cannot be read as it was (another writer replaced
        it meanwhile: the write goes ahead, replacing the name whatever it now is)."""
        try:
            return self.same_content(fd, name, path, data)
        except ToolError:
            return False

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
            if unchanged and self.holds(fd, name, path, data):
                return False
            if info is not None and not info.st_mode & stat.S_IWUSR:
                raise PermanentToolError(f"permission denied: {path} is read-only; it was not changed")
            if info is None:
                self.refuse_other_form(fd, name, path)
            # a new file is never made set-user-ID or set-group-ID, whatever the one it replaces was
            mode = stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID) if info is not None else 0o644
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

    @staticmethod
    def refuse_other_form(fd: int, name: str, path: str) -> None:
        """A new file whose name is an existing one's in another Unicode form (NFC and NFD spell `é` apart) is not
        made beside it: a person sees one name twice, and tools would read one and write the other."""
        wanted = unicodedata.normalize("NFC", name)
        if wanted == name and name.isascii():
            return
        with os.scandir(fd) as items:
            for item in items:
                if item.name != name and unicodedata.normalize("NFC", item.name) == wanted:
                    raise ToolError(f"{path} is written {item.name!r} in this folder (the same name in another "
                                    "Unicode form): use that name")  # fmt: skip

    def entry(self, path: str) -> Entry | None:
        """The file at the path as a listing gives it (None when nothing is there), reached without following
        links; a ToolError when it is a folder, a link, a special file or a file with several names."""
        with self.parent(path) as (fd, name):
            info = self.refuse_links(fd, name, path)
        if info is None:
            return None
        self.regular(info, path)
        return Entry("/".join(self.components(path)), info.st_size, info.st_mtime)

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
        os.close(self.open_folder(path))
        return self.root.joinpath(*self.folder_parts(path))


def sweep(fd: int, prefix: str) -> None:
    """Remove the temp files earlier writes left (names starting with `prefix`) in the folder open at `fd`: those
    of a process that is gone (a kill cut its write short), never one another writer is still writing."""
    with os.scandir(fd) as items:
        stale = [item.name for item in items if item.name.startswith(prefix) and not writing(item.name)]
    for name in stale:
        with suppress(OSError):
            os.unlink(name, dir_fd=fd)


def writing(name: str) -> bool:
    """Whether the process a temp file's name names (`.harness-write-NAME.PID.NS`) is still alive."""
    try:
        pid = int(name.rsplit(".", 2)[-2])
    except (ValueError, IndexError):
        return False
    if pid == os.getpid():
        return True  # this process's own write in progress (a concurrent tool call)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
