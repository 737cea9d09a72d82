"""OpenTelemetry spans from the trace's events, in the GenAI semantic conventions.

A run is an `invoke_agent` span; each model turn a `chat {model}` span (timed from the reply's latency)
and each tool call an `execute_tool {tool}` span, both its children. A research sub-agent's run (run id
`<parent>.<call id>`) is a child of the parent's `execute_tool research` span. Attributes:
`gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.usage.input_tokens` /
`output_tokens`, `gen_ai.response.finish_reasons`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, and the run id
as `gen_ai.conversation.id`; a tool's arguments and result only with payloads (`--trace-payloads`).

Switched on the standard way: with `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
set, `from_environment` exports over OTLP/HTTP through the OpenTelemetry SDK (`pip install -e '.[otel]'`);
without it nothing is imported or sent. The JSONL trace is written either way. The spans are sent after
the answer is printed, and the exit waits at most EXPORT_WAIT_S for a collector that is slow or gone.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.core.events import Header, ToolResultEvent, ToolStartEvent, TraceEvent, TurnEvent
from harness.errors import ConfigError

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Status, Tracer

ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
EXPORT_WAIT_S = 2.0  # what a run's end waits for the collector, after the answer is printed
PROVIDER = "openai"  # the wire the harness speaks, whatever serves it


def nanoseconds(seconds: float) -> int:
    return int(seconds * 1e9)


class SpanTrace:
    """A trace sink that opens and ends spans as a run's events arrive (one object per process)."""

    def __init__(self, tracer: Tracer, model: str, payloads: bool, shutdown: Callable[[], None] = lambda: None):
        self.tracer, self.model, self.payloads, self.shutdown = tracer, model, payloads, shutdown
        self.agents: dict[str, Span] = {}
        self.tools: dict[tuple[str, str], Span] = {}

    def write(self, event: TraceEvent) -> None:
        run_id, at = event["run_id"], nanoseconds(event["ts"])
        if event["type"] == "turn":
            self.turn(run_id, event, at)
        elif event["type"] == "tool_start":
            self.tool(run_id, event, at)
        elif event["type"] == "tool_result":
            span = self.tools.pop((run_id, event["call_id"]), None) or self.tool(run_id, event, at)
            if self.payloads and "output" in event:
                span.set_attribute("gen_ai.tool.call.result", event["output"])
            if not event["ok"]:
                span.set_status(status_error("the tool failed or was not run"))
            span.end(end_time=at)
        elif event["type"] == "run_stopped":
            agent = self.agent(event, at)
            agent.set_attribute("harness.run.status", event["status"])
            if event["status"] == "failed":
                agent.set_status(status_error(event["reason"]))
            agent.end(end_time=at)
            del self.agents[run_id]

    def agent(self, event: Header, at: int) -> Span:
        """The run's span, begun at its first event; a sub-agent's is a child of its parent's tool span."""
        run_id = event["run_id"]
        span = self.agents.get(run_id)
        if span is None:
            from opentelemetry import trace

            parent = event.get("parent")
            under = (self.tools.get((parent["run_id"], parent["call_id"])) or self.agents.get(parent["run_id"])
                     if parent is not None else None)  # fmt: skip
            context = trace.set_span_in_context(under) if under is not None else None
            span = self.tracer.start_span("invoke_agent harness", context=context, start_time=at)
            span.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "harness",
                                 "gen_ai.provider.name": PROVIDER, "gen_ai.request.model": self.model,
                                 "gen_ai.conversation.id": run_id})  # fmt: skip
            self.agents[run_id] = span
        return span

    def child(self, event: Header, name: str, at: int) -> Span:
        from opentelemetry import trace

        context = trace.set_span_in_context(self.agent(event, at))
        return self.tracer.start_span(name, context=context, start_time=at)

    def turn(self, run_id: str, event: TurnEvent, at: int) -> None:
        start = at - nanoseconds(event["latency_ms"] / 1000)
        span = self.child(event, f"chat {self.model}", start)
        span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.provider.name": PROVIDER,
                             "gen_ai.request.model": self.model, "gen_ai.conversation.id": run_id})  # fmt: skip
        for tokens, name in ((event["prompt_tokens"], "input_tokens"), (event["completion_tokens"], "output_tokens")):
            if tokens is not None:
                span.set_attribute(f"gen_ai.usage.{name}", tokens)
        if event["finish"]:
            span.set_attribute("gen_ai.response.finish_reasons", [event["finish"]])
        span.end(end_time=at)

    def tool(self, run_id: str, event: ToolStartEvent | ToolResultEvent, at: int) -> Span:
        name, call_id = event["tool"], event["call_id"]
        span = self.child(event, f"execute_tool {name}", at)
        span.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                             "gen_ai.tool.call.id": call_id, "gen_ai.conversation.id": run_id})  # fmt: skip
        if self.payloads and event["type"] == "tool_start" and "args" in event:
            span.set_attribute("gen_ai.tool.call.arguments", json.dumps(event["args"], ensure_ascii=False))
        self.tools[(run_id, call_id)] = span
        return span

    def close(self) -> None:
        """End what a killed or cancelled run left open, then flush the exporter."""
        for span in [*self.tools.values(), *self.agents.values()]:
            span.end()
        self.tools.clear()
        self.agents.clear()
        self.shutdown()


def status_error(description: str) -> Status:
    from opentelemetry.trace import Status, StatusCode

    return Status(StatusCode.ERROR, description)


def from_environment(model: str, payloads: bool) -> SpanTrace | None:
    """Spans exported over OTLP/HTTP when the standard variables ask for it; None (nothing imported) when not."""
    if not any(os.environ.get(name) for name in ENDPOINTS):
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ConfigError(
            f"{' or '.join(ENDPOINTS)} is set, but the OpenTelemetry SDK is not installed ({exc}); "
            "install it with: pip install -e '.[otel]'"
        ) from exc

    # no shutdown at exit: `close` flushes within EXPORT_WAIT_S, so a collector that hangs cannot hold the exit
    provider = TracerProvider(resource=Resource.create({"service.name": "harness"}), shutdown_on_exit=False)
    # the exporter's own timeout (the SDK's 10 s, or the one the environment sets) outlasts what the exit waits,
    # so an export still in flight when the run ends is left behind and said to be, never cut short unsaid
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return SpanTrace(provider.get_tracer("harness"), model, payloads, within(provider.shutdown, EXPORT_WAIT_S))


def within(shutdown: Callable[[], object], seconds: float) -> Callable[[], None]:
    """`shutdown` given at most `seconds`: it runs in a daemon thread, left behind (its spans dropped, and said
    so) when the collector does not take them in time."""

    def close() -> None:
        worker = threading.Thread(target=shutdown, name="otlp-export", daemon=True)
        worker.start()
        worker.join(seconds)
        if worker.is_alive():
            print(f"harness: the OTLP collector took no spans within {seconds:g} s; they were dropped", file=sys.stderr)

    return close
