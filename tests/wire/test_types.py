"""The wire types: what a client may send, how a server's model card is read, and the small helpers."""

from __future__ import annotations

import pydantic
import pytest

from wire.types import (
    ChatCompletionRequest,
    ModelCard,
    Timings,
    TimingsRecord,
    canonical,
    decoded_arguments,
    first_error,
    tool_call_deltas,
    usage_of,
)


def request(**fields: object) -> ChatCompletionRequest:
    return ChatCompletionRequest.model_validate(
        {"model": "m", "messages": [{"role": "user", "content": "q"}], **fields}
    )


def test_the_shapes_other_clients_send_are_read_as_the_wire_shape() -> None:
    sent = request(messages=[
        {"role": "developer", "content": [{"type": "text", "text": "be brief"}, {"type": "text", "text": "ok"}]},
        {"role": "user", "content": "q", "name": None},
        {"role": "assistant", "content": "a", "tool_calls": []},
    ])  # fmt: skip
    assert sent.messages == [
        {"role": "system", "content": "be brief\nok"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}, "'image_url' part"),
        ({"messages": []}, "messages"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"stop": ["x"] * 17}, "at most 16 stop strings"),
        ({"seed": -2}, "seed"),
        ({"temperature": 3}, "temperature"),
    ],
)
def test_a_request_out_of_bounds_is_refused_naming_the_field(fields: dict[str, object], where: str) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        request(**fields)
    assert where in first_error(caught.value) or where in str(caught.value)


def test_the_completion_limit_and_stop_strings_read_either_spelling() -> None:
    assert request(max_tokens=5, max_completion_tokens=9).completion_limit() == 9
    assert request(max_tokens=5).completion_limit() == 5 and request().completion_limit() is None
    assert request(stop="END").stop_strings() == ["END"] and request(stop=["", "a"]).stop_strings() == ["a"]


def test_a_card_keeps_what_reads_and_leaves_unsaid_what_does_not() -> None:
    card = ModelCard.read({"id": "m", "meta": {"context": 8192, "n_params": True, "size": "5",
                                                "extensions": ["grammar", "teleport"], "vendor": "x"}})  # fmt: skip
    assert card is not None and card.meta is not None
    assert card.meta.context == 8192 and card.meta.n_params is None and card.meta.size is None
    assert card.meta.extensions == ["grammar"] and card.meta.model_extra == {"vendor": "x"}
    odd = ModelCard.read({"id": "m", "object": "engine", "created": "yesterday", "meta": "not a mapping"})
    assert odd is not None and odd.id == "m" and odd.meta is None
    assert ModelCard.read({"object": "model"}) is None and ModelCard.read(["m"]) is None


def test_helpers_say_the_same_thing_every_time() -> None:
    assert canonical({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    assert decoded_arguments("") == {} and decoded_arguments('{"x": 1}') == {"x": 1}
    assert decoded_arguments("{oops") == "{oops" and decoded_arguments("[" * 100_000) == "[" * 100_000
    usage = usage_of(10, 5, cached_tokens=4)
    assert usage.total_tokens == 15 and usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 4 and usage_of(1, 1).prompt_tokens_details is None
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
    deltas = tool_call_deltas([call])  # type: ignore[list-item]
    assert deltas[0]["tool_calls"][0]["function"] == {"name": "f", "arguments": ""}
    assert deltas[1]["tool_calls"][0]["function"] == {"arguments": '{"a":1}'}


def test_timings_are_kept_in_a_trace_with_the_fields_the_server_sent() -> None:
    timings = Timings(cache_n=4, prompt_n=5, prompt_ms=1.5, prompt_per_second=2.0, predicted_n=3, predicted_ms=2.5,
                      predicted_per_second=1.0, draft_n=2)  # fmt: skip
    assert set(TimingsRecord.__annotations__) == set(Timings.model_fields)
    assert timings.record()["draft_n"] == 2 and Timings.model_validate(timings.record()) == timings
