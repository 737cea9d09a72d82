"""The eval's server processes: started on a free loopback port and healthy, stopped with nothing left running,
and a server that exits at start reported with its exit code and the end of what it printed."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from evals.servers import ServerFailed, ServerProcess, free_port, healthy, port_free


def test_a_server_starts_healthy_on_loopback_and_stops(tmp_path: Path) -> None:
    log = tmp_path / "scripted.log"
    with ServerProcess("serve.scripted", log=log) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1" and healthy(server.url)
        assert not port_free(server.port)
    assert not server.running and not healthy(server.url)
    assert log.exists()


def test_a_server_that_exits_at_start_says_its_code_and_why() -> None:
    server = ServerProcess("serve.scripted", "--no-such-flag")
    with pytest.raises(
        ServerFailed, match=r"(?s)serve\.scripted exited with code 2: .*unrecognized arguments: --no-such-flag"
    ):
        server.start(timeout=60)
    assert not server.running


def test_a_free_port_is_free_until_taken() -> None:
    port = free_port()
    assert port_free(port)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        assert not port_free(port) and not healthy(f"http://127.0.0.1:{port}", timeout=0.5)
