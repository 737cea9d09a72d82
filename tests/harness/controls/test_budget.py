"""budget: what fit_context and the digest share to fit a request to its window."""

from __future__ import annotations

from harness.controls.budget import MIN_LINES, digit_tokens, room, shorter, trimmed


def test_a_trimmed_text_keeps_its_head_and_tail_and_says_how_many_lines_were_left_out() -> None:
    text = "\n".join(f"line {n}" for n in range(100))
    cut = trimmed(text, 8).split("\n")
    assert cut[:6] == [f"line {n}" for n in range(6)]
    assert cut[6] == "[... 92 lines not shown ...]"
    assert cut[7:] == ["line 98", "line 99"]


def test_a_text_within_the_lines_asked_is_left_as_it_is() -> None:
    text = "one\ntwo\nthree"
    assert trimmed(text, 3) is text
    assert trimmed(text, 10) is text


def test_each_cut_keeps_two_thirds_and_none_goes_below_the_least_a_result_keeps() -> None:
    assert shorter(90) == 60
    assert shorter(MIN_LINES + 1) == (MIN_LINES + 1) * 2 // 3
    assert shorter(MIN_LINES) is None
    assert shorter(0) is None
    lines, steps = 10_000, 0
    while (step := shorter(lines)) is not None:
        assert step < lines
        lines, steps = step, steps + 1
    assert lines <= MIN_LINES and steps < 25  # a budget is met in a few steps, never an endless loop


def test_digits_count_beyond_the_harness_count_and_words_do_not() -> None:
    assert digit_tokens({"role": "tool", "tool_call_id": "c", "content": "no digits here"}) == 0
    assert digit_tokens({"role": "tool", "tool_call_id": "c", "content": "2024-01-15 12:00:03"}) == 14 * 2 // 3
    assert digit_tokens({"role": "assistant", "content": None}) == 0


def test_the_reply_s_tokens_are_kept_out_of_the_prompt_s_room() -> None:
    assert room(8192, 512) == 7680
    assert room(8192, None) == 8192
