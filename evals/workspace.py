"""Workspaces the eval and the experiments run in, generated so that ground truth comes from the files."""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
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


def write_files(root: Path, files: Mapping[str, str | bytes], mtimes: Mapping[str, float] | None = None) -> Path:
    """The files in a new folder `root` (text as UTF-8, bytes as they are, with the modification times given).
    An existing folder is refused: files left there from another workspace would change every answer (and the
    ground truth with them)."""
    try:
        root.mkdir(parents=True)
    except FileExistsError as exc:
        raise FileExistsError(f"{root}: a workspace is built into a new folder, and this one exists") from exc
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (root / name).write_bytes(content)
        else:
            (root / name).write_text(content, encoding="utf-8")
    for name, when in (mtimes or {}).items():
        os.utime(root / name, (when, when))
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


FOLDERS = ("logs", "docs", "config", "archive", "services", "reports")
LOG_NAMES = (
    "server", "worker", "cron", "deploy", "audit", "backup", "api", "db", "mail", "auth", "billing",
    "scheduler", "gateway", "queue", "search", "cache", "upload", "export",
)  # fmt: skip
OTHER_NAMES = ("inventory.csv", "settings.ini", "changelog.md", "team.txt", "metrics.csv", "readme.md", "hosts.yaml")
EVENTS = ("request served in {n} ms", "user {n} signed in", "cache hit ratio {n}%", "job {n} finished", "disk at {n}%")
TIMEOUT_LINES = (
    "ERROR upstream call to the payment service timed out after {n} s",
    "WARN job {n} hit a timeout waiting for the database lock",
    "ERROR request {n} failed: read timeout from the storage node",
)
ROTATION_LINES = (
    "- set up weekly log rotation on the web hosts",
    "Reminder: rotate the logs before they fill the disk",
)
QUOTES = (
    "Order more coffee filters.\nCall the landlord about the heating.\n",
    "Renew the TLS certificate before March.\nArchive last year's invoices.\n",
    "Ask Dana for the onboarding slides.\nBook the meeting room for Thursday.\n",
)


def family_files(seed: int, count: int, nested: bool, quote: str) -> dict[str, str]:
    """A folder of `count` files (nested ones in subfolders when `nested`) whose answers come from the seed:
    exactly one file reports a timeout, one mentions rotating logs, `quote` holds a short note, and the largest
    file is none of these; sizes are random, so they follow no order of names."""
    rng = random.Random(seed)
    logs = [f"{name}.log" for name in rng.sample(LOG_NAMES, count)]
    names = [*logs[: max(1, count * 2 // 3)], *rng.sample(OTHER_NAMES, len(OTHER_NAMES))][: count - 1]
    if nested:
        names = [f"{rng.choice(FOLDERS)}/{n}" if rng.random() < 0.6 else n for n in names]
    files = {name: filler(rng, rng.randint(2, 9)) for name in names}
    timeout, rotation, largest = rng.sample(names, 3) if len(names) >= 3 else (names[0], names[0], names[-1])
    files[timeout] += rng.choice(TIMEOUT_LINES).format(n=rng.randint(10, 99)) + "\n" + filler(rng, 2)
    files[rotation] += rng.choice(ROTATION_LINES) + "\n"
    files[largest] += filler(rng, rng.randint(40, 60))
    files[quote] = rng.choice(QUOTES)
    return dict(sorted(files.items(), key=lambda _: rng.random()))


def filler(rng: random.Random, lines: int) -> str:
    return "".join(
        f"2026-10-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} INFO "
        + rng.choice(EVENTS).format(n=rng.randint(1, 999))
        + "\n"
        for _ in range(lines)
    )
