"""What the harness says to a model: the system prompt tells a run with `search` to search and one without to
read, and the re-asks name what they are about."""

from __future__ import annotations

from harness.prompts import empty_reply, make_the_call, repeated_call, system_prompt


def test_a_run_with_search_is_told_to_search_and_one_without_to_read() -> None:
    with_search, without = system_prompt(["list_files", "read_file", "search"]), system_prompt(["read_file"])
    assert with_search != without  # the sentence to replace is still in the prompt
    assert "search the files for its words, then read what the search finds." in with_search
    assert "search" not in without and "read every file that might." in without


def test_the_re_asks_name_the_call_the_tools_and_the_question() -> None:
    assert "you already called search with exactly these arguments (call c7)" in repeated_call("search", "c7")
    assert empty_reply("How big is a.log?").endswith("The question was: How big is a.log?")
    assert make_the_call(["edit_file", "write_file"]).startswith("You described a call to edit_file or write_file")
