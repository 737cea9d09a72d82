"""The llama backend: a GGUF served through the scheduler, with everything checked before the first byte."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import anyio

from models.dialects import OPEN
from models.template import ChatTemplate
from models.weights import cache_root
from serve.core.backend import Event, Finished, Prepared, TextOut, Token
from serve.core.validation import has_schemas
from serve.errors import APIError, ContextLengthExceeded, EngineError, InvalidRequest
from serve.llama.chat import constrains_a_call, plan, prompt_parts
from serve.llama.compiler import COMPILE_STACK_BYTES, DEFAULT_TIMEOUT_S, Compiler, CompileThreads
from serve.llama.constraints import FAMILIES, Grammars
from serve.llama.decoding import Closers, Decoder, Settings
from serve.llama.engine import Engine
from serve.llama.modes import BatchInvariant, Mode
from serve.llama.probe import Invariance, remembered
from serve.llama.scheduler import DECODE_ROWS, Scheduler, Ticket
from wire.types import EXTENSIONS, CardMeta, ChatCompletionRequest, ModelCard

FORCED_CALL_TOKENS = 1024  # what a forced call may take when the request names no max_tokens


@dataclass(frozen=True, kw_only=True)
class Options:
    parallel: int = 4
    jump_forward: bool = True
    prompt_cache: bool = True
    compile_timeout_s: float = DEFAULT_TIMEOUT_S  # a client's grammar or schema compiles within this, or is refused
    draft: int = 0  # prompt-lookup drafting: tokens guessed per check (0: off)


@dataclass
class LlamaJob(Prepared):
    """A request's prompt tokens and generation settings, ready for the scheduler."""

    prompt: list[int] = field(default_factory=list)
    settings: Settings = field(default_factory=lambda: Settings(max_tokens=1))


@dataclass(frozen=True)
class ModelFacts:
    """What is true of the file actually loaded (read from it, not from the registry)."""

    name: str
    file: str
    size: int
    sha256: str
    dialect: str = "hermes"


