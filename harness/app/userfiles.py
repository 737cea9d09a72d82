"""Files a person names to the harness (a state file, a commands file, a trace): plain files only, read bounded.

A FIFO would block the process on open or read, a device may act on open or never end (/dev/zero), and a
file of gigabytes would fill memory: each is refused with a message naming the file, before it is used.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from harness.errors import ConfigError


def read_text(path: str | Path, limit: int, what: str) -> str:
    """The text of a plain file of at most `limit` bytes; ConfigError naming it otherwise (FileNotFoundError
    passes through, for the caller to word)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(f"{path}: cannot open the {what} ({exc.strerror or exc})") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: the {what} is not a regular file (a pipe, socket, device or folder)")
        if info.st_size > limit:
            raise ConfigError(f"{path}: the {what} is {info.st_size:,} bytes; at most {limit:,} are read")
        data = os.read(fd, limit + 1)
    except OSError as exc:  # a file the kernel refuses to read (/proc/self/mem)
        raise ConfigError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from exc
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ConfigError(f"{path}: the {what} is over {limit:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: the {what} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def check_appendable(path: str | Path, what: str) -> Path:
    """A path the harness may append to: absent (its folder must exist) or a plain file."""
    target = Path(path)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        if not target.parent.is_dir():
            raise ConfigError(f"{target}: the folder for the {what} does not exist") from None
        return target
    except OSError as exc:
        raise ConfigError(f"{target}: cannot use it for the {what} ({exc.strerror or exc})") from exc
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{target}: the {what} is not a regular file (a pipe, socket, device or folder)")
    return target
