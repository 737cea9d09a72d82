"""The llama backend in-process on the real SmolLM2 GGUF: what it checks before a request is queued, the limits
it gives a request, and what a run hands the app."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from models.registry import SMOLLM2
from models.weights import locate
from serve.core.backend import Event, Finished, TextOut
from serve.errors import ContextLengthExceeded, InvalidRequest
from serve.llama.backend import FORCED_CALL_TOKENS, LlamaBackend, LlamaJob, ModelFacts, Options
from serve.llama.engine import Engine
from serve.llama.modes import BatchInvariant, Throughput
from tests.conftest import llama_threads
from wire.types import ChatCompletionRequest

CONTEXT = 2048  # more than a forced call may take, so its bound shows
TOOL: Any = {
    "type": "function",
    "function": {
        "name": "read_file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}


@pytest.fixture(scope="module")
def backend() -> Iterator[LlamaBackend]:
    path = locate(SMOLLM2)
    engine = Engine(path, context=CONTEXT, threads=int(llama_threads()), sequences=1, mode=Throughput())
    facts = ModelFacts(SMOLLM2.name, path.name, path.stat().st_size, "0" * 64)
    options = Options(parallel=1, prompt_cache=False)  # each reply reads its prompt whole, alike
    made = LlamaBackend(engine, facts, options, say=lambda line: None)
    yield made
    made.close()
    engine.close()


def request(text: str = "Say hi.", **fields: Any) -> ChatCompletionRequest:
    return ChatCompletionRequest.model_validate(
        {"model": SMOLLM2.name, "messages": [{"role": "user", "content": text}], **fields}
    )


def prepared(backend: LlamaBackend, chat: ChatCompletionRequest) -> LlamaJob:
    return asyncio.run(backend.prepare(chat, {}))


def events(backend: LlamaBackend, job: LlamaJob) -> list[Event]:
    async def collect() -> list[Event]:
        return [event async for event in backend.run(job)]

    return asyncio.run(collect())


def test_a_reply_without_max_tokens_may_fill_the_window_and_one_with_it_is_held_to_it(backend: LlamaBackend) -> None:
    free = prepared(backend, request())
    assert free.prompt_tokens == len(free.prompt) > 0
    assert free.settings.max_tokens == CONTEXT - len(free.prompt)
    assert prepared(backend, request(max_tokens=7)).settings.max_tokens == 7
    assert prepared(backend, request(max_completion_tokens=9)).settings.max_tokens == 9
    assert prepared(backend, request(max_tokens=10 * CONTEXT)).settings.max_tokens == CONTEXT - len(free.prompt)


def test_a_forced_call_without_max_tokens_is_bounded_so_no_question_holds_the_server(backend: LlamaBackend) -> None:
    forced = prepared(backend, request(tools=[TOOL], tool_choice="required"))
    assert forced.settings.forced is not None and forced.settings.max_tokens == FORCED_CALL_TOKENS
    assert prepared(backend, request(tools=[TOOL], tool_choice="auto")).settings.max_tokens > FORCED_CALL_TOKENS


def test_what_cannot_be_served_is_refused_before_it_is_queued(backend: LlamaBackend) -> None:
    before = backend.requests
    with pytest.raises(ContextLengthExceeded):
        prepared(backend, request("word " * CONTEXT))
    with pytest.raises(InvalidRequest) as refused:
        prepared(backend, request(top_logprobs=2))
    assert refused.value.param == "top_logprobs"
    with pytest.raises(InvalidRequest) as bad_tokens:
        backend.detokenize([0, backend.engine.n_vocab])
    assert bad_tokens.value.param == "tokens"
    assert backend.requests == before  # a refused request is not counted as served


def test_a_run_streams_text_only_when_asked_and_ends_with_the_whole_reply(backend: LlamaBackend) -> None:
    streamed = events(backend, prepared(backend, request(max_tokens=6, stream=True)))
    whole = events(backend, prepared(backend, request(max_tokens=6)))
    assert isinstance(streamed[-1], Finished) and isinstance(whole[-1], Finished)
    assert [e for e in streamed if isinstance(e, TextOut)] and not [e for e in whole if isinstance(e, TextOut)]
    pieces = "".join(e.text for e in streamed if isinstance(e, TextOut))
    assert pieces == streamed[-1].message["content"] == whole[-1].message["content"]  # greedy: the same reply
    assert whole[-1].finish_reason == "length" and whole[-1].usage.completion_tokens == 6


def test_health_and_the_model_card_say_what_is_loaded(backend: LlamaBackend) -> None:
    health = backend.health()
    assert health["status"] == "ok" and health["mode"] == "throughput" and "invariance" not in health
    assert health["context"] == CONTEXT and health["parallel"] == 1
    [card] = backend.model_cards()
    assert card.id == SMOLLM2.name and card.meta is not None
    assert card.meta.context == CONTEXT and card.meta.n_params == backend.engine.parameters > 0


def test_a_server_runs_in_the_mode_its_engine_was_loaded_for(backend: LlamaBackend, smollm2_engine: Engine) -> None:
    """No flag beside the engine can put a server in the other mode: the engine carries it, the scheduler and
    the prompt cache read it from the server, and a batch-invariant engine gets its granularity measured."""
    assert backend.mode == backend.engine.mode == Throughput() and backend.scheduler.mode is backend.mode
    assert backend.scheduler.cache.whole and backend.scheduler.cache.granularity == 1
    facts = ModelFacts(SMOLLM2.name, "x.gguf", 1, SMOLLM2.file.sha256)  # its measured invariance is reused
    invariant = LlamaBackend(smollm2_engine, facts, Options(parallel=1), say=lambda line: None)
    try:
        assert isinstance(invariant.mode, BatchInvariant) and invariant.health()["mode"] == "batch-invariant"
        assert invariant.mode.chunk == smollm2_engine.mode.chunk and invariant.health()["repacked_weights"] is False
        cache = invariant.scheduler.cache
        assert not cache.whole and cache.granularity == invariant.mode.granularity
    finally:
        invariant.close()
