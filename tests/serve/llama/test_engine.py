"""The engine on the real SmolLM2 GGUF: what it refuses is refused with its own error, not a crash."""

from __future__ import annotations

import pytest

from serve.errors import EngineError
from serve.llama.engine import Engine, Row


def test_logits_of_a_row_that_did_not_ask_for_them_are_an_engine_error(smollm2_engine: Engine) -> None:
    engine = smollm2_engine
    engine.keep(0, 0)
    engine.decode([Row(1, 0, 0), Row(2, 1, 0, logits=True)])
    assert engine.logits(1).shape == (engine.n_vocab,)
    with pytest.raises(EngineError, match="no logits"):
        engine.logits(0)


def test_rows_outside_the_sequences_context_or_batch_are_refused_before_llama_cpp_sees_them(
    smollm2_engine: Engine,
) -> None:
    engine = smollm2_engine
    outside = [[Row(1, 0, 1)], [Row(1, engine.context, 0)], [Row(engine.n_vocab, 0, 0)], []]
    for rows in [*outside, [Row(1, p, 0) for p in range(engine.batch_size + 1)]]:
        with pytest.raises(EngineError):
            engine.decode(rows)
