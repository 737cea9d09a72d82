"""fit_context: a request over the window is sent with its longest results cut."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from harness.controls.fit_context import FitContext
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.registry import Registry
from harness.core.state import new_run
from tests.harness.controls.support import QUESTION, answering, reads
from tests.harness.helpers import Recorder


async def test_a_request_over_the_window_is_sent_with_its_longest_results_cut_and_the_transcript_kept() -> None:
    long = "\n".join(f"line {n} of the log" for n in range(400))
    model, seen = answering(reads(1), reads(2), "done")
    control = FitContext(context=2000)
    options = RunOptions(model=model, controls=[control], count_tokens=lambda m: len(str(m.get("content") or "")) // 4)
    result = await run(new_run(QUESTION), Registry([Recorder(output=long)]), options)
    assert result.answer == "done"
    sent = [str(m["content"]) for m in seen[2].messages if m["role"] == "tool"]
    assert all("lines not shown" in text for text in sent) and sum(len(t) for t in sent) // 4 < 2000
    assert [str(m["content"]) for m in result.messages if m["role"] == "tool"] == [long, long]  # kept whole
    small, small_seen = answering(reads(1), "done")
    await run(new_run(QUESTION), Registry([Recorder(output="short")]), replace(options, model=small))
    assert small_seen[1].messages[-1]["content"] == "short"  # a request that fits is sent as it is


async def test_results_once_cut_stay_cut_the_same_way_until_more_room_is_needed() -> None:
    """A server's prompt cache reuses a conversation up to its first changed token. A cut leaves room for the
    turns after it, which send the earlier results exactly as before and add theirs; the old results change
    again only when the new ones have used that room up."""
    text = "\n".join(f"line {n} of the log" for n in range(30))  # about 140 tokens at a quarter per character
    model, seen = answering(*(reads(n) for n in range(12)), "done")
    options = RunOptions(
        model=model,
        controls=[FitContext(context=1200)],
        count_tokens=lambda m: len(str(m.get("content") or "")) // 4,
        max_tokens=64,
    )
    await run(new_run(QUESTION), Registry([Recorder(output=text)]), options)
    sent = [[str(m["content"]) for m in request.messages if m["role"] == "tool"] for request in seen]
    changed = [n for n, (a, b) in enumerate(itertools.pairwise(sent), 1) if b[: len(a)] != a]
    assert len(sent[-1]) == 12 and sum(len(t) for t in sent[-1]) // 4 < 1200
    assert 1 <= len(changed) <= 4 and all(b - a > 1 for a, b in itertools.pairwise(changed))


@pytest.mark.parametrize(("rate", "cut"), [(0.25, False), (0.6, True)])
async def test_the_count_is_scaled_to_what_the_server_counted(rate: float, cut: bool) -> None:
    """The harness counts a quarter token per character; a server that counts more is believed."""
    text = "\n".join(f"line {n} of the log" for n in range(120))  # about 570 tokens at the harness's count
    model, seen = answering(reads(1), reads(2), "done", rate=rate)
    options = RunOptions(
        model=model,
        controls=[FitContext(context=1600)],
        count_tokens=lambda m: len(str(m.get("content") or "")) // 4,
        max_tokens=64,
    )
    await run(new_run(QUESTION), Registry([Recorder(output=text)]), options)
    sent = [str(m["content"]) for m in seen[2].messages if m["role"] == "tool"]
    assert any("lines not shown" in t for t in sent) is cut
