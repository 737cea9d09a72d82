"""From a backend's events to what a client reads: the chunks of a stream in OpenAI's order, a heartbeat while
the backend works and silence when it does not, an error after the first byte sent as an event, and the
generation closed whenever the stream ends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator

import pytest

from serve.core.backend import Event, Finished, TextOut
from serve.core.replies import completion, stream
from serve.errors import APIError, InvalidRequest
from wire.types import Usage

USAGE = Usage(prompt_tokens=5, completion_tokens=2, total_tokens=7)
DONE = Finished({"role": "assistant", "content": "hi there"}, "stop", USAGE)


class Events:
    """A backend's reply: the events given, a pause before each when asked, and whether it was closed."""

    def __init__(self, *events: Event | Exception, pause: float = 0.0) -> None:
        self.events, self.pause, self.closed = events, pause, False

    async def run(self) -> AsyncGenerator[Event, None]:
        try:
            for event in self.events:
                await asyncio.sleep(self.pause)
                if isinstance(event, Exception):
                    raise event
                yield event
        finally:
            self.closed = True


async def read_all(events: Events, **options: object) -> list[str]:
    finished: list[Finished] = []
    return [c async for c in stream("c1", "m", events.run(), True, finished.append, **options)]  # type: ignore[arg-type]


def payloads(chunks: list[str]) -> list[object]:
    return [json.loads(c.removeprefix("data: ")) for c in chunks if c.startswith("data: {")]


def test_a_stream_is_role_text_finish_usage_then_done() -> None:
    events = Events(TextOut("hi"), TextOut(" there"), DONE)
    chunks = asyncio.run(read_all(events))
    sent = payloads(chunks)
    assert [p["choices"][0]["delta"] for p in sent[:3]] == [  # type: ignore[index]
        {"role": "assistant", "content": ""},
        {"content": "hi"},
        {"content": " there"},
    ]
    assert sent[3]["choices"][0]["finish_reason"] == "stop"  # type: ignore[index]
    assert sent[4]["choices"] == [] and sent[4]["usage"]["total_tokens"] == 7  # type: ignore[index]
    assert chunks[-1] == "data: [DONE]\n\n" and events.closed


@pytest.mark.parametrize(("working", "beats"), [(True, True), (False, False)])
def test_a_slow_reply_sends_heartbeats_only_while_the_backend_works(working: bool, beats: bool) -> None:
    events = Events(TextOut("x"), DONE, pause=0.25)
    chunks = asyncio.run(read_all(events, working=lambda: working, heartbeat_s=0.05))
    assert (": working\n\n" in chunks) is beats
    assert [p["choices"][0]["delta"] for p in payloads(chunks)[:2]][1] == {"content": "x"}  # type: ignore[index]


def test_an_error_after_the_first_byte_is_an_error_event_and_the_stream_still_ends() -> None:
    for failure, said in [
        (APIError("the model failed"), "the model failed"),
        (KeyError("x"), "internal error: KeyError"),
    ]:
        events = Events(TextOut("partial"), failure)
        chunks = asyncio.run(read_all(events))
        error = [p for p in payloads(chunks) if "error" in p]  # type: ignore[operator]
        assert error and error[0]["error"]["message"] == said  # type: ignore[index]
        assert chunks[-1] == "data: [DONE]\n\n" and events.closed


def test_a_reader_that_leaves_closes_the_generation() -> None:
    events = Events(TextOut("a"), TextOut("b"), DONE, pause=0.01)

    async def leave_early() -> None:
        chunks = stream("c1", "m", events.run(), False, lambda f: None)
        async for chunk in chunks:
            if '"a"' in chunk:
                break
        await chunks.aclose()  # type: ignore[attr-defined]

    asyncio.run(leave_early())
    assert events.closed


def test_a_whole_completion_is_the_finished_message_and_a_reply_that_never_finishes_is_refused() -> None:
    reply, finished = asyncio.run(completion("c1", "m", Events(TextOut("hi"), DONE).run(), logprobs=False))
    assert reply.choices[0].message == DONE.message and reply.usage == USAGE and finished is DONE
    with pytest.raises(InvalidRequest, match="ended without finishing"):
        asyncio.run(completion("c1", "m", Events(TextOut("hi")).run(), logprobs=False))
