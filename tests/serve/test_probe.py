"""The start-up probe on the real SmolLM2 GGUF: the granularity it finds is one whose calls really do compute
a prompt's rows as the whole chunks do, it leaves the sequence it used empty (one sequence is enough), and it
is measured once per model file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from serve.llama.engine import Engine, Row
from serve.llama.probe import exact_granularity, remembered_granularity

CHUNK = 16


@pytest.fixture
def engine(smollm2_engine: Engine) -> Engine:
    return smollm2_engine


def read(engine: Engine, tokens: list[int], sizes: list[int]) -> np.ndarray:
    engine.keep(0, 0)
    start = 0
    for size in sizes:
        engine.decode([Row(tokens[p], p, 0, logits=p == len(tokens) - 1) for p in range(start, start + size)])
        start += size
    assert start == len(tokens)
    return engine.logits(sizes[-1] - 1).copy()


@pytest.mark.slow
def test_a_prompt_read_in_calls_of_the_granularity_gives_the_chunks_numbers(engine: Engine) -> None:
    granularity = exact_granularity(engine, CHUNK)
    assert granularity in (1, 2, 4, 8, 16, 32, 64) and CHUNK % granularity == 0
    engine.decode([Row(1, 0, 0)])  # the probe left its sequence empty: position 0 is free again
    tokens = engine.tokenize("Which file says the worker timed out, and when? " * 12)[: 2 * CHUNK]
    whole = read(engine, tokens, [CHUNK, CHUNK])
    offset = 3 * granularity  # a cached prefix that ends at a multiple of the granularity, not of the chunk
    rest = 2 * CHUNK - offset
    assert np.array_equal(read(engine, tokens, [offset, *([granularity] * (rest // granularity))]), whole)


def test_the_granularity_is_remembered_per_model_file(engine: Engine, tmp_path: Path) -> None:
    measured = remembered_granularity(engine, CHUNK, "a" * 64, tmp_path)
    [saved] = tmp_path.glob("*.json")
    data = json.loads(saved.read_text())
    assert data["granularity"] == measured
    saved.write_text(json.dumps(data | {"granularity": CHUNK}))
    assert remembered_granularity(engine, CHUNK, "a" * 64, tmp_path) == CHUNK  # read back, not measured again
    assert remembered_granularity(engine, CHUNK, "b" * 64, tmp_path) == measured  # another file is measured
