"""The engine: the one place that touches llama-cpp-python. Its errors are translated here into EngineError.

One generation at a time (the caller serialises); each call reuses the longest cached prefix of the
prompt, samples greedily unless asked otherwise, switches to a tool-call grammar the moment the model
opens a <tool_call> block, and reports llama-server's timings.
"""

from __future__ import annotations

import codecs
import ctypes
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import llama_cpp
from llama_cpp import Llama
from llama_cpp.llama_grammar import LlamaGrammar

from models.dialects import OPEN
from models.template import ChatTemplate
from serve.errors import ContextLengthExceeded, EngineError
from serve.llama.cache import PromptCache, Snapshot, common_prefix

Finish = Literal["stop", "length", "cancelled"]
SEQUENCE = 0


@dataclass(frozen=True)
class Sampling:
    max_tokens: int | None = None
    temperature: float = 0.0  # 0 is argmax: the same request gives the same reply
    top_p: float = 1.0
    seed: int = 0
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolGrammar:
    """`forced`: GBNF from the first token; `after_open`: GBNF once the model opens a tool-call block."""

    forced: str | None = None
    after_open: str | None = None


@dataclass
class Generation:
    text: str
    tokens: list[int] = field(default_factory=list)
    finish: Finish = "stop"
    prompt_n: int = 0
    cache_n: int = 0
    prompt_ms: float = 0.0
    predicted_ms: float = 0.0

    @property
    def predicted_n(self) -> int:
        return len(self.tokens)


class Streamer:
    """Decides which text is safe to stream: never a tool-call block, nor what may become a stop string."""

    def __init__(self, watch: Sequence[str], emit: Callable[[str], None] | None) -> None:
        self.watch, self.emit, self.sent = [w for w in watch if w], emit, 0

    def update(self, text: str, final: bool = False) -> None:
        if self.emit is None:
            return
        safe = len(text)
        if OPEN in text:
            safe = text.index(OPEN)
        elif not final:
            for word in self.watch:
                safe = min(safe, len(text) - partial_suffix(text, word))
        if safe > self.sent:
            self.emit(text[self.sent : safe])
            self.sent = safe


def opened(text: str) -> bool:
    """The model has just written OPEN (and at most whitespace after it): the grammar can take over."""
    return OPEN in text and not text.rsplit(OPEN, 1)[1].strip()


def partial_suffix(text: str, word: str) -> int:
    """The length of the longest suffix of `text` that begins `word`."""
    for size in range(min(len(word) - 1, len(text)), 0, -1):
        if word.startswith(text[-size:]):
            return size
    return 0


