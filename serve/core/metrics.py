"""Prometheus metrics (one registry per app, so tests and servers never share counters) and the access log."""

from __future__ import annotations

import logging

from fastapi import Request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from serve.core.backend import Finished

log = logging.getLogger("serve.access")
UNMATCHED = "unmatched"  # one label for every path the server does not have
LATENCY_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("requests", "HTTP requests answered", ["path", "status"], registry=self.registry)
        self.prompt_tokens = Counter("prompt_tokens", "prompt tokens of finished replies", registry=self.registry)
        self.cached_tokens = Counter(
            "prompt_cache_hit_tokens", "prompt tokens served from the prompt cache", registry=self.registry
        )
        self.completion_tokens = Counter("completion_tokens", "tokens generated", registry=self.registry)
        # llama-server's prompt_seconds_total / tokens_predicted_seconds_total: where a model's time goes
        self.prompt_seconds = Counter("prompt_seconds", "time spent evaluating prompts", registry=self.registry)
        self.predicted_seconds = Counter("predicted_seconds", "time spent generating", registry=self.registry)
        self.draft_tokens = Counter("draft_tokens", "tokens guessed by drafting and checked", registry=self.registry)
        self.draft_accepted = Counter(
            "draft_accepted_tokens", "guessed tokens the model chose itself", registry=self.registry
        )
        self.queue = Gauge("queue_depth", "requests waiting for the model", registry=self.registry)
        self.latency = Histogram(
            "request_latency_seconds",
            "time to the last byte",
            ["path"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )

    def observe(self, request: Request, status: int, seconds: float) -> None:
        """Count one answered request (labelled by its route, never by the raw path a client chose) and write
        its access-log line."""
        route = request.scope.get("route")
        label = getattr(route, "path", UNMATCHED) if route is not None else UNMATCHED
        self.requests.labels(label, str(status)).inc()
        self.latency.labels(label).observe(seconds)
        finished: Finished | None = getattr(request.state, "finished", None)
        tokens = ""
        if finished is not None:
            usage = finished.usage
            cached = usage.prompt_tokens_details.cached_tokens if usage.prompt_tokens_details else 0
            self.prompt_tokens.inc(usage.prompt_tokens)
            self.cached_tokens.inc(cached)
            self.completion_tokens.inc(usage.completion_tokens)
            if finished.timings is not None:
                self.prompt_seconds.inc(finished.timings.prompt_ms / 1000)
                self.predicted_seconds.inc(finished.timings.predicted_ms / 1000)
                self.draft_tokens.inc(finished.timings.draft_n or 0)
                self.draft_accepted.inc(finished.timings.draft_n_accepted or 0)
            tokens = (
                f" prompt={usage.prompt_tokens} cached={cached} generated={usage.completion_tokens}"
                f" finish={finished.finish_reason}"
            )
        elif getattr(request.state, "prompt_tokens", None) is not None:
            tokens = f" prompt={request.state.prompt_tokens} (unfinished)"
        log.info(
            "%s %s %d%s %.0fms", printable(request.method), printable(request.url.path), status, tokens, seconds * 1000
        )

    def render(self, queue_depth: int) -> bytes:
        self.queue.set(queue_depth)
        return generate_latest(self.registry)


def printable(text: str, limit: int = 300) -> str:
    """Text for a log line: anything not printable (escape codes, NUL, line and paragraph separators) is
    written as an escape, so no client can forge a line or drive the terminal; long text is cut."""
    shown = "".join(c if c.isprintable() and c != "\\" else c.encode("unicode_escape").decode("ascii") for c in text)
    return shown if len(shown) <= limit else shown[:limit] + "..."
