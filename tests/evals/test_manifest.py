"""The environment a result names: the revision that wrote it, and what the server says of its model file,
with the file's sha256 computed here when the file is on this machine."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from evals.manifest import git_revision, results_header, server_facts


@pytest.fixture
def health_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real HTTP server on 127.0.0.1 whose /healthz names a model file in tmp_path."""
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(range(256)) * 10)
    body = json.dumps({"status": "ok", "file": str(model), "mode": "batch-invariant"}).encode()

    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = self.path == "/healthz"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body if found else b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", model
    server.shutdown()
    server.server_close()


def test_the_servers_facts_carry_the_sha256_of_its_model_file(health_server: tuple[str, Path]) -> None:
    base_url, model = health_server
    facts = server_facts(base_url)
    assert facts["mode"] == "batch-invariant"
    assert facts["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()


def test_a_server_that_does_not_answer_gives_no_facts_and_no_error() -> None:
    assert server_facts("http://127.0.0.1:9/v1") == {}


def test_a_result_names_the_command_and_the_revision_that_wrote_it() -> None:
    revision = git_revision()
    assert revision is not None and re.fullmatch(r"[0-9a-f]{40}(-dirty)?", revision)
    header = results_header("python -m evals run --suite open-40")
    assert header.startswith(f"Written by `python -m evals run --suite open-40` at git revision `{revision}` on ")
    assert re.search(r"\(\d+ cores\), \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$", header)