class Engine:
    def __init__(
        self, gguf: Path, n_ctx: int = 4096, threads: int | None = None, cache_mb: int = 512, prompt_cache: bool = True
    ) -> None:
        try:
            self.llm = Llama(
                model_path=str(gguf), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, seed=0, verbose=False
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise EngineError(f"llama.cpp could not load {gguf}: {exc}") from exc
        self.gguf, self.n_ctx, self.threads = gguf, self.llm.n_ctx(), self.llm.n_threads
        self.prompt_cache = prompt_cache
        self.cache = PromptCache(cache_mb * 1024 * 1024)
        self.live_prompt = 0  # length of the prompt of the conversation whose KV state is live
        metadata = self.llm.metadata
        self.template = ChatTemplate(
            metadata.get("tokenizer.chat_template", ""),
            bos_token=self.token_text(self.llm.token_bos()),
            eos_token=self.token_text(self.llm.token_eos()),
        )

    def token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self.llm.detokenize([token], special=True).decode("utf-8", errors="replace")

    def tokenize(self, text: str) -> list[int]:
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    # --- the prompt cache -----------------------------------------------------------------------------
    def live_tokens(self) -> list[int]:
        return [int(t) for t in self.llm.input_ids[: self.llm.n_tokens]]

    def snapshot(self) -> Snapshot:
        ctx = self.llm._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, SEQUENCE)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, SEQUENCE)
        return Snapshot(tuple(self.live_tokens()), ctypes.string_at(buffer, written))

    def restore(self, snapshot: Snapshot) -> None:
        ctx = self.llm._ctx.ctx
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
        data = (ctypes.c_uint8 * len(snapshot.kv)).from_buffer_copy(snapshot.kv)
        if llama_cpp.llama_state_seq_set_data(ctx, data, len(snapshot.kv), SEQUENCE) != len(snapshot.kv):
            raise EngineError("llama.cpp refused a cached KV state")
        self.llm.input_ids[: len(snapshot.tokens)] = snapshot.tokens
        self.llm.n_tokens = len(snapshot.tokens)
        self.llm._requires_eval = True

    def prepare(self, prompt: list[int]) -> int:
        """Make the live KV state the best available prefix of `prompt`; returns how many tokens it reuses."""
        if not self.prompt_cache:
            self.llm.reset()
            return 0
        live = self.live_tokens()
        live_shared = common_prefix(live, prompt)
        snapshot, cached_shared = self.cache.best(prompt)
        leaving = live and live_shared < self.live_prompt  # the live state belongs to another conversation
        if leaving:
            self.cache.put(self.snapshot())
        if snapshot is not None and cached_shared > live_shared:
            self.restore(snapshot)
            live_shared = cached_shared
        self.live_prompt = len(prompt)
        return min(live_shared, len(prompt) - 1)  # the last prompt token is always evaluated again

    # --- generation -----------------------------------------------------------------------------------
    def is_end(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, token))

    def generate(
        self,
        prompt: list[int],
        sampling: Sampling,
        tools: ToolGrammar,
        cancel: threading.Event,
        on_text: Callable[[str], None] | None = None,
    ) -> Generation:
        if len(prompt) >= self.n_ctx:
            raise ContextLengthExceeded(
                f"the prompt is {len(prompt)} tokens; this server's context is {self.n_ctx} tokens"
            )
        try:
            return self.run(prompt, sampling, tools, cancel, Streamer((*sampling.stop, OPEN), on_text))
        except (RuntimeError, ValueError, OSError) as exc:
            raise EngineError(f"llama.cpp failed while generating: {exc}") from exc

    def run(
        self, prompt: list[int], sampling: Sampling, tools: ToolGrammar, cancel: threading.Event, streamer: Streamer
    ) -> Generation:
        budget = min(sampling.max_tokens or self.n_ctx, self.n_ctx - len(prompt))
        out = Generation("", cache_n=self.prepare(prompt))
        out.prompt_n = len(prompt) - out.cache_n
        self.llm.set_seed(sampling.seed)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        grammar, began, first = tools.forced, time.perf_counter(), None
        while True:
            switched = False
            for token in self.llm.generate(prompt + out.tokens, **self.sampler(sampling, grammar)):
                first = first or time.perf_counter()
                if self.is_end(token):
                    break
                out.tokens.append(token)
                out.text += decoder.decode(self.llm.detokenize([token], special=True))
                finish = self.should_stop(out, sampling.stop, budget, cancel)
                if finish is not None:
                    out.finish = finish
                    break
                if grammar is None and tools.after_open and opened(out.text):
                    grammar, switched = tools.after_open, True  # constrain the rest of the call from here on
                    break
                streamer.update(out.text)
            if not switched:
                break
        ended = time.perf_counter()
        streamer.update(out.text, final=True)
        out.prompt_ms = ((first or ended) - began) * 1000
        out.predicted_ms = (ended - (first or ended)) * 1000
        return out

    @staticmethod
    def should_stop(out: Generation, stop: Sequence[str], budget: int, cancel: threading.Event) -> Finish | None:
        for word in stop:
            if word in out.text:
                out.text = out.text[: out.text.index(word)]
                return "stop"
        if cancel.is_set():
            return "cancelled"
        return "length" if len(out.tokens) >= budget else None

    @staticmethod
    def sampler(sampling: Sampling, grammar: str | None) -> dict[str, Any]:
        return {
            "temp": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": 0,
            "min_p": 0.0,
            "repeat_penalty": 1.0,
            "grammar": LlamaGrammar.from_string(grammar, verbose=False) if grammar else None,
        }
