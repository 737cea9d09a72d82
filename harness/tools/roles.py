"""What a control may know of a tool beyond its definition: the workspace it works in and which of its
parameters carries a file, a folder, a pattern or a symbol. A tool takes a role by having the attribute; a
control asks with isinstance, so a tool of the user's own with the same attributes is treated alike."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Protocol, runtime_checkable

from harness.fs.workspace import Workspace


@runtime_checkable
class OverWorkspace(Protocol):
    """A tool over a workspace: the one way a control reaches the files a tool sees or changes."""

    workspace: Workspace


@runtime_checkable
class ReadsOneFile(OverWorkspace, Protocol):
    """A tool whose `path_parameter` names one existing file of its workspace (a read-only one shows it)."""

    path_parameter: str


@runtime_checkable
class ChangesWhatItRead(OverWorkspace, Protocol):
    """A tool that changes a file of its workspace in place; `reads_first` names the file a call changes, which
    must have been read first (None when the call names none)."""

    replaces_whole: bool  # a call gives the file's whole new content (a write), not one exact replacement

    def reads_first(self, args: dict[str, Any]) -> str | None: ...

    def unread_advice(self, offered: Collection[str]) -> str: ...  # what to call next, of the tools offered


@runtime_checkable
class ListsFolders(Protocol):
    """A tool that lists the files of a folder its `folder_parameter` names (the whole workspace by default)."""

    folder_parameter: str


@runtime_checkable
class SearchesText(Protocol):
    """A tool whose `pattern_parameter` is the text it looks for in the files."""

    pattern_parameter: str


@runtime_checkable
class NamesSymbol(Protocol):
    """A tool whose `symbol_parameter` is a name the code defines."""

    symbol_parameter: str


class OnlyLooks:
    """A tool that only reads: it never waits for approval, and a call made again with its idempotency key may
    be answered with the earlier result (plain class attributes, not fields: no caller sets them)."""

    read_only = True
    needs_approval = False
    honours_idempotency_key = True
