"""Ground truth, computed from the workspace's files (sizes, contents), never typed in by hand."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from evals.suite import Check


@dataclass(frozen=True)
class Truth:
    """What a right answer contains: the files it must name (any one of), a count, or a quotation."""

    names: frozenset[str] = frozenset()
    count: int | None = None
    quote: str | None = None
    expect_yes: bool | None = None


def files_of(workspace: Path) -> dict[str, str]:
    return {
        p.relative_to(workspace).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def truth_for(check: Check, workspace: Path) -> Truth:
    files = files_of(workspace)
    if check.kind in ("names_file", "yes_names_file"):
        pattern = re.compile(check.files_matching or "", re.IGNORECASE)
        matching = frozenset(name for name, text in files.items() if pattern.search(text))
        return Truth(names=matching, expect_yes=bool(matching) if check.kind == "yes_names_file" else None)
    if check.kind == "file_count":
        return Truth(count=len(files))
    if check.kind == "quotes_file":
        return Truth(quote=files[check.path or ""].strip())
    if check.kind == "largest_file":
        sizes = {name: (workspace / name).stat().st_size for name in files}
        top = max(sizes.values())
        return Truth(names=frozenset(n for n, s in sizes.items() if s == top))
    return Truth(names=frozenset(files))
