"""views: which bytes are text, how much one result may hold, and the window of numbered lines a read shows."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.fs.sniff import binary_kind
from harness.tools.views import MAX_LINE_CHARS, output_chars, window


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n" + bytes(100), "PNG image"),
        (b"PK\x03\x04rest", "ZIP archive (or a format built on one: docx, xlsx, jar, wheel)"),
        (bytes(257) + b"ustar\x0000", "tar archive"),  # the mark sits past the first block's name field
        (b"text, then a NUL\x00", "binary data"),
        (bytes(range(128, 256)) * 4, "binary data"),  # mostly bytes UTF-8 cannot hold
    ],
)
def test_binary_files_are_named_by_their_kind(head: bytes, kind: str) -> None:
    assert binary_kind(head) == kind


@pytest.mark.parametrize(
    "head",
    [b"", b"plain ascii\n", "caf\u00e9 na\u00efve \u65e5\u672c\n".encode() * 50, "caf\u00e9\n".encode() * 50 + b"\xff"],
)
def test_text_is_text_even_with_a_stray_bad_byte(head: bytes) -> None:
    assert binary_kind(head) is None


@pytest.mark.parametrize(
    ("context", "chars"), [(None, 3_000), (0, 3_000), (2_048, 2_000), (8_192, 3_072), (1 << 20, 20_000)]
)
def test_a_result_is_sized_to_the_window_within_bounds(context: int | None, chars: int) -> None:
    assert output_chars(context) == chars


TEXT = "".join(f"line {n}\n" for n in range(1, 101))  # 100 lines, a trailing newline that is no line of its own


def test_a_text_that_fits_is_shown_whole_and_unnumbered() -> None:
    seen = window("a\nb\n", 1, None, 1_000)
    assert (seen.text, seen.first, seen.last, seen.total, seen.whole) == ("a\nb\n", 1, 2, 2, True)


def test_a_long_text_is_shown_as_numbered_lines_from_the_offset_for_the_limit() -> None:
    seen = window(TEXT, 40, 3, 10_000)
    assert seen.text == "40: line 40\n41: line 41\n42: line 42"
    assert (seen.first, seen.last, seen.total, seen.whole) == (40, 42, 100, False)
    tail = window(TEXT, 500, None, 10_000)  # an offset past the end shows the last line
    assert (tail.text, tail.first, tail.last) == ("100: line 100", 100, 100)


def test_a_window_stops_at_the_characters_it_may_hold_but_always_shows_a_line() -> None:
    seen = window(TEXT, 1, None, 40)
    assert seen.text == "1: line 1\n2: line 2\n3: line 3\n4: line 4" and seen.last == 4
    assert window("x" * 100 + "\n" + "y\n", 1, None, 10).text.startswith("1: xxxx")


def test_a_very_long_line_is_cut_and_says_how_long_it_was() -> None:
    seen = window("short\n" + "z" * 5_000 + "\n", 2, 1, 100_000)
    assert seen.text == f"2: {'z' * MAX_LINE_CHARS} [... line cut: 5,000 characters]"


@given(st.lists(st.text(alphabet="ab \t", max_size=30), max_size=60), st.integers(-5, 80), st.integers(1, 500))
def test_a_window_names_exactly_the_lines_it_shows(lines: list[str], offset: int, chars: int) -> None:
    text = "\n".join(lines) + "\n"
    seen = window(text, offset, None, chars)
    if seen.whole and seen.text == text:
        return
    shown = seen.text.split("\n")
    assert [int(line.split(":", 1)[0]) for line in shown] == list(range(seen.first, seen.last + 1))
    assert [line.split(": ", 1)[1] for line in shown] == lines[seen.first - 1 : seen.last]
