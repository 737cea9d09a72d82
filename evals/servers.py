"""Starting and stopping the model servers as real processes on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from harness.app.client import tls

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class ServerFailed(RuntimeError):
    """A server process exited or never became healthy."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def healthy(url: str, timeout: float = 1.0) -> bool:
    """True when `url` (scheme://host:port) answers /healthz with 200."""
    try:
        return httpx.get(f"{url.rstrip('/')}/healthz", timeout=timeout, verify=tls(url)).status_code == 200
    except httpx.HTTPError:
        return False


class ServerProcess:
    """`python -m MODULE --host 127.0.0.1 --port N ARGS...`, started, checked healthy, and stopped."""

    def __init__(self, module: str, *args: str, port: int | None = None, log: Path | None = None) -> None:
        self.module, self.args = module, args
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        # Not a pipe: nobody reads a pipe while the server runs, and a full one (about 64 KiB of request
        # logs) blocks the server mid-request. A file keeps the tail for a start-up failure's message.
        self.errors: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = 180.0) -> ServerProcess:
        output = self.log.open("ab") if self.log else subprocess.DEVNULL
        # closed in stop(): it lives as long as the process, not a block
        self.errors = None if self.log else tempfile.TemporaryFile(prefix="server-")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", self.module, "--host", "127.0.0.1", "--port", str(self.port), *self.args],
            cwd=PROJECT_ROOT,
            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
            stdout=output,
            stderr=subprocess.STDOUT if self.errors is None else self.errors,
        )
        try:
            self.wait_healthy(timeout)
        except ServerFailed:
            self.stop()
            raise
        return self

    def wait_healthy(self, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                detail = self.error_tail()
                where = f" (see {self.log})" if self.log else ""
                raise ServerFailed(f"{self.module} exited with code {self.process.returncode}{where}: {detail}")
            if healthy(self.url):
                return
            time.sleep(0.1)
        raise ServerFailed(f"{self.module} on port {self.port} did not become healthy in {timeout:.0f}s")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.errors is not None:
            self.errors.close()

    def error_tail(self) -> str:
        if self.errors is None:
            return ""
        self.errors.seek(0)
        return self.errors.read().decode(errors="replace")[-2000:]

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()
