"""The engine on the real SmolLM2 GGUF: what it refuses is refused with its own error, not a crash."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from models.registry import SMOLLM2
from models.weights import locate
from serve.errors import EngineError
from serve.llama.engine import Engine, Row


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    loaded = Engine(locate(SMOLLM2), context=256, threads=1, sequences=2)
    yield loaded
    loaded.close()


def test_logits_of_a_row_that_did_not_ask_for_them_are_an_engine_error(engine: Engine) -> None:
    engine.keep(0, 0)
    engine.decode([Row(1, 0, 0), Row(2, 1, 0, logits=True)])
    assert engine.logits(1).shape == (engine.n_vocab,)
    with pytest.raises(EngineError, match="no logits"):
        engine.logits(0)


def test_rows_outside_the_sequences_context_or_batch_are_refused_before_llama_cpp_sees_them(engine: Engine) -> None:
    for rows in ([Row(1, 0, 2)], [Row(1, 256, 0)], [Row(engine.n_vocab, 0, 0)], [], [Row(1, p, 0) for p in range(513)]):
        with pytest.raises(EngineError):
            engine.decode(rows)
