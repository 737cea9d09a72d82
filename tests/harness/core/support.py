"""What the loop's tests share: a run's state, the file tools over a workspace, and two scripted plans."""

from __future__ import annotations

from pathlib import Path

from harness.core.config import ALL_TOOLS
from harness.core.limits import Limits
from harness.core.registry import Registry
from harness.core.state import RunState, new_run
from harness.fs.workspace import Workspace
from harness.tools.catalogue import catalogue
from tests.harness.helpers import calls, script, scripted


def state(prompt: str = "Which file mentions a timeout?", **limits: object) -> RunState:
    return new_run(prompt, system="be brief", limits=Limits(**limits))  # type: ignore[arg-type]


def files(workspace: Path) -> Registry:
    return catalogue(Workspace(workspace), names=ALL_TOOLS)


PLAN = script(
    calls(("c1", "list_files", {})),
    calls(("c2", "read_file", {"path": "errors.log"})),
    "errors.log mentions a timeout.",
)


DESTRUCTIVE = scripted(
    lambda turn, text: [
        calls(("c1", "list_files", {})),
        calls(("c2", "delete_file", {"path": "access.log"})),
        "I did not delete anything." if "declined" in text else "Deleted access.log to free space.",
    ][turn]
)
