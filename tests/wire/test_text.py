"""Text arriving from JSON is made encodable: a lone surrogate becomes U+FFFD, and valid text is untouched."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from wire.text import scrub, scrubbed


@given(st.text())
def test_valid_text_is_left_exactly_as_it_was(text: str) -> None:
    assert scrub(text) == text


@given(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF)))
def test_whatever_arrives_can_be_written_as_utf8_and_only_surrogates_change(text: str) -> None:
    clean = scrub(text)
    clean.encode("utf-8")  # would raise on a lone surrogate
    assert len(clean) == len(text)
    assert all(a == b or (0xD800 <= ord(a) <= 0xDFFF and b == "\ufffd") for a, b in zip(text, clean, strict=True))


def test_a_json_document_with_lone_surrogates_in_keys_and_values_is_scrubbed_all_the_way_down() -> None:
    value = json.loads('{"a\\ud800": ["x\\udfff", {"k": "\\ud83d"}, 3, null, true]}')
    assert scrubbed(value) == {"a\ufffd": ["x\ufffd", {"k": "\ufffd"}, 3, None, True]}
    assert json.dumps(scrubbed(value), ensure_ascii=False).encode("utf-8")
