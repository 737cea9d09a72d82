"""Which prompt calls give the same numbers as a whole chunk, measured on the loaded model at start.

llama.cpp's CPU kernels are chosen by how many rows a call has: on one machine and model every call of
8 rows or more computes a row exactly as a 64-row call does and smaller calls do not; on another the
line is at 2. Where it lies depends on the model's tensor types, the CPU and the llama.cpp build, so the
server measures it instead of assuming it: the second half of a chunk is read again in calls of 32, 16,
... 1 rows and every row's logits compared, bit for bit, with the whole chunk's call.

The answer is the reuse granularity g: prompts are read in calls whose sizes are the chunk or powers of
two from g up, starting at multiples of g, so every such cell is computed as a whole chunk would compute
it and a cached prefix can be reused to within g tokens. A prompt's last (length mod g) tokens take a
call of their own, the same call whatever the cache held. When no smaller call matches, g is the chunk
itself: the aligned chunks alone.

The answer is remembered per model file, chunk, threads, llama.cpp build and CPU features (a small JSON
file under the models cache; deleting it measures again).
"""

from __future__ import annotations

import hashlib
import json
from contextlib import suppress
from pathlib import Path

import numpy as np

from models.weights import write_atomic_text
from serve.llama.engine import Engine, Row

TEXT = "A folder of logs, notes and reports; count what each file says about errors, then answer. "


def remembered_granularity(engine: Engine, chunk: int, model_sha256: str, store: Path) -> int:
    """`exact_granularity`, measured once per model file, chunk, threads and llama.cpp build on this machine."""
    facts = [model_sha256, chunk, engine.threads, engine.build]
    path = store / f"{hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:32]}.json"
    with suppress(OSError, ValueError, KeyError, TypeError):
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved["facts"] == facts and saved["granularity"] in powers_dividing(chunk):
            return int(saved["granularity"])
    granularity = exact_granularity(engine, chunk)
    with suppress(OSError):  # a read-only cache only costs the next start a measurement
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic_text(path, json.dumps({"facts": facts, "granularity": granularity}))
    return granularity


def powers_dividing(chunk: int) -> set[int]:
    return {1 << k for k in range(chunk.bit_length()) if chunk % (1 << k) == 0} | {chunk}


def exact_granularity(engine: Engine, chunk: int, sequence: int = 0) -> int:
    """The smallest power of two g dividing `chunk` such that calls of every power of two from g to below the
    chunk give every row of the chunk's second half the logits one call of the whole chunk gives it.

    A kernel that differs may still agree at some positions (a one-row call does at about half of them on
    SmolLM2), so each size is tried across the whole half, every row compared: 32 rows per size for a
    64-token chunk. Trials go from the chunk's end backwards, so the cells a trial keeps come from the
    whole chunk's call or from trials that matched it. Uses one empty sequence and leaves it empty."""
    if chunk < 2:
        return chunk
    half = 1 << ((chunk - 1).bit_length() - 1)  # the largest power of two below the chunk
    tokens = (engine.tokenize(TEXT) * (chunk // 4 + 1))[:chunk]
    sizes = [half >> shift for shift in range(half.bit_length())]  # half, half / 2, ... 1
    smallest_failed = 0
    engine.keep(sequence, 0)
    try:
        engine.decode([Row(t, p, sequence, logits=p >= chunk - half) for p, t in enumerate(tokens)])
        expected = {p: engine.logits(p).copy() for p in range(chunk - half, chunk)}
        for end in range(chunk, chunk - half, -1):
            for size in (s for s in sizes if s > smallest_failed and (chunk - end) % s == 0):
                engine.keep(sequence, end - size)
                engine.decode([Row(tokens[p], p, sequence, logits=True) for p in range(end - size, end)])
                if any(not np.array_equal(engine.logits(i), expected[end - size + i]) for i in range(size)):
                    smallest_failed = size
    finally:
        engine.keep(sequence, 0)
    passing = min((s for s in sizes if s > smallest_failed), default=chunk)
    return passing if chunk % passing == 0 else chunk
