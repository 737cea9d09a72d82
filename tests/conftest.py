"""Shared fixtures: real servers on free loopback ports, and a workspace of real files."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import uvicorn
from fastapi import FastAPI

from evals.servers import ServerProcess
from models.registry import SMOLLM2
from serve.scripted.app import create_app

if TYPE_CHECKING:
    from serve.llama.engine import Engine

ROOT = Path(__file__).resolve().parent.parent

ERRORS_LOG = "INFO worker 3 started\nERROR worker 7 timed out after 30000 ms\nINFO worker 7 restarted\n"
ACCESS_LOG = "GET /index.html 200\nGET /health 200\n"
NOTES = "Remember to rotate your logs.\n"


class Server(ServerProcess):
    """A real server process on a free loopback port, started at once."""

    def __init__(self, module: str, *args: str, timeout: float = 180.0) -> None:
        super().__init__(module, *args)
        self.start(timeout)


class AppServer:
    """An app served by uvicorn on a free loopback port from a thread of the test process: a real HTTP server,
    without a process's start-up. Tests of the server as a process (signals, its command line) use `Server`."""

    def __init__(self, app: FastAPI) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "the app did not start"
            time.sleep(0.01)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def running(self) -> bool:
        return self.thread.is_alive() and not self.server.should_exit

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)
        self.socket.close()


def scripted_server(latency_ms: int = 0) -> Iterator[AppServer]:
    server = AppServer(create_app(latency_ms=latency_ms))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def scripted() -> Iterator[AppServer]:
    yield from scripted_server()


def llama_threads() -> str:
    """The threads a test's llama server decodes with: the cores the other test workers leave free (a llama.cpp
    thread that shares its core with another process waits at every step's barrier)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return str(max(1, (os.cpu_count() or 1) - (workers - 1)))


@pytest.fixture(scope="session")
def llama() -> Iterator[Server]:
    """The SmolLM2 server a test worker's llama tests share (loading the model is most of a small test's time)."""
    flags = ["--threads", llama_threads(), "--ctx", "1024", "--parallel", "4", "--quiet"]
    server = Server("serve.llama", "--model", SMOLLM2.name, *flags)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def smollm2_engine() -> Iterator[Engine]:
    """SmolLM2 loaded in-process with one KV sequence, for the tests of the engine and of what runs on it; each
    test empties the sequence before it decodes."""
    from models.weights import locate
    from serve.llama.engine import Engine

    loaded = Engine(locate(SMOLLM2), context=1024, threads=int(llama_threads()), sequences=1)
    yield loaded
    loaded.close()


def default_files(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "errors.log").write_text(ERRORS_LOG)
    (root / "access.log").write_text(ACCESS_LOG)
    (root / "notes.txt").write_text(NOTES)
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return default_files(tmp_path / "ws")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` start first, so the test workers finish together: pytest-xdist hands out tests in
    collection order (make test gives each worker two at a time); a slow test left to the end runs alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # a stable sort: the rest keep their order
