"""What one decode call costs by its number of rows, and which call shapes keep a row's logits unchanged.

Why batching gains what it gains on this machine: one token each of 1 to 4 sequences in one llama_decode
call, timed with our engine (batch invariant) and with llama-server's setup (repacked weights, flash
attention), then a prompt read in calls of different sizes compared with the same prompt read in the
server's 64-token chunks. Nothing here asserts anything: it prints what this CPU and llama.cpp do.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from models.registry import QWEN_CODER_05, model_spec
from models.weights import locate
from serve.llama.engine import Engine, Row
from serve.llama.kernels import repacking_fails
from serve.llama.modes import BatchInvariant, Throughput

CHUNK, REPEATS = 64, 12
TEXT = "<|im_start|>user\nWhich file mentions a timeout? {}<|im_end|>\n<|im_start|>assistant\n"


def prompt(engine: Engine, sequence: int, words: int) -> list[int]:
    return engine.tokenize(TEXT.format(f"Question {sequence}: " + "look at every file and count them. " * words))


def read(engine: Engine, tokens: list[int], sequence: int, sizes: list[int]) -> np.ndarray:
    """Read a prompt into a sequence in calls of the given sizes; the logits of its last token."""
    engine.keep(sequence, 0)
    start = last_call = 0
    for size in sizes:
        end = min(start + size, len(tokens))
        if end > start:
            engine.decode([Row(tokens[p], p, sequence, logits=p == len(tokens) - 1) for p in range(start, end)])
            last_call, start = start, end
    return engine.logits(len(tokens) - 1 - last_call).copy()


def step_costs(engine: Engine, words: int) -> list[float]:
    """Median ms of a call with one token each of sequences 0..n-1 (n = 1..4), then of 3, 2, 1, 0 in that order."""
    prompts = [prompt(engine, s, words) for s in range(4)]
    for s, tokens in enumerate(prompts):
        read(engine, tokens, s, [CHUNK] * (len(tokens) // CHUNK + 1))
    orders = [list(range(rows)) for rows in range(1, 5)] + [[3, 2, 1, 0]]
    costs = []
    for order in orders:
        spent = []
        for _ in range(REPEATS):
            began = time.perf_counter()
            engine.decode([Row(100, len(prompts[s]), s, logits=True) for s in order])
            spent.append(time.perf_counter() - began)
            for s in order:  # the token is taken back, so every repeat decodes at the same place
                engine.keep(s, len(prompts[s]))
        costs.append(statistics.median(spent[2:]) * 1000)
    return costs


def shapes(engine: Engine) -> list[str]:
    tokens = prompt(engine, 0, 80)[: 8 * CHUNK - 12]
    whole = len(tokens) // CHUNK * CHUNK
    reference = read(engine, tokens, 0, [CHUNK] * (len(tokens) // CHUNK + 1))
    rest = len(tokens) - whole
    same: list[str] = []
    differ: list[str] = []
    for size in (1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48):
        logits = read(engine, tokens, 1, [CHUNK] * (whole // CHUNK) + [size, rest - size])
        (same if np.array_equal(logits, reference) else differ).append(str(size))
    lowest = []  # the whole prompt in calls of at least N rows (the remainder in the first call), any offset
    for size in (1, 2, 3, 4, 6, 8, 12, 16, 32):
        calls, extra = divmod(len(tokens), size)
        if np.array_equal(read(engine, tokens, 1, [size + extra] + [size] * (calls - 1)), reference):
            lowest.append(str(size))
    return [
        f"  a prompt's last {rest} tokens read as two calls, N and {rest} - N, against the one call the server makes:",
        f"  bit-identical for N = {', '.join(same) or '-'}; different for N = {', '.join(differ) or '-'}",
        f"  the whole {len(tokens)}-token prompt in calls of at least N rows, not aligned to the chunks:",
        f"  bit-identical for N = {', '.join(lowest) or '-'} (what the server's start-up probe finds)",
    ]


def main(model_name: str | None = None) -> list[str]:
    spec = model_spec(model_name or QWEN_CODER_05.name)  # the model asked for, fetched if missing; never another
    gguf: Path = locate(spec)
    lines = [f"decode steps: {spec.name}, 2 threads, one token each of 1-4 sequences per call (ms, medians)"]
    refused = repacking_fails(gguf, 2)
    for invariant in (True, False):
        mode = BatchInvariant() if invariant else Throughput(repacked=refused is None)
        engine = Engine(gguf, context=2048, threads=2, sequences=4, mode=mode)
        try:
            label = "ours (batch invariant)" if invariant else "llama-server's setup"
            if not invariant and refused is not None:
                label, lines = "plain weights, fa auto", [*lines, f"  repacked weights are off: {refused}"]
            for words, length in ((20, "short"), (180, "long")):
                costs = step_costs(engine, words)
                cells = "  ".join(f"{rows}: {cost:5.1f}" for rows, cost in enumerate(costs[:4], 1))
                ratio = costs[3] / costs[0]
                lines.append(
                    f"  {label:<24} {length:<5} contexts  {cells}   4 rows cost {ratio:.2f}x one row;"
                    f" 4 rows out of sequence order: {costs[4]:5.1f}"
                )
            if invariant:
                lines += shapes(engine)
        finally:
            engine.close()
    return lines
