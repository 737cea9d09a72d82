"""Workspaces the eval and the experiments run in, generated so that ground truth comes from the files."""

from __future__ import annotations

import random
from pathlib import Path

DEFAULT_FILES = {
    "errors.log": (
        "2026-09-07 10:00:01 INFO  worker 3 started\n"
        "2026-09-07 10:00:02 INFO  worker 7 started\n"
        "2026-09-07 10:00:09 WARN  queue depth 140 above soft limit 100\n"
        "2026-09-07 10:00:31 ERROR worker 7 timed out after 30000 ms\n"
        "2026-09-07 10:00:31 INFO  worker 7 restarted by the supervisor\n"
        "2026-09-07 10:01:15 WARN  queue depth 120 above soft limit 100\n"
        "2026-09-07 10:02:40 INFO  queue drained; all workers idle\n"
    ),
    "access.log": ("127.0.0.1 GET /index.html 200 512\n127.0.0.1 GET /health 200 2\n127.0.0.1 POST /jobs 201 64\n"),
    "notes.txt": "Remember to rotate your logs.\n",
}


def write_files(root: Path, files: dict[str, str]) -> Path:
    """The files in a new folder `root`. An existing folder is refused: files left there from another
    workspace would change every answer (and the ground truth with them)."""
    try:
        root.mkdir(parents=True)
    except FileExistsError as exc:
        raise FileExistsError(f"{root}: a workspace is built into a new folder, and this one exists") from exc
    for name, content in files.items():
        (root / name).write_text(content, encoding="utf-8")
    return root


def default_workspace(root: Path) -> Path:
    """errors.log (the largest, about the timeout), access.log, notes.txt (about rotating logs)."""
    return write_files(root, DEFAULT_FILES)


def generated_files(seed: int) -> dict[str, str]:
    """A different workspace: other names, the timeout and the rotation note in other files, another largest."""
    rng = random.Random(seed)
    names = rng.sample(["server.log", "jobs.log", "deploy.log", "cron.log", "audit.log"], 3)
    files = {name: "".join(f"INFO step {rng.randint(1, 999)} ok\n" for _ in range(rng.randint(2, 6))) for name in names}
    files[names[1]] += f"ERROR job {rng.randint(10, 99)} hit a timeout waiting for the lock\n"
    files["todo.md"] = "- renew the certificate\n- start rotating the logs weekly\n"
    files[names[2]] += "INFO heartbeat\n" * rng.randint(40, 60)  # the largest, and not the one with the timeout
    return files
