"""The workspace index by folder size: its build time and memory, and the harness's own time per turn with the
small-model controls beside the same run with none, over generated projects of 15 to 200,000 files.

Each size is measured in a process of its own (its peak memory is that process's), over a project written to
a scratch folder: the build (walk, read, rank, and the code's symbols), then a scripted run of a listing, a
search, a read and an answer, timed less the model's own time, under `tiny` and under no controls.
"""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evals.project import project
from evals.workspace import write_files
from harness.app.client import FunctionModel
from harness.controls import TINY, build
from harness.controls.profiles import fitted
from harness.core.limits import Limits
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.protocols import ModelReply, ModelRequest
from harness.core.registry import Registry
from harness.core.state import new_run
from harness.fs.workspace import Workspace
from harness.index.index import WorkspaceIndex
from harness.prompts import SYSTEM_PROMPT
from harness.tools.catalogue import reading_tools
from tests.harness.helpers import calls
from wire.types import AssistantMessage, usage_of

SIZES = (15, 1_000, 20_000, 200_000)
RUNS = 3


def measure(size: int) -> dict[str, Any]:
    """Build the index of a generated project of `size` files and time a run over it, in this process."""
    with tempfile.TemporaryDirectory() as scratch:
        made = project(7, size)
        root = write_files(Path(scratch) / "ws", made.files, made.mtimes)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        began = time.perf_counter()
        index = WorkspaceIndex(Workspace(root))
        built = index.build()
        symbols_began = time.perf_counter()
        index.symbols()
        done = time.perf_counter()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        timings = {name: asyncio.run(per_turn(root, index, made.planted.timeout, profile))
                   for name, profile in (("tiny", True), ("none", False))}  # fmt: skip
    return {
        "files": built.files,
        "ranked": built.read,
        "build_s": round(symbols_began - began, 3),
        "symbols_s": round(done - symbols_began, 3),
        "memory_mb": round((peak - before) / 1024, 1),
        "partial": built.stopped,
        **timings,
    }


async def per_turn(root: Path, index: WorkspaceIndex, path: str, controls: bool) -> float:
    """The harness's own milliseconds per turn (wall less the model) over a 4-turn run, median of RUNS."""
    space = Workspace(root)
    replies: list[AssistantMessage] = [
        calls(("l", "list_files", {})),
        calls(("s", "search", {"pattern": "timeout"})),
        calls(("r", "read_file", {"path": path})),
        {"role": "assistant", "content": f"{path} reports a timeout."},
    ]
    profile = fitted(TINY.controls, {"context": 8192, "tool_parameters": True}) if controls else ()
    samples = []
    for _ in range(RUNS):
        model = Scripted(replies)
        tools = Registry(reading_tools(space, index=index))
        options = RunOptions(FunctionModel(model.reply), controls=build_profile(profile), index=index)
        began = time.perf_counter()
        state = await run(new_run("Which log reports a timeout?", system=SYSTEM_PROMPT, limits=Limits(max_turns=6)),
                          tools, options)  # fmt: skip
        samples.append(((time.perf_counter() - began) - model.spent) * 1000 / max(1, state.turns))
    return round(sorted(samples)[len(samples) // 2], 2)


class Scripted:
    """Replies in turn from a list, adding up its own time (not the harness's)."""

    def __init__(self, replies: list[AssistantMessage]) -> None:
        self.replies, self.seen, self.spent = replies, 0, 0.0

    def reply(self, request: ModelRequest) -> ModelReply:
        began = time.perf_counter()
        message = self.replies[min(self.seen, len(self.replies) - 1)]
        self.seen += 1
        self.spent += time.perf_counter() - began
        return ModelReply(message, usage_of(100, 10), "tool_calls" if message.get("tool_calls") else "stop")


def build_profile(specs: Any) -> list[Any]:
    from harness.core.config import Profile

    return build(Profile("tiny", tuple(specs))) if specs else []


def main(sizes: tuple[int, ...] = SIZES) -> list[str]:
    lines = ["workspace index by folder size (each size in a process of its own)",
             f"  {'files':>8} {'index build':>12} {'symbols':>9} {'memory':>9} {'harness ms/turn, tiny':>22} "
             f"{'no controls':>12}"]  # fmt: skip
    for size in sizes:
        done = subprocess.run([sys.executable, "-m", "benchmarks.index_scale", str(size)], capture_output=True,
                              text=True, check=False, timeout=3600)  # fmt: skip
        if done.returncode != 0:
            lines.append(f"  {size:>8,} failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        facts = json.loads(done.stdout.strip().splitlines()[-1])
        partial = f"  (partial: {facts['partial']})" if facts["partial"] else ""
        lines.append(
            f"  {facts['files']:>8,} {facts['build_s']:>10.2f} s {facts['symbols_s']:>7.2f} s "
            f"{facts['memory_mb']:>6.0f} MB {facts['tiny']:>19.1f} ms {facts['none']:>9.1f} ms{partial}"
        )
    return lines


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]))))
