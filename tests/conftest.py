"""Shared fixtures: real servers on free loopback ports, and a workspace of real files."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent

ERRORS_LOG = "INFO worker 3 started\nERROR worker 7 timed out after 30000 ms\nINFO worker 7 restarted\n"
ACCESS_LOG = "GET /index.html 200\nGET /health 200\n"
NOTES = "Remember to rotate your logs.\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A server process started with `python -m MODULE --port N ...`, stopped by `stop()`."""

    def __init__(self, module: str, *args: str, timeout: float = 120.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, "--host", "127.0.0.1", "--port", str(self.port), *args],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            self.wait_healthy(timeout)
        except Exception:
            self.stop()
            raise

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"server exited with {self.process.returncode}: {error}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server at {self.url} did not become healthy in {timeout}s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()


@pytest.fixture(scope="session")
def scripted() -> Iterator[Server]:
    server = Server("serve.scripted")
    yield server
    server.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "errors.log").write_text(ERRORS_LOG)
    (root / "access.log").write_text(ACCESS_LOG)
    (root / "notes.txt").write_text(NOTES)
    return root
