"""Shared fixtures: real servers on free loopback ports, and a workspace of real files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evals.servers import ServerProcess
from models.registry import SMOLLM2

ROOT = Path(__file__).resolve().parent.parent

ERRORS_LOG = "INFO worker 3 started\nERROR worker 7 timed out after 30000 ms\nINFO worker 7 restarted\n"
ACCESS_LOG = "GET /index.html 200\nGET /health 200\n"
NOTES = "Remember to rotate your logs.\n"


class Server(ServerProcess):
    """A real server process on a free loopback port, started at once."""

    def __init__(self, module: str, *args: str, timeout: float = 180.0) -> None:
        super().__init__(module, *args)
        self.start(timeout)


@pytest.fixture(scope="session")
def scripted() -> Iterator[Server]:
    server = Server("serve.scripted")
    yield server
    server.stop()


LLAMA_GROUP = "llama"  # the xdist group of every test that takes the `llama` fixture


def llama_threads() -> str:
    """The threads a test's llama server decodes with: the cores the other test workers leave free (a llama.cpp
    thread that shares its core with another process waits at every step's barrier)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return str(max(1, (os.cpu_count() or 1) - (workers - 1)))


@pytest.fixture(scope="session")
def llama() -> Iterator[Server]:
    """The SmolLM2 server every llama test shares (loading the model is most of a small test's time)."""
    flags = ["--threads", llama_threads(), "--ctx", "1024", "--parallel", "4", "--quiet"]
    server = Server("serve.llama", "--model", SMOLLM2.name, *flags)
    yield server
    server.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of the llama server runs on one worker (pytest-xdist's `loadgroup`), so one server is loaded."""
    for item in items:
        if "llama" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(LLAMA_GROUP))


def default_files(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "errors.log").write_text(ERRORS_LOG)
    (root / "access.log").write_text(ACCESS_LOG)
    (root / "notes.txt").write_text(NOTES)
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return default_files(tmp_path / "ws")
