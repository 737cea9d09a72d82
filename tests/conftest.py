"""Shared fixtures: real servers on free loopback ports, and a workspace of real files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evals.servers import ServerProcess

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


def default_files(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "errors.log").write_text(ERRORS_LOG)
    (root / "access.log").write_text(ACCESS_LOG)
    (root / "notes.txt").write_text(NOTES)
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return default_files(tmp_path / "ws")
