"""Our llama server vs direct llama-cpp-python on the same GGUF and threads, and the prompt cache on vs off."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any, cast

import httpx
from llama_cpp import Llama

from evals.servers import ServerProcess
from models.dialects import native_messages, written_messages
from models.registry import QWEN, SMOLLM2, ModelSpec, model_spec
from models.template import ChatTemplate
from models.weights import locate, on_disk

THREADS, CTX, DECODE_TOKENS, REPEATS = 2, 4096, 128, 5
PROMPT: list[Any] = [
    {"role": "system", "content": "You are a careful assistant who answers questions about log files. " * 40},
    {
        "role": "user",
        "content": "Write a long, detailed story about a lighthouse keeper who finds a message in a bottle.",
    },
]
PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {"name": "list_files", "description": "List the files.", "parameters": {"type": "object"}},
    },
    {"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": PATH}},
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


def conversation(url: str, model: str) -> list[float]:
    """Three turns of a tool conversation; per-turn wall ms."""
    messages: list[Any] = [
        {"role": "system", "content": "You answer questions about files."},
        {"role": "user", "content": "Which file mentions a timeout? Look first."},
    ]
    replies = [
        ("required", "access.log (90 bytes)\nerrors.log (393 bytes)\nnotes.txt (30 bytes)"),
        ("required", "ERROR worker 7 timed out after 30000 ms\n" * 6),
        ("none", None),
    ]
    per_turn = []
    for choice, result in replies:
        began = time.perf_counter()
        reply = httpx.post(
            f"{url}/chat/completions",
            json={"model": model, "messages": messages, "tools": TOOLS, "tool_choice": choice, "max_tokens": 48},
            timeout=600,
        ).json()
        per_turn.append((time.perf_counter() - began) * 1000)
        message = reply["choices"][0]["message"]
        messages.append(message)
        for call in message.get("tool_calls") or []:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return per_turn


def main(model_name: str | None = None) -> list[str]:
    # by default Qwen only when it is already on disk: a benchmark never starts a 0.7 GB download
    spec: ModelSpec = model_spec(model_name) if model_name else QWEN if on_disk(QWEN) else SMOLLM2
    gguf = locate(spec)
    llm = Llama(model_path=str(gguf), n_ctx=CTX, n_threads=THREADS, n_threads_batch=THREADS, verbose=False, seed=0)
    template = ChatTemplate(llm.metadata.get("tokenizer.chat_template", ""))
    text = (
        template.render(native_messages(PROMPT))
        if template.supports_tools
        else template.render(written_messages(PROMPT, []))
    )
    prompt = llm.tokenize(text.encode(), add_bos=False, special=True)
    common = ("--model", spec.name, "--threads", str(THREADS), "--ctx", str(CTX))
    with (
        ServerProcess("serve.llama", *common, "--no-prompt-cache") as cold,
        ServerProcess("serve.llama", *common) as warm,
    ):
        pairs = [
            (served(cold.base_url, spec.name), direct(llm, prompt)) for _ in range(REPEATS)
        ]  # interleaved: drift hits both
        cached = [conversation(warm.base_url, spec.name) for _ in range(2)][-1]
        uncached = [conversation(cold.base_url, spec.name) for _ in range(2)][-1]
    prefill = [(ours[0], theirs[0]) for ours, theirs in pairs]
    decode = [(ours[1], theirs[1]) for ours, theirs in pairs]
    setup = (
        f"{spec.name}, {Path(gguf).name}, {THREADS} threads, {len(prompt)}-token prompt, {DECODE_TOKENS} tokens decoded"
    )

    def row(label: str, measured: list[tuple[float, float]]) -> str:
        ours, theirs = statistics.median(o for o, _ in measured), statistics.median(t for _, t in measured)
        ratio = statistics.median(o / t for o, t in measured)
        return f"  {label}  ours {ours:8.1f} tok/s   direct {theirs:8.1f} tok/s   ratio {ratio:.3f}x  (goal >= 0.95x)"

    lines = [
        f"llama server vs direct llama-cpp-python ({setup}; medians of {REPEATS} interleaved pairs)",
        row("prefill", prefill),
        row("decode ", decode),
        "3-turn tool conversation, per-turn latency (ms)",
        "  prompt cache on   " + "  ".join(f"{ms:8,.0f}" for ms in cached) + f"   total {sum(cached):8,.0f}",
        "  prompt cache off  " + "  ".join(f"{ms:8,.0f}" for ms in uncached) + f"   total {sum(uncached):8,.0f}",
        f"  turns 2-3 with the cache take {sum(cached[1:]) / sum(uncached[1:]):.2f}x the time without it",
    ]
    return lines
