"""The servers' errors as clients meet them: each with the status, type and code of OpenAI's own, and a prompt
too long for the window worded so the libraries that trim a conversation recognise it."""

from __future__ import annotations

import pytest

from serve.errors import (
    APIError,
    ContextLengthExceeded,
    InvalidRequest,
    PayloadTooLarge,
    RouteNotFound,
    ScriptExhausted,
    Unavailable,
    UnknownModel,
)


@pytest.mark.parametrize(
    ("error", "status", "kind", "code"),
    [
        (APIError("x"), 500, "server_error", None),
        (InvalidRequest("x"), 400, "invalid_request_error", None),
        (ContextLengthExceeded(8192, 9000), 400, "invalid_request_error", "context_length_exceeded"),
        (ScriptExhausted("x"), 400, "invalid_request_error", "script_exhausted"),
        (UnknownModel("gpt-5", ["a", "b"]), 404, "invalid_request_error", "model_not_found"),
        (RouteNotFound("x"), 404, "invalid_request_error", "not_found"),
        (PayloadTooLarge("x"), 413, "invalid_request_error", "payload_too_large"),
        (Unavailable("x"), 503, "server_error", "unavailable"),
    ],
)
def test_each_error_has_openais_status_type_and_code(error: APIError, status: int, kind: str, code: str | None) -> None:
    assert (error.status, error.type, error.code) == (status, kind, code)


def test_a_prompt_too_long_says_both_numbers_in_the_words_clients_look_for() -> None:
    error = ContextLengthExceeded(8192, 9000)
    assert error.param == "messages"
    assert "maximum context length is 8192 tokens" in error.message and "resulted in 9000 tokens" in error.message
    assert "prompt is too long" in error.message  # litellm's and langchain-openai's test for this case


def test_a_code_given_with_the_error_wins_and_an_unknown_model_lists_the_known() -> None:
    assert InvalidRequest("bad", code="bad_grammar", param="grammar").code == "bad_grammar"
    assert InvalidRequest("bad").code is None  # a code given once is not left on the class
    assert UnknownModel("gpt-5", ["a", "b"]).message == "The model 'gpt-5' does not exist; valid models: a, b"
