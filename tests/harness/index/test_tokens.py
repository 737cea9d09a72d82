"""The index's tokenizer: the same terms for a file and a question, in any script, without a word list."""

from __future__ import annotations

from harness.index.tokens import parts, terms, words_of


def test_identifiers_give_their_parts_and_longer_words_their_prefix() -> None:
    assert terms("parseHeaderLine") == ["parseheaderline", "parse", "header", "line", "heade~"]
    assert terms("HTTP_TIMEOUT") == ["http_timeout", "http", "timeout", "timeo~"]
    assert parts("XMLHttpRequest") == ["XML", "Http", "Request"] and parts("v2Parser") == ["v", "2", "Parser"]
    assert "rotat~" in terms("rotating") and "rotat~" in terms("rotation")  # two forms of one word meet


def test_every_script_gives_terms_and_unspaced_scripts_give_character_pairs() -> None:
    assert terms("Какой файл упоминает таймаут?") == ["какой", "файл", "упоминает", "упоми~", "таймаут", "тайма~"]
    assert terms("Welche Datei erwähnt") == ["welche", "welch~", "datei", "erwähnt", "erwäh~"]
    assert terms("超时日志") == ["超时", "时日", "日志"] and terms("超") == ["超"]
    assert terms("提到了超时（timeout）") == ["提到", "到了", "了超", "超时", "timeout", "timeo~"]


def test_words_as_written_and_nothing_from_long_runs() -> None:
    assert words_of("Where is `RetryPolicy` defined, __init__?") == [
        "Where",
        "is",
        "RetryPolicy",
        "defined",
        "__init__",
    ]
    assert terms("a" * 41) == []
