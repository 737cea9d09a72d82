"""Which prompt calls give the same numbers as a whole chunk, measured on the loaded model at start.

llama.cpp's CPU kernels are chosen by how many rows a call has: on one machine and model every call of
8 rows or more computes a row exactly as a 64-row call does and smaller calls do not; on another the
line is at 2. Where it lies depends on the model's tensor types, the CPU and the llama.cpp build, so the
server measures it instead of assuming it: the last rows of a chunk are read again in calls of 32, 16,
... 1 rows and their logits compared, bit for bit, with the whole chunk's.

The answer is the reuse granularity g: prompts are read in calls whose sizes are the chunk or powers of
two from g up, starting at multiples of g, so every such cell is computed as a whole chunk would compute
it and a cached prefix can be reused to within g tokens. A prompt's last (length mod g) tokens take a
call of their own, the same call whatever the cache held. When no smaller call matches, g is the chunk
itself: the aligned chunks alone.
"""

from __future__ import annotations

import numpy as np

from serve.llama.engine import Engine, Row

TEXT = "A folder of logs, notes and reports; count what each file says about errors, then answer. "


def exact_granularity(engine: Engine, chunk: int, scratch: tuple[int, int] = (0, 1)) -> int:
    """The smallest power of two g dividing `chunk` such that calls of every power of two from g to below the
    chunk read the end of a chunk bit-identically to one call of the whole chunk. Uses two empty sequences
    and leaves them empty."""
    if chunk < 2:
        return chunk
    reference, trial = scratch
    tokens = (engine.tokenize(TEXT) * (chunk // 4 + 1))[:chunk]
    engine.keep(reference, 0)
    engine.decode([Row(t, p, reference, logits=p == chunk - 1) for p, t in enumerate(tokens)])
    expected = engine.logits(chunk - 1).copy()
    passing, size = chunk, 1 << ((chunk - 1).bit_length() - 1)  # the largest power of two below the chunk
    try:
        while size >= 1:
            engine.copy(reference, trial)
            engine.keep(trial, chunk - size)
            engine.decode([Row(tokens[p], p, trial, logits=p == chunk - 1) for p in range(chunk - size, chunk)])
            if not np.array_equal(engine.logits(size - 1), expected):
                break
            passing, size = size, size // 2
    finally:
        engine.keep(reference, 0)
        engine.keep(trial, 0)
    return passing if chunk % passing == 0 else chunk
