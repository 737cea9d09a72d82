"""The environment a result was measured in: machine, libraries, git revision, and each provider's model file."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from evals.servers import PROJECT_ROOT
from harness.app.client import tls

LIBRARIES = (
    "llama-cpp-python",
    "httpx",
    "fastapi",
    "uvicorn",
    "pydantic",
    "tiktoken",
    "huggingface-hub",
    "jinja2",
    "openai",
)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_revision() -> str | None:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(  # results a command writes do not make the code that wrote them another revision
            ["git", "status", "--porcelain", "--", ".", ":(exclude)docs/results", ":(exclude)results"],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except OSError:
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def server_facts(base_url: str) -> dict[str, Any]:
    """What the server says about itself (/healthz), plus the sha256 of its model file when it is on this machine."""
    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        health: dict[str, Any] = httpx.get(f"{root}/healthz", timeout=5, verify=tls(root)).json()
    except (httpx.HTTPError, ValueError):
        return {}
    model_file = health.get("file")
    if model_file and Path(model_file).is_file():
        health["sha256"] = sha256_of(Path(model_file))
    return health


def manifest(providers: list[Any]) -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "git_revision": git_revision(),
        "libraries": versions(),
        "providers": {
            p.name: {"base_url": p.base_url, "model": p.model, "server": server_facts(p.base_url)} for p in providers
        },
    }


def results_header(command: str) -> str:
    """The line a results file opens with: what wrote it, from which revision, where and when."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"Written by `{command}` at git revision `{git_revision()}` on {cpu_model()} ({os.cpu_count()} cores), {when}."
    )