class LlamaBackend:
    def __init__(
        self, engine: Engine, facts: ModelFacts, options: Options | None = None, say: Callable[[str], object] = print
    ) -> None:
        self.engine, self.facts, self.options = engine, facts, options or Options()
        self.template = ChatTemplate(engine.chat_template, bos_token=engine.bos_text, eos_token=engine.eos_text)
        self.compiler = Compiler(engine.gguf, self.options.compile_timeout_s)
        self.compiler.start()
        self.compile_threads = CompileThreads()
        self.grammars = Grammars(engine.guidance_tokenizer(), engine.is_special(OPEN), self.compiler)
        self.ends = engine.end_tokens()
        self.closers = Closers.of(engine.tokens_made_of(b'"}]'), engine.piece, engine.tokens_made_of(b" \t\n\r"))
        self.hidden = engine.control_tokens()
        self.specials = engine.special_texts()
        self.invariance: Invariance | None = None
        self.mode: Mode = engine.mode  # the mode the engine was loaded for, its measured facts filled in
        if isinstance(self.mode, BatchInvariant):
            asked = min(DECODE_ROWS, self.options.parallel)
            store = cache_root() / "invariance"
            self.invariance = remembered(engine, self.mode.chunk, asked, facts.sha256, store, say)
            self.mode = replace(
                self.mode, granularity=self.invariance.granularity, decode_rows=self.invariance.decode_rows
            )
        self.scheduler = Scheduler(
            engine,
            self.decoder,
            parallel=self.options.parallel,
            mode=self.mode,
            prompt_cache=self.options.prompt_cache,
            draft=self.options.draft,
            stack_bytes=COMPILE_STACK_BYTES,  # it compiles a tool call's grammar when a reply opens one
        )
        self.scheduler.start()
        self.requests = self.malformed_tool_calls = 0

    def decoder(self, settings: Settings) -> Decoder:
        engine = self.engine
        return Decoder(settings, self.grammars, engine.piece, engine.is_end, self.ends, self.closers, self.hidden)

    def close(self) -> None:
        self.scheduler.stop()
        self.compile_threads.close()
        self.compiler.close()

    # --- what the server says about itself ------------------------------------------------------------
    def meta(self) -> CardMeta:
        return CardMeta(
            file=self.facts.file,
            size=self.facts.size,
            sha256=self.facts.sha256,
            quantisation=self.engine.quantisation,
            context=self.engine.context,
            n_params=self.engine.parameters,  # llama-server's name for it; clients size their controls by it
            extensions=list(EXTENSIONS),
        )

    def model_cards(self) -> list[ModelCard]:
        return [ModelCard(id=self.facts.name, owned_by="llama.cpp", description=self.facts.file, meta=self.meta())]

    def fault(self) -> str | None:
        return self.scheduler.fault()

    def health(self) -> dict[str, Any]:
        engine = self.engine
        fault = self.fault()
        return {
            "status": "ok" if fault is None else "unavailable",
            **({"fault": fault} if fault is not None else {}),
            "model": self.facts.name,
            "loaded": True,
            "mode": self.mode.name,
            **self.meta().model_dump(),
            "tool_call_dialect": self.facts.dialect,
            "threads": engine.threads,
            "repacked_weights": self.mode.repacked,
            "parallel": self.options.parallel,
            "sequences": engine.sequences,
            "prompt_cache": self.scheduler.cache.stats()
            | {"enabled": self.options.prompt_cache, "chunk": self.mode.chunk}
            | {"granularity": self.mode.granularity},
            **({"invariance": asdict(self.invariance)} if self.invariance is not None else {}),
            "jump_forward": self.options.jump_forward,
            "draft": self.options.draft,
            "requests": self.requests,
            "queue_depth": self.queue_depth(),
            "malformed_tool_calls": self.malformed_tool_calls,
            "failed_requests": self.scheduler.failures,
            "grammar_compiler_restarts": self.compiler.restarts,
        }

    def queue_depth(self) -> int:
        return self.scheduler.queue_depth()

    # --- requests -----------------------------------------------------------------------------------------
    async def prepare(self, request: ChatCompletionRequest, headers: Mapping[str, str]) -> LlamaJob:
        if request.top_logprobs and not request.logprobs:
            raise InvalidRequest("top_logprobs needs logprobs: true", param="top_logprobs")
        parts = prompt_parts(self.template, request, list(request.tools or []), self.specials)
        context = self.engine.context
        prompt = await anyio.to_thread.run_sync(self.engine.tokenize_parts, parts, context)
        if len(prompt) >= context:
            raise ContextLengthExceeded(context, len(prompt), whole=len(prompt) == context)
        room = self.engine.context - len(prompt)
        default = FORCED_CALL_TOKENS if constrains_a_call(request) else room
        limit = min(request.completion_limit() or default, room)
        if has_schemas(request) or request.grammar:  # compiling: on the compile threads
            settings = await self.compile_threads.run(lambda: self.planned(request, limit))
        else:  # nothing to compile: never queued behind another request's compiles
            settings = self.planned(request, limit)
        self.requests += 1
        return LlamaJob(request, len(prompt), None, prompt, settings)

    def planned(self, request: ChatCompletionRequest, max_tokens: int) -> Settings:
        """The request's settings, with every grammar it may use compiled now (off the event loop and the decode
        thread): the decode thread then only copies matchers."""
        settings = plan(request, self.grammars, max_tokens, self.options.jump_forward)
        if settings.forced is not None:
            self.grammars.matcher(settings.forced)
        if settings.tools is not None:
            for grammar in (settings.tools, replace(settings.tools, flexible=True)):
                for family in FAMILIES:
                    self.grammars.matcher(grammar.lark(family))
        return settings

    async def run(self, job: LlamaJob) -> AsyncGenerator[Event, None]:
        prompt, settings = job.prompt, job.settings
        loop, events = asyncio.get_running_loop(), asyncio.Queue[Event | EngineError]()

        streaming = bool(job.request.stream)

        def sink(event: Event | EngineError) -> None:
            # A reply that is not streamed is read whole from Finished: its text pieces would only wake the
            # event loop once per token, on a core the decode threads need.
            if streaming or not isinstance(event, TextOut):
                loop.call_soon_threadsafe(events.put_nowait, event)

        ticket = Ticket(prompt, settings, sink, on_finish=self.count)
        self.scheduler.submit(ticket)
        try:
            while True:
                event = await events.get()
                if isinstance(event, EngineError):
                    raise APIError(f"the model failed while generating: {event}")
                yield event
                if isinstance(event, Finished):
                    return
        finally:
            ticket.cancel()  # the client left, or we are done: nothing more is generated for nobody

    def count(self, finished: Finished, malformed: int) -> None:
        self.malformed_tool_calls += malformed

    def tokenize(self, text: str, special: bool) -> list[Token]:
        return [Token(t, self.engine.token_text(t)) for t in self.engine.tokenize(text, special)]

    def detokenize(self, tokens: list[int]) -> str:
        if any(not 0 <= t < self.engine.n_vocab for t in tokens):
            raise InvalidRequest(f"token ids must be between 0 and {self.engine.n_vocab - 1}", param="tokens")
        return self.engine.detokenize(tokens)
