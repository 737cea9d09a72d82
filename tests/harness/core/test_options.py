"""RunOptions: a counter given is the one used, and without one the tokenizer loads on the first count only, so a
run that never counts never loads it; each reply is capped by default."""

from __future__ import annotations

from harness.app.client import FunctionModel
from harness.core.options import MAX_REPLY_TOKENS, RunOptions
from wire.types import Message, UserMessage

QUESTION = "How many lines of errors.log say ERROR?"
MESSAGE: Message = {"role": "user", "content": QUESTION}


def test_a_counter_given_is_the_one_used() -> None:
    options = RunOptions(model=FunctionModel(lambda request: "ok"), count_tokens=lambda message: 42)
    assert options.token_counter()(MESSAGE) == 42


def test_without_a_counter_the_tokenizer_counts_and_is_made_once() -> None:
    options = RunOptions(model=FunctionModel(lambda request: "ok"))
    counter = options.token_counter()
    assert counter is options.token_counter()  # one counter per run, not one per call
    assert 5 < counter(MESSAGE) < 40
    longer: UserMessage = {"role": "user", "content": QUESTION * 10}
    assert counter(longer) > counter(MESSAGE)


def test_each_reply_is_capped_by_default() -> None:
    assert RunOptions(model=FunctionModel(lambda request: "ok")).max_tokens == MAX_REPLY_TOKENS == 1024
