"""OpenTelemetry: a `harness run` with the standard variable set sends GenAI spans to an OTLP/HTTP receiver."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.conftest import ROOT, AppServer
from tests.harness.cli_support import harness


class Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP trace receiver: keeps every span it is sent (protobuf, as the SDK's exporter sends)."""

    spans: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                type(self).spans.extend(scope.spans)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    Receiver.spans = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def attributes(span: Any) -> dict[str, Any]:
    def value(v: Any) -> Any:
        kind = v.WhichOneof("value")
        return [value(x) for x in v.array_value.values] if kind == "array_value" else getattr(v, kind)

    return {a.key: value(a.value) for a in span.attributes}


def test_a_run_sends_agent_chat_and_tool_spans_and_a_sub_agent_nests_under_its_tool(
    scripted: AppServer, workspace: Path, tmp_path: Path, receiver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver)
    done = harness("run", "What does errors.log say?", "--base-url", scripted.base_url, "--model", "research",
                   "--research-model", "research.child", "--workspace", str(workspace),
                   "--state-dir", str(tmp_path / "st"), "--run-id", "r1", "--controls", "none")  # fmt: skip
    assert done.returncode == 0, done.stderr
    spans = {span.span_id: span for span in Receiver.spans}
    named = {span.name: span for span in spans.values()}
    agent, tool = named["invoke_agent harness"], named["execute_tool research"]
    chats = [s for s in spans.values() if s.name == "chat research"]
    assert chats and all(s.parent_span_id == agent.span_id or spans[s.parent_span_id].name.startswith("invoke")
                         for s in chats)  # fmt: skip
    chat = attributes(chats[0])
    assert chat["gen_ai.operation.name"] == "chat" and chat["gen_ai.request.model"] == "research"
    assert chat["gen_ai.usage.input_tokens"] > 0 and chat["gen_ai.usage.output_tokens"] > 0
    assert chat["gen_ai.response.finish_reasons"] == ["tool_calls"]
    facts = attributes(tool)
    assert facts["gen_ai.tool.name"] == "research" and facts["gen_ai.tool.call.id"]
    assert "gen_ai.tool.call.arguments" not in facts  # contents only with --trace-payloads
    children = [s for s in spans.values() if attributes(s).get("gen_ai.conversation.id", "").startswith("r1.")]
    child_agent = next(s for s in children if s.name == "invoke_agent harness")
    assert child_agent.parent_span_id == tool.span_id and tool.parent_span_id == agent.span_id
    assert attributes(agent)["gen_ai.conversation.id"] == "r1"
    assert any(s.name == "execute_tool read_file" and s.parent_span_id == child_agent.span_id for s in children)


class Hanging(BaseHTTPRequestHandler):
    """A collector that takes the connection and never answers."""

    released = threading.Event()

    def do_POST(self) -> None:
        type(self).released.wait(60)

    def log_message(self, *args: object) -> None:
        pass


def test_a_collector_that_hangs_neither_hides_the_answer_nor_holds_the_exit(
    scripted: AppServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hanging)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        began = time.monotonic()
        args = ["--base-url", scripted.base_url, "--model", "plan", "--workspace", str(workspace)]
        done = harness("run", "What does errors.log say?", *args, "--state-dir", str(tmp_path / "st"))
        waited = time.monotonic() - began
    finally:
        Hanging.released.set()
        server.shutdown()
    assert done.returncode == 0 and "timeout" in done.stdout.splitlines()[0], done.stdout
    assert "took no spans within 2 s; they were dropped" in done.stderr
    assert waited < 20  # a bound for a hang (the exporter's own default waits 10 s, then retries), not a speed claim


def test_without_the_variable_nothing_is_imported() -> None:
    probe = (
        "import sys, os; os.environ.pop('OTEL_EXPORTER_OTLP_ENDPOINT', None);"
        "os.environ.pop('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', None);"
        "import harness.app.cli; from harness.app.otel import from_environment;"
        "assert from_environment('m', False) is None;"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
