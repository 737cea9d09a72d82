"""Our llama server vs direct llama-cpp-python on the same GGUF and threads: prefill and decode speed."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any, cast

import httpx
from llama_cpp import Llama

from evals.servers import ServerProcess
from models.dialects import native_messages, written_messages
from models.registry import QWEN_CODER_05, SMOLLM2, ModelSpec, model_spec
from models.template import ChatTemplate
from models.weights import locate, on_disk
from serve.llama.kernels import repacking_fails

THREADS, CTX, DECODE_TOKENS, REPEATS = 2, 4096, 128, 5
PROMPT: list[Any] = [
    {"role": "system", "content": "You are a careful assistant who answers questions about log files. " * 40},
    {
        "role": "user",
        "content": "Write a long, detailed story about a lighthouse keeper who finds a message in a bottle.",
    },
]


def direct(llm: Llama, prompt: list[int]) -> tuple[float, float, int]:
    """Prefill and decode tokens/s from llama-cpp-python itself (streamed create_completion)."""
    llm.reset()  # type: ignore[no-untyped-call]
    began, stamps = time.perf_counter(), []
    stream = llm.create_completion(
        prompt,
        max_tokens=DECODE_TOKENS,
        temperature=0.0,
        top_k=0,
        top_p=1.0,
        min_p=0.0,
        repeat_penalty=1.0,
        stream=True,
    )
    for chunk in stream:  # one chunk per token; the last one only says why it ended
        if cast(dict[str, Any], chunk)["choices"][0]["finish_reason"] is None:
            stamps.append(time.perf_counter())
    return len(prompt) / (stamps[0] - began), (len(stamps) - 1) / (stamps[-1] - stamps[0]), len(stamps)


def served(url: str, model: str) -> tuple[float, float, int]:
    body = {"model": model, "messages": PROMPT, "max_tokens": DECODE_TOKENS}
    timings = httpx.post(f"{url}/chat/completions", json=body, timeout=600).json()["timings"]
    # like the direct side: prefill = time to the first token; decode = the tokens after it
    decode = (timings["predicted_n"] - 1) / (timings["predicted_ms"] / 1000)
    return timings["prompt_per_second"], decode, timings["predicted_n"]


def main(model_name: str | None = None) -> list[str]:
    # by default the Qwen coder when it is already on disk: a benchmark never starts a download
    spec: ModelSpec = model_spec(model_name) if model_name else QWEN_CODER_05 if on_disk(QWEN_CODER_05) else SMOLLM2
    gguf = locate(spec)
    if (why := repacking_fails(gguf, THREADS)) is not None:  # llama-cpp-python's Llama always repacks
        return [f"llama server vs direct llama-cpp-python: not measured here; repacked weights are off: {why}"]
    llm = Llama(model_path=str(gguf), n_ctx=CTX, n_threads=THREADS, n_threads_batch=THREADS, verbose=False, seed=0)
    template = ChatTemplate(llm.metadata.get("tokenizer.chat_template", ""))
    text = (
        template.render(native_messages(PROMPT))
        if template.supports_tools
        else template.render(written_messages(PROMPT, []))
    )
    prompt = llm.tokenize(text.encode(), add_bos=False, special=True)
    common = ("--model", spec.name, "--threads", str(THREADS), "--ctx", str(CTX), "--quiet")
    with ServerProcess("serve.llama", *common, "--no-prompt-cache") as cold:
        pairs = [
            (served(cold.base_url, spec.name), direct(llm, prompt)) for _ in range(REPEATS)
        ]  # interleaved: drift hits both
    prefill = [(ours[0], theirs[0]) for ours, theirs in pairs]
    decode = [(ours[1], theirs[1]) for ours, theirs in pairs]
    setup = (
        f"{spec.name}, {Path(gguf).name}, {THREADS} threads, {len(prompt)}-token prompt, {DECODE_TOKENS} tokens decoded"
    )

    def row(label: str, measured: list[tuple[float, float]]) -> str:
        ours, theirs = statistics.median(o for o, _ in measured), statistics.median(t for _, t in measured)
        ratio = statistics.median(o / t for o, t in measured)
        return f"  {label}  ours {ours:8.1f} tok/s   direct {theirs:8.1f} tok/s   ratio {ratio:.3f}x"

    lines = [
        f"llama server vs direct llama-cpp-python ({setup}; medians of {REPEATS} interleaved pairs)",
        row("prefill", prefill),
        row("decode ", decode),
    ]
    return lines
