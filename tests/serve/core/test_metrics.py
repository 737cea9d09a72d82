"""Metrics and the access log: a request is counted under its route, never the raw path a client chose; a
finished reply's tokens and times add up; and no path a client sends can forge a log line or drive a terminal."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import Request

from serve.core.backend import Finished
from serve.core.metrics import Metrics, printable
from wire.types import PromptTokensDetails, Timings, Usage


def request(path: str, finished: Finished | None = None) -> Request:
    scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [], "state": {}}  # fmt: skip
    made = Request(scope)
    if finished is not None:
        made.state.finished = finished
    return made


@given(st.text(max_size=400))
def test_whatever_a_client_sends_is_shown_on_one_printable_line(text: str) -> None:
    shown = printable(text)
    assert shown.isprintable() and len(shown) <= 303
    assert printable("ok /v1/models") == "ok /v1/models"


def test_a_forged_log_line_and_a_terminal_escape_are_written_as_escapes() -> None:
    assert printable("/x\n10:00 POST /admin 200\x1b[2J") == "/x\\n10:00 POST /admin 200\\x1b[2J"


def test_a_finished_reply_counts_its_tokens_and_times_and_an_unknown_path_one_label(
    caplog: pytest.LogCaptureFixture,
) -> None:
    metrics = Metrics()
    usage = Usage(prompt_tokens=100, completion_tokens=7, total_tokens=107,
                  prompt_tokens_details=PromptTokensDetails(cached_tokens=64))  # fmt: skip
    timings = Timings(cache_n=64, prompt_n=36, prompt_ms=500.0, prompt_per_second=72.0, predicted_n=7,
                      predicted_ms=250.0, predicted_per_second=28.0)  # fmt: skip
    done = Finished({"role": "assistant", "content": "hi"}, "stop", usage, timings)
    with caplog.at_level(logging.INFO, logger="serve.access"):
        metrics.observe(request("/v1/chat/completions", done), 200, 0.8)
        metrics.observe(request("/secret/../etc/passwd"), 404, 0.001)
    text = metrics.render(queue_depth=3).decode()
    for line in ('prompt_tokens_total 100.0', "prompt_cache_hit_tokens_total 64.0", "completion_tokens_total 7.0",
                 "prompt_seconds_total 0.5", "predicted_seconds_total 0.25", "queue_depth 3.0",
                 'requests_total{path="unmatched",status="404"} 1.0'):  # fmt: skip
        assert line in text
    assert "passwd" not in text
    assert "prompt=100 cached=64 generated=7 finish=stop 800ms" in caplog.records[0].getMessage()
